//===- ResolvePlatform.cpp - lax.platform_dependent per target --*- C++ -*-===//
//
// pallas-resolve-platform: each pallas.platform_index becomes the constant
// index of the branch the target platform takes, and the conditionals on it
// fold to that branch (Passes.td has the contract).
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::pallas {
#define GEN_PASS_DEF_PALLASRESOLVEPLATFORM
#include "passes/Transforms/Passes.h.inc"
} // namespace mlir::pallas

using namespace mlir;

namespace {

/// "cuda, rocm and the default" for an error message.
std::string describeGroups(pallas::PlatformIndexOp op) {
  SmallVector<std::string> groups;
  for (Attribute group : op.getPlatforms()) {
    SmallVector<StringRef> names;
    for (Attribute a : cast<ArrayAttr>(group))
      names.push_back(cast<StringAttr>(a).getValue());
    groups.push_back(llvm::join(names, "/"));
  }
  return groups.empty() ? "none" : llvm::join(groups, ", ");
}

struct PallasResolvePlatformPass
    : pallas::impl::PallasResolvePlatformBase<PallasResolvePlatformPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<pallas::PlatformIndexOp> indices;
    getOperation()->walk(
        [&](pallas::PlatformIndexOp op) { indices.push_back(op); });
    if (indices.empty())
      return;
    IRRewriter rewriter(&getContext());
    for (pallas::PlatformIndexOp op : indices) {
      std::optional<int32_t> index = op.indexFor(platform);
      if (!index) {
        op.emitError() << "lax.platform_dependent has no branch for the "
                       << "platform '" << platform << "' (its branches: "
                       << describeGroups(op)
                       << ") and no default branch";
        return signalPassFailure();
      }
      rewriter.setInsertionPoint(op);
      rewriter.replaceOpWithNewOp<arith::ConstantOp>(
          op, rewriter.getI32IntegerAttr(*index));
    }
    // The branches not taken go: comparisons of the constant fold, and
    // scf.if on a constant condition inlines its taken region.
    RewritePatternSet patterns(&getContext());
    scf::IfOp::getCanonicalizationPatterns(patterns, &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
