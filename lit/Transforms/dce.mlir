// RUN: pallasc-opt %s -split-input-file -verify-diagnostics -pallas-dce="used-outputs=1,0" | FileCheck %s
// RUN: not pallasc-opt %s -split-input-file -pallas-dce="used-outputs=1,2" 2>&1 | FileCheck %s --check-prefix=BAD

// pallas-dce with the second result of each wrapper unused. JAX's
// _pallas_call_dce_rule keeps every output of a call with a used output;
// pallasc drops the unused ones it can (beyond JAX). See
// dce-eliminate.mlir for calls with no used output, dce-kernel.mlir for
// kernel-body DCE alone.

// BAD: error: pallas-dce: used-outputs[1] = 2: expected 0 (unused) or 1 (used)

// Tests that an unused output is dropped from the wrapper, the call and the
// kernel, with the store into it, the work that only fed that store (dead
// pure ops and loads), and the input only that work read; the used output
// and its work stay.

// CHECK-LABEL: pallas.kernel @two(
// CHECK-SAME: %[[X:[^:]+]]: !pallas.ref<8xf32>, %[[S:[^:]+]]: !pallas.ref<8xf32>)
// CHECK-NEXT: %[[V:.+]] = pallas.load %[[X]][]
// CHECK-NEXT: %[[N:.+]] = arith.negf %[[V]]
// CHECK-NEXT: pallas.store %[[S]][], %[[N]]
// CHECK-NEXT: }
pallas.kernel @two(%x: !pallas.ref<8xf32>, %y: !pallas.ref<8xf32>,
                   %neg: !pallas.ref<8xf32>, %sum: !pallas.ref<8xf32>) {
  %a = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %b = pallas.load %y[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %n = arith.negf %a : tensor<8xf32>
  %s = arith.addf %b, %b : tensor<8xf32>
  %e = math.exp %s : tensor<8xf32>
  pallas.store %neg[], %n : !pallas.ref<8xf32>, tensor<8xf32>
  pallas.store %sum[], %e : !pallas.ref<8xf32>, tensor<8xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.+]]: tensor<16xf32>, %{{.+}}: tensor<16xf32>) -> tensor<16xf32>
