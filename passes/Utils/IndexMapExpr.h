//===- IndexMapExpr.h - Index-map expressions: one walk, two uses -*- C++ -*-===//
//
// The affine expressions of a block spec's index map (`+ * floordiv ceildiv
// mod` over the grid indices and integer constants; the importer rejects
// symbols) are expanded into arith ops in one place: expandIndexMapExpr, a
// bottom-up fold (foldIndexMapExpr) used by pallas-to-gpu over index values
// and pallas-to-tpu over i32 ones, in the op forms each target accepts.
// Other walks compute other things and keep their own: the host launch
// plan's bytecode (src/Runtime/CallPlan.cpp, compileAffineExpr), the
// importer's range check (src/Spec/SpecToIR.cpp, exprRange) and the GPU
// lowering's divisibility (PallasToGPU/Memory.cpp, affineDivisor).
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_UTILS_INDEXMAPEXPR_H
#define PALLASC_PASSES_UTILS_INDEXMAPEXPR_H

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

namespace mlir::pallas {

/// Folds `e` bottom-up: `leaf(e)` gives the value of a dimension or a
/// constant, `combine(bin, lhs, rhs)` the value of a binary expression from
/// its operands' values (left operand first). A symbol, or a failure of
/// either callback, fails the fold.
template <typename T, typename Leaf, typename Combine>
FailureOr<T> foldIndexMapExpr(AffineExpr e, Leaf &&leaf, Combine &&combine) {
  if (isa<AffineDimExpr, AffineConstantExpr>(e))
    return leaf(e);
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin)
    return failure();
  FailureOr<T> l = foldIndexMapExpr<T>(bin.getLHS(), leaf, combine);
  if (failed(l))
    return failure();
  FailureOr<T> r = foldIndexMapExpr<T>(bin.getRHS(), leaf, combine);
  if (failed(r))
    return failure();
  return combine(bin, *l, *r);
}

/// How expandIndexMapExpr spells the divisions.
enum class IndexMapArith {
  /// arith.floordivsi / arith.ceildivsi, and mod as l - floordiv(l, r) * r
  /// (pallas-to-gpu, over index values).
  FloorOps,
  /// arith.divsi / arith.remsi with the sign fix-ups floor semantics need,
  /// skipped where the dividend is provably non-negative (pallas-to-tpu,
  /// over i32 values: what Mosaic accepts).
  TruncatingOps,
};

/// Emits arith ops computing `e` at `dims`, values of `type` (index or an
/// integer type, which the constants get too), with floor semantics as in
/// affine.
Value expandIndexMapExpr(OpBuilder &b, Location loc, AffineExpr e,
                         ValueRange dims, Type type, IndexMapArith arith);

} // namespace mlir::pallas

#endif // PALLASC_PASSES_UTILS_INDEXMAPEXPR_H
