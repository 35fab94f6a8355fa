//===- BoundLoopNests.cpp - pallas-cpu-bound-loop-nests -----------*- C++ -*-===//
//
// Copies the tensors carried into every `segment-depth`-th level of a deep
// scf.for / scf.while nest (see Passes.td), so that one-shot bufferization's
// inference of loop buffer types, which visits the init and the yielded value
// of a loop and memoizes nothing, never climbs more than `segment-depth`
// levels: without the copies it takes time exponential in the depth.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/Passes.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::pallas {
#define GEN_PASS_DEF_PALLASCPUBOUNDLOOPNESTS
#include "passes/Conversion/Passes.h.inc"
} // namespace mlir::pallas

using namespace mlir;

namespace {

/// The init operands of a loop (scf.for's iter_args, scf.while's operands).
MutableArrayRef<OpOperand> loopInits(Operation *op) {
  if (auto forOp = dyn_cast<scf::ForOp>(op))
    return forOp.getInitArgsMutable();
  if (auto whileOp = dyn_cast<scf::WhileOp>(op))
    return whileOp->getOpOperands();
  return {};
}

bool carriesTensor(Operation *op) {
  return llvm::any_of(loopInits(op), [](OpOperand &init) {
    return isa<TensorType>(init.get().getType());
  });
}

/// Whether bufferization knows the buffer type of `value` without following
/// its use-def chain: a function argument or the result of an op that makes
/// a new tensor or wraps a buffer.
bool hasImmediateBufferType(Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return isa<FunctionOpInterface>(arg.getOwner()->getParentOp());
  return isa<tensor::EmptyOp, bufferization::AllocTensorOp,
             bufferization::ToTensorOp, arith::ConstantOp>(
      value.getDefiningOp());
}

struct PallasCpuBoundLoopNestsPass
    : pallas::impl::PallasCpuBoundLoopNestsBase<PallasCpuBoundLoopNestsPass> {
  using Base::Base;

  void runOnOperation() override {
    int64_t segment = segmentDepth;
    if (segment < 1) {
      getOperation()->emitError("pallas-cpu-bound-loop-nests: segment-depth "
                                "must be at least 1, got ")
          << segment;
      return signalPassFailure();
    }
    // The level of every tensor-carrying loop: 1 + the level of the nearest
    // enclosing one. A pre-order walk visits the enclosing loops first.
    DenseMap<Operation *, int64_t> level;
    SmallVector<Operation *> cut;
    getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (!isa<scf::ForOp, scf::WhileOp>(op) || !carriesTensor(op))
        return;
      int64_t depth = 1;
      for (Operation *p = op->getParentOp(); p; p = p->getParentOp()) {
        auto it = level.find(p);
        if (it != level.end()) {
          depth = it->second + 1;
          break;
        }
      }
      level[op] = depth;
      if (depth > 1 && (depth - 1) % segment == 0)
        cut.push_back(op);
    });

    for (Operation *op : cut) {
      OpBuilder b(op);
      for (OpOperand &init : loopInits(op)) {
        auto type = dyn_cast<RankedTensorType>(init.get().getType());
        if (!type || hasImmediateBufferType(init.get()))
          continue;
        // A fresh tensor in the default memory space (0, which the memref
        // type drops), holding a copy of the init: its buffer type is an
        // identity-layout memref, known without looking at `%init`.
        auto copy = bufferization::AllocTensorOp::create(
            b, op->getLoc(), type, /*dynamicSizes=*/ValueRange{},
            /*copy=*/init.get(), b.getI64IntegerAttr(0));
        init.set(copy);
      }
    }
  }
};

} // namespace
