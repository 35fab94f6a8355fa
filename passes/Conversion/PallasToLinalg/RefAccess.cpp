//===- RefAccess.cpp - pallas ref accesses to memref/bufferization -*- C++ -*-===//
//
// pallas.load/store/swap/atomic_rmw/atomic_cas/gather on a memref (a lowered
// ref).
//
// Static indexers are in bounds (the verifier checks them) and lower to a
// `memref.subview` of the ref plus `bufferization.to_tensor` (loads) or
// `bufferization.materialize_in_destination` (stores). A dynamic start
// follows interpret mode, by the op's rule (docs/dialect.md, "Dynamic
// starts"):
// - `fit` (JAX's get/swap/atomic_rmw discharge, `x_ref[pl.ds(s, n)]`): a
//   negative start counts from the end (s + dim) and the start is clamped to
//   [0, dim - size], as `lax.dynamic_slice` does, so the slice always lies
//   inside the ref. With a stride > 1 JAX gathers/scatters instead: every
//   lane's index wraps alone, loads clamp it to [0, dim - 1], stores drop it
//   outside [0, dim).
// - padded (masked_load/masked_swap, `plgpu.load`/`store`): JAX pads the ref
//   by the slice size, so a negative start counts from the padded end
//   (s + dim + size) and the start is clamped to [0, dim]; lanes past the end
//   read uninitialized values and are dropped on write.
// The fast path above runs when the whole slice is in bounds, otherwise an
// elementwise slow path checks every lane.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToLinalg/Lowering.h"
#include "passes/Utils/InterpretMode.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::lowering;

