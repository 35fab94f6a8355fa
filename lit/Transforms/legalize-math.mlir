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

// -----

// Tests that arith.fptosi gets XLA's saturating semantics: the conversion
// sees the value only where -128 < x < 128 (0 elsewhere), x <= -128 gives
// -128, x >= 128 gives 127, and NaN (every ordered comparison false) 0.

// CHECK-LABEL: func.func @fptosi_f32_i8(
// CHECK-SAME: %[[X:[^:]+]]: f32)
// CHECK-DAG: %[[MAX:.+]] = arith.constant 127 : i8
// CHECK-DAG: %[[MIN:.+]] = arith.constant -128 : i8
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[LO:.+]] = arith.constant -1.280000e+02 : f32
// CHECK-DAG: %[[HI:.+]] = arith.constant 1.280000e+02 : f32
// CHECK: %[[BELOW:.+]] = arith.cmpf ole, %[[X]], %[[LO]] : f32
// CHECK-NEXT: %[[ABOVE:.+]] = arith.cmpf oge, %[[X]], %[[HI]] : f32
// CHECK-NEXT: %[[GT:.+]] = arith.cmpf ogt, %[[X]], %[[LO]] : f32
// CHECK-NEXT: %[[LT:.+]] = arith.cmpf olt, %[[X]], %[[HI]] : f32
// CHECK-NEXT: %[[IN:.+]] = arith.andi %[[GT]], %[[LT]] : i1
// CHECK-NEXT: %[[SAFE:.+]] = arith.select %[[IN]], %[[X]], %[[ZERO]] : f32
// CHECK-NEXT: %[[C:.+]] = arith.fptosi %[[SAFE]] : f32 to i8
// CHECK-NEXT: %[[L:.+]] = arith.select %[[BELOW]], %[[MIN]], %[[C]] : i8
// CHECK-NEXT: %[[R:.+]] = arith.select %[[ABOVE]], %[[MAX]], %[[L]] : i8
// CHECK-NEXT: return %[[R]]
func.func @fptosi_f32_i8(%x: f32) -> i8 {
  %r = arith.fptosi %x : f32 to i8
  return %r : i8
}

// -----

// Tests that arith.fptoui of an f16 tensor is done in f32 (an exact
// extension) with the bounds 0 and 2^32: x <= 0 gives 0, x >= 2^32 gives
// 0xffffffff.

// CHECK-LABEL: func.func @fptoui_f16_u32(
// CHECK-SAME: %[[X:[^:]+]]: tensor<4xf16>)
// CHECK-DAG: %[[MAX:.+]] = arith.constant dense<-1> : tensor<4xi32>
// CHECK-DAG: %[[MIN:.+]] = arith.constant dense<0> : tensor<4xi32>
// CHECK-DAG: %[[HI:.+]] = arith.constant dense<4.2949673E+9> : tensor<4xf32>
// CHECK-DAG: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: %[[E:.+]] = arith.extf %[[X]] : tensor<4xf16> to tensor<4xf32>
// CHECK-NEXT: %[[BELOW:.+]] = arith.cmpf ole, %[[E]], %[[ZERO]] : tensor<4xf32>
// CHECK-NEXT: %[[ABOVE:.+]] = arith.cmpf oge, %[[E]], %[[HI]] : tensor<4xf32>
// CHECK-NEXT: %[[GT:.+]] = arith.cmpf ogt, %[[E]], %[[ZERO]] : tensor<4xf32>
// CHECK-NEXT: %[[LT:.+]] = arith.cmpf olt, %[[E]], %[[HI]] : tensor<4xf32>
// CHECK-NEXT: %[[IN:.+]] = arith.andi %[[GT]], %[[LT]] : tensor<4xi1>
// CHECK-NEXT: %[[SAFE:.+]] = arith.select %[[IN]], %[[E]], %[[ZERO]]
// CHECK-NEXT: %[[C:.+]] = arith.fptoui %[[SAFE]] : tensor<4xf32> to tensor<4xi32>
// CHECK-NEXT: %[[L:.+]] = arith.select %[[BELOW]], %[[MIN]], %[[C]]
// CHECK-NEXT: %[[R:.+]] = arith.select %[[ABOVE]], %[[MAX]], %[[L]]
// CHECK-NEXT: return %[[R]]
func.func @fptoui_f16_u32(%x: tensor<4xf16>) -> tensor<4xi32> {
  %r = arith.fptoui %x : tensor<4xf16> to tensor<4xi32>
  return %r : tensor<4xi32>
}

// -----

// Tests a bf16 vector to i64 (bounds -2^63 and 2^63, exact in f32) and an
// f64 scalar to u64 (bounds 0 and 2^64): the rewrite holds for every width
// and shape.

// CHECK-LABEL: func.func @fptosi_bf16_i64(
// CHECK-DAG: arith.constant dense<9223372036854775807> : vector<2xi64>
// CHECK-DAG: arith.constant dense<-9223372036854775808> : vector<2xi64>
// CHECK-DAG: %[[HI:.+]] = arith.constant dense<9.22337203E+18> : vector<2xf32>
// CHECK-DAG: %[[LO:.+]] = arith.constant dense<-9.22337203E+18> : vector<2xf32>
// CHECK: %[[E:.+]] = arith.extf %{{.+}} : vector<2xbf16> to vector<2xf32>
// CHECK: arith.cmpf ole, %[[E]], %[[LO]]
// CHECK: arith.cmpf oge, %[[E]], %[[HI]]
// CHECK: arith.fptosi %{{.+}} : vector<2xf32> to vector<2xi64>
// CHECK-LABEL: func.func @fptoui_f64_u64(
// CHECK-DAG: arith.constant -1 : i64
// CHECK-DAG: arith.constant 0 : i64
// CHECK-DAG: %[[HI:.+]] = arith.constant 1.8446744073709552E+19 : f64
// CHECK: arith.cmpf oge, %{{.+}}, %[[HI]] : f64
// CHECK: arith.fptoui %{{.+}} : f64 to i64
func.func @fptosi_bf16_i64(%x: vector<2xbf16>) -> vector<2xi64> {
  %r = arith.fptosi %x : vector<2xbf16> to vector<2xi64>
  return %r : vector<2xi64>
}
func.func @fptoui_f64_u64(%x: f64) -> i64 {
  %r = arith.fptoui %x : f64 to i64
  return %r : i64
}
