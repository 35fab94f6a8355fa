//===- FloatSemantics.cpp - pallas-gpu-float-semantics ------------*- C++ -*-===//
//
// FMA contraction and f32 division on the distributed GPU kernel as Pallas'
// Triton lowering gives them (see GPUCodegen.td, docs/cuda.md).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir::pallas {
#define GEN_PASS_DEF_PALLASGPUFLOATSEMANTICS
#include "passes/Conversion/Passes.h.inc"
} // namespace mlir::pallas

using namespace mlir;

namespace {

bool isFloatLike(Type t) { return isa<FloatType>(getElementTypeOrSelf(t)); }

/// Adds `contract` to the op's fast-math flags.
template <typename Op> void allowContraction(Op op) {
  op.setFastmath(op.getFastmath() | arith::FastMathFlags::contract);
}

/// `a / b` on f32 as div.full.f32.
Value divFull(OpBuilder &b, Location loc, Value a, Value d) {
  return LLVM::CallIntrinsicOp::create(
             b, loc, b.getF32Type(), b.getStringAttr("llvm.nvvm.div.full"),
             ValueRange{a, d})
      .getResult(0);
}

struct PallasGPUFloatSemanticsPass
    : pallas::impl::PallasGPUFloatSemanticsBase<PallasGPUFloatSemanticsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (strict)
      return;
    SmallVector<arith::DivFOp> divisions;
    getOperation().walk([&](Operation *op) {
      if (op->getNumResults() != 1 || !isFloatLike(op->getResult(0).getType()))
        return;
      if (auto o = dyn_cast<arith::AddFOp>(op))
        allowContraction(o);
      else if (auto o = dyn_cast<arith::SubFOp>(op))
        allowContraction(o);
      else if (auto o = dyn_cast<arith::MulFOp>(op))
        allowContraction(o);
      else if (auto o = dyn_cast<arith::DivFOp>(op);
               o && approxDiv && getElementTypeOrSelf(o.getType()).isF32())
        divisions.push_back(o);
    });
    for (arith::DivFOp div : divisions) {
      OpBuilder b(div);
      Location loc = div.getLoc();
      auto vt = dyn_cast<VectorType>(div.getType());
      if (!vt) {
        div.replaceAllUsesWith(divFull(b, loc, div.getLhs(), div.getRhs()));
        div.erase();
        continue;
      }
      if (vt.isScalable() || vt.getRank() != 1) {
        // The distributor only makes 1-D vectors; leave others IEEE.
        continue;
      }
      Value result = arith::ConstantOp::create(
          b, loc, vt, DenseElementsAttr::get(vt, b.getF32FloatAttr(0.0f)));
      for (int64_t i = 0, e = vt.getNumElements(); i < e; ++i) {
        Value a = vector::ExtractOp::create(b, loc, div.getLhs(), i);
        Value d = vector::ExtractOp::create(b, loc, div.getRhs(), i);
        result = vector::InsertOp::create(b, loc, divFull(b, loc, a, d), result,
                                          i);
      }
      div.replaceAllUsesWith(result);
      div.erase();
    }
  }
};

} // namespace
