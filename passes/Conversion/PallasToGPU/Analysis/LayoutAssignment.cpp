//===- LayoutAssignment.cpp - layouts of block values -----------*- C++ -*-===//
//
// The analysis that gives every tensor value of the kernel a layout
// (Layout.h) before anything is emitted: blocked layouts for memory and
// elementwise ops, the dot's instruction layouts (DotLayout.cpp) and
// what their consumers demand; the emitters read the result (layoutOf).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/Analysis/LayoutAssignment.h"
#include "passes/Conversion/PallasToGPU/DistributeUtils.h"
#include "passes/Conversion/PallasToGPU/Dot/DotUtils.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "pallas-to-gpu"

using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::gpu;
using namespace mlir::pallas::gpu::detail;

//===----------------------------------------------------------------------===//
// Layout analysis
//===----------------------------------------------------------------------===//

bool LayoutAssignment::isScratch(Value memref) {
  if (llvm::is_contained(promotion.scratchArgs, memref))
    return true;
  if (auto it = emission.views.find(memref); it != emission.views.end())
    return it->second.isShared();
  Operation *def = memref.getDefiningOp();
  if (!def)
    return false;
  if (auto sv = dyn_cast<memref::SubViewOp>(def))
    return isScratch(sv.getSource());
  if (auto cast = dyn_cast<UnrealizedConversionCastOp>(def))
    return cast->getNumOperands() == 1 && isScratch(cast->getOperand(0));
  if (isa<memref::AllocOp>(def)) {
    for (Operation *user : memref.getUsers())
      if (auto copy = dyn_cast<linalg::CopyOp>(user))
        if (copy.getOutputs()[0] == memref)
          return isScratch(copy.getInputs()[0]);
  }
  return false;
}

bool LayoutAssignment::assign(Value v, int id) {
  if (id < 0 || result.layoutOf.count(v))
    return false;
  result.layoutOf[v] = id;
  return true;
}

int LayoutAssignment::chooseElementwise(Operation *op) {
  auto g = cast<linalg::GenericOp>(op);
  auto resultType = cast<RankedTensorType>(g->getResult(0).getType());
  int64_t rank = resultType.getRank();
  SmallVector<OpOperand *> reads = readOperands(g);
  // An operand read through the identity map decides.
  for (OpOperand *o : reads) {
    auto dims = *mapDims(g.getMatchingIndexingMap(o));
    if (!isIdentityDims(dims, rank))
      continue;
    if (auto it = result.layoutOf.find(o->get()); it != result.layoutOf.end())
      return it->second;
  }
  // Otherwise a layout whose projection a broadcast operand already has.
  for (OpOperand *o : reads) {
    auto it = result.layoutOf.find(o->get());
    if (it == result.layoutOf.end())
      continue;
    auto dims = *mapDims(g.getMatchingIndexingMap(o));
    auto opShape = cast<RankedTensorType>(o->get().getType()).getShape();
    const Layout &have = layout(it->second);
    std::vector<Layout> candidates;
    // A size-1 view of the parent (a row max broadcast to [M, 1] on its
    // way to [M, N]): the parent's distribution with the unit dimensions
    // projected out, remembered as a slice of the parent so that the next
    // broadcast takes the parent itself instead of the default layout (and
    // a conversion through shared memory back to the dot's layout).
    int unitParent = -1;
    std::optional<Layout> unitView;
    if (auto p = table.sliceParent.find(it->second);
        p != table.sliceParent.end()) {
      const Layout &parent = layout(p->second);
      candidates.push_back(parent);
      if (parent.rank() == rank && parent.shape != resultType.getShape()) {
        SmallVector<int64_t> unitDims;
        bool unitOnly = true;
        for (int64_t d = 0; d < rank; ++d) {
          int64_t want = resultType.getDimSize(d);
          unitOnly &= want == parent.shape[d] || want == 1;
          unitDims.push_back(want == parent.shape[d] ? d : -1);
        }
        if (unitOnly) {
          unitView = projectLayout(parent, unitDims, resultType.getShape());
          unitParent = p->second;
        }
      }
    }
    if (auto m = table.mmaRoot.find(it->second);
        m != table.mmaRoot.end() && rank == 2) {
      auto [wm, wn, wg] = m->second;
      int64_t mm = resultType.getDimSize(0), nn = resultType.getDimSize(1);
      if (wg) {
        if (mm % (16 * wm) == 0 && nn % (8 * wn) == 0)
          candidates.push_back(fragmentLayout({pallasc::MatrixInstrKind::Wgmma},
                                              pallasc::MatrixOperand::C, mm,
                                              nn, wm / 4, wn));
      } else if (kc.has(pallasc::MatrixInstrKind::Mfma) && mm % (16 * wm) == 0 &&
                 nn % (16 * wn) == 0)
        candidates.push_back(fragmentLayout({pallasc::MatrixInstrKind::Mfma},
                                            pallasc::MatrixOperand::C, mm, nn,
                                            wm, wn));
      else if (kc.has(pallasc::MatrixInstrKind::Wmma) &&
               mm % (16 * wm) == 0 && nn % (16 * wn) == 0)
        candidates.push_back(
            detail::wmmaInstr(*kc.target).cLayout(mm, nn, wm, wn));
      else if (!kc.has(pallasc::MatrixInstrKind::Mfma) &&
               !kc.has(pallasc::MatrixInstrKind::Wmma) &&
               mm % (16 * wm) == 0 && nn % (8 * wn) == 0)
        candidates.push_back(
            fragmentLayout({pallasc::MatrixInstrKind::MmaSync},
                           pallasc::MatrixOperand::C, mm, nn, wm, wn));
    }
    if (unitView && providesLocally(have, projectLayout(*unitView, dims,
                                                         opShape))) {
      int id = intern(*unitView);
      table.sliceParent.try_emplace(id, unitParent);
      if (auto m = table.mmaRoot.find(unitParent); m != table.mmaRoot.end())
        table.mmaRoot.try_emplace(id, m->second);
      return id;
    }
    candidates.push_back(layout(defaultLayout(resultType)));
    for (const Layout &c : candidates) {
      if (c.shape != resultType.getShape())
        continue;
      if (providesLocally(have, projectLayout(c, dims, opShape)))
        return intern(c);
    }
  }
  return defaultLayout(resultType);
}

