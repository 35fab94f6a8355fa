// RUN: pallasc-opt %s --pallas-to-rocm-pipeline="chip=gfx942 serialize=false" | FileCheck %s --check-prefix=ROCDL
// RUN: pallasc-opt %s --pallas-to-rocm-pipeline="chip=gfx90a" | FileCheck %s --check-prefix=HSA
// RUN: pallasc-opt %s --pallas-to-cuda-pipeline="chip=sm_80 serialize=false" | FileCheck %s --check-prefix=NVVM
// RUN: pallasc-opt %s --pallas-to-cuda-pipeline="chip=sm_90a" | FileCheck %s --check-prefix=PTX

// Tests the two GPU pipelines as pallasc-opt registers them, on a bf16 dot:
// AMD ends in the ROCDL dialect (one kernel argument per array, MFMA
// intrinsics) and serializes to AMDGPU assembly for the chip; NVIDIA ends
// in NVVM (mma.sync on sm_80) and serializes to PTX (wgmma on sm_90a).
// Both start with the GPU distribution they share
// (passes/Pipelines/GpuPipeline.cpp: math legalization, pallas-gpu-prepare,
// pallas-to-linalg, pallas-to-gpu for the chip, float semantics); their
// codegen halves (CudaPipeline.cpp, RocmPipeline.cpp) run lower-affine and the
// CUDA math/NVVM conversions through RunIfPresent.cpp.

// ROCDL: gpu.module @mm_kernels [#rocdl.target<O = 3, chip = "gfx942", abi = "500">]
// ROCDL: llvm.func @mm(%{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr) attributes {{{.*}}rocdl.kernel
// ROCDL: rocdl.mfma.f32.16x16x16bf16.1k
// ROCDL-NOT: pallas.

// HSA: gpu.binary @mm_kernels
// HSA-SAME: assembly = "
// HSA-SAME: .amdgcn_target \22amdgcn-amd-amdhsa--gfx90a\22
// HSA-SAME: .amdhsa_code_object_version 5
// HSA-SAME: v_mfma_f32_16x16x16bf16_1k

// NVVM: gpu.module @mm_kernels [#nvvm.target<O = 3, chip = "sm_80", features = "+ptx80">]
// NVVM: llvm.func @mm(
// NVVM: nvvm.mma.sync
// NVVM-NOT: pallas.

// PTX: gpu.binary @mm_kernels
// PTX-SAME: .target sm_90a
// PTX-SAME: wgmma.mma_async

pallas.kernel @mm_kernel(%a: !pallas.ref<64x64xbf16>, %b: !pallas.ref<64x64xbf16>,
                         %o: !pallas.ref<64x64xf32>) {
  %x = pallas.load %a[] : !pallas.ref<64x64xbf16> -> tensor<64x64xbf16>
  %y = pallas.load %b[] : !pallas.ref<64x64xbf16> -> tensor<64x64xbf16>
  %d = pallas.dot %x, %y : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
  pallas.store %o[], %d : !pallas.ref<64x64xf32>, tensor<64x64xf32>
}
func.func @main(%a: tensor<128x64xbf16>, %b: tensor<64x128xbf16>) -> tensor<128x128xf32> {
  %o = pallas.call @mm_kernel(%a, %b) {grid = array<i64: 2, 2>, name = "mm",
      in_specs = [#pallas.block_spec<[64, 64], (d0, d1) -> (d0, 0)>, #pallas.block_spec<[64, 64], (d0, d1) -> (0, d1)>],
      out_specs = [#pallas.block_spec<[64, 64], (d0, d1) -> (d0, d1)>]}
      : (tensor<128x64xbf16>, tensor<64x128xbf16>) -> tensor<128x128xf32>
  return %o : tensor<128x128xf32>
}
