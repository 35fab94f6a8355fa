//===- GpuPipeline.cpp - the GPU distribution both vendors share *- C++ -*-===//

#include "passes/Pipelines/GpuPipeline.h"
#include "passes/Pipelines/ToolLookup.h"
#include "passes/Pipelines/Passes.h"
#include "passes/Pipelines/Pipelines.h"

#include "passes/Conversion/PallasToGPU/PallasToGPU.h"
#include "passes/Transforms/Passes.h"

#include "chips/GpuTarget.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/Process.h"

using namespace mlir;

bool mlir::pallas::explicitToolLookup() {
  auto v = llvm::sys::Process::GetEnv("PALLASC_EXPLICIT_TOOLS");
  return v && !v->empty() && *v != "0";
}

void mlir::pallas::buildGpuDistributionPipeline(
    OpPassManager &pm, const GpuDistributionOptions &options) {
  // lax.platform_dependent takes its `cuda` or `rocm` branch.
  const pallasc::GpuTarget *chip = pallasc::lookupGpuChip(options.chip);
  std::string platform =
      chip && chip->vendor == pallasc::GpuVendor::Amd ? "rocm" : "cuda";
  addResolvePlatform(pm, platform);
  // int4/uint4/int2/uint2 are not unpacked in registers yet: refused by
  // name and target.
  PallasRefusePackedIntegersOptions packed;
  packed.target = platform + ":" + options.chip;
  pm.addPass(createPallasRefusePackedIntegers(packed));
  // Every math op the dialect accepts, as ops libdevice / ocml / the
  // backends have (docs/dialect.md); bf16 math in f32 (neither device
  // library has bf16 functions). Before the distribution, so the emulator
  // runs the same rewrites.
  pm.addPass(createPallasLegalizeMath());
  // fp8 values are computed in f32 and converted with integer operations.
  pm.addPass(createPallasExpandFp8());
  // A large block computed elementwise is stored a chunk of rows at a time,
  // so the per-thread unrolling stays the size of one chunk.
  pm.addPass(createPallasChunkElementwise());
  math::MathExtendToSupportedTypesOptions extend;
  extend.extraTypeStrs = {"f16"};
  pm.addPass(math::createMathExtendToSupportedTypes(extend));
  pm.addPass(createPallasGPUPrepare());
  pm.addPass(createPallasToLinalg());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Integer ranges (loop bounds, clamps) prove most dynamic slices in
  // bounds: their checked slow paths fold away and the loads become plain
  // views (streamed to dots with cp.async).
  pm.addPass(arith::createIntRangeOptimizationsPass());
  pm.addPass(createCanonicalizerPass());
  PallasToGPUOptions toGpu;
  toGpu.chip = options.chip;
  pm.addPass(createPallasToGPU(toGpu));
  // pallas.symbol_value (kept by pallas-to-linalg) -> the kernel's symbol
  // parameter.
  pm.addPass(createPallasGpuBindSymbols());
  PallasGPUFloatSemanticsOptions fp;
  fp.strict = options.strictFloat;
  fp.approxDiv = options.approxDivision;
  pm.nest<mlir::gpu::GPUModuleOp>().addPass(createPallasGPUFloatSemantics(fp));
}
