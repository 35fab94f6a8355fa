//===- StagingPlans.cpp - the staging plans of dot operands -----*- C++ -*-===//
//
// StagingPlanner (StagingPlanner.h): which dot operands are staged early,
// copied by the TMA or by cp.async stages along the sequential grid axis,
// or prefetched into rings across a loop of the kernel body, and where in
// the workspace each plan's tiles go. DotStaging.cpp emits what they plan.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/Dot/DotUtils.h"
#include "passes/Conversion/PallasToGPU/Analysis/StagingPlanner.h"

#include "dialects/Pallas/IR/PallasOps.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::gpu;
using namespace mlir::pallas::gpu::detail;
using pallasc::MatrixInstrKind;
using pallasc::MatrixOperand;

void StagingPlanner::run() {
  planEarlyStaging();
  planTma();
  planStages();
  planLoopStages();
}

void StagingPlanner::planEarlyStaging() {
  int64_t offset = 0;
  kernel.walk([&](Operation *op) {
    if (!isa<linalg::MatmulOp>(op))
      return;
    auto it = analysis.layoutOf.find(op->getResult(0));
    if (it == analysis.layoutOf.end() ||
        (layout(it->second).family != Layout::Family::MmaC &&
         layout(it->second).family != Layout::Family::MfmaC &&
         layout(it->second).family != Layout::Family::WmmaC &&
         layout(it->second).family != Layout::Family::WgmmaC))
      return;
    DotShape s = dotShape(op);
    // The operand layouts (and so the k step) of the dot's instruction.
    std::optional<WaveMatrixInstr> wave =
        waveMatrixInstr(layout(it->second), *kc.target, s);
    bool wgmma = layout(it->second).family == Layout::Family::WgmmaC;
    const Layout &C = layout(it->second);
    auto lin = cast<linalg::LinalgOp>(op);
    for (int k = 0; k < 2; ++k) {
      Value operand = lin.getDpsInputs()[k];
      if (analysis.streamed.contains(operand) ||
          analysis.flexible.contains(operand) || !operand.hasOneUse())
        continue;
      Value def = operand;
      if (auto t = operand.getDefiningOp<linalg::TransposeOp>()) {
        def = t.getInput();
        if (!def.hasOneUse() || analysis.flexible.contains(def))
          continue;
      }
      auto opLayout = analysis.layoutOf.find(operand);
      if (opLayout == analysis.layoutOf.end() || !analysis.layoutOf.count(def))
        continue;
      if (wgmma) {
        // B is always read from shared memory; A from registers when they
        // hold its fragments.
        if (k == 0 && providesLocally(layout(opLayout->second),
                                      layout(intern(fragmentLayout(
                                          {MatrixInstrKind::Wgmma},
                                          MatrixOperand::A, s.m, s.k,
                                          C.warpsM / 4, C.warpsN)))))
          continue;
        auto type = cast<RankedTensorType>(operand.getType());
        int64_t bytes = type.getNumElements() * 2;
        staging.earlyTiles[def] = StagingState::EarlyTile{
            operand, opLayout->second, kc.workspaceOffset + offset, true};
        offset += (bytes + 127) / 128 * 128;
        continue;
      }
      bool tf32 = !wave && tf32Types(op, s);
      FragmentSelect mma{MatrixInstrKind::MmaSync, tf32 ? 8 : 16};
      int want =
          k == 0 ? intern(wave ? wave->aLayout(s.m, s.k, C.warpsM, C.warpsN)
                               : fragmentLayout(mma, MatrixOperand::A, s.m,
                                                s.k, C.warpsM, C.warpsN))
                 : intern(wave ? wave->bLayout(s.k, s.n, C.warpsM, C.warpsN)
                               : fragmentLayout(mma, MatrixOperand::B, s.k,
                                                s.n, C.warpsM, C.warpsN));
      if (providesLocally(layout(opLayout->second), layout(want)))
        continue;
      // The tile's size, as tileView lays it out.
      auto type = cast<RankedTensorType>(operand.getType());
      const Layout &l = layout(opLayout->second);
      int64_t contiguous = type.getRank() - 1;
      if (!l.regs.empty())
        for (int64_t d = 0; d < type.getRank(); ++d)
          if (l.coord(l.regs[0], d))
            contiguous = d;
      int64_t elemBytes =
          std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
      int64_t last = type.getDimSize(contiguous);
      int64_t rows = type.getNumElements() / last;
      if (last * elemBytes >= 64)
        last += 16 / elemBytes;
      int64_t bytes = rows * last * elemBytes;
      staging.earlyTiles[def] = StagingState::EarlyTile{
          operand, opLayout->second, kc.workspaceOffset + offset};
      offset += (bytes + 127) / 128 * 128;
    }
  });
  kc.workspaceOffset += offset;
}

