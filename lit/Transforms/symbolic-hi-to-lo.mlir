// RUN: pallasc-opt %s -pallas-hi-to-lo | FileCheck %s --check-prefix=HI

// The call-level transforms on calls with symbolic shapes (the `symbolic`
// attribute, docs/transforms.md#symbolic-calls): dce, discharge-state,
// hi-to-lo, jvp and vmap keep the symbols, their constraints and the grid
// expressions, give each operand they keep or add its shape expression and
// each output its dynamic sizes; the wrapper keeps its symbol arguments
// last.

// Tests that hi-to-lo gives each part of a hi input its static shape as its
// entry and keeps the symbolic operands' expressions and sizes.

// HI-LABEL: func.func @main(
// HI-SAME: %[[QV:[^:]+]]: tensor<64x128xi8>, %[[QS:[^:]+]]: tensor<64xf32>, %[[X:[^:]+]]: tensor<?x128xf32>, %[[N:[^:]+]]: index {pallas.symbol = "n"}) -> tensor<?x128xf32>
// HI: pallas.call @dequant_add[%{{.+}}](%[[QV]], %[[QS]], %[[X]]) sizes(%[[N]])
// HI-SAME: symbolic = {grid = ["cdiv(n, 64)"], inputs = {{\[\["64", "128"\], \["64"\], \["n", "128"\]\]}}, outputs = {{\[\["n", "128"\]\]}}
// HI-SAME: transforms = ["hi_to_lo"]
pallas.kernel @dequant_add(%q: !pallas.hi<"qarray", !pallas.ref<64x128xi8>, !pallas.ref<64xf32>>,
                           %x: !pallas.ref<64x128xf32>, %o: !pallas.ref<64x128xf32>) {
  %vals, %scales = pallas.hi_unpack %q : !pallas.hi<"qarray", !pallas.ref<64x128xi8>, !pallas.ref<64xf32>>
  %v = pallas.load %vals[] : !pallas.ref<64x128xi8> -> tensor<64x128xi8>
  %s = pallas.load %scales[] : !pallas.ref<64xf32> -> tensor<64xf32>
  %f = arith.sitofp %v : tensor<64x128xi8> to tensor<64x128xf32>
  %sb = pallas.broadcast_in_dim %s dims [0] : tensor<64xf32> -> tensor<64x128xf32>
  %r = arith.mulf %f, %sb : tensor<64x128xf32>
  %a = pallas.load %x[] : !pallas.ref<64x128xf32> -> tensor<64x128xf32>
  %t = arith.addf %r, %a : tensor<64x128xf32>
  pallas.store %o[], %t : !pallas.ref<64x128xf32>, tensor<64x128xf32>
}
func.func @main(%q: !pallas.hi<"qarray", tensor<64x128xi8>, tensor<64xf32>>,
                %x: tensor<?x128xf32>, %n: index {pallas.symbol = "n"}) -> tensor<?x128xf32> {
  %c64 = arith.constant 64 : index
  %g = arith.ceildivsi %n, %c64 : index
  %o = pallas.call @dequant_add[%g](%q, %x) sizes(%n) {
      grid = array<i64: -1>,
      in_specs = [#pallas.block_spec<[64, 128], (i) -> (0, 0)>,
                  #pallas.block_spec<[64, 128], (i) -> (i, 0)>],
      out_specs = [#pallas.block_spec<[64, 128], (i) -> (i, 0)>],
      symbolic = {symbols = {n = {min = 1, multiple_of = 1}},
                  grid = ["cdiv(n, 64)"],
                  inputs = [[], ["n", "128"]], outputs = [["n", "128"]]}}
      : (!pallas.hi<"qarray", tensor<64x128xi8>, tensor<64xf32>>, tensor<?x128xf32>) -> tensor<?x128xf32>
  return %o : tensor<?x128xf32>
}

