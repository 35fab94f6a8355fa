// RUN: not pallasc-opt %s -pallas-resolve-platform=platform=mosaic 2>&1 | FileCheck %s
// The pass: passes/Transforms/ResolvePlatform.cpp.

// Tests that a platform with no group and no default is an error at the
// op, naming the platform and the groups.

// CHECK: resolve-platform-invalid.mlir:[[# @LINE + 2]]:8: error: lax.platform_dependent has no branch for the platform 'mosaic' (its branches: cuda/rocm, cpu) and no default branch
func.func @no_default() -> i32 {
  %i = pallas.platform_index [["cuda", "rocm"], ["cpu"]] : i32
  return %i : i32
}
