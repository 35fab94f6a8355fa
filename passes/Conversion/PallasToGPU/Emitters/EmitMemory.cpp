//===- EmitMemory.cpp - memref and bufferization ops ------------*- C++ -*-===//
//
// The memory ops of the kernel body, one emitter per op: views of kernel
// arguments (subview, casts), snapshot buffers, whole-block reads and
// writes (to_tensor, materialize_in_destination, linalg.copy) through the
// distributed loads and stores of EmitContext (Memory.cpp), scalar loads,
// stores and atomics (one thread writes, every thread reads), and the
// scratch buffers kept in registers, whose reads and writes rebind
// registers instead of touching memory.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/Emitters/EmitContext.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::gpu;

namespace {

struct Select {
  Value cond, value, old;
};

/// `v` as an elementwise select of tensors: `arith.select` or the
/// `linalg.generic` pallas-to-linalg makes of one.
std::optional<Select> selectOf(Value v) {
  if (auto sel = v.getDefiningOp<arith::SelectOp>()) {
    if (!isa<RankedTensorType>(sel.getCondition().getType()))
      return std::nullopt;
    return Select{sel.getCondition(), sel.getTrueValue(), sel.getFalseValue()};
  }
  auto g = v.getDefiningOp<linalg::GenericOp>();
  if (!g || g.getNumDpsInputs() != 3 || g.getNumDpsInits() != 1 ||
      g->getNumResults() != 1 || g.getNumReductionLoops() != 0 ||
      !llvm::all_of(g.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return std::nullopt;
  Block &body = g.getRegion().front();
  if (body.getOperations().size() != 2)
    return std::nullopt;
  auto sel = dyn_cast<arith::SelectOp>(body.front());
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (!sel || !yield || yield.getOperand(0) != sel.getResult() ||
      sel.getCondition() != body.getArgument(0) ||
      sel.getTrueValue() != body.getArgument(1) ||
      sel.getFalseValue() != body.getArgument(2))
    return std::nullopt;
  return Select{g.getDpsInputs()[0], g.getDpsInputs()[1], g.getDpsInputs()[2]};
}

/// Where the old value `tt` reads was taken: the copy into its snapshot
/// buffer, else `tt` itself.
Operation *snapshotPoint(bufferization::ToTensorOp tt) {
  for (Operation *user : tt.getBuffer().getUsers())
    if (auto copy = dyn_cast<linalg::CopyOp>(user);
        copy && copy.getOutputs()[0] == tt.getBuffer())
      return copy;
  return tt;
}

/// Whether `from` and `to` are in one block and nothing between them may
/// write memory: then the lanes a masked store leaves alone still hold the
/// old value it selected against.
bool nothingWrittenBetween(Operation *from, Operation *to) {
  if (from->getBlock() != to->getBlock() || !from->isBeforeInBlock(to))
    return false;
  for (Operation *op = from->getNextNode(); op && op != to;
       op = op->getNextNode()) {
    if (isMemoryEffectFree(op))
      continue;
    auto iface = dyn_cast<MemoryEffectOpInterface>(op);
    if (!iface || iface.hasEffect<MemoryEffects::Write>() ||
        op->getNumRegions() != 0)
      return false;
  }
  return true;
}

/// Whether two views address the same elements.
bool sameView(const View &a, const View &b) {
  return a.base == b.base && a.offsets == b.offsets && a.dimOf == b.dimOf &&
         a.strides == b.strides && a.shape == b.shape;
}

/// The memref and bufferization ops (and linalg.copy, the casts of
/// kernel arguments).
class MemoryEmitter : EmitterBase {
public:
  using EmitterBase::EmitterBase;

  LogicalResult emitSubview(Operation *op);
  /// unrealized_conversion_cast, memref.cast: the source's view.
  LogicalResult emitCast(Operation *op);
  /// Snapshot buffers only (a copy of a ref read whole).
  LogicalResult emitAlloc(Operation *op);
  LogicalResult emitNothing(Operation *) { return success(); }
  LogicalResult emitCopy(Operation *op);
  LogicalResult emitToTensor(Operation *op);
  LogicalResult emitMaterialize(Operation *op);
  LogicalResult emitLoad(Operation *op);
  LogicalResult emitStore(Operation *op);
  LogicalResult emitAtomic(Operation *op);
  LogicalResult emitDim(Operation *op);
  /// The other ops of the two dialects.
  LogicalResult emitUnsupported(Operation *op);

private:
  /// The view `memref` was bound to (an error at `op` when none).
  const View *viewOf(Operation *op, Value memref);
  /// The base indices of scalar `indices` into `view`.
  SmallVector<Value> scalarIndices(const View &view, ValueRange indices);
  /// The view a masked store through `mat` writes as a store under its
  /// mask (its select's true value), or null when it writes the select.
  const View *maskedStoreView(bufferization::MaterializeInDestinationOp mat);
  /// Whether every use of `tt` is the old value of such a masked store.
  bool onlyMaskedStoreOld(bufferization::ToTensorOp tt);
  /// i1: this is thread 0 (what must happen once per block).
  Value electFirst(Location loc);
  /// A scalar computed by thread 0, given to every thread.
  Value broadcastFromFirst(Location loc, Value v);
};

} // namespace

void mlir::pallas::gpu::populateMemoryEmitters(EmitterRegistry &r) {
  r.add<memref::SubViewOp>(
      emitWith<MemoryEmitter, &MemoryEmitter::emitSubview>);
  r.add<UnrealizedConversionCastOp, memref::CastOp>(
      emitWith<MemoryEmitter, &MemoryEmitter::emitCast>);
  r.add<memref::AllocOp>(emitWith<MemoryEmitter, &MemoryEmitter::emitAlloc>);
  r.add<memref::DeallocOp>(
      emitWith<MemoryEmitter, &MemoryEmitter::emitNothing>);
  r.add<linalg::CopyOp>(emitWith<MemoryEmitter, &MemoryEmitter::emitCopy>);
  r.add<bufferization::ToTensorOp>(
      emitWith<MemoryEmitter, &MemoryEmitter::emitToTensor>);
  r.add<bufferization::MaterializeInDestinationOp>(
      emitWith<MemoryEmitter, &MemoryEmitter::emitMaterialize>);
  r.add<memref::LoadOp>(emitWith<MemoryEmitter, &MemoryEmitter::emitLoad>);
  r.add<memref::StoreOp>(emitWith<MemoryEmitter, &MemoryEmitter::emitStore>);
  r.add<memref::AtomicRMWOp, memref::GenericAtomicRMWOp>(
      emitWith<MemoryEmitter, &MemoryEmitter::emitAtomic>);
  r.add<memref::DimOp>(emitWith<MemoryEmitter, &MemoryEmitter::emitDim>);
  r.addDialect<memref::MemRefDialect, bufferization::BufferizationDialect>(
      emitWith<MemoryEmitter, &MemoryEmitter::emitUnsupported>);
}

const View *MemoryEmitter::viewOf(Operation *op, Value memref) {
  auto it = emission.views.find(memref);
  if (it == emission.views.end()) {
    op->emitOpError() << "accesses a memref that is not a kernel argument "
                         "or a view of one; the GPU lowering cannot "
                         "place it";
    return nullptr;
  }
  return &it->second;
}

SmallVector<Value> MemoryEmitter::scalarIndices(const View &view,
                                                ValueRange indices) {
  SmallVector<Value> c;
  for (Value i : indices)
    c.push_back(emission.scalars.lookup(i));
  return cx.baseIndices(view, c);
}

Value MemoryEmitter::electFirst(Location loc) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, kc.tid,
                               cx.idx(0))
      .getResult();
}