//===----------------------------------------------------------------------===//
// wgmma (sm_90a)
//===----------------------------------------------------------------------===//

// TMA operands (sm_90a). A dot at the top of the kernel body runs once per
// step of the one sequential grid axis; an operand it reads whole from a
// 2-D input block (kc.tmaSources) is copied by the TMA unit into shared
// memory, `stages` steps ahead. The source block [R, C] (C contiguous) is
// stored as C/64 panels of R rows x 128 bytes, 128-byte swizzled (16-byte
// chunk j of row r at chunk j ^ (r % 8): the CU_TENSOR_MAP_SWIZZLE_128B
// image of a box 64 elements wide), each panel 1024-byte aligned. The
// wgmma descriptors use the canonical 128B-swizzle layouts: k contiguous
// ("K-major"): stride byte offset 1024 (8 rows), leading byte offset unused,
// a k step of 16 adds 32 bytes to the start address within a panel; M/N
// contiguous ("MN-major", transpose bit): leading byte offset = the panel
// stride (64 M/N elements), stride byte offset 1024 (8 k rows). k is
// fetched in chunks of 64 (K-major: one panel, one box [R, 64]; MN-major:
// 64 rows of every panel, boxes [64, 64]), one mbarrier per (stage, chunk):
// the wgmmas of chunk c start when its bytes have landed.

const Layout *StagingPlanner::matmulAccumulator(Operation &o) const {
  if (!isa<linalg::MatmulOp>(o))
    return nullptr;
  auto it = analysis.layoutOf.find(o.getResult(0));
  return it == analysis.layoutOf.end() ? nullptr : &layout(it->second);
}

int64_t StagingPlanner::stagesIn(int64_t room, int64_t stageBytes) const {
  int64_t stages = std::min<int64_t>(
      staging.numStages > 0 ? staging.numStages : 3, room / stageBytes);
  return std::min<int64_t>(stages, 8);
}

void StagingPlanner::planTma() {
  if (!kc.has(pallasc::MatrixInstrKind::Wgmma) || !kc.target->hasTma ||
      !kc.oneSequentialAxis || !kc.addParam)
    return;
  // The shared memory a block may use, less room for the other operands'
  // workspace.
  constexpr int64_t kReserve = 32768;
  for (Operation &o : kernel.getBody().front()) {
    const Layout *acc = matmulAccumulator(o);
    if (!acc || acc->family != Layout::Family::WgmmaC)
      continue;
    DotShape s = dotShape(&o);
    if (s.batch || s.k % 64)
      continue;
    const Layout &C = *acc;
    int64_t nW = s.n / C.warpsN;
    auto lin = cast<linalg::LinalgOp>(&o);
    StagingState::TmaPlan plan;
    for (int k = 0; k < 2; ++k) {
      Value v = lin.getDpsInputs()[k];
      if (!analysis.streamed.contains(v) || !v.hasOneUse())
        continue;
      Value x = v;
      SmallVector<int64_t> perm;
      if (auto t = v.getDefiningOp<linalg::TransposeOp>()) {
        x = t.getInput();
        perm.assign(t.getPermutation().begin(), t.getPermutation().end());
      }
      auto tt = x.getDefiningOp<bufferization::ToTensorOp>();
      if (!tt)
        continue;
      auto src = kc.tmaSources.find(tt.getBuffer());
      if (src == kc.tmaSources.end())
        continue;
      StagingState::TmaOperand op;
      op.value = v;
      op.arg = tt.getBuffer();
      op.kdim = k == 0 ? 1 : 0;
      int64_t sdim = perm.empty() ? op.kdim : perm[op.kdim];
      op.kMajor = sdim == 1;
      op.rows = src->second.blockShape[0];
      op.cols = src->second.blockShape[1];
      // Boxes are at most 256 rows; panels 64 elements wide; MN-major
      // instructions start on a panel.
      if (op.cols % 64 || op.rows % 64 || (op.kMajor && op.rows > 256) ||
          (!op.kMajor && k == 1 && nW % 64))
        continue;
      SmallVector<int64_t, 2> box = {op.kMajor ? op.rows : 64, 64};
      int map = -1;
      for (auto [i, m] : llvm::enumerate(kc.tensorMaps))
        if (m.input == src->second.input && m.boxShape == box)
          map = static_cast<int>(i);
      if (map < 0) {
        KernelContext::TensorMap m;
        m.input = src->second.input;
        m.elementType = s.a;
        m.globalShape = src->second.globalShape;
        m.boxShape = box;
        m.param = kc.addParam(LLVM::LLVMPointerType::get(kernel.getContext()));
        kc.tensorMaps.push_back(m);
        map = static_cast<int>(kc.tensorMaps.size()) - 1;
      }
      op.map = map;
      op.offset = plan.stageBytes;
      plan.stageBytes += op.rows * op.cols * 2;
      plan.operands.push_back(op);
    }
    if (plan.operands.empty())
      continue;
    plan.numChunks = s.k / plan.chunkK;
    int64_t room = kc.maxSharedBytes - kReserve - kc.workspaceOffset - 1024 -
                   8 * 8 * plan.numChunks;
    plan.stages = stagesIn(room, plan.stageBytes);
    if (plan.stages < 1)
      continue;
    plan.region = kc.workspaceOffset;
    kc.workspaceOffset += plan.stages * plan.stageBytes + 1024;
    plan.barriers = kc.workspaceOffset;
    kc.workspaceOffset += (plan.stages * plan.numChunks * 8 + 127) / 128 * 128;
    staging.tmaPlans[&o] = plan;
  }
}

