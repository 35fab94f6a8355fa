// RUN: pallasc-opt %s -split-input-file | pallasc-opt -split-input-file | FileCheck %s
// RUN: pallasc-opt %s -split-input-file --mlir-print-op-generic | pallasc-opt -split-input-file | FileCheck %s

// Tests that pallas.symbol_value (a symbol's value inside the kernel of a
// symbolic call, docs/dialect.md#symbolic-shapes) round-trips with each of
// its result types, and that a kernel masking the rows past `n` verifies
// against a call that declares `n`.

// CHECK-LABEL: pallas.kernel @masked
// CHECK: %[[N:.+]] = pallas.symbol_value "n" : i32
// CHECK: %[[NI:.+]] = pallas.symbol_value "n" : index
// CHECK: %[[M:.+]] = pallas.symbol_value "m" : i64
// CHECK: arith.cmpi slt, %{{.+}}, %{{.+}} : tensor<8x128xi32>
pallas.kernel @masked(%x: !pallas.ref<8x128xf32>, %o: !pallas.ref<8x128xf32>) {
  %n = pallas.symbol_value "n" : i32
  %ni = pallas.symbol_value "n" : index
  %m = pallas.symbol_value "m" : i64
  %i = pallas.program_id 0 : i32
  %c8 = arith.constant 8 : i32
  %base = arith.muli %i, %c8 : i32
  %rows = pallas.iota 0 : tensor<8x128xi32>
  %b = pallas.broadcast_in_dim %base dims [] : i32 -> tensor<8x128xi32>
  %r = arith.addi %rows, %b : tensor<8x128xi32>
  %nb = pallas.broadcast_in_dim %n dims [] : i32 -> tensor<8x128xi32>
  %keep = arith.cmpi slt, %r, %nb : tensor<8x128xi32>
  %v = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %z = arith.constant dense<0.0> : tensor<8x128xf32>
  %s = pallas.select %keep, %v, %z : tensor<8x128xi1>, tensor<8x128xf32>
  pallas.store %o[], %s : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
// CHECK-LABEL: func.func @main
// CHECK: pallas.call @masked
func.func @main(%x: tensor<?x128xf32>, %n: index {pallas.symbol = "n"},
                %m: index {pallas.symbol = "m"}) -> tensor<?x128xf32> {
  %c8 = arith.constant 8 : index
  %g = arith.ceildivsi %n, %c8 : index
  %o = pallas.call @masked[%g](%x) sizes(%n) {
      grid = array<i64: -1>,
      in_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      out_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      symbolic = {symbols = {m = {min = 1}, n = {min = 1}},
                  grid = ["cdiv(n, 8)"], inputs = [["n", "128"]],
                  outputs = [["n", "128"]]}}
      : (tensor<?x128xf32>) -> tensor<?x128xf32>
  return %o : tensor<?x128xf32>
}
