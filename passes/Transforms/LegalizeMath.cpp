//===- LegalizeMath.cpp - pallas-legalize-math ------------------*- C++ -*-===//
//
// Exact rewrites of the math ops that some code generator lacks (the CPU's
// math-to-llvm, convert-gpu-to-nvvm, convert-gpu-to-rocdl) into ops all of
// them lower, and float -> integer conversions with XLA's saturating
// semantics, applied to tensors, vectors and scalars alike. Passes.td lists
// them.
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/Passes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/APFloat.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pallas {
#define GEN_PASS_DEF_PALLASLEGALIZEMATH
#include "passes/Transforms/Passes.h.inc"
} // namespace mlir::pallas

#define DEBUG_TYPE "pallas-legalize-math"

using namespace mlir;

namespace {

/// `type` (a scalar or shaped type) with its element type replaced.
Type withElementType(Type type, Type element) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    return shaped.clone(element);
  return element;
}

/// A constant of `type` (scalar or shaped: a splat) holding `value`.
Value intConstant(OpBuilder &b, Location loc, Type type,
                  const APInt &value) {
  auto element = cast<IntegerType>(getElementTypeOrSelf(type));
  APInt v = value.zextOrTrunc(element.getWidth());
  if (auto shaped = dyn_cast<ShapedType>(type))
    return arith::ConstantOp::create(b, loc,
                                     DenseElementsAttr::get(shaped, v));
  return arith::ConstantOp::create(b, loc, IntegerAttr::get(element, v));
}

Value intConstant(OpBuilder &b, Location loc, Type type, int64_t value) {
  auto element = cast<IntegerType>(getElementTypeOrSelf(type));
  return intConstant(b, loc, type,
                     APInt(element.getWidth(), value, /*isSigned=*/true));
}

//===----------------------------------------------------------------------===//
// math.sincos
//===----------------------------------------------------------------------===//

struct SplitSincos : OpRewritePattern<math::SincosOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::SincosOp op,
                                PatternRewriter &rewriter) const override {
    Value sin = math::SinOp::create(rewriter, op.getLoc(), op.getOperand(),
                                    op.getFastmath());
    Value cos = math::CosOp::create(rewriter, op.getLoc(), op.getOperand(),
                                    op.getFastmath());
    rewriter.replaceOp(op, {sin, cos});
    return success();
  }
};

//===----------------------------------------------------------------------===//
// math.clampf
//===----------------------------------------------------------------------===//

struct ExpandClampF : OpRewritePattern<math::ClampFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::ClampFOp op,
                                PatternRewriter &rewriter) const override {
    Value low = arith::MaximumFOp::create(rewriter, op.getLoc(), op.getValue(),
                                          op.getMin(), op.getFastmath());
    rewriter.replaceOpWithNewOp<arith::MinimumFOp>(op, low, op.getMax(),
                                                   op.getFastmath());
    return success();
  }
};

//===----------------------------------------------------------------------===//
// math.isnan / isinf / isfinite / isnormal
//===----------------------------------------------------------------------===//

/// The IEEE layout of a float type: its width and exponent mask; false for
/// types without infinities (the f8 variants), which are left alone.
bool ieeeLayout(Type type, unsigned &width, APInt &exponentMask) {
  auto f = dyn_cast<FloatType>(getElementTypeOrSelf(type));
  if (!f || !(f.isF16() || f.isBF16() || f.isF32() || f.isF64()))
    return false;
  width = f.getWidth();
  unsigned mantissa = f.getFPMantissaWidth() - 1; // without the hidden bit
  exponentMask = APInt::getBitsSet(width, mantissa, width - 1);
  return true;
}

