//===- IndexMapExpr.cpp - Index-map expressions: one walk, two uses -*- C++ -*-===//

#include "passes/Utils/IndexMapExpr.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

namespace {

/// Grid indices are non-negative; so is anything built from them with +,
/// *, floordiv, ceildiv and mod by positive constants and non-negative
/// constants.
bool isNonNegative(AffineExpr e) {
  switch (e.getKind()) {
  case AffineExprKind::DimId:
    return true;
  case AffineExprKind::Constant:
    return cast<AffineConstantExpr>(e).getValue() >= 0;
  case AffineExprKind::Mod:
    return true;
  case AffineExprKind::Add:
  case AffineExprKind::Mul:
  case AffineExprKind::FloorDiv:
  case AffineExprKind::CeilDiv: {
    auto bin = cast<AffineBinaryOpExpr>(e);
    return isNonNegative(bin.getLHS()) && isNonNegative(bin.getRHS());
  }
  default:
    return false;
  }
}

Value constant(OpBuilder &b, Location loc, Type type, int64_t v) {
  if (type.isIndex())
    return arith::ConstantIndexOp::create(b, loc, v);
  if (type.isInteger(32))
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, v));
}

/// floordiv, ceildiv and mod as arith's floor ops.
Value floorOps(OpBuilder &b, Location loc, AffineExprKind kind, Value l,
               Value r) {
  switch (kind) {
  case AffineExprKind::FloorDiv:
    return arith::FloorDivSIOp::create(b, loc, l, r);
  case AffineExprKind::CeilDiv:
    return arith::CeilDivSIOp::create(b, loc, l, r);
  case AffineExprKind::Mod: {
    Value q = arith::FloorDivSIOp::create(b, loc, l, r);
    return arith::SubIOp::create(b, loc, l,
                                 arith::MulIOp::create(b, loc, q, r));
  }
  default:
    llvm_unreachable("not a division");
  }
}

/// floordiv, ceildiv and mod from truncating divisions; the divisor is a
/// positive constant (affine's rule), `nonNeg` says the dividend is
/// non-negative.
Value truncatingOps(OpBuilder &b, Location loc, Type type, AffineExprKind kind,
                    Value l, Value r, bool nonNeg) {
  auto cst = [&](int64_t v) { return constant(b, loc, type, v); };
  // A truncating quotient rounded towards -inf: q - 1 where the remainder
  // `rem` is negative.
  auto roundDown = [&](Value q, Value rem) -> Value {
    Value neg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, rem,
                                      cst(0));
    return arith::SelectOp::create(
        b, loc, neg, arith::SubIOp::create(b, loc, q, cst(1)), q);
  };
  switch (kind) {
  case AffineExprKind::Mod: {
    // Affine mod is non-negative (the divisor is a positive constant).
    Value rem = arith::RemSIOp::create(b, loc, l, r);
    if (nonNeg)
      return rem;
    Value neg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, rem,
                                      cst(0));
    return arith::SelectOp::create(
        b, loc, neg, arith::AddIOp::create(b, loc, rem, r), rem);
  }
  case AffineExprKind::FloorDiv: {
    Value q = arith::DivSIOp::create(b, loc, l, r);
    if (nonNeg)
      return q;
    return roundDown(q, arith::RemSIOp::create(b, loc, l, r));
  }
  case AffineExprKind::CeilDiv: {
    // ceil(l / r) = -floor(-l / r) = (l + r - 1) floordiv r for r > 0.
    Value num = arith::AddIOp::create(
        b, loc, l, arith::SubIOp::create(b, loc, r, cst(1)));
    Value q = arith::DivSIOp::create(b, loc, num, r);
    if (nonNeg)
      return q;
    return roundDown(q, arith::RemSIOp::create(b, loc, num, r));
  }
  default:
    llvm_unreachable("not a division");
  }
}

} // namespace

Value mlir::pallas::expandIndexMapExpr(OpBuilder &b, Location loc,
                                       AffineExpr e, ValueRange dims,
                                       Type type, IndexMapArith style) {
  auto leaf = [&](AffineExpr leaf) -> FailureOr<Value> {
    if (auto d = dyn_cast<AffineDimExpr>(leaf))
      return dims[d.getPosition()];
    return constant(b, loc, type,
                    cast<AffineConstantExpr>(leaf).getValue());
  };
  auto combine = [&](AffineBinaryOpExpr bin, Value l,
                     Value r) -> FailureOr<Value> {
    switch (bin.getKind()) {
    case AffineExprKind::Add:
      return arith::AddIOp::create(b, loc, l, r).getResult();
    case AffineExprKind::Mul:
      return arith::MulIOp::create(b, loc, l, r).getResult();
    default:
      break;
    }
    if (style == IndexMapArith::FloorOps)
      return floorOps(b, loc, bin.getKind(), l, r);
    return truncatingOps(b, loc, type, bin.getKind(), l, r,
                         isNonNegative(bin.getLHS()));
  };
  FailureOr<Value> v = foldIndexMapExpr<Value>(e, leaf, combine);
  assert(succeeded(v) && "index maps have no symbols (checked by the "
                         "importer)");
  return *v;
}