namespace {

/// One lowered indexer: per ref dimension the start (an index value,
/// clamped), size and stride.
struct Access {
  Value ref;
  MemRefType refType;
  SmallVector<Value> starts;
  SmallVector<OpFoldResult> offsets, sizes, strides;
  SmallVector<int64_t> strideValues;
  SmallVector<bool> point, dynamic;
  /// Per ref dimension: `memref.dim` for a dynamic dimension, else null
  /// (dimSize makes the constant).
  SmallVector<Value> dimSizes;
  SmallVector<int64_t> resultShape;
  /// i1: the whole slice lies inside the ref; null when statically known.
  Value inBounds;
  bool whole = false;
  /// Lanes wrap and clamp (loads) or drop (stores) one by one: a `fit` access
  /// with a stride, which JAX discharges as a gather/scatter.
  bool perLane = false;
};

Value indexConstant(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// The size of dimension `d` of the accessed ref, as an index value.
Value dimSize(OpBuilder &b, Location loc, const Access &a, size_t d) {
  if (a.dimSizes[d])
    return a.dimSizes[d];
  return indexConstant(b, loc, a.refType.getDimSize(d));
}

/// The `fit` unit attribute of a load/store/swap (docs/dialect.md, "Dynamic
/// starts").
bool hasFit(Operation *op) {
  if (auto load = dyn_cast<LoadOp>(op))
    return load.getFit();
  if (auto store = dyn_cast<StoreOp>(op))
    return store.getFit();
  if (auto swap = dyn_cast<SwapOp>(op))
    return swap.getFit();
  return false;
}

/// `i < 0 ? i + add : i`: a negative start or index counts from the end.
Value wrapNegative(OpBuilder &b, Location loc, Value i, Value add) {
  Value wrapped = arith::AddIOp::create(b, loc, i, add);
  Value negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i,
                                         indexConstant(b, loc, 0));
  return arith::SelectOp::create(b, loc, negative, wrapped, i);
}

Value wrapNegative(OpBuilder &b, Location loc, Value i, int64_t add) {
  return wrapNegative(b, loc, i, indexConstant(b, loc, add));
}

Value clampIndex(OpBuilder &b, Location loc, Value i, Value lo, Value hi) {
  i = arith::MaxSIOp::create(b, loc, i, lo);
  return arith::MinSIOp::create(b, loc, i, hi);
}

Value clampIndex(OpBuilder &b, Location loc, Value i, int64_t lo, int64_t hi) {
  i = arith::MaxSIOp::create(b, loc, i, indexConstant(b, loc, lo));
  return arith::MinSIOp::create(b, loc, i, indexConstant(b, loc, hi));
}

/// `v + k` on index values.
Value plus(OpBuilder &b, Location loc, Value v, int64_t k) {
  return arith::AddIOp::create(b, loc, v, indexConstant(b, loc, k));
}

/// The start of a slice of `span` elements at `s` in a dimension of
/// `limit` elements known only at run time (a symbolic array in memory
/// space `any`), by the access's rule: `fit` wraps once and moves the slice
/// inside the dimension (to 0 where it is longer than the dimension: the
/// lanes past the end then read unspecified values and drop their writes),
/// padded wraps by `limit + size` and clamps to [0, limit].
Value dynamicDimStart(OpBuilder &b, Location loc, Value s, Value limit,
                      int64_t span, int64_t size, bool fit) {
  Value zero = indexConstant(b, loc, 0);
  if (!fit)
    return clampIndex(b, loc, wrapNegative(b, loc, s, plus(b, loc, limit, size)),
                      zero, limit);
  Value last = arith::MaxSIOp::create(b, loc, plus(b, loc, limit, -span), zero);
  return clampIndex(b, loc, wrapNegative(b, loc, s, limit), zero, last);
}

Access buildAccess(OpBuilder &b, Location loc, Value ref, const Indexer &indexer,
                   bool fit) {
  Access a;
  a.ref = ref;
  a.refType = cast<MemRefType>(ref.getType());
  ArrayRef<int64_t> shape = a.refType.getShape();
  a.whole = true;
  if (fit)
    for (const IndexerDim &dim : indexer.dims)
      a.perLane |= !dim.isPoint && dim.stride > 1;
  for (auto [d, indexerDim] : llvm::enumerate(indexer.dims)) {
    IndexerDim dim = indexerDim;
    int64_t n = shape[d];
    bool dynamicDim = ShapedType::isDynamic(n);
    a.dimSizes.push_back(
        dynamicDim
            ? memref::DimOp::create(b, loc, ref, static_cast<int64_t>(d))
                  .getResult()
            : Value());
    int64_t span = dim.size == 0 ? 0 : (dim.size - 1) * dim.stride + 1;
    // A constant start inside the ref is a static one.
    std::optional<int64_t> constant;
    if (dim.isDynamic())
      constant = getConstantIntValue(dim.dynStart);
    if (!dynamicDim && constant && *constant >= 0 && *constant + span <= n) {
      dim.dynStart = Value();
      dim.staticStart = *constant;
    }
    // On a dynamic dimension every start is checked at run time.
    bool runtime = dim.isDynamic() || dynamicDim;
    if (runtime) {
      Value s = dim.isDynamic()
                    ? arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                                 dim.dynStart)
                          .getResult()
                    : indexConstant(b, loc, dim.staticStart);
      Value limit = dimSize(b, loc, a, d);
      bool check = span > 0;
      if (dynamicDim && !a.perLane) {
        s = dynamicDimStart(b, loc, s, limit, span, dim.size, fit);
      } else if (a.perLane) {
        // Raw start: laneIndices wraps every lane; the fast path runs when
        // the slice lies inside the ref as given.
        Value nonNegative = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::sge, s, indexConstant(b, loc, 0));
        a.inBounds = a.inBounds
                         ? arith::AndIOp::create(b, loc, a.inBounds, nonNegative)
                         : nonNegative;
      } else if (fit && span <= n) {
        // lax.dynamic_slice: wrap once, then move the slice inside the ref.
        s = clampIndex(b, loc, wrapNegative(b, loc, s, n), 0, n - span);
        check = false;
      } else {
        // The ref padded by the slice size at the end (dim + size long).
        s = clampIndex(b, loc, wrapNegative(b, loc, s, n + dim.size), 0, n);
      }
      a.starts.push_back(s);
      a.offsets.push_back(s);
      if (check) {
        Value end = arith::AddIOp::create(b, loc, s,
                                          indexConstant(b, loc, span));
        Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle,
                                         end, limit);
        a.inBounds =
            a.inBounds ? arith::AndIOp::create(b, loc, a.inBounds, ok) : ok;
      }
    } else {
      a.starts.push_back(indexConstant(b, loc, dim.staticStart));
      a.offsets.push_back(b.getIndexAttr(dim.staticStart));
    }
    a.sizes.push_back(b.getIndexAttr(dim.size));
    a.strides.push_back(b.getIndexAttr(dim.stride));
    a.strideValues.push_back(dim.stride);
    a.point.push_back(dim.isPoint);
    a.dynamic.push_back(runtime);
    if (!dim.isPoint)
      a.resultShape.push_back(dim.size);
    a.whole &= !dim.isPoint && !dim.isDynamic() && dim.staticStart == 0 &&
               dim.size == n && dim.stride == 1;
  }
  return a;
}

