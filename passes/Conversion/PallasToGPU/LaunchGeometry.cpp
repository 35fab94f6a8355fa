//===- LaunchGeometry.cpp - pallas-to-gpu: the grid as launched -*- C++ -*-===//
//
// How the pallas grid maps to a CUDA/HIP launch: warps per block, the
// launched axes folded into x, y and z (as Pallas' Triton lowering folds
// them), their sizes and indices inside the kernel, and the loops of the
// axes that run in order inside one block.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/KernelSkeleton.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::pallas;

namespace mlir::pallas::gpu {

namespace {
constexpr int64_t kYZLimit = 65535;
} // namespace

LogicalResult checkNumWarps(func::FuncOp kernel,
                            const pallasc::GpuTarget &target,
                            int64_t numWarps) {
  int64_t maxWarps = target.maxWarpsPerBlock();
  if (numWarps >= 1 && numWarps <= maxWarps && llvm::isPowerOf2_64(numWarps))
    return success();
  return kernel.emitError()
         << "num_warps is " << numWarps << "; the " << target.vendorName()
         << " lowering needs a power of two in [1, " << maxWarps << "] ("
         << target.lanesPerWarp << " threads each, at "
         << "most " << target.maxThreadsPerBlock << " per block)";
}

FailureOr<LaunchGeometry> computeLaunchGeometry(ModuleOp module,
                                                const GridMapping &mapping) {
  int64_t rank = mapping.getRank();
  LaunchGeometry g;
  g.seqAxes = mapping.getSequentialAxes();
  SmallVector<int64_t> launch; // pallas axes, in launch order
  for (int64_t a = 0; a < rank; ++a)
    if (!mapping.isVmapped(a) && !llvm::is_contained(g.seqAxes, a))
      launch.push_back(a);
  for (int64_t a : llvm::reverse(mapping.getVmappedAxes()))
    launch.push_back(a);
  auto sizeOf = [&](int64_t a) { return mapping.getGrid()[a]; };
  auto overLimit = [&](int64_t a) {
    return sizeOf(a) < 0 || sizeOf(a) > kYZLimit;
  };
  int64_t n = launch.size();
  int64_t numCollapse = std::max<int64_t>(0, n - 2);
  if (numCollapse + 1 < n && overLimit(launch[numCollapse + 1]))
    numCollapse += 2;
  else if (numCollapse < n && overLimit(launch[numCollapse]))
    numCollapse += 1;
  g.cudaAxes.resize(3);
  if (numCollapse == 0) {
    for (int64_t i = 0; i < n; ++i)
      g.cudaAxes[i].push_back(launch[i]);
  } else {
    for (int64_t i = 0; i < numCollapse; ++i)
      g.cudaAxes[0].push_back(launch[i]);
    for (int64_t i = numCollapse; i < n; ++i)
      g.cudaAxes[i - numCollapse + 1].push_back(launch[i]);
  }
  for (auto &axes : g.cudaAxes) {
    int64_t size = 1;
    for (int64_t a : axes)
      size = (size < 0 || sizeOf(a) < 0) ? -1 : size * sizeOf(a);
    g.cudaGrid.push_back(size);
  }
  if (g.cudaGrid[0] > std::numeric_limits<int32_t>::max() ||
      g.cudaGrid[1] > kYZLimit || g.cudaGrid[2] > kYZLimit)
    return module.emitError() << "the grid does not fit CUDA's launch limits";
  return g;
}

GridValues emitGridValues(OpBuilder &b, Location loc,
                          const GridMapping &mapping,
                          const LaunchGeometry &geometry, Block &body,
                          int64_t firstBoundArg) {
  int64_t rank = mapping.getRank();
  auto cst = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  GridValues grid;
  // Grid sizes (index).
  grid.gridSize.resize(rank);
  {
    int64_t next = firstBoundArg;
    for (int64_t a = 0; a < rank; ++a)
      grid.gridSize[a] =
          mapping.getGrid()[a] >= 0
              ? cst(mapping.getGrid()[a]).getResult()
              : arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                           body.getArgument(next++))
                    .getResult();
  }
  // Grid indices of the launched axes.
  grid.gridIdx.resize(rank);
  const SmallVector<SmallVector<int64_t>> &cudaAxes = geometry.cudaAxes;
  SmallVector<Value> &gridSize = grid.gridSize, &gridIdx = grid.gridIdx;
  Operation *firstAfterPrologue = nullptr;
  {
    mlir::gpu::Dimension dims[3] = {mlir::gpu::Dimension::x,
                                    mlir::gpu::Dimension::y,
                                    mlir::gpu::Dimension::z};
    for (int64_t c = 0; c < 3; ++c) {
      if (cudaAxes[c].empty())
        continue;
      Value id = mlir::gpu::BlockIdOp::create(b, loc, dims[c]);
      if (!firstAfterPrologue)
        firstAfterPrologue = id.getDefiningOp();
      for (auto [i, a] : llvm::enumerate(cudaAxes[c])) {
        if (i + 1 == cudaAxes[c].size()) {
          gridIdx[a] = cudaAxes[c].size() == 1
                           ? id
                           : arith::RemUIOp::create(b, loc, id, gridSize[a])
                                 .getResult();
          break;
        }
        gridIdx[a] = arith::RemUIOp::create(b, loc, id, gridSize[a]);
        id = arith::DivUIOp::create(b, loc, id, gridSize[a]);
      }
    }
  }
  if (!firstAfterPrologue)
    firstAfterPrologue = cst(0).getOperation();
  grid.firstAfterPrologue = firstAfterPrologue;
  return grid;
}

SmallVector<scf::ForOp> openSequentialLoops(OpBuilder &b, Location loc,
                                            Distributor &dist,
                                            ArrayRef<int64_t> seqAxes,
                                            GridValues &grid) {
  auto cst = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  SmallVector<Value> state = dist.initialPromotedState(b);
  SmallVector<scf::ForOp> loops;
  for (int64_t a : seqAxes) {
    auto loop =
        scf::ForOp::create(b, loc, cst(0), grid.gridSize[a], cst(1), state);
    grid.gridIdx[a] = loop.getInductionVar();
    // Our own scf.yield (with the carried state) ends the body.
    if (loop.getBody()->mightHaveTerminator())
      loop.getBody()->getTerminator()->erase();
    b.setInsertionPointToEnd(loop.getBody());
    state.assign(loop.getRegionIterArgs().begin(),
                 loop.getRegionIterArgs().end());
    loops.push_back(loop);
  }
  dist.setPromotedState(state);
  return loops;
}

void closeSequentialLoops(OpBuilder &b, Location loc, Distributor &dist,
                          ArrayRef<scf::ForOp> loops) {
  SmallVector<Value> state = dist.promotedState();
  for (scf::ForOp loop : llvm::reverse(loops)) {
    b.setInsertionPointToEnd(loop.getBody());
    scf::YieldOp::create(b, loc, state);
    state.assign(loop.getResults().begin(), loop.getResults().end());
    // Pipelined wgmma groups of the sequential axis (the innermost loop)
    // complete before it ends: a next round would refill their stages.
    if (dist.pipelinesWgmma() && loop == loops.back()) {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointAfter(loop);
      NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
    }
  }
}

} // namespace mlir::pallas::gpu
