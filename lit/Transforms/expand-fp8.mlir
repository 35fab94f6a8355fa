// RUN: pallasc-opt %s -split-input-file -pallas-expand-fp8 | FileCheck %s

// Tests that extf from f8E4M3FN decodes the byte: exponent bias 7 becomes
// f32's 127 (+120), the 3 mantissa bits move to the top of f32's 23,
// subnormals are the mantissa times 2^-9, the magnitude 0x7f is NaN (the
// format has no infinity), and the sign bit moves to bit 31.

// CHECK-LABEL: func.func @ext_e4m3fn(
// CHECK-DAG: %[[NAN:.+]] = arith.constant dense<2143289344> : tensor<8xi32>
// CHECK-DAG: %[[SUBSCALE:.+]] = arith.constant dense<0.001953125> : tensor<8xf32>
// CHECK-DAG: %[[REBIAS:.+]] = arith.constant dense<120> : tensor<8xi32>
// CHECK-DAG: %[[C127:.+]] = arith.constant dense<127> : tensor<8xi32>
// CHECK: %[[BYTE:.+]] = arith.bitcast %{{.+}} : tensor<8xf8E4M3FN> to tensor<8xi8>
// CHECK: %[[CODE:.+]] = arith.extui %[[BYTE]] : tensor<8xi8> to tensor<8xi32>
// CHECK: %[[MAG:.+]] = arith.andi %[[CODE]], %[[C127]]
// CHECK: arith.addi %{{.+}}, %[[REBIAS]]
// CHECK: arith.mulf %{{.+}}, %[[SUBSCALE]]
// CHECK: %[[ISNAN:.+]] = arith.cmpi uge, %[[MAG]], %[[C127]]
// CHECK: arith.select %[[ISNAN]], %[[NAN]], %{{.+}}
// CHECK: %[[F:.+]] = arith.bitcast %{{.+}} : tensor<8xi32> to tensor<8xf32>
// CHECK: return %[[F]]
// CHECK-NOT: f8E4M3FN
func.func @ext_e4m3fn(%x: tensor<8xf8E4M3FN>) -> tensor<8xf32> {
  %y = arith.extf %x : tensor<8xf8E4M3FN> to tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// Tests that extf from f8E5M2 has e5m2's infinity (magnitude 0x7c) and NaNs
// (0x7d and above), and that a bf16 result is the f32 value truncated
// (exact).

// CHECK-LABEL: func.func @ext_e5m2_bf16(
// CHECK-DAG: %[[INF:.+]] = arith.constant 2139095040 : i32
// CHECK-DAG: %[[C124:.+]] = arith.constant 124 : i32
// CHECK-DAG: %[[C125:.+]] = arith.constant 125 : i32
// CHECK: %[[ISINF:.+]] = arith.cmpi eq, %{{.+}}, %[[C124]] : i32
// CHECK: arith.select %[[ISINF]], %[[INF]]
// CHECK: arith.cmpi uge, %{{.+}}, %[[C125]] : i32
// CHECK: %[[F:.+]] = arith.bitcast %{{.+}} : i32 to f32
// CHECK: %[[B:.+]] = arith.truncf %[[F]] : f32 to bf16
// CHECK: return %[[B]]
func.func @ext_e5m2_bf16(%x: f8E5M2) -> bf16 {
  %y = arith.extf %x : f8E5M2 to bf16
  return %y : bf16
}

// -----

// Tests that truncf to f8E5M2FNUZ rounds f32's mantissa to 2 bits (ties to
// even: adds 2^20 - 1 and the kept lowest bit, shifts by 21), rebiases by
// 127 - 16 (111 << 2 = 444), overflows past 57344 (f32 bits 1197473792) to
// the NaN 0x80 (no infinity), gives NaN 0x80 for NaN, and keeps no sign
// on zero (no -0 in fnuz).

// CHECK-LABEL: func.func @trunc_e5m2fnuz(
// CHECK-DAG: %[[HALF:.+]] = arith.constant 1048575 : i32
// CHECK-DAG: %[[SHIFT:.+]] = arith.constant 21 : i32
// CHECK-DAG: %[[REBIAS:.+]] = arith.constant 444 : i32
// CHECK-DAG: %[[LARGEST:.+]] = arith.constant 1197473792 : i32
// CHECK-DAG: %[[NAN:.+]] = arith.constant 128 : i32
// CHECK-DAG: %[[F32INF:.+]] = arith.constant 2139095040 : i32
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0 : i32
// CHECK: %[[BITS:.+]] = arith.bitcast %{{.+}} : f32 to i32
// CHECK: %[[UP:.+]] = arith.addi %{{.+}}, %[[HALF]] : i32
// CHECK: %[[R:.+]] = arith.shrui %{{.+}}, %[[SHIFT]] : i32
// CHECK: arith.subi %[[R]], %[[REBIAS]] : i32
// CHECK: %[[OVER:.+]] = arith.cmpi ugt, %{{.+}}, %[[LARGEST]] : i32
// CHECK: arith.select %[[OVER]], %[[NAN]]
// CHECK: %[[ISNAN:.+]] = arith.cmpi ugt, %{{.+}}, %[[F32INF]] : i32
// CHECK: %[[CODE:.+]] = arith.select %[[ISNAN]], %[[NAN]]
// CHECK: %[[SIGNED:.+]] = arith.ori %[[CODE]]
// CHECK: %[[ISZERO:.+]] = arith.cmpi eq, %[[CODE]], %[[ZERO]]
// CHECK: %[[OUT:.+]] = arith.select %[[ISZERO]], %[[CODE]], %[[SIGNED]]
// CHECK: %[[BYTE:.+]] = arith.trunci %[[OUT]] : i32 to i8
// CHECK: %[[F8:.+]] = arith.bitcast %[[BYTE]] : i8 to f8E5M2FNUZ
// CHECK: return %[[F8]]
func.func @trunc_e5m2fnuz(%x: f32) -> f8E5M2FNUZ {
  %y = arith.truncf %x : f32 to f8E5M2FNUZ
  return %y : f8E5M2FNUZ
}

// -----

// Tests that f64 is rounded to odd into f32 first (one rounding in all):
// the f32 truncation, compared back, one ulp toward zero where it rounded
// away, the lowest bit set where anything was lost.

// CHECK-LABEL: func.func @trunc_f64(
// CHECK: %[[Y:.+]] = arith.truncf %[[X:.+]] : f64 to f32
// CHECK: %[[BACK:.+]] = arith.extf %[[Y]] : f32 to f64
// CHECK: arith.cmpf une, %[[BACK]], %[[X]] : f64
// CHECK: arith.ori %{{.+}}, %{{.+}} : i32
// CHECK: arith.bitcast %{{.+}} : i8 to f8E4M3FN
func.func @trunc_f64(%x: f64) -> f8E4M3FN {
  %y = arith.truncf %x : f64 to f8E4M3FN
  return %y : f8E4M3FN
}

// -----

// Tests that arithmetic on fp8 runs in f32 and rounds each op's result
// (the multiply's product goes back to fp8 before the add reads it): no
// fp8 arithmetic is left, only bitcasts of the bytes.

// CHECK-LABEL: func.func @mul_add(
// CHECK: %[[P:.+]] = arith.mulf %{{.+}}, %{{.+}} : vector<4xf32>
// CHECK: arith.bitcast %[[P]] : vector<4xf32> to vector<4xi32>
// CHECK: %[[PB:.+]] = arith.bitcast %{{.+}} : vector<4xi8> to vector<4xf8E5M2>
// CHECK: arith.bitcast %[[PB]] : vector<4xf8E5M2> to vector<4xi8>
// CHECK: arith.addf %{{.+}}, %{{.+}} : vector<4xf32>
// CHECK-NOT: arith.{{(add|mul)}}f {{.*}}f8
func.func @mul_add(%a: vector<4xf8E5M2>, %b: vector<4xf8E5M2>) -> vector<4xf8E5M2> {
  %p = arith.mulf %a, %b : vector<4xf8E5M2>
  %y = arith.addf %p, %a : vector<4xf8E5M2>
  return %y : vector<4xf8E5M2>
}

// -----

// Tests that a module without fp8 is left alone (the f16 conversion and
// the foldable constant stay).

// CHECK-LABEL: func.func @no_fp8(
// CHECK-NEXT: %[[C:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[C]], %[[C]] : f32
// CHECK-NEXT: %[[H:.+]] = arith.truncf %[[S]] : f32 to f16
// CHECK-NEXT: return %[[H]]
func.func @no_fp8() -> f16 {
  %c = arith.constant 1.0 : f32
  %s = arith.addf %c, %c : f32
  %h = arith.truncf %s : f32 to f16
  return %h : f16
}