/// The slice as a memref view (rank-reduced over integer indices).
Value fastView(OpBuilder &b, Location loc, const Access &a) {
  if (a.whole)
    return a.ref;
  MemRefType type = memref::SubViewOp::inferRankReducedResultType(
      a.resultShape, a.refType, a.offsets, a.sizes, a.strides);
  return memref::SubViewOp::create(b, loc, type, a.ref, a.offsets, a.sizes,
                                   a.strides);
}

/// Ref indices of the lane at result position `ivs`.
SmallVector<Value> laneIndices(OpBuilder &b, Location loc, const Access &a,
                               ValueRange ivs) {
  SmallVector<Value> idx;
  unsigned r = 0;
  for (size_t d = 0; d < a.starts.size(); ++d) {
    Value i = a.starts[d];
    if (!a.point[d]) {
      Value iv = ivs[r++];
      if (a.strideValues[d] != 1)
        iv = arith::MulIOp::create(b, loc, iv,
                                   indexConstant(b, loc, a.strideValues[d]));
      i = arith::AddIOp::create(b, loc, i, iv);
    }
    // A gather wraps each negative lane index once (jnp indexing).
    if (a.perLane && a.dynamic[d])
      i = wrapNegative(b, loc, i, dimSize(b, loc, a, d));
    idx.push_back(i);
  }
  return idx;
}

/// i1: the lane at ref indices `idx` lies inside the ref.
Value laneInBounds(OpBuilder &b, Location loc, const Access &a,
                   ArrayRef<Value> idx) {
  Value ok;
  for (size_t d = 0; d < idx.size(); ++d) {
    if (!a.dynamic[d])
      continue;
    Value c = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, idx[d],
                                    dimSize(b, loc, a, d));
    if (a.perLane)
      c = arith::AndIOp::create(
          b, loc, c,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, idx[d],
                                indexConstant(b, loc, 0)));
    ok = ok ? arith::AndIOp::create(b, loc, ok, c) : c;
  }
  return ok ? ok : arith::ConstantIntOp::create(b, loc, 1, 1).getResult();
}

/// `if cond { then() } else { otherwise() }` yielding a value of `type`.
Value ifThenElse(OpBuilder &b, Location loc, Value cond, Type type,
                 function_ref<Value(OpBuilder &, Location)> then,
                 function_ref<Value(OpBuilder &, Location)> otherwise) {
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{type}, cond,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  scf::YieldOp::create(b, loc, then(b, loc));
  b.setInsertionPointToStart(ifOp.elseBlock());
  scf::YieldOp::create(b, loc, otherwise(b, loc));
  return ifOp.getResult(0);
}

/// `if cond { then() } else { otherwise() }` without results.
void ifThenElse(OpBuilder &b, Location loc, Value cond,
                function_ref<void(OpBuilder &, Location)> then,
                function_ref<void(OpBuilder &, Location)> otherwise) {
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, cond,
                                /*withElseRegion=*/static_cast<bool>(otherwise));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  then(b, loc);
  if (otherwise) {
    b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
    otherwise(b, loc);
  }
}

/// Reads the in-bounds slice as a tensor (or scalar) of `type`. With
/// `snapshot` the slice is copied first, so later writes to the ref do not
/// show through the tensor.
Value fastLoad(OpBuilder &b, Location loc, const Access &a, Type type,
               bool snapshot) {
  if (!isa<RankedTensorType>(type))
    return memref::LoadOp::create(b, loc, a.ref, a.starts);
  Value view = fastView(b, loc, a);
  if (snapshot) {
    auto bufType = MemRefType::get(a.resultShape, a.refType.getElementType());
    Value buf = memref::AllocOp::create(b, loc, bufType);
    linalg::CopyOp::create(b, loc, view, buf);
    view = buf;
  }
  return bufferization::ToTensorOp::create(b, loc, type, view,
                                           /*restrict=*/true);
}

