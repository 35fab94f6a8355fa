//===- BlockOps.cpp - pallas block computations to linalg -------*- C++ -*-===//
//
// dot, reduce, broadcast_in_dim, iota, reshape, transpose, select, cumsum and
// the hints, on tensors.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToLinalg/Lowering.h"

#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::lowering;

namespace {

Value fill(OpBuilder &b, Location loc, Value scalar, RankedTensorType type) {
  return linalg::FillOp::create(b, loc, ValueRange{scalar},
                                ValueRange{emptyTensor(b, loc, type)})
      .getResult(0);
}

Value transposeTensor(OpBuilder &b, Location loc, Value value,
                      ArrayRef<int64_t> permutation) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape;
  for (int64_t p : permutation)
    shape.push_back(type.getDimSize(p));
  Value init = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
  return linalg::TransposeOp::create(b, loc, value, init, permutation)
      .getResult()[0];
}

//===----------------------------------------------------------------------===//
// dot
//===----------------------------------------------------------------------===//

Value lowerDot(OpBuilder &b, DotOp op) {
  Location loc = op.getLoc();
  RankedTensorType resultType = op.getType();
  Type elementType = resultType.getElementType();
  int64_t rank = resultType.getRank();
  // Swap the last two dims (keeping a batch dim in front).
  SmallVector<int64_t> swapLast =
      rank == 2 ? SmallVector<int64_t>{1, 0} : SmallVector<int64_t>{0, 2, 1};
  Value lhs = convertElementType(b, loc, op.getLhs(), elementType);
  Value rhs = convertElementType(b, loc, op.getRhs(), elementType);
  if (op.getTransposeLhs())
    lhs = transposeTensor(b, loc, lhs, swapLast);
  if (op.getTransposeRhs())
    rhs = transposeTensor(b, loc, rhs, swapLast);
  Value init = op.getAcc();
  if (!init) {
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(elementType));
    init = fill(b, loc, zero, resultType);
  }
  Operation *mm =
      rank == 2
          ? linalg::MatmulOp::create(b, loc, TypeRange{resultType},
                                     ValueRange{lhs, rhs}, ValueRange{init})
                .getOperation()
          : linalg::BatchMatmulOp::create(b, loc, TypeRange{resultType},
                                          ValueRange{lhs, rhs},
                                          ValueRange{init})
                .getOperation();
  // A precision other than the default travels as a discardable attribute:
  // the GPU lowering reads it to choose tf32 tensor cores or exact f32.
  if (op.getPrecision() != DotPrecision::Default)
    mm->setAttr(kDotPrecisionAttrName, op.getPrecisionAttr());
  return mm->getResult(0);
}

//===----------------------------------------------------------------------===//
// reduce
//===----------------------------------------------------------------------===//

/// The identity of `kind` for `type` (sum: 0, max: -inf / min int, ...).
Value reduceIdentity(OpBuilder &b, Location loc, ReduceKind kind, Type type) {
  if (kind == ReduceKind::Sum)
    return arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
  bool wantsLow = kind == ReduceKind::Max || kind == ReduceKind::Argmax;
  if (auto f = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(
        b, loc,
        b.getFloatAttr(f, APFloat::getInf(f.getFloatSemantics(), wantsLow)));
  unsigned w = type.getIntOrFloatBitWidth();
  APInt v = wantsLow ? APInt::getSignedMinValue(w) : APInt::getSignedMaxValue(w);
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, v));
}

} // namespace

Value lowering::combineArith(OpBuilder &b, Location loc, ArithCombine kind,
                             Value lhs, Value rhs) {
  bool isFloat = isa<FloatType>(getElementTypeOf(lhs.getType()));
  switch (kind) {
  case ArithCombine::Add:
    return isFloat ? arith::AddFOp::create(b, loc, lhs, rhs).getResult()
                   : arith::AddIOp::create(b, loc, lhs, rhs).getResult();
  case ArithCombine::Max:
    return isFloat ? arith::MaximumFOp::create(b, loc, lhs, rhs).getResult()
                   : arith::MaxSIOp::create(b, loc, lhs, rhs).getResult();
  case ArithCombine::Min:
    return isFloat ? arith::MinimumFOp::create(b, loc, lhs, rhs).getResult()
                   : arith::MinSIOp::create(b, loc, lhs, rhs).getResult();
  }
  llvm_unreachable("unknown combination");
}

