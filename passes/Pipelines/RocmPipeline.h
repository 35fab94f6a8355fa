//===- RocmPipeline.h - pallas kernels to AMDGPU ----------------*- C++ -*-===//
//
// The AMD pipeline (docs/rocm.md): the GPU distribution shared with the
// NVIDIA pipeline (GpuPipeline.h: pallas-gpu-prepare, pallas-to-linalg,
// pallas-to-gpu with a gfx chip: wave64 + MFMA on CDNA, wave32 + WMMA on
// RDNA), then upstream's amdgpu/gpu -> rocdl and
// gpu-module-to-binary to AMDGPU assembly with the ROCm device libraries
// (ocml/ockl) linked. Registered as `pallas-to-rocm-pipeline`; the driver
// assembles and links the code object (src/Target/RocmArtifacts.h).
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_PIPELINES_ROCMPIPELINE_H
#define PALLASC_PASSES_PIPELINES_ROCMPIPELINE_H

#include <string>

namespace mlir {
class DialectRegistry;
class OpPassManager;
} // namespace mlir

namespace mlir::pallas {

struct RocmPipelineOptions {
  /// An AMD chip of the GPU target table (chips/GpuTarget.h): gfx90a, ...
  std::string chip = "gfx90a";
  /// Code object ABI version as ROCDL spells it: "400", "500", "600".
  std::string abiVersion = "500";
  unsigned optLevel = 3;
  /// Directory holding amdgcn/bitcode/{ocml,ockl}.bc; empty: see
  /// defaultRocmDeviceLibsRoot.
  std::string deviceLibsRoot;
  /// Strict IEEE floating point (no FMA contraction), see
  /// GpuDistributionOptions (GpuPipeline.h).
  bool strictFloat = false;
  /// Stop before serializing (the gpu.module then holds the ROCDL/LLVM
  /// dialect instead of a gpu.binary with AMDGPU assembly).
  bool serialize = true;
};

/// The directory holding `amdgcn/bitcode` (ROCm's device libraries):
/// $ROCM_PATH when it is set ("" when it lacks them), else /opt/rocm, then
/// Debian's rocm-device-libs (/usr/lib/x86_64-linux-gnu); "" when none has
/// them.
std::string defaultRocmDeviceLibsRoot();

/// Up to the distributed gpu.module (which carries the launch record): the
/// GPU distribution of GpuPipeline.h with AMD's choices.
void buildRocmDistributionPipeline(OpPassManager &pm,
                                   const RocmPipelineOptions &options);
/// ROCDL, LLVM and serialization to assembly (`#gpu.object` with
/// `format = assembly`).
void buildRocmCodegenPipeline(OpPassManager &pm,
                              const RocmPipelineOptions &options);
void buildRocmPipeline(OpPassManager &pm, const RocmPipelineOptions &options);

/// Dialects and interfaces beyond the NVIDIA pipeline's (AMDGPU, ROCDL,
/// the ROCDL target).
void registerRocmPipelineDialects(DialectRegistry &registry);

/// Registers `pallas-to-rocm-pipeline` (once per process, as
/// registerPallasPipelines).
void registerRocmPipeline();

} // namespace mlir::pallas

#endif // PALLASC_PASSES_PIPELINES_ROCMPIPELINE_H
