//===- EmitWindow.cpp - windows reaching past a ref's end ------*- C++ -*-===//
//
// JAX's round-up-and-mask idiom: a block rounded up to a power of two
// (`pl.load(ref, pl.ds(0, 1024), mask=iota < 1000)` on a 1000-long row)
// reads and writes a window that reaches past the ref's end. pallas-to-linalg
// lowers such an access to its lane-by-lane slow path (RefAccess.cpp): a
// `tensor.generate` whose lanes load under a bounds check, and a loop nest
// whose lanes store under the bounds check and the mask. Run as written on
// the GPU, the first loads one element per branch and the second broadcasts
// every element from the thread holding it (4 barriers per element).
//
// Here both are recognized and emitted as one distributed load or store of a
// view whose indices are checked against the ref's end (Memory.cpp): vector
// accesses per group of registers, the group past the end predicated whole.
// A store's mask vanishes when it is `iota < N` with N at least the lanes
// inside the ref (it then only repeats the bounds check).
//
// Only refs whose checked dimensions span their array's whole dimension are
// taken (the views check indices against the array, so that is where the ref
// ends); other windows keep the lane-by-lane path.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/Emitters/EmitContext.h"

#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::gpu;

namespace {

/// One ref dimension of a lane's index, as RefAccess.cpp's laneIndices
/// builds it: `start + iv * stride`, or `start` for an integer index.
struct WindowDim {
  Value start;            ///< defined outside the lane body, or null
  int64_t constStart = 0; ///< when `start` is null
  int64_t iv = -1;        ///< the lane's induction variable, -1: a point
  int64_t stride = 1;
  bool checked = false; ///< the lane condition checks `index < dim`
};

/// A window access matched from the slow path.
struct Window {
  Value ref;
  SmallVector<WindowDim> dims;
  SmallVector<int64_t> shape; ///< the lanes, per induction variable
  Value mask;                 ///< stores: the mask tensor, if any
};

bool definedOutside(Value v, Region *body) {
  return !body->isAncestor(v.getParentRegion());
}

/// `idx` as `start + iv * stride` over the lane induction variables `ivs`.
std::optional<WindowDim> matchLaneIndex(Value idx, ArrayRef<Value> ivs,
                                        Region *body) {
  auto ivTerm = [&](Value v, WindowDim &d) {
    int64_t stride = 1;
    if (auto mul = v.getDefiningOp<arith::MulIOp>()) {
      auto c = getConstantIntValue(mul.getRhs());
      if (!c || *c <= 0)
        return false;
      stride = *c;
      v = mul.getLhs();
    }
    const Value *it = llvm::find(ivs, v);
    if (it == ivs.end())
      return false;
    d.iv = it - ivs.begin();
    d.stride = stride;
    return true;
  };
  auto startOf = [&](Value v, WindowDim &d) {
    if (auto c = getConstantIntValue(v)) {
      d.constStart = *c;
      return *c >= 0;
    }
    if (!definedOutside(v, body))
      return false;
    d.start = v;
    return true;
  };
  WindowDim d;
  if (ivTerm(idx, d))
    return d;
  if (auto add = idx.getDefiningOp<arith::AddIOp>()) {
    WindowDim e;
    if (ivTerm(add.getRhs(), e) && startOf(add.getLhs(), e))
      return e;
    WindowDim f;
    if (ivTerm(add.getLhs(), f) && startOf(add.getRhs(), f))
      return f;
    return std::nullopt;
  }
  if (startOf(idx, d))
    return d;
  return std::nullopt;
}

/// Whether `cond` is a conjunction of `idx[d] < dim(d)` checks (marking
/// those dimensions checked) and at most one `tensor.extract mask[ivs]` when
/// `mask` is given (set to the mask tensor).
bool boundsOnly(Value cond, ValueRange idx, MemRefType refType,
                ArrayRef<Value> ivs, SmallVectorImpl<WindowDim> &dims,
                Value *mask) {
  if (auto c = getConstantIntValue(cond))
    return *c != 0;
  if (auto andOp = cond.getDefiningOp<arith::AndIOp>())
    return boundsOnly(andOp.getLhs(), idx, refType, ivs, dims, mask) &&
           boundsOnly(andOp.getRhs(), idx, refType, ivs, dims, mask);
  if (auto cmp = cond.getDefiningOp<arith::CmpIOp>()) {
    if (cmp.getPredicate() != arith::CmpIPredicate::slt)
      return false;
    auto n = getConstantIntValue(cmp.getRhs());
    for (size_t d = 0; d < idx.size(); ++d)
      if (idx[d] == cmp.getLhs() && n && *n == refType.getDimSize(d)) {
        dims[d].checked = true;
        return true;
      }
    return false;
  }
  if (auto ex = cond.getDefiningOp<tensor::ExtractOp>();
      ex && mask && !*mask && llvm::equal(ex.getIndices(), ivs)) {
    *mask = ex.getTensor();
    return true;
  }
  return false;
}

/// Every op of `block` but `except` and the terminator is free of memory
/// effects and regions.
bool pureExcept(Block &block, Operation *except) {
  for (Operation &op : block.without_terminator())
    if (&op != except && (!isMemoryEffectFree(&op) || op.getNumRegions()))
      return false;
  return true;
}

/// The lane body of `tensor.generate`: `if (in bounds) load ref[idx] else
/// <constant>`.
std::optional<Window> matchWindowLoad(tensor::GenerateOp gen) {
  Block &body = gen.getBody().front();
  auto yield = cast<tensor::YieldOp>(body.getTerminator());
  auto ifOp = yield.getValue().getDefiningOp<scf::IfOp>();
  if (!ifOp || ifOp->getBlock() != &body || ifOp.getNumResults() != 1 ||
      !pureExcept(body, ifOp))
    return std::nullopt;
  Block &thenB = ifOp.getThenRegion().front();
  Block &elseB = ifOp.getElseRegion().front();
  if (thenB.getOperations().size() != 2 || elseB.getOperations().size() != 1)
    return std::nullopt;
  auto load = dyn_cast<memref::LoadOp>(thenB.front());
  if (!load || thenB.getTerminator()->getOperand(0) != load.getResult())
    return std::nullopt;
  Value other = elseB.getTerminator()->getOperand(0);
  if (!matchPattern(other, m_Constant()) &&
      !isa_and_nonnull<ub::PoisonOp>(other.getDefiningOp()))
    return std::nullopt;
  Window w;
  w.ref = load.getMemref();
  llvm::append_range(w.shape, gen.getType().getShape());
  SmallVector<Value> ivs(body.getArguments());
  for (Value i : load.getIndices()) {
    auto d = matchLaneIndex(i, ivs, &gen.getBody());
    if (!d)
      return std::nullopt;
    w.dims.push_back(*d);
  }
  if (!boundsOnly(ifOp.getCondition(), load.getIndices(), load.getMemRefType(),
                  ivs, w.dims, nullptr))
    return std::nullopt;
  return w;
}

/// The loop nest of a lane-by-lane store: `for ivs { if (in bounds and
/// mask[ivs]) store value[ivs] to ref[idx] }`.
std::optional<Window> matchWindowStore(scf::ForOp outer) {
  SmallVector<scf::ForOp> nest;
  for (scf::ForOp f = outer;;) {
    auto lb = getConstantIntValue(f.getLowerBound());
    auto step = getConstantIntValue(f.getStep());
    auto ub = getConstantIntValue(f.getUpperBound());
    if (!lb || *lb != 0 || !step || *step != 1 || !ub ||
        f.getNumRegionIterArgs() != 0)
      return std::nullopt;
    nest.push_back(f);
    Block *b = f.getBody();
    auto inner = dyn_cast<scf::ForOp>(b->front());
    if (!inner || b->getOperations().size() != 2)
      break;
    f = inner;
  }
  Block &body = *nest.back().getBody();
  scf::IfOp ifOp;
  for (Operation &op : body.without_terminator())
    if (auto i = dyn_cast<scf::IfOp>(op)) {
      if (ifOp)
        return std::nullopt;
      ifOp = i;
    }
  if (!ifOp || ifOp.getNumResults() != 0 || !ifOp.getElseRegion().empty() ||
      !pureExcept(body, ifOp))
    return std::nullopt;
  Block &thenB = ifOp.getThenRegion().front();
  auto store = dyn_cast<memref::StoreOp>(thenB.front());
  if (!store || thenB.getOperations().size() != 2)
    return std::nullopt;
  SmallVector<Value> ivs;
  for (scf::ForOp f : nest)
    ivs.push_back(f.getInductionVar());
  auto ex = store.getValue().getDefiningOp<tensor::ExtractOp>();
  if (!ex || !llvm::equal(ex.getIndices(), ivs))
    return std::nullopt;
  auto valueType = cast<RankedTensorType>(ex.getTensor().getType());
  Window w;
  w.ref = store.getMemref();
  for (auto [k, f] : llvm::enumerate(nest))
    if (*getConstantIntValue(f.getUpperBound()) != valueType.getDimSize(k))
      return std::nullopt;
  llvm::append_range(w.shape, valueType.getShape());
  for (Value i : store.getIndices()) {
    auto d = matchLaneIndex(i, ivs, &outer.getRegion());
    if (!d)
      return std::nullopt;
    w.dims.push_back(*d);
  }
  if (!boundsOnly(ifOp.getCondition(), store.getIndices(),
                  store.getMemRefType(), ivs, w.dims, &w.mask))
    return std::nullopt;
  return w;
}

/// The view of the window: the ref's view sliced at the starts, its checked
/// dimensions checked against the array's end. None when a checked
/// dimension of the ref does not end where its array does, or when the
/// induction variables do not walk the ref's dimensions in order.
std::optional<View> windowView(EmitContext &cx, const Window &w) {
  EmissionState &em = cx.emission();
  auto it = em.views.find(w.ref);
  if (it == em.views.end() || it->second.isShared())
    return std::nullopt;
  const View &ref = it->second;
  SmallVector<OpFoldResult> offsets;
  SmallVector<int64_t> divs, sizes, strides;
  llvm::SmallBitVector dropped(w.dims.size());
  OpBuilder &b = cx.builder();
  int64_t nextIv = 0;
  for (auto [d, wd] : llvm::enumerate(w.dims)) {
    if (wd.start) {
      Value s = em.scalars.lookupOrNull(wd.start);
      if (!s)
        return std::nullopt;
      offsets.push_back(s);
      divs.push_back(1);
    } else {
      offsets.push_back(b.getIndexAttr(wd.constStart));
      divs.push_back(1);
    }
    if (wd.iv < 0) {
      dropped.set(d);
      sizes.push_back(1);
      strides.push_back(1);
    } else {
      if (wd.iv != nextIv++)
        return std::nullopt;
      sizes.push_back(w.shape[wd.iv]);
      strides.push_back(wd.stride);
    }
    if (wd.checked && (ref.strides[d] != 1 ||
                       ref.shape[d] != ref.baseType.getDimSize(ref.dimOf[d])))
      return std::nullopt;
  }
  if (nextIv != static_cast<int64_t>(w.shape.size()))
    return std::nullopt;
  View v = cx.subview(ref, offsets, divs, sizes, strides, dropped);
  for (auto [d, wd] : llvm::enumerate(w.dims))
    if (wd.checked)
      v.checkHigh[ref.dimOf[d]] = true;
  return v;
}

/// `index_cast(linalg.index k)` or `linalg.index k` in a generic's body.
std::optional<int64_t> indexDimOf(Value v) {
  if (auto cast = v.getDefiningOp<arith::IndexCastOp>())
    v = cast.getIn();
  if (auto index = v.getDefiningOp<linalg::IndexOp>())
    return index.getDim();
  return std::nullopt;
}

/// `t` as an iota: a linalg.generic yielding its (cast) index along one
/// dimension with the identity output map.
std::optional<int64_t> iotaDimOf(Value t) {
  auto g = t.getDefiningOp<linalg::GenericOp>();
  if (!g || g->getNumResults() != 1 || g.getNumReductionLoops() != 0 ||
      !g.getIndexingMapsArray().back().isIdentity())
    return std::nullopt;
  return indexDimOf(g.getRegion().front().getTerminator()->getOperand(0));
}

/// The value an operand of `g`'s body stands for: the block argument's
/// input tensor, else the value itself.
Value inputOf(linalg::GenericOp g, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != &g.getRegion().front() ||
      arg.getArgNumber() >= g.getNumDpsInputs() ||
      !g.getMatchingIndexingMap(g.getDpsInputOperand(arg.getArgNumber()))
           .isIdentity())
    return v;
  return g.getDpsInputs()[arg.getArgNumber()];
}