namespace {

Value combineReduce(OpBuilder &b, Location loc, ReduceKind kind, Value x,
                    Value acc) {
  switch (kind) {
  case ReduceKind::Sum:
    return combineArith(b, loc, ArithCombine::Add, x, acc);
  case ReduceKind::Max:
    return combineArith(b, loc, ArithCombine::Max, x, acc);
  case ReduceKind::Min:
    return combineArith(b, loc, ArithCombine::Min, x, acc);
  default:
    llvm_unreachable("not a plain reduction");
  }
}

/// argmax/argmin over one dimension: a generic carrying (value, index). The
/// combiner does not depend on the visiting order: a lane wins if it beats
/// the best value, or ties it with a lower index; NaN beats every number
/// (XLA's argmax rule), the first NaN winning.
Value lowerArgReduce(OpBuilder &b, ReduceOp op) {
  Location loc = op.getLoc();
  auto inType = cast<RankedTensorType>(op.getInput().getType());
  RankedTensorType outType = op.getType();
  Type valueType = inType.getElementType();
  Type indexType = outType.getElementType();
  int64_t rank = inType.getRank();
  int64_t dim = op.getDims()[0];
  bool isMax = op.getKind() == ReduceKind::Argmax;
  bool isFloat = isa<FloatType>(valueType);

  Value bestValue =
      fill(b, loc, reduceIdentity(b, loc, op.getKind(), valueType),
           outType.clone(valueType));
  unsigned iw = indexType.getIntOrFloatBitWidth();
  Value noIndex = arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(indexType, APInt::getSignedMaxValue(iw)));
  Value bestIndex = fill(b, loc, noIndex, outType);

  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> kept;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t i = 0; i < rank; ++i) {
    if (i != dim)
      kept.push_back(getAffineDimExpr(i, ctx));
    iterators.push_back(i == dim ? utils::IteratorType::reduction
                                 : utils::IteratorType::parallel);
  }
  AffineMap inMap = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap outMap = AffineMap::get(rank, 0, kept, ctx);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{outType.clone(valueType), outType},
      ValueRange{op.getInput()}, ValueRange{bestValue, bestIndex},
      ArrayRef<AffineMap>{inMap, outMap, outMap}, iterators,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        Value x = args[0], best = args[1], bestIdx = args[2];
        Value idx = linalg::IndexOp::create(b, loc, dim);
        idx = arith::IndexCastOp::create(b, loc, indexType, idx);
        Value lower = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                            idx, bestIdx);
        // x beats best (strictly) and ties with it.
        auto compare = [&](arith::CmpFPredicate f,
                           arith::CmpIPredicate i) -> Value {
          if (isFloat)
            return arith::CmpFOp::create(b, loc, f, x, best);
          return arith::CmpIOp::create(b, loc, i, x, best);
        };
        Value beats =
            isMax
                ? compare(arith::CmpFPredicate::OGT, arith::CmpIPredicate::sgt)
                : compare(arith::CmpFPredicate::OLT, arith::CmpIPredicate::slt);
        Value ties =
            compare(arith::CmpFPredicate::OEQ, arith::CmpIPredicate::eq);
        Value take;
        if (isFloat) {
          Value xNaN =
              arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
          Value bestNaN = arith::CmpFOp::create(
              b, loc, arith::CmpFPredicate::UNO, best, best);
          Value number = arith::OrIOp::create(
              b, loc, beats, arith::AndIOp::create(b, loc, ties, lower));
          Value bestNotNaN = arith::XOrIOp::create(
              b, loc, bestNaN, arith::ConstantIntOp::create(b, loc, 1, 1));
          Value nan = arith::AndIOp::create(
              b, loc, xNaN, arith::OrIOp::create(b, loc, bestNotNaN, lower));
          take = arith::OrIOp::create(
              b, loc, arith::AndIOp::create(b, loc, number, bestNotNaN), nan);
        } else {
          take = arith::OrIOp::create(
              b, loc, beats, arith::AndIOp::create(b, loc, ties, lower));
        }
        Value v = arith::SelectOp::create(b, loc, take, x, best);
        Value i = arith::SelectOp::create(b, loc, take, idx, bestIdx);
        linalg::YieldOp::create(b, loc, ValueRange{v, i});
      });
  return generic.getResult(1);
}

