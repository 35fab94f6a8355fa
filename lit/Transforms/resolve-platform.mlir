// RUN: pallasc-opt %s -split-input-file -pallas-resolve-platform=platform=cuda | FileCheck %s --check-prefix=CUDA
// The pass: passes/Transforms/ResolvePlatform.cpp.
// RUN: pallasc-opt %s -split-input-file -pallas-resolve-platform=platform=rocm | FileCheck %s --check-prefix=ROCM
// RUN: pallasc-opt %s -split-input-file -pallas-resolve-platform=platform=cpu | FileCheck %s --check-prefix=CPU
// RUN: pallasc-opt %s -split-input-file -pallas-resolve-platform=platform=mosaic | FileCheck %s --check-prefix=MOSAIC

// Tests that lax.platform_dependent(x, cuda=..., rocm=..., default=...), as
// the exporter writes it (the index clamped, then a chain of scf.if), folds
// to the branch of the platform: cuda multiplies by 2, rocm by 3, anything
// else (cpu, mosaic) takes the default, adding 1. Nothing of the other
// branches is left.

// CUDA-LABEL: func.func @switch(
// CUDA-SAME: %[[X:.+]]: f32)
// CUDA-NEXT: %[[C:.+]] = arith.constant 2.0
// CUDA-NEXT: %[[R:.+]] = arith.mulf %[[X]], %[[C]]
// CUDA-NEXT: return %[[R]]
// ROCM-LABEL: func.func @switch(
// ROCM-NEXT: arith.constant 3.0
// ROCM-NEXT: arith.mulf
// ROCM-NEXT: return
// CPU-LABEL: func.func @switch(
// CPU-NEXT: arith.constant 1.0
// CPU-NEXT: arith.addf
// CPU-NEXT: return
// MOSAIC-LABEL: func.func @switch(
// MOSAIC-NEXT: arith.constant 1.0
// MOSAIC-NEXT: arith.addf
// MOSAIC-NEXT: return
func.func @switch(%x: f32) -> f32 {
  %i = pallas.platform_index [["cuda"], ["rocm"]] default : i32
  %c0 = arith.constant 0 : i32
  %c2 = arith.constant 2 : i32
  %lo = arith.maxsi %i, %c0 : i32
  %t = arith.minsi %lo, %c2 : i32
  %is0 = arith.cmpi eq, %t, %c0 : i32
  %r = scf.if %is0 -> (f32) {
    %two = arith.constant 2.0 : f32
    %a = arith.mulf %x, %two : f32
    scf.yield %a : f32
  } else {
    %c1 = arith.constant 1 : i32
    %is1 = arith.cmpi eq, %t, %c1 : i32
    %s = scf.if %is1 -> (f32) {
      %three = arith.constant 3.0 : f32
      %b = arith.mulf %x, %three : f32
      scf.yield %b : f32
    } else {
      %one = arith.constant 1.0 : f32
      %c = arith.addf %x, %one : f32
      scf.yield %c : f32
    }
    scf.yield %s : f32
  }
  return %r : f32
}

// -----

// Tests that a group of several platforms matches each of them, and that
// the index is a plain constant where no conditional uses it.

// CUDA-LABEL: func.func @group(
// CUDA-NEXT: %[[C:.+]] = arith.constant 0 : i32
// CUDA-NEXT: return %[[C]]
// ROCM-LABEL: func.func @group(
// ROCM-NEXT: arith.constant 0 : i32
// CPU-LABEL: func.func @group(
// CPU-NEXT: arith.constant 1 : i32
// MOSAIC-LABEL: func.func @group(
// MOSAIC-NEXT: arith.constant 2 : i32
func.func @group() -> i32 {
  %i = pallas.platform_index [["cuda", "rocm"], ["cpu"], ["mosaic"]] : i32
  return %i : i32
}
