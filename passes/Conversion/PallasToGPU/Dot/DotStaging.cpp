//===- DotStaging.cpp - dot operand staging and prefetch --------*- C++ -*-===//
//
// The copies the staging plans (StagingPlanner.h, StagingPlans.cpp) call
// for, emitted by the distributor: operands staged where their value is
// defined (stageEarly), the common prefetch schedule of the TMA and
// cp.async stages (prefetchSteps), the mbarriers of the TMA plans, and the
// cp.async rings around a loop of the kernel body (its prologue, the issue
// of an iteration's copies, the binding of a ring slot).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/Distribute.h"
#include "passes/Conversion/PallasToGPU/Dot/DotUtils.h"

#include "dialects/Pallas/IR/PallasOps.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::gpu;
using namespace mlir::pallas::gpu::detail;

LogicalResult Distributor::stageEarly(Value def) {
  auto it = earlyTiles.find(def);
  if (it == earlyTiles.end())
    return success();
  EarlyTile t = it->second;
  earlyTiles.erase(it);
  auto regs = get(def, layoutOrDefault(def));
  if (failed(regs))
    return failure();
  int64_t bytes;
  if (t.core) {
    int64_t cdim = contiguousDim(layout(t.layout));
    CoreTile tile = coreTile(cast<RankedTensorType>(t.operand.getType()),
                             cdim, t.offset, bytes);
    if (failed(store(tile.view, coreLayout(t.layout, cdim), *regs)))
      return failure();
    coreTiles[t.operand] = tile;
    return success();
  }
  View tile = tileView(cast<RankedTensorType>(t.operand.getType()), t.layout,
                       t.offset, bytes);
  if (failed(storeTile(tile, t.layout, *regs)))
    return failure();
  stagedViews[t.operand] = tile;
  return success();
}

LogicalResult
Distributor::prefetchSteps(int64_t stages,
                           function_ref<LogicalResult(Value)> issue,
                           function_ref<void()> after) {
  Location loc = kc.loc;
  Value iv = kc.seqIv, n = kc.seqCount;
  // One issue site: steps [first, s + stages - 1] with first = 0 at the
  // first step, else s + stages - 1 (a loop of `stages` iterations or one).
  Value ahead = arith::AddIOp::create(b, loc, iv, idx(stages - 1));
  Value atFirst =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, iv, idx(0));
  Value first = arith::SelectOp::create(b, loc, atFirst, idx(0), ahead);
  Value end = arith::AddIOp::create(b, loc, ahead, idx(1));
  auto loop = scf::ForOp::create(b, loc, first, end, idx(1));
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop.getBody());
  Value j = loop.getInductionVar();
  {
    OpBuilder::InsertionGuard g2(b);
    Value in = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, j, n);
    auto ifOp = scf::IfOp::create(b, loc, in, false);
    b.setInsertionPointToStart(ifOp.thenBlock());
    if (failed(issue(j)))
      return failure();
  }
  after();
  return success();
}

void Distributor::initTmaBarriers() {
  if (tmaPlans.empty())
    return;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(kc.prologueEnd);
  Location loc = kc.loc;
  Value smemAddr = arith::IndexCastOp::create(
      b, loc, b.getI32Type(),
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, kc.smemBase));
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                      kc.tid, idx(0));
  auto ifOp = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    // Deterministic order: by the plans' barrier offsets.
    SmallVector<const TmaPlan *> plans;
    for (auto &entry : tmaPlans)
      plans.push_back(&entry.second);
    llvm::sort(plans, [](const TmaPlan *x, const TmaPlan *y) {
      return x->barriers < y->barriers;
    });
    for (const TmaPlan *plan : plans)
      for (int64_t i = 0; i < plan->stages * plan->numChunks; ++i) {
        Value addr = arith::AddIOp::create(b, loc, smemAddr,
                                           i32(plan->barriers + 8 * i));
        NVVM::MBarrierInitOp::create(b, loc, sharedPtr(b, loc, addr), i32(1),
                                     Value());
      }
  }
  NVVM::FenceMbarrierInitOp::create(b, loc);
  barrier();
}

/// The layouts a ring operand `v` is copied with: EmitContext::
/// streamedLayouts of the tensor it loads, whether or not its view is bound
/// yet (streamedSource's view is not used).
static int ringLayouts(EmitContext &cx, Value v, int &sourceId) {
  SmallVector<int64_t> perm;
  Value x;
  (void)cx.streamedSource(v, perm, x);
  return cx.streamedLayouts(v, x, perm, sourceId);
}

