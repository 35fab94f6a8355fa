//===- Dce.cpp - pallas-dce ---------------------------------------*- C++ -*-===//
//
// Placeholder until the transform lands: fails with a clear message.
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/Passes.h"

namespace mlir::pallas {
#define GEN_PASS_DEF_PALLASDCE
#include "passes/Transforms/Passes.h.inc"
} // namespace mlir::pallas

using namespace mlir;

namespace {
struct PallasDcePass
    : public mlir::pallas::impl::PallasDceBase<PallasDcePass> {
  using PallasDceBase::PallasDceBase;
  void runOnOperation() override {
    getOperation().emitError("transform 'pallas-dce' is not available in this "
                             "build yet");
    signalPassFailure();
  }
};
} // namespace
