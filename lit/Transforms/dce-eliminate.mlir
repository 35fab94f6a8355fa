// RUN: pallasc-opt %s -split-input-file -pallas-dce="used-outputs=0" | FileCheck %s

// pallas-dce with the only result of each wrapper unused: JAX's
// _pallas_call_dce_rule eliminates a call when no output is used, no ref
// operand is live and it has no side effects.

// Tests that the call is eliminated: the wrapper returns nothing, carries
// pallas.eliminated and the transforms applied (for the manifest); its
// arguments stay; the ops that only fed the call go too.

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %{{.+}}: tensor<8xf32>)
// CHECK-SAME: attributes {pallas.eliminated, pallas.transforms = ["vmap", "dce"]}
// CHECK-NEXT: return
// CHECK-NEXT: }
pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  %a = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  pallas.store %o[], %a : !pallas.ref<8xf32>, tensor<8xf32>
}
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %t = pallas.transpose %x [0] : tensor<8xf32> -> tensor<8xf32>
  %o = pallas.call @k(%t) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
      out_specs = [#pallas.block_spec<[8]>], transforms = ["vmap"]} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that a chain of calls goes: once the second call is eliminated the
// first one's output is unused too.

// CHECK-LABEL: func.func @main(
// CHECK-SAME: attributes {pallas.eliminated, pallas.transforms = ["dce"]}
// CHECK-NOT: pallas.call
pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %a = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
      out_specs = [#pallas.block_spec<[8]>]} : (tensor<8xf32>) -> tensor<8xf32>
  %b = pallas.call @k(%a) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
      out_specs = [#pallas.block_spec<[8]>]} : (tensor<8xf32>) -> tensor<8xf32>
  return %b : tensor<8xf32>
}

// -----

// Tests that an aliased (in-place) output that is unused goes with the call,
// as in JAX: nothing is left to update.

// CHECK-LABEL: func.func @main(
// CHECK-SAME: attributes {pallas.eliminated
// CHECK-NOT: pallas.call
pallas.kernel @inplace(%acc_in: !pallas.ref<8xf32>, %acc_out: !pallas.ref<8xf32>) {
}
func.func @main(%acc: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @inplace(%acc) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
      out_specs = [#pallas.block_spec<[8]>], input_output_aliases = array<i64: 0, 0>,
      pinned_inputs = array<i64: 0>} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that a side-effecting call (compiler_params.tpu.has_side_effects) is
// kept whole, outputs included, though nothing uses them.

// CHECK-LABEL: func.func @main(
// CHECK-NOT: pallas.eliminated
// CHECK: pallas.call @effects(%{{[a-z0-9]+}})
// CHECK-SAME: transforms = ["dce"]
// CHECK-SAME: -> tensor<8xf32>
// CHECK-NEXT: return
// CHECK-NEXT: }
pallas.kernel @effects(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  pallas.debug_print "hello"
}
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @effects(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
      out_specs = [#pallas.block_spec<[8]>],
      compiler_params = #pallas.compiler_params<tpu = <has_side_effects = true>>} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests JAX's SideEffectType: side_effecting (the keyword spelling of
// `true`) keeps the call, dataflow_side_effecting does not.

// CHECK-LABEL: func.func @main(
// CHECK-NOT: pallas.eliminated
// CHECK: pallas.call @k(%{{[a-z0-9]+}})
// CHECK-LABEL: func.func @dataflow(
// CHECK-SAME: pallas.eliminated
pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
      out_specs = [#pallas.block_spec<[8]>],
      compiler_params = #pallas.compiler_params<tpu = <has_side_effects = side_effecting>>} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}
func.func @dataflow(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
      out_specs = [#pallas.block_spec<[8]>],
      compiler_params = #pallas.compiler_params<tpu = <has_side_effects = dataflow_side_effecting>>} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that a call whose kernel closes over a ref (a live ref operand of
// JAX's pallas_call, jax/_src/pallas/pallas_call.py: its writes outlive the
// call) is kept.

// CHECK-LABEL: func.func @main(
// CHECK-NOT: pallas.eliminated
// CHECK: pallas.call @counts_kernel(%{{[a-z0-9]+}})
pallas.ref_global @counts : !pallas.ref<16xi32>
pallas.kernel @counts_kernel(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  %c = pallas.get_global @counts : !pallas.ref<16xi32>
  %one = arith.constant 1 : i32
  %old = pallas.atomic_rmw add %c[0], %one : !pallas.ref<16xi32>, i32
}
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @counts_kernel(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
      out_specs = [#pallas.block_spec<[8]>]} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}
