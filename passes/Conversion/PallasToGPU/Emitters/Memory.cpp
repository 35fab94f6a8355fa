//===- Memory.cpp - views, distributed loads/stores, cp.async ---*- C++ -*-===//
//
// A distributed load or store walks the registers of a layout in groups: a
// group is a run of registers holding consecutive elements along the
// innermost dimension of a contiguous memref dimension, read or written with
// one `vector.load`/`vector.store` carrying the alignment the group's start
// is proven to have (the base pointer is assumed 16-byte aligned, as the
// manifest states). Bounds checks at array edges are per group when the
// group cannot straddle the edge, else per element: reads load from a safe
// index and select the uninitialized value, writes are predicated.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/Distribute.h"
#include "passes/Utils/InterpretMode.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::gpu;

namespace {

constexpr int64_t kLargeDivisor = int64_t(1) << 30;

int64_t lowBit(int64_t v) {
  if (v == 0)
    return kLargeDivisor;
  uint64_t u = static_cast<uint64_t>(v);
  return static_cast<int64_t>(std::min<uint64_t>(u & (~u + 1), kLargeDivisor));
}

int64_t byteSize(Type t) {
  if (t.isIndex())
    return 8;
  if (t.isInteger(1))
    return 1;
  return t.getIntOrFloatBitWidth() / 8;
}

} // namespace

int64_t mlir::pallas::gpu::affineDivisor(AffineExpr e,
                                         ArrayRef<int64_t> dimDivisors) {
  if (auto c = dyn_cast<AffineConstantExpr>(e))
    return lowBit(c.getValue());
  if (auto d = dyn_cast<AffineDimExpr>(e))
    return d.getPosition() < dimDivisors.size()
               ? dimDivisors[d.getPosition()]
               : 1;
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin)
    return 1;
  int64_t l = affineDivisor(bin.getLHS(), dimDivisors);
  int64_t r = affineDivisor(bin.getRHS(), dimDivisors);
  switch (e.getKind()) {
  case AffineExprKind::Add:
    return std::min(l, r);
  case AffineExprKind::Mul:
    return std::min<int64_t>(l * r, kLargeDivisor);
  default:
    return 1;
  }
}

int64_t Distributor::divisibility(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return 1;
  if (auto c = dyn_cast<arith::ConstantOp>(def)) {
    if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
      return lowBit(i.getInt());
    return 1;
  }
  if (isa<arith::MulIOp>(def))
    return std::min<int64_t>(divisibility(def->getOperand(0)) *
                                 divisibility(def->getOperand(1)),
                             kLargeDivisor);
  if (isa<arith::AddIOp, arith::SubIOp, arith::MaxSIOp, arith::MinSIOp,
          arith::MaxUIOp, arith::MinUIOp>(def))
    return std::min(divisibility(def->getOperand(0)),
                    divisibility(def->getOperand(1)));
  if (isa<arith::SelectOp>(def))
    return std::min(divisibility(def->getOperand(1)),
                    divisibility(def->getOperand(2)));
  if (isa<arith::AndIOp>(def)) {
    int64_t d = 1;
    for (Value o : def->getOperands())
      if (auto c = getConstantIntValue(o))
        d = std::max(d, lowBit(*c));
    return std::max(d, std::max(divisibility(def->getOperand(0)),
                                divisibility(def->getOperand(1))));
  }
  if (isa<arith::ShLIOp>(def)) {
    if (auto c = getConstantIntValue(def->getOperand(1));
        c && *c >= 0 && *c < 30)
      return std::min<int64_t>(divisibility(def->getOperand(0)) << *c,
                               kLargeDivisor);
    return divisibility(def->getOperand(0));
  }
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
          arith::ExtUIOp>(def))
    return divisibility(def->getOperand(0));
  return 1;
}