bool LayoutAssignment::analyzeBlock(Block &block) {
  bool changed = false;
  for (Operation &opRef : block) {
    Operation *op = &opRef;
    if (auto forOp = dyn_cast<scf::ForOp>(op)) {
      auto yield = cast<scf::YieldOp>(forOp.getBody()->getTerminator());
      for (auto [i, arg] : llvm::enumerate(forOp.getRegionIterArgs())) {
        if (!isa<RankedTensorType>(arg.getType()))
          continue;
        Value init = forOp.getInitArgs()[i];
        if (auto it = result.layoutOf.find(init); it != result.layoutOf.end())
          changed |= assign(arg, it->second);
        else if (auto it = result.layoutOf.find(yield.getOperand(i));
                 it != result.layoutOf.end())
          changed |= assign(arg, it->second);
      }
      changed |= analyzeBlock(*forOp.getBody());
      for (auto [i, arg] : llvm::enumerate(forOp.getRegionIterArgs())) {
        if (!isa<RankedTensorType>(arg.getType()))
          continue;
        if (auto it = result.layoutOf.find(yield.getOperand(i));
            it != result.layoutOf.end())
          changed |= assign(arg, it->second);
        if (auto it = result.layoutOf.find(arg); it != result.layoutOf.end())
          changed |= assign(forOp.getResult(i), it->second);
      }
      continue;
    }
    if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
      changed |= analyzeBlock(*ifOp.thenBlock());
      if (ifOp.elseBlock())
        changed |= analyzeBlock(*ifOp.elseBlock());
      for (auto [i, res] : llvm::enumerate(ifOp.getResults())) {
        if (!isa<RankedTensorType>(res.getType()))
          continue;
        for (Block *blk : {ifOp.thenBlock(), ifOp.elseBlock()}) {
          if (!blk)
            continue;
          Value y = blk->getTerminator()->getOperand(i);
          if (auto it = result.layoutOf.find(y); it != result.layoutOf.end())
            changed |= assign(res, it->second);
        }
      }
      continue;
    }
    if (auto whileOp = dyn_cast<scf::WhileOp>(op)) {
      Block &before = whileOp.getBefore().front();
      Block &after = whileOp.getAfter().front();
      auto cond = cast<scf::ConditionOp>(before.getTerminator());
      auto yield = cast<scf::YieldOp>(after.getTerminator());
      for (auto [i, arg] : llvm::enumerate(before.getArguments())) {
        if (!isa<RankedTensorType>(arg.getType()))
          continue;
        if (auto it = result.layoutOf.find(whileOp.getInits()[i]);
            it != result.layoutOf.end())
          changed |= assign(arg, it->second);
        else if (auto it = result.layoutOf.find(yield.getOperand(i));
                 it != result.layoutOf.end())
          changed |= assign(arg, it->second);
      }
      changed |= analyzeBlock(before);
      for (auto [i, arg] : llvm::enumerate(after.getArguments())) {
        if (!isa<RankedTensorType>(arg.getType()))
          continue;
        if (auto it = result.layoutOf.find(cond.getArgs()[i]);
            it != result.layoutOf.end()) {
          changed |= assign(arg, it->second);
          changed |= assign(whileOp.getResult(i), it->second);
        }
      }
      changed |= analyzeBlock(after);
      continue;
    }
    if (op->getNumResults() == 0 || result.flexible.contains(op->getResult(0)))
      continue;
    if (llvm::none_of(op->getResultTypes(),
                      [](Type t) { return isa<RankedTensorType>(t); }))
      continue;
    if (result.deferred.contains(op->getResult(0)))
      continue;

    llvm::TypeSwitch<Operation *>(op)
        .Case<linalg::GenericOp>([&](linalg::GenericOp g) {
          if (!isElementwise(g))
            return;
          int id = chooseElementwise(g);
          for (Value r : g->getResults())
            changed |= assign(r, id);
        })
        .Case<linalg::ReduceOp>([&](linalg::ReduceOp r) {
          Value in = r.getInputs()[0];
          auto it = result.layoutOf.find(in);
          int inId = it != result.layoutOf.end()
                         ? it->second
                         : defaultLayout(cast<RankedTensorType>(in.getType()));
          if (it == result.layoutOf.end() && !result.flexible.contains(in))
            return; // wait for the input
          int id = intern(sliceLayout(layout(inId), r.getDimensions()));
          if (!table.sliceParent.count(id))
            table.sliceParent[id] = inId;
          if (auto m = table.mmaRoot.find(inId); m != table.mmaRoot.end())
            table.mmaRoot.try_emplace(id, m->second);
          for (Value res : r->getResults())
            changed |= assign(res, id);
        })
        .Case<linalg::MatmulOp, linalg::BatchMatmulOp>([&](Operation *mm) {
          changed |= assign(mm->getResult(0), dotLayout(mm));
        })
        .Case<linalg::TransposeOp>([&](linalg::TransposeOp t) {
          auto it = result.layoutOf.find(t.getInput());
          if (it == result.layoutOf.end())
            return;
          auto shape = cast<RankedTensorType>(t->getResult(0).getType())
                           .getShape();
          int id = intern(
              projectLayout(layout(it->second), t.getPermutation(), shape));
          if (auto m = table.mmaRoot.find(it->second); m != table.mmaRoot.end())
            table.mmaRoot.try_emplace(id, m->second);
          changed |= assign(t->getResult(0), id);
        })
        .Case<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
            [&](Operation *reshape) {
              auto it = result.layoutOf.find(reshape->getOperand(0));
              if (it == result.layoutOf.end())
                return;
              auto shape = cast<RankedTensorType>(reshape->getResultTypes()[0])
                               .getShape();
              changed |= assign(reshape->getResult(0),
                                intern(reshapeLayout(layout(it->second),
                                                     shape)));
            })
        .Case<bufferization::ToTensorOp, tensor::ExtractSliceOp>(
            [&](Operation *o) {
              changed |= assign(o->getResult(0),
                                defaultLayout(cast<RankedTensorType>(
                                    o->getResult(0).getType())));
            })
        .Case<tensor::InsertOp, tensor::InsertSliceOp>([&](Operation *o) {
          Value dest = o->getOperand(1);
          auto it = result.layoutOf.find(dest);
          changed |= assign(o->getResult(0),
                            it != result.layoutOf.end()
                                ? it->second
                                : defaultLayout(cast<RankedTensorType>(
                                      o->getResult(0).getType())));
        })
        .Default([](Operation *) {});
  }
  return changed;
}

