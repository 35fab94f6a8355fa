//===- FuseElementwise.cpp - pallas-cpu-fuse-elementwise ----------*- C++ -*-===//
//
// Elementwise fusion of linalg ops on tensors with a bound on the size of a
// fused body (see Passes.td): the upstream pass's patterns and control, plus
// the bound, so that LLVM never sees one loop body of thousands of ops.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pallas {
#define GEN_PASS_DEF_PALLASCPUFUSEELEMENTWISE
#include "passes/Conversion/Passes.h.inc"
} // namespace mlir::pallas

using namespace mlir;

namespace {

/// Operations in the body of a linalg op, its terminator not counted.
int64_t bodyOps(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || op->getNumRegions() == 0 || op->getRegion(0).empty())
    return 0;
  int64_t count = 0;
  op->getRegion(0).walk([&](Operation *) { ++count; });
  return count - 1;
}

struct PallasCpuFuseElementwisePass
    : pallas::impl::PallasCpuFuseElementwiseBase<PallasCpuFuseElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    Operation *op = getOperation();
    MLIRContext *context = op->getContext();
    int64_t bound = maxBodyOps;
    // Upstream's rule (a producer with one use) ...
    linalg::ControlFusionFn oneUse = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      return producer && producer->hasOneUse();
    };
    // ... and, for elementwise fusion, the bound on the fused body.
    linalg::ControlFusionFn bounded = [bound](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      if (!producer || !producer->hasOneUse())
        return false;
      return bodyOps(producer) + bodyOps(fused->getOwner()) <= bound;
    };

    RewritePatternSet patterns(context);
    linalg::populateElementwiseOpsFusionPatterns(patterns, bounded);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, oneUse);
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()
        ->getCanonicalizationPatterns(patterns);
    linalg::populateConstantFoldLinalgOperations(patterns, oneUse);
    (void)applyPatternsGreedily(op, std::move(patterns),
                                GreedyRewriteConfig().setUseTopDownTraversal());
  }
};

} // namespace