Value MemoryEmitter::broadcastFromFirst(Location loc, Value v) {
  Type type = v.getType();
  bool isBool = type.isInteger(1);
  int64_t bytes;
  View ws = cx.workspace({1}, type, 0, false, bytes);
  auto ifOp = scf::IfOp::create(b, loc, electFirst(loc), false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value s = isBool
                  ? arith::ExtUIOp::create(b, loc, b.getI8Type(), v).getResult()
                  : v;
    memref::StoreOp::create(b, loc, s, ws.base, ValueRange{cx.idx(0)});
  }
  cx.barrier();
  Value r = memref::LoadOp::create(b, loc, ws.base, ValueRange{cx.idx(0)});
  cx.barrier();
  if (isBool)
    r = arith::TruncIOp::create(b, loc, type, r);
  return r;
}

LogicalResult MemoryEmitter::emitSubview(Operation *op) {
  auto sv = cast<memref::SubViewOp>(op);
  const View *src = viewOf(op, sv.getSource());
  if (!src)
    return failure();
  if (ShapedType::isDynamicShape(sv.getStaticSizes()) ||
      llvm::any_of(sv.getStaticStrides(), ShapedType::isDynamic))
    return op->emitOpError() << "has dynamic sizes or strides";
  emission.views[sv.getResult()] = cx.subview(*src, sv);
  return success();
}

