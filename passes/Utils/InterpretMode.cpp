//===- InterpretMode.cpp - Interpret-mode values the lowerings share -----===//

#include "passes/Utils/InterpretMode.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <limits>

using namespace mlir;

Value mlir::pallas::uninitializedValue(OpBuilder &b, Location loc,
                                       Type type) {
  if (auto f = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(
        b, loc, b.getFloatAttr(f, APFloat::getQNaN(f.getFloatSemantics())));
  if (type.isIndex())
    return arith::ConstantIndexOp::create(b, loc,
                                          std::numeric_limits<int64_t>::min());
  auto i = cast<IntegerType>(type);
  unsigned w = i.getWidth();
  APInt v = (w == 1 || w == 16) ? APInt(w, 0) : APInt::getSignedMinValue(w);
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(i, v));
}