/// Whether `mask` is `iota(k) < N` with every lane inside the ref below N:
/// then it only repeats the bounds check the view makes.
bool maskRepeatsBounds(const Window &w, MemRefType refType) {
  auto g = w.mask.getDefiningOp<linalg::GenericOp>();
  if (!g || g->getNumResults() != 1 || g.getNumReductionLoops() != 0 ||
      !g.getIndexingMapsArray().back().isIdentity())
    return false;
  Block &body = g.getRegion().front();
  auto cmp = body.getTerminator()->getOperand(0).getDefiningOp<arith::CmpIOp>();
  if (!cmp || (cmp.getPredicate() != arith::CmpIPredicate::slt &&
               cmp.getPredicate() != arith::CmpIPredicate::ult))
    return false;
  Value lhs = inputOf(g, cmp.getLhs()), rhs = inputOf(g, cmp.getRhs());
  std::optional<int64_t> k =
      lhs == cmp.getLhs() ? indexDimOf(lhs) : iotaDimOf(lhs);
  std::optional<int64_t> n;
  if (auto c = getConstantIntValue(rhs))
    n = *c;
  else if (DenseIntElementsAttr splat;
           matchPattern(rhs, m_Constant(&splat)) && splat.isSplat())
    n = splat.getSplatValue<APInt>().getSExtValue();
  if (!k || !n)
    return false;
  for (auto [d, wd] : llvm::enumerate(w.dims)) {
    if (wd.iv != *k)
      continue;
    if (wd.start)
      return false;
    // The lanes inside the ref: iv < ceil((dim - start) / stride), and
    // never more than the window's.
    int64_t inside = w.shape[*k];
    if (wd.checked)
      inside = std::min<int64_t>(
          inside, std::max<int64_t>(
                      0, llvm::divideCeil(refType.getDimSize(d) - wd.constStart,
                                          wd.stride)));
    return *n >= inside;
  }
  return false;
}

} // namespace

