// RUN: pallasc-opt %s -split-input-file | pallasc-opt -split-input-file | FileCheck %s
// RUN: pallasc-opt %s -split-input-file --mlir-print-op-generic | pallasc-opt -split-input-file | FileCheck %s

// Tests a symbolic pallas.call (docs/dialect.md#symbolic-shapes): a dynamic
// row count, the grid bound cdiv(n, 8) computed in the wrapper, the result's
// dynamic size passed after the inputs as tensor.empty takes it, and the
// `symbolic` attribute with the symbols, grid and shape expressions.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x128xf32>, %[[W:[^:]+]]: tensor<128xf32>, %[[N:[^:]+]]: index {pallas.symbol = "n"})
// CHECK: %[[C8:.+]] = arith.constant 8 : index
// CHECK: %[[G:.+]] = arith.ceildivsi %[[N]], %[[C8]] : index
// CHECK: %[[O:.+]] = pallas.call @rmsnorm[%[[G]]](%[[X]], %[[W]]) sizes(%[[N]])
// CHECK-SAME: grid = array<i64: -1>
// CHECK-SAME: symbolic = {grid = ["cdiv(n, 8)"], inputs = {{\[\["n", "128"\], \["128"\]\]}}, outputs = {{\[\["n", "128"\]\]}}, symbols = {n = {max = 1048576 : i64, min = 1 : i64, multiple_of = 1 : i64}}}
// CHECK-SAME: : (tensor<?x128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
// CHECK: return %[[O]]
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
      symbolic = {symbols = {n = {min = 1, max = 1048576, multiple_of = 1}},
                  grid = ["cdiv(n, 8)"],
                  inputs = [["n", "128"], ["128"]],
                  outputs = [["n", "128"]]}}
      : (tensor<?x128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
  return %o : tensor<?x128xf32>
}
