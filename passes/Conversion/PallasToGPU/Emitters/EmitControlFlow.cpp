//===- EmitControlFlow.cpp - structured control flow ------------*- C++ -*-===//
//
// scf.for / scf.if / scf.while carrying distributed tensors as their
// registers (uniform control flow across the block).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/DistributeUtils.h"
#include "passes/Conversion/PallasToGPU/Emitters/EmitContext.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::gpu;
using namespace mlir::pallas::gpu::detail;

//===----------------------------------------------------------------------===//
// Structured control flow
//===----------------------------------------------------------------------===//

namespace {

/// scf.for / scf.if / scf.while.
class ControlFlowEmitter : EmitterBase {
public:
  using EmitterBase::EmitterBase;
  LogicalResult emitFor(Operation *op);
  LogicalResult emitIf(Operation *op);
  LogicalResult emitWhile(Operation *op);

private:
  /// An scf.if whose branches only compute (pure ops) and update scratch
  /// buffers kept in registers: emitted as both branches plus selects, which
  /// avoids carrying the registers through control flow.
  bool isSelectable(scf::IfOp ifOp);
  /// Appends the register types of `values` (tensors: their layout's
  /// registers, else the value itself) to `types`, each value's layout (-1
  /// for scalars) to `layouts` and its start and count to `segments`.
  void flattenTypes(ValueRange values, SmallVector<int> &layouts,
                    SmallVector<Type> &types,
                    SmallVector<std::pair<unsigned, unsigned>> &segments);
  /// The registers of `values` (in `layouts`, as flattenTypes flattens
  /// them) appended to `out`: what a yield, condition or init carries.
  LogicalResult appendRegisters(ValueRange values, ArrayRef<int> layouts,
                                SmallVector<Value> &out);
  /// Maps each of `olds` to its registers among `news` (`segments`, as
  /// flattenTypes flattens them): a region's arguments or an op's results.
  void bindRegisters(ValueRange olds, ValueRange news, ArrayRef<int> layouts,
                     ArrayRef<std::pair<unsigned, unsigned>> segments);
};

} // namespace

void mlir::pallas::gpu::populateControlFlowEmitters(EmitterRegistry &r) {
  r.add<scf::ForOp>(emitWith<ControlFlowEmitter, &ControlFlowEmitter::emitFor>);
  r.add<scf::IfOp>(emitWith<ControlFlowEmitter, &ControlFlowEmitter::emitIf>);
  r.add<scf::WhileOp>(
      emitWith<ControlFlowEmitter, &ControlFlowEmitter::emitWhile>);
}

namespace {
/// Flattens tensors into their registers, keeping where each starts.
struct Flat {
  SmallVector<Value> values;
  SmallVector<Type> types;
  SmallVector<std::pair<unsigned, unsigned>> segments; // start, count
};
} // namespace

void ControlFlowEmitter::flattenTypes(
    ValueRange values, SmallVector<int> &layouts, SmallVector<Type> &types,
    SmallVector<std::pair<unsigned, unsigned>> &segments) {
  for (Value v : values) {
    unsigned start = types.size();
    if (auto t = dyn_cast<RankedTensorType>(v.getType())) {
      int id = analysis.layoutOf.count(v) ? analysis.layoutOf.lookup(v)
                                          : cx.defaultLayout(t);
      layouts.push_back(id);
      types.append(cx.layout(id).numRegs(), t.getElementType());
    } else {
      layouts.push_back(-1);
      types.push_back(v.getType());
    }
    segments.push_back({start, types.size() - start});
  }
}

LogicalResult ControlFlowEmitter::appendRegisters(ValueRange values,
                                                  ArrayRef<int> layouts,
                                                  SmallVector<Value> &out) {
  for (auto [i, v] : llvm::enumerate(values)) {
    if (layouts[i] >= 0) {
      auto regs = cx.get(v, layouts[i]);
      if (failed(regs))
        return failure();
      llvm::append_range(out, *regs);
    } else {
      out.push_back(emission.scalars.lookup(v));
    }
  }
  return success();
}

