// RUN: pallasc-opt %s -split-input-file -pallas-math-to-ocml="chipset=gfx942" | FileCheck %s
// RUN: not pallasc-opt %s -split-input-file -pallas-math-to-ocml="chipset=sm_90" 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: pallas-math-to-ocml: 'sm_90' is not an AMD chip name (gfxNNN)

// Tests that the ops convert-gpu-to-rocdl would turn into LLVM intrinsics the
// AMDGPU backend cannot select become ocml calls, per type, and that the
// others are left for convert-gpu-to-rocdl.

// CHECK-LABEL: gpu.module @m
// CHECK-DAG: llvm.func @__ocml_tanh_f32(f32) -> f32
// CHECK-DAG: llvm.func @__ocml_atan2_f64(f64, f64) -> f64
// CHECK-DAG: llvm.func @__ocml_tan_f16(f16) -> f16
// CHECK-LABEL: gpu.func @k(
// CHECK-SAME: %[[X:[^:]+]]: f32, %[[D:[^:]+]]: f64, %[[H:[^:]+]]: f16)
// CHECK: %[[T:.+]] = llvm.call @__ocml_tanh_f32(%[[X]]) : (f32) -> f32
// CHECK: %[[A:.+]] = llvm.call @__ocml_atan2_f64(%[[D]], %[[D]]) : (f64, f64) -> f64
// CHECK: %[[N:.+]] = llvm.call @__ocml_tan_f16(%[[H]]) : (f16) -> f16
// CHECK: math.sqrt %[[X]] : f32
// CHECK: math.exp %[[X]] : f32
gpu.module @m {
  gpu.func @k(%x: f32, %d: f64, %h: f16) kernel {
    %t = math.tanh %x : f32
    %a = math.atan2 %d, %d : f64
    %n = math.tan %h : f16
    %s = math.sqrt %x : f32
    %e = math.exp %x : f32
    gpu.return
  }
}