/// Reads lane by lane; lanes past the end read the uninitialized value (a
/// per-lane access clamps every lane's index into the ref instead, as JAX's
/// gather does).
Value slowLoad(OpBuilder &b, Location loc, const Access &a, Type type) {
  Type elementType = a.refType.getElementType();
  auto guarded = [&](OpBuilder &b, Location loc, ArrayRef<Value> idx) {
    if (a.perLane) {
      SmallVector<Value> clamped(idx);
      for (size_t d = 0; d < clamped.size(); ++d)
        if (a.dynamic[d])
          clamped[d] = clampIndex(b, loc, clamped[d], indexConstant(b, loc, 0),
                                  plus(b, loc, dimSize(b, loc, a, d), -1));
      return memref::LoadOp::create(b, loc, a.ref, clamped).getResult();
    }
    return ifThenElse(
        b, loc, laneInBounds(b, loc, a, idx), elementType,
        [&](OpBuilder &b, Location loc) -> Value {
          return memref::LoadOp::create(b, loc, a.ref, idx);
        },
        [&](OpBuilder &b, Location loc) -> Value {
          return uninitializedValue(b, loc, elementType);
        });
  };
  if (!isa<RankedTensorType>(type))
    return guarded(b, loc, a.starts);
  return tensor::GenerateOp::create(
      b, loc, type, ValueRange{},
      [&](OpBuilder &b, Location loc, ValueRange ivs) {
        SmallVector<Value> idx = laneIndices(b, loc, a, ivs);
        tensor::YieldOp::create(b, loc, guarded(b, loc, idx));
      });
}

Value emitLoad(OpBuilder &b, Location loc, const Access &a, Type type,
               bool snapshot) {
  if (!a.inBounds)
    return fastLoad(b, loc, a, type, snapshot);
  return ifThenElse(
      b, loc, a.inBounds, type,
      [&](OpBuilder &b, Location loc) {
        return fastLoad(b, loc, a, type, snapshot);
      },
      [&](OpBuilder &b, Location loc) { return slowLoad(b, loc, a, type); });
}

/// Writes an in-bounds slice; masked-off lanes keep their old values.
void fastStore(OpBuilder &b, Location loc, const Access &a, Value value,
               Value mask) {
  if (!isa<RankedTensorType>(value.getType())) {
    if (mask)
      ifThenElse(
          b, loc, mask,
          [&](OpBuilder &b, Location loc) {
            memref::StoreOp::create(b, loc, value, a.ref, a.starts);
          },
          nullptr);
    else
      memref::StoreOp::create(b, loc, value, a.ref, a.starts);
    return;
  }
  if (mask) {
    Value old = fastLoad(b, loc, a, value.getType(), /*snapshot=*/true);
    value = arith::SelectOp::create(b, loc, mask, value, old);
  }
  bufferization::MaterializeInDestinationOp::create(
      b, loc, Type(), value, fastView(b, loc, a), /*restrict=*/false,
      /*writable=*/true);
}

/// Writes lane by lane, dropping lanes past the end and masked-off lanes.
void slowStore(OpBuilder &b, Location loc, const Access &a, Value value,
               Value mask) {
  auto store = [&](OpBuilder &b, Location loc, ValueRange ivs) {
    SmallVector<Value> idx = laneIndices(b, loc, a, ivs);
    Value ok = laneInBounds(b, loc, a, idx);
    Value lane = value, laneMask = mask;
    if (isa<RankedTensorType>(value.getType())) {
      lane = tensor::ExtractOp::create(b, loc, value, ivs);
      if (mask)
        laneMask = tensor::ExtractOp::create(b, loc, mask, ivs);
    }
    if (laneMask)
      ok = arith::AndIOp::create(b, loc, ok, laneMask);
    ifThenElse(
        b, loc, ok,
        [&](OpBuilder &b, Location loc) {
          memref::StoreOp::create(b, loc, lane, a.ref, idx);
        },
        nullptr);
  };
  if (!isa<RankedTensorType>(value.getType())) {
    store(b, loc, ValueRange{});
    return;
  }
  SmallVector<Value> lbs, ubs, steps;
  for (int64_t n : a.resultShape) {
    lbs.push_back(indexConstant(b, loc, 0));
    ubs.push_back(indexConstant(b, loc, n));
    steps.push_back(indexConstant(b, loc, 1));
  }
  scf::buildLoopNest(b, loc, lbs, ubs, steps, store);
}

