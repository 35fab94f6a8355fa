// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu=chip=sm_80 -canonicalize -cse | FileCheck %s

// pallas-to-gpu is one pass whose source is split by concern
// (passes/Conversion/PallasToGPU, docs/cuda.md's file map); the
// pallas-to-gpu-*.mlir files test it one concern per file: elementwise,
// reduce, memory, dot-mma, dot-wgmma, dot-tf32, tma, rocm, nvgpu-to-nvvm,
// num-warps, and its error cases in pallas-to-gpu-invalid.mlir and
// pallas-to-gpu-malformed.mlir.
//
// This file: Elementwise kernels and block views (EmitElementwise.cpp,
// Memory.cpp's vector accesses and edge masks, the launch geometry of
// LaunchGeometry.cpp and its record, LaunchRecord.cpp).

// Tests that an elementwise kernel becomes one kernel gpu.func over the
// whole arrays with 16-byte vector accesses, 128 threads (4 warps), and the
// launch record: one CUDA block per grid point, x and y from grid axes 0, 1.
// CHECK-LABEL: gpu.module @add_kernels
// CHECK: gpu.func @add(%[[X:.+]]: memref<32x256xf32>, %[[Y:.+]]: memref<32x256xf32>, %[[O:.+]]: memref<32x256xf32>) kernel
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// CHECK-SAME: pallas.gpu.launch = #pallas.gpu_launch<entry = "add", grid = [4, 2, 1], grid_axes = {{\[}}[0], [1], []], block = [128, 1, 1], num_warps = 4, warp_size = 32, sequential_axes = [], vmapped_axes = [], dynamic_shared_memory_bytes = 0, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, inputs[1]>, #pallas.gpu_param<pointer, outputs[0]>]>
// CHECK-DAG: %[[TID:.+]] = gpu.thread_id x
// CHECK-DAG: gpu.block_id x
// CHECK-DAG: gpu.block_id y
// CHECK: %[[XF:.+]] = memref.collapse_shape %[[X]]
// CHECK: vector.load %[[XF]][%{{.+}}] {alignment = 16 : i64} : memref<8192xf32>, vector<4xf32>
// CHECK: arith.addf
// CHECK: %[[OF:.+]] = memref.collapse_shape %[[O]]
// CHECK: vector.store %{{.+}}, %[[OF]][%{{.+}}] {alignment = 16 : i64}
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
pallas.kernel @add_kernel(%x: !pallas.ref<8x128xf32>, %y: !pallas.ref<8x128xf32>,
                          %o: !pallas.ref<8x128xf32>) {
  %a = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %b = pallas.load %y[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %s = arith.addf %a, %b : tensor<8x128xf32>
  pallas.store %o[], %s : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @main(%x: tensor<32x256xf32>, %y: tensor<32x256xf32>) -> tensor<32x256xf32> {
  %o = pallas.call @add_kernel(%x, %y) {grid = array<i64: 4, 2>, name = "add",
      in_specs = [#pallas.block_spec<[8, 128], (d0, d1) -> (d0, d1)>, #pallas.block_spec<[8, 128], (d0, d1) -> (d0, d1)>],
      out_specs = [#pallas.block_spec<[8, 128], (d0, d1) -> (d0, d1)>]}
      : (tensor<32x256xf32>, tensor<32x256xf32>) -> tensor<32x256xf32>
  return %o : tensor<32x256xf32>
}

// -----

// Tests that a rank-4 grid folds its leading axes into CUDA x (Pallas'
// Triton rule: the first axis fastest), and that the lanes past the
// array's edge (1000 is not a multiple of 256) read NaN and are not
// written; only the first of two replicated warps stores.
// CHECK-LABEL: gpu.func @copy4(
// CHECK-SAME: grid = [6, 4, 4], grid_axes = {{\[}}[0, 1], [2], [3]]
// CHECK-DAG: %[[NAN:.+]] = arith.constant 0x7FC00000 : f32
// CHECK: %[[BX:.+]] = gpu.block_id x
// CHECK: %[[A0:.+]] = arith.remui %[[BX]], %{{.+}} : index
// CHECK: %[[Q:.+]] = arith.divui %[[BX]], %{{.+}} : index
// CHECK: %[[A1:.+]] = arith.remui %[[Q]], %{{.+}} : index
// CHECK: gpu.block_id y
// CHECK: gpu.block_id z
// CHECK: %[[IN:.+]] = arith.cmpi slt, %{{.+}}, %{{.+}} : index
// CHECK: %[[SAFE:.+]] = arith.select %[[IN]], %{{.+}}, %{{.+}} : index
// CHECK: vector.load %{{.+}}[%[[SAFE]]]
// CHECK: arith.select %[[IN]], %{{.+}}, %[[NAN]] : f32
// CHECK: %[[P:.+]] = arith.andi %[[IN]], %{{.+}} : i1
// CHECK: scf.if %[[P]] {
// CHECK-NEXT: vector.from_elements
// CHECK-NEXT: vector.store
pallas.kernel @copy4_kernel(%x: !pallas.ref<256xf32>, %o: !pallas.ref<256xf32>) {
  %v = pallas.load %x[] : !pallas.ref<256xf32> -> tensor<256xf32>
  pallas.store %o[], %v : !pallas.ref<256xf32>, tensor<256xf32>
}
func.func @main(%x: tensor<2x3x4x1000xf32>) -> tensor<2x3x4x1000xf32> {
  %o = pallas.call @copy4_kernel(%x) {grid = array<i64: 2, 3, 4, 4>, name = "copy4",
      in_specs = [#pallas.block_spec<[squeezed, squeezed, squeezed, 256], (d0, d1, d2, d3) -> (d0, d1, d2, d3)>],
      out_specs = [#pallas.block_spec<[squeezed, squeezed, squeezed, 256], (d0, d1, d2, d3) -> (d0, d1, d2, d3)>]}
      : (tensor<2x3x4x1000xf32>) -> tensor<2x3x4x1000xf32>
  return %o : tensor<2x3x4x1000xf32>
}
