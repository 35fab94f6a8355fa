//===- Distributor.cpp - block programs over a thread block -----*- C++ -*-===//
//
// The distributor's core: checks, sinking of read-only loads, thread
// coordinates, values in layouts, layout conversions through shared
// memory, memory-ordering barriers, the emission driver and the dispatch
// of each op to its family's emitter (EmitContext.h), the emitters of the
// ops no family owns (scalar code, constants, prints, calls), and the
// scratch buffers kept in registers. Layout assignment is in
// LayoutAssignment.cpp.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/Distribute.h"
#include "passes/Conversion/PallasToGPU/DistributeUtils.h"

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

bool View::isShared() const {
  return isa_and_nonnull<mlir::gpu::AddressSpaceAttr>(
      baseType.getMemorySpace());
}

bool View::needsChecks() const {
  return llvm::any_of(checkLow, [](bool b) { return b; }) ||
         llvm::any_of(checkHigh, [](bool b) { return b; });
}

EmitContext::~EmitContext() = default;

Distributor::Distributor(KernelContext &kc, func::FuncOp kernel)
    : kc(kc), kernel(kernel), b(kernel.getContext()) {}

int LayoutTable::intern(const Layout &l) {
  for (auto [i, existing] : llvm::enumerate(layouts))
    if (existing.sameDistribution(l))
      return static_cast<int>(i);
  layouts.push_back(l);
  int id = static_cast<int>(layouts.size()) - 1;
  if (l.family == Layout::Family::MmaC || l.family == Layout::Family::MmaA ||
      l.family == Layout::Family::MmaB || l.family == Layout::Family::MfmaC ||
      l.family == Layout::Family::MfmaA || l.family == Layout::Family::MfmaB ||
      l.family == Layout::Family::WmmaC || l.family == Layout::Family::WmmaA ||
      l.family == Layout::Family::WmmaB)
    mmaRoot[id] = {l.warpsM, l.warpsN, false};
  if (l.family == Layout::Family::WgmmaC || l.family == Layout::Family::WgmmaA)
    mmaRoot[id] = {l.warpsM, l.warpsN, true};
  return id;
}

int LayoutTable::blocked(RankedTensorType type, const KernelContext &kc) {
  return intern(blockedLayout(type.getShape(),
                              elementBits(type.getElementType()),
                              kc.numWarps, kc.laneBits));
}

bool LayoutAssignmentResult::isReadOnly(Value memref,
                                        func::FuncOp kernel) const {
  Value root = rootMemref(memref);
  auto arg = dyn_cast<BlockArgument>(root);
  return arg && arg.getOwner() == &kernel.getBody().front() &&
         !writableArgs.contains(root);
}

int Distributor::intern(const Layout &l) { return LayoutTable::intern(l); }

LayoutAssignment Distributor::layoutAssignment() {
  return LayoutAssignment(kc, kernel, *this, *this, *this, *this);
}

int Distributor::dotLayout(Operation *op) {
  return layoutAssignment().dotLayout(op);
}

void Distributor::printLayouts() { layoutAssignment().printLayouts(); }

StagingPlanner Distributor::stagingPlanner() {
  return StagingPlanner(kc, kernel, *this, *this, *this);
}