void ControlFlowEmitter::bindRegisters(
    ValueRange olds, ValueRange news, ArrayRef<int> layouts,
    ArrayRef<std::pair<unsigned, unsigned>> segments) {
  for (auto [i, old] : llvm::enumerate(olds)) {
    auto [start, count] = segments[i];
    if (layouts[i] >= 0)
      cx.setDist(old,
                 Dist{layouts[i], SmallVector<Value>(news.slice(start, count))});
    else
      emission.scalars.map(old, news[start]);
  }
}

LogicalResult ControlFlowEmitter::emitFor(Operation *op) {
  auto forOp = cast<scf::ForOp>(op);
  Location loc = forOp.getLoc();
  // The lane-by-lane store of a window past the ref's end: one distributed
  // store (EmitWindow.cpp).
  FailureOr<bool> window = emitWindowStore(cx, forOp);
  if (failed(window))
    return failure();
  if (*window)
    return success();
  SmallVector<int> argLayouts;
  Flat inits;
  for (auto [i, init] : llvm::enumerate(forOp.getInitArgs())) {
    unsigned start = inits.values.size();
    if (auto t = dyn_cast<RankedTensorType>(init.getType())) {
      int id = analysis.layoutOf.count(forOp.getRegionIterArgs()[i])
                   ? analysis.layoutOf.lookup(forOp.getRegionIterArgs()[i])
                   : cx.defaultLayout(t);
      argLayouts.push_back(id);
      auto regs = cx.get(init, id);
      if (failed(regs))
        return failure();
      for (Value r : *regs) {
        inits.values.push_back(r);
        inits.types.push_back(t.getElementType());
      }
    } else {
      argLayouts.push_back(-1);
      inits.values.push_back(emission.scalars.lookup(init));
      inits.types.push_back(init.getType());
    }
    inits.segments.push_back({start, inits.values.size() - start});
  }
  Value lb = emission.scalars.lookup(forOp.getLowerBound()),
        ub = emission.scalars.lookup(forOp.getUpperBound()),
        step = emission.scalars.lookup(forOp.getStep());
  // Dot operands prefetched num_stages - 1 iterations ahead (a ring of
  // StagingPlans.cpp, emitted by DotStaging.cpp): the first iterations' copies.
  if (failed(cx.loopStagesPrologue(op, lb, ub, step)))
    return failure();
  auto newFor = scf::ForOp::create(b, loc, lb, ub, step, inits.values);
  Block *body = newFor.getBody();
  emission.scalars.map(forOp.getInductionVar(), newFor.getInductionVar());
  {
    OpBuilder::InsertionGuard guard(b);
    if (body->mightHaveTerminator())
      b.setInsertionPoint(body->getTerminator());
    else
      b.setInsertionPointToEnd(body);
    bindRegisters(forOp.getRegionIterArgs(), newFor.getRegionIterArgs(),
                  argLayouts, inits.segments);
    cx.forgetAccesses();
    if (failed(cx.loopStagesBody(op, lb, ub, step, newFor.getInductionVar())))
      return failure();
    if (failed(cx.emitBlock(*forOp.getBody())))
      return failure();
    auto yield = cast<scf::YieldOp>(forOp.getBody()->getTerminator());
    SmallVector<Value> yields;
    if (failed(appendRegisters(yield.getOperands(), argLayouts, yields)))
      return failure();
    if (body->mightHaveTerminator())
      body->getTerminator()->erase();
    b.setInsertionPointToEnd(body);
    scf::YieldOp::create(b, loc, yields);
  }
  bindRegisters(forOp.getResults(), newFor.getResults(), argLayouts,
                inits.segments);
  cx.forgetAccesses();
  return success();
}

