//===- EmitElementwise.cpp - elementwise ops --------------------*- C++ -*-===//
//
// linalg.generic without reductions, register by register in the
// result's layout.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/DistributeUtils.h"
#include "passes/Conversion/PallasToGPU/Emitters/EmitContext.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "pallas-to-gpu"

using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::gpu;
using namespace mlir::pallas::gpu::detail;

namespace {

/// linalg.generic without reductions.
class ElementwiseEmitter {
public:
  explicit ElementwiseEmitter(EmitContext &cx) : cx(cx) {}
  LogicalResult emitElementwise(Operation *op);

private:
  EmitContext &cx;
};

} // namespace

void mlir::pallas::gpu::populateElementwiseEmitters(EmitterRegistry &r) {
  r.add<linalg::GenericOp>(
      emitWith<ElementwiseEmitter, &ElementwiseEmitter::emitElementwise>);
}

LogicalResult ElementwiseEmitter::emitElementwise(Operation *op) {
  auto g = cast<linalg::GenericOp>(op);
  if (!isElementwise(g))
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
