// RUN: not pallasc-opt %s -pallas-vmap="axis-size=4 in-axes=0,-1" 2>&1 | FileCheck %s --check-prefix=VMAP
// RUN: not pallasc-opt %s -pallas-jvp 2>&1 | FileCheck %s --check-prefix=JVP
// RUN: not pallasc-opt %s -pallas-dce="used-outputs=1" 2>&1 | FileCheck %s --check-prefix=DCE
// RUN: not pallasc-opt %s -pallas-discharge-state 2>&1 | FileCheck %s --check-prefix=DISCHARGE
// RUN: not pallasc-opt %s -pallas-hi-to-lo 2>&1 | FileCheck %s --check-prefix=HI

// Tests that every call-level transform refuses a call with symbolic shapes
// (docs/transforms.md#symbolic-shapes) with an error at the call naming the
// pass and the symbols, instead of transforming the static parts only.

// VMAP: symbolic-refused.mlir:25:8: error: 'pallas.call' op pallas-vmap does not support symbolic shapes yet (symbols: n); apply it to a call at static shapes
// JVP: symbolic-refused.mlir:25:8: error: 'pallas.call' op pallas-jvp does not support symbolic shapes yet (symbols: n); apply it to a call at static shapes
// DCE: symbolic-refused.mlir:25:8: error: 'pallas.call' op pallas-dce does not support symbolic shapes yet (symbols: n); apply it to a call at static shapes
// DISCHARGE: symbolic-refused.mlir:25:8: error: 'pallas.call' op pallas-discharge-state does not support symbolic shapes yet (symbols: n); apply it to a call at static shapes
// HI: symbolic-refused.mlir:25:8: error: 'pallas.call' op pallas-hi-to-lo does not support symbolic shapes yet (symbols: n); apply it to a call at static shapes
pallas.kernel @rmsnorm(%x: !pallas.ref<8x128xf32>, %w: !pallas.ref<128xf32>,
                       %o: !pallas.ref<8x128xf32>) {
  %a = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  pallas.store %o[], %a : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @main(%x: tensor<?x128xf32>, %w: tensor<128xf32>,
                %n: index {pallas.symbol = "n"}) -> tensor<?x128xf32> {
  %c8 = arith.constant 8 : index
  %g = arith.ceildivsi %n, %c8 : index
  %o = pallas.call @rmsnorm[%g](%x, %w) sizes(%n) {
      grid = array<i64: -1>,
      in_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>,
                  #pallas.block_spec<[128], (i) -> (0)>],
      out_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      symbolic = {symbols = {n = {min = 1, multiple_of = 1}},
                  grid = ["cdiv(n, 8)"],
                  inputs = [["n", "128"], ["128"]],
                  outputs = [["n", "128"]]}}
      : (tensor<?x128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
  return %o : tensor<?x128xf32>
}