Value lowerReduce(OpBuilder &b, ReduceOp op) {
  if (op.getKind() == ReduceKind::Argmax || op.getKind() == ReduceKind::Argmin)
    return lowerArgReduce(b, op);
  Location loc = op.getLoc();
  RankedTensorType outType = op.getType();
  Value init = fill(
      b, loc, reduceIdentity(b, loc, op.getKind(), outType.getElementType()),
      outType);
  SmallVector<int64_t> dims(op.getDims());
  llvm::sort(dims);
  ReduceKind kind = op.getKind();
  return linalg::ReduceOp::create(
             b, loc, ValueRange{op.getInput()}, ValueRange{init}, dims,
             [&](OpBuilder &b, Location loc, ValueRange args) {
               linalg::YieldOp::create(
                   b, loc, combineReduce(b, loc, kind, args[0], args[1]));
             })
      .getResult(0);
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

Value lowerBroadcast(OpBuilder &b, BroadcastInDimOp op) {
  Location loc = op.getLoc();
  RankedTensorType outType = op.getType();
  Value operand = op.getOperand();
  auto inType = dyn_cast<RankedTensorType>(operand.getType());
  if (!inType)
    return fill(b, loc, operand, outType);
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> exprs;
  for (auto [i, d] : llvm::enumerate(op.getDims())) {
    bool expands = inType.getDimSize(i) == 1 && outType.getDimSize(d) != 1;
    exprs.push_back(expands ? getAffineConstantExpr(0, ctx)
                            : getAffineDimExpr(d, ctx));
  }
  int64_t rank = outType.getRank();
  AffineMap inMap = AffineMap::get(rank, 0, exprs, ctx);
  AffineMap outMap = AffineMap::getMultiDimIdentityMap(rank, ctx);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{outType}, ValueRange{operand},
             ValueRange{emptyTensor(b, loc, outType)},
             ArrayRef<AffineMap>{inMap, outMap}, iterators,
             [](OpBuilder &b, Location loc, ValueRange args) {
               linalg::YieldOp::create(b, loc, args[0]);
             })
      .getResult(0);
}

Value lowerIota(OpBuilder &b, IotaOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = op.getType();
  int64_t rank = type.getRank();
  int64_t dim = op.getDimension();
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  AffineMap map = AffineMap::getMultiDimIdentityMap(rank, b.getContext());
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ValueRange{},
             ValueRange{emptyTensor(b, loc, type)}, ArrayRef<AffineMap>{map},
             iterators,
             [&](OpBuilder &b, Location loc, ValueRange) {
               Value i = linalg::IndexOp::create(b, loc, dim);
               if (!type.getElementType().isIndex())
                 i = arith::IndexCastOp::create(b, loc, type.getElementType(),
                                                i);
               linalg::YieldOp::create(b, loc, i);
             })
      .getResult(0);
}

/// Row-major reshape: collapse to 1-D (or 0-D), then expand.
Value lowerReshape(OpBuilder &b, ReshapeOp op) {
  Location loc = op.getLoc();
  Value v = op.getOperand();
  auto inType = cast<RankedTensorType>(v.getType());
  RankedTensorType outType = op.getType();
  if (inType.getShape() == outType.getShape())
    return v;
  auto allDims = [](int64_t rank) {
    SmallVector<ReassociationIndices> r;
    if (rank > 0)
      r.push_back(llvm::to_vector(llvm::seq<int64_t>(0, rank)));
    return r;
  };
  // To 1-D first.
  int64_t n = inType.getNumElements();
  auto flat = RankedTensorType::get({n}, inType.getElementType());
  if (inType.getRank() == 0)
    v = tensor::ExpandShapeOp::create(b, loc, flat, v,
                                      SmallVector<ReassociationIndices>{});
  else if (inType.getRank() > 1)
    v = tensor::CollapseShapeOp::create(b, loc, flat, v,
                                        allDims(inType.getRank()));
  // Then to the result shape.
  if (outType.getRank() == 0)
    return tensor::CollapseShapeOp::create(
        b, loc, outType, v, SmallVector<ReassociationIndices>{});
  if (outType.getRank() == 1)
    return v;
  return tensor::ExpandShapeOp::create(b, loc, outType, v,
                                       allDims(outType.getRank()));
}

