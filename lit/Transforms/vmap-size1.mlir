// RUN: pallasc-opt %s -split-input-file -pallas-vmap="axis-size=1 in-axes=0,1" | FileCheck %s

// pallas-vmap with axis_size 1: JAX squeezes the batch axis off every
// batched operand, calls the kernel unchanged and expands each output with a
// leading axis of 1 ("Why are we even vmapping?"). This holds even for the
// cases that would otherwise need the explicit loop.

// Tests the squeeze-and-expand of two batched inputs: the call keeps its grid,
// specs, aliases and cost.

pallas.kernel @add(%x: !pallas.ref<8xf32>, %y: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.+]]: tensor<1x16xf32>, %[[Y:.+]]: tensor<16x1xf32>) -> tensor<1x16xf32>
// CHECK: %[[XS:.+]] = pallas.reshape %[[X]] : tensor<1x16xf32> -> tensor<16xf32>
// CHECK: %[[YS:.+]] = pallas.reshape %[[Y]] : tensor<16x1xf32> -> tensor<16xf32>
// CHECK: %[[O:.+]] = pallas.call @add(%[[XS]], %[[YS]])
// CHECK-SAME: cost_estimate = #pallas.cost<flops = 16, bytes_accessed = 192, transcendentals = 0>
// CHECK-SAME: grid = array<i64: 2>
// CHECK-SAME: input_output_aliases = array<i64: 1, 0>
// CHECK-SAME: transforms = ["vmap"]
// CHECK-NOT: vmapped_dims
// CHECK-SAME: : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
// CHECK: %[[E:.+]] = pallas.reshape %[[O]] : tensor<16xf32> -> tensor<1x16xf32>
// CHECK: return %[[E]] : tensor<1x16xf32>
func.func @main(%x: tensor<16xf32>, %y: tensor<16xf32>) -> tensor<16xf32> {
  %o = pallas.call @add(%x, %y) {
      grid = array<i64: 2>,
      in_specs = [#pallas.block_spec<[8], (i) -> (i)>, #pallas.block_spec<[8], (i) -> (i)>],
      out_specs = [#pallas.block_spec<[8], (i) -> (i)>],
      input_output_aliases = array<i64: 1, 0>,
      cost_estimate = #pallas.cost<flops = 16, bytes_accessed = 192, transcendentals = 0>}
      : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %o : tensor<16xf32>
}

// -----

// Tests that a batched scalar-prefetch operand of batch size 1 is squeezed
// rather than looped over.

func.func @table_map(%i: i32, %idx: !pallas.ref<4xi32, smem>) -> (i32, i32) {
  %row = pallas.load %idx[%i] : !pallas.ref<4xi32, smem> -> i32
  %c0 = arith.constant 0 : i32
  return %row, %c0 : i32, i32
}
pallas.kernel @gather(%idx: !pallas.ref<4xi32, smem>, %row: !pallas.ref<128xf32>,
                      %o: !pallas.ref<128xf32>) {
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[IDX:.+]]: tensor<1x4xi32>, %[[T:.+]]: tensor<16x1x128xf32>) -> tensor<1x4x128xf32>
// CHECK-NOT: scf.for
// CHECK: %[[IS:.+]] = pallas.reshape %[[IDX]] : tensor<1x4xi32> -> tensor<4xi32>
// CHECK: %[[TS:.+]] = pallas.reshape %[[T]] : tensor<16x1x128xf32> -> tensor<16x128xf32>
// CHECK: %[[O:.+]] = pallas.call @gather(%[[IS]], %[[TS]])
// CHECK-SAME: in_specs = [#pallas.block_spec<[squeezed, 128], @table_map>]
// CHECK: pallas.reshape %[[O]] : tensor<4x128xf32> -> tensor<1x4x128xf32>
func.func @main(%idx: tensor<4xi32>, %t: tensor<16x128xf32>) -> tensor<4x128xf32> {
  %o = pallas.call @gather(%idx, %t) {
      grid = array<i64: 4>, num_scalar_prefetch = 1,
      in_specs = [#pallas.block_spec<[squeezed, 128], @table_map>],
      out_specs = [#pallas.block_spec<[squeezed, 128], (i) -> (i, 0)>]}
      : (tensor<4xi32>, tensor<16x128xf32>) -> tensor<4x128xf32>
  return %o : tensor<4x128xf32>
}

// -----

// Tests that a batched dynamic grid bound of batch size 1 becomes its single
// element.

pallas.kernel @rows(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[N:.+]]: tensor<1xindex>, %[[X:.+]]: tensor<64x1xf32>) -> tensor<1x64xf32>
// CHECK: %[[C0:.+]] = arith.constant 0 : index
// CHECK: %[[NS:.+]] = tensor.extract %[[N]][%[[C0]]] : tensor<1xindex>
// CHECK: %[[XS:.+]] = pallas.reshape %[[X]] : tensor<64x1xf32> -> tensor<64xf32>
// CHECK: pallas.call @rows[%[[NS]]](%[[XS]])
// CHECK-SAME: grid = array<i64: -1>
func.func @main(%n: index, %x: tensor<64xf32>) -> tensor<64xf32> {
  %o = pallas.call @rows[%n](%x) {
      grid = array<i64: -1>,
      in_specs = [#pallas.block_spec<[8], (i) -> (i)>],
      out_specs = [#pallas.block_spec<[8], (i) -> (i)>]}
      : (tensor<64xf32>) -> tensor<64xf32>
  return %o : tensor<64xf32>
}