int LayoutAssignment::demandedLayout(OpOperand &use) {
  Operation *owner = use.getOwner();
  auto known = [&](Value v) {
    auto it = result.layoutOf.find(v);
    return it == result.layoutOf.end() ? -1 : it->second;
  };
  if (auto g = dyn_cast<linalg::GenericOp>(owner)) {
    if (!isElementwise(g))
      return -1;
    int r = known(g->getResult(0));
    if (r < 0)
      return -1;
    auto dims = *mapDims(g.getMatchingIndexingMap(&use));
    auto shape = cast<RankedTensorType>(use.get().getType()).getShape();
    return intern(projectLayout(layout(r), dims, shape));
  }
  if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(owner) &&
      cast<linalg::LinalgOp>(owner).isDpsInit(&use))
    return known(owner->getResult(0));
  if (auto yield = dyn_cast<scf::YieldOp>(owner)) {
    Operation *parent = yield->getParentOp();
    unsigned i = use.getOperandNumber();
    if (auto forOp = dyn_cast<scf::ForOp>(parent))
      return known(forOp.getRegionIterArgs()[i]);
    if (isa<scf::IfOp>(parent))
      return known(parent->getResult(i));
    if (auto whileOp = dyn_cast<scf::WhileOp>(parent))
      return known(whileOp.getBefore().front().getArgument(i));
    return -1;
  }
  if (auto forOp = dyn_cast<scf::ForOp>(owner)) {
    unsigned n = use.getOperandNumber();
    if (n >= 3)
      return known(forOp.getRegionIterArgs()[n - 3]);
    return -1;
  }
  if (auto cond = dyn_cast<scf::ConditionOp>(owner)) {
    auto whileOp = cast<scf::WhileOp>(cond->getParentOp());
    unsigned i = use.getOperandNumber() - 1;
    return known(whileOp.getAfter().front().getArgument(i));
  }
  return -1;
}

