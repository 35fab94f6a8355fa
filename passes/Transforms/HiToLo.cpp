//===- HiToLo.cpp - pallas-hi-to-lo ---------------------------------------*- C++ -*-===//
//
// Placeholder until the transform lands: fails with a clear message.
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/Passes.h"

namespace mlir::pallas {
#define GEN_PASS_DEF_PALLASHITOLO
#include "passes/Transforms/Passes.h.inc"
} // namespace mlir::pallas

using namespace mlir;

namespace {
struct PallasHiToLoPass
    : public mlir::pallas::impl::PallasHiToLoBase<PallasHiToLoPass> {
  using PallasHiToLoBase::PallasHiToLoBase;
  void runOnOperation() override {
    getOperation().emitError("transform 'pallas-hi-to-lo' is not available in this "
                             "build yet");
    signalPassFailure();
  }
};
} // namespace
