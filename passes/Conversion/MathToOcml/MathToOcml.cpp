//===- MathToOcml.cpp - pallas-math-to-ocml ---------------------*- C++ -*-===//
//
// Upstream's math -> ROCm device-library call patterns, run on the
// gpu.module before convert-gpu-to-rocdl (which prefers LLVM intrinsics the
// AMDGPU backend cannot select for tanh, tan, atan, ...).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/Passes.h"

#include "mlir/Analysis/DataLayoutAnalysis.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MathToROCDL/MathToROCDL.h"
#include "mlir/Dialect/AMDGPU/Utils/Chipset.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::pallas {
#define GEN_PASS_DEF_PALLASMATHTOOCML
#include "passes/Conversion/Passes.h.inc"
} // namespace mlir::pallas

#define DEBUG_TYPE "pallas-math-to-ocml"

using namespace mlir;

namespace {

struct PallasMathToOcmlPass
    : pallas::impl::PallasMathToOcmlBase<PallasMathToOcmlPass> {
  using Base::Base;
  void runOnOperation() override {
    mlir::gpu::GPUModuleOp m = getOperation();
    MLIRContext *ctx = &getContext();
    FailureOr<amdgpu::Chipset> parsed = amdgpu::Chipset::parse(chipset);
    if (failed(parsed)) {
      m.emitError() << "pallas-math-to-ocml: '" << chipset
                    << "' is not an AMD chip name (gfxNNN)";
      return signalPassFailure();
    }
    const DataLayoutAnalysis &dl = getAnalysis<DataLayoutAnalysis>();
    LowerToLLVMOptions options(ctx, dl.getAtOrAbove(m));
    LLVMTypeConverter converter(ctx, options, &dl);
    RewritePatternSet patterns(ctx);
    populateMathToROCDLConversionPatterns(converter, patterns, *parsed);
    ConversionTarget target(*ctx);
    target.addLegalDialect<LLVM::LLVMDialect, ROCDL::ROCDLDialect>();
    // Only the ops convert-gpu-to-rocdl would turn into LLVM intrinsics
    // the AMDGPU backend cannot select; the rest keep its lowering.
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    target.addIllegalOp<math::AcosOp, math::AsinOp, math::AtanOp,
                        math::Atan2Op, math::CoshOp, math::SinhOp, math::TanOp,
                        math::TanhOp>();
    if (failed(applyPartialConversion(m, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
