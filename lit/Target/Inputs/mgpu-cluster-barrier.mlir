// A Mosaic GPU kernel with a cluster barrier (plgpu.ClusterBarrier over the
// cluster axis "c" of 2 blocks): each block loads its row block with TMA,
// arrives on the cluster barrier (its own and its peer's, through mapa) and
// waits for both blocks' arrivals before it stores the rows back
// (lit/Target/cuda-mgpu-cluster-barrier.test). With ONE_BLOCK_ARRIVES (the
// -stuck variant) only block 0 arrives.
pallas_mgpu.kernel @cluster_barrier(%x: memref<128x64xf16>, %o: memref<128x64xf16>)
    attributes {grid = array<i64: 2>, grid_names = ["g"], cluster = array<i64: 2>,
                cluster_names = ["c"], num_threads = 1, thread_name = "wg",
                num_outputs = 1} {
  %c0 = arith.constant 0 : index
  %s = pallas_mgpu.alloc_smem : memref<32x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %bar = pallas_mgpu.alloc_barriers : !pallas_mgpu.barrier<1, arrivals = 1>
  %cb = pallas_mgpu.alloc_barriers {collective_axes = ["c"]} : !pallas_mgpu.barrier<1, arrivals = 1>
  %g = pallas_mgpu.axis_index "g" : i32
  %c = pallas_mgpu.axis_index "c" : i32
  %c2 = arith.constant 2 : i32
  %c32 = arith.constant 32 : i32
  %g2 = arith.muli %g, %c2 : i32
  %blk = arith.addi %g2, %c : i32
  %row32 = arith.muli %blk, %c32 : i32
  %row = arith.index_cast %row32 : i32 to index
  %src = memref.subview %x[%row, 0] [32, 64] [1, 1] : memref<128x64xf16> to memref<32x64xf16, strided<[64, 1], offset: ?>>
  pallas_mgpu.copy_gmem_to_smem %src, %s, %bar[%c0] : memref<32x64xf16, strided<[64, 1], offset: ?>>, memref<32x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, !pallas_mgpu.barrier<1, arrivals = 1>
  pallas_mgpu.barrier_wait %bar[%c0] : !pallas_mgpu.barrier<1, arrivals = 1>
  ARRIVE
  pallas_mgpu.barrier_wait %cb[%c0] : !pallas_mgpu.barrier<1, arrivals = 1>
  pallas_mgpu.commit_smem
  %dst = memref.subview %o[%row, 0] [32, 64] [1, 1] : memref<128x64xf16> to memref<32x64xf16, strided<[64, 1], offset: ?>>
  pallas_mgpu.copy_smem_to_gmem %s, %dst : memref<32x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, memref<32x64xf16, strided<[64, 1], offset: ?>>
  pallas_mgpu.wait_smem_to_gmem 0 {read_only}
}