// CHECK: %[[O:.+]] = pallas.call @two(%[[X]])
// CHECK-SAME: in_specs = [#pallas.block_spec<[8], (d0) -> (d0)>]
// CHECK-SAME: out_specs = [#pallas.block_spec<[8], (d0) -> (d0)>]
// CHECK-SAME: transforms = ["dce"]
// CHECK-SAME: : (tensor<16xf32>) -> tensor<16xf32>
// CHECK: return %[[O]] : tensor<16xf32>
func.func @main(%x: tensor<16xf32>, %y: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %o:2 = pallas.call @two(%x, %y) {
      grid = array<i64: 2>,
      in_specs = [#pallas.block_spec<[8], (i) -> (i)>, #pallas.block_spec<[8], (i) -> (i)>],
      out_specs = [#pallas.block_spec<[8], (i) -> (i)>, #pallas.block_spec<[8], (i) -> (i)>]}
      : (tensor<16xf32>, tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>)
  return %o#0, %o#1 : tensor<16xf32>, tensor<16xf32>
}

// -----

// Tests that an unused output aliased to an input is kept, as JAX keeps
// every output of a live call (its buffer is the input's, updated in place).

pallas.kernel @inplace(%x: !pallas.ref<8xf32>, %acc_in: !pallas.ref<8xf32>,
                       %o: !pallas.ref<8xf32>, %acc_out: !pallas.ref<8xf32>) {
  %a = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  pallas.store %o[], %a : !pallas.ref<8xf32>, tensor<8xf32>
  pallas.store %acc_out[], %a : !pallas.ref<8xf32>, tensor<8xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME: -> tensor<8xf32>
// CHECK: %[[O:.+]]:2 = pallas.call @inplace(
// CHECK-SAME: input_output_aliases = array<i64: 1, 1>
// CHECK-SAME: -> (tensor<8xf32>, tensor<8xf32>)
// CHECK: return %[[O]]#0 : tensor<8xf32>
func.func @main(%x: tensor<8xf32>, %acc: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %o:2 = pallas.call @inplace(%x, %acc) {
      grid = array<i64: 1>,
      in_specs = [#pallas.block_spec<[8]>, #pallas.block_spec<[8]>],
      out_specs = [#pallas.block_spec<[8]>, #pallas.block_spec<[8]>],
      input_output_aliases = array<i64: 1, 1>}
      : (tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
  return %o#0, %o#1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Tests that an unused output the kernel also reads (an accumulator kept in
// the output ref) is kept: only outputs that are just stored to are dropped.

pallas.kernel @reads(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>, %acc: !pallas.ref<8xf32>) {
  %a = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %old = pallas.load %acc[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %s = arith.addf %old, %a : tensor<8xf32>
  pallas.store %acc[], %s : !pallas.ref<8xf32>, tensor<8xf32>
  pallas.store %o[], %s : !pallas.ref<8xf32>, tensor<8xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK: %[[O:.+]]:2 = pallas.call @reads(
// CHECK: return %[[O]]#0 : tensor<8xf32>
func.func @main(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %o:2 = pallas.call @reads(%x) {
      grid = array<i64: 1>,
      in_specs = [#pallas.block_spec<[8]>],
      out_specs = [#pallas.block_spec<[8]>, #pallas.block_spec<[8]>]}
      : (tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
  return %o#0, %o#1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Tests that a side-effecting call (compiler_params.tpu.has_side_effects) keeps
// its outputs, as JAX keeps the whole equation.

pallas.kernel @effects(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>, %p: !pallas.ref<8xf32>) {
  %a = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  pallas.store %o[], %a : !pallas.ref<8xf32>, tensor<8xf32>
  pallas.store %p[], %a : !pallas.ref<8xf32>, tensor<8xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK: %[[O:.+]]:2 = pallas.call @effects(
// CHECK-SAME: transforms = ["dce"]
// CHECK-SAME: -> (tensor<8xf32>, tensor<8xf32>)
// CHECK: return %[[O]]#0 : tensor<8xf32>
func.func @main(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %o:2 = pallas.call @effects(%x) {
      grid = array<i64: 1>,
      in_specs = [#pallas.block_spec<[8]>],
      out_specs = [#pallas.block_spec<[8]>, #pallas.block_spec<[8]>],
      compiler_params = #pallas.compiler_params<tpu = <has_side_effects = true>>}
      : (tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
  return %o#0, %o#1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Tests that a kernel shared with another call is copied before it is pruned,
// so the other call keeps its kernel; each wrapper is pruned on its own.

// CHECK-LABEL: pallas.kernel @shared(
// CHECK-SAME: %{{[^:]+}}: !pallas.ref<8xf32>, %{{[^:]+}}: !pallas.ref<8xf32>, %{{[^:]+}}: !pallas.ref<8xf32>)
// CHECK-LABEL: pallas.kernel @shared_dce(
// CHECK-SAME: %{{[^:]+}}: !pallas.ref<8xf32>, %{{[^:]+}}: !pallas.ref<8xf32>)
pallas.kernel @shared(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>, %p: !pallas.ref<8xf32>) {
  %a = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  pallas.store %o[], %a : !pallas.ref<8xf32>, tensor<8xf32>
  pallas.store %p[], %a : !pallas.ref<8xf32>, tensor<8xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK: pallas.call @shared_dce(
// CHECK-SAME: -> tensor<8xf32>
func.func @main(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %o:2 = pallas.call @shared(%x) {
      grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
      out_specs = [#pallas.block_spec<[8]>, #pallas.block_spec<[8]>]}
      : (tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
  return %o#0, %o#1 : tensor<8xf32>, tensor<8xf32>
}

// CHECK-LABEL: func.func @other(
// CHECK: %[[O:.+]]:2 = pallas.call @shared(
// CHECK-SAME: -> (tensor<8xf32>, tensor<8xf32>)
// CHECK: arith.addf %[[O]]#0, %[[O]]#1
func.func @other(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %o:2 = pallas.call @shared(%x) {
      grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
      out_specs = [#pallas.block_spec<[8]>, #pallas.block_spec<[8]>]}
      : (tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
  %s = arith.addf %o#0, %o#1 : tensor<8xf32>
  return %s, %x : tensor<8xf32>, tensor<8xf32>
}

// -----

// Tests that scratch the kernel only writes is dropped with its stores, and
// that dropping an input renumbers the aliases and pinned inputs after it.

// CHECK-LABEL: pallas.kernel @scratchy(
// CHECK-SAME: %[[ACC_IN:[^:]+]]: !pallas.ref<8xf32>, %[[ACC_OUT:[^:]+]]: !pallas.ref<8xf32>, %[[T:[^:]+]]: !pallas.ref<8xf32, vmem>)
// CHECK-NOT: !pallas.ref<4xf32, vmem>
pallas.kernel @scratchy(%unused: !pallas.ref<8xf32>, %acc_in: !pallas.ref<8xf32>,
                        %acc_out: !pallas.ref<8xf32>, %dead: !pallas.ref<4xf32, vmem>,
                        %tmp: !pallas.ref<8xf32, vmem>) {
  %a = pallas.load %acc_in[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %z = arith.constant dense<0.0> : tensor<4xf32>
  pallas.store %dead[], %z : !pallas.ref<4xf32, vmem>, tensor<4xf32>
  pallas.store %tmp[], %a : !pallas.ref<8xf32, vmem>, tensor<8xf32>
  %t = pallas.load %tmp[] : !pallas.ref<8xf32, vmem> -> tensor<8xf32>
  pallas.store %acc_out[], %t : !pallas.ref<8xf32>, tensor<8xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %{{.+}}: tensor<8xf32>, %[[ACC:.+]]: tensor<8xf32>) -> tensor<8xf32>
// CHECK: pallas.call @scratchy(%[[ACC]])
// CHECK-SAME: input_output_aliases = array<i64: 0, 0>
// CHECK-SAME: pinned_inputs = array<i64: 0>
// CHECK-SAME: scratch = [!pallas.ref<8xf32, vmem>]
func.func @main(%x: tensor<8xf32>, %acc: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %o = pallas.call @scratchy(%x, %acc) {
      grid = array<i64: 1>,
      in_specs = [#pallas.block_spec<[8]>, #pallas.block_spec<[8]>],
      out_specs = [#pallas.block_spec<[8]>],
      scratch = [!pallas.ref<4xf32, vmem>, !pallas.ref<8xf32, vmem>],
      input_output_aliases = array<i64: 1, 0>, pinned_inputs = array<i64: 1>}
      : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %o, %x : tensor<8xf32>, tensor<8xf32>
}

// -----

// Tests that used-outputs needs one entry per result of the wrapper.

pallas.kernel @one(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
// expected-error @+1 {{pallas-dce: used-outputs has 2 entries but @main returns 1 results}}
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @one(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
      out_specs = [#pallas.block_spec<[8]>]} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}
