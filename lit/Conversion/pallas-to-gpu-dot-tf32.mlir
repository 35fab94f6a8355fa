// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu=chip=sm_80 -canonicalize -cse | FileCheck %s
// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu=chip=sm_75 -canonicalize -cse | FileCheck %s --check-prefix=SIMT
// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu=chip=sm_90a -canonicalize -cse | FileCheck %s --check-prefix=WG

// pallas-to-gpu is one pass whose source is split by concern
// (passes/Conversion/PallasToGPU, docs/cuda.md's file map); the
// pallas-to-gpu-*.mlir files test it one concern per file: elementwise,
// reduce, memory, dot-mma, dot-wgmma, dot-tf32, tma, rocm, nvgpu-to-nvvm,
// num-warps, and its error cases in pallas-to-gpu-invalid.mlir and
// pallas-to-gpu-malformed.mlir.
//
// This file: f32 dots: tf32 mma.sync at the default precision, exact SIMT at
// `highest`.

// Tests f32 dots: at precision `high` (and the default) on tf32 tensor cores
// from sm_80 on (sm_90a too: wgmma stays f16/bf16), `mma.sync.m16n8k8.tf32`
// with every operand element rounded by cvt.rna.tf32.f32 as it is read
// (a0..a3 of each 16x8 A tile reused across the n tiles), the accumulator
// chained through the k steps; at `highest` exact f32 (the SIMT loop over k);
// before sm_80 both SIMT.
// CHECK-LABEL: gpu.func @mmtf32(
// CHECK: %[[A0:.+]] = nvvm.convert.float.to.tf32 %{{.+}} {rnd = #nvvm.fp_rnd_mode<rna>}
// CHECK-COUNT-5: nvvm.convert.float.to.tf32 %{{.+}} {rnd = #nvvm.fp_rnd_mode<rna>}
// CHECK: %[[D:.+]] = nvvm.mma.sync A[%[[A0]], %{{.+}}, %{{.+}}, %{{.+}}]  B[%{{.+}}, %{{.+}}]  C[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}]  {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>, shape = #nvvm.shape<m = 16, n = 8, k = 8>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NEXT: %[[C0:.+]] = llvm.extractvalue %[[D]][0]
// CHECK: nvvm.mma.sync A[%[[A0]],
// CHECK: nvvm.mma.sync A[{{.+}}]  B[{{.+}}]  C[%[[C0]], {{.+}}] {{.+}}shape = #nvvm.shape<m = 16, n = 8, k = 8>}
// CHECK: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args({{.+}}) -> ({{(f32, ){7}f32}})
// CHECK: arith.mulf
// CHECK-NOT: nvvm.mma.sync
// CHECK: gpu.return
// WG-LABEL: gpu.func @mmtf32(
// WG-COUNT-4: nvvm.mma.sync {{.+}}multiplicandAPtxType = #nvvm.mma_type<tf32>
// WG-NOT: wgmma
// WG: gpu.return
// SIMT-LABEL: gpu.func @mmtf32(
// SIMT-NOT: nvvm.mma.sync
// SIMT-NOT: nvvm.convert.float.to.tf32
// SIMT: gpu.return

pallas.kernel @mm_tf32(%a: !pallas.ref<32x16xf32>, %b: !pallas.ref<16x32xf32>,
                       %o: !pallas.ref<32x32xf32>, %e: !pallas.ref<32x32xf32>) {
  %x = pallas.load %a[] : !pallas.ref<32x16xf32> -> tensor<32x16xf32>
  %y = pallas.load %b[] : !pallas.ref<16x32xf32> -> tensor<16x32xf32>
  %d = pallas.dot %x, %y {precision = #pallas.precision<high>} : tensor<32x16xf32>, tensor<16x32xf32> -> tensor<32x32xf32>
  pallas.store %o[], %d : !pallas.ref<32x32xf32>, tensor<32x32xf32>
  %d2 = pallas.dot %x, %y {precision = #pallas.precision<highest>} : tensor<32x16xf32>, tensor<16x32xf32> -> tensor<32x32xf32>
  pallas.store %e[], %d2 : !pallas.ref<32x32xf32>, tensor<32x32xf32>
}
func.func @main(%a: tensor<32x16xf32>, %b: tensor<16x32xf32>) -> (tensor<32x32xf32>, tensor<32x32xf32>) {
  %o:2 = pallas.call @mm_tf32(%a, %b) {grid = array<i64: 1>, name = "mmtf32",
      in_specs = [#pallas.block_spec<[32, 16], (d0) -> (0, 0)>, #pallas.block_spec<[16, 32], (d0) -> (0, 0)>],
      out_specs = [#pallas.block_spec<[32, 32], (d0) -> (0, 0)>, #pallas.block_spec<[32, 32], (d0) -> (0, 0)>]}
      : (tensor<32x16xf32>, tensor<16x32xf32>) -> (tensor<32x32xf32>, tensor<32x32xf32>)
  return %o#0, %o#1 : tensor<32x32xf32>, tensor<32x32xf32>
}
