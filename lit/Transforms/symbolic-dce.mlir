// RUN: pallasc-opt %s -pallas-dce="used-outputs=1,0" | FileCheck %s --check-prefix=DCE
// RUN: pallasc-opt %s -pallas-dce="used-outputs=0,1" | FileCheck %s --check-prefix=DCE2

// The call-level transforms on calls with symbolic shapes (the `symbolic`
// attribute, docs/transforms.md#symbolic-calls): dce, discharge-state,
// hi-to-lo, jvp and vmap keep the symbols, their constraints and the grid
// expressions, give each operand they keep or add its shape expression and
// each output its dynamic sizes; the wrapper keeps its symbol arguments
// last.

// Tests that dce drops an unused output with its expression ('n + 8') and
// dynamic size, and the input only it read; the other way round, the first
// output and input go.

// DCE-LABEL: func.func @main(
// DCE-SAME: %[[X:[^:]+]]: tensor<?x128xf32>, %{{[^:]+}}: tensor<?x128xf32>, %[[N:[^:]+]]: index {pallas.symbol = "n"}) -> tensor<?x128xf32>
// DCE: %[[G:.+]] = arith.ceildivsi %[[N]]
// DCE: %[[O:.+]] = pallas.call @two[%[[G]]](%[[X]]) sizes(%[[N]])
// DCE-SAME: symbolic = {grid = ["cdiv(n, 8)"], inputs = {{\[\["n", "128"\]\]}}, outputs = {{\[\["n", "128"\]\]}}, symbols = {n = {max = 4096 : i64, min = 1 : i64, multiple_of = 1 : i64}}}
// DCE-SAME: transforms = ["dce"]
// DCE-SAME: : (tensor<?x128xf32>) -> tensor<?x128xf32>
// DCE-NEXT: return %[[O]] : tensor<?x128xf32>
// DCE2-LABEL: func.func @main(
// DCE2-SAME: %{{[^:]+}}: tensor<?x128xf32>, %[[Y:[^:]+]]: tensor<?x128xf32>, %[[N:[^:]+]]: index {pallas.symbol = "n"}) -> tensor<?x128xf32>
// DCE2: %[[N8:.+]] = arith.addi %[[N]]
// DCE2: pallas.call @two[%{{.+}}](%[[Y]]) sizes(%[[N8]])
// DCE2-SAME: inputs = {{\[\["n \+ 8", "128"\]\]}}, outputs = {{\[\["n \+ 8", "128"\]\]}}
pallas.kernel @two(%x: !pallas.ref<8x128xf32>, %y: !pallas.ref<8x128xf32>,
                   %o1: !pallas.ref<8x128xf32>, %o2: !pallas.ref<8x128xf32>) {
  %a = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %d = arith.addf %a, %a : tensor<8x128xf32>
  pallas.store %o1[], %d : !pallas.ref<8x128xf32>, tensor<8x128xf32>
  %b = pallas.load %y[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %e = arith.mulf %b, %b : tensor<8x128xf32>
  pallas.store %o2[], %e : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @main(%x: tensor<?x128xf32>, %y: tensor<?x128xf32>,
                %n: index {pallas.symbol = "n"})
    -> (tensor<?x128xf32>, tensor<?x128xf32>) {
  %c8 = arith.constant 8 : index
  %g = arith.ceildivsi %n, %c8 : index
  %n8 = arith.addi %n, %c8 : index
  %o:2 = pallas.call @two[%g](%x, %y) sizes(%n, %n8) {
      grid = array<i64: -1>,
      in_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>,
                  #pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      out_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>,
                   #pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      symbolic = {symbols = {n = {min = 1, max = 4096, multiple_of = 1}},
                  grid = ["cdiv(n, 8)"],
                  inputs = [["n", "128"], ["n + 8", "128"]],
                  outputs = [["n", "128"], ["n + 8", "128"]]}}
      : (tensor<?x128xf32>, tensor<?x128xf32>) -> (tensor<?x128xf32>, tensor<?x128xf32>)
  return %o#0, %o#1 : tensor<?x128xf32>, tensor<?x128xf32>
}

