//===- ExpandFloat8.cpp - pallas-expand-fp8 ---------------------*- C++ -*-===//
//
// fp8 values are stored as bytes but computed in f32: arithmetic on fp8
// operands is rewritten to extend them to f32 and round the result back
// (upstream's unsupported-float emulation), then each conversion between an
// fp8 type and a wider float becomes integer operations on the byte, with
// the rounding of XLA and ml_dtypes (what JAX's interpret mode computes):
// round to nearest even, NaN to the format's NaN, a value past the largest
// finite one to infinity where the format has it and to NaN otherwise. The
// formats come from APFloat's semantics, so every 8-bit sign-exponent-
// mantissa type is handled alike. Passes.td has the details.
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/APFloat.h"

namespace mlir::pallas {
#define GEN_PASS_DEF_PALLASEXPANDFP8
#include "passes/Transforms/Passes.h.inc"
} // namespace mlir::pallas

using namespace mlir;

namespace {

/// Whether `type` is an 8-bit float (f8E4M3FN, f8E5M2, their fnuz forms).
bool isFloat8(Type type) {
  auto f = dyn_cast<FloatType>(type);
  return f && f.getWidth() == 8;
}

/// `type` (scalar, vector or tensor) with its element type replaced.
Type withElement(Type type, Type element) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    return shaped.clone(element);
  return element;
}

/// What the rewrites need of an 8-bit float format, read from its APFloat
/// semantics once.
struct Format {
  unsigned mantissaBits; // explicit mantissa bits
  int bias;              // 1 - the smallest normal exponent
  uint32_t nanCode;      // the positive quiet NaN's byte
  uint32_t overflowCode; // a value past the largest: +inf, else NaN
  uint32_t largestBits;  // f32 bits of the largest finite value
  uint32_t minNormalBits; // f32 bits of the smallest normal value
  bool signedZero;       // -0 exists (not in the fnuz formats)
  // Decoding: magnitudes (code & 0x7f) at or above `nanFrom` are NaN,
  // `infMagnitude` is infinity (0x80 where there is none), and whether
  // code 0x80 (negative zero) is NaN.
  uint32_t nanFrom;
  uint32_t infMagnitude;
  bool negativeZeroIsNaN;

  explicit Format(FloatType type) {
    const llvm::fltSemantics &sem = type.getFloatSemantics();
    mantissaBits = llvm::APFloat::semanticsPrecision(sem) - 1;
    bias = 1 - llvm::APFloat::semanticsMinExponent(sem);
    auto codeOf = [&](const llvm::APFloat &v) {
      return static_cast<uint32_t>(v.bitcastToAPInt().getZExtValue());
    };
    auto f32BitsOf = [&](llvm::APFloat v) {
      bool lost;
      v.convert(llvm::APFloat::IEEEsingle(),
                llvm::APFloat::rmNearestTiesToEven, &lost);
      return static_cast<uint32_t>(v.bitcastToAPInt().getZExtValue());
    };
    nanCode = codeOf(llvm::APFloat::getQNaN(sem));
    overflowCode = llvm::APFloat::semanticsHasInf(sem)
                       ? codeOf(llvm::APFloat::getInf(sem))
                       : nanCode;
    largestBits = f32BitsOf(llvm::APFloat::getLargest(sem));
    minNormalBits = f32BitsOf(llvm::APFloat::getSmallestNormalized(sem));
    signedZero = codeOf(llvm::APFloat::getZero(sem, /*Negative=*/true)) != 0;
    nanFrom = 0x80;
    infMagnitude = 0x80;
    for (uint32_t code = 0x7f; code > 0; --code) {
      llvm::APFloat v(sem, llvm::APInt(8, code));
      if (v.isNaN())
        nanFrom = code;
      else if (v.isInfinity())
        infMagnitude = code;
      else
        break;
    }
    negativeZeroIsNaN = llvm::APFloat(sem, llvm::APInt(8, 0x80)).isNaN();
  }
};