LogicalResult MemoryEmitter::emitCast(Operation *op) {
  if (op->getNumOperands() != 1 || op->getNumResults() != 1 ||
      !isa<MemRefType>(op->getResult(0).getType()))
    return op->emitOpError() << "has no lowering to a GPU target";
  const View *src = viewOf(op, op->getOperand(0));
  if (!src)
    return failure();
  emission.views[op->getResult(0)] = *src;
  return success();
}

LogicalResult MemoryEmitter::emitAlloc(Operation *op) {
  for (Operation *user : op->getResult(0).getUsers()) {
    if (auto copy = dyn_cast<linalg::CopyOp>(user);
        copy && copy.getOutputs()[0] == op->getResult(0))
      continue;
    if (isa<bufferization::ToTensorOp, memref::DeallocOp>(user))
      continue;
    return op->emitOpError()
           << "allocates memory inside the kernel, which the GPU lowering "
              "does not support (only snapshot copies of refs)";
  }
  return success();
}

LogicalResult MemoryEmitter::emitCopy(Operation *op) {
  auto copy = cast<linalg::CopyOp>(op);
  Value src = copy.getInputs()[0], dst = copy.getOutputs()[0];
  // A snapshot of a scratch buffer kept in registers: its registers now.
  if (PromotionState::Promoted *p = cx.promotedOf(src)) {
    promotion.promotedSnapshots[dst] = p->regs;
    return success();
  }
  const View *from = viewOf(op, src);
  if (!from)
    return failure();
  if (dst.getDefiningOp<memref::AllocOp>()) {
    emission.snapshots[dst] = *from;
    return success();
  }
  const View *to = viewOf(op, dst);
  if (!to)
    return failure();
  auto type = RankedTensorType::get(from->shape, from->elementType());
  int id = cx.defaultLayout(type);
  cx.beforeAccess(*from, id, false);
  auto regs = cx.load(*from, id);
  if (failed(regs))
    return failure();
  cx.beforeAccess(*to, id, true);
  return cx.store(*to, id, *regs);
}

LogicalResult MemoryEmitter::emitToTensor(Operation *op) {
  auto tt = cast<bufferization::ToTensorOp>(op);
  Value buffer = tt.getBuffer();
  // Scratch kept in registers, or a snapshot of one: its registers.
  if (PromotionState::Promoted *p = cx.promotedOf(buffer)) {
    cx.setDist(tt.getResult(), Dist{p->layout, p->regs});
    return success();
  }
  if (auto it = promotion.promotedSnapshots.find(buffer);
      it != promotion.promotedSnapshots.end()) {
    cx.setDist(
        tt.getResult(),
        Dist{cx.promotedOf(cx.rootOfSnapshot(buffer))->layout, it->second});
    return success();
  }
  const View *view = nullptr;
  if (auto it = emission.snapshots.find(buffer); it != emission.snapshots.end())
    view = &it->second;
  else if (!(view = viewOf(op, buffer)))
    return failure();
  int id = cx.layoutOrDefault(tt.getResult());
  // The old value of a masked store that emitMaterialize turns into a
  // store under the mask: never read. Loading it would still stage it
  // through shared memory (a layout conversion: stores and barriers that
  // outlive the dead loads).
  if (onlyMaskedStoreOld(tt)) {
    // In the select's layout, so that no conversion moves it either.
    id = cx.layoutOrDefault(*tt.getResult().getUsers().begin()->getResults()
                                 .begin());
    Type element = cast<RankedTensorType>(tt.getType()).getElementType();
    SmallVector<Value> regs(cx.layout(id).numRegs(),
                            cx.uninitialized(element));
    cx.setDist(tt.getResult(), Dist{id, regs});
    return success();
  }
  return loadAs(cx, tt.getResult(), *view, id, evictionPolicy(tt));
}

