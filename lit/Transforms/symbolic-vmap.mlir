// RUN: pallasc-opt %s -split-input-file -pallas-vmap="axis-size=4 in-axes=0,-1" | FileCheck %s
// RUN: not pallasc-opt %s -split-input-file -pallas-vmap="axis-size=1 in-axes=1,-1" 2>/dev/null | FileCheck %s --check-prefix=SIZE1
// RUN: not pallasc-opt %s -split-input-file -pallas-vmap="axis-size=1 in-axes=1,-1" 2>&1 >/dev/null | FileCheck %s --check-prefix=MOVED
// RUN: not pallasc-opt %s -split-input-file -pallas-vmap="axis-size=4 in-axes=-1,-1,0" 2>&1 | FileCheck %s --check-prefix=SYMBOL
// RUN: not pallasc-opt %s -split-input-file -pallas-vmap="axis-size=4 in-axes=-1,0" 2>&1 | FileCheck %s --check-prefix=ALIAS

// pallas-vmap on calls with symbolic shapes (docs/transforms.md#symbolic-
// calls): the new leading grid axis is static (no expression), each batched
// operand's shape entry gets the axis size at its batch axis, the outputs'
// at 0, and the symbols, constraints, grid expressions and dynamic sizes
// are kept.

// Tests the batched call: grid [4, cdiv(n, 8)], the input's entry
// ["4", "n", "128"], the unbatched one's as it was, the output's
// ["4", "n", "128"], the size operand and the symbol argument unchanged.
// With axis size 1 (at axis 1) the call keeps the batch as a grid axis of 1
// (the squeeze JAX does needs static shapes).

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4x?x128xf32>, %[[W:[^:]+]]: tensor<128xf32>, %[[N:[^:]+]]: index {pallas.symbol = "n"}) -> tensor<4x?x128xf32>
// CHECK: %[[G:.+]] = arith.ceildivsi %[[N]]
// CHECK: %[[O:.+]] = pallas.call @scale[%[[G]]](%[[X]], %[[W]]) sizes(%[[N]])
// CHECK-SAME: grid = array<i64: 4, -1>
// CHECK-SAME: in_specs = [#pallas.block_spec<[squeezed, 8, 128], (d0, d1) -> (d0, d1, 0)>, #pallas.block_spec<[128], (d0, d1) -> (0)>]
// CHECK-SAME: symbolic = {grid = ["", "cdiv(n, 8)"], inputs = {{\[\["4", "n", "128"\], \["128"\]\]}}, outputs = {{\[\["4", "n", "128"\]\]}}, symbols = {n = {min = 1 : i64, multiple_of = 1 : i64}}}
// CHECK-SAME: transforms = ["vmap"], vmapped_dims = array<i64: 0>
// CHECK-SAME: : (tensor<4x?x128xf32>, tensor<128xf32>) -> tensor<4x?x128xf32>
// CHECK-NEXT: return %[[O]]
// SIZE1: pallas.call @scale[%{{[^]]+}}](%{{[^,]+}}, %{{[^)]+}}) sizes(%{{[^)]+}})
// SIZE1-SAME: grid = array<i64: 1, -1>
// SIZE1-SAME: in_specs = [#pallas.block_spec<[8, squeezed, 128], (d0, d1) -> (d1, d0, 0)>
// SIZE1-SAME: symbolic = {grid = ["", "cdiv(n, 8)"], inputs = {{\[\["n", "1", "128"\], \["128"\]\]}}, outputs = {{\[\["1", "n", "128"\]\]}}
// SIZE1-SAME: : (tensor<?x1x128xf32>, tensor<128xf32>) -> tensor<1x?x128xf32>
// SYMBOL: error: pallas-vmap: in-axes[2] = 0: argument 2 of @main is the symbol 'n' of a symbolic call, which has one value per launch and is not batched (expected -1)
pallas.kernel @scale(%x: !pallas.ref<8x128xf32>, %w: !pallas.ref<128xf32>,
                     %o: !pallas.ref<8x128xf32>) {
  %a = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %v = pallas.load %w[] : !pallas.ref<128xf32> -> tensor<128xf32>
  %vb = pallas.broadcast_in_dim %v dims [1] : tensor<128xf32> -> tensor<8x128xf32>
  %p = arith.mulf %a, %vb : tensor<8x128xf32>
  pallas.store %o[], %p : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @main(%x: tensor<?x128xf32>, %w: tensor<128xf32>,
                %n: index {pallas.symbol = "n"}) -> tensor<?x128xf32> {
  %c8 = arith.constant 8 : index
  %g = arith.ceildivsi %n, %c8 : index
  %o = pallas.call @scale[%g](%x, %w) sizes(%n) {
      grid = array<i64: -1>,
      in_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>,
                  #pallas.block_spec<[128], (i) -> (0)>],
      out_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      symbolic = {symbols = {n = {min = 1, multiple_of = 1}},
                  grid = ["cdiv(n, 8)"],
                  inputs = [["n", "128"], ["128"]], outputs = [["n", "128"]]}}
      : (tensor<?x128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
  return %o : tensor<?x128xf32>
}

// -----

// Tests that an unbatched symbolic array aliased to an output is an error
// (batching it would need a broadcast of a symbolic shape), and so is one
// batched at axis 1 (a transpose); batched at axis 0 it is fine.

// CHECK-LABEL: func.func @main(
// CHECK: pallas.call @acc[%{{[^]]+}}](%{{[^,]+}}, %{{[^)]+}}) sizes(%{{[^)]+}})
// CHECK-SAME: input_output_aliases = array<i64: 0, 0>
// CHECK-SAME: symbolic = {grid = ["", "cdiv(n, 8)"], inputs = {{\[\["4", "n", "128"\], \["n", "128"\]\]}}, outputs = {{\[\["4", "n", "128"\]\]}}
// MOVED: error: 'pallas.call' op pallas-vmap: input 0 of type 'tensor<?x1x128xf32>' is aliased to output 0 and batched at axis 1; a symbolic array aliased to an output must be batched at axis 0 (its transpose takes static shapes)
// ALIAS: error: 'pallas.call' op pallas-vmap: input 0 of type 'tensor<?x128xf32>' is aliased to output 0 and not batched; a symbolic array aliased to an output must be batched at axis 0 (its broadcast takes static shapes)
pallas.kernel @acc(%a: !pallas.ref<8x128xf32>, %x: !pallas.ref<8x128xf32>,
                   %o: !pallas.ref<8x128xf32>) {
  %u = pallas.load %a[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %v = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %s = arith.addf %u, %v : tensor<8x128xf32>
  pallas.store %o[], %s : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @main(%a: tensor<?x128xf32>, %x: tensor<?x128xf32>,
                %n: index {pallas.symbol = "n"}) -> tensor<?x128xf32> {
  %c8 = arith.constant 8 : index
  %g = arith.ceildivsi %n, %c8 : index
  %o = pallas.call @acc[%g](%a, %x) sizes(%n) {
      grid = array<i64: -1>,
      in_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>,
                  #pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      out_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      input_output_aliases = array<i64: 0, 0>,
      symbolic = {symbols = {n = {min = 1, multiple_of = 1}},
                  grid = ["cdiv(n, 8)"],
                  inputs = [["n", "128"], ["n", "128"]], outputs = [["n", "128"]]}}
      : (tensor<?x128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
  return %o : tensor<?x128xf32>
}
