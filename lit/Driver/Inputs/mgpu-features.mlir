// A Mosaic GPU kernel that uses every Hopper feature the lowering needs:
// a cluster of 2, setmaxnreg, TMA loads completing on an mbarrier, wgmma,
// the async-proxy fence and a TMA store.
pallas_mgpu.kernel @features(%x: memref<256x64xf16>, %y: memref<64x64xf16>, %o: memref<256x64xf16>)
    attributes {grid = array<i64: 2>, grid_names = ["g"], cluster = array<i64: 2>,
                cluster_names = ["c"], num_threads = 1, thread_name = "wg",
                num_outputs = 1} {
  %c0 = arith.constant 0 : index
  pallas_mgpu.set_max_registers "increase" 232
  %a = pallas_mgpu.alloc_smem : memref<128x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %b = pallas_mgpu.alloc_smem : memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %acc = pallas_mgpu.alloc_acc : memref<128x64xf32, #pallas_mgpu.acc>
  %bar = pallas_mgpu.alloc_barriers : !pallas_mgpu.barrier<1, arrivals = 2>
  %src = memref.subview %x[%c0, 0] [128, 64] [1, 1] : memref<256x64xf16> to memref<128x64xf16, strided<[64, 1], offset: ?>>
  pallas_mgpu.copy_gmem_to_smem %src, %a, %bar[%c0] : memref<128x64xf16, strided<[64, 1], offset: ?>>, memref<128x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, !pallas_mgpu.barrier<1, arrivals = 2>
  pallas_mgpu.copy_gmem_to_smem %y, %b, %bar[%c0] : memref<64x64xf16>, memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, !pallas_mgpu.barrier<1, arrivals = 2>
  pallas_mgpu.barrier_wait %bar[%c0] : !pallas_mgpu.barrier<1, arrivals = 2>
  pallas_mgpu.wgmma %acc, %a, %b : memref<128x64xf32, #pallas_mgpu.acc>, memref<128x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  pallas_mgpu.wgmma_wait 0
  %v = pallas_mgpu.acc_read %acc : memref<128x64xf32, #pallas_mgpu.acc> -> tensor<128x64xf32>
  %h = arith.truncf %v : tensor<128x64xf32> to tensor<128x64xf16>
  pallas_mgpu.store %h, %a : tensor<128x64xf16>, memref<128x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  pallas_mgpu.commit_smem
  %dst = memref.subview %o[%c0, 0] [128, 64] [1, 1] : memref<256x64xf16> to memref<128x64xf16, strided<[64, 1], offset: ?>>
  pallas_mgpu.copy_smem_to_gmem %a, %dst : memref<128x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, memref<128x64xf16, strided<[64, 1], offset: ?>>
  pallas_mgpu.wait_smem_to_gmem 0
}
