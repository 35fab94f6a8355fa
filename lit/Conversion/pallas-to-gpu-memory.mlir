// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu=chip=sm_80 -canonicalize -cse | FileCheck %s

// pallas-to-gpu is one pass whose source is split by concern
// (passes/Conversion/PallasToGPU, docs/cuda.md's file map); the
// pallas-to-gpu-*.mlir files test it one concern per file: elementwise,
// reduce, memory, dot-mma, dot-wgmma, dot-tf32, tma, rocm, nvgpu-to-nvvm,
// num-warps, and its error cases in pallas-to-gpu-invalid.mlir and
// pallas-to-gpu-malformed.mlir.
//
// This file: Scalar prefetch, dynamic grid bounds, vmapped axes and atomics
// (EmitMemory.cpp's emitters over Memory.cpp's loads and stores, the launch
// record's grid-bound parameters); the memory emitters' error cases are in
// pallas-to-gpu-memory-invalid.mlir.

// Tests a dynamic grid bound (an i32 parameter), a scalar-prefetch index
// map inlined into the kernel (the row comes from the prefetched indices),
// and a vmapped axis launched after the kernel's own axes.
// CHECK-LABEL: gpu.func @gather(
// CHECK-SAME: %[[IDX:.+]]: memref<8xi32>, %[[T:.+]]: memref<4x64x128xf32>, %[[O:.+]]: memref<4x8x128xf32>, %[[N:.+]]: i32) kernel
// CHECK-SAME: grid = [-1, 4, 1], grid_axes = {{\[}}[1], [0], []]
// CHECK-SAME: vmapped_axes = [0]
// CHECK-SAME: #pallas.gpu_param<i32, grid_bounds[0], axis = 1>
// CHECK: %[[J:.+]] = gpu.block_id x
// CHECK: memref.load %[[IDX]]
// CHECK: vector.load {{.+}} : memref<32768xf32>, vector<4xf32>
pallas.kernel @gather_kernel(%idx: !pallas.ref<8xi32, smem>, %t: !pallas.ref<128xf32>, %o: !pallas.ref<128xf32>) {
  %v = pallas.load %t[] : !pallas.ref<128xf32> -> tensor<128xf32>
  pallas.store %o[], %v : !pallas.ref<128xf32>, tensor<128xf32>
}
func.func @row_map(%i: i32, %j: i32, %idx: !pallas.ref<8xi32, smem>) -> (i32, i32, i32) {
  %r = pallas.load %idx[%j] : !pallas.ref<8xi32, smem> -> i32
  %c0 = arith.constant 0 : i32
  return %i, %r, %c0 : i32, i32, i32
}
func.func @main(%n: index, %idx: tensor<8xi32>, %t: tensor<4x64x128xf32>) -> tensor<4x8x128xf32> {
  %o = pallas.call @gather_kernel[%n](%idx, %t) {grid = array<i64: 4, -1>, name = "gather",
      num_scalar_prefetch = 1 : i64, vmapped_dims = array<i64: 0>,
      in_specs = [#pallas.block_spec<[squeezed, squeezed, 128], @row_map>],
      out_specs = [#pallas.block_spec<[squeezed, squeezed, 128], (d0, d1) -> (d0, d1, 0)>]}
      : (tensor<8xi32>, tensor<4x64x128xf32>) -> tensor<4x8x128xf32>
  return %o : tensor<4x8x128xf32>
}

// -----

// Tests that an atomic is a real atomic, done once per block (thread 0),
// and only in bounds, on an `any` output aliased to its input.
// CHECK-LABEL: gpu.func @hist(
// CHECK: %[[TID:.+]] = gpu.thread_id x
// CHECK: %[[IN:.+]] = arith.cmpi slt
// CHECK: scf.if %[[IN]] {
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[TID]], %{{.+}} : index
// CHECK: scf.if %[[FIRST]] {
// CHECK: memref.atomic_rmw addi %{{.+}}, %{{.+}}[%{{.+}}] : (i32, memref<16xi32>) -> i32
pallas.kernel @hist_kernel(%x: !pallas.ref<128xi32>, %hin: !pallas.ref<16xi32, any>,
                           %h: !pallas.ref<16xi32, any>) {
  %c0 = arith.constant 0 : i32
  %v = pallas.load %x[%c0] : !pallas.ref<128xi32> -> i32
  %one = arith.constant 1 : i32
  %old = pallas.atomic_rmw add %h[%v], %one : !pallas.ref<16xi32, any>, i32
}
func.func @main(%x: tensor<1024xi32>, %h: tensor<16xi32>) -> tensor<16xi32> {
  %o = pallas.call @hist_kernel(%x, %h) {grid = array<i64: 8>, name = "hist",
      in_specs = [#pallas.block_spec<[128], (d0) -> (d0)>, #pallas.block_spec<any>],
      out_specs = [#pallas.block_spec<any>],
      input_output_aliases = array<i64: 1, 0>}
      : (tensor<1024xi32>, tensor<16xi32>) -> tensor<16xi32>
  return %o : tensor<16xi32>
}