/// The name of a layout family, as printLayouts writes it.
static const char *familyName(Layout::Family family) {
  switch (family) {
  case Layout::Family::Blocked:
    return "Blocked";
  case Layout::Family::MmaC:
    return "MmaC";
  case Layout::Family::MmaA:
    return "MmaA";
  case Layout::Family::MmaB:
    return "MmaB";
  case Layout::Family::MfmaC:
    return "MfmaC";
  case Layout::Family::MfmaA:
    return "MfmaA";
  case Layout::Family::MfmaB:
    return "MfmaB";
  case Layout::Family::WmmaC:
    return "WmmaC";
  case Layout::Family::WmmaA:
    return "WmmaA";
  case Layout::Family::WmmaB:
    return "WmmaB";
  case Layout::Family::WgmmaC:
    return "WgmmaC";
  case Layout::Family::WgmmaA:
    return "WgmmaA";
  case Layout::Family::Derived:
    return "Derived";
  }
  llvm_unreachable("unknown layout family");
}

void LayoutAssignment::printLayouts() {
  kernel.walk<WalkOrder::PreOrder>([&](Operation *op) {
    for (OpResult r : op->getResults()) {
      if (!isa<RankedTensorType>(r.getType()))
        continue;
      InFlightDiagnostic remark = op->emitRemark()
                                  << "result " << r.getResultNumber() << ": ";
      if (result.flexible.contains(r)) {
        remark << "flexible";
      } else if (auto it = result.layoutOf.find(r);
                 it != result.layoutOf.end()) {
        const Layout &l = layout(it->second);
        remark << familyName(l.family) << " " << l.str();
      } else {
        remark << "none";
      }
    }
  });
}

void LayoutAssignment::findFlexible() {
  // Flexible values: constants and what is computed from them alone; they
  // are rematerialized in whatever layout a use needs.
  kernel.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op->getNumResults() != 1 ||
        !isa<RankedTensorType>(op->getResult(0).getType()))
      return;
    Value r = op->getResult(0);
    bool flex = llvm::TypeSwitch<Operation *, bool>(op)
                    .Case<arith::ConstantOp, tensor::EmptyOp>(
                        [](Operation *) { return true; })
                    .Case<linalg::FillOp>([&](linalg::FillOp f) {
                      return !isa<ShapedType>(f.getInputs()[0].getType());
                    })
                    .Case<linalg::GenericOp>([&](linalg::GenericOp g) {
                      if (!isElementwise(g) || !hasPureBody(g))
                        return false;
                      return llvm::all_of(readOperands(g), [&](OpOperand *o) {
                        return result.flexible.contains(o->get());
                      });
                    })
                    .Case<linalg::TransposeOp, tensor::CollapseShapeOp,
                          tensor::ExpandShapeOp>([&](Operation *o) {
                      return result.flexible.contains(o->getOperand(0));
                    })
                    .Default([](Operation *) { return false; });
    if (flex)
      result.flexible.insert(r);
    if (isa<tensor::GenerateOp>(op))
      result.deferred.insert(r);
    if (auto tt = dyn_cast<bufferization::ToTensorOp>(op);
        tt && isScratch(tt.getBuffer()))
      result.deferred.insert(r);
  });
}

