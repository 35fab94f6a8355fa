//===- CpuOptimize.cpp - pallas-cpu-optimize ---------------------*- C++ -*-===//
//
// Host-specific rewrites of lowered kernels: matmul loop order, vectorizable
// math approximations.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringSet.h"

#define DEBUG_TYPE "pallas-cpu-optimize"

namespace mlir::pallas {
#define GEN_PASS_DEF_PALLASCPUOPTIMIZE
#include "passes/Conversion/Passes.h.inc"
} // namespace mlir::pallas

using namespace mlir;

namespace {

/// matmul (m, n, k) -> generic (m, k, n); batch_matmul (b, m, n, k) ->
/// (b, m, k, n).
template <typename OpT>
LogicalResult reorderMatmul(OpT op, RewriterBase &rewriter,
                            ArrayRef<unsigned> interchange) {
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::GenericOp> generic =
      linalg::generalizeNamedOp(rewriter, cast<linalg::LinalgOp>(*op));
  if (failed(generic))
    return failure();
  return linalg::interchangeGenericOp(rewriter, *generic, interchange);
}

struct PallasCpuOptimizePass
    : public mlir::pallas::impl::PallasCpuOptimizeBase<PallasCpuOptimizePass> {
  using PallasCpuOptimizeBase::PallasCpuOptimizeBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    IRRewriter rewriter(func.getContext());
    SmallVector<Operation *> matmuls;
    func.walk([&](Operation *op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op))
        matmuls.push_back(op);
    });
    for (Operation *op : matmuls) {
      LogicalResult r =
          isa<linalg::MatmulOp>(op)
              ? reorderMatmul(cast<linalg::MatmulOp>(op), rewriter, {0, 2, 1})
              : reorderMatmul(cast<linalg::BatchMatmulOp>(op), rewriter,
                              {0, 1, 3, 2});
      if (failed(r)) {
        op->emitOpError("cannot reorder the loops of this matmul");
        return signalPassFailure();
      }
    }

    if (!approximateMath)
      return;
    static const llvm::StringSet<> approximated = {
        "math.exp",   "math.expm1", "math.log", "math.log1p",
        "math.log2",  "math.tanh",  "math.erf"};
    RewritePatternSet patterns(func.getContext());
    populateMathPolynomialApproximationPatterns(
        patterns, [](StringRef name) { return approximated.contains(name); });
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
