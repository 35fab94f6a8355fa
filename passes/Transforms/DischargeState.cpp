//===- DischargeState.cpp - pallas-discharge-state ---------------------------------------*- C++ -*-===//
//
// Placeholder until the transform lands: fails with a clear message.
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/Passes.h"

namespace mlir::pallas {
#define GEN_PASS_DEF_PALLASDISCHARGESTATE
#include "passes/Transforms/Passes.h.inc"
} // namespace mlir::pallas

using namespace mlir;

namespace {
struct PallasDischargeStatePass
    : public mlir::pallas::impl::PallasDischargeStateBase<PallasDischargeStatePass> {
  using PallasDischargeStateBase::PallasDischargeStateBase;
  void runOnOperation() override {
    getOperation().emitError("transform 'pallas-discharge-state' is not available in this "
                             "build yet");
    signalPassFailure();
  }
};
} // namespace
