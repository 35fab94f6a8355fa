// RUN: pallasc-opt %s -split-input-file -verify-diagnostics -pallas-vmap="axis-size=4 in-axes=0,-1" | FileCheck %s
// RUN: not pallasc-opt %s -split-input-file -pallas-vmap="axis-size=0 in-axes=0,-1" 2>&1 | FileCheck %s --check-prefix=SIZE
// RUN: not pallasc-opt %s -split-input-file -pallas-vmap="axis-size=4 in-axes=-2,-1" 2>&1 | FileCheck %s --check-prefix=NEG

// JAX's _pallas_call_batching_rule with the first input of each wrapper
// batched at axis 0 and the second not batched (see vmap-axis1.mlir for other
// axes, vmap-size1.mlir for axis_size 1).

// SIZE: error: pallas-vmap: axis-size must be at least 1, got 0
// NEG: error: pallas-vmap: in-axes[0] = -2: expected -1 (not batched) or a non-negative axis

// Tests that the grid gains a leading dimension of axis_size, that the batched
// operand gets a squeezed block dim at its batch axis whose index is the new
// grid index d0, that the unbatched operand's index map ignores d0, that the
// output is batched at 0, that grid_names get an unnamed leading entry, that
// vmapped_dims hides the new axis from the kernel, that the cost estimate is
// scaled by axis_size, and that the kernel is unchanged.

// CHECK-LABEL: pallas.kernel @add(
// CHECK-SAME: %{{.+}}: !pallas.ref<8x128xf32>, %{{.+}}: !pallas.ref<8x128xf32>, %{{.+}}: !pallas.ref<8x128xf32>)
pallas.kernel @add(%x: !pallas.ref<8x128xf32>, %y: !pallas.ref<8x128xf32>,
                   %o: !pallas.ref<8x128xf32>) {
  // CHECK: pallas.program_id 0 : i32
  %i = pallas.program_id 0 : i32
  %a = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %b = pallas.load %y[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %s = arith.addf %a, %b : tensor<8x128xf32>
  pallas.store %o[], %s : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.+]]: tensor<4x32x128xf32>, %[[Y:.+]]: tensor<32x128xf32>) -> tensor<4x32x128xf32>
// CHECK: %[[O:.+]] = pallas.call @add(%[[X]], %[[Y]])
// CHECK-SAME: cost_estimate = #pallas.cost<flops = 16384, bytes_accessed = 196608, transcendentals = 4>
// CHECK-SAME: grid = array<i64: 4, 4>
// CHECK-SAME: grid_names = ["", "i"]
// CHECK-SAME: in_specs = [#pallas.block_spec<[squeezed, 8, 128], (d0, d1) -> (d0, d1, 0)>, #pallas.block_spec<[8, 128], (d0, d1) -> (d1, 0)>]
// CHECK-SAME: out_specs = [#pallas.block_spec<[squeezed, 8, 128], (d0, d1) -> (d0, d1, 0)>]
// CHECK-SAME: transforms = ["vmap"]
// CHECK-SAME: vmapped_dims = array<i64: 0>
// CHECK-SAME: : (tensor<4x32x128xf32>, tensor<32x128xf32>) -> tensor<4x32x128xf32>
// CHECK: return %[[O]] : tensor<4x32x128xf32>
func.func @main(%x: tensor<32x128xf32>, %y: tensor<32x128xf32>) -> tensor<32x128xf32> {
  %o = pallas.call @add(%x, %y) {
      grid = array<i64: 4>, grid_names = ["i"],
      in_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>,
                  #pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      out_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      cost_estimate = #pallas.cost<flops = 4096, bytes_accessed = 49152, transcendentals = 1>}
      : (tensor<32x128xf32>, tensor<32x128xf32>) -> tensor<32x128xf32>
  return %o : tensor<32x128xf32>
}

// -----

// Tests that a call vmapped before keeps its vmapped axes hidden: they shift
// by one behind the new leading axis (vmapped_dims = [0] + old + 1), a call
// without grid_names gets none, and program_id(1) keeps its meaning.

// CHECK-LABEL: pallas.kernel @twice(
pallas.kernel @twice(%x: !pallas.ref<8xf32>, %y: !pallas.ref<8xf32>,
                     %o: !pallas.ref<8xf32>) {
  // CHECK: pallas.program_id 1 : i32
  %j = pallas.program_id 1 : i32
  %a = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  pallas.store %o[], %a : !pallas.ref<8xf32>, tensor<8xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.+]]: tensor<4x2x16xf32>, %[[Y:.+]]: tensor<16xf32>) -> tensor<4x2x16xf32>
