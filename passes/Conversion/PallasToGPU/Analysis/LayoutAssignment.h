//===- LayoutAssignment.h - the layout of every block value -----*- C++ -*-===//
//
// The analysis that gives every tensor value of a kernel a layout
// (Layout.h) before anything is emitted: blocked layouts for memory and
// elementwise ops, each dot's instruction layout (DotLayout.cpp: the matrix
// instruction of the chip's target table entry) and what their consumers
// demand, iterated to a fixed point. It reads the kernel, the kernel
// context and the scratch buffers' and arguments' bindings, and writes
// only the layout table and its result (LayoutAssignmentResult), which the
// emitters then read (EmitContext::analysis). pallas-to-gpu's
// print-layouts prints the result as remarks (printLayouts).
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_CONVERSION_PALLASTOGPU_ANALYSIS_LAYOUTASSIGNMENT_H
#define PALLASC_PASSES_CONVERSION_PALLASTOGPU_ANALYSIS_LAYOUTASSIGNMENT_H

#include "passes/Conversion/PallasToGPU/DistributeState.h"

namespace mlir::pallas::gpu {

class LayoutAssignment {
public:
  /// `promotion` (which kernel arguments are scratch) and `emission` (the
  /// views the kernel's memref arguments are bound to) are read only.
  LayoutAssignment(KernelContext &kc, func::FuncOp kernel, LayoutTable &table,
                   LayoutAssignmentResult &result,
                   const PromotionState &promotion,
                   const EmissionState &emission)
      : kc(kc), kernel(kernel), table(table), result(result),
        promotion(promotion), emission(emission) {}

  /// Assigns the layouts (the flexible, deferred and streamed values too).
  LogicalResult run();
  /// The accumulator layout of a dot: its matrix instruction's
  /// (DotLayout.cpp), else a blocked one for the SIMT dot.
  int dotLayout(Operation *op);
  /// A remark on each op of the kernel body per tensor result: the layout
  /// the analysis gave it (pallas-to-gpu's print-layouts, for tests).
  void printLayouts();

private:
  // The steps of run(), in order.
  /// Flexible values (constants and what is computed from them alone) and
  /// the values whose layout their uses decide (deferred).
  void findFlexible();
  /// Broadcast operands read from memory, with their broadcasts.
  void findBroadcastReads();
  /// Rows reduced along their last dimension and combined with a
  /// broadcast vector: warps along the reduced dimension.
  void assignRowReduced();
  /// Whether `tt`'s rows are reduced along their last dimension and
  /// combined with a broadcast read (assignRowReduced).
  bool isRowReduced(bufferization::ToTensorOp tt);
  /// analyzeBlock over the kernel body until nothing changes.
  void fixedPoint();
  /// The deferred values take the layout their uses ask for.
  void resolveDeferred();
  /// Loop-carried values nothing decided take the default layout.
  void assignLoopCarried();
  /// Single-use loads of read-only memory feeding a dot in the same block.
  void findStreamed();

  bool analyzeBlock(Block &block);
  bool assign(Value v, int id);
  int chooseElementwise(Operation *op);
  int demandedLayout(OpOperand &use);
  bool isScratch(Value memref);
  bool isReadOnly(Value memref) const {
    return result.isReadOnly(memref, kernel);
  }
  int intern(const Layout &layout) { return table.intern(layout); }
  const Layout &layout(int id) const { return table.layout(id); }
  int defaultLayout(RankedTensorType type) { return table.blocked(type, kc); }

  KernelContext &kc;
  func::FuncOp kernel;
  LayoutTable &table;
  LayoutAssignmentResult &result;
  const PromotionState &promotion;
  const EmissionState &emission;
  /// The broadcast reads and their broadcasts (findBroadcastReads).
  DenseSet<Operation *> broadcastReads;
};

} // namespace mlir::pallas::gpu

#endif // PALLASC_PASSES_CONVERSION_PALLASTOGPU_ANALYSIS_LAYOUTASSIGNMENT_H
