//===- TpuPipeline.cpp - pallas kernels to Mosaic --------------*- C++ -*-===//

#include "passes/Pipelines/TpuPipeline.h"

#include "passes/Conversion/Passes.h"
#include "passes/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

void mlir::pallas::buildTpuPipeline(OpPassManager &pm) {
  // lax.platform_dependent as JAX's Mosaic lowering resolves it: the group
  // naming `mosaic`, else the default.
  PallasResolvePlatformOptions platform;
  platform.platform = "mosaic";
  pm.addPass(createPallasResolvePlatform(platform));
  pm.addPass(createPallasToTPU());
}

void mlir::pallas::registerTpuPipeline() {
  static bool done = false;
  if (done)
    return;
  done = true;
  PassPipelineRegistration<>(
      "pallas-to-tpu-pipeline",
      "Lower a pallas_call to the Mosaic TPU kernel (what pallasc --target "
      "tpu serializes)",
      [](OpPassManager &pm) { buildTpuPipeline(pm); });
}