/// Integer arithmetic on values of one shape (scalar, vector or tensor).
struct Bits {
  OpBuilder &b;
  Location loc;
  Type like; // any type of the shape: constants and results take its shape

  Type of(Type element) const { return withElement(like, element); }
  Value i32(int64_t v) const { return constant(b.getI32Type(), v); }
  Value constant(Type element, int64_t v) const {
    Type t = of(element);
    TypedAttr attr;
    if (auto i = dyn_cast<IntegerType>(element))
      attr = IntegerAttr::get(i, APInt(i.getWidth(), v, /*isSigned=*/true));
    if (auto shaped = dyn_cast<ShapedType>(t))
      return arith::ConstantOp::create(b, loc,
                                       DenseElementsAttr::get(shaped, attr));
    return arith::ConstantOp::create(b, loc, attr);
  }
  Value andi(Value x, int64_t m) const {
    return arith::AndIOp::create(b, loc, x, i32(m));
  }
  Value ori(Value x, Value y) const { return arith::OrIOp::create(b, loc, x, y); }
  Value shl(Value x, int64_t s) const {
    return arith::ShLIOp::create(b, loc, x, i32(s));
  }
  Value shr(Value x, int64_t s) const {
    return arith::ShRUIOp::create(b, loc, x, i32(s));
  }
  Value add(Value x, Value y) const { return arith::AddIOp::create(b, loc, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, int64_t v) const {
    return arith::CmpIOp::create(b, loc, p, x, i32(v));
  }
  Value select(Value c, Value x, Value y) const {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  Value select(Value c, int64_t x, Value y) const { return select(c, i32(x), y); }
  Value bitcast(Value x, Type element) const {
    return arith::BitcastOp::create(b, loc, of(element), x);
  }
  /// Round to nearest even of `x >> s` (s >= 1, a constant or a value).
  Value roundShift(Value x, Value s) const {
    Value one = i32(1);
    Value half = arith::SubIOp::create(
        b, loc, arith::ShLIOp::create(b, loc, one,
                                      arith::SubIOp::create(b, loc, s, one)),
        one);
    Value odd = arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, x, s), one);
    return arith::ShRUIOp::create(b, loc, add(add(x, half), odd), s);
  }
};

/// f32 -> fp8 byte (as i32), XLA's rounding.
Value encode(const Bits &k, const Format &f, Value x) {
  using P = arith::CmpIPredicate;
  const int64_t m = f.mantissaBits, shift = 23 - m;
  Value bits = k.bitcast(x, k.b.getI32Type());
  Value sign = k.shl(k.shr(bits, 31), 7);
  Value a = k.andi(bits, 0x7fffffff);
  // Normal range: round the f32 mantissa to m bits, then rebias.
  Value rounded = k.roundShift(a, k.i32(shift));
  Value normal = arith::SubIOp::create(
      k.b, k.loc, rounded, k.i32(static_cast<int64_t>(127 - f.bias) << m));
  // The rounded magnitude past the largest finite one overflows.
  Value roundedBits = k.shl(rounded, shift);
  Value overflow = k.cmp(P::ugt, roundedBits, f.largestBits);
  // Subnormal range (below the smallest normal): the significand with its
  // hidden bit, shifted right by shift + (emin - e), rounded to even. A
  // shift past 31 leaves 0 (f32 subnormals are far below any fp8 value).
  Value significand = k.ori(k.andi(a, 0x7fffff), k.i32(0x800000));
  Value exponent = k.shr(a, 23); // biased f32 exponent
  Value s = arith::SubIOp::create(
      k.b, k.loc, k.i32(shift + 127 + 1 - f.bias), exponent);
  s = arith::MinUIOp::create(k.b, k.loc, s, k.i32(31));
  Value subnormal = k.roundShift(significand, s);
  Value isSub = k.cmp(P::ult, a, f.minNormalBits);
  // (A subnormal never overflows: its rounded bits are at most the
  // smallest normal's.)
  Value code = k.select(isSub, subnormal, normal);
  code = k.select(overflow, f.overflowCode, code);
  code = k.select(k.cmp(P::ugt, a, 0x7f800000), f.nanCode, code);
  Value signed_ = k.ori(code, sign);
  if (f.signedZero)
    return signed_;
  // No -0 (fnuz): a zero keeps a clear sign bit; NaN is 0x80 either way.
  return k.select(k.cmp(P::eq, code, 0), code, signed_);
}

