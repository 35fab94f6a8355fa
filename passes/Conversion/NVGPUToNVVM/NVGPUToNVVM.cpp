//===- NVGPUToNVVM.cpp - pallas-nvgpu-to-nvvm -------------------*- C++ -*-===//
//
// Upstream's nvgpu -> NVVM patterns, applied with the index width of the
// gpu.module's data layout (convert-nvgpu-to-nvvm assumes 64 bits). Then
// the global loads that carry a pallas.load's cache hint (their location
// is fused with "pallas.eviction_policy=POLICY", Memory.cpp) become inline
// PTX, as Triton emits them: `ld.global.L1::evict_last.v4.b32` (LLVM's
// NVPTX backend has no way to print an eviction priority).
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

constexpr StringLiteral kHintPrefix = "pallas.eviction_policy=";

/// The cache hint of a load (its location's metadata) and the location it
/// was fused with.
std::optional<std::pair<StringRef, Location>> hintOf(Location loc) {
  auto fused = dyn_cast<FusedLoc>(loc);
  if (!fused || fused.getLocations().size() != 1)
    return std::nullopt;
  auto md = dyn_cast_or_null<StringAttr>(fused.getMetadata());
  if (!md || !md.getValue().starts_with(kHintPrefix))
    return std::nullopt;
  return std::make_pair(md.getValue().drop_front(kHintPrefix.size()),
                        fused.getLocations()[0]);
}

/// Each hinted llvm.load of 2, 4, 8 or 16 bytes as `ld.global.L1::POLICY`
/// of one b16 or 1, 2 or 4 b32 words (inline PTX with side effects: it
/// stays where the load was, between the same barriers). Others keep the
/// plain load, without the hint.
void printHintedLoads(mlir::gpu::GPUModuleOp m) {
  SmallVector<LLVM::LoadOp> loads;
  m.walk([&](LLVM::LoadOp l) {
    if (hintOf(l.getLoc()))
      loads.push_back(l);
  });
  for (LLVM::LoadOp l : loads) {
    auto [policy, loc] = *hintOf(l.getLoc());
    Type t = l.getType();
    auto vt = dyn_cast<VectorType>(t);
    Type elem = vt ? vt.getElementType() : t;
    int64_t bits = elem.isIntOrFloat()
                       ? elem.getIntOrFloatBitWidth() *
                             (vt ? vt.getNumElements() : 1)
                       : 0;
    auto ptrType = dyn_cast<LLVM::LLVMPointerType>(l.getAddr().getType());
    if ((bits != 16 && bits != 32 && bits != 64 && bits != 128) || !ptrType ||
        (ptrType.getAddressSpace() != 0 && ptrType.getAddressSpace() != 1)) {
      l->setLoc(loc);
      continue;
    }
    OpBuilder b(l);
    MLIRContext *ctx = b.getContext();
    Value addr = l.getAddr();
    if (ptrType.getAddressSpace() == 0)
      addr = LLVM::AddrSpaceCastOp::create(
          b, loc, LLVM::LLVMPointerType::get(ctx, 1), addr);
    int64_t words = bits == 16 ? 1 : bits / 32;
    Type word = bits == 16 ? b.getI16Type() : b.getI32Type();
    std::string text = ("ld.global.L1::" + policy).str();
    if (words > 1)
      text += ".v" + std::to_string(words);
    text += bits == 16 ? ".b16 " : ".b32 ";
    std::string constraints;
    if (words > 1)
      text += "{";
    for (int64_t w = 0; w < words; ++w) {
      text += (w ? ", $" : "$") + std::to_string(w);
      constraints += bits == 16 ? "=h," : "=r,";
    }
    if (words > 1)
      text += "}";
    text += ", [$" + std::to_string(words) + "];";
    constraints += "l";
    Type resType =
        words == 1 ? word
                   : LLVM::LLVMStructType::getLiteral(
                         ctx, SmallVector<Type>(words, word));
    Value r = LLVM::InlineAsmOp::create(
                  b, loc, resType, ValueRange{addr}, b.getStringAttr(text),
                  b.getStringAttr(constraints), b.getUnitAttr(), nullptr,
                  LLVM::TailCallKindAttr::get(
                      ctx, LLVM::tailcallkind::TailCallKind::None),
                  nullptr, nullptr)
                  .getResult(0);
    if (words > 1) {
      auto wordsType = VectorType::get({words}, word);
      Value vec = LLVM::PoisonOp::create(b, loc, wordsType);
      for (int64_t w = 0; w < words; ++w)
        vec = LLVM::InsertElementOp::create(
            b, loc, vec, LLVM::ExtractValueOp::create(b, loc, r, w),
            LLVM::ConstantOp::create(b, loc, b.getI32Type(), w));
      r = vec;
    }
    if (r.getType() != t)
      r = LLVM::BitcastOp::create(b, loc, t, r);
    l.getResult().replaceAllUsesWith(r);
    l.erase();
  }
}

struct PallasNVGPUToNVVMPass
    : pallas::impl::PallasNVGPUToNVVMBase<PallasNVGPUToNVVMPass> {
  void runOnOperation() override {
    mlir::gpu::GPUModuleOp m = getOperation();
    MLIRContext *ctx = &getContext();
    printHintedLoads(m);
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
