//===- CudaArtifacts.h - --target cuda:<arch>: PTX + launch ----*- C++ -*-===//
//
// The NVIDIA target of the driver: lowers a copy of the compiled module with
// the CUDA pipeline (passes/Pipelines/CudaPipeline.h) once per requested
// architecture, writes `<name>.<arch>.ptx`, and describes the launch in the
// manifest entry (grid, block, dynamic shared memory, how the pallas grid
// maps to CUDA's, kernel parameters, and `ptxas -v` resource usage when
// ptxas is installed). docs/cuda.md documents the fields.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_TARGET_CUDAARTIFACTS_H
#define PALLASC_SRC_TARGET_CUDAARTIFACTS_H

#include "src/Launch/GpuLaunchRecord.h"
#include "src/Manifest/Manifest.h"

#include "mlir/IR/BuiltinOps.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir::pallas {
class GpuLaunchAttr;
} // namespace mlir::pallas

namespace pallasc {

struct GpuTarget;

/// True for the `cuda:<chip>` targets of the GPU target table
/// (chips/GpuTarget.h): cuda:sm_80, cuda:sm_90a, ...
bool isCudaTarget(const std::string &target);

/// `ptxas -v` resource usage of one kernel.
struct PtxasUsage {
  int64_t registers = 0;
  int64_t spillStores = 0, spillLoads = 0;
  int64_t stackFrame = 0;
  int64_t barriers = 0;
  int64_t sharedStatic = 0;
};

/// Parses `ptxas -v` output for `entry`; nullopt when it has no usage line.
std::optional<PtxasUsage> parsePtxasVerbose(llvm::StringRef text,
                                            llvm::StringRef entry);

/// The ptxas executable to validate PTX with: $PTXAS (`none`: do not
/// validate), $CUDA_HOME/bin, /usr/local/cuda/bin, then PATH; empty when
/// there is none.
std::string findPtxas();

struct GpuTarget;
struct GpuVendorLowering;
/// The CUDA parts of the GPU compile sequence (GpuArtifacts.h) for `chip`:
/// the CUDA distribution and codegen pipelines (libdevice from the default
/// toolkit), IEEE f32 division with `strictFloat`. With `mosaicGpu` the
/// distribution is pallas-mgpu-to-gpu's, for a Mosaic GPU kernel.
GpuVendorLowering cudaVendorLowering(const GpuTarget &chip, bool strictFloat,
                                     bool mosaicGpu = false);

/// The PTX (and cubins), their manifest entries, the --emit=mlir extras.
struct CudaArtifacts : TargetArtifacts {
  /// With `launcherImages`: per architecture, what a generated launcher
  /// embeds (src/Driver/LauncherGen.h).
  struct Image {
    std::string arch;  ///< "sm_90a"
    std::string ptx;
    std::string cubin; ///< empty without ptxas
    launch::GpuLaunchRecord record;
  };
  std::vector<Image> images;
};

/// What emitCudaArtifacts builds besides the PTX, and how.
struct CudaArtifactOptions {
  /// The distributed GPU IR as `<name>.<arch>.gpu.mlir`.
  bool emitText = false;
  /// The cubin ptxas assembles, `<name>.<arch>.cubin` (an error without
  /// ptxas).
  bool emitCubin = false;
  /// IEEE floating point (CudaPipelineOptions::strictFloat).
  bool strictFloat = false;
  /// A kernel that ptxas reports spilling is a warning, an error with this.
  bool spillsAreErrors = false;
  /// Fill CudaArtifacts::images (the cubin whenever ptxas runs, even
  /// without `emitCubin`).
  bool launcherImages = false;
};

/// Builds the PTX of `module` (after the call-level transforms; not
/// modified) for every `cuda:<arch>` in `targets`, and what `options` asks.
/// Diagnostics go to the module's context. A call eliminated by pallas-dce
/// yields no files. A Mosaic GPU kernel (`pallas_mgpu` ops) is lowered by
/// pallas-mgpu-to-gpu instead of the pallas distribution, to the same
/// artifacts.
mlir::FailureOr<CudaArtifacts>
emitCudaArtifacts(mlir::ModuleOp module, const std::string &name,
                  const std::vector<std::string> &targets,
                  const CudaArtifactOptions &options);

/// emitCudaArtifacts in two halves, so that ptxas runs while the compile
/// does other work: startCudaArtifacts lowers every cuda:<arch> and starts
/// ptxas on each PTX (the processes run in parallel with what follows);
/// finishCudaArtifacts waits for them, in target order, and gives what
/// emitCudaArtifacts gives, byte for byte. Destroying the pending state
/// unfinished kills the ptxas processes and removes their files. A null
/// pending state (no pallas.call left) finishes with no artifacts.
struct PendingCudaArtifacts;
struct PendingCudaArtifactsDeleter {
  void operator()(PendingCudaArtifacts *p) const;
};
using PendingCudaArtifactsPtr =
    std::unique_ptr<PendingCudaArtifacts, PendingCudaArtifactsDeleter>;

mlir::FailureOr<PendingCudaArtifactsPtr>
startCudaArtifacts(mlir::ModuleOp module, const std::string &name,
                   const std::vector<std::string> &targets,
                   const CudaArtifactOptions &options);

mlir::FailureOr<CudaArtifacts>
finishCudaArtifacts(PendingCudaArtifacts *pending);

} // namespace pallasc

#endif // PALLASC_SRC_TARGET_CUDAARTIFACTS_H