std::optional<std::pair<int64_t, int64_t>> Distributor::rangeOf(Value v,
                                                                int depth) {
  using Range = std::pair<int64_t, int64_t>;
  constexpr int64_t kLimit = int64_t(1) << 31;
  auto bounded = [&](int64_t lo, int64_t hi) -> std::optional<Range> {
    if (lo > hi || lo < -kLimit || hi >= kLimit)
      return std::nullopt;
    return Range{lo, hi};
  };
  if (auto c = getConstantIntValue(v))
    return bounded(*c, *c);
  if (v == kc.tid)
    return Range{0, kc.numWarps * kc.threadsPerWarp() - 1};
  Operation *def = v.getDefiningOp();
  if (!def || depth > 16)
    return std::nullopt;
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
          arith::ExtUIOp>(def)) {
    auto r = rangeOf(def->getOperand(0), depth + 1);
    // A non-negative value below 2^31 keeps its value in every width.
    if (r && (r->first >= 0 || isa<arith::ExtSIOp, arith::IndexCastOp>(def)))
      return r;
    return std::nullopt;
  }
  if (def->getNumOperands() != 2 && !isa<arith::SelectOp>(def))
    return std::nullopt;
  if (auto sel = dyn_cast<arith::SelectOp>(def)) {
    auto x = rangeOf(sel.getTrueValue(), depth + 1);
    auto y = rangeOf(sel.getFalseValue(), depth + 1);
    if (!x || !y)
      return std::nullopt;
    return Range{std::min(x->first, y->first), std::max(x->second, y->second)};
  }
  auto x = rangeOf(def->getOperand(0), depth + 1);
  auto y = rangeOf(def->getOperand(1), depth + 1);
  auto yc = getConstantIntValue(def->getOperand(1));
  bool nonNeg = x && y && x->first >= 0 && y->first >= 0;
  if (isa<arith::AndIOp>(def) && x && x->first >= 0 && yc && *yc >= 0)
    return Range{0, std::min(x->second, *yc)};
  if (!x || !y)
    return std::nullopt;
  if (isa<arith::AddIOp>(def))
    return bounded(x->first + y->first, x->second + y->second);
  if (isa<arith::MulIOp>(def) && nonNeg)
    return bounded(x->first * y->first, x->second * y->second);
  if (isa<arith::ShRUIOp>(def) && nonNeg && yc && *yc < 32)
    return Range{x->first >> *yc, x->second >> *yc};
  if (isa<arith::ShLIOp>(def) && nonNeg && yc && *yc < 32)
    return bounded(x->first << *yc, x->second << *yc);
  // a | b and a ^ b of non-negative values: at most the all-ones value of
  // the larger's width (a | b is also at most a + b and at least each).
  if (isa<arith::OrIOp, arith::XOrIOp>(def) && nonNeg) {
    int64_t ones =
        int64_t(llvm::NextPowerOf2(std::max(x->second, y->second))) - 1;
    if (isa<arith::OrIOp>(def))
      return bounded(std::max(x->first, y->first),
                     std::min(ones, x->second + y->second));
    return bounded(0, ones);
  }
  if (isa<arith::MaxSIOp>(def))
    return Range{std::max(x->first, y->first), std::max(x->second, y->second)};
  if (isa<arith::MinSIOp>(def))
    return Range{std::min(x->first, y->first), std::min(x->second, y->second)};
  return std::nullopt;
}

Value Distributor::foldByRange(arith::CmpIOp cmp) {
  auto x = rangeOf(cmp.getLhs()), y = rangeOf(cmp.getRhs());
  if (!x || !y)
    return cmp;
  using P = arith::CmpIPredicate;
  P p = cmp.getPredicate();
  bool unsignedPred = p == P::ult || p == P::ule || p == P::ugt || p == P::uge;
  if (unsignedPred && (x->first < 0 || y->first < 0))
    return cmp;
  std::optional<bool> r;
  switch (p) {
  case P::slt:
  case P::ult:
    if (x->second < y->first)
      r = true;
    else if (x->first >= y->second)
      r = false;
    break;
  case P::sle:
  case P::ule:
    if (x->second <= y->first)
      r = true;
    else if (x->first > y->second)
      r = false;
    break;
  case P::sgt:
  case P::ugt:
    if (x->first > y->second)
      r = true;
    else if (x->second <= y->first)
      r = false;
    break;
  case P::sge:
  case P::uge:
    if (x->first >= y->second)
      r = true;
    else if (x->second < y->first)
      r = false;
    break;
  case P::eq:
  case P::ne:
    if (x->second < y->first || x->first > y->second)
      r = p == P::ne;
    else if (x->first == x->second && y->first == y->second)
      r = (x->first == y->first) == (p == P::eq);
    break;
  }
  if (!r)
    return cmp;
  return arith::ConstantIntOp::create(b, cmp.getLoc(), *r, 1);
}