/// fp8 byte (as i32) -> f32 bits, exact.
Value decode(const Bits &k, const Format &f, Value c) {
  using P = arith::CmpIPredicate;
  const int64_t m = f.mantissaBits;
  Value sign = k.shl(k.shr(c, 7), 31);
  Value magnitude = k.andi(c, 0x7f);
  Value exponent = k.shr(magnitude, m);
  Value mantissa = k.andi(magnitude, (1 << m) - 1);
  Value normal =
      k.ori(k.shl(k.add(exponent, k.i32(127 - f.bias)), 23),
            k.shl(mantissa, 23 - m));
  // Subnormal: mantissa * 2^(1 - bias - m), exact in f32.
  Value scaled = arith::MulFOp::create(
      k.b, k.loc,
      arith::UIToFPOp::create(k.b, k.loc, k.of(k.b.getF32Type()), mantissa),
      k.bitcast(k.i32(static_cast<int64_t>(127 + 1 - f.bias - m) << 23),
                k.b.getF32Type()));
  Value subnormal = k.bitcast(scaled, k.b.getI32Type());
  Value bits = k.select(k.cmp(P::eq, exponent, 0), subnormal, normal);
  if (f.infMagnitude != 0x80)
    bits = k.select(k.cmp(P::eq, magnitude, f.infMagnitude), 0x7f800000, bits);
  if (f.nanFrom != 0x80)
    bits = k.select(k.cmp(P::uge, magnitude, f.nanFrom), 0x7fc00000, bits);
  bits = k.ori(bits, sign);
  if (f.negativeZeroIsNaN)
    bits = k.select(k.cmp(P::eq, c, 0x80), 0x7fc00000, bits);
  return k.bitcast(bits, k.b.getF32Type());
}

/// f64 -> f32 rounded to odd (toward zero, then the lowest bit set if
/// anything was lost): the second rounding, to fp8, is then exact.
Value roundToOddF32(OpBuilder &b, Location loc, Value x) {
  using P = arith::CmpFPredicate;
  Type f32 = withElement(x.getType(), b.getF32Type());
  Bits k{b, loc, x.getType()};
  Value y = arith::TruncFOp::create(b, loc, f32, x);
  Value back = arith::ExtFOp::create(b, loc, x.getType(), y);
  Value zero = arith::ConstantOp::create(
      b, loc, x.getType(), b.getZeroAttr(x.getType()));
  // y rounded away from zero: one ulp back toward it.
  Value positive = arith::CmpFOp::create(b, loc, P::OGT, x, zero);
  Value away = k.select(positive,
                        arith::CmpFOp::create(b, loc, P::OGT, back, x),
                        arith::CmpFOp::create(b, loc, P::OLT, back, x));
  Value inexact = arith::CmpFOp::create(b, loc, P::UNE, back, x);
  Value bits = k.bitcast(y, b.getI32Type());
  Value towardZero =
      k.select(away, arith::SubIOp::create(b, loc, bits, k.i32(1)), bits);
  bits = k.select(inexact, k.ori(towardZero, k.i32(1)), bits);
  return k.bitcast(bits, b.getF32Type());
}

/// arith.extf from fp8: decoded to f32, then to the result type (exact).
struct ExpandExtF : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rewriter) const override {
    auto from = dyn_cast<FloatType>(getElementTypeOrSelf(op.getIn()));
    if (!from || !isFloat8(from))
      return failure();
    Location loc = op.getLoc();
    Bits k{rewriter, loc, op.getType()};
    Value byte = k.bitcast(op.getIn(), rewriter.getI8Type());
    Value code =
        arith::ExtUIOp::create(rewriter, loc, k.of(rewriter.getI32Type()), byte);
    Value v = decode(k, Format(from), code);
    auto to = cast<FloatType>(getElementTypeOrSelf(op.getType()));
    if (to.getWidth() > 32)
      v = arith::ExtFOp::create(rewriter, loc, op.getType(), v);
    else if (to.getWidth() < 32)
      v = arith::TruncFOp::create(rewriter, loc, op.getType(), v);
    rewriter.replaceOp(op, v);
    return success();
  }
};

