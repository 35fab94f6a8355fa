// RUN: pallasc-opt %s -split-input-file -verify-diagnostics -pallas-vmap="axis-size=3 in-axes=-1,1" | FileCheck %s

// pallas-vmap with the first input of each wrapper not batched and the second
// batched at axis 1.

// Tests _batch_block_mapping with an @func index map: the batched operand's
// map becomes a copy of the function that takes the new grid index first and
// returns it at the batch axis (the squeezed dim inserted there); the
// unbatched scalar-prefetch operand stays as it is, and so does the kernel.

// CHECK-LABEL: func.func @table_map(
// CHECK-SAME: %{{.+}}: i32, %{{.+}}: !pallas.ref<16xi32, smem>) -> (i32, i32)
func.func @table_map(%i: i32, %idx: !pallas.ref<16xi32, smem>) -> (i32, i32) {
  %row = pallas.load %idx[%i] : !pallas.ref<16xi32, smem> -> i32
  %c0 = arith.constant 0 : i32
  return %row, %c0 : i32, i32
}

// CHECK-LABEL: pallas.kernel @gather(
// CHECK-SAME: !pallas.ref<16xi32, smem>, %{{.+}}: !pallas.ref<512xf32>, %{{.+}}: !pallas.ref<512xf32>)
pallas.kernel @gather(%idx: !pallas.ref<16xi32, smem>, %row: !pallas.ref<512xf32>,
                      %o: !pallas.ref<512xf32>) {
  %r = pallas.load %row[] : !pallas.ref<512xf32> -> tensor<512xf32>
  pallas.store %o[], %r : !pallas.ref<512xf32>, tensor<512xf32>
}