int Distributor::defaultLayout(RankedTensorType type) {
  return blocked(type, kc);
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
            << "; the GPU lowering needs power-of-two block dimensions (as "
               "Pallas' Triton lowering does)";
        return WalkResult::interrupt();
      }
      Type e = tt.getElementType();
      if (!e.isIntOrIndexOrFloat() || (e.isInteger() && !e.isInteger(1) &&
                                       e.getIntOrFloatBitWidth() % 8 != 0)) {
        op->emitOpError() << "works on " << tt
                          << ", whose element type the GPU lowering does "
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
  return LayoutAssignmentResult::isReadOnly(memref, kernel);
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
      return def->emitOpError() << "produces a block the GPU lowering "
                                   "could not distribute";
    return emitError(v.getLoc()) << "block argument was not distributed";
  }
  const Dist &d = it->second;
  if (d.layout == id) {
    retireWgmma(d.regs);
    return d.regs;
  }
  auto key = std::make_pair(v, id);
  if (auto m = memo.find(key); m != memo.end())
    return m->second.regs;
  SmallVector<Value> regs;
  if (providesLocally(layout(d.layout), layout(id))) {
    retireWgmma(d.regs);
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
    retireWgmma(d.regs);
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
                                  "GPU lowering does not support";
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
              Operation *cloned = b.clone(inner, m);
              // A comparison the thread coordinates' ranges decide (an
              // iota against a bound): a constant mask.
              if (auto cmp = dyn_cast<arith::CmpIOp>(cloned))
                if (Value folded = foldByRange(cmp); folded != cmp.getResult())
                  m.map(inner.getResult(0), folded);
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
  if (failed(layoutAssignment().run()))
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
  stagingPlanner().run();
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

namespace {

/// Scalar code: cloned with the scalar mapping (tensors: an error).
LogicalResult emitScalarOp(EmitContext &cx, Operation *op) {
  for (Type t : llvm::concat<Type>(op->getOperandTypes(),
                                   op->getResultTypes()))
    if (isa<ShapedType>(t))
      return op->emitOpError() << "has no lowering to a GPU target";
  cx.builder().clone(*op, cx.emission().scalars);
  return success();
}

LogicalResult emitNothing(EmitContext &, Operation *) { return success(); }

LogicalResult emitConstant(EmitContext &cx, Operation *op) {
  // Tensor constants are flexible: materialized where used.
  if (isa<RankedTensorType>(cast<arith::ConstantOp>(op).getType()))
    return success();
  return emitScalarOp(cx, op);
}

LogicalResult emitPrintf(EmitContext &cx, Operation *op) {
  // Once per block.
  OpBuilder &b = cx.builder();
  KernelContext &kc = cx.context();
  Value first = arith::CmpIOp::create(b, kc.loc, arith::CmpIPredicate::eq,
                                      kc.tid, cx.idx(0));
  auto ifOp = scf::IfOp::create(b, kc.loc, first, /*withElse=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  b.clone(*op, cx.emission().scalars);
  return success();
}

LogicalResult emitCall(EmitContext &, Operation *op) {
  return op->emitOpError() << "calls a function; the GPU lowering "
                              "supports no calls in kernels";
}

} // namespace

LogicalResult Distributor::emitOp(Operation *op) {
  if (op->getNumResults() == 1 && (flexible.contains(op->getResult(0)) ||
                                   streamed.contains(op->getResult(0))))
    return success();
  if (EmitterRegistry::Emitter e = emitters().lookup(op))
    return e(*this, op);
  return emitScalarOp(*this, op);
}

//===----------------------------------------------------------------------===//
// The emitters of the op families
//===----------------------------------------------------------------------===//

EmitterRegistry::Emitter EmitterRegistry::lookup(Operation *op) const {
  if (auto it = byOp.find(op->getName().getTypeID()); it != byOp.end())
    return it->second;
  if (Dialect *d = op->getDialect())
    if (auto it = byDialect.find(d->getTypeID()); it != byDialect.end())
      return it->second;
  return nullptr;
}

/// Ops whose lowering is the core's: placeholders, prints, calls.
static void populateCoreEmitters(EmitterRegistry &r) {
  r.add<arith::ConstantOp>(emitConstant);
  // tensor.empty is only a destination; tensor-valued fills are flexible
  // (materialized where used).
  r.add<tensor::EmptyOp, linalg::FillOp>(emitNothing);
  r.add<mlir::gpu::PrintfOp>(emitPrintf);
  r.add<func::CallOp>(emitCall);
}

const EmitterRegistry &Distributor::emitters() {
  static const EmitterRegistry registry = [] {
    EmitterRegistry r;
    populateCoreEmitters(r);
    populateMemoryEmitters(r);
    populateElementwiseEmitters(r);
    populateReduceEmitters(r);
    populateDotEmitters(r);
    populateControlFlowEmitters(r);
    populateTensorEmitters(r);
    return r;
  }();
  return registry;
}