Value Distributor::uninitialized(Type type) {
  return uninitializedValue(b, kc.loc, type);
}

Value Distributor::rootOfSnapshot(Value alloc) {
  for (Operation *user : alloc.getUsers())
    if (auto copy = dyn_cast<linalg::CopyOp>(user);
        copy && copy.getOutputs()[0] == alloc)
      return copy.getInputs()[0];
  return Value();
}

Value mlir::pallas::gpu::rootMemref(Value memref) {
  while (Operation *def = memref.getDefiningOp()) {
    if (auto sv = dyn_cast<memref::SubViewOp>(def))
      memref = sv.getSource();
    else if (isa<UnrealizedConversionCastOp, memref::CastOp>(def) &&
             def->getNumOperands() == 1)
      memref = def->getOperand(0);
    else
      break;
  }
  return memref;
}

//===----------------------------------------------------------------------===//
// Views
//===----------------------------------------------------------------------===//

View Distributor::subview(const View &view, memref::SubViewOp sv) {
  SmallVector<OpFoldResult> offsets;
  SmallVector<int64_t> divs;
  for (OpFoldResult o : sv.getMixedOffsets()) {
    if (auto v = dyn_cast<Value>(o)) {
      offsets.push_back(scalars.lookup(v));
      divs.push_back(divisibility(v));
    } else {
      offsets.push_back(o);
      divs.push_back(1);
    }
  }
  return subview(view, offsets, divs, sv.getStaticSizes(),
                 sv.getStaticStrides(), sv.getDroppedDims());
}

View Distributor::subview(const View &view, ArrayRef<OpFoldResult> offsets,
                          ArrayRef<int64_t> offsetDivs,
                          ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides,
                          const llvm::SmallBitVector &dropped) {
  View out = view;
  out.dimOf.clear();
  out.strides.clear();
  out.shape.clear();
  for (int64_t d = 0; d < view.rank(); ++d) {
    int64_t base = view.dimOf[d];
    OpFoldResult off = offsets[d];
    int64_t div;
    Value offValue;
    if (auto c = getConstantIntValue(off)) {
      div = lowBit(*c * view.strides[d]);
      if (*c != 0)
        offValue = idx(*c * view.strides[d]);
    } else {
      Value v = cast<Value>(off);
      div = offsetDivs.empty() ? 1 : offsetDivs[d];
      div = std::min<int64_t>(div * lowBit(view.strides[d]), kLargeDivisor);
      offValue = view.strides[d] == 1
                     ? v
                     : arith::MulIOp::create(b, kc.loc, v,
                                             idx(view.strides[d]))
                           .getResult();
    }
    if (offValue)
      out.offsets[base] =
          arith::AddIOp::create(b, kc.loc, out.offsets[base], offValue);
    out.offsetDiv[base] = std::min(out.offsetDiv[base], div);
    if (dropped.size() > static_cast<size_t>(d) && dropped.test(d))
      continue;
    out.dimOf.push_back(base);
    out.strides.push_back(view.strides[d] * strides[d]);
    out.shape.push_back(sizes[d]);
  }
  return out;
}

SmallVector<Value> Distributor::baseIndices(const View &view,
                                            ArrayRef<Value> c) {
  SmallVector<Value> idxs(view.offsets);
  for (int64_t d = 0; d < view.rank(); ++d) {
    Value term = c[d];
    if (view.strides[d] != 1)
      term = arith::MulIOp::create(b, kc.loc, term, idx(view.strides[d]));
    int64_t base = view.dimOf[d];
    if (auto zero = getConstantIntValue(idxs[base]); zero && *zero == 0)
      idxs[base] = term;
    else
      idxs[base] = arith::AddIOp::create(b, kc.loc, idxs[base], term);
  }
  return idxs;
}

