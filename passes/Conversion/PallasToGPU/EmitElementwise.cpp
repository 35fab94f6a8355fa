//===- EmitElementwise.cpp - elementwise ops --------------------*- C++ -*-===//
//
// linalg.generic without reductions, register by register in the
// result's layout, and the body combiner reductions reuse.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/Distribute.h"
#include "passes/Conversion/PallasToGPU/DistributeUtils.h"

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

void mlir::pallas::gpu::populateElementwiseEmitters(EmitterRegistry &r) {
  r.add<linalg::GenericOp>(&Distributor::emitElementwise);
}

LogicalResult Distributor::emitElementwise(Operation *op) {
  auto g = cast<linalg::GenericOp>(op);
  if (!isElementwise(g))
    return op->emitOpError()
           << "is a reduction the CUDA lowering does not support yet";
  int id = layoutOf.lookup(g->getResult(0));
  // Reuse the flexible materializer: it computes all results at once.
  flexible.insert(g->getResult(0));
  auto regs0 = materialize(g->getResult(0), id);
  flexible.erase(g->getResult(0));
  if (failed(regs0))
    return failure();
  if (g->getNumResults() == 1) {
    setDist(g->getResult(0), Dist{id, *regs0});
    memo.erase({g->getResult(0), id});
    return success();
  }
  return op->emitOpError()
         << "has several results; the CUDA lowering supports one";
}

SmallVector<Value> Distributor::combine(Block &body, ArrayRef<Value> in,
                                        ArrayRef<Value> acc) {
  IRMapping m;
  for (auto [i, v] : llvm::enumerate(in))
    m.map(body.getArgument(i), v);
  for (auto [i, v] : llvm::enumerate(acc))
    m.map(body.getArgument(in.size() + i), v);
  for (Operation &inner : body.without_terminator())
    b.clone(inner, m);
  SmallVector<Value> out;
  for (Value y : body.getTerminator()->getOperands())
    out.push_back(m.lookupOrDefault(y));
  return out;
}

