// RUN: pallasc-opt %s -split-input-file -verify-diagnostics -pallas-discharge-state | FileCheck %s

// JAX's _pallas_call_state_discharge_rule: refs the kernel closes over
// become leading inputs and outputs of the call, aliased, in memory space
// 'any'.

// Tests that a closed-over ref becomes input 0 and output 0 of the call,
// aliased to each other with block spec 'any'; that the kernel takes it as
// an input ref (get_global replaced) and an ignored output ref, both in
// memory space 'any'; that the wrapper takes the ref's value first and
// returns its updated value first; and that the discharged ref_global goes.

// CHECK-NOT: pallas.ref_global @counts
// CHECK-LABEL: pallas.kernel @hist(
// CHECK-SAME: %[[C:[^:]+]]: !pallas.ref<16xi32, any>, %[[X:[^:]+]]: !pallas.ref<8xi32>, %{{[^:]+}}: !pallas.ref<16xi32, any>, %{{[^:]+}}: !pallas.ref<8xi32>)
// CHECK-NOT: pallas.get_global
// CHECK: pallas.atomic_rmw add %[[C]][0], %{{.+}} : !pallas.ref<16xi32, any>, i32
pallas.ref_global @counts : !pallas.ref<16xi32>
pallas.kernel @hist(%x: !pallas.ref<8xi32>, %o: !pallas.ref<8xi32>) {
  %c = pallas.get_global @counts : !pallas.ref<16xi32>
  %one = arith.constant 1 : i32
  %old = pallas.atomic_rmw add %c[0], %one : !pallas.ref<16xi32>, i32
  %v = pallas.load %x[] : !pallas.ref<8xi32> -> tensor<8xi32>
  pallas.store %o[], %v : !pallas.ref<8xi32>, tensor<8xi32>
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[COUNTS:.+]]: tensor<16xi32>, %[[XV:.+]]: tensor<16xi32>) -> (tensor<16xi32>, tensor<16xi32>)
// CHECK: %[[O:.+]]:2 = pallas.call @hist(%[[COUNTS]], %[[XV]])
// CHECK-SAME: in_specs = [#pallas.block_spec<any>, #pallas.block_spec<[8], (d0) -> (d0)>]
// CHECK-SAME: input_output_aliases = array<i64: 0, 0>
// CHECK-SAME: out_specs = [#pallas.block_spec<any>, #pallas.block_spec<[8], (d0) -> (d0)>]
// CHECK-SAME: transforms = ["discharge_state"]
// CHECK-SAME: : (tensor<16xi32>, tensor<16xi32>) -> (tensor<16xi32>, tensor<16xi32>)
// CHECK: return %[[O]]#0, %[[O]]#1 : tensor<16xi32>, tensor<16xi32>
func.func @main(%x: tensor<16xi32>) -> tensor<16xi32> {
  %o = pallas.call @hist(%x) {grid = array<i64: 2>,
      in_specs = [#pallas.block_spec<[8], (i) -> (i)>],
      out_specs = [#pallas.block_spec<[8], (i) -> (i)>]} : (tensor<16xi32>) -> tensor<16xi32>
  return %o : tensor<16xi32>
}

// -----

// Tests that refs come right after the scalar-prefetch operands (input
// i + num_scalar_prefetch is aliased to output i), in the order they are
// declared, and that the call's own aliases and pinned inputs shift by the
// number of refs (those on scalar-prefetch operands do not move); a ref
// already in memory space 'any' is discharged too.

// CHECK-LABEL: pallas.kernel @k(
// CHECK-SAME: %[[IDX:[^:]+]]: !pallas.ref<4xi32, smem>, %[[A:[^:]+]]: !pallas.ref<2xf32, any>, %[[B:[^:]+]]: !pallas.ref<3xf32, any>, %[[X:[^:]+]]: !pallas.ref<8xf32>, %{{[^:]+}}: !pallas.ref<2xf32, any>, %{{[^:]+}}: !pallas.ref<3xf32, any>, %[[O:[^:]+]]: !pallas.ref<8xf32>)
// CHECK: pallas.load %[[B]][0]
// CHECK: pallas.load %[[A]][0]
pallas.ref_global @a : !pallas.ref<2xf32, any>
pallas.ref_global @b : !pallas.ref<3xf32>
pallas.kernel @k(%idx: !pallas.ref<4xi32, smem>, %x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  %rb = pallas.get_global @b : !pallas.ref<3xf32>
  %vb = pallas.load %rb[0] : !pallas.ref<3xf32> -> f32
  %ra = pallas.get_global @a : !pallas.ref<2xf32, any>
  %va = pallas.load %ra[0] : !pallas.ref<2xf32, any> -> f32
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[IDXV:.+]]: tensor<4xi32>, %[[AV:.+]]: tensor<2xf32>, %[[BV:.+]]: tensor<3xf32>, %[[XV:.+]]: tensor<8xf32>) -> (tensor<2xf32>, tensor<3xf32>, tensor<8xf32>)
// CHECK: %[[R:.+]]:3 = pallas.call @k(%[[IDXV]], %[[AV]], %[[BV]], %[[XV]])
// CHECK-SAME: in_specs = [#pallas.block_spec<any>, #pallas.block_spec<any>, #pallas.block_spec<[8]>]
// CHECK-SAME: input_output_aliases = array<i64: 1, 0, 2, 1, 3, 2>
// CHECK-SAME: num_scalar_prefetch = 1
// CHECK-SAME: out_specs = [#pallas.block_spec<any>, #pallas.block_spec<any>, #pallas.block_spec<[8]>]
// CHECK-SAME: pinned_inputs = array<i64: 3>
// CHECK: return %[[R]]#0, %[[R]]#1, %[[R]]#2
func.func @main(%idx: tensor<4xi32>, %x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @k(%idx, %x) {grid = array<i64: 1>, num_scalar_prefetch = 1,
      in_specs = [#pallas.block_spec<[8]>], out_specs = [#pallas.block_spec<[8]>],
      input_output_aliases = array<i64: 1, 0>, pinned_inputs = array<i64: 1>}
      : (tensor<4xi32>, tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that two calls closing over one ref thread its value: the second call
// takes the first one's updated value, and the wrapper returns the last.

pallas.ref_global @state : !pallas.ref<4xf32>
pallas.kernel @bump(%o: !pallas.ref<4xf32>) {
  %s = pallas.get_global @state : !pallas.ref<4xf32>
  %v = pallas.load %s[] : !pallas.ref<4xf32> -> tensor<4xf32>
  %w = arith.addf %v, %v : tensor<4xf32>
  pallas.store %s[], %w : !pallas.ref<4xf32>, tensor<4xf32>
  pallas.store %o[], %v : !pallas.ref<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[S0:.+]]: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK: %[[A:.+]]:2 = pallas.call @bump(%[[S0]])
// CHECK: %[[B:.+]]:2 = pallas.call @bump(%[[A]]#0)
// CHECK: return %[[B]]#0, %[[A]]#1, %[[B]]#1
func.func @main() -> (tensor<4xf32>, tensor<4xf32>) {
  %a = pallas.call @bump() {grid = array<i64: 1>, in_specs = [],
      out_specs = [#pallas.block_spec<[4]>]} : () -> tensor<4xf32>
  %b = pallas.call @bump() {grid = array<i64: 1>, in_specs = [],
      out_specs = [#pallas.block_spec<[4]>]} : () -> tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests that a call whose kernel closes over no ref is unchanged (the
// transform is recorded), and that a ref_global nobody uses stays.

// CHECK: pallas.ref_global @unused
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.+]]: tensor<8xf32>) -> tensor<8xf32>
// CHECK: pallas.call @plain(%[[X]])
// CHECK-SAME: transforms = ["discharge_state"]
// CHECK-SAME: : (tensor<8xf32>) -> tensor<8xf32>
pallas.ref_global @unused : !pallas.ref<8xf32>
pallas.kernel @plain(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @plain(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
      out_specs = [#pallas.block_spec<[8]>]} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests JAX's error for a closed-over ref in a memory space that is not
// neutral (only default and any are).

// expected-note @+1 {{ref @sems declared here}}
pallas.ref_global @sems : !pallas.ref<2xi32, smem>
pallas.kernel @k(%o: !pallas.ref<8xf32>) {
  // expected-error @+1 {{'pallas.get_global' op pallas_call does not support closing over Refs in memory space smem; use pl.kernel instead}}
  %s = pallas.get_global @sems : !pallas.ref<2xi32, smem>
}
func.func @main() -> tensor<8xf32> {
  %o = pallas.call @k() {grid = array<i64: 1>, in_specs = [],
      out_specs = [#pallas.block_spec<[8]>]} : () -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests the same error for a ref in vmem.

// expected-note @+1 {{ref @buf declared here}}
pallas.ref_global @buf : !pallas.ref<8xf32, vmem>
pallas.kernel @k(%o: !pallas.ref<8xf32>) {
  // expected-error @+1 {{closing over Refs in memory space vmem}}
  %s = pallas.get_global @buf : !pallas.ref<8xf32, vmem>
}
func.func @main() -> tensor<8xf32> {
  %o = pallas.call @k() {grid = array<i64: 1>, in_specs = [],
      out_specs = [#pallas.block_spec<[8]>]} : () -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that a call closing over refs must sit directly in its wrapper (the
// ref's value is threaded through the wrapper's body).

pallas.ref_global @state : !pallas.ref<4xf32>
pallas.kernel @bump(%o: !pallas.ref<4xf32>) {
  %s = pallas.get_global @state : !pallas.ref<4xf32>
}
func.func @main(%c: i1, %d: tensor<4xf32>) -> tensor<4xf32> {
  %r = scf.if %c -> tensor<4xf32> {
    // expected-error @+1 {{pallas-discharge-state: a call whose kernel closes over refs must be directly in a func.func (it is in 'scf.if')}}
    %a = pallas.call @bump() {grid = array<i64: 1>, in_specs = [],
        out_specs = [#pallas.block_spec<[4]>]} : () -> tensor<4xf32>
    scf.yield %a : tensor<4xf32>
  } else {
    scf.yield %d : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