const View *MemoryEmitter::maskedStoreView(
    bufferization::MaterializeInDestinationOp mat) {
  if (cx.promotedOf(mat.getDest()))
    return nullptr;
  auto vit = emission.views.find(mat.getDest());
  if (vit == emission.views.end() || vit->second.isShared())
    return nullptr;
  auto sel = selectOf(mat.getSource());
  if (!sel)
    return nullptr;
  auto tt = sel->old.getDefiningOp<bufferization::ToTensorOp>();
  if (!tt)
    return nullptr;
  const View *old = nullptr;
  if (auto it = emission.snapshots.find(tt.getBuffer());
      it != emission.snapshots.end())
    old = &it->second;
  else if (auto it = emission.views.find(tt.getBuffer());
           it != emission.views.end())
    old = &it->second;
  if (!old || !sameView(*old, vit->second) ||
      !nothingWrittenBetween(snapshotPoint(tt), mat))
    return nullptr;
  return &vit->second;
}

bool MemoryEmitter::onlyMaskedStoreOld(bufferization::ToTensorOp tt) {
  if (tt.getResult().use_empty())
    return false;
  for (OpOperand &use : tt.getResult().getUses()) {
    Operation *user = use.getOwner();
    if (user->getNumResults() != 1)
      return false;
    auto sel = selectOf(user->getResult(0));
    if (!sel || sel->old != tt.getResult() || sel->cond == tt.getResult() ||
        sel->value == tt.getResult() || user->getResult(0).use_empty())
      return false;
    for (Operation *consumer : user->getResult(0).getUsers()) {
      auto mat = dyn_cast<bufferization::MaterializeInDestinationOp>(consumer);
      if (!mat || !maskedStoreView(mat))
        return false;
    }
  }
  return true;
}

LogicalResult MemoryEmitter::emitMaterialize(Operation *op) {
  auto mat = cast<bufferization::MaterializeInDestinationOp>(op);
  if (PromotionState::Promoted *p = cx.promotedOf(mat.getDest())) {
    // In its layout the value's registers are rebound, not read: wgmma
    // groups computing them stay in flight (retireWgmma).
    Value src = mat.getSource();
    if (auto it = emission.dists.find(src); it != emission.dists.end() &&
                                            it->second.layout == p->layout &&
                                            !analysis.flexible.contains(src)) {
      p->regs = it->second.regs;
      return success();
    }
    auto regs = cx.get(src, p->layout);
    if (failed(regs))
      return failure();
    p->regs = *regs;
    return success();
  }
  const View *view = viewOf(op, mat.getDest());
  if (!view)
    return failure();
  Value value = mat.getSource();
  // A masked store arrives as `select(mask, value, snapshot of the
  // destination)`: store `value` under the mask instead of writing the
  // reloaded old lanes back (the reload is never emitted: emitToTensor).
  Value mask;
  if (maskedStoreView(mat)) {
    auto sel = selectOf(value);
    mask = sel->cond;
    value = sel->value;
  }
  int id = cx.layoutOrDefault(mat.getSource());
  auto regs = cx.get(value, id);
  if (failed(regs))
    return failure();
  SmallVector<Value> maskRegs;
  if (mask) {
    auto m = cx.get(mask, id);
    if (failed(m))
      return failure();
    maskRegs = *m;
  }
  if (!mask) {
    // A dot's accumulator: through shared memory into 16-byte stores
    // (Epilogue.cpp) when the output's rows allow them.
    FailureOr<bool> restaged = cx.storeEpilogue(*view, id, *regs, op);
    if (failed(restaged))
      return failure();
    if (*restaged)
      return success();
  }
  cx.beforeAccess(*view, id, true);
  return cx.store(*view, id, *regs, maskRegs);
}

LogicalResult MemoryEmitter::emitLoad(Operation *op) {
  auto ld = cast<memref::LoadOp>(op);
  Location loc = op->getLoc();
  const View *view = viewOf(op, ld.getMemref());
  if (!view)
    return failure();
  if (!emission.inLaneContext)
    cx.beforeAccess(*view, -1, false);
  SmallVector<Value> bi = scalarIndices(*view, ld.getIndices());
  Value ok = cx.inBounds(*view, bi);
  if (ok)
    for (size_t d = 0; d < bi.size(); ++d)
      if (view->checkLow[d] || view->checkHigh[d])
        bi[d] = arith::SelectOp::create(b, loc, ok, bi[d], cx.idx(0));
  Value v = memref::LoadOp::create(b, loc, view->base, bi);
  if (ok)
    v = arith::SelectOp::create(b, loc, ok, v,
                                cx.uninitialized(view->elementType()));
  emission.scalars.map(ld.getResult(), v);
  return success();
}

