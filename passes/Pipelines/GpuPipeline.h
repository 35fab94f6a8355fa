//===- GpuPipeline.h - the GPU distribution both vendors share --*- C++ -*-===//
//
// The first half of the NVIDIA and AMD pipelines (docs/cuda.md, "Pipeline";
// docs/rocm.md): math legalization, pallas-gpu-prepare, pallas-to-linalg,
// pallas-to-gpu for the chip (its vendor, warp width and matrix
// instructions from the GPU target table) and pallas-gpu-float-semantics,
// up to the distributed gpu.module that carries the launch record. The
// vendors' pipelines (CudaPipeline.h, RocmPipeline.h) build it with their
// own choices, then their codegen half.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_PIPELINES_GPUPIPELINE_H
#define PALLASC_PASSES_PIPELINES_GPUPIPELINE_H

#include <string>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace mlir::pallas {

struct GpuDistributionOptions {
  /// A chip of the GPU target table (chips/GpuTarget.h): sm_80, gfx942, ...
  std::string chip = "sm_80";
  /// Floating point (pallas-gpu-float-semantics, docs/cuda.md): false gives
  /// Pallas' Triton semantics (FMA contraction allowed), true strict IEEE
  /// (no contraction, IEEE-rounded division).
  bool strictFloat = false;
  /// Without strictFloat: f32 division as div.full.f32 (NVIDIA; Pallas'
  /// Triton lowering divides at full precision on AMD GPUs).
  bool approxDivision = true;
};

/// Up to the distributed gpu.module (which carries the launch record).
void buildGpuDistributionPipeline(OpPassManager &pm,
                                  const GpuDistributionOptions &options);

} // namespace mlir::pallas

#endif // PALLASC_PASSES_PIPELINES_GPUPIPELINE_H
