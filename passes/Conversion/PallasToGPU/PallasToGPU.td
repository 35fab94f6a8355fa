//===- PallasToGPU.td - pallas to gpu/nvvm pass definitions -*- tablegen -*-===//
//
// Included from passes/Conversion/Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_CONVERSION_PALLASTOGPU_TD
#define PALLASC_PASSES_CONVERSION_PALLASTOGPU_TD

include "mlir/Pass/PassBase.td"

def PallasGPUPrepare : Pass<"pallas-gpu-prepare", "::mlir::ModuleOp"> {
  let summary = "Record the grid mapping and rewrite the ops the GPU lowers "
                "itself, before pallas-to-linalg";
  let description = [{
    The GPU lowering needs what `pallas-to-linalg` erases or lowers for the
    CPU. This pass runs first and:

    - records the module's single `pallas.call` (grid, block specs, scratch,
      aliases, compiler params, operand types) on the module as
      `pallas.gpu.call`, a `#pallas.gpu_call`;
    - rewrites `pallas.atomic_rmw` / `pallas.atomic_cas` on scalars into
      `memref.atomic_rmw` / `memref.generic_atomic_rmw` on the ref (seen as a
      memref through an `unrealized_conversion_cast` that folds away once
      the ref is a memref), with interpret mode's clamping of dynamic starts
      and dropping of out-of-bounds lanes; block-valued atomics become a
      loop over the lanes;
    - rewrites `pallas.multiple_of %x, n` on `i32` scalars into
      `arith.andi %x, -n` (exact when the hint holds), so the divisibility
      survives for the alignment analysis;
    - rewrites `pallas.debug_print` of scalars into `gpu.printf`.

    ```mlir
    %old = pallas.atomic_rmw add %hist[%b], %one : !pallas.ref<256xi32>, i32
    ```
    becomes
    ```mlir
    %m = builtin.unrealized_conversion_cast %hist
        : !pallas.ref<256xi32> to memref<256xi32>
    %old = scf.if %in_bounds -> (i32) {
      %o = memref.atomic_rmw addi %one, %m[%i] : (i32, memref<256xi32>) -> i32
      scf.yield %o : i32
    } else { ... }
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def PallasToGPU : Pass<"pallas-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Distribute a lowered pallas kernel over a GPU thread block "
                "(CUDA CTA or HIP workgroup)";
  let description = [{
    Runs after `pallas-gpu-prepare` and `pallas-to-linalg`. Builds a
    `gpu.module @<name>_kernels` holding one `gpu.func @<name> kernel`
    (one grid point = one thread block of `num_warps` x 32 threads, or
    `num_warps` x 64 on AMD, whose warps are wave64 wavefronts) and
    erases the host functions:

    - parameters: every call input (scalar-prefetch ones first) and output
      as a memref of the whole array, then one `i32` per dynamic grid bound;
    - grid: the axes that must run in order (marked `arbitrary` in
      `compiler_params.tpu.dimension_semantics`, or that some output's index
      map ignores, so its block is revisited) become an `scf.for` nest inside
      the block; the others are the CUDA grid, folded into `x` beyond three
      dimensions (and when y/z would exceed 65535) as Pallas' Triton lowering
      does, vmapped axes last;
    - each block's start is computed in the kernel from the grid indices and
      the index map (clamped as interpret mode's `dynamic_slice` does);
      accesses past an array's edge read the uninitialized value and are not
      written;
    - scratch buffers live in dynamic shared memory, as does the workspace
      of layout conversions and cross-warp reductions;
    - the block-level tensor program is distributed over the threads with
      linear layouts (Layout.h): coalesced blocked layouts for memory,
      `mma.sync` fragment layouts for dots on f16/bf16 (sm_80+), MFMA
      16x16x16 fragment layouts (`amdgpu.mfma`) on gfx90a/gfx94x,
      warp shuffles for reductions within a warp and shared memory across
      warps, vectorized global accesses where alignment is proven.

    The launch geometry is recorded on the `gpu.func` as the
    `pallas.gpu.launch` dictionary (grid, block, dynamic shared memory,
    grid-axis mapping, parameters) for the manifest.

    `print-layouts` shows the layout assignment's result
    (LayoutAssignment.cpp) as remarks (lit/Conversion/pallas-to-gpu-layouts.mlir),
    e.g. on a bf16 load of a 32x32 block on sm_80:

    ```
    remark: result 0: Blocked <[32, 32] regs=[1, 2, 4] lanes=[8, 16, 32, 64, 128] warps=[256, 512]>
    ```

    `print-schedule` shows the software pipeline each mma.sync or wgmma dot
    is emitted with (PipelineSchedule.h) as remarks
    (lit/Conversion/pallas-to-gpu-schedule.mlir), e.g. on sm_90a for a
    matmul whose operands both come from two TMA stages:

    ```
    remark: pipeline: stages 2 ahead 1 copy-wait 0 wait-group 1 chunks 4 x 16 a tma b tma
    ```
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"sm_80\"",
           "GPU chip, an entry of the GPU target table (chips/GpuTarget.h; "
           "`pallasc --version` lists them): an NVIDIA sm_* (32-thread warps, "
           "mma.sync from sm_80, wgmma on sm_90a) or an AMD gfx* (CDNA: "
           "64-thread wavefronts and MFMA; RDNA: 32-thread waves and WMMA)">,
    Option<"numWarpsOverride", "num-warps", "int64_t", "0",
           "Warps per thread block (0: compiler_params.gpu.num_warps, "
           "else 4)">,
    Option<"printLayouts", "print-layouts", "bool", "false",
           "For tests: after the layout assignment, a remark on each op of "
           "the kernel body per tensor result naming the layout it was "
           "given (family and linear layout, or `flexible`)">,
    Option<"printSchedules", "print-schedule", "bool", "false",
           "For tests: a remark on each mma.sync or wgmma dot with its "
           "software pipeline (Analysis/PipelineSchedule.h): copy stages, "
           "steps copied ahead, cp.async and wgmma wait depths, k chunks, "
           "and where each operand comes from">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::nvgpu::NVGPUDialect", "::mlir::amdgpu::AMDGPUDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::math::MathDialect",
    "::mlir::ub::UBDialect", "::mlir::DLTIDialect"
  ];
}

def PallasNVGPUToNVVM : Pass<"pallas-nvgpu-to-nvvm", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Lower the nvgpu ops pallas-to-gpu emits (cp.async) to NVVM, "
                "with the gpu.module's index width";
  let description = [{
    Runs after `convert-gpu-to-nvvm`. Upstream's `convert-nvgpu-to-nvvm`
    always converts memrefs with 64-bit indices, while `pallas-to-gpu`
    gives small kernels 32-bit ones (`dlti.dl_spec` on the `gpu.module`),
    leaving casts between mismatched descriptors; this pass applies the same
    upstream patterns (`populateNVGPUToNVVMConversionPatterns`) with a type
    converter built from the module's data layout. It also prints the global
    loads that carry a `pallas.load`'s `eviction_policy` (their location is
    fused with the metadata `"pallas.eviction_policy=POLICY"`) as inline
    PTX, `ld.global.L1::evict_first` / `L1::evict_last`.
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect"
  ];
}

#endif // PALLASC_PASSES_CONVERSION_PALLASTOGPU_TD
