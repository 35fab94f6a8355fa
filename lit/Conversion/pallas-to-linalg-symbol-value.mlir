// RUN: pallasc-opt %s -split-input-file --pallas-to-linalg=symbol-args=true | FileCheck %s
// RUN: pallasc-opt %s -split-input-file --pallas-to-linalg | FileCheck %s --check-prefix=KEEP

// Tests that with symbol-args the kernel of a symbolic call takes one i64
// per symbol of the call, sorted by name (m, n), after its memrefs, that
// pallas.symbol_value reads its symbol's argument (truncated to i32, cast to
// index), and that the symbols are recorded on the function; without the
// option (the GPU pipelines) the op is kept for pallas-gpu-bind-symbols.

// CHECK-LABEL: func.func @k
// CHECK-SAME: (%{{.+}}: i32, %{{.+}}: i32, %{{.+}}: memref<8xf32>, %[[O:.+]]: memref<8xf32>, %[[M:.+]]: i64, %[[N:.+]]: i64)
// CHECK-SAME: pallas.symbols = ["m", "n"]
// CHECK: %[[N32:.+]] = arith.trunci %[[N]] : i64 to i32
// CHECK: %[[MI:.+]] = arith.index_cast %[[M]] : i64 to index
// CHECK: arith.sitofp %[[N32]] : i32 to f32
// CHECK: arith.index_cast %[[MI]] : index to i32
// KEEP-LABEL: func.func @k
// KEEP-SAME: (%{{.+}}: i32, %{{.+}}: i32, %{{.+}}: memref<8xf32>, %{{.+}}: memref<8xf32>)
// KEEP: pallas.symbol_value "n" {pallas.symbol_index = 1 : i64} : i32
// KEEP: pallas.symbol_value "m" {pallas.symbol_index = 0 : i64} : index
pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  %n = pallas.symbol_value "n" : i32
  %m = pallas.symbol_value "m" : index
  %f = arith.sitofp %n : i32 to f32
  %mi = arith.index_cast %m : index to i32
  %g = arith.sitofp %mi : i32 to f32
  %s = arith.addf %f, %g : f32
  %v = pallas.broadcast_in_dim %s dims [] : f32 -> tensor<8xf32>
  pallas.store %o[], %v : !pallas.ref<8xf32>, tensor<8xf32>
}
func.func @main(%x: tensor<?xf32>, %m: index {pallas.symbol = "m"},
                %n: index {pallas.symbol = "n"}) -> tensor<?xf32> {
  %c8 = arith.constant 8 : index
  %g = arith.ceildivsi %n, %c8 : index
  %o = pallas.call @k[%g](%x) sizes(%n) {
      grid = array<i64: -1>,
      in_specs = [#pallas.block_spec<[8], (i) -> (i)>],
      out_specs = [#pallas.block_spec<[8], (i) -> (i)>],
      symbolic = {symbols = {n = {min = 1}, m = {min = 1}},
                  grid = ["cdiv(n, 8)"], inputs = [["n"]], outputs = [["n"]]}}
      : (tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

// Tests that a kernel without a call takes the symbols it reads (here the
// one recorded by pallasc run's host program wins: n, w).

// CHECK-LABEL: func.func @alone
// CHECK-SAME: (%{{.+}}: memref<8xf32>, %{{.+}}: i64, %[[W:.+]]: i64)
// CHECK: arith.trunci %[[W]] : i64 to i32
pallas.kernel @alone(%o: !pallas.ref<8xf32>) attributes {pallas.symbols = ["n", "w"]} {
  %w = pallas.symbol_value "w" : i32
  %f = arith.sitofp %w : i32 to f32
  %v = pallas.broadcast_in_dim %f dims [] : f32 -> tensor<8xf32>
  pallas.store %o[], %v : !pallas.ref<8xf32>, tensor<8xf32>
}
