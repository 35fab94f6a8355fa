//===- GpuEmulator.h - Run a distributed GPU kernel on CPU threads -*- C++ -*-===//
//
// `pallasc run --target cuda|rocm:<arch> --emulate` checks the GPU lowering
// on a machine without a GPU: the gpu.func that pallas-to-gpu produced
// (after the distribution pipeline, before NVVM/ROCDL) is rewritten into a
// host function and JIT-compiled (HostKernel.h), and every thread of every
// block runs as a fiber on the calling thread (Scheduler.h). Thread and
// block ids, barriers, warp shuffles, mma.sync, MFMA, WMMA, wgmma, ldmatrix,
// cp.async, TMA and mbarriers become calls of the intrinsics
// (Intrinsics.h), which implement them with the PTX / CDNA / RDNA semantics
// (fragment layouts included), so the layouts, reductions, layout
// conversions, barriers and shared memory use of the lowering are all
// exercised, for 32-lane warps and 32- or 64-lane wavefronts. What it does not
// check is NVPTX/AMDGPU code generation and ptxas.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_RUNTIME_GPUEMULATOR_GPUEMULATOR_H
#define PALLASC_SRC_RUNTIME_GPUEMULATOR_GPUEMULATOR_H

#include "src/Launch/GpuLaunchRecord.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace pallasc::runtime {

class JitObjectCache;

/// Runs the kernel of `distributed` (modified: lowered for the host) over
/// the launch grid `grid` (x, y, z), with the block, warp size, dynamic
/// shared memory and tensor maps of its launch record `record`. `buffers`
/// holds one pointer per array parameter of the kernel, in order; `scalars`
/// the i32 parameters that follow them (dynamic grid bounds). Shared memory
/// is allocated below 2 GiB so that the 32-bit shared addresses the
/// lowering computes are host addresses too. With `objects` (keyed on
/// `distributed` as given), the host kernel's object code is taken from it
/// when there (no lowering, no code generation) and stored in it when not.
bool emulateGpuKernel(mlir::ModuleOp distributed,
                      const launch::GpuLaunchRecord &record,
                      llvm::ArrayRef<void *> buffers,
                      llvm::ArrayRef<int32_t> scalars, const int64_t grid[3],
                      std::string &error, JitObjectCache *objects = nullptr);

/// emulateGpuKernel in two steps, for a kernel launched many times (vmap's
/// batch loop): the kernel lowered for the host and JIT-compiled once, then
/// run per launch.
class EmulatedGpuKernel {
public:
  /// Compiles the kernel of `distributed` (modified: lowered for the host;
  /// `objects` as for emulateGpuKernel); null with `error` set on failure.
  static std::unique_ptr<EmulatedGpuKernel>
  compile(mlir::ModuleOp distributed, const launch::GpuLaunchRecord &record,
          std::string &error, JitObjectCache *objects = nullptr);
  ~EmulatedGpuKernel();

  /// One launch over `grid` (x, y, z): `buffers` and `scalars` as for
  /// emulateGpuKernel. With `reversed`, on another legal schedule (the
  /// blocks last first, each round's runnable threads last first): a
  /// kernel without races gives the same bits.
  bool run(llvm::ArrayRef<void *> buffers, llvm::ArrayRef<int32_t> scalars,
           const int64_t grid[3], std::string &error, bool reversed = false);

private:
  struct Impl;
  explicit EmulatedGpuKernel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

} // namespace pallasc::runtime

#endif // PALLASC_SRC_RUNTIME_GPUEMULATOR_GPUEMULATOR_H
