//===- GridRanges.cpp - pallas-to-gpu: checks the grid proves ------------===//
//
// The pipeline's integer-range optimization (GpuPipeline.cpp) sees the
// kernel's program ids as unknown i32 arguments, so a bounds check that
// depends on one stays: the K/V loop of causal attention runs to
// `cdiv(block_q * (pid + 1), block_k)`, and without pid's range the checks
// of its dynamic slices cannot be proven, leaving each load a checked fast
// path beside a lane-by-lane slow path, out of reach of the cp.async ring.
// The grid does bound them: program id a lies in [0, grid[a]) and
// num_programs a is grid[a]. Here, on a static grid: each program id is
// clamped (`arith.minui pid, grid - 1`, an identity at run time) and each
// grid size made a constant while the integer-range analysis runs; then
// the clamps go again and every scf.if whose condition the analysis proved
// constant is replaced by its taken branch.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/KernelSkeleton.h"

#include "mlir/Analysis/DataFlow/IntegerRangeAnalysis.h"
#include "mlir/Analysis/DataFlow/Utils.h"
#include "mlir/Analysis/DataFlowFramework.h"

using namespace mlir;
using namespace mlir::pallas;

namespace {

/// A kernel argument replaced while the analysis runs.
struct Bound {
  Value arg;
  Operation *stand = nullptr; ///< the clamp or constant that replaced it
  Operation *limit = nullptr; ///< the clamp's constant operand
};

/// Replaces the branch `ifOp` takes (`taken`) for the scf.if itself.
void inlineTaken(scf::IfOp ifOp, bool taken) {
  Region &region = taken ? ifOp.getThenRegion() : ifOp.getElseRegion();
  if (region.empty()) {
    ifOp->erase(); // no results without an else region
    return;
  }
  Block &block = region.front();
  auto yield = cast<scf::YieldOp>(block.getTerminator());
  ifOp->replaceAllUsesWith(yield.getOperands());
  yield->erase();
  ifOp->getBlock()->getOperations().splice(Block::iterator(ifOp),
                                           block.getOperations());
  ifOp->erase();
}

} // namespace

void mlir::pallas::gpu::foldGridBoundedChecks(func::FuncOp kernel,
                                              const CallInfo &info,
                                              int64_t visibleAxes) {
  const GridMapping &mapping = info.mapping;
  Block &entry = kernel.getBody().front();
  OpBuilder b(kernel.getContext());
  b.setInsertionPointToStart(&entry);
  Location loc = kernel.getLoc();
  SmallVector<Bound> bounds;
  int64_t arg = 0;
  for (int64_t a = 0; a < mapping.getRank(); ++a) {
    if (mapping.isVmapped(a))
      continue;
    int64_t size = mapping.getGrid()[a];
    Value pid = kernel.getArgument(arg), num =
                                           kernel.getArgument(visibleAxes + arg);
    ++arg;
    if (size <= 0 || !pid.getType().isSignlessInteger(32) ||
        !num.getType().isSignlessInteger(32))
      continue;
    if (!pid.use_empty()) {
      Bound clamp{pid};
      clamp.limit = arith::ConstantIntOp::create(b, loc, size - 1, 32);
      clamp.stand = arith::MinUIOp::create(b, loc, pid,
                                           clamp.limit->getResult(0));
      pid.replaceAllUsesExcept(clamp.stand->getResult(0), clamp.stand);
      bounds.push_back(clamp);
    }
    if (!num.use_empty()) {
      Bound constant{num};
      constant.stand = arith::ConstantIntOp::create(b, loc, size, 32);
      num.replaceAllUsesWith(constant.stand->getResult(0));
      bounds.push_back(constant);
    }
  }
  if (bounds.empty())
    return;
  // The conditions the analysis proves constant.
  SmallVector<std::pair<scf::IfOp, bool>> folds;
  {
    DataFlowSolver solver;
    dataflow::loadBaselineAnalyses(solver);
    solver.load<dataflow::IntegerRangeAnalysis>();
    if (succeeded(solver.initializeAndRun(kernel)))
      kernel.walk([&](scf::IfOp ifOp) {
        auto *lattice = solver.lookupState<dataflow::IntegerValueRangeLattice>(
            ifOp.getCondition());
        if (!lattice || lattice->getValue().isUninitialized())
          return;
        std::optional<APInt> c =
            lattice->getValue().getValue().getConstantValue();
        if (c)
          folds.push_back({ifOp, !c->isZero()});
      });
  }
  // The kernel's own arguments again.
  for (Bound &bound : llvm::reverse(bounds)) {
    bound.stand->getResult(0).replaceAllUsesWith(bound.arg);
    bound.stand->erase();
    if (bound.limit)
      bound.limit->erase();
  }
  // Inner ifs first (the walk is post-order): an outer one that drops the
  // region holding them comes after.
  for (auto [ifOp, taken] : folds)
    inlineTaken(ifOp, taken);
}