bool ControlFlowEmitter::isSelectable(scf::IfOp ifOp) {
  if (ifOp->getNumResults() != 0)
    return false;
  bool ok = true;
  ifOp.walk([&](Operation *inner) {
    if (inner == ifOp.getOperation() || isa<scf::YieldOp>(inner))
      return;
    if (auto m = dyn_cast<bufferization::MaterializeInDestinationOp>(inner)) {
      if (!cx.promotedOf(m.getDest()))
        ok = false;
      return;
    }
    if (auto tt = dyn_cast<bufferization::ToTensorOp>(inner)) {
      if (!cx.promotedOf(tt.getBuffer()))
        ok = false;
      return;
    }
    if (inner->getNumRegions() && !isa<linalg::LinalgOp>(inner))
      ok = false;
    else if (!isMemoryEffectFree(inner))
      ok = false;
  });
  return ok;
}

LogicalResult ControlFlowEmitter::emitIf(Operation *op) {
  auto ifOp = cast<scf::IfOp>(op);
  Location loc = ifOp.getLoc();
  if (isSelectable(ifOp)) {
    SmallVector<Value> touched;
    for (auto &[arg, p] : promotion.promoted)
      touched.push_back(arg);
    SmallVector<SmallVector<Value>> before, after;
    for (Value arg : touched)
      before.push_back(cx.promotedOf(arg)->regs);
    if (failed(cx.emitBlock(*ifOp.thenBlock())))
      return failure();
    for (Value arg : touched)
      after.push_back(cx.promotedOf(arg)->regs);
    for (auto [arg, regs] : llvm::zip(touched, before))
      cx.promotedOf(arg)->regs = regs;
    if (ifOp.elseBlock() && failed(cx.emitBlock(*ifOp.elseBlock())))
      return failure();
    Value cond = emission.scalars.lookup(ifOp.getCondition());
    for (auto [i, arg] : llvm::enumerate(touched)) {
      PromotionState::Promoted *p = cx.promotedOf(arg);
      for (auto [r, reg] : llvm::enumerate(p->regs))
        if (after[i][r] != reg)
          reg = arith::SelectOp::create(b, loc, cond, after[i][r], reg);
    }
    return success();
  }
  SmallVector<int> resLayouts;
  SmallVector<Type> types;
  SmallVector<std::pair<unsigned, unsigned>> segments;
  flattenTypes(ifOp.getResults(), resLayouts, types, segments);
  // Register-resident scratch written inside: carried through the if.
  SmallVector<Value> modified;
  ifOp.walk([&](bufferization::MaterializeInDestinationOp m) {
    if (cx.promotedOf(m.getDest()) &&
        !llvm::is_contained(modified, m.getDest()))
      modified.push_back(m.getDest());
  });
  SmallVector<SmallVector<Value>> before;
  for (Value arg : modified) {
    before.push_back(cx.promotedOf(arg)->regs);
    types.append(before.back().size(),
                 cx.promotedOf(arg)->type.getElementType());
  }
  bool hasElse = ifOp.elseBlock() != nullptr || !modified.empty();
  auto newIf = scf::IfOp::create(
      b, loc, types, emission.scalars.lookup(ifOp.getCondition()), hasElse);
  auto saved = barriers.accessesSinceBarrier;
  auto emitBranch = [&](Block *oldBlock, Block *newBlock) -> LogicalResult {
    OpBuilder::InsertionGuard guard(b);
    bool hadTerminator = newBlock->mightHaveTerminator();
    if (hadTerminator)
      b.setInsertionPoint(newBlock->getTerminator());
    else
      b.setInsertionPointToEnd(newBlock);
    barriers.accessesSinceBarrier = saved;
    for (auto [arg, regs] : llvm::zip(modified, before))
      cx.promotedOf(arg)->regs = regs;
    if (oldBlock && failed(cx.emitBlock(*oldBlock)))
      return failure();
    SmallVector<Value> yields;
    ValueRange oldYields = oldBlock ? oldBlock->getTerminator()->getOperands()
                                    : ValueRange{};
    if (failed(appendRegisters(oldYields, resLayouts, yields)))
      return failure();
    for (Value arg : modified)
      llvm::append_range(yields, cx.promotedOf(arg)->regs);
    if (hadTerminator)
      newBlock->getTerminator()->erase();
    b.setInsertionPointToEnd(newBlock);
    scf::YieldOp::create(b, loc, yields);
    return success();
  };
  if (failed(emitBranch(ifOp.thenBlock(), newIf.thenBlock())))
    return failure();
  if (hasElse && failed(emitBranch(ifOp.elseBlock(), newIf.elseBlock())))
    return failure();
  {
    size_t next = types.size();
    for (Value arg : llvm::reverse(modified)) {
      PromotionState::Promoted *p = cx.promotedOf(arg);
      next -= p->regs.size();
      p->regs.assign(newIf.getResults().begin() + next,
                     newIf.getResults().begin() + next + p->regs.size());
    }
  }
  bindRegisters(ifOp.getResults(), newIf.getResults(), resLayouts, segments);
  cx.forgetAccesses();
  return success();
}

