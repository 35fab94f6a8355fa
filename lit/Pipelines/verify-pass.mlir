// Tests pallas-verify, the one verification the GPU codegen pipelines run
// before serializing when the driver runs them without per-pass
// verification: valid IR passes through unchanged; invalid IR (parsed here
// without verification, and the pass manager's own verifier off) is an
// error at the op, and the pass fails.
// RUN: pallasc-opt %s --split-input-file --mlir-very-unsafe-disable-verifier-on-parsing --verify-each=0 --pallas-verify --verify-diagnostics --mlir-print-ir-after-failure=false | FileCheck %s

// CHECK-LABEL: func.func @good(
// CHECK-NEXT: arith.addi %{{.+}}, %{{.+}} : i32
func.func @good(%a: i32, %b: i32) -> i32 {
  %0 = arith.addi %a, %b : i32
  return %0 : i32
}

// -----

func.func @bad(%a: i32, %b: i64) -> i32 {
  // expected-error @+1 {{'arith.addi' op requires the same type for all operands and results}}
  %0 = "arith.addi"(%a, %b) : (i32, i64) -> i32
  return %0 : i32
}