void LayoutAssignment::findBroadcastReads() {
  // Broadcast operands read from memory (layernorm's scale and shift,
  // broadcast along the rows): the load and the broadcast take the layout
  // their consumer has, so the vector is loaded straight into the registers
  // the broadcast needs instead of being converted through shared memory.
  auto isBroadcastRead = [&](Value r) {
    auto tt = r.getDefiningOp<bufferization::ToTensorOp>();
    if (!tt || !isReadOnly(tt.getBuffer()) || isScratch(tt.getBuffer()) ||
        result.flexible.contains(r) || r.use_empty())
      return false;
    for (OpOperand &use : r.getUses()) {
      auto g = dyn_cast<linalg::GenericOp>(use.getOwner());
      if (!g || !isElementwise(g) || !hasPureBody(g) || !g.isDpsInput(&use) ||
          g->getNumResults() != 1)
        return false;
      auto dims = *mapDims(g.getMatchingIndexingMap(&use));
      if (isIdentityDims(dims, g.getNumLoops()))
        return false;
      // Only the broadcast reads from memory.
      for (OpOperand *o : readOperands(g))
        if (o->get() != r && !result.flexible.contains(o->get()))
          return false;
    }
    return true;
  };
  kernel.walk([&](bufferization::ToTensorOp tt) {
    if (!isBroadcastRead(tt.getResult()))
      return;
    broadcastReads.insert(tt);
    for (Operation *user : tt.getResult().getUsers())
      broadcastReads.insert(user);
  });
  for (Operation *op : broadcastReads)
    result.deferred.insert(op->getResult(0));
}

bool LayoutAssignment::isRowReduced(bufferization::ToTensorOp tt) {
  auto type = dyn_cast<RankedTensorType>(tt.getResult().getType());
  if (!type || type.getRank() < 2 || !isReadOnly(tt.getBuffer()) ||
      isScratch(tt.getBuffer()))
    return false;
  // The values computed elementwise from the rows (identity reads).
  SmallVector<Value> work{tt.getResult()};
  DenseSet<Value> seen{tt.getResult()};
  bool reduced = false, broadcast = false;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (auto red = dyn_cast<linalg::ReduceOp>(user)) {
        if (red.getDimensions() == ArrayRef<int64_t>{type.getRank() - 1})
          reduced = true;
        continue;
      }
      auto g = dyn_cast<linalg::GenericOp>(user);
      if (!g || !isElementwise(g) || g->getBlock() != tt->getBlock() ||
          !isIdentityDims(*mapDims(g.getMatchingIndexingMap(&use)),
                          g.getNumLoops()))
        continue;
      for (OpOperand *o : readOperands(g))
        if (Operation *def = o->get().getDefiningOp();
            def && broadcastReads.contains(def) &&
            isa<linalg::GenericOp>(def) &&
            *mapDims(cast<linalg::GenericOp>(def).getMatchingIndexingMap(
                cast<linalg::GenericOp>(def).getDpsInputOperand(0))) ==
                ArrayRef<int64_t>{type.getRank() - 1})
          broadcast = true;
      for (Value res : g->getResults())
        if (res.getType() == type && seen.insert(res).second)
          work.push_back(res);
    }
  }
  return reduced && broadcast;
}

void LayoutAssignment::assignRowReduced() {
  // Rows reduced along their last dimension that are also combined with a
  // vector broadcast along the rows (layernorm): as Triton's blocked layout,
  // the warps go along the reduced dimension, right after the lanes, so each
  // thread holds few columns of every row and the broadcast vectors cost few
  // registers; the reduction then crosses the warps through one shared
  // memory slot per warp and row.
  kernel.walk([&](bufferization::ToTensorOp tt) {
    if (!isRowReduced(tt))
      return;
    auto type = cast<RankedTensorType>(tt.getResult().getType());
    Layout l = blockedLayout(type.getShape(),
                             elementBits(type.getElementType()), kc.numWarps,
                             kc.laneBits);
    int64_t n = log2Exact(l.numElements());
    int64_t lastBits = log2Exact(type.getShape().back());
    int64_t warpBits = static_cast<int64_t>(l.warps.size());
    // Bits of the linear index the lanes and the vector registers take.
    uint64_t taken = 0;
    for (uint64_t basis : l.lanes)
      taken |= basis;
    int64_t vecBits = 0;
    while (vecBits < static_cast<int64_t>(l.regs.size()) &&
           l.regs[vecBits] == uint64_t(1) << vecBits)
      ++vecBits;
    int64_t first = vecBits + llvm::popcount(taken);
    if (first + warpBits > lastBits)
      return; // the warps do not fit along the last dimension
    Layout t;
    t.shape = l.shape;
    t.family = Layout::Family::Derived;
    for (int64_t i = 0; i < vecBits; ++i)
      t.regs.push_back(uint64_t(1) << i);
    t.lanes = l.lanes;
    for (int64_t i = 0; i < warpBits; ++i)
      t.warps.push_back(uint64_t(1) << (first + i));
    for (int64_t bit = first + warpBits; bit < n; ++bit)
      t.regs.push_back(uint64_t(1) << bit);
    assign(tt.getResult(), intern(t));
  });
}

