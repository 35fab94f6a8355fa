//===- StagingPlanner.h - where dot operands wait in shared memory -*- C++
//-*-===//
//
// The plans of the staging of dot operands, made before anything is
// emitted (after the layout assignment, whose result they read): tiles
// staged where an operand is defined (EarlyTile), TMA copies of wgmma
// operands (TmaPlan, sm_90a) and cp.async stages of mma.sync operands
// (StagePlan) along the one sequential grid axis, and cp.async rings of the
// operands a loop of the kernel body streams (LoopStagePlan). They write
// only the staging state and the workspace (and, for TMA, the kernel's
// tensor map parameters); the emission of the copies they plan is the
// distributor's (DotStaging.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_CONVERSION_PALLASTOGPU_ANALYSIS_STAGINGPLANNER_H
#define PALLASC_PASSES_CONVERSION_PALLASTOGPU_ANALYSIS_STAGINGPLANNER_H

#include "passes/Conversion/PallasToGPU/DistributeState.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::pallas::gpu {

class StagingPlanner {
public:
  StagingPlanner(KernelContext &kc, func::FuncOp kernel, LayoutTable &table,
                 const LayoutAssignmentResult &analysis, StagingState &staging)
      : kc(kc), kernel(kernel), table(table), analysis(analysis),
        staging(staging) {}

  /// Makes every plan, in order: early tiles, TMA, cp.async stages, rings.
  void run();

private:
  void planEarlyStaging();
  /// The TMA copies of wgmma operands (TmaPlan).
  void planTma();
  /// The cp.async stages of mma.sync operands (StagePlan).
  void planStages();
  /// The rings (after planStages).
  void planLoopStages();

  int intern(const Layout &layout) { return table.intern(layout); }
  const Layout &layout(int id) const { return table.layout(id); }
  /// The layout the analysis chose for `o`'s result when `o` is a
  /// linalg.matmul (its accumulator layout), else null.
  const Layout *matmulAccumulator(Operation &o) const;
  /// The prefetch stages of `stageBytes` each that `room` bytes hold: the
  /// requested num_stages (default 3), at most 8.
  int64_t stagesIn(int64_t room, int64_t stageBytes) const;
  bool isReadOnly(Value memref) const {
    return analysis.isReadOnly(memref, kernel);
  }

  KernelContext &kc;
  func::FuncOp kernel;
  LayoutTable &table;
  const LayoutAssignmentResult &analysis;
  StagingState &staging;
};

/// The scalar ops of `forOp`'s body the offsets of the window `sv` are
/// computed from, in order; false when one is not a pure scalar op of the
/// body itself (a ring cannot compute the window ahead).
bool windowSlice(memref::SubViewOp sv, scf::ForOp forOp,
                 SmallVectorImpl<Operation *> &slice);

} // namespace mlir::pallas::gpu

#endif // PALLASC_PASSES_CONVERSION_PALLASTOGPU_ANALYSIS_STAGINGPLANNER_H
