//===- Verify.cpp - One verification where a pipeline's IR leaves MLIR ----===//
//
// The driver runs its fixed lowering pipelines without MLIR's verifier after
// every pass (it costs ~6% of a GPU compile; `--verify-each` turns it back
// on). This pass verifies once, where it matters most: right before the
// module is handed to LLVM's translation and back end, which assume valid
// IR. With the pass manager's own verification on it is a cheap repeat.
//
//===----------------------------------------------------------------------===//

#include "passes/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace {
struct VerifyPass : PassWrapper<VerifyPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(VerifyPass)
  StringRef getArgument() const final { return "pallas-verify"; }
  StringRef getName() const final { return "PallasVerify"; }
  StringRef getDescription() const final {
    return "Runs MLIR's verifier on the module (fails on invalid IR)";
  }
  void runOnOperation() final {
    if (failed(verify(getOperation())))
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace

std::unique_ptr<Pass> mlir::pallas::createVerifyPass() {
  return std::make_unique<VerifyPass>();
}