Value Distributor::inBounds(const View &view, ArrayRef<Value> idxs) {
  Value ok;
  auto andWith = [&](Value c) {
    ok = ok ? arith::AndIOp::create(b, kc.loc, ok, c).getResult() : c;
  };
  for (size_t d = 0; d < idxs.size(); ++d) {
    if (view.checkLow[d])
      andWith(arith::CmpIOp::create(b, kc.loc, arith::CmpIPredicate::sge,
                                    idxs[d], idx(0)));
    if (view.checkHigh[d] && view.isDynamicDim(d)) {
      andWith(arith::CmpIOp::create(b, kc.loc, arith::CmpIPredicate::slt,
                                    idxs[d], view.dynSizes[d]));
    } else if (view.checkHigh[d]) {
      // An index proven below the end needs no check.
      if (auto r = rangeOf(idxs[d]);
          r && r->second < view.baseType.getDimSize(d))
        continue;
      andWith(arith::CmpIOp::create(
          b, kc.loc, arith::CmpIPredicate::slt, idxs[d],
          idx(view.baseType.getDimSize(d))));
    }
  }
  return ok;
}

namespace {

/// How many consecutive registers one access covers: the leading register
/// bases must walk the view dimension that is the base's innermost (unit
/// stride), and the group's start must be aligned for every thread.
int64_t vectorWidth(const View &view, const Layout &l) {
  Type elem = view.elementType();
  if (elem.isInteger(1) || elem.isIndex() || view.rank() == 0)
    return 1;
  int64_t bytes = byteSize(elem);
  if (bytes == 0)
    return 1;
  int64_t baseRank = view.baseType.getRank();
  int64_t cdim = -1;
  for (int64_t d = 0; d < view.rank(); ++d)
    if (view.dimOf[d] == baseRank - 1 && view.strides[d] == 1)
      cdim = d;
  if (cdim < 0)
    return 1;
  int64_t shift = l.shift(cdim);
  int64_t k = 0;
  while (k < static_cast<int64_t>(l.regs.size()) &&
         l.regs[k] == (uint64_t(1) << (k + shift)) &&
         (int64_t(1) << k) < view.shape[cdim])
    ++k;
  int64_t v = std::min<int64_t>(int64_t(1) << k, 16 / bytes);
  SmallVector<int64_t> baseShape;
  for (int64_t d = 0; d < baseRank; ++d)
    baseShape.push_back(view.sizeForDivisibility(d));
  for (; v > 1; v /= 2) {
    if (view.offsetDiv[baseRank - 1] % v)
      continue;
    bool ok = true;
    int64_t pitch = 1;
    for (int64_t d = baseRank - 1; d > 0; --d) {
      pitch *= baseShape[d];
      if (pitch % v)
        ok = false;
    }
    for (uint64_t basis : llvm::concat<const uint64_t>(l.lanes, l.warps))
      if (l.coord(basis, cdim) % v)
        ok = false;
    for (size_t i = llvm::Log2_64(v); i < l.regs.size(); ++i)
      if (l.coord(l.regs[i], cdim) % v)
        ok = false;
    if ((view.checkHigh[baseRank - 1] || view.checkLow[baseRank - 1]) &&
        baseShape[baseRank - 1] % v)
      ok = false;
    if (ok)
      break;
  }
  return v;
}

} // namespace

int64_t Distributor::groupWidth(const View &view, int id) {
  return vectorWidth(view, layout(id));
}

namespace {
/// Element addresses as one per-thread base plus a constant per register:
/// `base[threadBase + constant(r)]` on the flattened memref, which LLVM
/// turns into one pointer register and immediate offsets.
struct FlatAccess {
  Value flat;        ///< 1-D memref, null when not applicable
  Value threadBase;  ///< index
  SmallVector<int64_t> dimPitch; ///< per view dim, in elements
};
} // namespace

/// Whether flatAccess applies: thread and register parts of every
/// coordinate add (disjoint bits).
static bool flatFeasible(const Layout &l, const View &view) {
  if (view.baseType.getRank() == 0)
    return false;
  // Pitches are constants: a dynamic size only in the outermost dimension.
  for (int64_t d = 1; d < view.baseType.getRank(); ++d)
    if (view.isDynamicDim(d))
      return false;
  for (int64_t dim = 0; dim < l.rank(); ++dim) {
    uint64_t threadMask = 0, regMask = 0;
    for (uint64_t basis : llvm::concat<const uint64_t>(l.lanes, l.warps))
      threadMask |= l.coord(basis, dim);
    for (uint64_t basis : l.regs)
      regMask |= l.coord(basis, dim);
    if (threadMask & regMask)
      return false;
  }
  return true;
}

