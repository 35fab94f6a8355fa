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

/// What a rule is written with: t(i), the tangent of operand i (null:
/// zero); p(i), its primal value; ans, the primal result; set(v) records
/// the result's tangent; linear(...) applies the op to the tangents of the
/// operands given (allOperands(): of all).
struct Emitter::Rule {
  Emitter &e;
  Operation *op, *newOp;
  Value ans;

  Value t(unsigned i) const { return e.tangent(op->getOperand(i)); }
  Value p(unsigned i) const { return newOp->getOperand(i); }
  LogicalResult set(Value v) {
    e.setTangent(op->getResult(0), v);
    return success();
  }
  Value one(Value like) { return e.constant(like.getType(), 1.0); }
  Value c(Value like, double v) { return e.constant(like.getType(), v); }
  LogicalResult linear(std::initializer_list<unsigned> data) {
    e.emitLinear(op, SmallVector<unsigned>(data));
    return success();
  }
  LogicalResult allOperands() {
    e.emitLinear(op,
                 llvm::to_vector(llvm::seq<unsigned>(0, op->getNumOperands())));
    return success();
  }
};

LogicalResult Emitter::emitRule(Operation *op, Operation *newOp) {
  Rule rule{*this, op, newOp, newOp->getResult(0)};
  // Constants and piecewise-constant functions: zero tangent.
  if (isa<arith::ConstantOp, arith::SIToFPOp, arith::UIToFPOp, math::CeilOp,
          math::FloorOp, math::RoundOp, math::RoundEvenOp, math::TruncOp,
          tensor::EmptyOp>(op))
    return success();
  if (isa_and_nonnull<arith::ArithDialect>(op->getDialect()))
    return emitArithRule(rule);
  if (isa_and_nonnull<math::MathDialect>(op->getDialect()))
    return emitMathRule(rule);
  return emitBlockRule(rule);
}

/// arith: JAX's rules for add, sub, mul, div, rem, max/min (`_balanced_eq`),
/// the casts and select.
LogicalResult Emitter::emitArithRule(Rule &rule) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(rule.op)
      .Case<arith::AddFOp>(
          [&](auto) { return rule.set(add(rule.t(0), rule.t(1))); })
      .Case<arith::SubFOp>(
          [&](auto) { return rule.set(sub(rule.t(0), rule.t(1))); })
      .Case<arith::NegFOp>([&](auto) { return rule.set(neg(rule.t(0))); })
      .Case<arith::MulFOp>([&](auto) {
        Value r = scale(rule.t(0), rule.p(1));
        if (rule.t(1))
          r = add(r, mulf(rule.p(0), rule.t(1)));
        return rule.set(r);
      })
      .Case<arith::DivFOp>([&](auto) {
        // d(x/y) = (dx - dy * ans) / y.
        Value num = sub(rule.t(0), scale(rule.t(1), rule.ans));
        return rule.set(num ? divf(num, rule.p(1)) : Value());
      })
      .Case<arith::RemFOp>([&](auto) {
        // d rem(x, y) = dx - dy * trunc(x / y).
        Value r = rule.t(0);
        if (rule.t(1)) {
          Value q = math::TruncOp::create(b, loc(), divf(rule.p(0), rule.p(1)));
          r = sub(r, mulf(rule.t(1), q));
        }
        return rule.set(r);
      })
      .Case<arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
            arith::MinNumFOp>([&](auto) {
        if (!rule.t(0) && !rule.t(1))
          return success();
        return rule.set(balancedChoice(*this, rule.p(0), rule.p(1), rule.ans,
                                       rule.t(0), rule.t(1)));
      })
      .Case<arith::ExtFOp, arith::TruncFOp>(
          [&](auto) { return rule.linear({0}); })
      .Case<arith::SelectOp>([&](auto) {
        return rule.linear({1, 2});
      })
      .Default([&](Operation *) { return noRule(rule.op); });
}

