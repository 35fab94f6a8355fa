//===- InterpretModeTest.cpp - passes/Utils/InterpretMode -----------------===//
//
// uninitializedValue against jax's uninitialized_value, written out per
// type: NaN for floats, the signed minimum for integers and index, 0 for
// i16 (interpret mode's semaphore type), false for i1.
//
//===----------------------------------------------------------------------===//

#include "passes/Utils/InterpretMode.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

#include <catch2/catch.hpp>

#include <limits>

using namespace mlir;

namespace {
Attribute valueOf(OpBuilder &b, Type type) {
  Value v = pallas::uninitializedValue(b, b.getUnknownLoc(), type);
  auto c = v.getDefiningOp<arith::ConstantOp>();
  REQUIRE(c);
  CHECK(c.getType() == type);
  return c.getValue();
}
} // namespace

TEST_CASE("uninitializedValue: jax's uninitialized_value per type",
          "[utils]") {
  MLIRContext ctx;
  ctx.loadDialect<arith::ArithDialect>();
  OpBuilder b(&ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(b.getUnknownLoc());
  b.setInsertionPointToEnd(module->getBody());

  for (Type t : {Type(b.getF32Type()), Type(b.getF16Type()),
                 Type(b.getBF16Type()), Type(b.getF64Type())}) {
    auto f = dyn_cast<FloatAttr>(valueOf(b, t));
    REQUIRE(f);
    CHECK(f.getValue().isNaN());
  }
  auto intOf = [&](Type t) {
    auto i = dyn_cast<IntegerAttr>(valueOf(b, t));
    REQUIRE(i);
    return i.getValue();
  };
  CHECK(intOf(b.getI32Type()).getSExtValue() ==
        std::numeric_limits<int32_t>::min());
  CHECK(intOf(b.getI64Type()).getSExtValue() ==
        std::numeric_limits<int64_t>::min());
  CHECK(intOf(b.getI8Type()).getSExtValue() == -128);
  CHECK(intOf(b.getI16Type()).isZero());
  CHECK(intOf(b.getI1Type()).isZero());
  CHECK(intOf(b.getIndexType()).getSExtValue() ==
        std::numeric_limits<int64_t>::min());
}
