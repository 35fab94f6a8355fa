//===- Distribute.cpp - block programs over a thread block -----*- C++ -*-===//
//
// Layout analysis, then emission: elementwise ops, structured control flow,
// reductions (registers, then warp shuffles, then shared memory across
// warps), layout conversions through shared memory, and the tensor ops that
// pallas-to-linalg leaves (generate, extract/insert, slices).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/Distribute.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "pallas-to-gpu"

using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::gpu;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

namespace {

/// Per operand dimension the iteration dimension it reads (-1: a constant
/// 0 index into a size-1 dimension); nullopt for maps we do not handle.
std::optional<SmallVector<int64_t>> mapDims(AffineMap map) {
  SmallVector<int64_t> dims;
  for (AffineExpr e : map.getResults()) {
    if (auto d = dyn_cast<AffineDimExpr>(e))
      dims.push_back(d.getPosition());
    else if (auto c = dyn_cast<AffineConstantExpr>(e); c && c.getValue() == 0)
      dims.push_back(-1);
    else
      return std::nullopt;
  }
  return dims;
}

bool isIdentityDims(ArrayRef<int64_t> dims, int64_t rank) {
  if (static_cast<int64_t>(dims.size()) != rank)
    return false;
  for (auto [i, d] : llvm::enumerate(dims))
    if (d != static_cast<int64_t>(i))
      return false;
  return true;
}

/// A linalg.generic whose iterators are all parallel, whose output maps are
/// identities and whose input maps are projections/broadcasts.
bool isElementwise(linalg::GenericOp g) {
  if (g.getNumReductionLoops() != 0)
    return false;
  int64_t rank = g.getNumLoops();
  for (OpOperand &o : g->getOpOperands()) {
    AffineMap map = g.getMatchingIndexingMap(&o);
    auto dims = mapDims(map);
    if (!dims)
      return false;
    if (g.isDpsInit(&o) && !isIdentityDims(*dims, rank))
      return false;
  }
  return true;
}

bool hasPureBody(Operation *op) {
  bool pure = true;
  for (Region &r : op->getRegions())
    r.walk([&](Operation *inner) {
      if (!isMemoryEffectFree(inner))
        pure = false;
    });
  return pure;
}

/// Tensor operands a generic's body reads (inputs, and outputs whose block
/// argument is used).
SmallVector<OpOperand *> readOperands(linalg::GenericOp g) {
  SmallVector<OpOperand *> ops;
  Block &body = g.getRegion().front();
  for (OpOperand &o : g->getOpOperands()) {
    if (!isa<RankedTensorType>(o.get().getType()))
      continue;
    if (g.isDpsInit(&o) && body.getArgument(o.getOperandNumber()).use_empty())
      continue;
    if (g.isDpsInput(&o) &&
        body.getArgument(o.getOperandNumber()).use_empty())
      continue;
    ops.push_back(&o);
  }
  return ops;
}

int64_t elementBits(Type t) {
  if (t.isIndex())
    return 64;
  if (t.isInteger(1))
    return 8;
  return t.getIntOrFloatBitWidth();
}

bool isAncestorOrSame(Block *ancestor, Block *block) {
  for (Block *b = block; b; b = b->getParentOp() ? b->getParentOp()->getBlock()
                                                 : nullptr)
    if (b == ancestor)
      return true;
  return false;
}

} // namespace

bool View::isShared() const {
  return isa_and_nonnull<mlir::gpu::AddressSpaceAttr>(
      baseType.getMemorySpace());
}

bool View::needsChecks() const {
  return llvm::any_of(checkLow, [](bool b) { return b; }) ||
         llvm::any_of(checkHigh, [](bool b) { return b; });
}

Distributor::Distributor(KernelContext &kc, func::FuncOp kernel)
    : kc(kc), kernel(kernel), b(kernel.getContext()) {}

int Distributor::intern(const Layout &l) {
  for (auto [i, existing] : llvm::enumerate(layouts))
    if (existing.sameDistribution(l))
      return static_cast<int>(i);
  layouts.push_back(l);
  int id = static_cast<int>(layouts.size()) - 1;
  if (l.family == Layout::Family::MmaC || l.family == Layout::Family::MmaA ||
      l.family == Layout::Family::MmaB || l.family == Layout::Family::MfmaC ||
      l.family == Layout::Family::MfmaA || l.family == Layout::Family::MfmaB)
    mmaRoot[id] = {l.warpsM, l.warpsN, false};
  if (l.family == Layout::Family::WgmmaC || l.family == Layout::Family::WgmmaA)
    mmaRoot[id] = {l.warpsM, l.warpsN, true};
  return id;
}

int Distributor::defaultLayout(RankedTensorType type) {
  return intern(blockedLayout(type.getShape(),
                              elementBits(type.getElementType()),
                              kc.numWarps, kc.laneBits));
}

Value Distributor::idx(int64_t v) {
  return arith::ConstantIndexOp::create(b, kc.loc, v);
}

Value Distributor::i32(int64_t v) {
  return arith::ConstantIntOp::create(b, kc.loc, b.getI32Type(), v);
}

//===----------------------------------------------------------------------===//
// Checks
//===----------------------------------------------------------------------===//

