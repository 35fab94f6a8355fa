// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu=chip=sm_80 -canonicalize -cse | FileCheck %s
// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu=chip=sm_75 -canonicalize -cse | FileCheck %s --check-prefix=SIMT

// pallas-to-gpu is one pass whose source is split by concern
// (passes/Conversion/PallasToGPU, docs/cuda.md's file map); the
// pallas-to-gpu-*.mlir files test it one concern per file: elementwise,
// reduce, memory, dot-mma, dot-wgmma, dot-tf32, tma, rocm, nvgpu-to-nvvm,
// num-warps, and its error cases in pallas-to-gpu-invalid.mlir and
// pallas-to-gpu-malformed.mlir.
//
// This file: mma.sync dots (MmaSync.cpp, Dot.cpp, DotLayout.cpp, the
// cp.async stage plans of StagingPlans.cpp and their copies in
// DotStaging.cpp, Epilogue.cpp) and the SIMT dot before sm_80 (Simt.cpp).

// Tests a dot accumulating into scratch across an "arbitrary" k axis: k
// runs as a loop inside the block; the scratch accumulator, only ever read
// and written whole in the accumulator layout, stays in registers carried by
// the loop (the `k == 0` zeroing becomes selects). The operands (whole
// blocks) are prefetched with cp.async into padded tiles, num_stages (3 by
// default) steps ahead, from one issue site: a loop over the steps
// [k == 0 ? 0 : k + 2, k + 2] (all three at the first step, then one), each
// copied into its stage (j mod 3, a view shifted by 5120 bytes a stage)
// when in range and committed as its own group either way; then
// `wait_group 2` (this step's copies landed) and a barrier; the stage
// k mod 3 is read with ldmatrix for mma.sync on sm_80; a barrier ends the
// step (its stage is refilled next); the output is written at the last k,
// through a padded shared buffer on the 15360 bytes of stages, dead at the
// last k after the dot (Epilogue.cpp: fragment pairs in, 16-byte reads and
// stores out).
// sm_75 gets a SIMT loop over k.
// CHECK-LABEL: gpu.func @mm(
// CHECK-SAME: grid = [2, 2, 1], grid_axes = {{\[}}[0], [1], []]
// CHECK-SAME: sequential_axes = [2]
// CHECK-SAME: dynamic_shared_memory_bytes = 15360, scratch_shared_memory_bytes = 0,
// CHECK: %[[SMEM:.+]] = gpu.dynamic_shared_memory
// CHECK-NOT: memref<32x32xf32, #gpu.address_space<workgroup>>
// CHECK: scf.for %[[K:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args({{.+}}) -> (f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK-COUNT-8: arith.select
// CHECK: %[[AHEAD:.+]] = arith.addi %[[K]], %c2 : index
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[K]], %c0 : index
// CHECK: %[[LO:.+]] = arith.select %[[FIRST]], %c0, %[[AHEAD]] : index
// CHECK: %[[HI:.+]] = arith.addi %[[K]], %c3 : index
// CHECK: scf.for %[[J:.+]] = %[[LO]] to %[[HI]] step %c1 {
// CHECK: %[[IN:.+]] = arith.cmpi slt, %[[J]], %c2 : index
// CHECK: scf.if %[[IN]] {
// CHECK: %[[STAGE:.+]] = arith.remui %[[J]], %c3 : index
// CHECK: memref.view %[[SMEM]][%{{.+}}][] : {{.+}} to memref<32x40xbf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy %{{.+}}[%{{.+}}], %{{.+}}[%{{.+}}], 8 {bypassL1} : memref<4096xbf16> to memref<1280xbf16, #gpu.address_space<workgroup>>
// CHECK: memref.view %[[SMEM]][%{{.+}}][] : {{.+}} to memref<32x40xbf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.commit.group
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.wait.group 2
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: vector.store {{.+}}#gpu.address_space<workgroup>
// CHECK: llvm.inline_asm has_side_effects "ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK: llvm.inline_asm has_side_effects "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// CHECK: nvvm.mma.sync A[{{.+}}] B[{{.+}}] C[{{.+}}] {{{.+}}multiplicandAPtxType = #nvvm.mma_type<bf16>{{.+}}shape = #nvvm.shape<m = 16, n = 8, k = 16>}
// CHECK-COUNT-3: nvvm.mma.sync
// CHECK-NOT: nvvm.cp.async.wait.group
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK-NEXT: memref.view %[[SMEM]][%c0][] : {{.+}} to memref<32x40xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-4: vector.store %{{.+}}, %{{.+}}[%{{.+}}] {alignment = 8 : i64} : memref<1280xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-2: vector.load %{{.+}}[%{{.+}}] {alignment = 16 : i64} : memref<1280xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-COUNT-2: vector.store %{{.+}}, %{{.+}}[%{{.+}}] {alignment = 16 : i64} : memref<4096xf32>, vector<4xf32>
// CHECK-NEXT: gpu.barrier
// CHECK: scf.yield {{.+}} : f32, f32, f32, f32, f32, f32, f32, f32
// SIMT-LABEL: gpu.func @mm(
// SIMT-NOT: nvvm.mma.sync
// SIMT: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args
// SIMT: arith.extf %{{.+}} : bf16 to f32
// SIMT: arith.mulf
// SIMT: arith.addf
pallas.kernel @mm_kernel(%a: !pallas.ref<32x32xbf16>, %b: !pallas.ref<32x32xbf16>,
                         %o: !pallas.ref<32x32xf32>, %acc: !pallas.ref<32x32xf32, vmem>) {
  %k = pallas.program_id 2 : i32
  %nk = pallas.num_programs 2 : i32
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %first = arith.cmpi eq, %k, %c0 : i32
  scf.if %first {
    %z = arith.constant dense<0.0> : tensor<32x32xf32>
    pallas.store %acc[], %z : !pallas.ref<32x32xf32, vmem>, tensor<32x32xf32>
  }
  %x = pallas.load %a[] : !pallas.ref<32x32xbf16> -> tensor<32x32xbf16>
  %y = pallas.load %b[] : !pallas.ref<32x32xbf16> -> tensor<32x32xbf16>
  %p = pallas.load %acc[] : !pallas.ref<32x32xf32, vmem> -> tensor<32x32xf32>
  %d = pallas.dot %x, %y, %p : tensor<32x32xbf16>, tensor<32x32xbf16>, tensor<32x32xf32> -> tensor<32x32xf32>
  pallas.store %acc[], %d : !pallas.ref<32x32xf32, vmem>, tensor<32x32xf32>
  %lastk = arith.subi %nk, %c1 : i32
  %last = arith.cmpi eq, %k, %lastk : i32
  scf.if %last {
    %r = pallas.load %acc[] : !pallas.ref<32x32xf32, vmem> -> tensor<32x32xf32>
    pallas.store %o[], %r : !pallas.ref<32x32xf32>, tensor<32x32xf32>
  }
}
func.func @main(%a: tensor<64x64xbf16>, %b: tensor<64x64xbf16>) -> tensor<64x64xf32> {
  %o = pallas.call @mm_kernel(%a, %b) {grid = array<i64: 2, 2, 2>, name = "mm",
      in_specs = [#pallas.block_spec<[32, 32], (d0, d1, d2) -> (d0, d2)>, #pallas.block_spec<[32, 32], (d0, d1, d2) -> (d2, d1)>],
      out_specs = [#pallas.block_spec<[32, 32], (d0, d1, d2) -> (d0, d1)>],
      scratch = [!pallas.ref<32x32xf32, vmem>],
      compiler_params = #pallas.compiler_params<tpu = <dimension_semantics = [parallel, parallel, arbitrary]>>}
      : (tensor<64x64xbf16>, tensor<64x64xbf16>) -> tensor<64x64xf32>
  return %o : tensor<64x64xf32>
}
