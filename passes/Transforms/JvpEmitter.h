//===- JvpEmitter.h - forward-mode differentiation of op lists --*- C++ -*-===//
//
// The engine of pallas-jvp: copies the ops of a block into a new body and
// emits, next to each one, the ops computing its tangent (forward mode).
// Used for kernel bodies and for the function holding the pallas.call.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_TRANSFORMS_JVPEMITTER_H
#define PALLASC_PASSES_TRANSFORMS_JVPEMITTER_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"

#include <functional>

namespace mlir::pallas::jvp {

/// True for float scalars and shaped values with a float element type: the
/// only values that carry tangents (integers have zero tangents, as in JAX).
bool isFloatLike(Type type);

/// Forward-mode differentiation of straight-line code and scf regions.
///
/// Every old (source) value `v` maps to a new primal value and to a tangent
/// `dv`. A tangent is either a new value or absent, which means a symbolic
/// zero: no op is emitted for it, and rules skip the terms it would feed.
/// Zeros are materialized only where a value is required (a store into a
/// tangent ref, a loop-carried tangent, a select between a zero and a
/// nonzero tangent).
class Emitter {
public:
  /// Differentiation rule for ops the emitter leaves to its user
  /// (pallas.call, whose rule is the call-level one).
  using OpRule = std::function<LogicalResult(Operation *, Emitter &)>;

  /// `constantBlock` receives the materialized zero and other constants (at
  /// its start); it must dominate everything emitted.
  Emitter(OpBuilder &builder, Block *constantBlock)
      : b(builder), constantBlock(constantBlock) {}

  void setCallRule(OpRule rule) { callRule = std::move(rule); }

  /// Emits every op of `block` but its terminator at the insertion point.
  LogicalResult emitOps(Block &block);
  /// Emits the primal and tangent code of one op.
  LogicalResult emitOp(Operation *op);

  // --- Value maps -------------------------------------------------------

  /// The new primal value of an old value.
  Value primal(Value old) const { return mapping.lookup(old); }
  void mapPrimal(Value old, Value primal) { mapping.map(old, primal); }
  /// The tangent of an old value; null for a (symbolic) zero. Only
  /// float-like values have tangents.
  Value tangent(Value old) const;
  /// The tangent, materialized as a zero constant when it is zero.
  Value tangentOrZero(Value old);
  void setTangent(Value old, Value tangent);
  /// The tangent recorded for `old` whatever its type (integer outputs of a
  /// call get zero tangents that the wrapper returns).
  Value rawTangent(Value old) const { return tangents.lookup(old); }
  /// Tangent refs: where the tangent of a ref's contents lives.
  void setRefTangent(Value oldRef, Value tangentRef) {
    refTangents[oldRef] = tangentRef;
  }
  Value refTangent(Value oldRef) const { return refTangents.lookup(oldRef); }

  // --- Constants and arithmetic helpers ---------------------------------

  /// A constant of `type` (float or integer scalar, or a splat tensor)
  /// holding `value`, hoisted into the constant block.
  Value constant(Type type, double value);
  Value zeros(Type type) { return constant(type, 0.0); }

  // Null-aware tangent algebra: a null operand is a zero.
  Value add(Value a, Value b);
  Value sub(Value a, Value b);
  Value neg(Value a);
  /// `t * x` (null when `t` is null).
  Value scale(Value t, Value x);

  // Plain arith ops at the insertion point.
  Value addf(Value a, Value b);
  Value subf(Value a, Value b);
  Value mulf(Value a, Value b);
  Value divf(Value a, Value b);
  Value negf(Value a);
  Value select(Value cond, Value a, Value b);
  Value cmpf(arith::CmpFPredicate predicate, Value a, Value b);

  OpBuilder &builder() { return b; }
  Location loc() const { return currentLoc; }

private:
  LogicalResult emitFor(scf::ForOp op);
  LogicalResult emitIf(scf::IfOp op);
  LogicalResult emitWhile(scf::WhileOp op);
  LogicalResult emitRefOp(Operation *op);
  LogicalResult emitGeneric(Operation *op);
  /// The rule for an op with float results, after the primal clone `newOp`.
  LogicalResult emitRule(Operation *op, Operation *newOp);
  /// The rules by family (JvpRules.cpp), which emitRule picks by dialect.
  struct Rule;
  LogicalResult emitArithRule(Rule &r);
  LogicalResult emitMathRule(Rule &r);
  LogicalResult emitBlockRule(Rule &r);
  /// Rule of an op linear in the operands at `dataOperands`: the same op
  /// applied to their tangents, other operands (indices, sizes) primal.
  void emitLinear(Operation *op, ArrayRef<unsigned> dataOperands);
  /// Maps each of `olds` to the value at its position in `news` and its
  /// tangent to the next of the tangents that follow them in `news`, where
  /// `active` (one per old) says it carries one, else to none.
  void mapCarried(ValueRange olds, ValueRange news, ArrayRef<bool> active);
  /// Appends the primals of `inits`, then the tangents of the `active` ones
  /// (zero where none was recorded), to a loop's operands and their types.
  void appendCarried(ValueRange inits, ArrayRef<bool> active,
                     SmallVectorImpl<Value> &operands,
                     SmallVectorImpl<Type> &types);
  /// At the insertion point: `old`'s primal operands, then the tangents of
  /// the `active` ones.
  void emitYield(scf::YieldOp old, ArrayRef<bool> active);
  /// Emits the ops of a loop body `from` into `to`. True (and `active`
  /// grown) when the body gives a tangent to a carried value that had none,
  /// so the loop must be emitted again; else `to` gets its yield.
  FailureOr<bool> emitLoopBody(Block &from, Block *to, scf::YieldOp yield,
                               MutableArrayRef<bool> active);
  /// Drops the tangents recorded for values defined inside `op`'s regions
  /// (before re-emitting a loop with more carried tangents).
  void forgetNested(Operation *op);
  LogicalResult noRule(Operation *op);

  OpBuilder &b;
  Block *constantBlock;
  OpRule callRule;
  IRMapping mapping;
  llvm::DenseMap<Value, Value> tangents;
  llvm::DenseMap<Value, Value> refTangents;
  llvm::DenseMap<std::pair<Type, uint64_t>, Value> constants;
  Location currentLoc = UnknownLoc::get(b.getContext());
};

} // namespace mlir::pallas::jvp

#endif // PALLASC_PASSES_TRANSFORMS_JVPEMITTER_H