static FlatAccess flatAccess(Distributor &d, const View &view, int id) {
  FlatAccess fa;
  const Layout &l = d.layout(id);
  int64_t baseRank = view.baseType.getRank();
  if (!flatFeasible(l, view))
    return fa;
  ArrayRef<int64_t> shape = view.baseType.getShape();
  SmallVector<int64_t> pitch(baseRank, 1);
  for (int64_t b = baseRank - 1; b > 0; --b)
    pitch[b - 1] = pitch[b] * shape[b];
  OpBuilder &b = d.builder();
  Location loc = d.context().loc;
  bool mayBeNegative = llvm::any_of(view.checkLow, [](bool c) { return c; });
  auto flags = arith::IntegerOverflowFlagsAttr::get(
      b.getContext(), mayBeNegative ? arith::IntegerOverflowFlags::none
                                    : arith::IntegerOverflowFlags::nsw |
                                          arith::IntegerOverflowFlags::nuw);
  auto add = [&](Value x, Value y) -> Value {
    if (!x)
      return y;
    return arith::AddIOp::create(b, loc, x, y, flags);
  };
  auto mul = [&](Value x, int64_t c) -> Value {
    if (c == 1)
      return x;
    return arith::MulIOp::create(b, loc, x, d.idx(c), flags);
  };
  Value tb;
  for (int64_t bd = 0; bd < baseRank; ++bd)
    if (auto c = getConstantIntValue(view.offsets[bd]); !c || *c != 0)
      tb = add(tb, mul(view.offsets[bd], pitch[bd]));
  for (int64_t dim = 0; dim < view.rank(); ++dim) {
    int64_t p = view.strides[dim] * pitch[view.dimOf[dim]];
    fa.dimPitch.push_back(p);
    Value tc = d.threadCoord(id, dim);
    if (auto c = getConstantIntValue(tc); c && *c == 0)
      continue;
    tb = add(tb, mul(tc, p));
  }
  fa.threadBase = tb ? tb : d.idx(0);
  if (baseRank == 1) {
    fa.flat = view.base;
  } else {
    SmallVector<ReassociationIndices> all(1);
    for (int64_t bd = 0; bd < baseRank; ++bd)
      all[0].push_back(bd);
    fa.flat = memref::CollapseShapeOp::create(b, loc, view.base, all);
  }
  return fa;
}

static Value flatIndex(Distributor &d, const FlatAccess &fa, int id,
                       int64_t reg) {
  const Layout &l = d.layout(id);
  uint64_t lin = l.regLinear(reg);
  int64_t c = 0;
  for (int64_t dim = 0; dim < l.rank(); ++dim)
    c += l.coord(lin, dim) * fa.dimPitch[dim];
  if (c == 0)
    return fa.threadBase;
  return arith::AddIOp::create(
      d.builder(), d.context().loc, fa.threadBase, d.idx(c),
      arith::IntegerOverflowFlags::nsw | arith::IntegerOverflowFlags::nuw);
}

/// The location of a global load that carries the cache hint `policy`:
/// `loc` fused with the metadata "pallas.eviction_policy=POLICY". Locations
/// survive the conversions to the LLVM dialect, where NVGPUToNVVM.cpp
/// prints such an llvm.load as a hinted `ld.global` (and restores `loc`);
/// the GPU emulator runs it as the plain load it is.
static Location hintLoc(Location loc, StringRef policy) {
  return FusedLoc::get(
      {loc},
      StringAttr::get(loc.getContext(),
                      ("pallas.eviction_policy=" + policy).str()),
      loc.getContext());
}

/// Whether a load of `width` elements of `elem` from `view` takes the
/// cache hint `policy`: NVIDIA targets, global memory, a 2-, 4-, 8- or
/// 16-byte access of 1-, 2-, 4- or 8-byte elements ("evict_normal" is the
/// default and needs no hint).
static bool takesHint(const KernelContext &kc, const View &view, Type elem,
                      int64_t width, StringRef policy) {
  if (policy.empty() || policy == "evict_normal" || !kc.target->isNvidia() ||
      view.isShared() || !elem.isIntOrFloat())
    return false;
  int64_t bits = elem.getIntOrFloatBitWidth();
  int64_t total = bits * width;
  return bits % 8 == 0 &&
         (total == 16 || total == 32 || total == 64 || total == 128);
}

