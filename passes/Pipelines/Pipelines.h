//===- Pipelines.h - pallasc lowering pipelines ---------------*- C++ -*-===//
//
// Library functions building each target's pipeline, registered as
// `pallasc-opt` pipelines so lit tests run exactly what the driver runs.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_PIPELINES_PIPELINES_H
#define PALLASC_PASSES_PIPELINES_PIPELINES_H

#include <functional>
#include <memory>
#include <string>

namespace mlir {
class DialectRegistry;
class OpPassManager;
class Operation;
class Pass;
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

/// `pallas-verify`: MLIR's verifier on the module, as a pass. The GPU codegen
/// pipelines end with it before serialization, so a driver that turns the
/// per-pass verification off (the default, see `--verify-each`) still
/// verifies what LLVM's translation receives.
std::unique_ptr<Pass> createVerifyPass();

/// `pallas-expand-views`: upstream's expand-strided-metadata patterns applied
/// from the view ops alone instead of over the whole module (same rewrites,
/// a fraction of the time on large kernels). The GPU codegen pipelines use it.
std::unique_ptr<Pass> createExpandViewsPass();

/// `pallas-gpu-module-to-ptx`: each gpu.module with an `#nvvm.target` to a
/// gpu.binary holding its PTX, as gpu-module-to-binary with format `isa`,
/// but libdevice (from `toolkitPath`, or CUDA_HOME & co. when empty) linked
/// only into modules that call it and pallasc's LLVM optimization pipeline
/// (PtxSerialize.cpp). The CUDA codegen pipeline ends with it.
std::unique_ptr<Pass> createGpuModuleToPtxPass(const std::string &toolkitPath = {});

/// `pass` run on the op only if some op nested in it (or the op itself)
/// satisfies `needsPass`, i.e. only where the pass has something to rewrite
/// (RunIfPresent.cpp). For conversions of one dialect's ops, which visit
/// every op of a large kernel even when it holds none of theirs; where
/// `needsPass` holds for every op the pass would change, the output is the
/// same as the pass's.
std::unique_ptr<Pass>
createRunIfPresentPass(std::function<bool(Operation *)> needsPass,
                       std::unique_ptr<Pass> pass);

/// Adds upstream's lower-affine, run only where an affine op is left (the
/// GPU codegen pipelines: the distributed kernels rarely hold one).
void addLowerAffineIfPresent(OpPassManager &pm);

/// Registers `pallas-to-cpu-pipeline` (idempotent).
void registerPallasPipelines();

} // namespace mlir::pallas

#endif // PALLASC_PASSES_PIPELINES_PIPELINES_H
