//===- EmitElementwise.cpp - elementwise ops --------------------*- C++ -*-===//
//
// linalg.generic without reductions, register by register in the
// result's layout.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/DistributeUtils.h"
#include "passes/Conversion/PallasToGPU/Emitters/EmitContext.h"

using namespace mlir;
using namespace mlir::pallas::gpu;

/// linalg.generic without reductions (the family is this one function).
static LogicalResult emitElementwise(EmitContext &cx, Operation *op) {
  auto g = cast<linalg::GenericOp>(op);
  if (!mlir::pallas::gpu::detail::isElementwise(g))
    return op->emitOpError()
           << "is a reduction the GPU lowering does not support yet";
  int id = cx.analysis().layoutOf.lookup(g->getResult(0));
  // The flexible materializer in the result's layout: it computes all
  // results at once, register by register.
  auto regs0 = cx.materialize(g->getResult(0), id);
  if (failed(regs0))
    return failure();
  if (g->getNumResults() == 1) {
    cx.setDist(g->getResult(0), Dist{id, *regs0});
    cx.emission().memo.erase({g->getResult(0), id});
    return success();
  }
  return op->emitOpError()
         << "has several results; the GPU lowering supports one";
}

void mlir::pallas::gpu::populateElementwiseEmitters(EmitterRegistry &r) {
  r.add<linalg::GenericOp>(emitElementwise);
}