/// math: JAX's rules for the elementary functions (jax/_src/lax/lax.py).
LogicalResult Emitter::emitMathRule(Rule &rule) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(rule.op)
      .Case<math::ExpOp>(
          [&](auto) { return rule.set(scale(rule.t(0), rule.ans)); })
      .Case<math::Exp2Op>([&](auto) {
        return rule.set(
            rule.t(0) ? mulf(rule.t(0), mulf(rule.ans, rule.c(rule.ans, kLn2)))
                      : Value());
      })
      .Case<math::ExpM1Op>([&](auto) {
        return rule.set(
            rule.t(0) ? mulf(rule.t(0), addf(rule.ans, rule.one(rule.ans)))
                      : Value());
      })
      .Case<math::LogOp>([&](auto) {
        return rule.set(rule.t(0) ? divf(rule.t(0), rule.p(0)) : Value());
      })
      .Case<math::Log1pOp>([&](auto) {
        return rule.set(
            rule.t(0) ? divf(rule.t(0), addf(rule.p(0), rule.one(rule.ans)))
                      : Value());
      })
      .Case<math::Log2Op>([&](auto) {
        return rule.set(
            rule.t(0) ? divf(rule.t(0), mulf(rule.p(0), rule.c(rule.ans, kLn2)))
                      : Value());
      })
      .Case<math::Log10Op>([&](auto) {
        return rule.set(
            rule.t(0)
                ? divf(rule.t(0), mulf(rule.p(0), rule.c(rule.ans, kLn10)))
                : Value());
      })
      .Case<math::SqrtOp>([&](auto) {
        // g * (0.5 / ans)
        return rule.set(
            rule.t(0) ? mulf(rule.t(0), divf(rule.c(rule.ans, 0.5), rule.ans))
                      : Value());
      })
      .Case<math::RsqrtOp>([&](auto) {
        // g * (-0.5 * (ans / x))
        return rule.set(rule.t(0)
                            ? mulf(rule.t(0), mulf(rule.c(rule.ans, -0.5),
                                                   divf(rule.ans, rule.p(0))))
                            : Value());
      })
      .Case<math::CbrtOp>([&](auto) {
        // g * (1/3) / ans^2
        return rule.set(rule.t(0)
                            ? mulf(rule.t(0), divf(rule.c(rule.ans, 1.0 / 3.0),
                                                   mulf(rule.ans, rule.ans)))
                            : Value());
      })
      .Case<math::TanhOp>([&](auto) {
        // (g + g * ans) * (1 - ans)
        if (!rule.t(0))
          return success();
        return rule.set(mulf(addf(rule.t(0), mulf(rule.t(0), rule.ans)),
                             subf(rule.one(rule.ans), rule.ans)));
      })
      .Case<math::SinOp, math::CosOp, math::SinhOp, math::CoshOp>([&](auto) {
        // g * cos x, -(g * sin x), g * cosh x, g * sinh x
        if (!rule.t(0))
          return success();
        Value x = rule.p(0);
        Value derivative;
        if (isa<math::SinOp>(rule.op))
          derivative = math::CosOp::create(b, loc(), x);
        else if (isa<math::CosOp>(rule.op))
          derivative = math::SinOp::create(b, loc(), x);
        else if (isa<math::SinhOp>(rule.op))
          derivative = math::CoshOp::create(b, loc(), x);
        else
          derivative = math::SinhOp::create(b, loc(), x);
        Value g = mulf(rule.t(0), derivative);
        return rule.set(isa<math::CosOp>(rule.op) ? negf(g) : g);
      })
      .Case<math::TanOp>([&](auto) {
        // g * (1 + ans^2)
        return rule.set(rule.t(0)
                            ? mulf(rule.t(0), addf(rule.one(rule.ans),
                                                   mulf(rule.ans, rule.ans)))
                            : Value());
      })
      .Case<math::ErfOp, math::ErfcOp>([&](auto) {
        // +-2/sqrt(pi) * g * exp(-x^2)
        if (!rule.t(0))
          return success();
        double k = isa<math::ErfOp>(rule.op) ? kTwoOverSqrtPi : -kTwoOverSqrtPi;
        Value gauss =
            math::ExpOp::create(b, loc(), negf(mulf(rule.p(0), rule.p(0))));
        return rule.set(mulf(rule.c(rule.ans, k), mulf(rule.t(0), gauss)));
      })
      .Case<math::AtanOp>([&](auto) {
        // g / (1 + x^2)
        return rule.set(rule.t(0)
                            ? divf(rule.t(0), addf(rule.one(rule.ans),
                                                   mulf(rule.p(0), rule.p(0))))
                            : Value());
      })
      .Case<math::Atan2Op>([&](auto) {
        // atan2(x, y): (dx * y - dy * x) / (x^2 + y^2)
        if (!rule.t(0) && !rule.t(1))
          return success();
        Value den =
            addf(mulf(rule.p(0), rule.p(0)), mulf(rule.p(1), rule.p(1)));
        Value num =
            sub(scale(rule.t(0), rule.p(1)), scale(rule.t(1), rule.p(0)));
        return rule.set(divf(num, den));
      })
      .Case<math::PowFOp>([&](auto) {
        // lhs: g * (y * x^(y - 1)); rhs: g * (log(x, 0 -> 1) * ans).
        Value r;
        if (rule.t(0)) {
          Value xPow = math::PowFOp::create(
              b, loc(), rule.p(0), subf(rule.p(1), rule.one(rule.ans)));
          r = mulf(rule.t(0), mulf(rule.p(1), xPow));
        }
        if (rule.t(1)) {
          Value isZero = cmpf(Pred::OEQ, rule.p(0), zeros(rule.ans.getType()));
          Value safeX = select(isZero, rule.one(rule.ans), rule.p(0));
          Value logX = math::LogOp::create(b, loc(), safeX);
          r = add(r, mulf(rule.t(1), mulf(logX, rule.ans)));
        }
        return rule.set(r);
      })
      .Case<math::FPowIOp>([&](auto) {
        // Integer exponent n: g * (n == 0 ? 0 : n * x^(n - 1)).
        if (!rule.t(0))
          return success();
        Value n = rule.p(1);
        Type nType = n.getType();
        Value nZero = constant(nType, 0.0), nOne = constant(nType, 1.0);
        Value isZero =
            arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::eq, n, nZero);
        Value xPow = math::FPowIOp::create(
            b, loc(), rule.p(0), arith::SubIOp::create(b, loc(), n, nOne));
        Value nF = arith::SIToFPOp::create(b, loc(), rule.ans.getType(), n);
        Value jac = select(isZero, zeros(rule.ans.getType()), mulf(nF, xPow));
        return rule.set(mulf(rule.t(0), jac));
      })
      .Case<math::AbsFOp>([&](auto) {
        // x >= 0 ? g : -g
        if (!rule.t(0))
          return success();
        Value nonNeg = cmpf(Pred::OGE, rule.p(0), zeros(rule.ans.getType()));
        return rule.set(select(nonNeg, rule.t(0), negf(rule.t(0))));
      })
      .Case<math::FmaOp>([&](auto) {
        // fma(a, b, c) = a * b + c
        Value r = scale(rule.t(0), rule.p(1));
        if (rule.t(1))
          r = add(r, mulf(rule.p(0), rule.t(1)));
        return rule.set(add(r, rule.t(2)));
      })
      .Default([&](Operation *) { return noRule(rule.op); });
}