FailureOr<SmallVector<Value>> Distributor::load(const View &view, int id,
                                                ArrayRef<int64_t> subset,
                                                StringRef evictionPolicy) {
  const Layout &l = layout(id);
  Type elem = view.elementType();
  int64_t v = vectorWidth(view, l);
  SmallVector<Value> regs(l.numRegs());
  SmallVector<bool> wanted(l.numRegs(), subset.empty());
  for (int64_t r : subset)
    wanted[r] = true;
  int64_t align = v * byteSize(elem);
  FlatAccess fa = flatAccess(*this, view, id);
  bool checks = view.needsChecks();
  for (int64_t r = 0; r < l.numRegs(); ++r) {
    if (!wanted[r] || regs[r])
      continue;
    int64_t width = v;
    if (r % v != 0)
      width = 1;
    for (int64_t j = 1; j < width; ++j)
      if (!wanted[r + j])
        width = 1;
    Value ok;
    SmallVector<Value> bi;
    if (checks || !fa.flat) {
      bi = baseIndices(view, coords(id, r));
      ok = inBounds(view, bi);
    }
    Value memref = view.base;
    SmallVector<Value> indices;
    if (fa.flat) {
      memref = fa.flat;
      Value i = flatIndex(*this, fa, id, r);
      if (ok)
        i = arith::SelectOp::create(b, kc.loc, ok, i, idx(0));
      indices.push_back(i);
    } else {
      if (ok)
        for (size_t dd = 0; dd < bi.size(); ++dd)
          if (view.checkLow[dd] || view.checkHigh[dd])
            bi[dd] = arith::SelectOp::create(b, kc.loc, ok, bi[dd], idx(0));
      indices = bi;
    }
    SmallVector<Value> values;
    Location loadLoc = takesHint(kc, view, elem, width, evictionPolicy)
                           ? hintLoc(kc.loc, evictionPolicy)
                           : kc.loc;
    if (width > 1) {
      auto vt = VectorType::get({width}, elem);
      Value vec = vector::LoadOp::create(b, loadLoc, vt, memref, indices,
                                         /*nontemporal=*/false,
                                         llvm::MaybeAlign(align));
      for (int64_t j = 0; j < width; ++j)
        values.push_back(vector::ExtractOp::create(b, kc.loc, vec, j));
    } else {
      values.push_back(memref::LoadOp::create(b, loadLoc, memref, indices));
    }
    for (int64_t j = 0; j < width; ++j) {
      Value x = values[j];
      if (ok)
        x = arith::SelectOp::create(b, kc.loc, ok, x, uninitialized(elem));
      regs[r + j] = x;
    }
  }
  return regs;
}

