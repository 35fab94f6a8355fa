//===- Passes.h - the passes only the pipelines use -------------*- C++ -*-===//
//
// Declared in Passes.td: pallas-verify (Verify.cpp), pallas-expand-views
// (ExpandViews.cpp) and pallas-gpu-module-to-ptx (PtxSerialize.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_PIPELINES_PASSES_H
#define PALLASC_PASSES_PIPELINES_PASSES_H

#include "mlir/Pass/Pass.h"

#include <string>

namespace mlir::pallas {

#define GEN_PASS_DECL
#include "passes/Pipelines/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Pipelines/Passes.h.inc"

} // namespace mlir::pallas

#endif // PALLASC_PASSES_PIPELINES_PASSES_H
