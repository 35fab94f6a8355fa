// RUN: pallasc-opt %s -split-input-file -pallas-to-tpu | FileCheck %s

// Tests that pallas.symbol_value lowers as JAX's Mosaic lowering writes
// dim_as_value: an i32 placeholder per symbol read (2147483647 for the first,
// n; 2147483646 for m), and on the module where the TPU runtime finds each
// symbol (operand 1 = after the one dynamic grid bound: the input x, whose
// dimensions 0 and 1 are n and m) and a StableHLO module from the symbols
// (m, n, sorted) to the value.
// CHECK: module attributes {
// CHECK-SAME: tpu.dynamic_dimension_mapping_indices_2147483646 = [{dimension_index = 1 : i64, operand_index = 1 : i64}, {dimension_index = 0 : i64, operand_index = 1 : i64}]
// CHECK-SAME: tpu.dynamic_dimension_mapping_indices_2147483647 = [{dimension_index = 1 : i64, operand_index = 1 : i64}, {dimension_index = 0 : i64, operand_index = 1 : i64}]
// CHECK-SAME: tpu.dynamic_dimension_mapping_module_2147483646 = "{{.*}}@main(%arg0: tensor<i32>, %arg1: tensor<i32>){{.*}}return %arg0 : tensor<i32>
// CHECK-SAME: tpu.dynamic_dimension_mapping_module_2147483647 = "{{.*}}return %arg1 : tensor<i32>
// CHECK-LABEL: func.func @masked
// CHECK: arith.constant 2147483647 : i32
// CHECK: arith.constant 2147483646 : i32
// CHECK-NOT: pallas.symbol_value
pallas.kernel @masked(%x: !pallas.ref<8x128xf32>, %o: !pallas.ref<8x128xf32>) {
  %n = pallas.symbol_value "n" : i32
  %m = pallas.symbol_value "m" : i32
  %s = arith.addi %n, %m : i32
  %f = arith.sitofp %s : i32 to f32
  %v = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %b = pallas.broadcast_in_dim %f dims [] : f32 -> tensor<8x128xf32>
  %r = arith.addf %v, %b : tensor<8x128xf32>
  pallas.store %o[], %r : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @main(%x: tensor<?x?xf32>, %m: index {pallas.symbol = "m"},
                %n: index {pallas.symbol = "n"}) -> tensor<?x?xf32> {
  %c8 = arith.constant 8 : index
  %g = arith.ceildivsi %n, %c8 : index
  %o = pallas.call @masked[%g](%x) sizes(%n, %m) {
      grid = array<i64: -1>,
      in_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      out_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      symbolic = {symbols = {m = {min = 128, max = 128}, n = {min = 1}},
                  grid = ["cdiv(n, 8)"], inputs = [["n", "m"]],
                  outputs = [["n", "m"]]}}
      : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %o : tensor<?x?xf32>
}

