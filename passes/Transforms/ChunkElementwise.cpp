//===- ChunkElementwise.cpp - pallas-chunk-elementwise ----------*- C++ -*-===//
//
// A block computed by a long elementwise chain from iotas and scalars (a
// random-bits kernel) is stored by a loop over chunks of its leading
// dimension instead of all at once, so the GPU lowerings' per-thread
// unrolling stays the size of one chunk. Passes.td has the details.
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::pallas {
#define GEN_PASS_DEF_PALLASCHUNKELEMENTWISE
#include "passes/Transforms/Passes.h.inc"
} // namespace mlir::pallas

using namespace mlir;
using namespace mlir::pallas;

namespace {

/// The chain of ops that computes a stored block of shape `shape`, in
/// program order, or nothing where one of them cannot be computed a chunk
/// at a time.
struct Chain {
  ArrayRef<int64_t> shape;
  SetVector<Operation *> ops;

  /// Whether `v` is a tensor of the block's shape (any element type).
  bool isBlock(Value v) const {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return t && t.getShape() == shape;
  }

  /// Whether `op`, whose results are blocks, computes each element of them
  /// from the same element of its block operands (or from the chunk's
  /// position, for an iota) and can be recomputed on a chunk.
  bool chunkable(Operation *op) const {
    if (op->getNumRegions() != 0 || op->getNumResults() != 1 ||
        !isMemoryEffectFree(op))
      return false;
    if (auto c = dyn_cast<arith::ConstantOp>(op)) {
      auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
      return dense && dense.isSplat();
    }
    if (isa<IotaOp>(op))
      return true;
    if (auto b = dyn_cast<BroadcastInDimOp>(op)) {
      // A scalar, or a tensor whose dimension mapped to the leading one has
      // size 1: every chunk broadcasts the same operand.
      auto from = dyn_cast<RankedTensorType>(b.getOperand().getType());
      if (!from)
        return true;
      for (auto [i, d] : llvm::enumerate(b.getDims()))
        if (d == 0 && from.getDimSize(i) != 1)
          return false;
      return true;
    }
    if (!op->hasTrait<OpTrait::Elementwise>() && !isa<SelectOp>(op))
      return false;
    // Every tensor operand is a block (scalars are the same for every
    // chunk): broadcasting ops are handled above.
    return llvm::all_of(op->getOperands(), [&](Value v) {
      return !isa<ShapedType>(v.getType()) || isBlock(v);
    });
  }

