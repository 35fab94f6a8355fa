// A Mosaic GPU kernel launched in clusters of two blocks (grid 2 x cluster
// 2: four blocks of 32 rows of a 128x64 f16 array): cluster g's block c
// loads row block 2g + c through shared memory with TMA and stores it as
// row block 2c + g, so the output is the input with row blocks 1 and 2
// swapped (lit/Target/cuda-mgpu-cluster.test).
pallas_mgpu.kernel @cluster_copy(%x: memref<128x64xf16>, %o: memref<128x64xf16>)
    attributes {grid = array<i64: 2>, grid_names = ["g"], cluster = array<i64: 2>,
                cluster_names = ["c"], num_threads = 1, thread_name = "wg",
                num_outputs = 1} {
  %c0 = arith.constant 0 : index
  %s = pallas_mgpu.alloc_smem : memref<32x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %bar = pallas_mgpu.alloc_barriers : !pallas_mgpu.barrier<1, arrivals = 1>
  %g = pallas_mgpu.axis_index "g" : i32
  %c = pallas_mgpu.axis_index "c" : i32
  %c2 = arith.constant 2 : i32
  %c32 = arith.constant 32 : i32
  %g2 = arith.muli %g, %c2 : i32
  %in_blk = arith.addi %g2, %c : i32
  %cc2 = arith.muli %c, %c2 : i32
  %out_blk = arith.addi %cc2, %g : i32
  %in32 = arith.muli %in_blk, %c32 : i32
  %out32 = arith.muli %out_blk, %c32 : i32
  %in = arith.index_cast %in32 : i32 to index
  %out = arith.index_cast %out32 : i32 to index
  %src = memref.subview %x[%in, 0] [32, 64] [1, 1] : memref<128x64xf16> to memref<32x64xf16, strided<[64, 1], offset: ?>>
  pallas_mgpu.copy_gmem_to_smem %src, %s, %bar[%c0] : memref<32x64xf16, strided<[64, 1], offset: ?>>, memref<32x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, !pallas_mgpu.barrier<1, arrivals = 1>
  pallas_mgpu.barrier_wait %bar[%c0] : !pallas_mgpu.barrier<1, arrivals = 1>
  pallas_mgpu.commit_smem
  %dst = memref.subview %o[%out, 0] [32, 64] [1, 1] : memref<128x64xf16> to memref<32x64xf16, strided<[64, 1], offset: ?>>
  pallas_mgpu.copy_smem_to_gmem %s, %dst : memref<32x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, memref<32x64xf16, strided<[64, 1], offset: ?>>
  pallas_mgpu.wait_smem_to_gmem 0 {read_only}
}