// cp.async stages (sm_80+, mma.sync). As for TMA, a dot at the top of the
// kernel body with one sequential grid axis: every operand it streams from
// global memory is a whole 2-D input block (kc.tmaSources), copied with
// cp.async into the padded tile stage() would use, `stages` steps ahead.
// Per step each thread commits one cp.async group (empty when the step is
// out of range), so `cp.async.wait_group stages-1` leaves the current
// step's copies complete; a barrier publishes them.

void StagingPlanner::planStages() {
  if (!kc.target->hasCpAsync || !kc.oneSequentialAxis)
    return;
  constexpr int64_t kReserve = 16384;
  for (Operation &o : kernel.getBody().front()) {
    if (staging.tmaPlans.count(&o))
      continue;
    const Layout *acc = matmulAccumulator(o);
    if (!acc || acc->family != Layout::Family::MmaC)
      continue;
    DotShape s = dotShape(&o);
    if (s.batch)
      continue;
    auto lin = cast<linalg::LinalgOp>(&o);
    StagingState::StagePlan plan;
    bool ok = true;
    for (int k = 0; k < 2 && ok; ++k) {
      Value v = lin.getDpsInputs()[k];
      if (!analysis.streamed.contains(v))
        continue;
      Value x = v;
      if (auto t = v.getDefiningOp<linalg::TransposeOp>())
        x = t.getInput();
      auto tt = x.getDefiningOp<bufferization::ToTensorOp>();
      auto src = tt ? kc.tmaSources.find(tt.getBuffer()) : kc.tmaSources.end();
      if (!v.hasOneUse() || src == kc.tmaSources.end()) {
        ok = false; // not mixed with the per-step chunked copies
        break;
      }
      int64_t rows = src->second.blockShape[0];
      int64_t cols = src->second.blockShape[1];
      if (cols * 2 >= 64)
        cols += 8; // tileView's padding (16 bytes)
      plan.values.push_back(v);
      plan.kdims.push_back(k == 0 ? 1 : 0);
      plan.offsets.push_back(plan.stageBytes);
      plan.stageBytes += (rows * cols * 2 + 127) / 128 * 128;
    }
    if (!ok || plan.values.empty())
      continue;
    int64_t room = kc.maxSharedBytes - kReserve - kc.workspaceOffset;
    plan.stages = stagesIn(room, plan.stageBytes);
    // One stage: the chunked copies of the step itself do better.
    if (plan.stages < 2)
      continue;
    plan.region = kc.workspaceOffset;
    kc.workspaceOffset += plan.stages * plan.stageBytes;
    staging.stagePlans[&o] = plan;
  }
}

//===----------------------------------------------------------------------===//
// cp.async rings across an scf.for in the kernel body
//===----------------------------------------------------------------------===//

// A loop in the kernel body whose dots stream operands from a window of a
// read-only kernel argument that moves with the induction variable (flash
// attention's K and V blocks, `pl.load(k_ref, (pl.ds(kb * block_k, ...)))`):
// with `num_stages` = S >= 2 (compiler params), each such operand gets a
// ring of S tiles (the tiles the dot would copy into: padded for mma.sync,
// core-matrix tiles for wgmma) and its copies run S - 1 iterations ahead.
// Before the loop, iterations 0 .. S-2 are issued (each under `iv < ub`),
// one cp.async group each; at the start of iteration i:
//   cp.async.wait_group S-2   (the groups of iterations > i may be pending)
//   [fence.proxy.async: wgmma reads through the async proxy]
//   barrier                   (iteration i's tile complete for every thread,
//                              and every warp done reading iteration i-1's)
//   issue iteration i+S-1 into slot (i+S-1) mod S = (i-1) mod S, under
//   `iv + (S-1) step < ub`; one commit (empty past the end: the count stays
//   uniform, so the wait above stays right)
// and the dots read slot i mod S with no wait or barrier of their own. A
// ring that does not fit the chip's shared memory next to the rest of the
// workspace is shortened, and below 2 stages dropped (a remark says so):
// the dots then copy per chunk as before. Without `num_stages` (or with 1),
// and on chips without cp.async (AMD), nothing changes.

