// RUN: pallasc-opt %s -pallas-jvp | FileCheck %s --check-prefix=JVP

// The call-level transforms on calls with symbolic shapes (the `symbolic`
// attribute, docs/transforms.md#symbolic-calls): dce, discharge-state,
// hi-to-lo, jvp and vmap keep the symbols, their constraints and the grid
// expressions, give each operand they keep or add its shape expression and
// each output its dynamic sizes; the wrapper keeps its symbol arguments
// last.

// Tests that jvp gives each tangent input its primal's expression (a tangent
// of the integer input has none) and each tangent output its primal's
// expression and dynamic size, keeps the grid expression's bound, and puts
// the wrapper's tangent arguments before its symbol argument.

// JVP-LABEL: pallas.kernel @scale_jvp(
// JVP-LABEL: func.func @main(
// JVP-SAME: %[[X:[^:]+]]: tensor<?x128xf32>, %[[I:[^:]+]]: tensor<128xi32>, %[[DX:[^:]+]]: tensor<?x128xf32>, %[[N:[^:]+]]: index {pallas.symbol = "n"}) -> (tensor<?x128xf32>, tensor<?x128xf32>)
// JVP: %[[G:.+]] = arith.ceildivsi %[[N]]
// JVP: %[[O:.+]]:2 = pallas.call @scale_jvp[%[[G]]](%[[X]], %[[I]], %[[DX]]) sizes(%[[N]], %[[N]])
// JVP-SAME: symbolic = {grid = ["cdiv(n, 8)"], inputs = {{\[\["n", "128"\], \["128"\], \["n", "128"\]\]}}, outputs = {{\[\["n", "128"\], \["n", "128"\]\]}}, symbols = {n = {min = 1 : i64, multiple_of = 1 : i64}}}
// JVP-SAME: transforms = ["jvp"]
// JVP-NEXT: return %[[O]]#0, %[[O]]#1
pallas.kernel @scale(%x: !pallas.ref<8x128xf32>, %i: !pallas.ref<128xi32>,
                     %o: !pallas.ref<8x128xf32>) {
  %a = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %k = pallas.load %i[] : !pallas.ref<128xi32> -> tensor<128xi32>
  %kf = arith.sitofp %k : tensor<128xi32> to tensor<128xf32>
  %kb = pallas.broadcast_in_dim %kf dims [1] : tensor<128xf32> -> tensor<8x128xf32>
  %e = math.exp %a : tensor<8x128xf32>
  %p = arith.mulf %e, %kb : tensor<8x128xf32>
  pallas.store %o[], %p : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @main(%x: tensor<?x128xf32>, %i: tensor<128xi32>,
                %n: index {pallas.symbol = "n"}) -> tensor<?x128xf32> {
  %c8 = arith.constant 8 : index
  %g = arith.ceildivsi %n, %c8 : index
  %o = pallas.call @scale[%g](%x, %i) sizes(%n) {
      grid = array<i64: -1>,
      in_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>,
                  #pallas.block_spec<[128], (i) -> (0)>],
      out_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      symbolic = {symbols = {n = {min = 1, multiple_of = 1}},
                  grid = ["cdiv(n, 8)"],
                  inputs = [["n", "128"], ["128"]], outputs = [["n", "128"]]}}
      : (tensor<?x128xf32>, tensor<128xi32>) -> tensor<?x128xf32>
  return %o : tensor<?x128xf32>
}