  /// Collects the ops computing `value`; false where one is not chunkable
  /// or the chain reads a block some other way (a load, a block argument).
  bool collect(Value value) {
    SmallVector<Value> work{value};
    while (!work.empty()) {
      Value v = work.pop_back_val();
      Operation *def = v.getDefiningOp();
      if (!def)
        return false;
      if (ops.contains(def))
        continue;
      if (!chunkable(def))
        return false;
      ops.insert(def);
      for (Value operand : def->getOperands())
        if (isBlock(operand))
          work.push_back(operand);
    }
    // Program order, so that cloning sees each operand before its users.
    SmallVector<Operation *> sorted(ops.begin(), ops.end());
    llvm::sort(sorted, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    ops = SetVector<Operation *>(sorted.begin(), sorted.end());
    return llvm::all_of(sorted, [&](Operation *op) {
      return op->getBlock() == sorted.front()->getBlock();
    });
  }
};

/// The largest divisor of `rows` whose chunk (`rows` / that many rows of
/// `rowElements` each, times `numOps`) fits `budget`; `rows` when the
/// whole block does.
int64_t chunkRows(int64_t rows, int64_t rowElements, int64_t numOps,
                  int64_t budget) {
  for (int64_t c = rows; c >= 1; --c)
    if (rows % c == 0 && c * rowElements * numOps <= budget)
      return c;
  return 1;
}

/// `type` (a block) with its leading dimension `rows`.
RankedTensorType chunkType(Type type, int64_t rows) {
  auto t = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(t.getShape());
  shape[0] = rows;
  return t.clone(shape);
}

/// Recomputes `op` of the chain on the chunk starting at row `row` (an
/// index), with `map` holding the chunked operands.
Value cloneOnChunk(OpBuilder &b, Operation *op, int64_t rows, Value row,
                   IRMapping &map) {
  Location loc = op->getLoc();
  RankedTensorType type = chunkType(op->getResult(0).getType(), rows);
  if (auto c = dyn_cast<arith::ConstantOp>(op))
    return arith::ConstantOp::create(
        b, loc, cast<DenseElementsAttr>(c.getValue()).resizeSplat(type));
  if (auto iota = dyn_cast<IotaOp>(op)) {
    Value chunk = IotaOp::create(b, loc, type, iota.getDimensionAttr());
    if (iota.getDimension() != 0)
      return chunk;
    // Rows of a chunk count from its start.
    Type element = type.getElementType();
    Value start = element.isIndex()
                      ? row
                      : arith::IndexCastOp::create(b, loc, element, row);
    Value starts = BroadcastInDimOp::create(
        b, loc, type, start, b.getDenseI64ArrayAttr({}));
    return arith::AddIOp::create(b, loc, chunk, starts);
  }
  Operation *clone = b.clone(*op, map);
  clone->getResult(0).setType(type);
  return clone->getResult(0);
}

/// Replaces `store` of `chain` by a loop over chunks of `rows` rows.
void chunkStore(StoreOp store, const Chain &chain, int64_t rows) {
  OpBuilder b(store);
  Location loc = store.getLoc();
  Indexer indexer = store.getIndexer();
  // The indexer's entry that the value's leading dimension comes from.
  size_t lead = 0;
  while (indexer.dims[lead].isPoint)
    ++lead;
  int64_t total = chain.shape[0];
  Value lb = arith::ConstantIndexOp::create(b, loc, 0);
  Value ub = arith::ConstantIndexOp::create(b, loc, total);
  Value step = arith::ConstantIndexOp::create(b, loc, rows);
  auto loop = scf::ForOp::create(b, loc, lb, ub, step);
  b.setInsertionPointToStart(loop.getBody());
  Value row = loop.getInductionVar();
  IRMapping map;
  for (Operation *op : chain.ops)
    map.map(op->getResult(0), cloneOnChunk(b, op, rows, row, map));

  // The same indexer with the leading entry starting at the chunk's row.
  SmallVector<Value> dynStarts;
  SmallVector<int64_t> starts, sizes, strides;
  for (auto [i, d] : llvm::enumerate(indexer.dims)) {
    if (i == lead) {
      Value r = arith::IndexCastOp::create(b, loc, b.getI32Type(), row);
      if (d.staticStart != 0)
        r = arith::AddIOp::create(
            b, loc, r,
            arith::ConstantIntOp::create(b, loc, d.staticStart, 32));
      dynStarts.push_back(r);
      starts.push_back(ShapedType::kDynamic);
      sizes.push_back(rows);
    } else {
      if (d.isDynamic())
        dynStarts.push_back(d.dynStart);
      starts.push_back(d.isDynamic() ? ShapedType::kDynamic : d.staticStart);
      sizes.push_back(d.isPoint ? kPointIndex : d.size);
    }
    strides.push_back(d.stride);
  }
  auto chunked = StoreOp::create(
      b, loc, store.getRef(), dynStarts, b.getDenseI64ArrayAttr(starts),
      b.getDenseI64ArrayAttr(sizes), b.getDenseI64ArrayAttr(strides),
      map.lookup(store.getValue()), /*mask=*/Value(), store.getFitAttr());
  chunked->setDiscardableAttrs(store->getDiscardableAttrDictionary());
  store.erase();
  // The block-sized chain is dead where nothing else used it.
  for (Operation *op : llvm::reverse(chain.ops))
    if (op->use_empty())
      op->erase();
}

/// The chunk rows for `store`, or 0 where it stays as it is.
int64_t planStore(StoreOp store, Chain &chain, int64_t budget) {
  auto type = dyn_cast<RankedTensorType>(store.getValue().getType());
  if (!type || !type.hasStaticShape() || type.getRank() == 0 ||
      store.getMask())
    return 0;
  Indexer indexer = store.getIndexer();
  const IndexerDim *lead = nullptr;
  for (const IndexerDim &d : indexer.dims)
    if (!d.isPoint) {
      lead = &d;
      break;
    }
  // A dynamic start is brought in range for the whole slice ({fit}): a
  // chunk's start cannot be brought in range the same way.
  if (!lead || lead->isDynamic() || lead->stride != 1)
    return 0;
  chain.shape = type.getShape();
  if (!chain.collect(store.getValue()))
    return 0;
  int64_t rowElements = type.getNumElements() / type.getDimSize(0);
  int64_t numOps = static_cast<int64_t>(chain.ops.size());
  if (type.getNumElements() * numOps <= budget)
    return 0;
  int64_t rows = chunkRows(type.getDimSize(0), rowElements, numOps, budget);
  return rows < type.getDimSize(0) ? rows : 0;
}

struct ChunkElementwisePass
    : pallas::impl::PallasChunkElementwiseBase<ChunkElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<StoreOp> stores;
    getOperation().walk([&](KernelOp kernel) {
      kernel.walk([&](StoreOp store) { stores.push_back(store); });
    });
    for (StoreOp store : stores) {
      Chain chain;
      if (int64_t rows = planStore(store, chain, maxElementOps))
        chunkStore(store, chain, rows);
    }
  }
};

} // namespace
