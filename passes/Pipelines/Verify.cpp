//===- Verify.cpp - One verification where a pipeline's IR leaves MLIR ----===//
//
// The driver runs its fixed lowering pipelines without MLIR's verifier after
// every pass (it costs ~6% of a GPU compile; `--verify-each` turns it back
// on). This pass verifies once, where it matters most: right before the
// module is handed to LLVM's translation and back end, which assume valid
// IR. With the pass manager's own verification on it is a cheap repeat.
//
//===----------------------------------------------------------------------===//

#include "passes/Pipelines/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace mlir::pallas {
#define GEN_PASS_DEF_PALLASVERIFY
#include "passes/Pipelines/Passes.h.inc"
} // namespace mlir::pallas

namespace {
struct VerifyPass : pallas::impl::PallasVerifyBase<VerifyPass> {
  void runOnOperation() final {
    if (failed(verify(getOperation())))
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