LogicalResult Distributor::store(const View &view, int id,
                                 ArrayRef<Value> regs, ArrayRef<Value> mask,
                                 ArrayRef<int64_t> subset) {
  const Layout &l = layout(id);
  Type elem = view.elementType();
  int64_t v = vectorWidth(view, l);
  int64_t align = v * byteSize(elem);
  Value first = primary(id);
  SmallVector<bool> wanted(l.numRegs(), subset.empty());
  for (int64_t r : subset)
    wanted[r] = true;
  FlatAccess fa = flatAccess(*this, view, id);
  bool checks = view.needsChecks();
  for (int64_t r = 0; r < l.numRegs(); r += v) {
    if (!wanted[r])
      continue;
    Value pred;
    SmallVector<Value> bi;
    if (checks || !fa.flat) {
      bi = baseIndices(view, coords(id, r));
      pred = inBounds(view, bi);
    }
    auto andWith = [&](Value x) {
      if (x)
        pred = pred ? arith::AndIOp::create(b, kc.loc, pred, x).getResult()
                    : x;
    };
    andWith(first);
    if (!mask.empty() && v == 1)
      andWith(mask[r]);
    Value memref = view.base;
    SmallVector<Value> indices = bi;
    if (fa.flat) {
      memref = fa.flat;
      indices = {flatIndex(*this, fa, id, r)};
    }
    OpBuilder::InsertionGuard guard(b);
    if (pred) {
      auto ifOp = scf::IfOp::create(b, kc.loc, pred, /*withElse=*/false);
      b.setInsertionPointToStart(ifOp.thenBlock());
    }
    if (v > 1 && !mask.empty()) {
      // A group can't straddle an array edge (vectorWidth), so `pred` covers
      // all of it: one vector store when every lane of the group is on, else
      // one predicated scalar store per lane that is; nothing is reloaded.
      Value all = mask[r];
      for (int64_t j = 1; j < v; ++j)
        all = arith::AndIOp::create(b, kc.loc, all, mask[r + j]);
      auto allIf = scf::IfOp::create(b, kc.loc, all, /*withElse=*/true);
      b.setInsertionPointToStart(allIf.thenBlock());
      auto vt = VectorType::get({v}, elem);
      Value vec = vector::FromElementsOp::create(
          b, kc.loc, vt, SmallVector<Value>(regs.slice(r, v)));
      vector::StoreOp::create(b, kc.loc, vec, memref, indices,
                              /*nontemporal=*/false, llvm::MaybeAlign(align));
      b.setInsertionPointToStart(allIf.elseBlock());
      for (int64_t j = 0; j < v; ++j) {
        OpBuilder::InsertionGuard lane(b);
        auto laneIf = scf::IfOp::create(b, kc.loc, mask[r + j],
                                        /*withElse=*/false);
        b.setInsertionPointToStart(laneIf.thenBlock());
        SmallVector<Value> li;
        if (fa.flat) {
          li = {flatIndex(*this, fa, id, r + j)};
        } else {
          li = baseIndices(view, coords(id, r + j));
        }
        memref::StoreOp::create(b, kc.loc, regs[r + j], memref, li);
      }
    } else if (v > 1) {
      auto vt = VectorType::get({v}, elem);
      Value vec = vector::FromElementsOp::create(
          b, kc.loc, vt, SmallVector<Value>(regs.slice(r, v)));
      vector::StoreOp::create(b, kc.loc, vec, memref, indices,
                              /*nontemporal=*/false, llvm::MaybeAlign(align));
    } else {
      memref::StoreOp::create(b, kc.loc, regs[r], memref, indices);
    }
  }
  return success();
}

int64_t Distributor::asyncCopyWidth(const View &src, int srcId,
                                    const View &dst, int dstId) {
  if (!kc.target->hasCpAsync || src.isShared() || !dst.isShared() ||
      src.needsChecks() ||
      dst.needsChecks() || src.elementType() != dst.elementType())
    return 0;
  const Layout &ls = layout(srcId), &ld = layout(dstId);
  if (ls.numRegs() != ld.numRegs() || !flatFeasible(ls, src) ||
      !flatFeasible(ld, dst))
    return 0;
  int64_t w = std::min(vectorWidth(src, ls), vectorWidth(dst, ld));
  int64_t bytes = w * byteSize(src.elementType());
  return (bytes == 4 || bytes == 8 || bytes == 16) ? w : 0;
}

LogicalResult Distributor::copyAsync(const View &src, int srcId,
                                     const View &dst, int dstId,
                                     int64_t width) {
  FlatAccess fs = flatAccess(*this, src, srcId);
  FlatAccess fd = flatAccess(*this, dst, dstId);
  if (!fs.flat || !fd.flat)
    return failure();
  Value first = primary(srcId);
  bool bypassL1 = width * byteSize(src.elementType()) == 16;
  auto token = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  for (int64_t r = 0; r < layout(srcId).numRegs(); r += width) {
    Value si = flatIndex(*this, fs, srcId, r);
    Value di = flatIndex(*this, fd, dstId, r);
    OpBuilder::InsertionGuard guard(b);
    if (first) {
      auto ifOp = scf::IfOp::create(b, kc.loc, first, /*withElse=*/false);
      b.setInsertionPointToStart(ifOp.thenBlock());
    }
    nvgpu::DeviceAsyncCopyOp::create(
        b, kc.loc, token, fd.flat, ValueRange{di}, fs.flat, ValueRange{si},
        b.getIndexAttr(width), /*srcElements=*/Value(),
        bypassL1 ? b.getUnitAttr() : UnitAttr());
  }
  return success();
}
