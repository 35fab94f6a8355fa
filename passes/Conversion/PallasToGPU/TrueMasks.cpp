//===- TrueMasks.cpp - pallas-to-gpu: masked loads whose mask is all true -===//
//
// JAX masks a block's head dimension with `jnp.arange(64) < 64` even when
// the dimension fills the block (attention.mha's q and k loads:
// `pl.load(k_ref, ..., mask=mask, other=0.)`). pallas-to-linalg writes such
// a load as the load followed by an elementwise select of it against the
// `other` constant. The mask is true for every element, so the select is
// the loaded block itself; left in place it hides the load from the
// staging planner (a dot operand that is a select is computed, not
// streamed), and K is stored through registers instead of cp.async.
//
// Here the select of a loaded value against a constant under a mask
// proven all true by integer intervals (an iota's [0, n), a splat
// constant, broadcasts and copies of them, compares of those) is replaced
// by the loaded value. Selects against an output's old contents (masked
// stores) stay: EmitMemory turns those into predicated stores.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/KernelSkeleton.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::pallas;

namespace {

/// Every element of an integer tensor lies in [lo, hi] (signed).
struct Interval {
  int64_t lo = 0, hi = 0;
};

/// The one op of a linalg.generic's body before its yield, or null.
Operation *soleBodyOp(linalg::GenericOp g) {
  Block &body = g.getRegion().front();
  if (body.getOperations().size() != 2)
    return nullptr;
  return &body.front();
}

bool allIdentity(linalg::GenericOp g) {
  return llvm::all_of(g.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); });
}

std::optional<Interval> intervalOf(Value v, int depth = 0) {
  if (depth > 8)
    return std::nullopt;
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.getElementType().isSignlessInteger() ||
      !type.hasStaticShape())
    return std::nullopt;
  DenseIntElementsAttr splat;
  if (matchPattern(v, m_Constant(&splat)) && splat.isSplat()) {
    APInt c = splat.getSplatValue<APInt>();
    int64_t x = c.getBitWidth() == 1 ? int64_t(c.getZExtValue())
                                     : c.getSExtValue();
    return Interval{x, x};
  }
  auto g = v.getDefiningOp<linalg::GenericOp>();
  if (!g || g->getNumResults() != 1 || g.getNumReductionLoops() != 0)
    return std::nullopt;
  Block &body = g.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Value y = yield.getOperand(0);
  // A broadcast or copy: the input's elements.
  if (auto arg = dyn_cast<BlockArgument>(y)) {
    if (arg.getOwner() != &body || arg.getArgNumber() >= g.getNumDpsInputs())
      return std::nullopt;
    return intervalOf(g.getDpsInputs()[arg.getArgNumber()], depth + 1);
  }
  // An iota: index_cast(linalg.index d) over an extent n: [0, n).
  if (auto cast = y.getDefiningOp<arith::IndexCastOp>()) {
    auto index = cast.getIn().getDefiningOp<linalg::IndexOp>();
    if (!index || g.getNumDpsInputs() != 0 ||
        body.getOperations().size() != 3 || !allIdentity(g))
      return std::nullopt;
    int64_t n = type.getDimSize(index.getDim());
    unsigned bits = type.getElementTypeBitWidth();
    // The largest index must fit the element type (no wrap).
    if (n <= 0 || (bits < 64 && n - 1 > (int64_t(1) << (bits - 1)) - 1))
      return std::nullopt;
    return Interval{0, n - 1};
  }
  // A compare of two intervals that decides every element.
  auto cmp = y.getDefiningOp<arith::CmpIOp>();
  if (!cmp || soleBodyOp(g) != cmp || !allIdentity(g) ||
      g.getNumDpsInputs() != 2)
    return std::nullopt;
  auto lhsArg = dyn_cast<BlockArgument>(cmp.getLhs());
  auto rhsArg = dyn_cast<BlockArgument>(cmp.getRhs());
  if (!lhsArg || !rhsArg || lhsArg.getOwner() != &body ||
      rhsArg.getOwner() != &body || lhsArg.getArgNumber() >= 2 ||
      rhsArg.getArgNumber() >= 2)
    return std::nullopt;
  std::optional<Interval> a =
      intervalOf(g.getDpsInputs()[lhsArg.getArgNumber()], depth + 1);
  std::optional<Interval> b =
      intervalOf(g.getDpsInputs()[rhsArg.getArgNumber()], depth + 1);
  if (!a || !b)
    return std::nullopt;
  using P = arith::CmpIPredicate;
  P pred = cmp.getPredicate();
  bool lt = pred == P::slt || pred == P::ult;
  bool le = pred == P::sle || pred == P::ule;
  bool gt = pred == P::sgt || pred == P::ugt;
  bool ge = pred == P::sge || pred == P::uge;
  if (!lt && !le && !gt && !ge)
    return std::nullopt;
  // Unsigned predicates decide as the signed ones on non-negative values.
  bool isUnsigned = pred == P::ult || pred == P::ule || pred == P::ugt ||
                    pred == P::uge;
  if (isUnsigned && (a->lo < 0 || b->lo < 0))
    return std::nullopt;
  // l < r or l <= r for every l in `l` and r in `r` (a > b is b < a):
  // always, never, or undecided.
  const Interval &l = gt || ge ? *b : *a, &r = gt || ge ? *a : *b;
  bool strict = lt || gt;
  if (strict ? l.hi < r.lo : l.hi <= r.lo)
    return Interval{1, 1};
  if (strict ? l.lo >= r.hi : l.lo > r.hi)
    return Interval{0, 0};
  return std::nullopt;
}