template <typename OpTy>
struct ExpandClassification : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getOperand();
    if constexpr (std::is_same_v<OpTy, math::IsNaNOp>) {
      if (!isa<FloatType>(getElementTypeOrSelf(x.getType())))
        return failure();
      rewriter.replaceOpWithNewOp<arith::CmpFOp>(op, arith::CmpFPredicate::UNO,
                                                 x, x);
      return success();
    }
    unsigned width;
    APInt exponentMask;
    if (!ieeeLayout(x.getType(), width, exponentMask))
      return failure();
    Type intType =
        withElementType(x.getType(), rewriter.getIntegerType(width));
    Value bits = arith::BitcastOp::create(rewriter, loc, intType, x);
    Value mask = intConstant(rewriter, loc, intType, exponentMask);
    Value exponent = arith::AndIOp::create(rewriter, loc, bits, mask);
    if constexpr (std::is_same_v<OpTy, math::IsInfOp>) {
      // |x| == inf: every exponent bit set, no mantissa bit.
      Value abs = arith::AndIOp::create(
          rewriter, loc, bits,
          intConstant(rewriter, loc, intType, APInt::getMaxValue(width - 1)));
      rewriter.replaceOpWithNewOp<arith::CmpIOp>(op, arith::CmpIPredicate::eq,
                                                 abs, mask);
    } else if constexpr (std::is_same_v<OpTy, math::IsFiniteOp>) {
      rewriter.replaceOpWithNewOp<arith::CmpIOp>(op, arith::CmpIPredicate::ne,
                                                 exponent, mask);
    } else {
      // Normal: the exponent is neither all zeros (zero, subnormal) nor all
      // ones (inf, NaN).
      Value zero = intConstant(rewriter, loc, intType, 0);
      Value notZero = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::ne, exponent, zero);
      Value notMax = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::ne, exponent, mask);
      rewriter.replaceOpWithNewOp<arith::AndIOp>(op, notZero, notMax);
    }
    return success();
  }
};

//===----------------------------------------------------------------------===//
// math.ipowi
//===----------------------------------------------------------------------===//

struct ExpandIPowI : OpRewritePattern<math::IPowIOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::IPowIOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type type = op.getType();
    auto element = dyn_cast<IntegerType>(getElementTypeOrSelf(type));
    if (!element || element.getWidth() < 2)
      return failure();
    unsigned width = element.getWidth();
    Value base = op.getLhs(), exponent = op.getRhs();
    Value zero = intConstant(rewriter, loc, type, 0);
    Value one = intConstant(rewriter, loc, type, 1);
    Value minusOne = intConstant(rewriter, loc, type, -1);
    // Non-negative exponents: square-and-multiply over bits 0..width-2.
    Value result = one, power = base;
    for (unsigned i = 0; i + 1 < width; ++i) {
      Value shifted =
          i == 0 ? exponent
                 : arith::ShRUIOp::create(rewriter, loc, exponent,
                                          intConstant(rewriter, loc, type, i))
                       .getResult();
      Value bit = arith::AndIOp::create(rewriter, loc, shifted, one);
      Value set = arith::CmpIOp::create(rewriter, loc,
                                        arith::CmpIPredicate::ne, bit, zero);
      Value times = arith::MulIOp::create(rewriter, loc, result, power);
      result = arith::SelectOp::create(rewriter, loc, set, times, result);
      if (i + 2 < width)
        power = arith::MulIOp::create(rewriter, loc, power, power);
    }
    // Negative exponents: 1 for a base of 1, (-1)^e for -1, 0 otherwise.
    Value odd = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::ne,
        arith::AndIOp::create(rewriter, loc, exponent, one), zero);
    Value minusOnePower =
        arith::SelectOp::create(rewriter, loc, odd, minusOne, one);
    Value isOne = arith::CmpIOp::create(rewriter, loc,
                                        arith::CmpIPredicate::eq, base, one);
    Value isMinusOne = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::eq, base, minusOne);
    Value negative = arith::SelectOp::create(
        rewriter, loc, isOne, one,
        arith::SelectOp::create(rewriter, loc, isMinusOne, minusOnePower,
                                zero));
    Value isNegative = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::slt, exponent, zero);
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, isNegative, negative,
                                                 result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// arith.fptosi / arith.fptoui
//===----------------------------------------------------------------------===//

/// A constant of the float `type` (scalar or shaped: a splat).
Value floatConstant(OpBuilder &b, Location loc, Type type,
                    const APFloat &value) {
  auto element = cast<FloatType>(getElementTypeOrSelf(type));
  if (auto shaped = dyn_cast<ShapedType>(type))
    return arith::ConstantOp::create(b, loc,
                                     DenseElementsAttr::get(shaped, value));
  return arith::ConstantOp::create(b, loc, FloatAttr::get(element, value));
}

/// `2^exponent` (or `-2^exponent`) in `sem`: exact, or an infinity where it
/// overflows the format.
APFloat powerOfTwo(const llvm::fltSemantics &sem, unsigned exponent,
                   bool negative) {
  APFloat v(sem);
  APInt bits = APInt::getOneBitSet(exponent + 2, exponent);
  if (negative)
    bits.negate();
  v.convertFromAPInt(bits, /*IsSigned=*/true,
                     APFloat::rmNearestTiesToEven);
  return v;
}