// CHECK: pallas.call @twice(%[[X]], %[[Y]])
// CHECK-SAME: grid = array<i64: 4, 2, 2, 2>
// CHECK-NOT: grid_names
// CHECK-SAME: in_specs = [#pallas.block_spec<[squeezed, squeezed, 8], (d0, d1, d2, d3) -> (d0, d1, d3)>, #pallas.block_spec<[8], (d0, d1, d2, d3) -> (d3)>]
// CHECK-SAME: vmapped_dims = array<i64: 0, 1>
func.func @main(%x: tensor<2x16xf32>, %y: tensor<16xf32>) -> tensor<2x16xf32> {
  %o = pallas.call @twice(%x, %y) {
      grid = array<i64: 2, 2, 2>, vmapped_dims = array<i64: 0>,
      in_specs = [#pallas.block_spec<[squeezed, 8], (b, i, j) -> (b, j)>,
                  #pallas.block_spec<[8], (b, i, j) -> (j)>],
      out_specs = [#pallas.block_spec<[squeezed, 8], (b, i, j) -> (b, j)>]}
      : (tensor<2x16xf32>, tensor<16xf32>) -> tensor<2x16xf32>
  return %o : tensor<2x16xf32>
}

// -----

// Tests _broadcast_input_output_aliases: the unbatched input aliased to the
// output is broadcast along a new leading axis before the call (the output is
// batched at 0, so the aliased input must be too); the alias and the pinned
// input stay as they are.

pallas.kernel @update(%x: !pallas.ref<8xf32>, %acc_in: !pallas.ref<8xf32>,
                      %acc_out: !pallas.ref<8xf32>) {
  %a = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %b = pallas.load %acc_in[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %s = arith.addf %a, %b : tensor<8xf32>
  pallas.store %acc_out[], %s : !pallas.ref<8xf32>, tensor<8xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.+]]: tensor<4x8xf32>, %[[ACC:.+]]: tensor<8xf32>) -> tensor<4x8xf32>
// CHECK: %[[B:.+]] = pallas.broadcast_in_dim %[[ACC]] dims [1] : tensor<8xf32> -> tensor<4x8xf32>
// CHECK: %[[O:.+]] = pallas.call @update(%[[X]], %[[B]])
// CHECK-SAME: in_specs = [#pallas.block_spec<[squeezed, 8], (d0, d1) -> (d0, 0)>, #pallas.block_spec<[squeezed, 8], (d0, d1) -> (d0, 0)>]
// CHECK-SAME: input_output_aliases = array<i64: 1, 0>
// CHECK-SAME: pinned_inputs = array<i64: 1>
// CHECK-SAME: : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: return %[[O]]
func.func @main(%x: tensor<8xf32>, %acc: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @update(%x, %acc) {
      grid = array<i64: 1>,
      in_specs = [#pallas.block_spec<[8], (i) -> (0)>, #pallas.block_spec<[8], (i) -> (0)>],
      out_specs = [#pallas.block_spec<[8], (i) -> (0)>],
      input_output_aliases = array<i64: 1, 0>, pinned_inputs = array<i64: 1>}
      : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that a batched 'any' (unblocked) operand becomes a blocked 'any'
// spec: one whole batch element per step (the array's shape, squeezed at the
// batch axis, index d0 there); an unbatched 'any' operand stays whole; an
// unbatched dynamic grid bound keeps its place behind the new static axis; a
// spec without an index map (block index 0) gets one that places d0.

pallas.kernel @whole(%x: !pallas.ref<64xf32, any>, %y: !pallas.ref<64xf32, any>,
                     %o: !pallas.ref<8xf32>) {
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[N:.+]]: index, %[[X:.+]]: tensor<4x64xf32>, %[[Y:.+]]: tensor<64xf32>) -> tensor<4x8xf32>
// CHECK: pallas.call @whole[%[[N]]](%[[X]], %[[Y]])
// CHECK-SAME: grid = array<i64: 4, -1>
// CHECK-SAME: in_specs = [#pallas.block_spec<[squeezed, 64], (d0, d1) -> (d0, 0), any>, #pallas.block_spec<any>]
// CHECK-SAME: out_specs = [#pallas.block_spec<[squeezed, 8], (d0, d1) -> (d0, 0)>]
func.func @main(%n: index, %x: tensor<64xf32>, %y: tensor<64xf32>) -> tensor<8xf32> {
  %o = pallas.call @whole[%n](%x, %y) {
      grid = array<i64: -1>,
      in_specs = [#pallas.block_spec<any>, #pallas.block_spec<any>],
      out_specs = [#pallas.block_spec<[8]>]}
      : (tensor<64xf32>, tensor<64xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests the explicit-loop fallback (_batch_with_explicit_loop) for a batched
// scalar-prefetch operand: the unbatched call runs once per batch element
// inside an scf.for over the batch, on slices of the batched operands (the
// batch axis dropped), its results inserted into empty batched outputs; the
// call records the loop in pallas.batch_loop; the @func index map is kept.

func.func @table_map(%i: i32, %idx: !pallas.ref<16xi32, smem>) -> (i32, i32) {
  %row = pallas.load %idx[%i] : !pallas.ref<16xi32, smem> -> i32
  %c0 = arith.constant 0 : i32
  return %row, %c0 : i32, i32
}

pallas.kernel @gather(%idx: !pallas.ref<16xi32, smem>, %row: !pallas.ref<512xf32>,
                      %o: !pallas.ref<512xf32>) {
  %r = pallas.load %row[] : !pallas.ref<512xf32> -> tensor<512xf32>
  pallas.store %o[], %r : !pallas.ref<512xf32>, tensor<512xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[IDX:.+]]: tensor<4x16xi32>, %[[T:.+]]: tensor<256x512xf32>) -> tensor<4x16x512xf32>
// CHECK-DAG: %[[EMPTY:.+]] = tensor.empty() : tensor<4x16x512xf32>
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C4:.+]] = arith.constant 4 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK: %[[R:.+]] = scf.for %[[B:.+]] = %[[C0]] to %[[C4]] step %[[C1]] iter_args(%[[ACC:.+]] = %[[EMPTY]]) -> (tensor<4x16x512xf32>) {
// CHECK:   %[[S:.+]] = tensor.extract_slice %[[IDX]][%[[B]], 0] [1, 16] [1, 1] : tensor<4x16xi32> to tensor<16xi32>
// CHECK:   %[[O:.+]] = pallas.call @gather(%[[S]], %[[T]])
// CHECK-SAME: grid = array<i64: 16>
// CHECK-SAME: in_specs = [#pallas.block_spec<[squeezed, 512], @table_map>]
// CHECK-SAME: pallas.batch_loop = {axis_size = 4 : i64, grid_bound_axes = array<i64>, in_axes = array<i64: 0, -1>}
// CHECK-SAME: transforms = ["vmap"]
// CHECK-NOT: vmapped_dims
// CHECK-SAME: : (tensor<16xi32>, tensor<256x512xf32>) -> tensor<16x512xf32>
// CHECK:   %[[U:.+]] = tensor.insert_slice %[[O]] into %[[ACC]][%[[B]], 0, 0] [1, 16, 512] [1, 1, 1] : tensor<16x512xf32> into tensor<4x16x512xf32>
// CHECK:   scf.yield %[[U]] : tensor<4x16x512xf32>
// CHECK: return %[[R]] : tensor<4x16x512xf32>
func.func @main(%idx: tensor<16xi32>, %t: tensor<256x512xf32>) -> tensor<16x512xf32> {
  %o = pallas.call @gather(%idx, %t) {
      grid = array<i64: 16>, num_scalar_prefetch = 1,
      in_specs = [#pallas.block_spec<[squeezed, 512], @table_map>],
      out_specs = [#pallas.block_spec<[squeezed, 512], (i) -> (i, 0)>]}
      : (tensor<16xi32>, tensor<256x512xf32>) -> tensor<16x512xf32>
  return %o : tensor<16x512xf32>
}

// -----

// Tests the explicit-loop fallback for a batched dynamic grid bound: with one
// in-axes entry per argument (bounds included), the bound becomes a tensor of
// axis_size bounds, and each iteration launches with its own bound.

pallas.kernel @rows(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[N:.+]]: tensor<4xindex>, %[[X:.+]]: tensor<64xf32>) -> tensor<4x64xf32>
// CHECK: scf.for %[[B:.+]] = {{.+}} iter_args(%[[ACC:.+]] = {{.+}}) -> (tensor<4x64xf32>) {
// CHECK:   %[[NB:.+]] = tensor.extract %[[N]][%[[B]]] : tensor<4xindex>
// CHECK:   %[[O:.+]] = pallas.call @rows[%[[NB]]](%[[X]])
// CHECK-SAME: pallas.batch_loop = {axis_size = 4 : i64, grid_bound_axes = array<i64: 0>, in_axes = array<i64: -1>}
// CHECK:   tensor.insert_slice %[[O]] into %[[ACC]][%[[B]], 0] [1, 64] [1, 1]
func.func @main(%n: index, %x: tensor<64xf32>) -> tensor<64xf32> {
  %o = pallas.call @rows[%n](%x) {
      grid = array<i64: -1>,
      in_specs = [#pallas.block_spec<[8], (i) -> (i)>],
      out_specs = [#pallas.block_spec<[8], (i) -> (i)>]}
      : (tensor<64xf32>) -> tensor<64xf32>
  return %o : tensor<64xf32>
}

// -----

// Tests that a call none of whose operands is batched is left unchanged (the
// JAX's rule returns it with unbatched outputs); the wrapper still returns
// its results batched at 0, broadcasting the unbatched one.

pallas.kernel @copy(%y: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.+]]: tensor<4x8xf32>, %[[Y:.+]]: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK: %[[O:.+]] = pallas.call @copy(%[[Y]])
// CHECK-SAME: grid = array<i64: 1>
// CHECK-SAME: transforms = ["vmap"]
// CHECK-NOT: vmapped_dims
// CHECK-SAME: : (tensor<8xf32>) -> tensor<8xf32>
// CHECK: %[[B:.+]] = pallas.broadcast_in_dim %[[O]] dims [1] : tensor<8xf32> -> tensor<4x8xf32>
// CHECK: return %[[B]], %[[X]]
func.func @main(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %o = pallas.call @copy(%y) {
      grid = array<i64: 1>,
      in_specs = [#pallas.block_spec<[8], (i) -> (0)>],
      out_specs = [#pallas.block_spec<[8], (i) -> (0)>]}
      : (tensor<8xf32>) -> tensor<8xf32>
  return %o, %x : tensor<8xf32>, tensor<8xf32>
}

// -----

// Tests the rules for the ops pallasc puts in wrappers (so that vmap of a
// vmapped or discharged wrapper works): broadcast_in_dim, transpose and
// reshape of a batched value are batched at axis 0.

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.+]]: tensor<4x2x3xf32>, %[[Y:.+]]: tensor<6xf32>)
// CHECK: %[[B:.+]] = pallas.broadcast_in_dim %[[X]] dims [0, 1, 3] : tensor<4x2x3xf32> -> tensor<4x2x5x3xf32>
// CHECK: %[[T:.+]] = pallas.transpose %[[X]] [0, 2, 1] : tensor<4x2x3xf32> -> tensor<4x3x2xf32>
// CHECK: %[[R:.+]] = pallas.reshape %[[X]] : tensor<4x2x3xf32> -> tensor<4x6xf32>
// CHECK: return %[[B]], %[[T]], %[[R]]
func.func @main(%x: tensor<2x3xf32>, %y: tensor<6xf32>)
    -> (tensor<2x5x3xf32>, tensor<3x2xf32>, tensor<6xf32>) {
  %b = pallas.broadcast_in_dim %x dims [0, 2] : tensor<2x3xf32> -> tensor<2x5x3xf32>
  %t = pallas.transpose %x [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %r = pallas.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  pallas.call @k(%y) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<any>],
                           out_specs = []} : (tensor<6xf32>) -> ()
  return %b, %t, %r : tensor<2x5x3xf32>, tensor<3x2xf32>, tensor<6xf32>
}
pallas.kernel @k(%y: !pallas.ref<6xf32, any>) {
}

// -----

// Tests that in-axes must give one axis per input of the wrapper.

pallas.kernel @three(%a: !pallas.ref<8xf32>, %b: !pallas.ref<8xf32>, %c: !pallas.ref<8xf32>,
                     %o: !pallas.ref<8xf32>) {
}
// expected-error @+1 {{pallas-vmap: in-axes has 2 entries but @main takes 3 inputs}}
func.func @main(%a: tensor<8xf32>, %b: tensor<8xf32>, %c: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @three(%a, %b, %c) {grid = array<i64: 1>,
      in_specs = [#pallas.block_spec<[8]>, #pallas.block_spec<[8]>, #pallas.block_spec<[8]>],
      out_specs = [#pallas.block_spec<[8]>]}
      : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests JAX's error for a pallas_call vmapped without arguments.

pallas.kernel @nothing(%o: !pallas.ref<8xf32>) {
}
// expected-error @+1 {{vmapping pallas_call with no arguments}}
func.func @main() -> tensor<8xf32> {
  %o = pallas.call @nothing() {grid = array<i64: 1>, in_specs = [],
      out_specs = [#pallas.block_spec<[8]>]} : () -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that a hi (aggregate) input must be lowered before vmap.

pallas.kernel @hi(%q: !pallas.hi<"qarray", !pallas.ref<8xi8>, !pallas.ref<1xf32>>,
                  %y: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
// expected-error @+1 {{pallas-vmap: input 0 of @main is a !pallas.hi aggregate; run pallas-hi-to-lo first}}
func.func @main(%q: !pallas.hi<"qarray", tensor<8xi8>, tensor<1xf32>>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @hi(%q, %y) {grid = array<i64: 1>,
      in_specs = [#pallas.block_spec<[8]>, #pallas.block_spec<[8]>],
      out_specs = [#pallas.block_spec<[8]>]}
      : (!pallas.hi<"qarray", tensor<8xi8>, tensor<1xf32>>, tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that an op of the wrapper without a batching rule runs once per
// batch element in a loop of its own (jax.vmap of an op without a rule under
// lax.map): the batched operand sliced at the loop index, the result
// inserted into a batch-major tensor, then the call batched as usual.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.+]]: tensor<4x8xf32>, %[[Y:.+]]: tensor<8xf32>) -> tensor<4x8xf32>
// CHECK: %[[E:.+]] = tensor.empty() : tensor<4x8xf32>
// CHECK: %[[N:.+]] = scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[A:.+]] = %[[E]]) -> (tensor<4x8xf32>)
// CHECK:   %[[S:.+]] = tensor.extract_slice %[[X]][%[[I]], 0] [1, 8] [1, 1] : tensor<4x8xf32> to tensor<8xf32>
// CHECK:   %[[NF:.+]] = arith.negf %[[S]] : tensor<8xf32>
// CHECK:   %[[U:.+]] = tensor.insert_slice %[[NF]] into %[[A]][%[[I]], 0] [1, 8] [1, 1] : tensor<8xf32> into tensor<4x8xf32>
// CHECK:   scf.yield %[[U]]
// CHECK: pallas.call @neg(%[[N]]) {{.+}}grid = array<i64: 4, 1>

pallas.kernel @neg(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @main(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %n = arith.negf %x : tensor<8xf32>
  %o = pallas.call @neg(%n) {grid = array<i64: 1>,
      in_specs = [#pallas.block_spec<[8]>], out_specs = [#pallas.block_spec<[8]>]}
      : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that an op without a rule whose result cannot hold a batch (not a
// tensor or scalar) is an error.

pallas.kernel @cast(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @main(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{pallas-vmap cannot batch 'builtin.unrealized_conversion_cast': its result of type 'memref<8xf32>' cannot hold a batch}}
  %m = builtin.unrealized_conversion_cast %x : tensor<8xf32> to memref<8xf32>
  %o = pallas.call @cast(%y) {grid = array<i64: 1>,
      in_specs = [#pallas.block_spec<[8]>], out_specs = [#pallas.block_spec<[8]>]}
      : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}
