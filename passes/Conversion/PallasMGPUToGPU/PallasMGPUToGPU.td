//===- PallasMGPUToGPU.td - pallas_mgpu to gpu/nvvm -------*- tablegen -*-===//
//
// Included from passes/Conversion/Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_CONVERSION_PALLASMGPUTOGPU_TD
#define PALLASC_PASSES_CONVERSION_PALLASMGPUTOGPU_TD

include "mlir/Pass/PassBase.td"

def PallasMGPUToGPU : Pass<"pallas-mgpu-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Lower a Mosaic GPU kernel (pallas_mgpu) to a gpu.func with "
                "NVVM ops for cuda:sm_90a";
  let description = [{
    Turns the module's `pallas_mgpu.kernel` into a `gpu.module` holding one
    `gpu.func` (the same name) whose parameters are the kernel's arrays
    (inputs, then outputs) followed by one pointer per TMA tensor map, and
    records the launch on it (`pallas.gpu.launch`: the grid, 128 threads per
    warpgroup, the dynamic shared memory, the tensor maps' global and box
    shapes), as `pallas-to-gpu` does for a `pallas_call`. The body runs per
    warpgroup, as in Mosaic GPU's warpgroup semantics (docs/cuda.md,
    "Mosaic GPU kernels"):

    - `axis_index`: the block index of a grid axis, 0 on a cluster axis of
      size 1, `tid.x / 128` on the thread axis; in clusters of more than
      one block (their shape `nvvm.cluster_dim`, the launch grid x cluster
      blocks), `%clusterid` of a grid axis and `%cluster_ctaid` of a
      cluster axis;
    - `set_max_registers` → `nvvm.setmaxregister`;
    - `alloc_smem`: a 1024-byte aligned slot of the dynamic shared memory,
      laid out as 128-byte-swizzled panels (64 f16 columns, all rows), the
      layout TMA writes and wgmma reads;
    - `alloc_barriers`: mbarriers in shared memory, initialized by thread 0
      with `arrivals * 128` (every thread of a warpgroup arrives), each
      thread keeping one phase bit per barrier;
    - `barrier_arrive` → `mbarrier.arrive`, `barrier_wait` →
      `mbarrier.try_wait.parity` on the thread's phase bit, then flips it;
    - `copy_gmem_to_smem` → every thread `mbarrier.arrive.expect_tx`s its
      share of the bytes, thread 0 of the warpgroup issues one
      `cp.async.bulk.tensor` box per panel;
    - `wgmma` → `wgmma.fence`, `wgmma.mma_async` m64nNk16 per 64 rows and
      16 of k (matrix descriptors with the 128-byte swizzle: A K-major, B
      M/N-major), `wgmma.commit_group`; `wgmma_wait` →
      `wgmma.wait_group`; the accumulator lives in registers;
    - `acc_read`, element-wise `arith` ops, `tensor.extract_slice` and
      `pallas_mgpu.store` on values in the accumulator's (wgmma) layout;
    - `commit_smem` → a warpgroup barrier; `copy_smem_to_gmem` → the
      warpgroup copies the tile with 16-byte loads and stores;
      `wait_smem_to_gmem` → a warpgroup barrier; `commit_group` → nothing.

    What it does not lower yet is a located error naming the op.
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"sm_90a\"",
           "CUDA chip of the GPU target table (only sm_90a)">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::DLTIDialect",
    "::mlir::vector::VectorDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect"
  ];
}

#endif // PALLASC_PASSES_CONVERSION_PALLASMGPUTOGPU_TD