/// `select(mask, x, constant)` elementwise, with x loaded (not computed):
/// x when the mask is all true.
Value foldedSelect(linalg::GenericOp g) {
  auto select = dyn_cast_or_null<arith::SelectOp>(soleBodyOp(g));
  if (!select || g->getNumResults() != 1 || g.getNumDpsInputs() != 3 ||
      !allIdentity(g) || g.getNumReductionLoops() != 0)
    return Value();
  Block &body = g.getRegion().front();
  auto argNo = [&](Value v) -> int {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner() == &body ? int(arg.getArgNumber()) : -1;
  };
  int m = argNo(select.getCondition()), t = argNo(select.getTrueValue()),
      f = argNo(select.getFalseValue());
  if (m < 0 || t < 0 || f < 0 || m >= 3 || t >= 3 || f >= 3)
    return Value();
  Value mask = g.getDpsInputs()[m], x = g.getDpsInputs()[t],
        other = g.getDpsInputs()[f];
  if (x.getType() != g->getResult(0).getType() ||
      !matchPattern(other, m_Constant()))
    return Value();
  std::optional<Interval> in = intervalOf(mask);
  if (!in || in->lo != 1 || in->hi != 1)
    return Value();
  return x;
}

} // namespace

void mlir::pallas::gpu::foldTrueMaskSelects(func::FuncOp kernel) {
  SmallVector<linalg::GenericOp> candidates;
  kernel.walk([&](linalg::GenericOp g) {
    if (foldedSelect(g))
      candidates.push_back(g);
  });
  // In order, each decided again on its current operands (a select of a
  // folded select reads the load itself by then); nothing is erased until
  // all are replaced.
  SmallVector<Operation *> work;
  for (linalg::GenericOp g : candidates)
    if (Value x = foldedSelect(g)) {
      g->getResult(0).replaceAllUsesWith(x);
      work.push_back(g);
    }
  // The selects and the mask ops left unused.
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!isOpTriviallyDead(op))
      continue;
    SmallVector<Operation *> defs;
    for (Value v : op->getOperands())
      if (Operation *d = v.getDefiningOp())
        if (d != op && !llvm::is_contained(defs, d))
          defs.push_back(d);
    op->erase();
    for (Operation *d : defs)
      if (!llvm::is_contained(work, d))
        work.push_back(d);
  }
}