/// Inclusive prefix sum along `dim`: an scf.for adding lane i-1 into lane i
/// (or i+1 into i, reversed).
Value lowerCumsum(OpBuilder &b, CumsumOp op) {
  Location loc = op.getLoc();
  RankedTensorType type = op.getType();
  int64_t dim = op.getDim();
  int64_t n = type.getDimSize(dim);
  if (n <= 1)
    return op.getOperand();
  bool reverse = op.getReverse();
  bool isFloat = isa<FloatType>(type.getElementType());
  SmallVector<int64_t> sliceShape(type.getShape());
  sliceShape[dim] = 1;
  auto sliceType = type.clone(sliceShape);
  Value lb = arith::ConstantIndexOp::create(b, loc, 1);
  Value ub = arith::ConstantIndexOp::create(b, loc, n);
  Value step = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(
      b, loc, lb, ub, step, ValueRange{op.getOperand()},
      [&](OpBuilder &b, Location loc, Value iv, ValueRange iter) {
        Value acc = iter[0];
        // Forward: cur = iv, prev = iv - 1. Reverse: cur = n-1-iv, prev =
        // cur + 1.
        Value one = arith::ConstantIndexOp::create(b, loc, 1);
        Value cur, prev;
        if (reverse) {
          Value last = arith::ConstantIndexOp::create(b, loc, n - 1);
          cur = arith::SubIOp::create(b, loc, last, iv);
          prev = arith::AddIOp::create(b, loc, cur, one);
        } else {
          cur = iv;
          prev = arith::SubIOp::create(b, loc, iv, one);
        }
        auto slice = [&](Value at) {
          SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
          offsets[dim] = at;
          SmallVector<OpFoldResult> sizes;
          for (int64_t s : sliceShape)
            sizes.push_back(b.getIndexAttr(s));
          SmallVector<OpFoldResult> strides(type.getRank(),
                                            b.getIndexAttr(1));
          return std::make_tuple(offsets, sizes, strides);
        };
        auto [co, cs, cst] = slice(cur);
        auto [po, ps, pst] = slice(prev);
        Value c = tensor::ExtractSliceOp::create(b, loc, sliceType, acc, co,
                                                 cs, cst);
        Value p = tensor::ExtractSliceOp::create(b, loc, sliceType, acc, po,
                                                 ps, pst);
        Value s = isFloat ? arith::AddFOp::create(b, loc, c, p).getResult()
                          : arith::AddIOp::create(b, loc, c, p).getResult();
        Value next =
            tensor::InsertSliceOp::create(b, loc, s, acc, co, cs, cst);
        scf::YieldOp::create(b, loc, next);
      });
  return loop.getResult(0);
}

} // namespace

LogicalResult lowering::lowerBlockOp(Operation *op, RewriterBase &rewriter) {
  OpBuilder &b = rewriter;
  Value result =
      llvm::TypeSwitch<Operation *, Value>(op)
          .Case<DotOp>([&](DotOp dot) { return lowerDot(b, dot); })
          .Case<ReduceOp>([&](ReduceOp r) { return lowerReduce(b, r); })
          .Case<BroadcastInDimOp>(
              [&](BroadcastInDimOp bc) { return lowerBroadcast(b, bc); })
          .Case<IotaOp>([&](IotaOp iota) { return lowerIota(b, iota); })
          .Case<ReshapeOp>([&](ReshapeOp r) { return lowerReshape(b, r); })
          .Case<TransposeOp>([&](TransposeOp t) {
            return transposeTensor(b, t.getLoc(), t.getOperand(),
                                   t.getPermutation());
          })
          .Case<SelectOp>([&](SelectOp s) {
            return arith::SelectOp::create(b, s.getLoc(), s.getCond(),
                                           s.getOnTrue(), s.getOnFalse())
                .getResult();
          })
          .Case<CumsumOp>([&](CumsumOp c) { return lowerCumsum(b, c); })
          .Case<MultipleOfOp>([](MultipleOfOp h) { return h.getOperand(); })
          .Case<MaxContiguousOp>(
              [](MaxContiguousOp h) { return h.getOperand(); })
          .Default([](Operation *) { return Value(); });
  if (!result)
    return op->emitOpError() << "has no lowering to linalg";
  rewriter.replaceOp(op, result);
  return success();
}
