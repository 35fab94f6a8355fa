//===- TpuPipeline.cpp - pallas kernels to Mosaic --------------*- C++ -*-===//

#include "passes/Pipelines/TpuPipeline.h"
#include "passes/Pipelines/Pipelines.h"

#include "passes/Conversion/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

void mlir::pallas::buildTpuPipeline(OpPassManager &pm) {
  // lax.platform_dependent as JAX's Mosaic lowering resolves it: the group
  // naming `mosaic`, else the default.
  addResolvePlatform(pm, "mosaic");
  pm.addPass(createPallasToTPU());
}

void mlir::pallas::registerTpuPipeline() {
  PassPipelineRegistration<>(
      "pallas-to-tpu-pipeline",
      "Lower a pallas_call to the Mosaic TPU kernel (what pallasc --target "
      "tpu serializes)",
      buildTpuPipeline);
}
