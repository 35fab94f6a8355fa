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

/// How the host's loops reach the LLVM dialect (buildHostToLLVMPipeline).
struct HostToLLVMOptions {
  /// Lower affine ops (and expand strided metadata) before scf-to-cf, as
  /// the GPU emulator's host kernel needs: the distributed GPU kernels may
  /// hold affine loops, which lower-affine turns into scf. The CPU
  /// pipeline's loops come from linalg-to-loops as scf: it runs scf-to-cf
  /// first.
  bool affineLoopsFirst = false;
  /// bf16 conversions become integer code (the host may lack bf16
  /// instructions and their libgcc helpers).
  bool expandBf16 = false;
  /// Lower vector ops (the emulator's kernels are vectorized GPU code).
  bool lowerVectors = false;
};

/// The host's lowering from loops (scf, affine, memref, arith, math) to the
/// LLVM dialect: scf-to-cf, expand-strided-metadata, lower-affine, then the
/// LLVM conversions. The one sequence the CPU pipeline (buildCpuPipeline)
/// and the GPU emulator (src/Runtime/GpuEmulator/HostKernel.cpp) both end
/// with.
void buildHostToLLVMPipeline(OpPassManager &pm,
                             const HostToLLVMOptions &options);

/// Adds the dialects, interface models and LLVM IR translations the CPU
/// pipeline and the JIT need (bufferization models, LLVM dialect, ...).
void registerCpuPipelineDialects(DialectRegistry &registry);

/// The passes only the pipelines use (pallas-verify, pallas-expand-views,
/// pallas-gpu-module-to-ptx) are declared in Passes.td (Passes.h).

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

/// Adds pallas-resolve-platform: lax.platform_dependent takes the branch of
/// `platform` ("cpu", "cuda", "rocm", "mosaic"), else its default.
void addResolvePlatform(OpPassManager &pm, const std::string &platform);

/// Registers `pallas-to-cpu-pipeline`. Once per process, as every pipeline
/// registration: pallasc::registerAllPasses calls them.
void registerPallasPipelines();

} // namespace mlir::pallas

#endif // PALLASC_PASSES_PIPELINES_PIPELINES_H