void emitStore(OpBuilder &b, Location loc, const Access &a, Value value,
               Value mask) {
  if (!a.inBounds) {
    fastStore(b, loc, a, value, mask);
    return;
  }
  ifThenElse(
      b, loc, a.inBounds,
      [&](OpBuilder &b, Location loc) { fastStore(b, loc, a, value, mask); },
      [&](OpBuilder &b, Location loc) { slowStore(b, loc, a, value, mask); });
}

/// old `kind` value, for atomic_rmw.
Value combine(OpBuilder &b, Location loc, AtomicKind kind, Value old,
              Value value) {
  switch (kind) {
  case AtomicKind::Add:
    return combineArith(b, loc, ArithCombine::Add, old, value);
  case AtomicKind::Max:
    return combineArith(b, loc, ArithCombine::Max, old, value);
  case AtomicKind::Min:
    return combineArith(b, loc, ArithCombine::Min, old, value);
  case AtomicKind::And:
    return arith::AndIOp::create(b, loc, old, value);
  case AtomicKind::Or:
    return arith::OrIOp::create(b, loc, old, value);
  case AtomicKind::Xor:
    return arith::XOrIOp::create(b, loc, old, value);
  case AtomicKind::Xchg:
    return value;
  }
  llvm_unreachable("unknown atomic kind");
}

} // namespace

LogicalResult lowering::checkArgumentRef(Operation *op, StringRef arguments) {
  Type type = op->getOperand(0).getType();
  if (isa<MemRefType>(type))
    return success();
  return op->emitOpError() << "accesses " << type << ", which is not a "
                           << arguments
                           << "; only argument refs can be lowered";
}

LogicalResult lowering::lowerRefAccess(Operation *op, FuncState &state,
                                       RewriterBase &rewriter) {
  Location loc = op->getLoc();
  OpBuilder &b = rewriter;
  Value ref = op->getOperand(0);
  if (failed(checkArgumentRef(op, "kernel or index-map argument")))
    return failure();

  if (auto load = dyn_cast<LoadOp>(op)) {
    // The first op this lowering inserts (they all go before `op`).
    Operation *before = op->getPrevNode();
    Access a = buildAccess(b, loc, ref, load.getIndexer(), hasFit(op));
    Value v = emitLoad(b, loc, a, load.getType(),
                       /*snapshot=*/state.writtenRefs.contains(ref));
    // A cache hint rides on the reads of the ref (the GPU lowering's
    // global loads carry it into the PTX; everything else ignores it).
    if (StringAttr evict = load.getEvictionPolicyAttr()) {
      Operation *first =
          before ? before->getNextNode() : &op->getBlock()->front();
      for (Operation *o = first; o && o != op; o = o->getNextNode())
        o->walk([&](Operation *inner) {
          if (isa<bufferization::ToTensorOp, memref::LoadOp>(inner))
            inner->setAttr("pallas.eviction_policy", evict);
        });
    }
    if (load.getMask() && load.getOther())
      v = arith::SelectOp::create(b, loc, load.getMask(), v, load.getOther());
    rewriter.replaceOp(op, v);
    return success();
  }
  if (auto store = dyn_cast<StoreOp>(op)) {
    Access a = buildAccess(b, loc, ref, store.getIndexer(), hasFit(op));
    emitStore(b, loc, a, store.getValue(), store.getMask());
    rewriter.eraseOp(op);
    return success();
  }
  if (auto swap = dyn_cast<SwapOp>(op)) {
    Access a = buildAccess(b, loc, ref, swap.getIndexer(), hasFit(op));
    Value old = emitLoad(b, loc, a, swap.getType(), /*snapshot=*/true);
    emitStore(b, loc, a, swap.getValue(), swap.getMask());
    // Interpret mode: masked-off lanes return the value that was offered.
    if (swap.getMask())
      old = arith::SelectOp::create(b, loc, swap.getMask(), old,
                                    swap.getValue());
    rewriter.replaceOp(op, old);
    return success();
  }
  if (auto rmw = dyn_cast<AtomicRMWOp>(op)) {
    // JAX's atomic_rmw discharge slices without padding: always `fit`.
    Access a = buildAccess(b, loc, ref, rmw.getIndexer(), /*fit=*/true);
    Value old = emitLoad(b, loc, a, rmw.getType(), /*snapshot=*/true);
    Value updated = combine(b, loc, rmw.getKind(), old, rmw.getValue());
    emitStore(b, loc, a, updated, rmw.getMask());
    rewriter.replaceOp(op, old);
    return success();
  }
  auto cas = cast<AtomicCASOp>(op);
  Access a = buildAccess(b, loc, ref, cas.getIndexer(), /*fit=*/false);
  Value old = emitLoad(b, loc, a, cas.getType(), /*snapshot=*/true);
  Value equal =
      isa<FloatType>(getElementTypeOf(old.getType()))
          ? arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, old,
                                  cas.getCmp())
                .getResult()
          : arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, old,
                                  cas.getCmp())
                .getResult();
  Value updated = arith::SelectOp::create(b, loc, equal, cas.getValue(), old);
  emitStore(b, loc, a, updated, Value());
  rewriter.replaceOp(op, old);
  return success();
}

