//===- Passes.h - pallasc call-level transforms ---------------*- C++ -*-===//

#ifndef PALLASC_PASSES_TRANSFORMS_PASSES_H
#define PALLASC_PASSES_TRANSFORMS_PASSES_H

#include "dialects/Pallas/IR/PallasOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::pallas {

#define GEN_PASS_DECL
#include "passes/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Transforms/Passes.h.inc"

} // namespace mlir::pallas

#endif // PALLASC_PASSES_TRANSFORMS_PASSES_H
