// RUN: pallasc-opt %s -split-input-file -pallas-vmap="axis-expr=b in-axes=0,-1" | FileCheck %s
// RUN: not pallasc-opt %s -split-input-file -pallas-vmap="axis-expr=2*b+1 in-axes=1,0" 2>/dev/null | FileCheck %s --check-prefix=EXPR
// RUN: not pallasc-opt %s -split-input-file -pallas-vmap="axis-expr=b*n in-axes=0,-1" 2>&1 | FileCheck %s --check-prefix=NONLINEAR
// RUN: not pallasc-opt %s -split-input-file -pallas-vmap="axis-expr=c in-axes=0,-1" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not pallasc-opt %s -split-input-file -pallas-vmap="axis-expr=b in-axes=-1,0" 2>&1 | FileCheck %s --check-prefix=ALIAS

// pallas-vmap with a symbolic axis size (docs/transforms.md#symbolic-axis-
// size): the new leading grid axis is dynamic, bounded by the axis size's
// value computed from @main's symbol arguments; its `symbolic.grid` entry is
// the expression, each batched operand's shape entry gets the expression at
// its batch axis, each output's at 0; the outputs' new leading dims are
// dynamic sizes of the call; the cost estimate (a number) is dropped.

// Tests grid [b, cdiv(n, 8)] with the bound %b itself, the shape entries
// ["b", "n", "128"], the sizes (b, n) of the output, and a batched `any`
// operand of static shape: a block of its whole shape per batch element.

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:[^:]+]]: tensor<?x?x128xf32>, %[[T:[^:]+]]: tensor<16xf32>, %[[N:[^:]+]]: index {pallas.symbol = "n"}, %[[B:[^:]+]]: index {pallas.symbol = "b"}) -> tensor<?x?x128xf32>
// CHECK: %[[G:.+]] = arith.ceildivsi %[[N]]
// CHECK: %[[O:.+]] = pallas.call @scale[%[[B]], %[[G]]](%[[X]], %[[T]]) sizes(%[[B]], %[[N]])
// CHECK-NOT: cost_estimate
// CHECK-SAME: grid = array<i64: -1, -1>
// CHECK-SAME: in_specs = [#pallas.block_spec<[squeezed, 8, 128], (d0, d1) -> (d0, d1, 0)>, #pallas.block_spec<any>]
// CHECK-SAME: symbolic = {grid = ["b", "cdiv(n, 8)"], inputs = {{\[\["b", "n", "128"\], \["16"\]\]}}, outputs = {{\[\["b", "n", "128"\]\]}}, symbols = {b = {max = 64 : i64, min = 1 : i64, multiple_of = 1 : i64}, n = {min = 1 : i64, multiple_of = 1 : i64}}}
// CHECK-SAME: transforms = ["vmap"], vmapped_dims = array<i64: 0>
// CHECK-SAME: : (tensor<?x?x128xf32>, tensor<16xf32>) -> tensor<?x?x128xf32>
// CHECK-NEXT: return %[[O]]

// An expression over the symbols, the input batched at axis 1, the `any`
// operand batched at 0 (squeezed batch dim, the rest its whole shape); the
// run fails on the second function (its aliased input batched at axis 1).
// EXPR-LABEL: func.func @main(
// EXPR-SAME: %[[X:[^:]+]]: tensor<?x?x128xf32>, %[[T:[^:]+]]: tensor<?x16xf32>, %[[N:[^:]+]]: index {pallas.symbol = "n"}, %[[B:[^:]+]]: index {pallas.symbol = "b"})
// EXPR: %[[C2:.+]] = arith.constant 2 : index
// EXPR: %[[M:.+]] = arith.muli %[[B]], %[[C2]]
// EXPR: %[[C1:.+]] = arith.constant 1 : index
// EXPR: %[[E:.+]] = arith.addi %[[M]], %[[C1]]
// EXPR: pallas.call @scale[%[[E]], %{{[^]]+}}](%[[X]], %[[T]]) sizes(%[[E]], %[[N]])
// EXPR-SAME: in_specs = [#pallas.block_spec<[8, squeezed, 128], (d0, d1) -> (d1, d0, 0)>, #pallas.block_spec<[squeezed, 16], (d0, d1) -> (d0, 0), any>]
// EXPR-SAME: symbolic = {grid = ["2*b + 1", "cdiv(n, 8)"], inputs = {{\[\["n", "2\*b \+ 1", "128"\], \["2\*b \+ 1", "16"\]\]}}, outputs = {{\[\["2\*b \+ 1", "n", "128"\]\]}}