LogicalResult Distributor::issueLoopStage(Operation *forOpPtr,
                                          const LoopStagePlan &plan,
                                          Value ivValue, Value slot) {
  auto forOp = cast<scf::ForOp>(forOpPtr);
  Location loc = kc.loc;
  // The windows at `ivValue`: their offsets' scalar ops again with the
  // induction variable bound to it (the bindings restored afterwards).
  SmallVector<std::pair<Value, Value>> saved; // old value, binding or null
  auto bind = [&](Value old, Value now) {
    saved.push_back({old, scalars.lookupOrNull(old)});
    scalars.map(old, now);
  };
  bind(forOp.getInductionVar(), ivValue);
  for (const LoopStageOperand &op : plan.operands) {
    auto sv = cast<memref::SubViewOp>(op.window);
    SmallVector<Operation *> slice;
    (void)windowSlice(sv, forOp, slice);
    for (Operation *def : slice) {
      Operation *copy = b.clone(*def);
      for (OpOperand &use : copy->getOpOperands())
        if (Value m = scalars.lookupOrNull(use.get()))
          use.set(m);
      for (auto [r, c] : llvm::zip(def->getResults(), copy->getResults()))
        bind(r, c);
    }
  }
  LogicalResult result = success();
  for (const LoopStageOperand &op : plan.operands) {
    auto sv = cast<memref::SubViewOp>(op.window);
    auto srcIt = views.find(sv.getSource());
    if (srcIt == views.end()) {
      result = sv->emitOpError() << "reads a memref that is not a view";
      break;
    }
    View src = subview(srcIt->second, sv);
    int sourceId;
    int id = ringLayouts(*this, op.value, sourceId);
    auto type = cast<RankedTensorType>(op.value.getType());
    Value shift = arith::AddIOp::create(
        b, loc, idx(plan.region + op.offset),
        arith::MulIOp::create(b, loc, slot, idx(plan.stageBytes)));
    auto shifted = [&](View v) {
      auto viewOp = v.base.getDefiningOp<memref::ViewOp>();
      v.base = memref::ViewOp::create(b, loc, viewOp.getType(),
                                      viewOp.getSource(), shift,
                                      viewOp.getSizes());
      viewOp->erase();
      return v;
    };
    int64_t bytes;
    View dst;
    int dstId = id;
    if (op.core) {
      int64_t cdim = contiguousDim(layout(id));
      dst = shifted(coreTile(type, cdim, 0, bytes).view);
      dstId = coreLayout(id, cdim);
    } else {
      dst = shifted(tileView(type, id, 0, bytes));
    }
    int64_t width = asyncCopyWidth(src, sourceId, dst, dstId);
    if (!width || bytes > plan.stageBytes ||
        failed(copyAsync(src, sourceId, dst, dstId, width))) {
      result = sv->emitOpError()
               << "cannot prefetch this block with cp.async";
      break;
    }
  }
  for (auto &[old, binding] : llvm::reverse(saved)) {
    if (binding)
      scalars.map(old, binding);
    else
      scalars.erase(old);
  }
  return result;
}

void Distributor::bindLoopStage(const LoopStagePlan &plan, Value slot) {
  Location loc = kc.loc;
  for (const LoopStageOperand &op : plan.operands) {
    int sourceId;
    int id = ringLayouts(*this, op.value, sourceId);
    auto type = cast<RankedTensorType>(op.value.getType());
    Value shift = arith::MulIOp::create(b, loc, slot, idx(plan.stageBytes));
    int64_t bytes;
    if (op.core) {
      CoreTile tile = coreTile(type, contiguousDim(layout(id)),
                               plan.region + op.offset, bytes);
      auto viewOp = tile.view.base.getDefiningOp<memref::ViewOp>();
      tile.view.base = memref::ViewOp::create(
          b, loc, viewOp.getType(), viewOp.getSource(),
          arith::AddIOp::create(b, loc, viewOp.getByteShift(), shift),
          viewOp.getSizes());
      viewOp->erase();
      tile.shift = shift;
      coreTiles[op.value] = tile;
    } else {
      View tile = tileView(type, id, plan.region + op.offset, bytes);
      auto viewOp = tile.base.getDefiningOp<memref::ViewOp>();
      tile.base = memref::ViewOp::create(
          b, loc, viewOp.getType(), viewOp.getSource(),
          arith::AddIOp::create(b, loc, viewOp.getByteShift(), shift),
          viewOp.getSizes());
      viewOp->erase();
      stagedViews[op.value] = tile;
    }
    loopStaged.insert(op.value);
  }
}

LogicalResult Distributor::loopStagesPrologue(Operation *forOp, Value lb,
                                              Value ub, Value step) {
  auto it = loopPlans.find(forOp);
  if (it == loopPlans.end())
    return success();
  const LoopStagePlan &plan = it->second;
  Location loc = kc.loc;
  for (int64_t j = 0; j + 1 < plan.stages; ++j) {
    Value ivj = j == 0 ? lb
                       : arith::AddIOp::create(
                             b, loc, lb,
                             arith::MulIOp::create(b, loc, step, idx(j)))
                             .getResult();
    Value in =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, ivj, ub);
    auto ifOp = scf::IfOp::create(b, loc, in, false);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      if (failed(issueLoopStage(forOp, plan, ivj, idx(j))))
        return failure();
    }
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
  }
  return success();
}

LogicalResult Distributor::loopStagesBody(Operation *forOp, Value lb,
                                          Value ub, Value step, Value iv) {
  auto it = loopPlans.find(forOp);
  if (it == loopPlans.end())
    return success();
  const LoopStagePlan &plan = it->second;
  Location loc = kc.loc;
  NVVM::CpAsyncWaitGroupOp::create(b, loc,
                                   b.getI32IntegerAttr(plan.stages - 2));
  if (llvm::any_of(plan.operands,
                   [](const LoopStageOperand &o) { return o.core; }))
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
  barrier();
  Value numStagesV = idx(plan.stages);
  Value iter = arith::DivSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, iv, lb), step);
  Value next = arith::AddIOp::create(
      b, loc, iv, arith::MulIOp::create(b, loc, step, idx(plan.stages - 1)));
  Value in = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, next, ub);
  auto ifOp = scf::IfOp::create(b, loc, in, false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value slot = arith::RemUIOp::create(
        b, loc, arith::AddIOp::create(b, loc, iter, idx(plan.stages - 1)),
        numStagesV);
    if (failed(issueLoopStage(forOp, plan, next, slot)))
      return failure();
  }
  NVVM::CpAsyncCommitGroupOp::create(b, loc);
  bindLoopStage(plan, arith::RemUIOp::create(b, loc, iter, numStagesV));
  return success();
}
