//===- Pipelines.h - pallasc lowering pipelines ---------------*- C++ -*-===//
//
// Library functions building each target's pipeline, registered as
// `pallasc-opt` pipelines so lit tests run exactly what the driver runs.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_PIPELINES_PIPELINES_H
#define PALLASC_PASSES_PIPELINES_PIPELINES_H

namespace mlir {
class DialectRegistry;
class OpPassManager;
} // namespace mlir

namespace mlir::pallas {

/// Module-level pipeline from pallas kernels to the LLVM dialect for the
/// host: pallas-to-linalg, then one-shot bufferization (function
/// boundaries), buffer deallocation, linalg to loops and the LLVM
/// conversions. Kernels and index maps get C-interface wrappers
/// (`_mlir_ciface_<name>`), which is what the CPU runtime calls.
void buildCpuPipeline(OpPassManager &pm);

/// Adds the dialects, interface models and LLVM IR translations the CPU
/// pipeline and the JIT need (bufferization models, LLVM dialect, ...).
void registerCpuPipelineDialects(DialectRegistry &registry);

/// Registers `pallas-to-cpu-pipeline` (idempotent).
void registerPallasPipelines();

} // namespace mlir::pallas

#endif // PALLASC_PASSES_PIPELINES_PIPELINES_H
