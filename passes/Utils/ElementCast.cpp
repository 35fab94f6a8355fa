//===- ElementCast.cpp - element type conversions the lowerings share ----===//

#include "passes/Utils/ElementCast.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

Value mlir::pallas::convertElementType(OpBuilder &b, Location loc, Value value,
                                       Type to) {
  Type from = getElementTypeOrSelf(value.getType());
  if (from == to)
    return value;
  Type resultType = to;
  if (auto t = dyn_cast<RankedTensorType>(value.getType()))
    resultType = t.clone(to);
  auto fromF = dyn_cast<FloatType>(from), toF = dyn_cast<FloatType>(to);
  if (fromF && toF) {
    if (toF.getWidth() > fromF.getWidth() ||
        (toF.getWidth() == fromF.getWidth() && toF.isF32()))
      return arith::ExtFOp::create(b, loc, resultType, value);
    return arith::TruncFOp::create(b, loc, resultType, value);
  }
  if (fromF)
    return arith::FPToSIOp::create(b, loc, resultType, value);
  if (toF)
    return arith::SIToFPOp::create(b, loc, resultType, value);
  if (to.getIntOrFloatBitWidth() > from.getIntOrFloatBitWidth())
    return arith::ExtSIOp::create(b, loc, resultType, value);
  return arith::TruncIOp::create(b, loc, resultType, value);
}
