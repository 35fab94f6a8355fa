//===- RunIfPresent.cpp - Run a conversion only where it has work ---------===//
//
// The GPU codegen pipelines run several upstream conversions that each
// rewrite one dialect's ops (affine -> arith/scf, the leftover math ops ->
// LLVM intrinsics, PTX-builder NVVM ops -> inline assembly). Each visits
// every op of the module, and the distributed kernels are large (flash
// attention: ~5,000 ops, ~0 of them affine or math after the GPU
// conversion): on sm_80 the three cost 4% of the compile for no change.
// This wrapper looks for one op the conversion would rewrite (a walk that
// stops at the first) and runs the wrapped pass on the op, unchanged, only
// when there is one. Where there is none the pass would leave the IR as it
// is, so the output is the same either way.
//
//===----------------------------------------------------------------------===//

#include "passes/Pipelines/Pipelines.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/IR/Operation.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <string>
#include <utility>

using namespace mlir;

namespace {

struct RunIfPresentPass : PassWrapper<RunIfPresentPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(RunIfPresentPass)

  RunIfPresentPass(std::function<bool(Operation *)> needsPass,
                   std::unique_ptr<Pass> pass)
      : needsPass(std::move(needsPass)), inner(OpPassManager::Nesting::Explicit) {
    name = ("PallasRunIfPresent(" + pass->getName() + ")").str();
    inner.addPass(std::move(pass));
  }
  RunIfPresentPass(const RunIfPresentPass &other)
      : PassWrapper(other), needsPass(other.needsPass), inner(other.inner),
        name(other.name) {}

  StringRef getName() const final { return name; }
  StringRef getDescription() const final {
    return "Runs the wrapped pass only if the op holds an op it rewrites";
  }
  void getDependentDialects(DialectRegistry &registry) const final {
    inner.getDependentDialects(registry);
  }

  void runOnOperation() final {
    Operation *root = getOperation();
    bool found = root->walk([&](Operation *op) {
                       return needsPass(op) ? WalkResult::interrupt()
                                            : WalkResult::advance();
                     })
                     .wasInterrupted();
    if (!found) {
      markAllAnalysesPreserved();
      return;
    }
    if (failed(runPipeline(inner, root)))
      signalPassFailure();
  }

  std::function<bool(Operation *)> needsPass;
  OpPassManager inner;
  std::string name;
};

} // namespace

std::unique_ptr<Pass>
mlir::pallas::createRunIfPresentPass(std::function<bool(Operation *)> needsPass,
                                     std::unique_ptr<Pass> pass) {
  return std::make_unique<RunIfPresentPass>(std::move(needsPass),
                                            std::move(pass));
}

void mlir::pallas::addLowerAffineIfPresent(OpPassManager &pm) {
  pm.addPass(createRunIfPresentPass(
      [](Operation *op) { return isa_and_nonnull<affine::AffineDialect>(
          op->getDialect()); },
      createLowerAffinePass()));
}
