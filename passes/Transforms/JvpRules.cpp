//===- JvpRules.cpp - tangent rules of pallas-jvp ---------------*- C++ -*-===//
//
// One rule per op with float results: arith, math, tensor and the pallas
// block ops. The rules follow JAX's JVP rules (jax/_src/lax/lax.py); each
// runs after the primal op has been copied and may use its result ("ans").
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/JvpEmitter.h"

#include "dialects/Pallas/IR/PallasOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::jvp;

using Pred = arith::CmpFPredicate;

namespace {
constexpr double kLn2 = 0.69314718055994530942;
constexpr double kLn10 = 2.30258509299404568402;
constexpr double kTwoOverSqrtPi = 1.12837916709551257390;
} // namespace

/// JAX's max/min rule (`_balanced_eq`): the tangent of the operand that was
/// chosen; on a tie, the average of both tangents.
static Value balancedChoice(Emitter &e, Value x, Value y, Value ans, Value dx,
                            Value dy) {
  Type type = ans.getType();
  Value one = e.constant(type, 1.0), zero = e.zeros(type),
        two = e.constant(type, 2.0);
  Value xEq = e.cmpf(Pred::OEQ, x, ans);
  Value yEq = e.cmpf(Pred::OEQ, y, ans);
  Value result;
  if (dx)
    result =
        e.mulf(dx, e.divf(e.select(xEq, one, zero), e.select(yEq, two, one)));
  if (dy)
    result = e.add(result, e.mulf(dy, e.divf(e.select(yEq, one, zero),
                                             e.select(xEq, two, one))));
  return result;
}

/// JAX's `_reduce_chooser_jvp_rule` for reduce max/min: the tangent averaged
/// over the positions equal to the result.
static Value reduceChooser(Emitter &e, ReduceOp newOp, Value dx) {
  OpBuilder &b = e.builder();
  Value x = newOp.getInput();
  auto inType = cast<RankedTensorType>(x.getType());
  ArrayRef<int64_t> dims = newOp.getDims();
  SmallVector<int64_t> kept;
  for (int64_t d = 0; d < inType.getRank(); ++d)
    if (!llvm::is_contained(dims, d))
      kept.push_back(d);
  Value ansB =
      BroadcastInDimOp::create(b, e.loc(), inType, newOp.getResult(), kept);
  Value where = e.select(e.cmpf(Pred::OEQ, x, ansB), e.constant(inType, 1.0),
                         e.zeros(inType));
  Type resultType = newOp.getType();
  Value counts =
      ReduceOp::create(b, e.loc(), resultType, ReduceKind::Sum, where, dims);
  Value sum = ReduceOp::create(b, e.loc(), resultType, ReduceKind::Sum,
                               e.mulf(dx, where), dims);
  return e.divf(sum, counts);
}