/// Rewrites one float -> integer conversion with XLA's semantics (those of
/// LLVM's fptosi.sat / fptoui.sat): NaN gives 0, a value at or beyond the
/// integer type's range gives its limit, others truncate toward zero as
/// before. `arith.fptosi`/`fptoui` alone leave out-of-range values poison
/// (each backend then wraps or clamps its own way). Sources narrower than
/// f32 are extended to f32 first (exact). The conversion that remains sees
/// only in-range values (0 instead of the others), so it is well defined
/// everywhere.
void saturateFloatToInt(RewriterBase &b, Operation *op, bool isSigned) {
  Location loc = op->getLoc();
  b.setInsertionPoint(op);
  Value x = op->getOperand(0);
  Type resultType = op->getResult(0).getType();
  auto intType = cast<IntegerType>(getElementTypeOrSelf(resultType));
  unsigned width = intType.getWidth();
  if (getElementTypeOrSelf(x.getType()).getIntOrFloatBitWidth() < 32)
    x = arith::ExtFOp::create(
        b, loc, withElementType(x.getType(), b.getF32Type()), x);
  Type type = x.getType();
  const llvm::fltSemantics &sem =
      cast<FloatType>(getElementTypeOrSelf(type)).getFloatSemantics();
  // Values in (lo, hi) truncate into range; lo (-2^(w-1) signed, 0
  // unsigned) is itself the smallest integer, hi (2^(w-1) or 2^w) one past
  // the largest. Both are powers of two: exact, or infinite where the
  // format cannot hold them (then the comparisons still split the range).
  APFloat loValue = isSigned ? powerOfTwo(sem, width - 1, /*negative=*/true)
                             : APFloat::getZero(sem);
  APFloat hiValue = powerOfTwo(sem, isSigned ? width - 1 : width,
                               /*negative=*/false);
  Value lo = floatConstant(b, loc, type, loValue);
  Value hi = floatConstant(b, loc, type, hiValue);
  auto cmp = [&](arith::CmpFPredicate p, Value bound) -> Value {
    return arith::CmpFOp::create(b, loc, p, x, bound);
  };
  // Ordered comparisons: all false on NaN, which therefore gives 0.
  Value atOrBelowLo = cmp(arith::CmpFPredicate::OLE, lo);
  Value atOrAboveHi = cmp(arith::CmpFPredicate::OGE, hi);
  Value inRange = arith::AndIOp::create(b, loc,
                                        cmp(arith::CmpFPredicate::OGT, lo),
                                        cmp(arith::CmpFPredicate::OLT, hi));
  Value zero = floatConstant(b, loc, type, APFloat::getZero(sem));
  Value safe = arith::SelectOp::create(b, loc, inRange, x, zero);
  Value converted =
      isSigned ? arith::FPToSIOp::create(b, loc, resultType, safe).getResult()
               : arith::FPToUIOp::create(b, loc, resultType, safe).getResult();
  APInt minInt = isSigned ? APInt::getSignedMinValue(width)
                          : APInt::getMinValue(width);
  APInt maxInt = isSigned ? APInt::getSignedMaxValue(width)
                          : APInt::getMaxValue(width);
  Value low = arith::SelectOp::create(
      b, loc, atOrBelowLo, intConstant(b, loc, resultType, minInt),
      converted);
  b.replaceOpWithNewOp<arith::SelectOp>(
      op, atOrAboveHi, intConstant(b, loc, resultType, maxInt), low);
}

/// Rewrites every float -> integer conversion under `root` once (a walk, not
/// a pattern: the rewrite contains the conversion it guards).
void saturateFloatToIntConversions(Operation *root) {
  SmallVector<Operation *> conversions;
  root->walk([&](Operation *op) {
    if (isa<arith::FPToSIOp, arith::FPToUIOp>(op) &&
        isa<FloatType>(getElementTypeOrSelf(op->getOperand(0).getType())) &&
        isa<IntegerType>(getElementTypeOrSelf(op->getResult(0).getType())))
      conversions.push_back(op);
  });
  IRRewriter rewriter(root->getContext());
  for (Operation *op : conversions)
    saturateFloatToInt(rewriter, op, isa<arith::FPToSIOp>(op));
}

struct PallasLegalizeMathPass
    : pallas::impl::PallasLegalizeMathBase<PallasLegalizeMathPass> {
  void runOnOperation() override {
    saturateFloatToIntConversions(getOperation());
    RewritePatternSet patterns(&getContext());
    patterns.add<SplitSincos, ExpandClampF, ExpandClassification<math::IsNaNOp>,
                 ExpandClassification<math::IsInfOp>,
                 ExpandClassification<math::IsFiniteOp>,
                 ExpandClassification<math::IsNormalOp>, ExpandIPowI>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
