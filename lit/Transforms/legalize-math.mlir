// RUN: pallasc-opt %s -split-input-file -pallas-legalize-math | FileCheck %s

// Tests that math.sincos becomes math.sin and math.cos of the same operand,
// keeping the fastmath flags.

// CHECK-LABEL: func.func @sincos(
// CHECK-SAME: %[[X:.+]]: tensor<8xf32>)
// CHECK-NEXT: %[[S:.+]] = math.sin %[[X]] fastmath<afn> : tensor<8xf32>
// CHECK-NEXT: %[[C:.+]] = math.cos %[[X]] fastmath<afn> : tensor<8xf32>
// CHECK-NEXT: return %[[S]], %[[C]]
func.func @sincos(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %s, %c = math.sincos %x fastmath<afn> : tensor<8xf32>
  return %s, %c : tensor<8xf32>, tensor<8xf32>
}

// -----

// Tests that math.clampf is max with the lower bound, then min with the
// upper one (NaN-propagating, as lax.clamp).

// CHECK-LABEL: func.func @clampf(
// CHECK-SAME: %[[X:[^:]+]]: f16, %[[LO:[^:]+]]: f16, %[[HI:[^:]+]]: f16)
// CHECK-NEXT: %[[M:.+]] = arith.maximumf %[[X]], %[[LO]] : f16
// CHECK-NEXT: %[[R:.+]] = arith.minimumf %[[M]], %[[HI]] : f16
// CHECK-NEXT: return %[[R]]
func.func @clampf(%x: f16, %lo: f16, %hi: f16) -> f16 {
  %r = math.clampf %x to [%lo, %hi] : f16
  return %r : f16
}

// -----

// Tests that the classification ops become bit tests of the float's
// exponent (0x7f800000 for f32, 0x7c00 for f16, 0x7f80 for bf16) and isnan
// an unordered self-comparison.

// CHECK-LABEL: func.func @classify(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4xf32>, %[[H:[^:]+]]: f16, %[[B:[^:]+]]: bf16, %[[D:[^:]+]]: f64)
// CHECK-DAG: %[[ZERO16:.+]] = arith.constant 0 : i16
// CHECK-DAG: %[[BEXP:.+]] = arith.constant 32640 : i16
// CHECK-DAG: %[[HEXP:.+]] = arith.constant 31744 : i16
// CHECK-DAG: %[[ABS:.+]] = arith.constant dense<2147483647> : tensor<4xi32>
// CHECK-DAG: %[[EXP:.+]] = arith.constant dense<2139095040> : tensor<4xi32>
// CHECK:     %[[XB:.+]] = arith.bitcast %[[X]] : tensor<4xf32> to tensor<4xi32>
// CHECK:     %[[XA:.+]] = arith.andi %[[XB]], %[[ABS]] : tensor<4xi32>
// CHECK:     %[[INF:.+]] = arith.cmpi eq, %[[XA]], %[[EXP]] : tensor<4xi32>
// CHECK:     %[[HB:.+]] = arith.bitcast %[[H]] : f16 to i16
// CHECK:     %[[HE:.+]] = arith.andi %[[HB]], %[[HEXP]] : i16
// CHECK:     %[[FIN:.+]] = arith.cmpi ne, %[[HE]], %[[HEXP]] : i16
// CHECK:     %[[BB:.+]] = arith.bitcast %[[B]] : bf16 to i16
// CHECK:     %[[BE:.+]] = arith.andi %[[BB]], %[[BEXP]] : i16
// CHECK-DAG: %[[NZ:.+]] = arith.cmpi ne, %[[BE]], %[[ZERO16]] : i16
// CHECK-DAG: %[[NM:.+]] = arith.cmpi ne, %[[BE]], %[[BEXP]] : i16
// CHECK:     %[[NORM:.+]] = arith.andi %[[NZ]], %[[NM]] : i1
// CHECK:     %[[NAN:.+]] = arith.cmpf uno, %[[D]], %[[D]] : f64
// CHECK:     return %[[INF]], %[[FIN]], %[[NORM]], %[[NAN]]
func.func @classify(%x: tensor<4xf32>, %h: f16, %b: bf16, %d: f64)
    -> (tensor<4xi1>, i1, i1, i1) {
  %inf = math.isinf %x : tensor<4xf32>
  %fin = math.isfinite %h : f16
  %norm = math.isnormal %b : bf16
  %nan = math.isnan %d : f64
  return %inf, %fin, %norm, %nan : tensor<4xi1>, i1, i1, i1
}

// -----

// Tests that math.ipowi is square-and-multiply over the exponent's bits (one
// step per bit but the sign: 7 on i8), then the negative exponents' cases.

// CHECK-LABEL: func.func @ipowi(
// CHECK-SAME: %[[B:[^:]+]]: i8, %[[E:[^:]+]]: i8)
// CHECK-DAG:     %[[ZERO:.+]] = arith.constant 0 : i8
// CHECK-COUNT-7: arith.select %{{.+}}, %{{.+}}, %{{.+}} : i8
// CHECK:         %[[NEG:.+]] = arith.cmpi slt, %[[E]], %[[ZERO]] : i8
// CHECK:         %[[R:.+]] = arith.select %[[NEG]],
// CHECK-NOT:     math.ipowi
// CHECK:         return %[[R]]
func.func @ipowi(%b: i8, %e: i8) -> i8 {
  %r = math.ipowi %b, %e : i8
  return %r : i8
}

// -----

// Tests that ops every backend lowers are left alone.

// CHECK-LABEL: func.func @kept(
// CHECK: math.tanh
// CHECK: math.trunc
// CHECK: math.fpowi
func.func @kept(%x: f32, %n: i32) -> (f32, f32, f32) {
  %t = math.tanh %x : f32
  %u = math.trunc %x : f32
  %p = math.fpowi %x, %n : f32, i32
  return %t, %u, %p : f32, f32, f32
}