LogicalResult Emitter::emitRule(Operation *op, Operation *newOp) {
  // t(i): tangent of operand i (null = zero); p(i): its primal value;
  // ans: the primal result.
  auto t = [&](unsigned i) { return tangent(op->getOperand(i)); };
  auto p = [&](unsigned i) { return newOp->getOperand(i); };
  Value ans = newOp->getResult(0);
  auto set = [&](Value v) {
    setTangent(op->getResult(0), v);
    return success();
  };
  auto one = [&](Value like) { return constant(like.getType(), 1.0); };
  auto c = [&](Value like, double v) { return constant(like.getType(), v); };
  auto linear = [&](std::initializer_list<unsigned> data) {
    emitLinear(op, SmallVector<unsigned>(data));
    return success();
  };
  auto allOperands = [&]() {
    emitLinear(op,
               llvm::to_vector(llvm::seq<unsigned>(0, op->getNumOperands())));
    return success();
  };
  auto zero = [](Operation *) { return success(); };

  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      // Constants and piecewise-constant functions: zero tangent.
      .Case<arith::ConstantOp, arith::SIToFPOp, arith::UIToFPOp, math::CeilOp,
            math::FloorOp, math::RoundOp, math::RoundEvenOp, math::TruncOp,
            tensor::EmptyOp>(zero)

      //===------------------------------------------------------------===//
      // arith
      //===------------------------------------------------------------===//
      .Case<arith::AddFOp>([&](auto) { return set(add(t(0), t(1))); })
      .Case<arith::SubFOp>([&](auto) { return set(sub(t(0), t(1))); })
      .Case<arith::NegFOp>([&](auto) { return set(neg(t(0))); })
      .Case<arith::MulFOp>([&](auto) {
        Value r = scale(t(0), p(1));
        if (t(1))
          r = add(r, mulf(p(0), t(1)));
        return set(r);
      })
      .Case<arith::DivFOp>([&](auto) {
        // d(x/y) = (dx - dy * ans) / y.
        Value num = sub(t(0), scale(t(1), ans));
        return set(num ? divf(num, p(1)) : Value());
      })
      .Case<arith::RemFOp>([&](auto) {
        // d rem(x, y) = dx - dy * trunc(x / y).
        Value r = t(0);
        if (t(1)) {
          Value q = math::TruncOp::create(b, loc(), divf(p(0), p(1)));
          r = sub(r, mulf(t(1), q));
        }
        return set(r);
      })
      .Case<arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
            arith::MinNumFOp>([&](auto) {
        if (!t(0) && !t(1))
          return success();
        return set(balancedChoice(*this, p(0), p(1), ans, t(0), t(1)));
      })
      .Case<arith::ExtFOp, arith::TruncFOp>([&](auto) { return linear({0}); })
      .Case<arith::SelectOp>([&](auto) {
        return linear({1, 2});
      })

      //===------------------------------------------------------------===//
      // math
      //===------------------------------------------------------------===//
      .Case<math::ExpOp>([&](auto) { return set(scale(t(0), ans)); })
      .Case<math::Exp2Op>([&](auto) {
        return set(t(0) ? mulf(t(0), mulf(ans, c(ans, kLn2))) : Value());
      })
      .Case<math::ExpM1Op>([&](auto) {
        return set(t(0) ? mulf(t(0), addf(ans, one(ans))) : Value());
      })
      .Case<math::LogOp>(
          [&](auto) { return set(t(0) ? divf(t(0), p(0)) : Value()); })
      .Case<math::Log1pOp>([&](auto) {
        return set(t(0) ? divf(t(0), addf(p(0), one(ans))) : Value());
      })
      .Case<math::Log2Op>([&](auto) {
        return set(t(0) ? divf(t(0), mulf(p(0), c(ans, kLn2))) : Value());
      })
      .Case<math::Log10Op>([&](auto) {
        return set(t(0) ? divf(t(0), mulf(p(0), c(ans, kLn10))) : Value());
      })
      .Case<math::SqrtOp>([&](auto) {
        // g * (0.5 / ans)
        return set(t(0) ? mulf(t(0), divf(c(ans, 0.5), ans)) : Value());
      })
      .Case<math::RsqrtOp>([&](auto) {
        // g * (-0.5 * (ans / x))
        return set(t(0) ? mulf(t(0), mulf(c(ans, -0.5), divf(ans, p(0))))
                        : Value());
      })
      .Case<math::CbrtOp>([&](auto) {
        // g * (1/3) / ans^2
        return set(t(0) ? mulf(t(0), divf(c(ans, 1.0 / 3.0), mulf(ans, ans)))
                        : Value());
      })
      .Case<math::TanhOp>([&](auto) {
        // (g + g * ans) * (1 - ans)
        if (!t(0))
          return success();
        return set(mulf(addf(t(0), mulf(t(0), ans)), subf(one(ans), ans)));
      })
      .Case<math::SinOp>([&](auto) {
        if (!t(0))
          return success();
        return set(mulf(t(0), math::CosOp::create(b, loc(), p(0))));
      })
      .Case<math::CosOp>([&](auto) {
        if (!t(0))
          return success();
        return set(negf(mulf(t(0), math::SinOp::create(b, loc(), p(0)))));
      })
      .Case<math::TanOp>([&](auto) {
        // g * (1 + ans^2)
        return set(t(0) ? mulf(t(0), addf(one(ans), mulf(ans, ans))) : Value());
      })
      .Case<math::SinhOp>([&](auto) {
        if (!t(0))
          return success();
        return set(mulf(t(0), math::CoshOp::create(b, loc(), p(0))));
      })
      .Case<math::CoshOp>([&](auto) {
        if (!t(0))
          return success();
        return set(mulf(t(0), math::SinhOp::create(b, loc(), p(0))));
      })
      .Case<math::ErfOp, math::ErfcOp>([&](auto) {
        // +-2/sqrt(pi) * g * exp(-x^2)
        if (!t(0))
          return success();
        double k = isa<math::ErfOp>(op) ? kTwoOverSqrtPi : -kTwoOverSqrtPi;
        Value gauss = math::ExpOp::create(b, loc(), negf(mulf(p(0), p(0))));
        return set(mulf(c(ans, k), mulf(t(0), gauss)));
      })
      .Case<math::AtanOp>([&](auto) {
        // g / (1 + x^2)
        return set(t(0) ? divf(t(0), addf(one(ans), mulf(p(0), p(0))))
                        : Value());
      })
      .Case<math::Atan2Op>([&](auto) {
        // atan2(x, y): (dx * y - dy * x) / (x^2 + y^2)
        if (!t(0) && !t(1))
          return success();
        Value den = addf(mulf(p(0), p(0)), mulf(p(1), p(1)));
        Value num = sub(scale(t(0), p(1)), scale(t(1), p(0)));
        return set(divf(num, den));
      })
      .Case<math::PowFOp>([&](auto) {
        // lhs: g * (y * x^(y - 1)); rhs: g * (log(x, 0 -> 1) * ans).
        Value r;
        if (t(0)) {
          Value xPow =
              math::PowFOp::create(b, loc(), p(0), subf(p(1), one(ans)));
          r = mulf(t(0), mulf(p(1), xPow));
        }
        if (t(1)) {
          Value isZero = cmpf(Pred::OEQ, p(0), zeros(ans.getType()));
          Value safeX = select(isZero, one(ans), p(0));
          Value logX = math::LogOp::create(b, loc(), safeX);
          r = add(r, mulf(t(1), mulf(logX, ans)));
        }
        return set(r);
      })
      .Case<math::FPowIOp>([&](auto) {
        // Integer exponent n: g * (n == 0 ? 0 : n * x^(n - 1)).
        if (!t(0))
          return success();
        Value n = p(1);
        Type nType = n.getType();
        Value nZero = constant(nType, 0.0), nOne = constant(nType, 1.0);
        Value isZero =
            arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::eq, n, nZero);
        Value xPow = math::FPowIOp::create(
            b, loc(), p(0), arith::SubIOp::create(b, loc(), n, nOne));
        Value nF = arith::SIToFPOp::create(b, loc(), ans.getType(), n);
        Value jac = select(isZero, zeros(ans.getType()), mulf(nF, xPow));
        return set(mulf(t(0), jac));
      })
      .Case<math::AbsFOp>([&](auto) {
        // x >= 0 ? g : -g
        if (!t(0))
          return success();
        Value nonNeg = cmpf(Pred::OGE, p(0), zeros(ans.getType()));
        return set(select(nonNeg, t(0), negf(t(0))));
      })
      .Case<math::FmaOp>([&](auto) {
        // fma(a, b, c) = a * b + c
        Value r = scale(t(0), p(1));
        if (t(1))
          r = add(r, mulf(p(0), t(1)));
        return set(add(r, t(2)));
      })

      //===------------------------------------------------------------===//
      // pallas block ops
      //===------------------------------------------------------------===//
      .Case<DotOp>([&](DotOp dot) {
        // d(A.B + C) = dA.B + A.dB + dC, chained through the accumulator.
        auto newDot = cast<DotOp>(newOp);
        Value acc = dot.getAcc() ? tangent(dot.getAcc()) : Value();
        auto emitDot = [&](Value lhs, Value rhs, Value acc) -> Value {
          return DotOp::create(b, loc(), newDot.getType(), lhs, rhs, acc,
                               newDot.getTransposeLhs(),
                               newDot.getTransposeRhs(), newDot.getPrecision());
        };
        if (Value dA = tangent(dot.getLhs()))
          acc = emitDot(dA, newDot.getRhs(), acc);
        if (Value dB = tangent(dot.getRhs()))
          acc = emitDot(newDot.getLhs(), dB, acc);
        return set(acc);
      })
      .Case<ReduceOp>([&](ReduceOp reduce) {
        Value dx = t(0);
        if (!dx)
          return success();
        switch (reduce.getKind()) {
        case ReduceKind::Sum:
          return linear({0});
        case ReduceKind::Max:
        case ReduceKind::Min:
          return set(reduceChooser(*this, cast<ReduceOp>(newOp), dx));
        default:
          return noRule(op);
        }
      })
      .Case<BroadcastInDimOp, ReshapeOp, TransposeOp, CumsumOp>(
          [&](auto) { return linear({0}); })
      .Case<SelectOp>([&](auto) {
        return linear({1, 2});
      })
      .Case<MultipleOfOp, MaxContiguousOp>([&](auto) { return set(t(0)); })

      //===------------------------------------------------------------===//
      // tensor
      //===------------------------------------------------------------===//
      .Case<tensor::ExtractOp, tensor::SplatOp, tensor::ExtractSliceOp,
            tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp,
            tensor::ReshapeOp>([&](auto) { return linear({0}); })
      .Case<tensor::InsertOp, tensor::InsertSliceOp>([&](auto) {
        return linear({0, 1});
      })
      .Case<tensor::FromElementsOp, tensor::ConcatOp>(
          [&](auto) { return allOperands(); })

      .Default([&](Operation *) { return noRule(op); });
}