LogicalResult ControlFlowEmitter::emitWhile(Operation *op) {
  auto whileOp = cast<scf::WhileOp>(op);
  Location loc = whileOp.getLoc();
  Block &before = whileOp.getBefore().front();
  Block &after = whileOp.getAfter().front();
  SmallVector<int> beforeLay, afterLay;
  SmallVector<Type> beforeTypes, afterTypes;
  SmallVector<std::pair<unsigned, unsigned>> beforeSeg, afterSeg;
  flattenTypes(before.getArguments(), beforeLay, beforeTypes, beforeSeg);
  flattenTypes(after.getArguments(), afterLay, afterTypes, afterSeg);
  SmallVector<Value> inits;
  if (failed(appendRegisters(whileOp.getInits(), beforeLay, inits)))
    return failure();
  auto newWhile =
      scf::WhileOp::create(b, loc, afterTypes, inits, nullptr, nullptr);
  Block *nb = b.createBlock(&newWhile.getBefore(), {}, beforeTypes,
                            SmallVector<Location>(beforeTypes.size(), loc));
  Block *na = b.createBlock(&newWhile.getAfter(), {}, afterTypes,
                            SmallVector<Location>(afterTypes.size(), loc));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(nb);
    // Each region: its arguments bound, its body emitted, its terminator's
    // operands as registers.
    auto emitRegion = [&](Block &old, Block *in, ArrayRef<int> argLay,
                          ArrayRef<std::pair<unsigned, unsigned>> argSeg,
                          ValueRange carried, ArrayRef<int> carriedLay,
                          SmallVector<Value> &regs) -> LogicalResult {
      b.setInsertionPointToEnd(in);
      bindRegisters(old.getArguments(), in->getArguments(), argLay, argSeg);
      cx.forgetAccesses();
      if (failed(cx.emitBlock(old)))
        return failure();
      return appendRegisters(carried, carriedLay, regs);
    };
    auto cond = cast<scf::ConditionOp>(before.getTerminator());
    SmallVector<Value> args;
    if (failed(emitRegion(before, nb, beforeLay, beforeSeg, cond.getArgs(),
                          afterLay, args)))
      return failure();
    scf::ConditionOp::create(
        b, loc, emission.scalars.lookup(cond.getCondition()), args);
    auto yield = cast<scf::YieldOp>(after.getTerminator());
    SmallVector<Value> ys;
    if (failed(emitRegion(after, na, afterLay, afterSeg, yield.getOperands(),
                          beforeLay, ys)))
      return failure();
    scf::YieldOp::create(b, loc, ys);
  }
  bindRegisters(whileOp.getResults(), newWhile.getResults(), afterLay,
                afterSeg);
  cx.forgetAccesses();
  return success();
}
