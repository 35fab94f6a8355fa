//===- PallasDialect.h - pallas dialect, attributes, types ---*- C++ -*-===//

#ifndef PALLASC_DIALECTS_PALLAS_IR_PALLASDIALECT_H
#define PALLASC_DIALECTS_PALLAS_IR_PALLASDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"

namespace mlir::pallas {
/// Kinds of block dimensions stored in `#pallas.block_spec`.
enum class BlockDimKind : int64_t { Blocked = 0, Squeezed = 1, Element = 2 };
} // namespace mlir::pallas

#include "dialects/Pallas/IR/PallasOpsDialect.h.inc"
#include "dialects/Pallas/IR/PallasOpsEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Pallas/IR/PallasOpsAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/Pallas/IR/PallasOpsTypes.h.inc"

namespace mlir::pallas {
/// An `i1` type (or tensor of `i1`) with the shape of `type`.
Type getMaskType(Type type);

/// The shape of a scalar-or-tensor type (empty for scalars).
ArrayRef<int64_t> getShapeOf(Type type);

/// The element type of a scalar-or-tensor type.
Type getElementTypeOf(Type type);
} // namespace mlir::pallas

#endif // PALLASC_DIALECTS_PALLAS_IR_PALLASDIALECT_H