// CHECK-LABEL: func.func @table_map_vmap(
// CHECK-SAME: %[[B:.+]]: i32, %[[I:.+]]: i32, %[[IDX:.+]]: !pallas.ref<16xi32, smem>) -> (i32, i32, i32)
// CHECK: %[[ROW:.+]] = pallas.load %[[IDX]][%[[I]]]
// CHECK: %[[C0:.+]] = arith.constant 0 : i32
// CHECK: return %[[ROW]], %[[B]], %[[C0]] : i32, i32, i32

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[IDX:.+]]: tensor<16xi32>, %[[T:.+]]: tensor<256x3x512xf32>) -> tensor<3x16x512xf32>
// CHECK: pallas.call @gather(%[[IDX]], %[[T]])
// CHECK-SAME: grid = array<i64: 3, 16>
// CHECK-SAME: in_specs = [#pallas.block_spec<[squeezed, squeezed, 512], @table_map_vmap>]
// CHECK-SAME: num_scalar_prefetch = 1
// CHECK-SAME: out_specs = [#pallas.block_spec<[squeezed, squeezed, 512], (d0, d1) -> (d0, d1, 0)>]
// CHECK-SAME: vmapped_dims = array<i64: 0>
func.func @main(%idx: tensor<16xi32>, %t: tensor<256x512xf32>) -> tensor<16x512xf32> {
  %o = pallas.call @gather(%idx, %t) {
      grid = array<i64: 16>, num_scalar_prefetch = 1,
      in_specs = [#pallas.block_spec<[squeezed, 512], @table_map>],
      out_specs = [#pallas.block_spec<[squeezed, 512], (i) -> (i, 0)>]}
      : (tensor<16xi32>, tensor<256x512xf32>) -> tensor<16x512xf32>
  return %o : tensor<16x512xf32>
}

// -----

// Tests that an unbatched operand's @func index map is copied too (the map
// must take every grid index) and ignores the new index; the batched operand
// shares the function through its own copy.

// CHECK-LABEL: func.func @diag(
func.func @diag(%i: index) -> (index, index) {
  return %i, %i : index, index
}
// CHECK-LABEL: func.func @diag_vmap(
// CHECK-SAME: %{{.+}}: index, %[[I:.+]]: index) -> (index, index)
// CHECK: return %[[I]], %[[I]] : index, index
// CHECK-LABEL: func.func @diag_vmap_0(
// CHECK-SAME: %[[B:.+]]: index, %[[I:.+]]: index) -> (index, index, index)
// CHECK: return %[[I]], %[[B]], %[[I]] : index, index, index

pallas.kernel @two(%x: !pallas.ref<8x8xf32>, %y: !pallas.ref<8x8xf32>, %o: !pallas.ref<8x8xf32>) {
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.+]]: tensor<16x16xf32>, %[[Y:.+]]: tensor<16x3x16xf32>)
// CHECK: pallas.call @two(%[[X]], %[[Y]])
// CHECK-SAME: in_specs = [#pallas.block_spec<[8, 8], @diag_vmap>, #pallas.block_spec<[8, squeezed, 8], @diag_vmap_0>]
func.func @main(%x: tensor<16x16xf32>, %y: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %o = pallas.call @two(%x, %y) {
      grid = array<i64: 2>,
      in_specs = [#pallas.block_spec<[8, 8], @diag>, #pallas.block_spec<[8, 8], @diag>],
      out_specs = [#pallas.block_spec<[8, 8], (i) -> (i, i)>]}
      : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  return %o : tensor<16x16xf32>
}

// -----

// Tests _broadcast_input_output_aliases for an input batched at a non-zero
// axis and aliased to an output (which is batched at 0): the input's batch
// axis is moved to 0 (a transpose) and its block spec batched at 0.

pallas.kernel @inplace(%x: !pallas.ref<8xf32>, %y: !pallas.ref<8x4xf32>, %o: !pallas.ref<8x4xf32>) {
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.+]]: tensor<16xf32>, %[[Y:.+]]: tensor<16x3x4xf32>) -> tensor<3x16x4xf32>
// CHECK: %[[T:.+]] = pallas.transpose %[[Y]] [1, 0, 2] : tensor<16x3x4xf32> -> tensor<3x16x4xf32>
// CHECK: %[[O:.+]] = pallas.call @inplace(%[[X]], %[[T]])
// CHECK-SAME: in_specs = [#pallas.block_spec<[8], (d0, d1) -> (d1)>, #pallas.block_spec<[squeezed, 8, 4], (d0, d1) -> (d0, d1, 0)>]
// CHECK-SAME: input_output_aliases = array<i64: 1, 0>
// CHECK-SAME: : (tensor<16xf32>, tensor<3x16x4xf32>) -> tensor<3x16x4xf32>
// CHECK: return %[[O]]
func.func @main(%x: tensor<16xf32>, %y: tensor<16x4xf32>) -> tensor<16x4xf32> {
  %o = pallas.call @inplace(%x, %y) {
      grid = array<i64: 2>,
      in_specs = [#pallas.block_spec<[8], (i) -> (i)>, #pallas.block_spec<[8, 4], (i) -> (i, 0)>],
      out_specs = [#pallas.block_spec<[8, 4], (i) -> (i, 0)>],
      input_output_aliases = array<i64: 1, 0>}
      : (tensor<16xf32>, tensor<16x4xf32>) -> tensor<16x4xf32>
  return %o : tensor<16x4xf32>
}

// -----

// Tests that element block dims keep their padding, that the squeezed batch
// dim goes at the batch axis (the last one here), and that a call with an
// empty grid gets a grid of rank 1 whose index the map returns.

pallas.kernel @halo(%x: !pallas.ref<4xf32>, %y: !pallas.ref<10xf32>, %o: !pallas.ref<8xf32>) {
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.+]]: tensor<4xf32>, %[[Y:.+]]: tensor<8x3xf32>) -> tensor<3x8xf32>
// CHECK: pallas.call @halo(%[[X]], %[[Y]])
// CHECK-SAME: grid = array<i64: 3>
// CHECK-SAME: in_specs = [#pallas.block_spec<[4], (d0) -> (0)>, #pallas.block_spec<[element(10, 1, 1), squeezed], (d0) -> (0, d0)>]
// CHECK-SAME: out_specs = [#pallas.block_spec<[squeezed, 8], (d0) -> (d0, 0)>]
func.func @main(%x: tensor<4xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @halo(%x, %y) {
      grid = array<i64>,
      in_specs = [#pallas.block_spec<[4], () -> (0)>,
                  #pallas.block_spec<[element(10, 1, 1)], () -> (0)>],
      out_specs = [#pallas.block_spec<[8], () -> (0)>]}
      : (tensor<4xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that a batch axis beyond the input's rank is an error.

pallas.kernel @scalar(%x: !pallas.ref<8xf32>, %y: !pallas.ref<f32>, %o: !pallas.ref<8xf32>) {
}
// expected-error @+1 {{pallas-vmap: in-axes[1] = 1 is out of range for input 1 of type 'tensor<f32>' (expected -1 or an axis in [0, 0])}}
func.func @main(%x: tensor<8xf32>, %y: tensor<f32>) -> tensor<8xf32> {
  %o = pallas.call @scalar(%x, %y) {grid = array<i64: 1>,
      in_specs = [#pallas.block_spec<[8]>, #pallas.block_spec<[]>],
      out_specs = [#pallas.block_spec<[8]>]}
      : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that a dynamic grid bound (a scalar) can only be batched at axis 0,
// with one in-axes entry per argument of the wrapper.

pallas.kernel @rows(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
// expected-error @+1 {{pallas-vmap: in-axes[1] = 1: a dynamic grid bound is a scalar; its batch axis must be 0 or -1}}
func.func @main(%x: tensor<64xf32>, %n: index) -> tensor<64xf32> {
  %o = pallas.call @rows[%n](%x) {grid = array<i64: -1>,
      in_specs = [#pallas.block_spec<[8], (i) -> (i)>],
      out_specs = [#pallas.block_spec<[8], (i) -> (i)>]}
      : (tensor<64xf32>) -> tensor<64xf32>
  return %o : tensor<64xf32>
}
