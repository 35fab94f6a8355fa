//===- RocmArtifacts.h - --target rocm:<arch>: HSACO + launch --*- C++ -*-===//
//
// The AMD target of the driver: lowers a copy of the compiled module with
// the ROCm pipeline (passes/Pipelines/RocmPipeline.h) once per requested
// architecture, assembles the AMDGPU assembly and links the code object
// with ld.lld into `<name>.<arch>.hsaco`, and describes the launch in the
// manifest entry (grid, block, LDS, how the pallas grid maps to HIP's,
// kernel arguments, and the SGPR/VGPR/spill counts read from the code
// object's AMDHSA notes). docs/rocm.md documents the fields.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_TARGET_ROCMARTIFACTS_H
#define PALLASC_SRC_TARGET_ROCMARTIFACTS_H

#include "src/Launch/GpuLaunchRecord.h"
#include "src/Manifest/Manifest.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace pallasc {

/// True for the `rocm:<chip>` targets of the GPU target table
/// (chips/GpuTarget.h): rocm:gfx90a, rocm:gfx942.
bool isRocmTarget(const std::string &target);

/// The ld.lld executable that links code objects: $PALLASC_LD_LLD, the
/// LLVM this build uses, then ld.lld-22 / ld.lld on PATH; empty when none.
std::string findLdLld();

struct GpuTarget;
struct GpuVendorLowering;
/// The AMD parts of the GPU compile sequence (GpuArtifacts.h) for `chip`:
/// the ROCm distribution and codegen pipelines for code object version
/// `codeObjectVersion`, linking the device libraries under `deviceLibs`
/// (a located error at `kernelLoc` when codegen fails without any), IEEE
/// f32 division with `strictFloat`.
GpuVendorLowering rocmVendorLowering(const GpuTarget &chip,
                                     int codeObjectVersion,
                                     const std::string &deviceLibs,
                                     mlir::Location kernelLoc,
                                     bool strictFloat);

/// The HSACOs, their manifest entries, the --emit=mlir / --emit=asm extras.
struct RocmArtifacts : TargetArtifacts {
  /// With `launcherImages`: per architecture, what a generated launcher
  /// embeds (src/Driver/LauncherGen.h).
  struct Image {
    std::string arch;  ///< "gfx942"
    std::string hsaco;
    int codeObjectVersion = 5;
    launch::GpuLaunchRecord record;
  };
  std::vector<Image> images;
};

/// Builds the HSACO of `module` (after the call-level transforms; not
/// modified) for every `rocm:<arch>` in `targets`, as code object version
/// `codeObjectVersion` (4, 5 or 6). `emitText` adds the distributed GPU IR
/// as `<name>.<arch>.gpu.mlir`; `emitAsm` the AMDGPU assembly as
/// `<name>.<arch>.s`. `strictFloat`: no FMA contraction
/// (RocmPipelineOptions::strictFloat). A kernel whose AMDHSA notes count
/// spilled registers is a warning, an error with `spillsAreErrors`.
/// Diagnostics go to the module's context. A call
/// eliminated by pallas-dce yields no files.
mlir::FailureOr<RocmArtifacts>
emitRocmArtifacts(mlir::ModuleOp module, const std::string &name,
                  const std::vector<std::string> &targets, bool emitText,
                  bool emitAsm, int codeObjectVersion = 5,
                  bool strictFloat = false, bool spillsAreErrors = false,
                  bool launcherImages = false);

} // namespace pallasc

#endif // PALLASC_SRC_TARGET_ROCMARTIFACTS_H
