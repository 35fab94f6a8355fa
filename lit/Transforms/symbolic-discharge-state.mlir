// RUN: pallasc-opt %s -pallas-discharge-state | FileCheck %s --check-prefix=DISCHARGE

// The call-level transforms on calls with symbolic shapes (the `symbolic`
// attribute, docs/transforms.md#symbolic-calls): dce, discharge-state,
// hi-to-lo, jvp and vmap keep the symbols, their constraints and the grid
// expressions, give each operand they keep or add its shape expression and
// each output its dynamic sizes; the wrapper keeps its symbol arguments
// last.

// Tests that discharge-state puts the closed-over ref first among the
// inputs and outputs with its static shape as its entry, keeps the others'
// expressions and the output's dynamic size, and takes the ref's value as
// the wrapper's first argument (the symbol stays last).

// DISCHARGE-LABEL: func.func @main(
// DISCHARGE-SAME: %[[C:[^:]+]]: tensor<16xi32>, %[[X:[^:]+]]: tensor<?x128xf32>, %[[N:[^:]+]]: index {pallas.symbol = "n"}) -> (tensor<16xi32>, tensor<?x128xf32>)
// DISCHARGE: %[[O:.+]]:2 = pallas.call @count[%{{.+}}](%[[C]], %[[X]]) sizes(%[[N]])
// DISCHARGE-SAME: input_output_aliases = array<i64: 0, 0>
// DISCHARGE-SAME: symbolic = {grid = ["cdiv(n, 8)"], inputs = {{\[\["16"\], \["n", "128"\]\]}}, outputs = {{\[\["16"\], \["n", "128"\]\]}}, symbols = {n = {min = 8 : i64, multiple_of = 8 : i64}}}
// DISCHARGE-SAME: transforms = ["discharge_state"]
// DISCHARGE-SAME: : (tensor<16xi32>, tensor<?x128xf32>) -> (tensor<16xi32>, tensor<?x128xf32>)
// DISCHARGE-NEXT: return %[[O]]#0, %[[O]]#1
pallas.ref_global @counts : !pallas.ref<16xi32>
pallas.kernel @count(%x: !pallas.ref<8x128xf32>, %o: !pallas.ref<8x128xf32>) {
  %c = pallas.get_global @counts : !pallas.ref<16xi32>
  %one = arith.constant 1 : i32
  %old = pallas.atomic_rmw add %c[0], %one : !pallas.ref<16xi32>, i32
  %a = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  pallas.store %o[], %a : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @main(%x: tensor<?x128xf32>, %n: index {pallas.symbol = "n"}) -> tensor<?x128xf32> {
  %c8 = arith.constant 8 : index
  %g = arith.ceildivsi %n, %c8 : index
  %o = pallas.call @count[%g](%x) sizes(%n) {
      grid = array<i64: -1>,
      in_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      out_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      symbolic = {symbols = {n = {min = 8, multiple_of = 8}},
                  grid = ["cdiv(n, 8)"],
                  inputs = [["n", "128"]], outputs = [["n", "128"]]}}
      : (tensor<?x128xf32>) -> tensor<?x128xf32>
  return %o : tensor<?x128xf32>
}

