//===- TensorRewrites.cpp - pallas-to-gpu: rewrites before distribution -*- C++ -*-===//
//
// Tensor-level rewrites of the lowered kernel before the distributor sees
// it: dots of extended operands take the narrow ones, f32 exp becomes exp2.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/KernelSkeleton.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace mlir::pallas;

namespace {

/// The input of a linalg.generic that only extends one float block
/// (f16/bf16 -> f32), or null.
Value extendedFrom(Value v) {
  auto g = v.getDefiningOp<linalg::GenericOp>();
  if (!g || g.getNumDpsInputs() != 1 || g->getNumResults() != 1 ||
      g.getNumReductionLoops() != 0 ||
      !llvm::all_of(g.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return Value();
  Block &body = g.getRegion().front();
  if (body.getOperations().size() != 2)
    return Value();
  auto ext = dyn_cast<arith::ExtFOp>(body.front());
  if (!ext || ext.getIn() != body.getArgument(0))
    return Value();
  return g.getDpsInputs()[0];
}

/// matmul(extf(a), extf(b)) -> matmul(a, b) (linalg.matmul extends its
/// operands to the accumulator type itself), looking through transposes.
struct FoldDotExtension : OpRewritePattern<linalg::MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::MatmulOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<Value> ins(op.getDpsInputs());
    bool changed = false;
    for (Value &in : ins) {
      if (Value src = extendedFrom(in)) {
        in = src;
        changed = true;
        continue;
      }
      auto t = in.getDefiningOp<linalg::TransposeOp>();
      if (!t)
        continue;
      Value src = extendedFrom(t.getInput());
      if (!src)
        continue;
      auto srcType = cast<RankedTensorType>(src.getType());
      auto outType = cast<RankedTensorType>(t->getResult(0).getType());
      Value init = tensor::EmptyOp::create(rewriter, t.getLoc(),
                                           outType.getShape(),
                                           srcType.getElementType());
      in = linalg::TransposeOp::create(rewriter, t.getLoc(), src, init,
                                       t.getPermutation())
               ->getResult(0);
      changed = true;
    }
    if (!changed)
      return failure();
    auto lhsT = cast<RankedTensorType>(ins[0].getType()).getElementType();
    auto rhsT = cast<RankedTensorType>(ins[1].getType()).getElementType();
    if (lhsT != rhsT)
      return failure();
    Attribute precision = op->getAttr(kDotPrecisionAttrName);
    auto folded = rewriter.replaceOpWithNewOp<linalg::MatmulOp>(
        op, op->getResultTypes(), ins, op.getDpsInits());
    if (precision)
      folded->setAttr(kDotPrecisionAttrName, precision);
    return success();
  }
};

} // namespace

LogicalResult mlir::pallas::gpu::rewriteKernelTensors(func::FuncOp kernel) {
  MLIRContext *ctx = kernel.getContext();
  {
    RewritePatternSet patterns(ctx);
    patterns.add<FoldDotExtension>(ctx);
    if (failed(applyPatternsGreedily(kernel, std::move(patterns))))
      return failure();
  }
  // exp(x) on f32 as 2^(x log2 e): one ex2.approx instead of libdevice's
  // range reduction, as Triton lowers it (relative error ~2^-22).
  kernel.walk([&](math::ExpOp exp) {
    if (!exp.getType().isF32())
      return;
    OpBuilder eb(exp);
    Value log2e = arith::ConstantOp::create(
        eb, exp.getLoc(), eb.getF32FloatAttr(1.4426950408889634f));
    Value scaled = arith::MulFOp::create(eb, exp.getLoc(), exp.getOperand(),
                                         log2e);
    exp.replaceAllUsesWith(
        math::Exp2Op::create(eb, exp.getLoc(), scaled).getResult());
    exp.erase();
  });
  return success();
}
