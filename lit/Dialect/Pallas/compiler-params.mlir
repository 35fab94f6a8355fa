// RUN: pallasc-opt %s -split-input-file | FileCheck %s
// RUN: pallasc-opt %s -split-input-file | pallasc-opt -split-input-file | FileCheck %s

// The typed compiler params of a pallas.call round-trip; a part without
// fields and absent fields are not printed.

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
// CHECK-LABEL: func.func @every_field
// CHECK: compiler_params = #pallas.compiler_params<gpu = <num_warps = 8, num_stages = 2, strict_fp = true>, tpu = <dimension_semantics = [parallel, arbitrary], vmem_limit_bytes = 33554432, has_side_effects = true, collective_id = 7>>
func.func @every_field(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @k(%x) {grid = array<i64: 2, 2>, in_specs = [#pallas.block_spec<[8]>],
      out_specs = [#pallas.block_spec<[8]>],
      compiler_params = #pallas.compiler_params<tpu = <collective_id = 7, has_side_effects = true, vmem_limit_bytes = 33554432, dimension_semantics = [parallel, arbitrary]>, gpu = <strict_fp = true, num_stages = 2, num_warps = 8>>}
      : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
// dimension_semantics has one entry per kernel-visible axis: axis 0 was
// added by vmap. Empty parts and false/pure values are dropped.
// CHECK-LABEL: func.func @visible_axes
// CHECK: compiler_params = #pallas.compiler_params<tpu = <dimension_semantics = [core_parallel, subcore_parallel], has_side_effects = dataflow_side_effecting>>
// CHECK-SAME: vmapped_dims = array<i64: 0>
func.func @visible_axes(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @k(%x) {grid = array<i64: 3, 2, 2>, in_specs = [#pallas.block_spec<[8]>],
      out_specs = [#pallas.block_spec<[8]>], vmapped_dims = array<i64: 0>,
      compiler_params = #pallas.compiler_params<gpu = <strict_fp = false>, tpu = <dimension_semantics = [core_parallel, subcore_parallel], has_side_effects = dataflow_side_effecting>>}
      : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
// CHECK-LABEL: func.func @empty
// CHECK: compiler_params = #pallas.compiler_params<>
// CHECK-SAME: grid
func.func @empty(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
      out_specs = [#pallas.block_spec<[8]>],
      compiler_params = #pallas.compiler_params<gpu = <>, tpu = <has_side_effects = false>>}
      : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}
