//===- RefusePackedIntegers.cpp - i4/i2 on targets without them -*- C++ -*-===//
//
// int4/uint4/int2/uint2 arrays are packed storage (2 or 4 elements per
// byte); the GPU pipelines cannot lower them yet, so they refuse a kernel
// holding one, at the value's location, before anything is lowered
// (docs/gridspec.md#dtypes). The CPU pipeline lowers them
// (pallas-emulate-packed-integers): for target `cpu` the pass does nothing.
//
//===----------------------------------------------------------------------===//

#include "passes/Pipelines/Passes.h"

#include "dialects/Pallas/IR/PallasOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace mlir::pallas {
#define GEN_PASS_DEF_PALLASREFUSEPACKEDINTEGERS
#include "passes/Pipelines/Passes.h.inc"
} // namespace mlir::pallas

namespace {
/// The i4 or i2 element type of `type` (a scalar, a shaped type or a ref).
IntegerType packedElement(Type type) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    type = shaped.getElementType();
  else if (auto ref = dyn_cast<pallas::RefType>(type))
    type = ref.getElementType();
  auto i = dyn_cast<IntegerType>(type);
  return i && (i.getWidth() == 4 || i.getWidth() == 2) ? i : IntegerType();
}

struct RefusePackedIntegersPass
    : pallas::impl::PallasRefusePackedIntegersBase<RefusePackedIntegersPass> {
  using Base::Base;

  void runOnOperation() final {
    // The host lowers packed storage (pallas-emulate-packed-integers).
    if (target == "cpu")
      return markAllAnalysesPreserved();
    auto refuse = [&](Location loc, Type type, IntegerType element) {
      const char *dtypes =
          element.getWidth() == 4 ? "int4/uint4" : "int2/uint2";
      emitError(loc) << "dtype " << dtypes << " (" << element
                     << ", packed " << 8 / element.getWidth()
                     << " per byte) is not supported on target '" << target
                     << "' yet: " << type
                     << " has no packed lowering there; compile for --target "
                        "cpu or tpu, or widen it to int8 in the caller";
      signalPassFailure();
    };
    getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            if (IntegerType e = packedElement(arg.getType())) {
              refuse(arg.getLoc(), arg.getType(), e);
              return WalkResult::interrupt();
            }
      for (Value result : op->getResults())
        if (IntegerType e = packedElement(result.getType())) {
          refuse(op->getLoc(), result.getType(), e);
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
    markAllAnalysesPreserved();
  }
};
} // namespace
