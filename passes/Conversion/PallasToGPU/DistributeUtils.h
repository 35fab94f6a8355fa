//===- DistributeUtils.h - helpers of the distributor -----------*- C++ -*-===//
//
// Small predicates on linalg ops, blocks and memory accesses shared by the
// files of the distributor (internal to passes/Conversion/PallasToGPU).
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_CONVERSION_PALLASTOGPU_DISTRIBUTEUTILS_H
#define PALLASC_PASSES_CONVERSION_PALLASTOGPU_DISTRIBUTEUTILS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

#include <optional>

namespace mlir::pallas::gpu::detail {

/// Per operand dimension the iteration dimension it reads (-1: a constant
/// 0 index into a size-1 dimension); nullopt for maps we do not handle.
inline std::optional<SmallVector<int64_t>> mapDims(AffineMap map) {
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

inline bool isIdentityDims(ArrayRef<int64_t> dims, int64_t rank) {
  if (static_cast<int64_t>(dims.size()) != rank)
    return false;
  for (auto [i, d] : llvm::enumerate(dims))
    if (d != static_cast<int64_t>(i))
      return false;
  return true;
}

/// A linalg.generic whose iterators are all parallel, whose output maps are
/// identities and whose input maps are projections/broadcasts.
inline bool isElementwise(linalg::GenericOp g) {
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

inline bool hasPureBody(Operation *op) {
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
inline SmallVector<OpOperand *> readOperands(linalg::GenericOp g) {
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

inline int64_t elementBits(Type t) {
  if (t.isIndex())
    return 64;
  if (t.isInteger(1))
    return 8;
  return t.getIntOrFloatBitWidth();
}

inline bool isAncestorOrSame(Block *ancestor, Block *block) {
  for (Block *b = block; b; b = b->getParentOp() ? b->getParentOp()->getBlock()
                                                 : nullptr)
    if (b == ancestor)
      return true;
  return false;
}

/// Clones the ops of `body` (its arguments mapped to `args`) at `b`; the
/// values its terminator yields.
inline SmallVector<Value> cloneBody(OpBuilder &b, Block &body,
                                    ValueRange args) {
  IRMapping m;
  m.map(body.getArguments(), args);
  for (Operation &op : body.without_terminator())
    b.clone(op, m);
  return llvm::map_to_vector(body.getTerminator()->getOperands(),
                             [&](Value r) { return m.lookupOrDefault(r); });
}

/// The memref a memref.load / store or vector.load / store / maskedload /
/// maskedstore accesses; null for other ops.
inline Value accessedMemref(Operation *op) {
  return TypeSwitch<Operation *, Value>(op)
      .Case<memref::LoadOp, memref::StoreOp>(
          [](auto access) { return access.getMemref(); })
      .Case<vector::LoadOp, vector::StoreOp, vector::MaskedLoadOp,
            vector::MaskedStoreOp>([](auto access) { return access.getBase(); })
      .Default([](Operation *) { return Value(); });
}

} // namespace mlir::pallas::gpu::detail

#endif // PALLASC_PASSES_CONVERSION_PALLASTOGPU_DISTRIBUTEUTILS_H
