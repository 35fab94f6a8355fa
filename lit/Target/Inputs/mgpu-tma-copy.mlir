// A Mosaic GPU kernel that copies a 100x64 f16 array through shared memory
// with TMA, 64 rows per block: the second block's box reaches rows 64-127,
// so its load is zero-filled and its store clipped at row 100
// (lit/Target/cuda-mgpu-tma-store.test). Its RACE lines, uncommented, load
// the other block's rows into the buffer before the store was waited for.
pallas_mgpu.kernel @copy(%x: memref<100x64xf16>, %o: memref<100x64xf16>)
    attributes {grid = array<i64: 2>, grid_names = ["g"], cluster = array<i64: 1>,
                cluster_names = ["c"], num_threads = 1, thread_name = "wg",
                num_outputs = 1} {
  %c0 = arith.constant 0 : index
  %s = pallas_mgpu.alloc_smem : memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %bar = pallas_mgpu.alloc_barriers : !pallas_mgpu.barrier<1, arrivals = 1>
  %b = pallas_mgpu.axis_index "g" : i32
  %c64 = arith.constant 64 : i32
  %r32 = arith.muli %b, %c64 : i32
  %r = arith.index_cast %r32 : i32 to index
  %src = memref.subview %x[%r, 0] [64, 64] [1, 1] : memref<100x64xf16> to memref<64x64xf16, strided<[64, 1], offset: ?>>
  pallas_mgpu.copy_gmem_to_smem %src, %s, %bar[%c0] : memref<64x64xf16, strided<[64, 1], offset: ?>>, memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, !pallas_mgpu.barrier<1, arrivals = 1>
  pallas_mgpu.barrier_wait %bar[%c0] : !pallas_mgpu.barrier<1, arrivals = 1>
  pallas_mgpu.commit_smem
  %dst = memref.subview %o[%r, 0] [64, 64] [1, 1] : memref<100x64xf16> to memref<64x64xf16, strided<[64, 1], offset: ?>>
  pallas_mgpu.copy_smem_to_gmem %s, %dst : memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, memref<64x64xf16, strided<[64, 1], offset: ?>>
  // RACE: %other32 = arith.subi %c64, %r32 : i32
  // RACE: %other = arith.index_cast %other32 : i32 to index
  // RACE: %src2 = memref.subview %x[%other, 0] [64, 64] [1, 1] : memref<100x64xf16> to memref<64x64xf16, strided<[64, 1], offset: ?>>
  // RACE: pallas_mgpu.copy_gmem_to_smem %src2, %s, %bar[%c0] : memref<64x64xf16, strided<[64, 1], offset: ?>>, memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, !pallas_mgpu.barrier<1, arrivals = 1>
  // RACE: pallas_mgpu.barrier_wait %bar[%c0] : !pallas_mgpu.barrier<1, arrivals = 1>
  pallas_mgpu.wait_smem_to_gmem 0 {read_only}
}