LogicalResult MemoryEmitter::emitStore(Operation *op) {
  auto st = cast<memref::StoreOp>(op);
  Location loc = op->getLoc();
  if (emission.inLaneContext)
    return op->emitOpError() << "stores inside a generated block";
  const View *view = viewOf(op, st.getMemref());
  if (!view)
    return failure();
  cx.beforeAccess(*view, -1, true);
  SmallVector<Value> bi = scalarIndices(*view, st.getIndices());
  Value pred = electFirst(loc);
  if (Value ok = cx.inBounds(*view, bi))
    pred = arith::AndIOp::create(b, loc, pred, ok);
  auto ifOp = scf::IfOp::create(b, loc, pred, false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  memref::StoreOp::create(b, loc, emission.scalars.lookup(st.getValue()),
                          view->base, bi);
  return success();
}

LogicalResult MemoryEmitter::emitAtomic(Operation *op) {
  Location loc = op->getLoc();
  if (emission.inLaneContext)
    return op->emitOpError() << "is an atomic inside a generated block";
  Value memref = op->getOperand(isa<memref::AtomicRMWOp>(op) ? 1 : 0);
  ValueRange indices = isa<memref::AtomicRMWOp>(op)
                           ? cast<memref::AtomicRMWOp>(op).getIndices()
                           : cast<memref::GenericAtomicRMWOp>(op).getIndices();
  const View *view = viewOf(op, memref);
  if (!view)
    return failure();
  cx.beforeAccess(*view, -1, true);
  SmallVector<Value> bi = scalarIndices(*view, indices);
  Value ok = cx.inBounds(*view, bi);
  Value pred = electFirst(loc);
  if (ok)
    pred = arith::AndIOp::create(b, loc, pred, ok);
  Type type = op->getResult(0).getType();
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{type}, pred, true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value old;
    if (auto rmw = dyn_cast<memref::AtomicRMWOp>(op)) {
      old = memref::AtomicRMWOp::create(b, loc, rmw.getKind(),
                                        emission.scalars.lookup(rmw.getValue()),
                                        view->base, bi);
    } else {
      auto gen = cast<memref::GenericAtomicRMWOp>(op);
      auto newGen = memref::GenericAtomicRMWOp::create(b, loc, view->base, bi);
      IRMapping m(emission.scalars);
      m.map(gen.getCurrentValue(), newGen.getCurrentValue());
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(newGen.getBody());
      for (Operation &inner : gen.getBody()->getOperations())
        b.clone(inner, m);
      old = newGen.getResult();
    }
    scf::YieldOp::create(b, loc, old);
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(b, loc, cx.uninitialized(type));
  }
  Value result = ifOp.getResult(0);
  if (!op->getResult(0).use_empty())
    result = broadcastFromFirst(loc, result);
  emission.scalars.map(op->getResult(0), result);
  return success();
}

LogicalResult MemoryEmitter::emitDim(Operation *op) {
  auto dim = cast<memref::DimOp>(op);
  auto ty = cast<MemRefType>(dim.getSource().getType());
  auto c = getConstantIntValue(dim.getIndex());
  if (!c)
    return op->emitOpError() << "has no lowering to a GPU target";
  if (!ty.isDynamicDim(*c)) {
    emission.scalars.map(dim.getResult(), cx.idx(ty.getDimSize(*c)));
    return success();
  }
  // A symbolic dimension of a whole-array ref: the size the kernel's
  // symbol parameters give its array.
  const View *view = viewOf(op, dim.getSource());
  if (!view)
    return failure();
  int64_t base = *c < view->rank() ? view->dimOf[*c] : -1;
  if (base < 0 || !view->isDynamicDim(base) ||
      !ShapedType::isDynamic(view->shape[*c]) || view->strides[*c] != 1)
    return op->emitOpError() << "has no lowering to a GPU target";
  emission.scalars.map(dim.getResult(), view->dynSizes[base]);
  return success();
}

LogicalResult MemoryEmitter::emitUnsupported(Operation *op) {
  return op->emitOpError() << "has no lowering to a GPU target";
}
