//===- Vmap.cpp - pallas-vmap ---------------------------------------*- C++ -*-===//
//
// Placeholder until the transform lands: fails with a clear message.
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/Passes.h"

namespace mlir::pallas {
#define GEN_PASS_DEF_PALLASVMAP
#include "passes/Transforms/Passes.h.inc"
} // namespace mlir::pallas

using namespace mlir;

namespace {
struct PallasVmapPass
    : public mlir::pallas::impl::PallasVmapBase<PallasVmapPass> {
  using PallasVmapBase::PallasVmapBase;
  void runOnOperation() override {
    getOperation().emitError("transform 'pallas-vmap' is not available in this "
                             "build yet");
    signalPassFailure();
  }
};
} // namespace