LogicalResult Distributor::checkSupported() {
  WalkResult r = kernel.walk([&](Operation *op) {
    for (Type t : llvm::concat<Type>(op->getOperandTypes(),
                                     op->getResultTypes())) {
      auto tt = dyn_cast<RankedTensorType>(t);
      if (!tt)
        continue;
      if (!isPowerOfTwoShape(tt.getShape())) {
        op->emitOpError()
            << "works on " << tt
            << "; the CUDA lowering needs power-of-two block dimensions (as "
               "Pallas' Triton lowering does)";
        return WalkResult::interrupt();
      }
      Type e = tt.getElementType();
      if (!e.isIntOrIndexOrFloat() || (e.isInteger() && !e.isInteger(1) &&
                                       e.getIntOrFloatBitWidth() % 8 != 0)) {
        op->emitOpError() << "works on " << tt
                          << ", whose element type the CUDA lowering does "
                             "not support";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}

//===----------------------------------------------------------------------===//
// Sinking reads of read-only memory
//===----------------------------------------------------------------------===//

bool Distributor::isReadOnly(Value memref) {
  Value root = rootMemref(memref);
  auto arg = dyn_cast<BlockArgument>(root);
  return arg && arg.getOwner() == &kernel.getBody().front() &&
         !writableArgs.contains(root);
}

bool Distributor::isMovable(Operation *op) {
  if (op->getNumResults() == 0 || op->hasTrait<OpTrait::IsTerminator>())
    return false;
  if (auto tt = dyn_cast<bufferization::ToTensorOp>(op))
    return isReadOnly(tt.getBuffer());
  if (auto ld = dyn_cast<memref::LoadOp>(op))
    return isReadOnly(ld.getMemref());
  if (isa<memref::SubViewOp>(op))
    return true;
  if (isa<scf::IfOp, tensor::GenerateOp>(op)) {
    bool ok = true;
    for (Region &r : op->getRegions())
      r.walk([&](Operation *inner) {
        if (!inner->hasTrait<OpTrait::IsTerminator>() &&
            !isMemoryEffectFree(inner) && !isMovable(inner))
          ok = false;
      });
    return ok;
  }
  // Other pure work stays in program order: moving a consumer (say a row
  // sum) past a dot would keep its operands alive across it.
  return false;
}

void Distributor::sinkProducers(Block &block) {
  for (Operation &op : block)
    for (Region &r : op.getRegions())
      for (Block &inner : r)
        sinkProducers(inner);
  SmallVector<Operation *> ops;
  for (Operation &op : block)
    ops.push_back(&op);
  // Dot operands stay where they are: they go to shared memory as soon as
  // they are defined, before the work between them and the dot.
  auto feedsDot = [](Operation *op) {
    for (Value r : op->getResults())
      for (Operation *user : r.getUsers()) {
        if (auto t = dyn_cast<linalg::TransposeOp>(user))
          for (Operation *u2 : t->getResult(0).getUsers())
            if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(u2))
              return true;
        if (auto mm = dyn_cast<linalg::LinalgOp>(user);
            mm && isa<linalg::MatmulOp, linalg::BatchMatmulOp>(user) &&
            llvm::is_contained(mm.getDpsInputs(), r))
          return true;
      }
    return false;
  };
  // Elementwise work that only prepares a dot's accumulator (flash
  // attention's `acc * alpha`) is done right before the dot, after the
  // values that die earlier (the probabilities) are gone.
  DenseSet<Operation *> accumulatorPrep;
  auto preparesAccumulator = [&](Operation *op) {
    auto g = dyn_cast<linalg::GenericOp>(op);
    if (!g || g.getNumReductionLoops() != 0 || !hasPureBody(g) ||
        op->getNumResults() != 1 || op->getResult(0).use_empty())
      return false;
    for (OpOperand &use : op->getResult(0).getUses()) {
      Operation *user = use.getOwner();
      if (accumulatorPrep.contains(user))
        continue;
      auto mm = dyn_cast<linalg::LinalgOp>(user);
      if (mm && isa<linalg::MatmulOp, linalg::BatchMatmulOp>(user) &&
          mm.isDpsInit(&use))
        continue;
      return false;
    }
    return true;
  };
  for (Operation *op : llvm::reverse(ops)) {
    bool prep = preparesAccumulator(op);
    if (prep)
      accumulatorPrep.insert(op);
    if ((!isMovable(op) && !prep) || isa<arith::ConstantOp>(op) ||
        feedsDot(op))
      continue;
    Operation *first = nullptr;
    bool sameBlock = true;
    for (Value r : op->getResults())
      for (Operation *user : r.getUsers()) {
        Operation *anc = block.findAncestorOpInBlock(*user);
        if (!anc) {
          sameBlock = false;
          continue;
        }
        if (!first || anc->isBeforeInBlock(first))
          first = anc;
      }
    if (!sameBlock || !first || first == op->getNextNode())
      continue;
    op->moveBefore(first);
  }
}

//===----------------------------------------------------------------------===//
// Layout analysis
//===----------------------------------------------------------------------===//

bool Distributor::isScratch(Value memref) {
  if (llvm::is_contained(scratchArgs, memref))
    return true;
  if (auto it = views.find(memref); it != views.end())
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

bool Distributor::assign(Value v, int id) {
  if (id < 0 || layoutOf.count(v))
    return false;
  layoutOf[v] = id;
  return true;
}

int Distributor::chooseElementwise(Operation *op) {
  auto g = cast<linalg::GenericOp>(op);
  auto resultType = cast<RankedTensorType>(g->getResult(0).getType());
  int64_t rank = resultType.getRank();
  SmallVector<OpOperand *> reads = readOperands(g);
  // An operand read through the identity map decides.
  for (OpOperand *o : reads) {
    auto dims = *mapDims(g.getMatchingIndexingMap(o));
    if (!isIdentityDims(dims, rank))
      continue;
    if (auto it = layoutOf.find(o->get()); it != layoutOf.end())
      return it->second;
  }
  // Otherwise a layout whose projection a broadcast operand already has.
  for (OpOperand *o : reads) {
    auto it = layoutOf.find(o->get());
    if (it == layoutOf.end())
      continue;
    auto dims = *mapDims(g.getMatchingIndexingMap(o));
    auto opShape = cast<RankedTensorType>(o->get().getType()).getShape();
    const Layout &have = layout(it->second);
    std::vector<Layout> candidates;
    if (auto p = sliceParent.find(it->second); p != sliceParent.end())
      candidates.push_back(layout(p->second));
    if (auto m = mmaRoot.find(it->second); m != mmaRoot.end() && rank == 2) {
      auto [wm, wn, wg] = m->second;
      int64_t mm = resultType.getDimSize(0), nn = resultType.getDimSize(1);
      if (wg) {
        if (mm % (16 * wm) == 0 && nn % (8 * wn) == 0)
          candidates.push_back(wgmmaCLayout(mm, nn, wm / 4, wn));
      } else if (kc.has(pallasc::MatrixInstrKind::Mfma) && mm % (16 * wm) == 0 &&
                 nn % (16 * wn) == 0)
        candidates.push_back(mfmaCLayout(mm, nn, wm, wn));
      else if (!kc.has(pallasc::MatrixInstrKind::Mfma) &&
               mm % (16 * wm) == 0 && nn % (8 * wn) == 0)
        candidates.push_back(mmaCLayout(mm, nn, wm, wn));
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

bool Distributor::analyzeBlock(Block &block) {
  bool changed = false;
  for (Operation &opRef : block) {
    Operation *op = &opRef;
    if (auto forOp = dyn_cast<scf::ForOp>(op)) {
      auto yield = cast<scf::YieldOp>(forOp.getBody()->getTerminator());
      for (auto [i, arg] : llvm::enumerate(forOp.getRegionIterArgs())) {
        if (!isa<RankedTensorType>(arg.getType()))
          continue;
        Value init = forOp.getInitArgs()[i];
        if (auto it = layoutOf.find(init); it != layoutOf.end())
          changed |= assign(arg, it->second);
        else if (auto it = layoutOf.find(yield.getOperand(i));
                 it != layoutOf.end())
          changed |= assign(arg, it->second);
      }
      changed |= analyzeBlock(*forOp.getBody());
      for (auto [i, arg] : llvm::enumerate(forOp.getRegionIterArgs())) {
        if (!isa<RankedTensorType>(arg.getType()))
          continue;
        if (auto it = layoutOf.find(yield.getOperand(i)); it != layoutOf.end())
          changed |= assign(arg, it->second);
        if (auto it = layoutOf.find(arg); it != layoutOf.end())
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
          if (auto it = layoutOf.find(y); it != layoutOf.end())
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
        if (auto it = layoutOf.find(whileOp.getInits()[i]);
            it != layoutOf.end())
          changed |= assign(arg, it->second);
        else if (auto it = layoutOf.find(yield.getOperand(i));
                 it != layoutOf.end())
          changed |= assign(arg, it->second);
      }
      changed |= analyzeBlock(before);
      for (auto [i, arg] : llvm::enumerate(after.getArguments())) {
        if (!isa<RankedTensorType>(arg.getType()))
          continue;
        if (auto it = layoutOf.find(cond.getArgs()[i]); it != layoutOf.end()) {
          changed |= assign(arg, it->second);
          changed |= assign(whileOp.getResult(i), it->second);
        }
      }
      changed |= analyzeBlock(after);
      continue;
    }
    if (op->getNumResults() == 0 || flexible.contains(op->getResult(0)))
      continue;
    if (llvm::none_of(op->getResultTypes(),
                      [](Type t) { return isa<RankedTensorType>(t); }))
      continue;
    if (deferred.contains(op->getResult(0)))
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
          auto it = layoutOf.find(in);
          int inId = it != layoutOf.end()
                         ? it->second
                         : defaultLayout(cast<RankedTensorType>(in.getType()));
          if (it == layoutOf.end() && !flexible.contains(in))
            return; // wait for the input
          int id = intern(sliceLayout(layout(inId), r.getDimensions()));
          if (!sliceParent.count(id))
            sliceParent[id] = inId;
          if (auto m = mmaRoot.find(inId); m != mmaRoot.end())
            mmaRoot.try_emplace(id, m->second);
          for (Value res : r->getResults())
            changed |= assign(res, id);
        })
        .Case<linalg::MatmulOp, linalg::BatchMatmulOp>([&](Operation *mm) {
          changed |= assign(mm->getResult(0), dotLayout(mm));
        })
        .Case<linalg::TransposeOp>([&](linalg::TransposeOp t) {
          auto it = layoutOf.find(t.getInput());
          if (it == layoutOf.end())
            return;
          auto shape = cast<RankedTensorType>(t->getResult(0).getType())
                           .getShape();
          int id = intern(
              projectLayout(layout(it->second), t.getPermutation(), shape));
          if (auto m = mmaRoot.find(it->second); m != mmaRoot.end())
            mmaRoot.try_emplace(id, m->second);
          changed |= assign(t->getResult(0), id);
        })
        .Case<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
            [&](Operation *reshape) {
              auto it = layoutOf.find(reshape->getOperand(0));
              if (it == layoutOf.end())
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
          auto it = layoutOf.find(dest);
          changed |= assign(o->getResult(0),
                            it != layoutOf.end()
                                ? it->second
                                : defaultLayout(cast<RankedTensorType>(
                                      o->getResult(0).getType())));
        })
        .Default([](Operation *) {});
  }
  return changed;
}

int Distributor::demandedLayout(OpOperand &use) {
  Operation *owner = use.getOwner();
  auto known = [&](Value v) {
    auto it = layoutOf.find(v);
    return it == layoutOf.end() ? -1 : it->second;
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

LogicalResult Distributor::analyze() {
  // Flexible values: constants and what is computed from them alone; they
  // are rematerialized in whatever layout a use needs.
  kernel.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op->getNumResults() != 1 ||
        !isa<RankedTensorType>(op->getResult(0).getType()))
      return;
    Value r = op->getResult(0);
    bool flex =
        llvm::TypeSwitch<Operation *, bool>(op)
            .Case<arith::ConstantOp, tensor::EmptyOp>(
                [](Operation *) { return true; })
            .Case<linalg::FillOp>([&](linalg::FillOp f) {
              return !isa<ShapedType>(f.getInputs()[0].getType());
            })
            .Case<linalg::GenericOp>([&](linalg::GenericOp g) {
              if (!isElementwise(g) || !hasPureBody(g))
                return false;
              return llvm::all_of(readOperands(g), [&](OpOperand *o) {
                return flexible.contains(o->get());
              });
            })
            .Case<linalg::TransposeOp, tensor::CollapseShapeOp,
                  tensor::ExpandShapeOp>([&](Operation *o) {
              return flexible.contains(o->getOperand(0));
            })
            .Default([](Operation *) { return false; });
    if (flex)
      flexible.insert(r);
    if (isa<tensor::GenerateOp>(op))
      deferred.insert(r);
    if (auto tt = dyn_cast<bufferization::ToTensorOp>(op);
        tt && isScratch(tt.getBuffer()))
      deferred.insert(r);
  });

  Block &entry = kernel.getBody().front();
  auto fixedPoint = [&]() {
    for (int iter = 0; iter < 32; ++iter)
      if (!analyzeBlock(entry))
        return;
  };
  fixedPoint();
  // Deferred values (shared-memory loads, generated blocks) take the layout
  // their uses ask for.
  for (int round = 0; round < 4; ++round) {
    bool any = false;
    kernel.walk([&](Operation *op) {
      if (op->getNumResults() != 1 || !deferred.contains(op->getResult(0)) ||
          layoutOf.count(op->getResult(0)))
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
    deferred.clear();
    kernel.walk([&](Operation *op) {
      if (op->getNumResults() == 1 &&
          (isa<tensor::GenerateOp>(op) ||
           (isa<bufferization::ToTensorOp>(op) &&
            isScratch(cast<bufferization::ToTensorOp>(op).getBuffer()))) &&
          !layoutOf.count(op->getResult(0)))
        deferred.insert(op->getResult(0));
    });
    fixedPoint();
    if (!any && deferred.empty())
      break;
  }
  // Loop-carried values nothing decided: the default layout.
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
  fixedPoint();
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
    streamed.insert(tt.getResult());
    if (operand != tt.getResult())
      streamed.insert(operand);
  });
  LLVM_DEBUG({
    kernel.walk([&](Operation *op) {
      for (Value r : op->getResults())
        if (auto it = layoutOf.find(r); it != layoutOf.end())
          llvm::dbgs() << r << "\n    -> " << layout(it->second).str() << "\n";
    });
  });
  return success();
}

//===----------------------------------------------------------------------===//
// Coordinates
//===----------------------------------------------------------------------===//

Value Distributor::threadCoord(int id, int64_t dim) {
  auto key = std::make_pair(id, dim);
  if (auto it = threadCoordCache.find(key); it != threadCoordCache.end())
    return it->second;
  const Layout &l = layout(id);
  OpBuilder pb(kc.prologueEnd);
  Location loc = kc.loc;
  SmallVector<uint64_t> fields;
  for (uint64_t basis : l.lanes)
    fields.push_back(l.coord(basis, dim));
  for (uint64_t basis : l.warps)
    fields.push_back(l.coord(basis, dim));
  Value result;
  uint64_t resultMask = 0;
  auto cst = [&](int64_t v) {
    return arith::ConstantIndexOp::create(pb, loc, v);
  };
  for (size_t t = 0; t < fields.size();) {
    uint64_t f = fields[t];
    if (f == 0) {
      ++t;
      continue;
    }
    Value term;
    uint64_t termMask;
    if (llvm::isPowerOf2_64(f)) {
      size_t len = 1;
      while (t + len < fields.size() && fields[t + len] == f << len)
        ++len;
      Value shifted = arith::ShRUIOp::create(pb, loc, kc.tid, cst(t));
      term = arith::AndIOp::create(pb, loc, shifted, cst((1 << len) - 1));
      int64_t sh = llvm::Log2_64(f);
      if (sh)
        term = arith::ShLIOp::create(pb, loc, term, cst(sh));
      termMask = ((uint64_t(1) << len) - 1) << sh;
      t += len;
    } else {
      Value bit = arith::AndIOp::create(
          pb, loc, arith::ShRUIOp::create(pb, loc, kc.tid, cst(t)), cst(1));
      term = arith::MulIOp::create(pb, loc, bit, cst(f));
      termMask = ~uint64_t(0);
      ++t;
    }
    if (!result) {
      result = term;
    } else if ((resultMask & termMask) == 0) {
      result = arith::OrIOp::create(pb, loc, result, term);
    } else {
      result = arith::XOrIOp::create(pb, loc, result, term);
    }
    resultMask |= termMask;
  }
  if (!result)
    result = cst(0);
  threadCoordCache[key] = result;
  return result;
}

SmallVector<Value> Distributor::coords(int id, int64_t reg) {
  const Layout &l = layout(id);
  uint64_t lin = l.regLinear(reg);
  SmallVector<Value> c;
  for (int64_t d = 0; d < l.rank(); ++d) {
    int64_t rc = l.coord(lin, d);
    Value tc = threadCoord(id, d);
    if (rc == 0) {
      c.push_back(tc);
      continue;
    }
    uint64_t threadMask = 0;
    for (uint64_t basis : llvm::concat<const uint64_t>(l.lanes, l.warps))
      threadMask |= l.coord(basis, d);
    if ((threadMask & static_cast<uint64_t>(rc)) == 0)
      c.push_back(arith::AddIOp::create(b, kc.loc, tc, idx(rc)));
    else
      c.push_back(arith::XOrIOp::create(b, kc.loc, tc, idx(rc)));
  }
  return c;
}

bool Distributor::isReplicated(int id) {
  const Layout &l = layout(id);
  return llvm::is_contained(l.lanes, 0u) || llvm::is_contained(l.warps, 0u);
}

Value Distributor::primary(int id) {
  if (auto it = primaryCache.find(id); it != primaryCache.end())
    return it->second;
  const Layout &l = layout(id);
  int64_t mask = 0;
  for (auto [i, basis] : llvm::enumerate(l.lanes))
    if (basis == 0)
      mask |= int64_t(1) << i;
  for (auto [i, basis] : llvm::enumerate(l.warps))
    if (basis == 0)
      mask |= int64_t(1) << (kc.laneBits + i);
  Value result;
  if (mask) {
    OpBuilder pb(kc.prologueEnd);
    Value m = arith::AndIOp::create(
        pb, kc.loc, kc.tid, arith::ConstantIndexOp::create(pb, kc.loc, mask));
    result = arith::CmpIOp::create(
        pb, kc.loc, arith::CmpIPredicate::eq, m,
        arith::ConstantIndexOp::create(pb, kc.loc, 0));
  }
  primaryCache[id] = result;
  return result;
}

//===----------------------------------------------------------------------===//
// Values in layouts
//===----------------------------------------------------------------------===//

void Distributor::setDist(Value v, Dist d) {
  Block *blk = b.getInsertionBlock();
  auto it = b.getInsertionPoint();
  Operation *after = it == blk->begin() ? nullptr : &*std::prev(it);
  dists[v] = std::move(d);
  defPoints[v] = DefPoint{blk, after};
  if (earlyTiles.count(v) && failed(stageEarly(v)))
    stagingFailed = true;
}

int Distributor::layoutOrDefault(Value v) {
  if (auto it = layoutOf.find(v); it != layoutOf.end())
    return it->second;
  if (auto it = dists.find(v); it != dists.end())
    return it->second.layout;
  return defaultLayout(cast<RankedTensorType>(v.getType()));
}

FailureOr<SmallVector<Value>> Distributor::get(Value v, int id) {
  if (flexible.contains(v))
    return materialize(v, id);
  auto it = dists.find(v);
  if (it == dists.end()) {
    if (Operation *def = v.getDefiningOp())
      return def->emitOpError() << "produces a block the CUDA lowering "
                                   "could not distribute";
    return emitError(v.getLoc()) << "block argument was not distributed";
  }
  const Dist &d = it->second;
  if (d.layout == id)
    return d.regs;
  auto key = std::make_pair(v, id);
  if (auto m = memo.find(key); m != memo.end())
    return m->second.regs;
  SmallVector<Value> regs;
  if (providesLocally(layout(d.layout), layout(id))) {
    for (int64_t r : registerMap(layout(d.layout), layout(id)))
      regs.push_back(d.regs[r]);
  } else {
    // Through shared memory, right after the value is defined, so that a
    // loop-invariant block is converted once.
    OpBuilder::InsertionGuard guard(b);
    DefPoint dp = defPoints.lookup(v);
    if (dp.block) {
      if (dp.after)
        b.setInsertionPointAfter(dp.after);
      else
        b.setInsertionPointToStart(dp.block);
    }
    auto converted =
        convert(d, id, cast<RankedTensorType>(v.getType()).getElementType());
    if (failed(converted))
      return failure();
    regs = std::move(*converted);
  }
  memo[key] = Memo{nullptr, regs};
  return regs;
}

FailureOr<SmallVector<Value>> Distributor::materialize(Value v, int id) {
  auto key = std::make_pair(v, id);
  if (auto m = memo.find(key);
      m != memo.end() && isAncestorOrSame(m->second.block,
                                          b.getInsertionBlock()))
    return m->second.regs;
  Operation *def = v.getDefiningOp();
  const Layout &l = layout(id);
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<Value> regs;
  auto splat = [&](Value s) { regs.assign(l.numRegs(), s); };
  LogicalResult ok = success();
  llvm::TypeSwitch<Operation *>(def)
      .Case<arith::ConstantOp>([&](arith::ConstantOp c) {
        auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
        if (!dense || !dense.isSplat()) {
          ok = c.emitOpError() << "is a non-splat block constant, which the "
                                  "CUDA lowering does not support";
          return;
        }
        splat(arith::ConstantOp::create(
            b, c.getLoc(), cast<TypedAttr>(dense.getSplatValue<Attribute>())));
      })
      .Case<tensor::EmptyOp>([&](tensor::EmptyOp e) {
        splat(ub::PoisonOp::create(b, e.getLoc(), type.getElementType()));
      })
      .Case<linalg::FillOp>([&](linalg::FillOp f) {
        splat(scalars.lookup(f.getInputs()[0]));
      })
      .Case<linalg::GenericOp>([&](linalg::GenericOp g) {
        // emitElementwise's worker, in the requested layout.
        auto r = [&]() -> FailureOr<SmallVector<SmallVector<Value>>> {
          SmallVector<SmallVector<Value>> results;
          int64_t rank = g.getNumLoops();
          (void)rank;
          Block &body = g.getRegion().front();
          struct Operand {
            unsigned arg;
            SmallVector<Value> regs;
            SmallVector<int64_t> regOf;
          };
          SmallVector<Operand> operands;
          for (OpOperand *o : readOperands(g)) {
            auto dims = *mapDims(g.getMatchingIndexingMap(o));
            auto shape =
                cast<RankedTensorType>(o->get().getType()).getShape();
            int pid = intern(projectLayout(l, dims, shape));
            auto regs = get(o->get(), pid);
            if (failed(regs))
              return failure();
            Operand op{o->getOperandNumber(), *regs, {}};
            for (int64_t rr = 0; rr < l.numRegs(); ++rr)
              op.regOf.push_back(*registerOf(
                  layout(pid), projectLinear(l, l.regLinear(rr), dims, shape)));
            operands.push_back(std::move(op));
          }
          results.resize(g->getNumResults());
          bool usesIndex = false;
          body.walk([&](linalg::IndexOp) { usesIndex = true; });
          for (int64_t rr = 0; rr < l.numRegs(); ++rr) {
            IRMapping m;
            for (Operand &op : operands)
              m.map(body.getArgument(op.arg), op.regs[op.regOf[rr]]);
            SmallVector<Value> c;
            if (usesIndex)
              c = coords(id, rr);
            for (Operation &inner : body.without_terminator()) {
              if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
                m.map(index.getResult(), c[index.getDim()]);
                continue;
              }
              b.clone(inner, m);
            }
            for (auto [i, y] :
                 llvm::enumerate(body.getTerminator()->getOperands()))
              results[i].push_back(m.lookupOrDefault(y));
          }
          return results;
        }();
        if (failed(r)) {
          ok = failure();
          return;
        }
        regs = (*r)[cast<OpResult>(v).getResultNumber()];
      })
      .Case<linalg::TransposeOp>([&](linalg::TransposeOp t) {
        ArrayRef<int64_t> perm = t.getPermutation();
        SmallVector<int64_t> inverse(perm.size());
        for (auto [i, p] : llvm::enumerate(perm))
          inverse[p] = i;
        auto inShape =
            cast<RankedTensorType>(t.getInput().getType()).getShape();
        auto in = get(t.getInput(), intern(projectLayout(l, inverse, inShape)));
        if (failed(in)) {
          ok = failure();
          return;
        }
        // Register order is kept by projections of independent bases.
        regs = *in;
      })
      .Case<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
          [&](Operation *reshape) {
            auto inShape =
                cast<RankedTensorType>(reshape->getOperand(0).getType())
                    .getShape();
            auto in = get(reshape->getOperand(0),
                          intern(reshapeLayout(l, inShape)));
            if (failed(in)) {
              ok = failure();
              return;
            }
            regs = *in;
          })
      .Default([&](Operation *op) {
        ok = op->emitOpError() << "cannot be rematerialized by the CUDA "
                                  "lowering";
      });
  if (failed(ok))
    return failure();
  memo[key] = Memo{b.getInsertionBlock(), regs};
  return regs;
}

//===----------------------------------------------------------------------===//
// Shared memory: workspace, barriers, conversions
//===----------------------------------------------------------------------===//

void Distributor::barrier() {
  mlir::gpu::BarrierOp::create(b, kc.loc);
  accessesSinceBarrier.clear();
}

View Distributor::sharedView(ArrayRef<int64_t> shape, Type type,
                             int64_t absOffset, bool pad, int64_t &bytes) {
  int64_t elemBytes = std::max<int64_t>(1, elementBits(type) / 8);
  SmallVector<int64_t> baseShape(shape);
  if (baseShape.empty())
    baseShape.push_back(1);
  if (pad && shape.size() >= 2 && shape.back() * elemBytes >= 64)
    baseShape.back() += 16 / elemBytes;
  int64_t n = 1;
  for (int64_t d : baseShape)
    n *= d;
  bytes = n * elemBytes;
  auto space = mlir::gpu::AddressSpaceAttr::get(
      b.getContext(), mlir::gpu::GPUDialect::getWorkgroupAddressSpace());
  Type storage = type.isInteger(1) ? b.getI8Type() : type;
  auto memrefType = MemRefType::get(baseShape, storage, nullptr, space);
  Value base = memref::ViewOp::create(b, kc.loc, memrefType, kc.smemBase,
                                      idx(absOffset), ValueRange{});
  View v;
  v.base = base;
  v.baseType = memrefType;
  for (size_t d = 0; d < baseShape.size(); ++d) {
    v.offsets.push_back(idx(0));
    v.offsetDiv.push_back(int64_t(1) << 30);
    v.checkLow.push_back(false);
    v.checkHigh.push_back(false);
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    v.dimOf.push_back(d);
    v.strides.push_back(1);
  }
  v.shape.assign(shape.begin(), shape.end());
  return v;
}

View Distributor::workspace(ArrayRef<int64_t> shape, Type type,
                            int64_t byteOffset, bool pad, int64_t &bytes) {
  View v = sharedView(shape, type, kc.workspaceOffset + byteOffset, pad,
                      bytes);
  kc.workspaceBytes = std::max(kc.workspaceBytes, byteOffset + bytes);
  return v;
}

FailureOr<SmallVector<Value>> Distributor::convert(const Dist &from, int to,
                                                   Type elementType) {
  const Layout &src = layout(from.layout);
  int64_t bytes;
  View ws = workspace(src.shape, elementType, 0, /*pad=*/true, bytes);
  SmallVector<Value> regs(from.regs);
  bool isBool = elementType.isInteger(1);
  if (isBool)
    for (Value &r : regs)
      r = arith::ExtUIOp::create(b, kc.loc, b.getI8Type(), r);
  if (failed(store(ws, from.layout, regs)))
    return failure();
  barrier();
  auto loaded = load(ws, to);
  if (failed(loaded))
    return failure();
  barrier();
  if (isBool)
    for (Value &r : *loaded)
      r = arith::TruncIOp::create(b, kc.loc, b.getI1Type(), r);
  return *loaded;
}

//===----------------------------------------------------------------------===//
// Memory ordering
//===----------------------------------------------------------------------===//

void Distributor::beforeAccess(const View &view, int layoutId, bool write) {
  if (!writtenBases.contains(view.base))
    return;
  AccessKey key{layoutId, SmallVector<Value>(view.offsets), write};
  auto sameThreads = [&](const AccessKey &a) {
    return a.layout >= 0 && a.layout == key.layout &&
           a.offsets == key.offsets && !isReplicated(key.layout);
  };
  auto &list = accessesSinceBarrier[view.base];
  bool hazard = llvm::any_of(list, [&](const AccessKey &prev) {
    return (prev.write || write) && !sameThreads(prev);
  });
  if (hazard)
    barrier();
  accessesSinceBarrier[view.base].push_back(std::move(key));
}

void Distributor::forgetAccesses() {
  accessesSinceBarrier.clear();
  for (Value base : writtenBases)
    accessesSinceBarrier[base].push_back(AccessKey{-1, {}, true});
}

//===----------------------------------------------------------------------===//
// Emission
//===----------------------------------------------------------------------===//

/// The memref a write op writes, if any.
static Value writtenMemref(Operation *op) {
  if (auto m = dyn_cast<bufferization::MaterializeInDestinationOp>(op))
    return m.getDest();
  if (auto s = dyn_cast<memref::StoreOp>(op))
    return s.getMemref();
  if (auto a = dyn_cast<memref::AtomicRMWOp>(op))
    return a.getMemref();
  if (auto a = dyn_cast<memref::GenericAtomicRMWOp>(op))
    return a.getMemref();
  if (auto c = dyn_cast<linalg::CopyOp>(op))
    return c.getOutputs()[0];
  return Value();
}

LogicalResult Distributor::prepare() {
  kernel.walk([&](Operation *op) {
    if (Value written = writtenMemref(op))
      writableArgs.insert(rootMemref(written));
  });
  sinkProducers(kernel.getBody().front());
  if (failed(checkSupported()))
    return failure();
  findPromotable();
  if (failed(analyze()))
    return failure();
  // A register-resident scratch keeps the layout of what is stored into it
  // (e.g. a dot's accumulator layout); its loads produce that layout.
  for (auto &[arg, p] : promoted) {
    p.layout = -1;
    for (Value v : p.stored)
      if (auto l = layoutOf.find(v); l != layoutOf.end() && p.layout < 0 &&
                                     !flexible.contains(v))
        p.layout = l->second;
    if (p.layout < 0)
      p.layout = defaultLayout(p.type);
    for (Value load : p.loads)
      layoutOf[load] = p.layout;
  }
  // The other scratch buffers go to shared memory, first in it.
  {
    OpBuilder pb(kc.prologueEnd);
    auto space = mlir::gpu::AddressSpaceAttr::get(
        b.getContext(), mlir::gpu::GPUDialect::getWorkgroupAddressSpace());
    for (Value arg : scratchArgs) {
      if (promoted.count(arg))
        continue;
      auto t = cast<MemRefType>(arg.getType());
      auto type = MemRefType::get(t.getShape(), t.getElementType(), nullptr,
                                  space);
      Value base = memref::ViewOp::create(
          pb, kc.loc, type, kc.smemBase,
          arith::ConstantIndexOp::create(pb, kc.loc, kc.workspaceOffset),
          ValueRange{});
      View v;
      v.base = base;
      v.baseType = type;
      for (int64_t d = 0; d < t.getRank(); ++d) {
        v.offsets.push_back(arith::ConstantIndexOp::create(pb, kc.loc, 0));
        v.offsetDiv.push_back(int64_t(1) << 30);
        v.checkLow.push_back(false);
        v.checkHigh.push_back(false);
        v.dimOf.push_back(d);
        v.strides.push_back(1);
        v.shape.push_back(t.getDimSize(d));
      }
      views[arg] = v;
      int64_t bytes = t.getNumElements() *
                      std::max<int64_t>(1, elementBits(t.getElementType()) / 8);
      kc.workspaceOffset += (bytes + 127) / 128 * 128;
    }
    scratchSharedBytes = kc.workspaceOffset;
  }
  planEarlyStaging();
  planTma();
  planStages();
  return success();
}

Distributor::Promoted *Distributor::promotedOf(Value memref) {
  auto it = promoted.find(memref);
  return it == promoted.end() ? nullptr : &it->second;
}

LogicalResult Distributor::emit(OpBuilder &builder) {
  b.setInsertionPoint(builder.getInsertionBlock(),
                      builder.getInsertionPoint());
  // Bases written anywhere in the kernel need ordering barriers.
  kernel.walk([&](Operation *op) {
    Value written = writtenMemref(op);
    if (!written)
      return;
    if (auto it = views.find(rootMemref(written)); it != views.end())
      writtenBases.insert(it->second.base);
  });
  initTmaBarriers();
  if (failed(emitBlock(kernel.getBody().front())) || stagingFailed)
    return failure();
  builder.setInsertionPoint(b.getInsertionBlock(), b.getInsertionPoint());
  return success();
}

LogicalResult Distributor::run(OpBuilder &builder) {
  if (failed(prepare()))
    return failure();
  SmallVector<Value> state = initialPromotedState(builder);
  setPromotedState(state);
  return emit(builder);
}

//===----------------------------------------------------------------------===//
// Scratch buffers kept in registers
//===----------------------------------------------------------------------===//

/// Whether every op between `op` and the kernel body is an scf.if.
static bool onlyUnderIfs(Operation *op, Block &body) {
  while (op && op->getBlock() != &body) {
    Operation *parent = op->getParentOp();
    if (!parent || !isa<scf::IfOp>(parent))
      return false;
    op = parent;
  }
  return op != nullptr;
}

void Distributor::findPromotable() {
  Block &body = kernel.getBody().front();
  for (Value arg : scratchArgs) {
    bool ok = true;
    SmallVector<Value> stored;
    SmallVector<Value> loads;
    for (OpOperand &use : arg.getUses()) {
      Operation *user = use.getOwner();
      if (!onlyUnderIfs(user, body)) {
        ok = false;
        break;
      }
      if (auto tt = dyn_cast<bufferization::ToTensorOp>(user)) {
        loads.push_back(tt.getResult());
        continue;
      }
      if (auto m = dyn_cast<bufferization::MaterializeInDestinationOp>(user);
          m && m.getDest() == arg) {
        stored.push_back(m.getSource());
        continue;
      }
      // A snapshot: copied into an alloc that is only read whole.
      if (auto c = dyn_cast<linalg::CopyOp>(user);
          c && c.getInputs()[0] == arg &&
          c.getOutputs()[0].getDefiningOp<memref::AllocOp>()) {
        Value alloc = c.getOutputs()[0];
        for (Operation *u : alloc.getUsers()) {
          if (u == user)
            continue;
          auto tt = dyn_cast<bufferization::ToTensorOp>(u);
          if (!tt || tt->getBlock() != user->getBlock()) {
            ok = false;
            break;
          }
          loads.push_back(tt.getResult());
        }
        continue;
      }
      ok = false;
      break;
    }
    if (!ok)
      continue;
    auto refType = cast<MemRefType>(arg.getType());
    auto tensorType =
        RankedTensorType::get(refType.getShape(), refType.getElementType());
    Promoted p;
    p.type = tensorType;
    p.loads = loads;
    p.stored = stored;
    p.layout = -1;
    promoted[arg] = p;
  }
}

SmallVector<Value> Distributor::initialPromotedState(OpBuilder &builder) {
  SmallVector<Value> out;
  for (Value arg : scratchArgs) {
    auto it = promoted.find(arg);
    if (it == promoted.end())
      continue;
    Promoted &p = it->second;
    // Scratch starts as memory nobody wrote (interpret mode: NaN / min).
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPoint(builder.getInsertionBlock(),
                        builder.getInsertionPoint());
    Value init = uninitialized(p.type.getElementType());
    out.append(layout(p.layout).numRegs(), init);
  }
  return out;
}

void Distributor::setPromotedState(ValueRange state) {
  size_t next = 0;
  for (Value arg : scratchArgs) {
    auto it = promoted.find(arg);
    if (it == promoted.end())
      continue;
    int64_t n = layout(it->second.layout).numRegs();
    it->second.regs.assign(state.begin() + next, state.begin() + next + n);
    next += n;
  }
}

SmallVector<Value> Distributor::promotedState() {
  SmallVector<Value> out;
  for (Value arg : scratchArgs)
    if (auto it = promoted.find(arg); it != promoted.end())
      llvm::append_range(out, it->second.regs);
  return out;
}

SmallVector<Type> Distributor::promotedStateTypes() {
  SmallVector<Type> out;
  for (Value arg : scratchArgs)
    if (auto it = promoted.find(arg); it != promoted.end())
      out.append(layout(it->second.layout).numRegs(),
                 it->second.type.getElementType());
  return out;
}

LogicalResult Distributor::emitBlock(Block &block) {
  for (Operation &op : block.without_terminator())
    if (failed(emitOp(&op)))
      return failure();
  return success();
}

LogicalResult Distributor::emitOp(Operation *op) {
  if (op->getNumResults() == 1 && (flexible.contains(op->getResult(0)) ||
                                   streamed.contains(op->getResult(0))))
    return success();
  if (isa<memref::MemRefDialect, bufferization::BufferizationDialect>(
          op->getDialect()) ||
      isa<linalg::CopyOp, UnrealizedConversionCastOp>(op))
    return emitMemrefOp(op);
  if (auto c = dyn_cast<arith::ConstantOp>(op);
      c && isa<RankedTensorType>(c.getType()))
    return success();
  if (isa<tensor::EmptyOp>(op))
    return success();
  if (auto g = dyn_cast<linalg::GenericOp>(op)) {
    if (!isElementwise(g))
      return op->emitOpError()
             << "is a reduction the CUDA lowering does not support yet";
    return emitElementwise(op);
  }
  if (isa<linalg::FillOp>(op))
    return success(); // flexible; reached only for tensor-valued fills
  if (isa<linalg::ReduceOp>(op))
    return emitReduce(op);
  if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op))
    return emitDot(op);
  if (isa<linalg::TransposeOp, tensor::CollapseShapeOp,
          tensor::ExpandShapeOp>(op)) {
    Value in = op->getOperand(0);
    int inLayout = layoutOrDefault(in);
    auto regs = get(in, inLayout);
    if (failed(regs))
      return failure();
    int out = layoutOf.lookup(op->getResult(0));
    // The analysis made `out` the relabeled input layout.
    setDist(op->getResult(0), Dist{out, *regs});
    return success();
  }
  if (isa<scf::ForOp>(op))
    return emitFor(op);
  if (isa<scf::IfOp>(op))
    return emitIf(op);
  if (isa<scf::WhileOp>(op))
    return emitWhile(op);
  if (isa<tensor::GenerateOp>(op))
    return emitGenerate(op);
  if (isa<tensor::ExtractOp>(op))
    return emitExtract(op);
  if (isa<tensor::InsertOp>(op))
    return emitInsert(op);
  if (isa<tensor::ExtractSliceOp>(op))
    return emitExtractSlice(op);
  if (isa<tensor::InsertSliceOp>(op))
    return emitInsertSlice(op);
  if (auto print = dyn_cast<mlir::gpu::PrintfOp>(op)) {
    // Once per block.
    Value first = arith::CmpIOp::create(b, kc.loc, arith::CmpIPredicate::eq,
                                        kc.tid, idx(0));
    auto ifOp = scf::IfOp::create(b, kc.loc, first, /*withElse=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    b.clone(*op, scalars);
    return success();
  }
  if (isa<func::CallOp>(op))
    return op->emitOpError() << "calls a function; the CUDA lowering "
                                "supports no calls in kernels";
  for (Type t : llvm::concat<Type>(op->getOperandTypes(),
                                   op->getResultTypes()))
    if (isa<ShapedType>(t))
      return op->emitOpError() << "has no lowering to the CUDA target";
  b.clone(*op, scalars);
  return success();
}

LogicalResult Distributor::emitElementwise(Operation *op) {
  auto g = cast<linalg::GenericOp>(op);
  int id = layoutOf.lookup(g->getResult(0));
  // Reuse the flexible materializer: it computes all results at once.
  flexible.insert(g->getResult(0));
  auto regs0 = materialize(g->getResult(0), id);
  flexible.erase(g->getResult(0));
  if (failed(regs0))
    return failure();
  if (g->getNumResults() == 1) {
    setDist(g->getResult(0), Dist{id, *regs0});
    memo.erase({g->getResult(0), id});
    return success();
  }
  return op->emitOpError()
         << "has several results; the CUDA lowering supports one";
}

SmallVector<Value> Distributor::combine(Block &body, ArrayRef<Value> in,
                                        ArrayRef<Value> acc) {
  IRMapping m;
  for (auto [i, v] : llvm::enumerate(in))
    m.map(body.getArgument(i), v);
  for (auto [i, v] : llvm::enumerate(acc))
    m.map(body.getArgument(in.size() + i), v);
  for (Operation &inner : body.without_terminator())
    b.clone(inner, m);
  SmallVector<Value> out;
  for (Value y : body.getTerminator()->getOperands())
    out.push_back(m.lookupOrDefault(y));
  return out;
}

Value Distributor::shuffleXor(Value v, int64_t mask) {
  Location loc = kc.loc;
  Type t = v.getType();
  auto shfl = [&](Value x) {
    return mlir::gpu::ShuffleOp::create(b, loc, x, static_cast<int32_t>(mask),
                                        static_cast<int32_t>(kc.threadsPerWarp()),
                                        mlir::gpu::ShuffleMode::XOR)
        .getShuffleResult();
  };
  if (t.isF32() || t.isInteger(32))
    return shfl(v);
  if (t.isIndex()) {
    Value w = arith::IndexCastOp::create(b, loc, b.getI64Type(), v);
    return arith::IndexCastOp::create(b, loc, t, shuffleXor(w, mask));
  }
  unsigned bits = t.getIntOrFloatBitWidth();
  Type intType = b.getIntegerType(bits);
  Value asInt = isa<FloatType>(t)
                    ? arith::BitcastOp::create(b, loc, intType, v).getResult()
                    : v;
  Value result;
  if (bits == 64) {
    Value lo = arith::TruncIOp::create(b, loc, b.getI32Type(), asInt);
    Value hi = arith::TruncIOp::create(
        b, loc, b.getI32Type(),
        arith::ShRUIOp::create(
            b, loc, asInt,
            arith::ConstantIntOp::create(b, loc, b.getI64Type(), 32)));
    Value slo = arith::ExtUIOp::create(b, loc, b.getI64Type(), shfl(lo));
    Value shi = arith::ShLIOp::create(
        b, loc, arith::ExtUIOp::create(b, loc, b.getI64Type(), shfl(hi)),
        arith::ConstantIntOp::create(b, loc, b.getI64Type(), 32));
    result = arith::OrIOp::create(b, loc, slo, shi);
  } else {
    Value wide = arith::ExtUIOp::create(b, loc, b.getI32Type(), asInt);
    result = arith::TruncIOp::create(b, loc, intType, shfl(wide));
  }
  if (isa<FloatType>(t))
    result = arith::BitcastOp::create(b, loc, t, result);
  return result;
}

LogicalResult Distributor::emitReduce(Operation *op) {
  auto red = cast<linalg::ReduceOp>(op);
  ArrayRef<int64_t> dims = red.getDimensions();
  Block &body = red.getCombiner().front();
  size_t n = red.getInputs().size();
  Value in0 = red.getInputs()[0];
  int a = layoutOrDefault(in0);
  // Every basis must lie inside or outside the reduced dims.
  auto pure = [&](const Layout &l) {
    for (uint64_t basis : llvm::concat<const uint64_t>(l.regs, l.lanes,
                                                        l.warps)) {
      bool inRed = false, outRed = false;
      for (int64_t d = 0; d < l.rank(); ++d)
        if (l.coord(basis, d))
          (llvm::is_contained(dims, d) ? inRed : outRed) = true;
      if (inRed && outRed)
        return false;
    }
    return true;
  };
  if (!pure(layout(a)))
    a = defaultLayout(cast<RankedTensorType>(in0.getType()));
  const Layout &A = layout(a);
  int s = layoutOf.count(red->getResult(0))
              ? layoutOf.lookup(red->getResult(0))
              : intern(sliceLayout(A, dims));
  Layout expect = sliceLayout(A, dims);
  if (!layout(s).sameDistribution(expect))
    s = intern(expect);
  const Layout &S = layout(s);
  SmallVector<int64_t> kept;
  for (int64_t d = 0; d < A.rank(); ++d)
    if (!llvm::is_contained(dims, d))
      kept.push_back(d);

  SmallVector<SmallVector<Value>> inputs;
  for (Value in : red.getInputs()) {
    auto regs = get(in, a);
    if (failed(regs))
      return failure();
    inputs.push_back(*regs);
  }
  // 1. Registers of the same output element.
  SmallVector<SmallVector<int64_t>> groups(S.numRegs());
  for (int64_t r = 0; r < A.numRegs(); ++r) {
    uint64_t lin = projectLinear(A, A.regLinear(r), kept, S.shape);
    groups[*registerOf(S, lin)].push_back(r);
  }
  // partial[s][k]: input k's partial for output register s.
  SmallVector<SmallVector<Value>> partial(S.numRegs());
  for (int64_t sr = 0; sr < S.numRegs(); ++sr) {
    SmallVector<SmallVector<Value>> items;
    for (int64_t r : groups[sr]) {
      SmallVector<Value> item;
      for (size_t k = 0; k < n; ++k)
        item.push_back(inputs[k][r]);
      items.push_back(item);
    }
    while (items.size() > 1) {
      SmallVector<SmallVector<Value>> next;
      for (size_t i = 0; i + 1 < items.size(); i += 2)
        next.push_back(combine(body, items[i + 1], items[i]));
      if (items.size() % 2)
        next.push_back(items.back());
      items = std::move(next);
    }
    partial[sr] = items.front();
  }
  // 2. Lanes.
  for (auto [i, basis] : llvm::enumerate(A.lanes)) {
    if (basis == 0 || projectLinear(A, basis, kept, S.shape) != 0)
      continue;
    for (auto &p : partial) {
      SmallVector<Value> other;
      for (Value v : p)
        other.push_back(shuffleXor(v, int64_t(1) << i));
      p = combine(body, other, p);
    }
  }
  // 3. Warps, through shared memory.
  SmallVector<int64_t> warpBits;
  for (auto [i, basis] : llvm::enumerate(A.warps))
    if (basis != 0 && projectLinear(A, basis, kept, S.shape) == 0)
      warpBits.push_back(i);
  if (!warpBits.empty()) {
    int64_t groupsN = int64_t(1) << warpBits.size();
    int64_t elems = S.numElements();
    Value g = idx(0);
    for (auto [k, bit] : llvm::enumerate(warpBits)) {
      Value t = arith::AndIOp::create(
          b, kc.loc,
          arith::ShRUIOp::create(b, kc.loc, kc.tid, idx(kc.laneBits + bit)),
          idx(1));
      if (k)
        t = arith::ShLIOp::create(b, kc.loc, t, idx(k));
      g = arith::OrIOp::create(b, kc.loc, g, t);
    }
    std::vector<View> ws;
    int64_t offset = 0;
    for (size_t k = 0; k < n; ++k) {
      Type t = cast<RankedTensorType>(red.getInputs()[k].getType())
                   .getElementType();
      int64_t bytes;
      ws.push_back(workspace({groupsN, elems}, t, offset, false, bytes));
      offset += (bytes + 15) / 16 * 16;
    }
    auto linear = [&](int64_t sr) {
      SmallVector<Value> c = coords(s, sr);
      Value lin = idx(0);
      int64_t stride = 1;
      for (int64_t d = S.rank() - 1; d >= 0; --d) {
        lin = arith::AddIOp::create(
            b, kc.loc, lin,
            arith::MulIOp::create(b, kc.loc, c[d], idx(stride)));
        stride *= S.shape[d];
      }
      return lin;
    };
    auto toStorage = [&](Value v) {
      return v.getType().isInteger(1)
                 ? arith::ExtUIOp::create(b, kc.loc, b.getI8Type(), v)
                       .getResult()
                 : v;
    };
    auto fromStorage = [&](Value v, Type t) {
      return t.isInteger(1)
                 ? arith::TruncIOp::create(b, kc.loc, t, v).getResult()
                 : v;
    };
    SmallVector<Value> lins;
    for (int64_t sr = 0; sr < S.numRegs(); ++sr) {
      lins.push_back(linear(sr));
      for (size_t k = 0; k < n; ++k)
        memref::StoreOp::create(b, kc.loc, toStorage(partial[sr][k]),
                                ws[k].base, ValueRange{g, lins[sr]});
    }
    barrier();
    for (int64_t sr = 0; sr < S.numRegs(); ++sr) {
      SmallVector<Value> acc;
      for (size_t k = 0; k < n; ++k)
        acc.push_back(fromStorage(
            memref::LoadOp::create(b, kc.loc, ws[k].base,
                                   ValueRange{idx(0), lins[sr]}),
            partial[sr][k].getType()));
      for (int64_t gi = 1; gi < groupsN; ++gi) {
        SmallVector<Value> other;
        for (size_t k = 0; k < n; ++k)
          other.push_back(fromStorage(
              memref::LoadOp::create(b, kc.loc, ws[k].base,
                                     ValueRange{idx(gi), lins[sr]}),
              partial[sr][k].getType()));
        acc = combine(body, other, acc);
      }
      partial[sr] = acc;
    }
    barrier();
  }
  // 4. The init values.
  SmallVector<SmallVector<Value>> inits;
  for (Value init : red.getInits()) {
    auto regs = get(init, s);
    if (failed(regs))
      return failure();
    inits.push_back(*regs);
  }
  SmallVector<SmallVector<Value>> results(n);
  for (int64_t sr = 0; sr < S.numRegs(); ++sr) {
    SmallVector<Value> acc;
    for (size_t k = 0; k < n; ++k)
      acc.push_back(inits[k][sr]);
    SmallVector<Value> out = combine(body, partial[sr], acc);
    for (size_t k = 0; k < n; ++k)
      results[k].push_back(out[k]);
  }
  for (size_t k = 0; k < n; ++k)
    setDist(red->getResult(k), Dist{s, results[k]});
  return success();
}

//===----------------------------------------------------------------------===//
// Structured control flow
//===----------------------------------------------------------------------===//

namespace {
/// Flattens tensors into their registers, keeping where each starts.
struct Flat {
  SmallVector<Value> values;
  SmallVector<Type> types;
  SmallVector<std::pair<unsigned, unsigned>> segments; // start, count
};
} // namespace

LogicalResult Distributor::emitFor(Operation *op) {
  auto forOp = cast<scf::ForOp>(op);
  Location loc = forOp.getLoc();
  SmallVector<int> argLayouts;
  Flat inits;
  for (auto [i, init] : llvm::enumerate(forOp.getInitArgs())) {
    unsigned start = inits.values.size();
    if (auto t = dyn_cast<RankedTensorType>(init.getType())) {
      int id = layoutOf.count(forOp.getRegionIterArgs()[i])
                   ? layoutOf.lookup(forOp.getRegionIterArgs()[i])
                   : defaultLayout(t);
      argLayouts.push_back(id);
      auto regs = get(init, id);
      if (failed(regs))
        return failure();
      for (Value r : *regs) {
        inits.values.push_back(r);
        inits.types.push_back(t.getElementType());
      }
    } else {
      argLayouts.push_back(-1);
      inits.values.push_back(scalars.lookup(init));
      inits.types.push_back(init.getType());
    }
    inits.segments.push_back({start, inits.values.size() - start});
  }
  auto newFor = scf::ForOp::create(
      b, loc, scalars.lookup(forOp.getLowerBound()),
      scalars.lookup(forOp.getUpperBound()), scalars.lookup(forOp.getStep()),
      inits.values);
  Block *body = newFor.getBody();
  scalars.map(forOp.getInductionVar(), newFor.getInductionVar());
  auto bindRange = [&](ValueRange news, ValueRange olds) {
    for (auto [i, old] : llvm::enumerate(olds)) {
      auto [start, count] = inits.segments[i];
      if (argLayouts[i] >= 0) {
        setDist(old, Dist{argLayouts[i],
                          SmallVector<Value>(news.slice(start, count))});
      } else {
        scalars.map(old, news[start]);
      }
    }
  };
  {
    OpBuilder::InsertionGuard guard(b);
    if (body->mightHaveTerminator())
      b.setInsertionPoint(body->getTerminator());
    else
      b.setInsertionPointToEnd(body);
    bindRange(newFor.getRegionIterArgs(), forOp.getRegionIterArgs());
    forgetAccesses();
    if (failed(emitBlock(*forOp.getBody())))
      return failure();
    auto yield = cast<scf::YieldOp>(forOp.getBody()->getTerminator());
    SmallVector<Value> yields;
    for (auto [i, v] : llvm::enumerate(yield.getOperands())) {
      if (argLayouts[i] >= 0) {
        auto regs = get(v, argLayouts[i]);
        if (failed(regs))
          return failure();
        llvm::append_range(yields, *regs);
      } else {
        yields.push_back(scalars.lookup(v));
      }
    }
    if (body->mightHaveTerminator())
      body->getTerminator()->erase();
    b.setInsertionPointToEnd(body);
    scf::YieldOp::create(b, loc, yields);
  }
  bindRange(newFor.getResults(), forOp.getResults());
  forgetAccesses();
  return success();
}

/// An scf.if whose branches only compute (pure ops) and update scratch
/// buffers kept in registers: emitted as both branches plus selects, which
/// avoids carrying the registers through control flow.
bool Distributor::isSelectable(scf::IfOp ifOp) {
  if (ifOp->getNumResults() != 0)
    return false;
  bool ok = true;
  ifOp.walk([&](Operation *inner) {
    if (inner == ifOp.getOperation() || isa<scf::YieldOp>(inner))
      return;
    if (auto m = dyn_cast<bufferization::MaterializeInDestinationOp>(inner)) {
      if (!promotedOf(m.getDest()))
        ok = false;
      return;
    }
    if (auto tt = dyn_cast<bufferization::ToTensorOp>(inner)) {
      if (!promotedOf(tt.getBuffer()))
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

LogicalResult Distributor::emitIf(Operation *op) {
  auto ifOp = cast<scf::IfOp>(op);
  Location loc = ifOp.getLoc();
  if (isSelectable(ifOp)) {
    SmallVector<Value> touched;
    for (auto &[arg, p] : promoted)
      touched.push_back(arg);
    SmallVector<SmallVector<Value>> before, after;
    for (Value arg : touched)
      before.push_back(promotedOf(arg)->regs);
    if (failed(emitBlock(*ifOp.thenBlock())))
      return failure();
    for (Value arg : touched)
      after.push_back(promotedOf(arg)->regs);
    for (auto [arg, regs] : llvm::zip(touched, before))
      promotedOf(arg)->regs = regs;
    if (ifOp.elseBlock() && failed(emitBlock(*ifOp.elseBlock())))
      return failure();
    Value cond = scalars.lookup(ifOp.getCondition());
    for (auto [i, arg] : llvm::enumerate(touched)) {
      Promoted *p = promotedOf(arg);
      for (auto [r, reg] : llvm::enumerate(p->regs))
        if (after[i][r] != reg)
          reg = arith::SelectOp::create(b, loc, cond, after[i][r], reg);
    }
    return success();
  }
  SmallVector<int> resLayouts;
  SmallVector<Type> types;
  SmallVector<std::pair<unsigned, unsigned>> segments;
  for (Value r : ifOp.getResults()) {
    unsigned start = types.size();
    if (auto t = dyn_cast<RankedTensorType>(r.getType())) {
      int id = layoutOf.count(r) ? layoutOf.lookup(r) : defaultLayout(t);
      resLayouts.push_back(id);
      types.append(layout(id).numRegs(), t.getElementType());
    } else {
      resLayouts.push_back(-1);
      types.push_back(r.getType());
    }
    segments.push_back({start, types.size() - start});
  }
  // Register-resident scratch written inside: carried through the if.
  SmallVector<Value> modified;
  ifOp.walk([&](bufferization::MaterializeInDestinationOp m) {
    if (promotedOf(m.getDest()) && !llvm::is_contained(modified, m.getDest()))
      modified.push_back(m.getDest());
  });
  SmallVector<SmallVector<Value>> before;
  for (Value arg : modified) {
    before.push_back(promotedOf(arg)->regs);
    types.append(before.back().size(),
                 promotedOf(arg)->type.getElementType());
  }
  bool hasElse = ifOp.elseBlock() != nullptr || !modified.empty();
  auto newIf = scf::IfOp::create(b, loc, types,
                                 scalars.lookup(ifOp.getCondition()), hasElse);
  auto saved = accessesSinceBarrier;
  auto emitBranch = [&](Block *oldBlock, Block *newBlock) -> LogicalResult {
    OpBuilder::InsertionGuard guard(b);
    bool hadTerminator = newBlock->mightHaveTerminator();
    if (hadTerminator)
      b.setInsertionPoint(newBlock->getTerminator());
    else
      b.setInsertionPointToEnd(newBlock);
    accessesSinceBarrier = saved;
    for (auto [arg, regs] : llvm::zip(modified, before))
      promotedOf(arg)->regs = regs;
    if (oldBlock && failed(emitBlock(*oldBlock)))
      return failure();
    SmallVector<Value> yields;
    ValueRange oldYields = oldBlock ? oldBlock->getTerminator()->getOperands()
                                    : ValueRange{};
    for (auto [i, v] : llvm::enumerate(oldYields)) {
      if (resLayouts[i] >= 0) {
        auto regs = get(v, resLayouts[i]);
        if (failed(regs))
          return failure();
        llvm::append_range(yields, *regs);
      } else {
        yields.push_back(scalars.lookup(v));
      }
    }
    for (Value arg : modified)
      llvm::append_range(yields, promotedOf(arg)->regs);
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
      Promoted *p = promotedOf(arg);
      next -= p->regs.size();
      p->regs.assign(newIf.getResults().begin() + next,
                     newIf.getResults().begin() + next + p->regs.size());
    }
  }
  for (auto [i, r] : llvm::enumerate(ifOp.getResults())) {
    auto [start, count] = segments[i];
    if (resLayouts[i] >= 0)
      setDist(r, Dist{resLayouts[i], SmallVector<Value>(
                                         newIf.getResults().slice(start,
                                                                  count))});
    else
      scalars.map(r, newIf.getResult(start));
  }
  forgetAccesses();
  return success();
}

LogicalResult Distributor::emitWhile(Operation *op) {
  auto whileOp = cast<scf::WhileOp>(op);
  Location loc = whileOp.getLoc();
  Block &before = whileOp.getBefore().front();
  Block &after = whileOp.getAfter().front();
  auto flatten = [&](ValueRange olds, SmallVector<int> &lay,
                     SmallVector<Type> &types,
                     SmallVector<std::pair<unsigned, unsigned>> &seg) {
    for (Value v : olds) {
      unsigned start = types.size();
      if (auto t = dyn_cast<RankedTensorType>(v.getType())) {
        int id = layoutOf.count(v) ? layoutOf.lookup(v) : defaultLayout(t);
        lay.push_back(id);
        types.append(layout(id).numRegs(), t.getElementType());
      } else {
        lay.push_back(-1);
        types.push_back(v.getType());
      }
      seg.push_back({start, types.size() - start});
    }
  };
  SmallVector<int> beforeLay, afterLay;
  SmallVector<Type> beforeTypes, afterTypes;
  SmallVector<std::pair<unsigned, unsigned>> beforeSeg, afterSeg;
  flatten(before.getArguments(), beforeLay, beforeTypes, beforeSeg);
  flatten(after.getArguments(), afterLay, afterTypes, afterSeg);
  auto collect = [&](ValueRange olds,
                     ArrayRef<int> lay) -> FailureOr<SmallVector<Value>> {
    SmallVector<Value> out;
    for (auto [i, v] : llvm::enumerate(olds)) {
      if (lay[i] >= 0) {
        auto regs = get(v, lay[i]);
        if (failed(regs))
          return failure();
        llvm::append_range(out, *regs);
      } else {
        out.push_back(scalars.lookup(v));
      }
    }
    return out;
  };
  auto bind = [&](ValueRange olds, ValueRange news, ArrayRef<int> lay,
                  ArrayRef<std::pair<unsigned, unsigned>> seg) {
    for (auto [i, old] : llvm::enumerate(olds)) {
      auto [start, count] = seg[i];
      if (lay[i] >= 0)
        setDist(old, Dist{lay[i], SmallVector<Value>(news.slice(start, count))});
      else
        scalars.map(old, news[start]);
    }
  };
  auto inits = collect(whileOp.getInits(), beforeLay);
  if (failed(inits))
    return failure();
  auto newWhile =
      scf::WhileOp::create(b, loc, afterTypes, *inits, nullptr, nullptr);
  Block *nb = b.createBlock(&newWhile.getBefore(), {}, beforeTypes,
                            SmallVector<Location>(beforeTypes.size(), loc));
  Block *na = b.createBlock(&newWhile.getAfter(), {}, afterTypes,
                            SmallVector<Location>(afterTypes.size(), loc));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(nb);
    bind(before.getArguments(), nb->getArguments(), beforeLay, beforeSeg);
    forgetAccesses();
    if (failed(emitBlock(before)))
      return failure();
    auto cond = cast<scf::ConditionOp>(before.getTerminator());
    auto args = collect(cond.getArgs(), afterLay);
    if (failed(args))
      return failure();
    scf::ConditionOp::create(b, loc, scalars.lookup(cond.getCondition()),
                             *args);
    b.setInsertionPointToEnd(na);
    bind(after.getArguments(), na->getArguments(), afterLay, afterSeg);
    forgetAccesses();
    if (failed(emitBlock(after)))
      return failure();
    auto yield = cast<scf::YieldOp>(after.getTerminator());
    auto ys = collect(yield.getOperands(), beforeLay);
    if (failed(ys))
      return failure();
    scf::YieldOp::create(b, loc, *ys);
  }
  bind(whileOp.getResults(), newWhile.getResults(), afterLay, afterSeg);
  forgetAccesses();
  return success();
}

//===----------------------------------------------------------------------===//
// tensor ops
//===----------------------------------------------------------------------===//

LogicalResult Distributor::emitGenerate(Operation *op) {
  auto gen = cast<tensor::GenerateOp>(op);
  int id = layoutOrDefault(gen.getResult());
  Block &body = gen.getBody().front();
  // Order the reads before any lane diverges.
  gen.walk([&](memref::LoadOp load) {
    if (auto it = views.find(load.getMemref()); it != views.end())
      beforeAccess(it->second, -1, false);
  });
  SmallVector<Value> regs;
  for (int64_t r = 0; r < layout(id).numRegs(); ++r) {
    SmallVector<Value> c = coords(id, r);
    for (auto [i, arg] : llvm::enumerate(body.getArguments()))
      scalars.map(arg, c[i]);
    inLaneContext = true;
    LogicalResult ok = emitBlock(body);
    inLaneContext = false;
    if (failed(ok))
      return failure();
    regs.push_back(scalars.lookup(body.getTerminator()->getOperand(0)));
  }
  setDist(gen.getResult(), Dist{id, regs});
  return success();
}

LogicalResult Distributor::emitExtract(Operation *op) {
  auto ex = cast<tensor::ExtractOp>(op);
  Value t = ex.getTensor();
  int id = layoutOrDefault(t);
  auto regsOr = get(t, id);
  if (failed(regsOr))
    return failure();
  const Layout &l = layout(id);
  SmallVector<Value> indices;
  for (Value i : ex.getIndices())
    indices.push_back(scalars.lookup(i));
  if (l.rank() == 0) {
    scalars.map(ex.getResult(), (*regsOr)[0]);
    return success();
  }
  // This thread's candidate and whether it holds the element.
  Value value = (*regsOr)[0], owns;
  for (int64_t r = 0; r < l.numRegs(); ++r) {
    SmallVector<Value> c = coords(id, r);
    Value own = arith::ConstantIntOp::create(b, kc.loc, 1, 1);
    for (int64_t d = 0; d < l.rank(); ++d)
      own = arith::AndIOp::create(
          b, kc.loc, own,
          arith::CmpIOp::create(b, kc.loc, arith::CmpIPredicate::eq, c[d],
                                indices[d]));
    if (r == 0) {
      owns = own;
      continue;
    }
    value = arith::SelectOp::create(b, kc.loc, own, (*regsOr)[r], value);
    owns = arith::OrIOp::create(b, kc.loc, owns, own);
  }
  bool everyThread = llvm::all_of(l.lanes, [](uint64_t x) { return x == 0; }) &&
                     llvm::all_of(l.warps, [](uint64_t x) { return x == 0; });
  if (everyThread) {
    scalars.map(ex.getResult(), value);
    return success();
  }
  Type type = value.getType();
  int64_t bytes;
  View ws = workspace({1}, type, 0, false, bytes);
  Value stored = type.isInteger(1)
                     ? arith::ExtUIOp::create(b, kc.loc, b.getI8Type(), value)
                           .getResult()
                     : value;
  auto ifOp = scf::IfOp::create(b, kc.loc, owns, false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    memref::StoreOp::create(b, kc.loc, stored, ws.base, ValueRange{idx(0)});
  }
  barrier();
  Value loaded = memref::LoadOp::create(b, kc.loc, ws.base, ValueRange{idx(0)});
  barrier();
  if (type.isInteger(1))
    loaded = arith::TruncIOp::create(b, kc.loc, type, loaded);
  scalars.map(ex.getResult(), loaded);
  return success();
}

LogicalResult Distributor::emitInsert(Operation *op) {
  auto ins = cast<tensor::InsertOp>(op);
  int id = layoutOrDefault(ins.getResult());
  auto regs = get(ins.getDest(), id);
  if (failed(regs))
    return failure();
  Value s = scalars.lookup(ins.getScalar());
  SmallVector<Value> out;
  const Layout &l = layout(id);
  for (int64_t r = 0; r < l.numRegs(); ++r) {
    SmallVector<Value> c = coords(id, r);
    Value own = arith::ConstantIntOp::create(b, kc.loc, 1, 1);
    for (auto [d, i] : llvm::enumerate(ins.getIndices()))
      own = arith::AndIOp::create(
          b, kc.loc, own,
          arith::CmpIOp::create(b, kc.loc, arith::CmpIPredicate::eq, c[d],
                                scalars.lookup(i)));
    out.push_back(arith::SelectOp::create(b, kc.loc, own, s, (*regs)[r]));
  }
  setDist(ins.getResult(), Dist{id, out});
  return success();
}

LogicalResult Distributor::emitExtractSlice(Operation *op) {
  auto ex = cast<tensor::ExtractSliceOp>(op);
  Value src = ex.getSource();
  auto srcType = cast<RankedTensorType>(src.getType());
  int srcId = layoutOrDefault(src);
  auto regs = get(src, srcId);
  if (failed(regs))
    return failure();
  int64_t bytes;
  View ws = workspace(srcType.getShape(), srcType.getElementType(), 0, false,
                      bytes);
  SmallVector<Value> stored(*regs);
  if (srcType.getElementType().isInteger(1))
    for (Value &r : stored)
      r = arith::ExtUIOp::create(b, kc.loc, b.getI8Type(), r);
  if (failed(store(ws, srcId, stored)))
    return failure();
  barrier();
  SmallVector<OpFoldResult> offsets;
  for (OpFoldResult o : ex.getMixedOffsets()) {
    if (auto v = dyn_cast<Value>(o))
      offsets.push_back(scalars.lookup(v));
    else
      offsets.push_back(o);
  }
  SmallVector<int64_t> sizes(ex.getStaticSizes()),
      strides(ex.getStaticStrides());
  if (ShapedType::isDynamicShape(sizes) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return op->emitOpError() << "has dynamic sizes or strides";
  View slice = subview(ws, offsets, {}, sizes, strides, ex.getDroppedDims());
  int id = layoutOrDefault(ex.getResult());
  auto loaded = load(slice, id);
  if (failed(loaded))
    return failure();
  barrier();
  if (srcType.getElementType().isInteger(1))
    for (Value &r : *loaded)
      r = arith::TruncIOp::create(b, kc.loc, b.getI1Type(), r);
  setDist(ex.getResult(), Dist{id, *loaded});
  return success();
}

LogicalResult Distributor::emitInsertSlice(Operation *op) {
  auto ins = cast<tensor::InsertSliceOp>(op);
  auto srcType = cast<RankedTensorType>(ins.getSource().getType());
  int srcId = layoutOrDefault(ins.getSource());
  auto src = get(ins.getSource(), srcId);
  if (failed(src))
    return failure();
  int id = layoutOrDefault(ins.getResult());
  auto dest = get(ins.getDest(), id);
  if (failed(dest))
    return failure();
  SmallVector<int64_t> sizes(ins.getStaticSizes()),
      strides(ins.getStaticStrides());
  if (ShapedType::isDynamicShape(sizes) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return op->emitOpError() << "has dynamic sizes or strides";
  Type elem = srcType.getElementType();
  bool isBool = elem.isInteger(1);
  int64_t bytes;
  View ws = workspace(srcType.getShape(), elem, 0, false, bytes);
  SmallVector<Value> stored(*src);
  if (isBool)
    for (Value &r : stored)
      r = arith::ExtUIOp::create(b, kc.loc, b.getI8Type(), r);
  if (failed(store(ws, srcId, stored)))
    return failure();
  barrier();
  // Destination dims the source keeps (rank-reducing inserts drop some).
  llvm::SmallBitVector dropped = ins.getDroppedDims();
  SmallVector<Value> offsets;
  for (OpFoldResult o : ins.getMixedOffsets()) {
    if (auto v = dyn_cast<Value>(o))
      offsets.push_back(scalars.lookup(v));
    else
      offsets.push_back(idx(*getConstantIntValue(o)));
  }
  const Layout &l = layout(id);
  SmallVector<Value> out;
  for (int64_t r = 0; r < l.numRegs(); ++r) {
    SmallVector<Value> c = coords(id, r);
    Value inside = arith::ConstantIntOp::create(b, kc.loc, 1, 1);
    SmallVector<Value> srcIdx;
    for (int64_t d = 0; d < l.rank(); ++d) {
      Value rel = arith::SubIOp::create(b, kc.loc, c[d], offsets[d]);
      Value q = rel;
      if (strides[d] != 1) {
        q = arith::DivSIOp::create(b, kc.loc, rel, idx(strides[d]));
        Value exact = arith::CmpIOp::create(
            b, kc.loc, arith::CmpIPredicate::eq,
            arith::RemSIOp::create(b, kc.loc, rel, idx(strides[d])), idx(0));
        inside = arith::AndIOp::create(b, kc.loc, inside, exact);
      }
      Value ge = arith::CmpIOp::create(b, kc.loc, arith::CmpIPredicate::sge,
                                       q, idx(0));
      Value lt = arith::CmpIOp::create(b, kc.loc, arith::CmpIPredicate::slt,
                                       q, idx(sizes[d]));
      inside = arith::AndIOp::create(
          b, kc.loc, inside, arith::AndIOp::create(b, kc.loc, ge, lt));
      if (!dropped.test(d))
        srcIdx.push_back(q);
    }
    for (Value &s : srcIdx)
      s = arith::SelectOp::create(b, kc.loc, inside, s, idx(0));
    if (srcIdx.empty())
      srcIdx.push_back(idx(0));
    Value v = memref::LoadOp::create(b, kc.loc, ws.base, srcIdx);
    if (isBool)
      v = arith::TruncIOp::create(b, kc.loc, b.getI1Type(), v);
    out.push_back(arith::SelectOp::create(b, kc.loc, inside, v, (*dest)[r]));
  }
  barrier();
  setDist(ins.getResult(), Dist{id, out});
  return success();
}