FailureOr<bool> mlir::pallas::gpu::emitWindowLoad(EmitContext &cx,
                                                  tensor::GenerateOp gen) {
  std::optional<Window> w = matchWindowLoad(gen);
  std::optional<View> view = w ? windowView(cx, *w) : std::nullopt;
  if (!view)
    return false;
  // The pallas.load's cache hint, on the lane's read (PallasToLinalg).
  StringRef evict;
  gen.walk([&](memref::LoadOp load) {
    if (StringRef policy = evictionPolicy(load); !policy.empty())
      evict = policy;
  });
  if (failed(loadAs(cx, gen.getResult(), *view,
                    cx.layoutOrDefault(gen.getResult()), evict)))
    return failure();
  return true;
}

FailureOr<bool> mlir::pallas::gpu::emitWindowStore(EmitContext &cx,
                                                   scf::ForOp loop) {
  std::optional<Window> w = matchWindowStore(loop);
  std::optional<View> view = w ? windowView(cx, *w) : std::nullopt;
  if (!view)
    return false;
  Block &body = *loop.getBody();
  Operation *inner = &body.front();
  while (auto f = dyn_cast<scf::ForOp>(inner))
    inner = &f.getBody()->front();
  Value value;
  inner->getBlock()->walk([&](memref::StoreOp st) {
    value = st.getValue().getDefiningOp<tensor::ExtractOp>().getTensor();
  });
  int id = cx.layoutOrDefault(value);
  auto regs = cx.get(value, id);
  if (failed(regs))
    return failure();
  SmallVector<Value> maskRegs;
  if (w->mask && !maskRepeatsBounds(*w, cast<MemRefType>(w->ref.getType()))) {
    auto m = cx.get(w->mask, id);
    if (failed(m))
      return failure();
    maskRegs = *m;
  }
  cx.beforeAccess(*view, id, true);
  if (failed(cx.store(*view, id, *regs, maskRegs)))
    return failure();
  return true;
}
