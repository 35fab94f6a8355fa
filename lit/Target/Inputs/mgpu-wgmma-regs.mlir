// The wgmma forms attention_mgpu's forward pass uses, in one Mosaic GPU
// kernel on 64x64 f16 tiles (lit/Target/cuda-mgpu-wgmma-regs.test):
// s = q @ k.T with `b` a transposed shared-memory view (K-major), then
// o = s + f16(s) @ v with `a` from registers and an accumulator initialized
// from a register value (pl.run_state's alloc_acc init); o goes out through
// a TMA store.
pallas_mgpu.kernel @piece(%q: memref<64x64xf16>, %k: memref<64x64xf16>, %v: memref<64x64xf16>, %o: memref<64x64xf16>)
    attributes {grid = array<i64: 1>, grid_names = ["g"], cluster = array<i64: 1>,
                cluster_names = ["c"], num_threads = 1, thread_name = "wg",
                num_outputs = 1} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %qs = pallas_mgpu.alloc_smem : memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %ks = pallas_mgpu.alloc_smem : memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %vs = pallas_mgpu.alloc_smem : memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %os = pallas_mgpu.alloc_smem : memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %bar = pallas_mgpu.alloc_barriers : !pallas_mgpu.barrier<3, arrivals = 1>
  pallas_mgpu.copy_gmem_to_smem %q, %qs, %bar[%c0] : memref<64x64xf16>, memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, !pallas_mgpu.barrier<3, arrivals = 1>
  pallas_mgpu.copy_gmem_to_smem %k, %ks, %bar[%c1] : memref<64x64xf16>, memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, !pallas_mgpu.barrier<3, arrivals = 1>
  pallas_mgpu.copy_gmem_to_smem %v, %vs, %bar[%c2] : memref<64x64xf16>, memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, !pallas_mgpu.barrier<3, arrivals = 1>
  pallas_mgpu.barrier_wait %bar[%c0] : !pallas_mgpu.barrier<3, arrivals = 1>
  pallas_mgpu.barrier_wait %bar[%c1] : !pallas_mgpu.barrier<3, arrivals = 1>
  pallas_mgpu.barrier_wait %bar[%c2] : !pallas_mgpu.barrier<3, arrivals = 1>
  %kt = memref.transpose %ks (d0, d1) -> (d1, d0) : memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>> to memref<64x64xf16, strided<[1, 64]>, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %sacc = pallas_mgpu.alloc_acc : memref<64x64xf32, #pallas_mgpu.acc>
  pallas_mgpu.wgmma %sacc, %qs, %kt : memref<64x64xf32, #pallas_mgpu.acc>, memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, memref<64x64xf16, strided<[1, 64]>, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  pallas_mgpu.wgmma_wait 0
  %s = pallas_mgpu.acc_read %sacc : memref<64x64xf32, #pallas_mgpu.acc> -> tensor<64x64xf32>
  %p = arith.truncf %s : tensor<64x64xf32> to tensor<64x64xf16>
  %oacc = pallas_mgpu.alloc_acc init(%s : tensor<64x64xf32>) : memref<64x64xf32, #pallas_mgpu.acc>
  pallas_mgpu.wgmma %oacc, %p, %vs : memref<64x64xf32, #pallas_mgpu.acc>, tensor<64x64xf16>, memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  pallas_mgpu.wgmma_wait 0
  %r = pallas_mgpu.acc_read %oacc : memref<64x64xf32, #pallas_mgpu.acc> -> tensor<64x64xf32>
  %rh = arith.truncf %r : tensor<64x64xf32> to tensor<64x64xf16>
  pallas_mgpu.store %rh, %os : tensor<64x64xf16>, memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  pallas_mgpu.commit_smem
  pallas_mgpu.copy_smem_to_gmem %os, %o : memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, memref<64x64xf16>
  pallas_mgpu.wait_smem_to_gmem 0 {read_only}
}
