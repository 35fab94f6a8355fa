//===- TpuPipeline.cpp - pallas kernels to Mosaic --------------*- C++ -*-===//

#include "passes/Pipelines/TpuPipeline.h"

#include "passes/Conversion/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

void mlir::pallas::buildTpuPipeline(OpPassManager &pm) {
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
