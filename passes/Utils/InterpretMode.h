//===- InterpretMode.h - Interpret-mode values the lowerings share -*- C++ -*-===//
//
// What JAX's interpret mode defines and every lowering must produce the
// same way: the value of memory nobody wrote.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_UTILS_INTERPRETMODE_H
#define PALLASC_PASSES_UTILS_INTERPRETMODE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace mlir::pallas {

/// An arith.constant of `type` (a float, integer or index type) holding the
/// value interpret mode gives memory nobody wrote (jax's
/// `uninitialized_value`): NaN for floats, the signed minimum for integers
/// and index, 0 for i16 (interpret mode's semaphore type), false for i1.
Value uninitializedValue(OpBuilder &b, Location loc, Type type);

} // namespace mlir::pallas

#endif // PALLASC_PASSES_UTILS_INTERPRETMODE_H
