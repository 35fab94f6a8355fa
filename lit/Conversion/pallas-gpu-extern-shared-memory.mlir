// RUN: pallasc-opt %s -pass-pipeline='builtin.module(gpu.module(pallas-gpu-extern-shared-memory))' | FileCheck %s

// Only the zero-length, uninitialised, internal array in address space 3 that
// convert-gpu-to-nvvm makes for gpu.dynamic_shared_memory becomes external
// (PTX `.extern .shared .align 16 .b8 NAME[]`); every other global keeps its
// linkage.

// CHECK-LABEL: gpu.module @m
// CHECK: llvm.mlir.global external @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64, dso_local} : !llvm.array<0 x i8>
// CHECK: llvm.mlir.global internal @static_smem() {addr_space = 3 : i32, alignment = 16 : i64, dso_local} : !llvm.array<256 x i8>
// CHECK: llvm.mlir.global internal @generic_empty() {addr_space = 0 : i32, alignment = 16 : i64, dso_local} : !llvm.array<0 x i8>
// CHECK: llvm.mlir.global private @private_empty() {addr_space = 3 : i32, alignment = 16 : i64, dso_local} : !llvm.array<0 x i8>
// CHECK: llvm.mlir.global internal constant @initialised(dense<0> : tensor<0xi8>) {addr_space = 3 : i32, dso_local} : !llvm.array<0 x i8>
gpu.module @m {
  llvm.mlir.global internal @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64, dso_local} : !llvm.array<0 x i8>
  llvm.mlir.global internal @static_smem() {addr_space = 3 : i32, alignment = 16 : i64, dso_local} : !llvm.array<256 x i8>
  llvm.mlir.global internal @generic_empty() {addr_space = 0 : i32, alignment = 16 : i64, dso_local} : !llvm.array<0 x i8>
  llvm.mlir.global private @private_empty() {addr_space = 3 : i32, alignment = 16 : i64, dso_local} : !llvm.array<0 x i8>
  llvm.mlir.global internal constant @initialised(dense<0> : tensor<0xi8>) {addr_space = 3 : i32, dso_local} : !llvm.array<0 x i8>
}

// A kernel's module without any shared memory is left as it is.
// CHECK-LABEL: gpu.module @none
// CHECK-NEXT: llvm.func @f()
gpu.module @none {
  llvm.func @f() {
    llvm.return
  }
}
