// A Mosaic GPU kernel that copies a [2, 100, 1, 64] f16 array (attention's
// [batch, seq, heads, head_dim]) through shared memory with 4-D TMA: block
// (b, r) moves x[b, 64r : 64r + 64, 0, :], the view dropping the batch and
// head dimensions; block r = 1's box reaches rows 64-127 of 100: zero-filled
// load, clipped store (lit/Target/cuda-mgpu-tma-store.test).
pallas_mgpu.kernel @copy4d(%x: memref<2x100x1x64xf16>, %o: memref<2x100x1x64xf16>)
    attributes {grid = array<i64: 2, 2>, grid_names = ["b", "r"], cluster = array<i64: 1>,
                cluster_names = ["c"], num_threads = 1, thread_name = "wg",
                num_outputs = 1} {
  %c0 = arith.constant 0 : index
  %s = pallas_mgpu.alloc_smem : memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %bar = pallas_mgpu.alloc_barriers : !pallas_mgpu.barrier<1, arrivals = 1>
  %b32 = pallas_mgpu.axis_index "b" : i32
  %r32 = pallas_mgpu.axis_index "r" : i32
  %c64 = arith.constant 64 : i32
  %row32 = arith.muli %r32, %c64 : i32
  %b = arith.index_cast %b32 : i32 to index
  %row = arith.index_cast %row32 : i32 to index
  %src = memref.subview %x[%b, %row, 0, 0] [1, 64, 1, 64] [1, 1, 1, 1] : memref<2x100x1x64xf16> to memref<64x64xf16, strided<[64, 1], offset: ?>>
  pallas_mgpu.copy_gmem_to_smem %src, %s, %bar[%c0] : memref<64x64xf16, strided<[64, 1], offset: ?>>, memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, !pallas_mgpu.barrier<1, arrivals = 1>
  pallas_mgpu.barrier_wait %bar[%c0] : !pallas_mgpu.barrier<1, arrivals = 1>
  pallas_mgpu.commit_smem
  %dst = memref.subview %o[%b, %row, 0, 0] [1, 64, 1, 64] [1, 1, 1, 1] : memref<2x100x1x64xf16> to memref<64x64xf16, strided<[64, 1], offset: ?>>
  pallas_mgpu.copy_smem_to_gmem %s, %dst : memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, memref<64x64xf16, strided<[64, 1], offset: ?>>
  pallas_mgpu.wait_smem_to_gmem 0 {read_only}
}