/// The pallas block ops (dot, reductions, shape ops, select) and the tensor
/// ops.
LogicalResult Emitter::emitBlockRule(Rule &rule) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(rule.op)
      .Case<DotOp>([&](DotOp dot) {
        // d(A.B + C) = dA.B + A.dB + dC, chained through the accumulator.
        auto newDot = cast<DotOp>(rule.newOp);
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
        return rule.set(acc);
      })
      .Case<ReduceOp>([&](ReduceOp reduce) {
        Value dx = rule.t(0);
        if (!dx)
          return success();
        switch (reduce.getKind()) {
        case ReduceKind::Sum:
          return rule.linear({0});
        case ReduceKind::Max:
        case ReduceKind::Min:
          return rule.set(reduceChooser(*this, cast<ReduceOp>(rule.newOp), dx));
        default:
          return noRule(rule.op);
        }
      })
      .Case<BroadcastInDimOp, ReshapeOp, TransposeOp, CumsumOp>(
          [&](auto) { return rule.linear({0}); })
      .Case<SelectOp>([&](auto) {
        return rule.linear({1, 2});
      })
      .Case<MultipleOfOp, MaxContiguousOp>(
          [&](auto) { return rule.set(rule.t(0)); })

      //===------------------------------------------------------------===//
      // tensor
      //===------------------------------------------------------------===//
      .Case<tensor::ExtractOp, tensor::SplatOp, tensor::ExtractSliceOp,
            tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp,
            tensor::ReshapeOp>([&](auto) { return rule.linear({0}); })
      .Case<tensor::InsertOp, tensor::InsertSliceOp>([&](auto) {
        return rule.linear({0, 1});
      })
      .Case<tensor::FromElementsOp, tensor::ConcatOp>(
          [&](auto) { return rule.allOperands(); })
      .Default([&](Operation *) { return noRule(rule.op); });
}
