//===- TpuPipeline.h - pallas kernels to Mosaic ----------------*- C++ -*-===//
//
// The TPU pipeline (docs/tpu.md): pallas-to-tpu, from the module's
// pallas.call to the Mosaic kernel func.func with its window parameters and
// transform_indices functions. Registered as `pallas-to-tpu-pipeline` so
// lit tests run what `pallasc --target tpu` runs before serialization (the
// Mosaic bytecode and the backend config are written by src/Target's
// TPUArtifacts).
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_PIPELINES_TPUPIPELINE_H
#define PALLASC_PASSES_PIPELINES_TPUPIPELINE_H

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace mlir::pallas {

/// Adds the module-level passes from a pallas.call to the Mosaic module.
void buildTpuPipeline(OpPassManager &pm);

/// Registers `pallas-to-tpu-pipeline` (once per process, as
/// registerPallasPipelines).
void registerTpuPipeline();

} // namespace mlir::pallas

#endif // PALLASC_PASSES_PIPELINES_TPUPIPELINE_H
