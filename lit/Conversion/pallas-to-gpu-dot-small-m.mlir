// RUN: pallasc-opt %s -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu="chip=sm_80 print-layouts" -o /dev/null 2>&1 | FileCheck %s --check-prefix=LAYOUT
// RUN: pallasc-opt %s -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu=chip=sm_80 -canonicalize -cse | FileCheck %s --check-prefix=MMA
// RUN: pallasc-opt %s -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu=chip=sm_90a -canonicalize -cse | FileCheck %s --check-prefix=MMA
// RUN: pallasc-opt %s -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu=chip=gfx942 -canonicalize -cse | FileCheck %s --check-prefix=MFMA
// RUN: pallasc-opt %s -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu=chip=sm_75 -canonicalize -cse | FileCheck %s --check-prefix=SIMT

// The warp tiling of a dot whose M is too small for whole rows per warp
// (DotLayout.cpp): decode attention's 16-row dots under the default 4
// warps (JAX's decode_attention.mqa, block_h = 16). Its scores are reduced
// along their rows (a softmax), which asks for whole rows in each warp
// (warps along M only): 16 rows cannot be split over 4 warps of 16-row
// mma.sync / MFMA tiles, so the warps go along N instead (Triton's rule
// for a small M), each warp owning a 16 x 16 tile, and the row max and row
// sum cross the warps through shared memory. Before, these dots fell back
// to the SIMT loop.
//
// The two dots' accumulators: 4 warps along N (the column bits 16 and 32),
// none along M; the row reductions span the warps (their warp bases are
// zero: every warp gets the whole row's result).
// LAYOUT-DAG: :[[@LINE+38]]:8: remark: result 0: MmaC <[16, 64] regs=[1, 512, 8] lanes=[2, 4, 64, 128, 256] warps=[16, 32]>
// LAYOUT-DAG: :[[@LINE+38]]:8: remark: result 0: Derived <[16] regs=[8] lanes=[0, 0, 1, 2, 4] warps=[0, 0]>
// LAYOUT-DAG: :[[@LINE+42]]:10: remark: result 0: Derived <[16] regs=[8] lanes=[0, 0, 1, 2, 4] warps=[0, 0]>
// LAYOUT-DAG: :[[@LINE+43]]:9: remark: result 0: MmaC <[16, 64] regs=[1, 512, 8] lanes=[2, 4, 64, 128, 256] warps=[16, 32]>
//
// sm_80 and sm_90a (wgmma needs 64-row slabs): mma.sync m16n8k16, each
// warp's 16 x 16 tile is 2 n-tiles x 4 k-steps of K = 64 per dot, 16 in all;
// the row reductions shuffle in the warp, then go through shared memory.
// MMA-LABEL: gpu.func @decode(
// MMA-NOT: wgmma
// MMA-COUNT-8: nvvm.mma.sync {{.+}}shape = #nvvm.shape<m = 16, n = 8, k = 16>
// MMA: gpu.shuffle  xor
// MMA: gpu.barrier
// MMA: gpu.shuffle  xor
// MMA: gpu.barrier
// MMA-COUNT-8: nvvm.mma.sync {{.+}}shape = #nvvm.shape<m = 16, n = 8, k = 16>
// MMA-NOT: nvvm.mma.sync
// MMA: gpu.return
//
// gfx942: MFMA 16x16x16, one 16 x 16 tile per wavefront, 4 k-steps per dot.
// MFMA-LABEL: gpu.func @decode(
// MFMA-COUNT-4: amdgpu.mfma 16x16x16
// MFMA: gpu.barrier
// MFMA-COUNT-4: amdgpu.mfma 16x16x16
// MFMA-NOT: amdgpu.mfma
// MFMA: gpu.return
//
// sm_75 has no f16 mma.sync of this shape in the target table: the SIMT dot.
// SIMT-LABEL: gpu.func @decode(
// SIMT-NOT: nvvm.mma.sync
// SIMT: gpu.return
pallas.kernel @decode_kernel(%q: !pallas.ref<16x64xf16>, %k: !pallas.ref<64x64xf16>,
                             %v: !pallas.ref<64x64xf16>, %o: !pallas.ref<16x64xf32>,
                             %l: !pallas.ref<16xf32>) {
  %qt = pallas.load %q[] : !pallas.ref<16x64xf16> -> tensor<16x64xf16>
  %kt = pallas.load %k[] : !pallas.ref<64x64xf16> -> tensor<64x64xf16>
  %vt = pallas.load %v[] : !pallas.ref<64x64xf16> -> tensor<64x64xf16>
  %kT = pallas.transpose %kt [1, 0] : tensor<64x64xf16> -> tensor<64x64xf16>
  %s = pallas.dot %qt, %kT : tensor<16x64xf16>, tensor<64x64xf16> -> tensor<16x64xf32>
  %m = pallas.reduce max %s dims [1] : tensor<16x64xf32> -> tensor<16xf32>
  %m1 = pallas.broadcast_in_dim %m dims [0] : tensor<16xf32> -> tensor<16x1xf32>
  %mb = pallas.broadcast_in_dim %m1 dims [0, 1] : tensor<16x1xf32> -> tensor<16x64xf32>
  %d = arith.subf %s, %mb : tensor<16x64xf32>
  %e = math.exp %d : tensor<16x64xf32>
  %sum = pallas.reduce sum %e dims [1] : tensor<16x64xf32> -> tensor<16xf32>
  %p = arith.truncf %e : tensor<16x64xf32> to tensor<16x64xf16>
  %ov = pallas.dot %p, %vt : tensor<16x64xf16>, tensor<64x64xf16> -> tensor<16x64xf32>
  pallas.store %o[], %ov : !pallas.ref<16x64xf32>, tensor<16x64xf32>
  pallas.store %l[], %sum : !pallas.ref<16xf32>, tensor<16xf32>
}
func.func @main(%q: tensor<16x64xf16>, %k: tensor<64x64xf16>, %v: tensor<64x64xf16>) -> (tensor<16x64xf32>, tensor<16xf32>) {
  %o, %l = pallas.call @decode_kernel(%q, %k, %v) {grid = array<i64: 1>, name = "decode",
      in_specs = [#pallas.block_spec<[16, 64], (d0) -> (0, 0)>, #pallas.block_spec<[64, 64], (d0) -> (0, 0)>, #pallas.block_spec<[64, 64], (d0) -> (0, 0)>],
      out_specs = [#pallas.block_spec<[16, 64], (d0) -> (0, 0)>, #pallas.block_spec<[16], (d0) -> (0)>]}
      : (tensor<16x64xf16>, tensor<64x64xf16>, tensor<64x64xf16>) -> (tensor<16x64xf32>, tensor<16xf32>)
  return %o, %l : tensor<16x64xf32>, tensor<16xf32>
}