bool mlir::pallas::gpu::windowSlice(memref::SubViewOp sv, scf::ForOp forOp,
                                    SmallVectorImpl<Operation *> &slice) {
  Block *body = forOp.getBody();
  llvm::SmallPtrSet<Operation *, 8> seen;
  SmallVector<Value> work(sv.getOffsets().begin(), sv.getOffsets().end());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (v == forOp.getInductionVar())
      continue;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (forOp->isAncestor(arg.getOwner()->getParentOp()))
        return false; // an iter_arg: not known ahead
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (!forOp->isAncestor(def))
      continue; // loop-invariant, emitted before the loop
    if (def->getBlock() != body || def->getNumRegions() ||
        !isMemoryEffectFree(def))
      return false;
    for (Type t :
         llvm::concat<Type>(def->getOperandTypes(), def->getResultTypes()))
      if (isa<ShapedType>(t))
        return false;
    if (!seen.insert(def).second)
      continue;
    slice.push_back(def);
    llvm::append_range(work, def->getOperands());
  }
  llvm::sort(slice,
             [](Operation *x, Operation *y) { return x->isBeforeInBlock(y); });
  return true;
}

void StagingPlanner::planLoopStages() {
  if (!kc.target->hasCpAsync || staging.numStages < 2)
    return;
  // Room left for the rest of the workspace (conversions, reductions, the
  // tiles of other operands), as planStages.
  constexpr int64_t kReserve = 16384;
  kernel.walk([&](scf::ForOp forOp) {
    Block *body = forOp.getBody();
    StagingState::LoopStagePlan plan;
    for (Operation &o : *body) {
      const Layout *acc = matmulAccumulator(o);
      if (!acc)
        continue;
      Layout::Family family = acc->family;
      bool core = family == Layout::Family::WgmmaC;
      if (family != Layout::Family::MmaC && !core)
        continue;
      DotShape s = dotShape(&o);
      if (s.batch || s.a.getIntOrFloatBitWidth() != 16)
        continue;
      auto lin = cast<linalg::LinalgOp>(&o);
      for (int k = 0; k < 2; ++k) {
        Value v = lin.getDpsInputs()[k];
        if (!analysis.streamed.contains(v) || !v.hasOneUse())
          continue;
        Value x = v;
        if (auto t = v.getDefiningOp<linalg::TransposeOp>())
          x = t.getInput();
        auto tt = x.getDefiningOp<bufferization::ToTensorOp>();
        auto sv = tt ? tt.getBuffer().getDefiningOp<memref::SubViewOp>()
                     : memref::SubViewOp();
        auto type = cast<RankedTensorType>(x.getType());
        SmallVector<Operation *> slice;
        if (!sv || sv->getBlock() != body || type.getRank() != 2 ||
            forOp->isAncestor(sv.getSource().getParentBlock()->getParentOp()) ||
            !isReadOnly(sv.getSource()) ||
            ShapedType::isDynamicShape(sv.getStaticSizes()) ||
            llvm::any_of(sv.getStaticStrides(),
                         [](int64_t st) { return st != 1; }) ||
            (type.getDimSize(1) * 2) % 16 || !windowSlice(sv, forOp, slice))
          continue;
        int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
        if (!core && cols * 2 >= 64)
          cols += 8; // tileView's padding (16 bytes)
        StagingState::LoopStageOperand op;
        op.value = v;
        op.window = sv;
        op.core = core;
        op.offset = plan.stageBytes;
        plan.stageBytes += (rows * cols * 2 + 127) / 128 * 128;
        plan.operands.push_back(op);
      }
    }
    if (plan.operands.empty())
      return;
    int64_t room = kc.maxSharedBytes - kReserve - kc.workspaceOffset;
    plan.stages =
        std::min<int64_t>({staging.numStages, int64_t(8),
                           std::max<int64_t>(room, 0) / plan.stageBytes});
    if (plan.stages < 2) {
      forOp->emitRemark() << "num_stages " << staging.numStages
                          << ": a ring of 2 stages of " << plan.stageBytes
                          << " bytes of the loop's dot operands does not "
                          << "fit the " << kc.maxSharedBytes
                          << " bytes of shared memory; "
                          << "the operands are copied at each dot instead";
      return;
    }
    if (plan.stages < staging.numStages)
      forOp->emitRemark() << "num_stages " << staging.numStages << ": only "
                          << plan.stages << " stages of " << plan.stageBytes
                          << " bytes fit the shared memory";
    plan.region = kc.workspaceOffset;
    kc.workspaceOffset += plan.stages * plan.stageBytes;
    staging.loopPlans[forOp] = plan;
  });
}