void LayoutAssignment::fixedPoint() {
  Block &entry = kernel.getBody().front();
  for (int iter = 0; iter < 32; ++iter)
    if (!analyzeBlock(entry))
      return;
}

void LayoutAssignment::resolveDeferred() {
  // Deferred values (shared-memory loads, generated blocks) take the layout
  // their uses ask for.
  for (int round = 0; round < 4; ++round) {
    bool any = false;
    kernel.walk([&](Operation *op) {
      if (op->getNumResults() != 1 ||
          !result.deferred.contains(op->getResult(0)) ||
          result.layoutOf.count(op->getResult(0)))
        return;
      Value r = op->getResult(0);
      int want = -1;
      for (OpOperand &use : r.getUses())
        if ((want = demandedLayout(use)) >= 0)
          break;
      if (want < 0 && round < 3)
        return;
      if (want < 0)
        want = defaultLayout(cast<RankedTensorType>(r.getType()));
      any |= assign(r, want);
    });
    result.deferred.clear();
    kernel.walk([&](Operation *op) {
      if (op->getNumResults() == 1 &&
          (isa<tensor::GenerateOp>(op) || broadcastReads.contains(op) ||
           (isa<bufferization::ToTensorOp>(op) &&
            isScratch(cast<bufferization::ToTensorOp>(op).getBuffer()))) &&
          !result.layoutOf.count(op->getResult(0)))
        result.deferred.insert(op->getResult(0));
    });
    fixedPoint();
    if (!any && result.deferred.empty())
      break;
  }
}

void LayoutAssignment::assignLoopCarried() {
  kernel.walk([&](Operation *op) {
    for (Region &region : op->getRegions())
      for (Block &blk : region)
        for (BlockArgument arg : blk.getArguments())
          if (auto t = dyn_cast<RankedTensorType>(arg.getType());
              t && !isa<linalg::LinalgOp, tensor::GenerateOp>(op))
            assign(arg, defaultLayout(t));
    if (isa<scf::ForOp, scf::IfOp, scf::WhileOp>(op))
      for (Value r : op->getResults())
        if (auto t = dyn_cast<RankedTensorType>(r.getType()))
          assign(r, defaultLayout(t));
  });
}

void LayoutAssignment::findStreamed() {
  // Single-use loads of read-only memory feeding a dot in the same block
  // are copied to shared memory at the dot.
  kernel.walk([&](bufferization::ToTensorOp tt) {
    if (!isReadOnly(tt.getBuffer()) || !tt.getResult().hasOneUse())
      return;
    Operation *user = *tt.getResult().getUsers().begin();
    Value operand = tt.getResult();
    if (auto t = dyn_cast<linalg::TransposeOp>(user)) {
      if (!t->getResult(0).hasOneUse())
        return;
      operand = t->getResult(0);
      user = *operand.getUsers().begin();
    }
    auto mm = dyn_cast<linalg::LinalgOp>(user);
    if (!mm || !isa<linalg::MatmulOp, linalg::BatchMatmulOp>(user) ||
        !llvm::is_contained(mm.getDpsInputs(), operand) ||
        user->getBlock() != tt->getBlock())
      return;
    result.streamed.insert(tt.getResult());
    if (operand != tt.getResult())
      result.streamed.insert(operand);
  });
}

LogicalResult LayoutAssignment::run() {
  findFlexible();
  findBroadcastReads();
  assignRowReduced();
  fixedPoint();
  resolveDeferred();
  assignLoopCarried();
  fixedPoint();
  findStreamed();
  LLVM_DEBUG({
    kernel.walk([&](Operation *op) {
      for (Value r : op->getResults())
        if (auto it = result.layoutOf.find(r); it != result.layoutOf.end())
          llvm::dbgs() << r << "\n    -> " << layout(it->second).str() << "\n";
    });
  });
  return success();
}
