// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu=chip=sm_80 -pallas-gpu-bind-symbols -canonicalize -cse | FileCheck %s
// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu=chip=gfx942 -pallas-gpu-bind-symbols -canonicalize -cse | FileCheck %s --check-prefix=GFX942

// Tests that a kernel reading the symbols m and n (pallas.symbol_value, kept
// by pallas-to-linalg with their indices among the sorted symbols, copied by
// pallas-to-gpu) reads the gpu.func's `symbol` parameters: symbols[0] (m)
// and symbols[1] (n) in the launch record, after the grid bound; nothing of
// pallas.symbol_value is left.
// CHECK-LABEL: gpu.func @masked(
// CHECK-SAME: %{{[^:]+}}: memref<1x128xf32>, %{{[^:]+}}: memref<1x128xf32>, %{{[^:]+}}: i32, %[[M:[^:]+]]: i32, %[[N:[^:]+]]: i32)
// CHECK-SAME: #pallas.gpu_param<symbol, symbols[0]>, #pallas.gpu_param<symbol, symbols[1]>]
// CHECK-NOT: pallas.symbol_value
// CHECK-DAG: arith.sitofp %[[M]] : i32 to f32
// CHECK-DAG: arith.cmpi slt, %{{.+}}, %[[N]] : i32
// CHECK-NOT: pallas.symbol_value
// GFX942-LABEL: gpu.func @masked(
// GFX942-NOT: pallas.symbol_value
pallas.kernel @masked(%x: !pallas.ref<8x128xf32>, %o: !pallas.ref<8x128xf32>) {
  %n = pallas.symbol_value "n" : i32
  %m = pallas.symbol_value "m" : i32
  %i = pallas.program_id 0 : i32
  %c8 = arith.constant 8 : i32
  %base = arith.muli %i, %c8 : i32
  %rows = pallas.iota 0 : tensor<8x128xi32>
  %b = pallas.broadcast_in_dim %base dims [] : i32 -> tensor<8x128xi32>
  %r = arith.addi %rows, %b : tensor<8x128xi32>
  %nb = pallas.broadcast_in_dim %n dims [] : i32 -> tensor<8x128xi32>
  %keep = arith.cmpi slt, %r, %nb : tensor<8x128xi32>
  %v = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %mf = arith.sitofp %m : i32 to f32
  %z = pallas.broadcast_in_dim %mf dims [] : f32 -> tensor<8x128xf32>
  %s = pallas.select %keep, %v, %z : tensor<8x128xi1>, tensor<8x128xf32>
  pallas.store %o[], %s : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @main(%x: tensor<?x128xf32>, %m: index {pallas.symbol = "m"},
                %n: index {pallas.symbol = "n"}) -> tensor<?x128xf32> {
  %c8 = arith.constant 8 : index
  %g = arith.ceildivsi %n, %c8 : index
  %o = pallas.call @masked[%g](%x) sizes(%n) {
      grid = array<i64: -1>,
      in_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      out_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      symbolic = {symbols = {m = {min = 1, max = 1000}, n = {min = 1, max = 1048576}},
                  grid = ["cdiv(n, 8)"], inputs = [["n", "128"]],
                  outputs = [["n", "128"]]}}
      : (tensor<?x128xf32>) -> tensor<?x128xf32>
  return %o : tensor<?x128xf32>
}