LogicalResult lowering::lowerGather(Operation *op, RewriterBase &rewriter) {
  auto gather = cast<GatherOp>(op);
  Location loc = op->getLoc();
  Value ref = gather.getRef();
  auto refType = dyn_cast<MemRefType>(ref.getType());
  if (!refType)
    return op->emitOpError() << "reads " << ref.getType()
                             << ", which is not a kernel or index-map "
                                "argument; only argument refs can be lowered";
  auto resultType = cast<RankedTensorType>(gather.getType());
  SmallVector<Value> indices(gather.getIndices());
  Value mask = gather.getMask(), other = gather.getOther();
  // Every lane reads ref[clamp(i0[p]), clamp(i1[p]), ...]: indices are
  // clamped into the ref as JAX's gather clamps them, so every read is in
  // bounds (masked-off lanes included, which then take `other`).
  auto body = [&](OpBuilder &b, Location l, ValueRange ivs) {
    SmallVector<Value> at;
    Value zero = indexConstant(b, l, 0);
    for (auto [d, t] : llvm::enumerate(indices)) {
      Value i = tensor::ExtractOp::create(b, l, t, ivs);
      Value ix = arith::IndexCastOp::create(b, l, b.getIndexType(), i);
      Value last =
          refType.isDynamicDim(d)
              ? arith::SubIOp::create(
                    b, l, memref::DimOp::create(b, l, ref, d).getResult(),
                    indexConstant(b, l, 1))
                    .getResult()
              : indexConstant(b, l, std::max<int64_t>(
                                        refType.getDimSize(d) - 1, 0));
      ix = arith::MaxSIOp::create(b, l, ix, zero);
      ix = arith::MinSIOp::create(b, l, ix, last);
      at.push_back(ix);
    }
    Value v = memref::LoadOp::create(b, l, ref, at);
    if (mask && other) {
      Value m = tensor::ExtractOp::create(b, l, mask, ivs);
      Value o = tensor::ExtractOp::create(b, l, other, ivs);
      v = arith::SelectOp::create(b, l, m, v, o);
    }
    tensor::YieldOp::create(b, l, v);
  };
  Value result = tensor::GenerateOp::create(rewriter, loc, resultType,
                                            ValueRange{}, body);
  rewriter.replaceOp(op, result);
  return success();
}

LogicalResult lowering::lowerDma(Operation *op, FuncState &,
                                 RewriterBase &rewriter) {
  Location loc = op->getLoc();
  OpBuilder &b = rewriter;
  if (isa<pallas::DmaWaitOp>(op)) {
    rewriter.eraseOp(op);
    return success();
  }
  auto dma = cast<pallas::DmaStartOp>(op);
  for (Value ref : {dma.getSrc(), dma.getDst()})
    if (!isa<MemRefType>(ref.getType()))
      return op->emitOpError() << "accesses " << ref.getType()
                               << ", which is not a kernel argument; only "
                                  "argument refs can be lowered";
  // JAX's dma_start discharge indexes both refs as get/swap do: `fit`.
  Access src =
      buildAccess(b, loc, dma.getSrc(), dma.getSrcIndexer(), /*fit=*/true);
  Type elementType = src.refType.getElementType();
  Type type = src.resultShape.empty()
                  ? elementType
                  : Type(RankedTensorType::get(src.resultShape, elementType));
  // A snapshot: src and dst may be the same ref.
  Value value = emitLoad(b, loc, src, type, /*snapshot=*/true);
  Access dst =
      buildAccess(b, loc, dma.getDst(), dma.getDstIndexer(), /*fit=*/true);
  emitStore(b, loc, dst, value, Value());
  rewriter.eraseOp(op);
  return success();
}
