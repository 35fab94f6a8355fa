// RUN: pallasc-opt %s -pallas-vmap="axis-size=2 in-axes=0,-1" | FileCheck %s
// RUN: not pallasc-opt %s -pallas-vmap="axis-size=2 in-axes=0,0" 2>&1 | FileCheck %s --check-prefix=BATCHED

// pallas-vmap on a call whose symbolic input is in memory space `any` (the
// kernel's ref keeps its dynamic dimension, !pallas.ref<?x32xf32, any>):
// unbatched, it stays the whole array, shared by every batch element;
// batched, each batch element would be a block of its symbolic shape, which
// is refused (block shapes are static).

// CHECK: pallas.call @k[%{{[^]]+}}](%{{[^)]+}}) sizes(%{{[^)]+}}) {grid = array<i64: 2, -1>
// CHECK-SAME: in_specs = [#pallas.block_spec<[squeezed, 8, 32], (d0, d1) -> (d0, d1, 0)>, #pallas.block_spec<any>]
// CHECK-SAME: (tensor<2x?x32xf32>, tensor<?x32xf32>) -> tensor<2x?x32xf32>
// BATCHED: error: 'pallas.call' op pallas-vmap cannot batch an operand in memory space 'any' whose shape 'tensor<?x32xf32>' is symbolic: each batch element would be a block of that shape, and block shapes are static (leave it unbatched, or give it a block shape)
pallas.kernel @k(%x: !pallas.ref<8x32xf32>, %t: !pallas.ref<?x32xf32, any>, %o: !pallas.ref<8x32xf32>) {
  %i = pallas.program_id 0 : i32
  %c8 = arith.constant 8 : i32
  %s = arith.muli %i, %c8 : i32
  %a = pallas.load %x[] : !pallas.ref<8x32xf32> -> tensor<8x32xf32>
  %b = pallas.load %t[%s : 8, 0 : 32] {fit} : !pallas.ref<?x32xf32, any> -> tensor<8x32xf32>
  %c = arith.addf %a, %b : tensor<8x32xf32>
  pallas.store %o[], %c : !pallas.ref<8x32xf32>, tensor<8x32xf32>
}
func.func @main(%x: tensor<?x32xf32>, %t: tensor<?x32xf32>, %n: index {pallas.symbol = "n"}) -> tensor<?x32xf32> {
  %c8 = arith.constant 8 : index
  %g = arith.ceildivsi %n, %c8 : index
  %o = pallas.call @k[%g](%x, %t) sizes(%n) {
      grid = array<i64: -1>,
      in_specs = [#pallas.block_spec<[8, 32], (i) -> (i, 0)>, #pallas.block_spec<any>],
      out_specs = [#pallas.block_spec<[8, 32], (i) -> (i, 0)>],
      symbolic = {symbols = {n = {min = 1}},
                  grid = ["cdiv(n, 8)"], inputs = [["n", "32"], ["n", "32"]],
                  outputs = [["n", "32"]]}}
      : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  return %o : tensor<?x32xf32>
}
