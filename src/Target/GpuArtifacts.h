//===- GpuArtifacts.h - The GPU targets' shared compile sequence -*- C++ -*-===//
//
// What --target cuda:<arch> (CudaArtifacts) and --target rocm:<arch>
// (RocmArtifacts) do alike, once: pick the requested chips of one vendor,
// and per chip lower a copy of the module with the vendor's distribution
// pipeline, read the launch record pallas-to-gpu attached to the kernel,
// check it against the chip, print the distributed IR when asked, run the
// vendor's code generation pipeline and take the object it serialized (PTX,
// AMDGPU assembly). The vendor parts (pipelines, messages, what follows the
// object: ptxas, assembling and linking) stay in the vendor's file. Also
// the checks and records both vendors' artifacts share: the register
// footprint and shared memory checks, spill reports, the manifest's
// `launch` object.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_TARGET_GPUARTIFACTS_H
#define PALLASC_SRC_TARGET_GPUARTIFACTS_H

#include "src/Launch/GpuLaunchRecord.h"

#include "dialects/Pallas/IR/GpuLaunchAttrs.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Location.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringRef.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace pallasc {

struct GpuTarget;

/// Whether `module` still holds a pallas.call (pallas-dce may have
/// eliminated it: then a GPU target has nothing to compile).
bool hasPallasCall(mlir::ModuleOp module);

/// The location of the module's pallas.kernel or pallas_mgpu.kernel (the
/// module's without one):
/// where the diagnostics about the kernel as a whole point.
mlir::Location kernelLocation(mlir::ModuleOp module);

/// A `--target` of one vendor and its chip in the GPU target table.
struct VendorTarget {
  std::string target; ///< "cuda:sm_90a"
  const GpuTarget *chip;
};

/// The distinct entries of `targets` that `isVendorTarget` accepts, in
/// order, with their chips.
std::vector<VendorTarget>
vendorTargets(const std::vector<std::string> &targets,
              bool (*isVendorTarget)(const std::string &));

/// The vendor's parts of the GPU compile sequence (distributeGpuKernel,
/// generateGpuObject, lowerGpuKernel): its two pipelines, built for one
/// chip with the vendor's options (cudaVendorLowering, rocmVendorLowering),
/// and its messages.
struct GpuVendorLowering {
  /// "CUDA", "AMD": "the <name> lowering produced no kernel".
  const char *name;
  /// The CompileStage of the code generation pipeline.
  const char *codegenStage;
  /// What the code generation serializes: "PTX", "assembly".
  const char *objectName;
  std::function<void(mlir::OpPassManager &)> buildDistribution;
  std::function<void(mlir::OpPassManager &)> buildCodegen;
  /// Called when the code generation pipeline fails (its diagnostics are
  /// out), for a more precise error; may be empty.
  std::function<void()> codegenFailed;
};

/// One chip's kernel after the vendor's distribution pipeline.
struct DistributedGpuKernel {
  /// The distributed copy of the module: a gpu.module holding the kernel.
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::string entry; ///< the gpu.func's name
  /// pallas-to-gpu's `pallas.gpu.launch` record; uniqued in the context, it
  /// outlives the module copy.
  mlir::pallas::GpuLaunchAttr launch;
};

/// One chip's kernel, lowered by lowerGpuKernel.
struct LoweredGpuKernel {
  std::string entry; ///< the gpu.func's name
  mlir::pallas::GpuLaunchAttr launch; ///< as DistributedGpuKernel's
  std::string object; ///< the serialized object (PTX text, AMDGPU assembly)
  /// With `emitText`: the distributed GPU IR (`<name>.<arch>.gpu.mlir`).
  std::optional<std::string> gpuText;
};

/// Fails (located at `loc`) when the dynamic shared memory of a
/// `pallas.gpu.launch` record exceeds what one block may use on `target`.
mlir::LogicalResult checkSharedMemory(mlir::Location loc,
                                      mlir::pallas::GpuLaunchAttr launch,
                                      const GpuTarget &target);

/// One kernel value (a loaded block, any tensor) may take at most this many
/// 32-bit registers per thread on a GPU target.
constexpr int64_t kMaxRegisterWordsPerValue = 2048;

/// Fails, with an error at the value naming its type, the warps, the
/// registers per thread and the limit, when a tensor value of the module's
/// kernel, distributed over the call's num_warps on `target`, needs more
/// than kMaxRegisterWordsPerValue registers per thread: the lowering unrolls
/// each thread's share, so such a block would take minutes to compile into
/// a kernel spilling nearly all of it. Checked before the lowering.
mlir::LogicalResult checkRegisterFootprint(mlir::ModuleOp module,
                                           const GpuTarget &target);

/// Reports that a kernel spills registers (`message` names the kernel, the
/// target and the numbers) at `loc`: a warning, or with `spillsAreErrors`
/// (--Werror=spills) an error, then failure.
mlir::LogicalResult reportSpills(mlir::Location loc, llvm::StringRef message,
                                 bool spillsAreErrors);

/// The manifest's `launch` object of a GPU artifact from pallas-to-gpu's
/// `pallas.gpu.launch` record (docs/cuda.md, docs/rocm.md): grid (null for
/// a dynamic size), grid_axes as {x, y, z}, indexed params, arch, kind
/// ("cuda" or "hip").
nlohmann::json gpuLaunchJson(mlir::pallas::GpuLaunchAttr launch,
                             llvm::StringRef arch, llvm::StringRef kind);

/// Distributes a copy of `module` (not modified) for `chip` (`target` names
/// it in messages and steps): the register footprint check, the vendor's
/// distribution pipeline, the launch record (an error without one) and the
/// shared memory check. What `pallasc --target` compiles and `pallasc run
/// --target` runs (or emulates) both start here. Diagnostics go to the
/// module's context.
mlir::FailureOr<DistributedGpuKernel>
distributeGpuKernel(mlir::ModuleOp module, mlir::Location kernelLoc,
                    const std::string &target, const GpuTarget &chip,
                    const GpuVendorLowering &vendor);

/// Runs the vendor's code generation pipeline on a distributed kernel
/// (`distributed` is rewritten) and returns the object it serialized (PTX
/// text, AMDGPU assembly); an error when there is none.
mlir::FailureOr<std::string>
generateGpuObject(mlir::ModuleOp distributed, const std::string &target,
                  const GpuVendorLowering &vendor);

/// distributeGpuKernel, the distributed IR with `emitText`, then
/// generateGpuObject: one chip's artifact before the vendor's last steps.
mlir::FailureOr<LoweredGpuKernel>
lowerGpuKernel(mlir::ModuleOp module, mlir::Location kernelLoc,
               const std::string &target, const GpuTarget &chip,
               const GpuVendorLowering &vendor, bool emitText);

} // namespace pallasc

#endif // PALLASC_SRC_TARGET_GPUARTIFACTS_H