// NONLINEAR: error: pallas-vmap: axis-expr 'b*n': the product b * n is not linear; expected a linear expression (a product of a symbol and an integer)
// UNKNOWN: error: pallas-vmap: the axis size 'c' uses the symbol 'c', which @main does not take (expected a symbol of the call's `symbolic` attribute, an argument with pallas.symbol)
pallas.kernel @scale(%x: !pallas.ref<8x128xf32>, %t: !pallas.ref<16xf32, any>,
                     %o: !pallas.ref<8x128xf32>) {
  %a = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %p = arith.addf %a, %a : tensor<8x128xf32>
  pallas.store %o[], %p : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @main(%x: tensor<?x128xf32>, %t: tensor<16xf32>,
                %n: index {pallas.symbol = "n"},
                %b: index {pallas.symbol = "b"}) -> tensor<?x128xf32> {
  %c8 = arith.constant 8 : index
  %g = arith.ceildivsi %n, %c8 : index
  %o = pallas.call @scale[%g](%x, %t) sizes(%n) {
      grid = array<i64: -1>,
      in_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>,
                  #pallas.block_spec<any>],
      out_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      cost_estimate = #pallas.cost<flops = 10, bytes_accessed = 20, transcendentals = 0>,
      symbolic = {symbols = {n = {min = 1, multiple_of = 1},
                             b = {min = 1, max = 64, multiple_of = 1}},
                  grid = ["cdiv(n, 8)"],
                  inputs = [["n", "128"], ["16"]], outputs = [["n", "128"]]}}
      : (tensor<?x128xf32>, tensor<16xf32>) -> tensor<?x128xf32>
  return %o : tensor<?x128xf32>
}

// -----

// Tests that an input aliased to an output must be batched at axis 0 with a
// symbolic axis size even when its shape is static (its broadcast would be
// of a symbolic shape); batched at 0 it is fine.

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %{{[^:]+}}: tensor<?x8x128xf32>, %{{[^:]+}}: tensor<8x128xf32>, %[[B:[^:]+]]: index {pallas.symbol = "b"})
// CHECK: pallas.call @acc[%[[B]]](%{{[^,]+}}, %{{[^)]+}}) sizes(%[[B]])
// CHECK-SAME: grid = array<i64: -1, 1>
// CHECK-SAME: input_output_aliases = array<i64: 0, 0>
// CHECK-SAME: symbolic = {grid = ["b", ""], inputs = {{\[\["b", "8", "128"\], \["8", "128"\]\]}}, outputs = {{\[\["b", "8", "128"\]\]}}
// CHECK-SAME: : (tensor<?x8x128xf32>, tensor<8x128xf32>) -> tensor<?x8x128xf32>
// ALIAS: error: 'pallas.call' op pallas-vmap: input 0 of type 'tensor<8x128xf32>' is aliased to output 0 and not batched; with the symbolic axis size 'b' an array aliased to an output must be batched at axis 0 (its broadcast takes static shapes)
pallas.kernel @acc(%a: !pallas.ref<8x128xf32>, %x: !pallas.ref<8x128xf32>,
                   %o: !pallas.ref<8x128xf32>) {
  %u = pallas.load %a[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %v = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %s = arith.addf %u, %v : tensor<8x128xf32>
  pallas.store %o[], %s : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @main(%a: tensor<8x128xf32>, %x: tensor<8x128xf32>,
                %b: index {pallas.symbol = "b"}) -> tensor<8x128xf32> {
  %o = pallas.call @acc(%a, %x) {
      grid = array<i64: 1>,
      in_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>,
                  #pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      out_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      input_output_aliases = array<i64: 0, 0>,
      symbolic = {symbols = {b = {min = 1, multiple_of = 1}},
                  grid = [""],
                  inputs = [["8", "128"], ["8", "128"]], outputs = [["8", "128"]]}}
      : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
  return %o : tensor<8x128xf32>
}
