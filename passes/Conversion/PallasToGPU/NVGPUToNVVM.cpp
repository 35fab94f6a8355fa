//===- NVGPUToNVVM.cpp - pallas-nvgpu-to-nvvm -------------------*- C++ -*-===//
//
// Upstream's nvgpu -> NVVM patterns, applied with the index width of the
// gpu.module's data layout (convert-nvgpu-to-nvvm assumes 64 bits).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/PallasToGPU.h"

#include "mlir/Analysis/DataLayoutAnalysis.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::pallas {
#define GEN_PASS_DEF_PALLASNVGPUTONVVM
#include "passes/Conversion/Passes.h.inc"
} // namespace mlir::pallas

using namespace mlir;

namespace {

struct PallasNVGPUToNVVMPass
    : pallas::impl::PallasNVGPUToNVVMBase<PallasNVGPUToNVVMPass> {
  void runOnOperation() override {
    mlir::gpu::GPUModuleOp m = getOperation();
    MLIRContext *ctx = &getContext();
    // Only the nvgpu ops are converted (they and their tokens are all the
    // pass changes), so the conversion visits them alone instead of every
    // op of the (large, unrolled) kernel.
    SmallVector<Operation *> nvgpuOps;
    m.walk([&](Operation *op) {
      if (isa<nvgpu::NVGPUDialect>(op->getDialect()))
        nvgpuOps.push_back(op);
    });
    if (nvgpuOps.empty())
      return;
    const DataLayoutAnalysis &dl = getAnalysis<DataLayoutAnalysis>();
    LowerToLLVMOptions options(ctx, dl.getAtOrAbove(m));
    LLVMTypeConverter converter(ctx, options, &dl);
    nvgpu::populateCommonGPUTypeAndAttributeConversions(converter);
    converter.addConversion([&](nvgpu::DeviceAsyncTokenType type) -> Type {
      return converter.convertType(IntegerType::get(type.getContext(), 32));
    });
    RewritePatternSet patterns(ctx);
    populateNVGPUToNVVMConversionPatterns(converter, patterns);
    LLVMConversionTarget target(*ctx);
    target.addLegalDialect<NVVM::NVVMDialect>();
    target.addIllegalDialect<nvgpu::NVGPUDialect>();
    if (failed(applyPartialConversion(nvgpuOps, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
