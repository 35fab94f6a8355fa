// A Mosaic GPU kernel with a TMA multicast (copy_gmem_to_smem with
// collective_axes = ["c"], a cluster axis of 2 blocks): cluster g's 64-row
// tile x[64g : 64g + 64] lands in both blocks' shared memory, each block
// loading 32 of its rows for both; block c stores the whole tile as row
// block 2g + c of the output, so the output is each tile twice
// (lit/Target/cuda-mgpu-multicast.test).
pallas_mgpu.kernel @multicast(%x: memref<128x64xf16>, %o: memref<256x64xf16>)
    attributes {grid = array<i64: 2>, grid_names = ["g"], cluster = array<i64: 2>,
                cluster_names = ["c"], num_threads = 1, thread_name = "wg",
                num_outputs = 1} {
  %c0 = arith.constant 0 : index
  %s = pallas_mgpu.alloc_smem : memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %bar = pallas_mgpu.alloc_barriers : !pallas_mgpu.barrier<1, arrivals = 1>
  %g = pallas_mgpu.axis_index "g" : i32
  %c = pallas_mgpu.axis_index "c" : i32
  %c2 = arith.constant 2 : i32
  %c64 = arith.constant 64 : i32
  %in64 = arith.muli %g, %c64 : i32
  %in = arith.index_cast %in64 : i32 to index
  %g2 = arith.muli %g, %c2 : i32
  %blk = arith.addi %g2, %c : i32
  %out64 = arith.muli %blk, %c64 : i32
  %out = arith.index_cast %out64 : i32 to index
  %src = memref.subview %x[%in, 0] [64, 64] [1, 1] : memref<128x64xf16> to memref<64x64xf16, strided<[64, 1], offset: ?>>
  pallas_mgpu.copy_gmem_to_smem %src, %s, %bar[%c0] {collective_axes = ["c"]} : memref<64x64xf16, strided<[64, 1], offset: ?>>, memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, !pallas_mgpu.barrier<1, arrivals = 1>
  pallas_mgpu.barrier_wait %bar[%c0] : !pallas_mgpu.barrier<1, arrivals = 1>
  pallas_mgpu.commit_smem
  %dst = memref.subview %o[%out, 0] [64, 64] [1, 1] : memref<256x64xf16> to memref<64x64xf16, strided<[64, 1], offset: ?>>
  pallas_mgpu.copy_smem_to_gmem %s, %dst : memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, memref<64x64xf16, strided<[64, 1], offset: ?>>
  pallas_mgpu.wait_smem_to_gmem 0 {read_only}
}
