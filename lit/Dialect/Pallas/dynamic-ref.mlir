// RUN: pallasc-opt %s -split-input-file | pallasc-opt -split-input-file | FileCheck %s
// RUN: pallasc-opt %s -split-input-file --mlir-print-op-generic | pallasc-opt -split-input-file | FileCheck %s

// Tests a ref with a dynamic dimension (a symbolic array in memory space
// `any`, docs/dialect.md#symbolic-shapes): `?` round-trips, a static slice
// of it may start anywhere (checked at run time, not by the verifier), and
// the call's spec gives the kernel that ref for the whole array.

// CHECK-LABEL: pallas.kernel @gather_rows
// CHECK-SAME: %{{.+}}: !pallas.ref<?x32xf32, any>
// CHECK: pallas.load %{{.+}}[%{{.+}} : 8, 0 : 32] : !pallas.ref<?x32xf32, any> -> tensor<8x32xf32>
// CHECK: pallas.load %{{.+}}[100 : 8, 0 : 32] : !pallas.ref<?x32xf32, any> -> tensor<8x32xf32>
// CHECK: pallas.load %{{.+}}[3, 0 : 32] : !pallas.ref<?x32xf32, any> -> tensor<32xf32>
// CHECK-LABEL: func.func @main
// CHECK: pallas.call @gather_rows[%{{[^]]+}}](%{{[^)]+}}) sizes(%{{[^)]+}}) {grid = array<i64: -1>, in_specs = [#pallas.block_spec<any>]
pallas.kernel @gather_rows(%x: !pallas.ref<?x32xf32, any>, %o: !pallas.ref<8x32xf32>) {
  %i = pallas.program_id 0 : i32
  %c8 = arith.constant 8 : i32
  %s = arith.muli %i, %c8 : i32
  %a = pallas.load %x[%s : 8, 0 : 32] : !pallas.ref<?x32xf32, any> -> tensor<8x32xf32>
  %b = pallas.load %x[100 : 8, 0 : 32] : !pallas.ref<?x32xf32, any> -> tensor<8x32xf32>
  %r = pallas.load %x[3, 0 : 32] : !pallas.ref<?x32xf32, any> -> tensor<32xf32>
  %c = arith.addf %a, %b : tensor<8x32xf32>
  pallas.store %o[], %c : !pallas.ref<8x32xf32>, tensor<8x32xf32>
}
func.func @main(%x: tensor<?x32xf32>, %n: index {pallas.symbol = "n"}) -> tensor<?x32xf32> {
  %c8 = arith.constant 8 : index
  %g = arith.ceildivsi %n, %c8 : index
  %o = pallas.call @gather_rows[%g](%x) sizes(%n) {
      grid = array<i64: -1>,
      in_specs = [#pallas.block_spec<any>],
      out_specs = [#pallas.block_spec<[8, 32], (i) -> (i, 0)>],
      symbolic = {symbols = {n = {min = 1}},
                  grid = ["cdiv(n, 8)"], inputs = [["n", "32"]],
                  outputs = [["n", "32"]]}}
      : (tensor<?x32xf32>) -> tensor<?x32xf32>
  return %o : tensor<?x32xf32>
}
