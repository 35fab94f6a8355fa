//===- PallasToGPU.td - pallas to gpu/nvvm pass definitions -*- tablegen -*-===//
//
// Included from passes/Conversion/Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_CONVERSION_PALLASTOGPU_TD
#define PALLASC_PASSES_CONVERSION_PALLASTOGPU_TD

include "mlir/Pass/PassBase.td"

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

#endif // PALLASC_PASSES_CONVERSION_PALLASTOGPU_TD
