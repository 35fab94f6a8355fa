//===- GPUCodegen.td - small passes on the distributed GPU kernel -*- tablegen -*-===//

#ifndef PALLASC_PASSES_CONVERSION_GPUCODEGEN_TD
#define PALLASC_PASSES_CONVERSION_GPUCODEGEN_TD

include "mlir/Pass/PassBase.td"

def PallasGPUFloatSemantics
    : Pass<"pallas-gpu-float-semantics", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Give the distributed kernel the floating-point semantics "
                "Pallas' GPU lowerings give it (FMA contraction, f32 "
                "division)";
  let description = [{
    Runs on the distributed `gpu.module` (after `pallas-to-gpu`, before the
    NVVM/ROCDL lowering; the CUDA emulator runs what it leaves). The default
    follows Pallas' Triton lowering (docs/cuda.md, "Floating point"):

    - **FMA contraction allowed**: every floating-point `arith.addf`,
      `arith.subf` and `arith.mulf` gets the `contract` fast-math flag, so
      LLVM fuses a multiply feeding an add into one `fma.rn` (and the PTX it
      cannot fuse keeps `mul.f32`/`add.f32`, which ptxas may still fuse), as
      Triton does by default (`enable_fp_fusion`).
    - With `approx-div` (the CUDA targets): f32 `arith.divf` becomes
      `llvm.nvvm.div.full` (`div.full.f32`: full-range, at most 2 ulp), the
      instruction Triton gives `arith.divf`, instead of the IEEE-rounded
      `div.rn.f32` with its slow-path subroutine. Vector divisions are
      unrolled.

    With `strict` nothing is changed: no contraction (`mul.rn`/`add.rn`),
    IEEE-rounded division, as the CPU runner computes.

    Before:
    ```mlir
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %p, %c : f32
    %q = arith.divf %s, %d : f32
    ```
    After (`approx-div`):
    ```mlir
    %p = arith.mulf %a, %b fastmath<contract> : f32
    %s = arith.addf %p, %c fastmath<contract> : f32
    %q = llvm.call_intrinsic "llvm.nvvm.div.full"(%s, %d) : (f32, f32) -> f32
    ```
  }];
  let options = [
    Option<"strict", "strict", "bool", /*default=*/"false",
           "IEEE semantics: no FMA contraction, IEEE-rounded division">,
    Option<"approxDiv", "approx-div", "bool", /*default=*/"false",
           "f32 division as div.full.f32 (NVIDIA; ignored with strict)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def PallasGPUExternSharedMemory
    : Pass<"pallas-gpu-extern-shared-memory", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Declare the dynamic shared memory as an extern array "
                "(NVIDIA)";
  let description = [{
    Runs after `convert-gpu-to-nvvm`, which gives `gpu.dynamic_shared_memory`
    an internal zero-length global in address space 3. LLVM's NVPTX backend
    demotes such a global into the kernel as a 1-byte `.shared .b8` variable,
    and ptxas then reports "potential out of bound access" on every wider
    access and counts one byte of static shared memory. External linkage
    gives what CUDA's `extern __shared__` (and Triton) declare,
    `.extern .shared .align 16 .b8 NAME[];`.

    Before:
    ```mlir
    llvm.mlir.global internal @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64, dso_local} : !llvm.array<0 x i8>
    ```
    After:
    ```mlir
    llvm.mlir.global external @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64, dso_local} : !llvm.array<0 x i8>
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // PALLASC_PASSES_CONVERSION_GPUCODEGEN_TD
