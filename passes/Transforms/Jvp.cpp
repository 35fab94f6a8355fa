//===- Jvp.cpp - pallas-jvp ---------------------------------------*- C++ -*-===//
//
// Placeholder until the transform lands: fails with a clear message.
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/Passes.h"

namespace mlir::pallas {
#define GEN_PASS_DEF_PALLASJVP
#include "passes/Transforms/Passes.h.inc"
} // namespace mlir::pallas

using namespace mlir;

namespace {
struct PallasJvpPass
    : public mlir::pallas::impl::PallasJvpBase<PallasJvpPass> {
  using PallasJvpBase::PallasJvpBase;
  void runOnOperation() override {
    getOperation().emitError("transform 'pallas-jvp' is not available in this "
                             "build yet");
    signalPassFailure();
  }
};
} // namespace