/// arith.truncf to fp8: from f32 (f16/bf16 widened exactly first, f64
/// rounded to odd), encoded with XLA's rounding.
struct ExpandTruncF : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    auto to = dyn_cast<FloatType>(getElementTypeOrSelf(op.getType()));
    if (!to || !isFloat8(to))
      return failure();
    Location loc = op.getLoc();
    Bits k{rewriter, loc, op.getType()};
    Value x = op.getIn();
    auto from = cast<FloatType>(getElementTypeOrSelf(x));
    if (from.getWidth() > 32)
      x = roundToOddF32(rewriter, loc, x);
    else if (from.getWidth() < 32)
      x = arith::ExtFOp::create(rewriter, loc, k.of(rewriter.getF32Type()), x);
    Value code = encode(k, Format(to), x);
    Value byte =
        arith::TruncIOp::create(rewriter, loc, k.of(rewriter.getI8Type()), code);
    rewriter.replaceOp(op, k.bitcast(byte, to));
    return success();
  }
};

struct ExpandFp8Pass
    : mlir::pallas::impl::PallasExpandFp8Base<ExpandFp8Pass> {
  void runOnOperation() override {
    // A module without fp8 values is left exactly as it is.
    WalkResult any = getOperation()->walk([](Operation *op) {
      auto hasFp8 = [](Type t) { return isFloat8(getElementTypeOrSelf(t)); };
      if (llvm::any_of(op->getResultTypes(), hasFp8) ||
          llvm::any_of(op->getOperandTypes(), hasFp8))
        return WalkResult::interrupt();
      for (Region &region : op->getRegions())
        for (Block &block : region)
          if (llvm::any_of(block.getArgumentTypes(), hasFp8))
            return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (!any.wasInterrupted())
      return;
    MLIRContext *ctx = &getContext();
    Builder b(ctx);
    SmallVector<Type> fp8 = {
        b.getType<Float8E4M3FNType>(), b.getType<Float8E5M2Type>(),
        b.getType<Float8E4M3FNUZType>(), b.getType<Float8E5M2FNUZType>()};
    // Arithmetic on fp8 operands: in f32, rounded back once per op.
    TypeConverter converter;
    arith::populateEmulateUnsupportedFloatsConversions(converter, fp8,
                                                       b.getF32Type());
    RewritePatternSet emulate(ctx);
    arith::populateEmulateUnsupportedFloatsPatterns(emulate, converter);
    ConversionTarget target(*ctx);
    arith::populateEmulateUnsupportedFloatsLegality(target, converter);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(emulate))))
      return signalPassFailure();
    // The emulation marks its conversions `contract`, which lets
    // arith.extf's folder drop an fp8 round trip between two ops. XLA
    // rounds each fp8 op's result (what JAX's interpret mode gives): clear
    // the flag so that the rounding stays.
    auto none = arith::FastMathFlagsAttr::get(ctx, arith::FastMathFlags::none);
    getOperation()->walk([&](Operation *op) {
      if (auto ext = dyn_cast<arith::ExtFOp>(op)) {
        if (isFloat8(getElementTypeOrSelf(ext.getIn())))
          ext.setFastmathAttr(none);
      } else if (auto trunc = dyn_cast<arith::TruncFOp>(op)) {
        if (isFloat8(getElementTypeOrSelf(trunc.getType())))
          trunc.setFastmathAttr(none);
      }
    });
    RewritePatternSet patterns(ctx);
    patterns.add<ExpandExtF, ExpandTruncF>(ctx);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
