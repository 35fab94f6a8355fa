//===- CudaEmulator.h - Run a distributed CUDA kernel on CPU threads -*- C++ -*-===//
//
// `pallasc run --target cuda:<arch> --emulate` checks the GPU lowering on a
// machine without a GPU: the gpu.func that pallas-to-gpu produced (after
// buildCudaDistributionPipeline, before NVVM) is rewritten into a host
// function and JIT-compiled, and every CUDA thread of every block is run as
// an OS thread. Thread and block ids, barriers, warp shuffles, mma.sync and
// ldmatrix become calls into this file, which implements them with the PTX
// semantics (fragment layouts included), so the layouts, reductions, layout
// conversions, barriers and shared memory use of the lowering are all
// exercised. What it does not check is NVPTX code generation and ptxas.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_RUNTIME_CUDAEMULATOR_H
#define PALLASC_SRC_RUNTIME_CUDAEMULATOR_H

#include "src/Launch/GpuLaunchRecord.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string>

namespace pallasc::runtime {

/// Runs the kernel of `distributed` (modified: lowered for the host) over
/// the launch grid `grid` (x, y, z), with the block, warp size, dynamic
/// shared memory and tensor maps of its launch record `record`. `buffers`
/// holds one pointer per array parameter of the kernel, in order; `scalars`
/// the i32 parameters that follow them (dynamic grid bounds). Shared memory
/// is allocated below 2 GiB so that the 32-bit shared addresses the
/// lowering computes are host addresses too.
bool emulateGpuKernel(mlir::ModuleOp distributed,
                      const launch::GpuLaunchRecord &record,
                      llvm::ArrayRef<void *> buffers,
                      llvm::ArrayRef<int32_t> scalars, const int64_t grid[3],
                      std::string &error);

} // namespace pallasc::runtime

#endif // PALLASC_SRC_RUNTIME_CUDAEMULATOR_H
