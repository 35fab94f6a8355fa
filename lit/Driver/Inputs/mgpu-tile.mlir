// A Mosaic GPU kernel (pallas_mgpu): it parses and verifies; pallasc
// compiles it for cuda:sm_90a only (mgpu-errors.test, mgpu-targets.test).
pallas_mgpu.kernel @tile(%x: memref<256x64xf16>, %o: memref<256x64xf16>)
    attributes {grid = array<i64: 2>, grid_names = ["g"], cluster = array<i64: 1>,
                cluster_names = ["c"], num_threads = 1, thread_name = "wg",
                num_outputs = 1} {
  %c0 = arith.constant 0 : index
  %s = pallas_mgpu.alloc_smem : memref<128x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %bar = pallas_mgpu.alloc_barriers : !pallas_mgpu.barrier<1, arrivals = 1>
  %src = memref.subview %x[%c0, 0] [128, 64] [1, 1] : memref<256x64xf16> to memref<128x64xf16, strided<[64, 1], offset: ?>>
  pallas_mgpu.copy_gmem_to_smem %src, %s, %bar[%c0] : memref<128x64xf16, strided<[64, 1], offset: ?>>, memref<128x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, !pallas_mgpu.barrier<1, arrivals = 1>
  pallas_mgpu.barrier_wait %bar[%c0] : !pallas_mgpu.barrier<1, arrivals = 1>
}
