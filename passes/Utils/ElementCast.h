//===- ElementCast.h - element type conversions -----------------*- C++ -*-===//
//
// JAX's convert_element_type on a scalar or a tensor, as linalg.matmul casts
// its operands (pallas-to-linalg's ops, pallas-to-gpu's dots).
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_UTILS_ELEMENTCAST_H
#define PALLASC_PASSES_UTILS_ELEMENTCAST_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace mlir::pallas {

/// Converts a scalar or tensor `value` to element type `to`: floats are
/// extended or truncated (equal widths: extended to f32, else truncated),
/// floats and integers converted signed, integers sign-extended or
/// truncated. `value` itself when it already has that element type.
Value convertElementType(OpBuilder &b, Location loc, Value value, Type to);

} // namespace mlir::pallas

#endif // PALLASC_PASSES_UTILS_ELEMENTCAST_H
