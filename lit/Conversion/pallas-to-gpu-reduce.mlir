// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu=chip=sm_80 -canonicalize -cse | FileCheck %s

// pallas-to-gpu is one pass whose source is split by concern
// (passes/Conversion/PallasToGPU, docs/cuda.md's file map); the
// pallas-to-gpu-*.mlir files test it one concern per file: elementwise,
// reduce, memory, dot-mma, dot-wgmma, dot-tf32, tma, rocm, nvgpu-to-nvvm,
// num-warps, and its error cases in pallas-to-gpu-invalid.mlir and
// pallas-to-gpu-malformed.mlir.
//
// This file: Reductions (EmitReduce.cpp): lanes, warps, shared memory.

// Tests a row reduction: partials in registers, xor shuffles across the
// lanes of a warp, shared memory and a barrier across the warps. The
// barrier that would keep the slots from being written again before all
// warps read them is dropped: nothing after it touches shared memory and
// nothing before it wrote global memory.
// CHECK-LABEL: gpu.func @rowmax(
// CHECK: %[[SMEM:.+]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK: vector.load {{.+}} : memref<65536xf32>, vector<4xf32>
// CHECK: arith.maximumf
// CHECK: gpu.shuffle xor %{{.+}}, %{{.+}}, %[[W:.+]] : f32
// CHECK-COUNT-4: gpu.shuffle xor
// CHECK: %[[WS:.+]] = memref.view %[[SMEM]][%{{.+}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4x1xf32, #gpu.address_space<workgroup>>
// CHECK: memref.store %{{.+}}, %[[WS]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[WS]]
// CHECK-NOT: gpu.barrier
// CHECK: memref.store %{{.+}}, %{{.+}} : memref<64xf32>
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
pallas.kernel @rowmax_kernel(%x: !pallas.ref<1024xf32>, %o: !pallas.ref<1xf32>) {
  %v = pallas.load %x[] : !pallas.ref<1024xf32> -> tensor<1024xf32>
  %m = pallas.reduce max %v dims [0] : tensor<1024xf32> -> tensor<f32>
  %r = pallas.reshape %m : tensor<f32> -> tensor<1xf32>
  pallas.store %o[], %r : !pallas.ref<1xf32>, tensor<1xf32>
}
func.func @main(%x: tensor<64x1024xf32>) -> tensor<64x1xf32> {
  %o = pallas.call @rowmax_kernel(%x) {grid = array<i64: 64>, name = "rowmax",
      in_specs = [#pallas.block_spec<[squeezed, 1024], (d0) -> (d0, 0)>],
      out_specs = [#pallas.block_spec<[squeezed, 1], (d0) -> (d0, 0)>]}
      : (tensor<64x1024xf32>) -> tensor<64x1xf32>
  return %o : tensor<64x1xf32>
}
