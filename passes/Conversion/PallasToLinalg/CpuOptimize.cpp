//===- CpuOptimize.cpp - pallas-cpu-optimize ---------------------*- C++ -*-===//
//
// Host-specific rewrites of lowered kernels: matmul loop order, vectorizable
// math approximations, stores computed in place.
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

/// The memref function argument `dest` is (a single-use subview of), and the
/// copies reading it; null if anything else uses the argument.
Value refAndSnapshots(func::FuncOp func, Value dest, Operation *store,
                      SmallVectorImpl<Operation *> &reads) {
  Value ref = dest;
  Operation *view = nullptr;
  if (auto subview = dest.getDefiningOp<memref::SubViewOp>()) {
    if (!subview->hasOneUse())
      return {};
    view = subview;
    ref = subview.getSource();
  }
  auto arg = dyn_cast<BlockArgument>(ref);
  if (!arg || arg.getOwner() != &func.getBody().front())
    return {};
  auto isSnapshot = [](Operation *user, Value of) {
    auto copy = dyn_cast<linalg::CopyOp>(user);
    return copy && copy.getDpsInputOperand(0)->get() == of;
  };
  for (Operation *user : arg.getUsers()) {
    if (user == store || user == view)
      continue;
    if (isSnapshot(user, arg)) {
      reads.push_back(user);
      continue;
    }
    auto subview = dyn_cast<memref::SubViewOp>(user);
    if (!subview)
      return {};
    for (Operation *u : subview->getUsers()) {
      if (!isSnapshot(u, subview))
        return {};
      reads.push_back(u);
    }
  }
  return arg;
}

/// Marks a store `restrict` when its value can be computed directly in the
/// destination ref: the ref is written by this store only (its other uses
/// are snapshot copies, all taken before the value is computed) and the
/// value's destination chain (linalg ops' inits back to a `tensor.empty`)
/// is used by nothing else. eliminate-empty-tensors then makes the chain
/// write into the ref, which saves a temporary and a copy per store.
void markInPlaceStore(func::FuncOp func,
                      bufferization::MaterializeInDestinationOp store) {
  if (store.getRestrict() || !isa<BaseMemRefType>(store.getDest().getType()))
    return;
  SmallVector<Operation *> reads;
  if (!refAndSnapshots(func, store.getDest(), store, reads))
    return;
  Value v = store.getSource();
  while (true) {
    Operation *def = v.getDefiningOp();
    if (!v.hasOneUse() || !def || def->getBlock() != store->getBlock())
      return;
    for (Operation *read : reads)
      if (read->getBlock() != def->getBlock() || !read->isBeforeInBlock(def))
        return;
    if (isa<tensor::EmptyOp>(def))
      break;
    auto dps = dyn_cast<DestinationStyleOpInterface>(def);
    if (!dps)
      return;
    v = dps.getTiedOpOperand(cast<OpResult>(v))->get();
  }
  store.setRestrict(true);
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

    func.walk([&](bufferization::MaterializeInDestinationOp store) {
      markInPlaceStore(func, store);
    });

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
