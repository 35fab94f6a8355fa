//===- Epilogue.cpp - dot results stored through shared memory --*- C++ -*-===//
//
// A matrix instruction's accumulator layout (mma.sync, wgmma, MFMA) gives
// each thread short runs of a row (mma.sync and wgmma: 2 adjacent columns;
// MFMA: 1), so stored directly to global memory it makes 8-byte (f32) or
// 4-byte (f16) accesses, or narrower. When the output block's
// rows are contiguous and 16-byte aligned (what the blocked layout's store
// would prove, Memory.cpp vectorWidth), the tile goes through shared memory
// instead, as Triton's epilogue does: the fragments are written to a padded
// buffer in the workspace, a barrier, then every thread reads 16 contiguous
// bytes in the blocked layout (consecutive lanes: consecutive 16-byte chunks
// of a row) and stores them with one `st.global.v4`.
//
// A whole 128x128 f32 tile would take 64 KiB, more than the workspace the
// stage planner leaves (StagingPlans.cpp). The tile is therefore restaged in
// chunks: the accumulator's outermost register bases that walk rows only
// (the M repetitions of the instruction tile) select the chunk, so every
// warp takes part in each one and the buffer holds the rows of one chunk.
// In layout terms the [R, C] tile is viewed as [runs of row bits..., C]: the
// chunk's row bits are dimensions of stride 0 in the buffer and of their own
// stride in the output (View dims may walk one base dimension several
// times). The buffer's row padding is chosen by counting the bank conflicts
// of one warp's fragment writes and 16-byte reads.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/Distribute.h"
#include "passes/Conversion/PallasToGPU/DistributeUtils.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/MathExtras.h"

#define DEBUG_TYPE "pallas-to-gpu"

using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::gpu;
using namespace mlir::pallas::gpu::detail;

namespace {

/// Shared memory the restaging may take without asking: what the stage
/// planner keeps for the workspace (DotStaging.cpp's kReserve).
constexpr int64_t kEpilogueBudget = 16384;

/// Moves the bits of a row between the tile's numbering (`rowBits` bits)
/// and the chunk buffer's (the same bits without those in `chunkBits`):
/// `expand` inserts zero bits at the chunk positions (a buffer row seen as
/// a tile row with the chunk bits zero), else they are dropped (the buffer
/// row of a tile row).
uint64_t remapRowBits(uint64_t row, ArrayRef<int64_t> chunkBits,
                      int64_t rowBits, bool expand) {
  uint64_t out = 0;
  int64_t next = 0;
  for (int64_t p = 0; p < rowBits; ++p) {
    if (llvm::is_contained(chunkBits, p))
      continue;
    int64_t from = expand ? next : p, to = expand ? p : next;
    if (row & (uint64_t(1) << from))
      out |= uint64_t(1) << to;
    ++next;
  }
  return out;
}

/// Bank conflicts of warp 0's access to register group `reg` of `l` ([R, C]
/// tile in the buffer, rows `pitch` bytes apart) with `width`-byte accesses:
/// the sum over the access phases (128 bytes each) of the most distinct
/// 4-byte words one of the 32 banks serves.
int64_t bankCost(const Layout &l, int64_t reg, int64_t width,
                 int64_t elemBytes, int64_t pitch, ArrayRef<int64_t> chunkBits,
                 int64_t threadsPerWarp) {
  int64_t rowBits = log2Exact(l.shape[0]);
  uint64_t regLin = l.regLinear(reg);
  int64_t perPhase =
      std::clamp<int64_t>(128 / std::max<int64_t>(width, 1), 1, 32);
  int64_t cost = 0;
  for (int64_t p0 = 0; p0 < threadsPerWarp; p0 += perPhase) {
    DenseMap<int64_t, DenseSet<int64_t>> words;
    for (int64_t lane = p0; lane < p0 + perPhase && lane < threadsPerWarp;
         ++lane) {
      uint64_t lin = regLin;
      for (size_t i = 0; i < l.lanes.size(); ++i)
        if (lane & (int64_t(1) << i))
          lin ^= l.lanes[i];
      int64_t row = remapRowBits(l.coord(lin, 0), chunkBits, rowBits,
                                 /*expand=*/false);
      int64_t addr = row * pitch + l.coord(lin, 1) * elemBytes;
      for (int64_t w = addr / 4; w < (addr + width + 3) / 4; ++w)
        words[w % 32].insert(w);
    }
    int64_t worst = 0;
    for (auto &[bank, set] : words)
      worst = std::max<int64_t>(worst, set.size());
    cost += worst;
  }
  return cost;
}

/// Whether a barrier already separates the insertion point from every
/// earlier shared-memory access: walking back in the block, a barrier comes
/// before anything but pure ops and global loads and stores.
bool barrierJustBefore(OpBuilder &b) {
  Block *block = b.getInsertionBlock();
  for (auto it = b.getInsertionPoint(); it != block->begin();) {
    Operation &op = *--it;
    if (isa<mlir::gpu::BarrierOp>(op))
      return true;
    if (op.getNumRegions() != 0)
      return false;
    if (isMemoryEffectFree(&op))
      continue;
    // Masked accesses end the walk as other ops do.
    Value memref = isa<vector::MaskedLoadOp, vector::MaskedStoreOp>(op)
                       ? Value()
                       : accessedMemref(&op);
    auto type = memref ? dyn_cast<MemRefType>(memref.getType()) : nullptr;
    if (!type || isa_and_nonnull<mlir::gpu::AddressSpaceAttr>(
                     type.getMemorySpace()))
      return false;
  }
  return false;
}

/// mma.sync, wgmma and MFMA accumulators.
bool isAccumulatorFamily(Layout::Family f) {
  return f == Layout::Family::MmaC || f == Layout::Family::WgmmaC ||
         f == Layout::Family::MfmaC;
}

/// Whether the kernel op `at` lies inside a loop of the kernel or after one
/// (a loop among the ops before it, in its block or an enclosing one): then
/// values computed before that loop and used at `at` live across it.
bool inOrAfterKernelLoop(Operation *at) {
  Block *blk = at->getBlock();
  Block::iterator end = Block::iterator(at);
  while (blk) {
    for (Operation &op : llvm::make_range(blk->begin(), end)) {
      if (op.getNumRegions() == 0)
        continue;
      bool loop = false;
      op.walk([&](LoopLikeOpInterface) {
        loop = true;
        return WalkResult::interrupt();
      });
      if (loop)
        return true;
    }
    Operation *parent = blk->getParentOp();
    if (!parent || isa<FunctionOpInterface>(parent))
      return false;
    if (isa<LoopLikeOpInterface>(parent))
      return true;
    end = Block::iterator(parent);
    blk = parent->getBlock();
  }
  return false;
}

/// `mov.u32 $0, REG;` as inline PTX with side effects (index): LLVM
/// neither merges it with another read of REG nor moves it, so what is
/// computed from it is computed here, not kept live from the prologue.
/// The GPU emulator (HostKernel.cpp) knows %tid.x and %ctaid.x/y/z.
Value readSpecialRegister(OpBuilder &b, Location loc, StringRef reg) {
  Value r =
      LLVM::InlineAsmOp::create(
          b, loc, b.getI32Type(), ValueRange{},
          b.getStringAttr(("mov.u32 $0, " + reg + ";").str()),
          b.getStringAttr("=r"), b.getUnitAttr(), nullptr,
          LLVM::TailCallKindAttr::get(b.getContext(),
                                      LLVM::tailcallkind::TailCallKind::None),
          nullptr, nullptr)
          .getResult(0);
  return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), r);
}

/// `v` recomputed at the insertion point of `b`: its backward slice of
/// memory-effect-free single-result ops down to the block indices, each
/// `gpu.block_id` read again (readSpecialRegister). Values not depending on
/// a block index (constants, kernel parameters, loop indices) and ops with
/// effects or regions are used as they are.
Value rebuildFromBlockIds(OpBuilder &b, Location loc, Value v,
                          IRMapping &map, int depth = 0) {
  if (Value m = map.lookupOrNull(v))
    return m;
  Operation *def = v.getDefiningOp();
  if (!def || depth > 64)
    return v;
  if (auto bid = dyn_cast<mlir::gpu::BlockIdOp>(def)) {
    const char *names[] = {"%ctaid.x", "%ctaid.y", "%ctaid.z"};
    Value r = readSpecialRegister(
        b, loc, names[static_cast<int>(bid.getDimension())]);
    map.map(v, r);
    return r;
  }
  if (def->getNumResults() != 1 || def->getNumRegions() != 0 ||
      !isMemoryEffectFree(def) || isa<mlir::gpu::ThreadIdOp>(def))
    return v;
  bool changed = false;
  for (Value operand : def->getOperands())
    if (rebuildFromBlockIds(b, loc, operand, map, depth + 1) != operand)
      changed = true;
  if (!changed)
    return v;
  Value r = b.clone(*def, map)->getResult(0);
  map.map(v, r);
  return r;
}

/// `v` without integer casts.
Value stripCasts(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
             arith::ExtUIOp, arith::TruncIOp>(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

/// The value of the integer `v` when it folds to a constant through
/// constants, casts, additions, subtractions and multiplications.
std::optional<int64_t> constantValue(Value v, int depth = 0) {
  v = stripCasts(v);
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return c;
  Operation *def = v.getDefiningOp();
  if (!def || depth > 8 || !isa<arith::AddIOp, arith::SubIOp, arith::MulIOp>(def))
    return std::nullopt;
  std::optional<int64_t> x = constantValue(def->getOperand(0), depth + 1);
  std::optional<int64_t> y = constantValue(def->getOperand(1), depth + 1);
  if (!x || !y)
    return std::nullopt;
  if (isa<arith::AddIOp>(def))
    return *x + *y;
  if (isa<arith::SubIOp>(def))
    return *x - *y;
  return *x * *y;
}

/// The accumulator tile an epilogue restages: its layout, element type and
/// bytes, its [R, C] shape as bits, the width of one thread's fragments.
struct EpilogueTile {
  const Layout &acc;
  Type elem;
  int64_t eb, R, C, rowBits, colBits, rowBytes, fragWidth;
};

/// How the tile is restaged: the register bits selecting its chunks (and
/// the row bits they walk), the buffer's row pitch and bytes, the blocked
/// layout the buffer is read in, as a layout of the tile.
struct EpiloguePlan {
  SmallVector<int64_t> chunkRegs, chunkBits;
  int64_t pitch = 0, bytes = 0;
  Layout read;
};

/// The register bases that walk rows only, outermost first: the chunk
/// selectors.
SmallVector<int64_t> chunkCandidates(const EpilogueTile &t) {
  SmallVector<int64_t> candidates; // register indices
  for (int64_t i = static_cast<int64_t>(t.acc.regs.size()) - 1; i >= 0; --i) {
    uint64_t basis = t.acc.regs[i];
    if ((basis & uint64_t(t.C - 1)) == 0 &&
        llvm::isPowerOf2_64(basis >> t.colBits))
      candidates.push_back(i);
  }
  return candidates;
}

/// The plan with the first `k` candidates as chunk selectors; none when the
/// buffer has fewer elements than threads x 16 bytes.
std::optional<EpiloguePlan> planChunks(const EpilogueTile &t,
                                       ArrayRef<int64_t> candidates, int64_t k,
                                       const KernelContext &kc) {
  EpiloguePlan p;
  p.chunkRegs.assign(candidates.begin(), candidates.begin() + k);
  for (int64_t r : p.chunkRegs)
    p.chunkBits.push_back(log2Exact(t.acc.regs[r] >> t.colBits));
  int64_t bufRows = t.R >> k;
  Layout blocked = blockedLayout({bufRows, t.C}, elementBits(t.elem),
                                 kc.numWarps, kc.laneBits);
  if (llvm::is_contained(blocked.lanes, 0u) ||
      llvm::is_contained(blocked.warps, 0u))
    return std::nullopt; // fewer elements than threads x 16 bytes
  // The blocked layout of the buffer, as a layout of the tile, with the
  // chunk bits as its outermost registers.
  int64_t bufColBits = log2Exact(t.C);
  auto lift = [&](uint64_t basis) -> uint64_t {
    if (basis == 0)
      return 0;
    uint64_t row = basis >> bufColBits, col = basis & uint64_t(t.C - 1);
    return (remapRowBits(row, p.chunkBits, t.rowBits, /*expand=*/true)
            << t.colBits) |
           col;
  };
  p.read.shape = {t.R, t.C};
  p.read.family = Layout::Family::Derived;
  for (uint64_t basis : blocked.regs)
    p.read.regs.push_back(lift(basis));
  for (uint64_t basis : blocked.lanes)
    p.read.lanes.push_back(lift(basis));
  for (uint64_t basis : blocked.warps)
    p.read.warps.push_back(lift(basis));
  for (int64_t bit : p.chunkBits)
    p.read.regs.push_back(uint64_t(1) << (bit + t.colBits));
  // The row padding with the fewest bank conflicts (rows stay 16-byte
  // aligned for the reads).
  int64_t best = -1;
  for (int64_t pad = 0; pad <= 128; pad += 16) {
    int64_t pitch = t.rowBytes + pad;
    int64_t cost = bankCost(t.acc, 0, t.fragWidth, t.eb, pitch, p.chunkBits,
                            kc.threadsPerWarp()) +
                   bankCost(p.read, 0, 16, t.eb, pitch, p.chunkBits,
                            kc.threadsPerWarp());
    if (best < 0 || cost < best) {
      best = cost;
      p.pitch = pitch;
    }
  }
  p.bytes = bufRows * p.pitch;
  return p;
}

/// The fewest chunks fitting the dead stages (`deadBytes`) or holding at
/// most `budget` bytes of the tile each (or, failing that, the smallest
/// buffer).
std::optional<EpiloguePlan> choosePlan(const EpilogueTile &t,
                                       int64_t deadBytes, int64_t budget,
                                       const KernelContext &kc) {
  SmallVector<int64_t> candidates = chunkCandidates(t);
  std::optional<EpiloguePlan> plan;
  for (int64_t k = 0; k <= static_cast<int64_t>(candidates.size()); ++k) {
    std::optional<EpiloguePlan> p = planChunks(t, candidates, k, kc);
    if (!p)
      break;
    plan = std::move(p);
    int64_t bufRows = t.R >> static_cast<int64_t>(plan->chunkBits.size());
    if (plan->bytes <= deadBytes || bufRows * t.rowBytes <= budget)
      break;
  }
  return plan;
}

/// A run of row bits of the tile, all chunk bits or all buffer bits.
struct Run {
  int64_t lo, len;
  bool chunk;
};

/// The tile's row bits as runs, outermost first.
SmallVector<Run> rowRuns(int64_t rowBits, ArrayRef<int64_t> chunkBits) {
  SmallVector<Run> runs;
  for (int64_t p = rowBits - 1; p >= 0; --p) {
    bool chunk = llvm::is_contained(chunkBits, p);
    if (!runs.empty() && runs.back().chunk == chunk) {
      runs.back().lo = p;
      ++runs.back().len;
    } else {
      runs.push_back({p, 1, chunk});
    }
  }
  return runs;
}

/// `view` (2-D) seen as [runs..., C] (`shape`).
View runView(const View &view, ArrayRef<Run> runs, ArrayRef<int64_t> shape) {
  View out = view;
  out.dimOf.clear();
  out.strides.clear();
  out.shape.assign(shape.begin(), shape.end());
  for (const Run &r : runs) {
    out.dimOf.push_back(view.dimOf[0]);
    out.strides.push_back(view.strides[0] << r.lo);
  }
  out.dimOf.push_back(view.dimOf[1]);
  out.strides.push_back(view.strides[1]);
  return out;
}

/// The chunk buffer `buf` seen as [runs..., C]: the chunk bits' dimensions
/// have stride 0.
void bufferAsRuns(View &buf, ArrayRef<Run> runs, ArrayRef<int64_t> shape,
                  ArrayRef<int64_t> chunkBits) {
  buf.dimOf.clear();
  buf.strides.clear();
  buf.shape.assign(shape.begin(), shape.end());
  for (const Run &r : runs) {
    buf.dimOf.push_back(0);
    int64_t below = 0;
    for (int64_t bit : chunkBits)
      if (bit < r.lo)
        ++below;
    buf.strides.push_back(r.chunk ? 0 : int64_t(1) << (r.lo - below));
  }
  buf.dimOf.push_back(1);
  buf.strides.push_back(1);
}

} // namespace

/// Shared memory the dot operands' stages leave dead here, which the
/// buffer takes instead of growing the workspace (as Triton's allocator
/// shares buffers whose lifetimes do not overlap): the cp.async rings of a
/// loop the store follows (every copy issued was waited for inside the
/// loop), and the stages of the sequential grid axis at its last step (the
/// store under `pl.when(k == nk - 1)`, after the dots reading them: nothing
/// is prefetched past the last step). The barrier before the first write
/// orders the other warps' last reads.
Distributor::DeadRegion Distributor::deadOperandStages(Operation *at) {
  DeadRegion dead;
  auto consider = [&](int64_t offset, int64_t size, bool tma) {
    int64_t aligned = llvm::alignTo(offset, 128);
    if (size - (aligned - offset) > dead.bytes) {
      dead.offset = aligned;
      dead.bytes = size - (aligned - offset);
      dead.tma = tma;
    }
  };
  for (auto &[forOp, plan] : loopPlans) {
    Operation *anc = forOp->getBlock()->findAncestorOpInBlock(*at);
    if (anc && anc != forOp && forOp->isBeforeInBlock(anc))
      consider(plan.region, plan.stages * plan.stageBytes, false);
  }
  Block *top = &kernel.getBody().front();
  Operation *topAnc = top->findAncestorOpInBlock(*at);
  if (topAnc && (!stagePlans.empty() || !tmaPlans.empty()) &&
      atLastSequentialStep()) {
    for (auto &[dot, plan] : stagePlans)
      if (dot->getBlock() == top && dot->isBeforeInBlock(topAnc))
        consider(plan.region, plan.stages * plan.stageBytes, false);
    // (The 1 KiB the stages' alignment may leave is dead too.)
    for (auto &[dot, plan] : tmaPlans)
      if (dot->getBlock() == top && dot->isBeforeInBlock(topAnc))
        consider(plan.region, plan.stages * plan.stageBytes + 1024, true);
  }
  return dead;
}

/// Whether the insertion point lies in the then-branches of ifs inside the
/// sequential loop's body, one of them on `iv == count - 1`.
bool Distributor::atLastSequentialStep() {
  std::optional<int64_t> n =
      kc.seqIv ? constantValue(kc.seqCount) : std::nullopt;
  if (!n)
    return false;
  Operation *seqLoop = kc.seqIv.getParentBlock()->getParentOp();
  bool last = false;
  for (Block *blk = b.getInsertionBlock(); blk;) {
    Operation *p = blk->getParentOp();
    if (p == seqLoop)
      return last;
    auto ifOp = dyn_cast_or_null<scf::IfOp>(p);
    if (!ifOp)
      return false;
    auto cmp = ifOp.getCondition().getDefiningOp<arith::CmpIOp>();
    if (blk->getParent() == &ifOp.getThenRegion() && cmp &&
        cmp.getPredicate() == arith::CmpIPredicate::eq)
      for (int side = 0; side < 2; ++side)
        if (stripCasts(cmp->getOperand(side)) == kc.seqIv &&
            constantValue(cmp->getOperand(1 - side)) == *n - 1)
          last = true;
    blk = p->getBlock();
  }
  return false;
}

/// wgmma groups still in flight may read the TMA stages the buffer
/// overlays: waits for all, unless the read of the accumulators just did
/// (retireWgmma; pure ops may follow that wait: the accumulators' casts,
/// indices).
void Distributor::retireBeforeOverlay() {
  NVVM::WgmmaWaitGroupSyncOp wait;
  for (auto it = b.getInsertionPoint(); it != b.getInsertionBlock()->begin();) {
    Operation &op = *--it;
    wait = dyn_cast<NVVM::WgmmaWaitGroupSyncOp>(op);
    if (wait || !isMemoryEffectFree(&op) || op.getNumRegions())
      break;
  }
  if (!wait || wait.getGroup() != 0)
    NVVM::WgmmaWaitGroupSyncOp::create(b, kc.loc, 0);
}

/// Stores the accumulator `regs` (layout `srcId`) to `out` chunk by chunk
/// through `buf`: the chunk's fragments written, a barrier, the buffer read
/// in `readId` and stored.
LogicalResult Distributor::storeEpilogueChunks(
    const View &buf, const View &out, int srcId, int readId,
    ArrayRef<Value> regs, ArrayRef<int64_t> chunkRegs) {
  int64_t k = chunkRegs.size();
  int64_t readRegs = layout(readId).numRegs() >> k;
  int64_t numRegs = layout(srcId).numRegs();
  for (int64_t chunk = 0; chunk < (int64_t(1) << k); ++chunk) {
    if (chunk > 0)
      barrier();
    SmallVector<int64_t> fragments, reads;
    for (int64_t r = 0; r < numRegs; ++r) {
      bool in = true;
      for (auto [j, reg] : llvm::enumerate(chunkRegs))
        if (((r >> reg) & 1) != ((chunk >> j) & 1))
          in = false;
      if (in)
        fragments.push_back(r);
    }
    for (int64_t r = chunk * readRegs; r < (chunk + 1) * readRegs; ++r)
      reads.push_back(r);
    if (failed(store(buf, srcId, regs, {}, fragments)))
      return failure();
    barrier();
    auto part = load(buf, readId, reads);
    if (failed(part))
      return failure();
    if (failed(store(out, readId, *part, {}, reads)))
      return failure();
  }
  return success();
}

FailureOr<bool> Distributor::storeEpilogue(const View &view, int id,
                                           ArrayRef<Value> regs,
                                           Operation *at) {
  const Layout &acc = layout(id);
  if (inLaneContext || view.isShared() || acc.rank() != 2 ||
      view.rank() != 2 || !isAccumulatorFamily(acc.family))
    return false;
  Type elem = view.elementType();
  if (elem.isInteger(1) || elem.isIndex())
    return false;
  int64_t eb = elementBits(elem) / 8;
  if (eb == 0 || groupWidth(view, id) * eb >= 16)
    return false;
  int64_t R = acc.shape[0], C = acc.shape[1];
  EpilogueTile tile{acc,        elem,         eb,    R,
                    C,          log2Exact(R), log2Exact(C),
                    C * eb,     groupWidth(view, id) * eb};
  if (tile.rowBytes % 16)
    return false;

  DeadRegion dead = deadOperandStages(at);
  int64_t budget = std::max<int64_t>(kEpilogueBudget, kc.workspaceBytes);
  int64_t room = kc.maxSharedBytes > 0
                     ? kc.maxSharedBytes - kc.workspaceOffset
                     : std::numeric_limits<int64_t>::max();
  std::optional<EpiloguePlan> plan = choosePlan(tile, dead.bytes, budget, kc);
  bool overlay = plan && plan->bytes <= dead.bytes;
  if (!plan || (!overlay && plan->bytes > room))
    return false;

  // The tile as [row-bit runs..., C]: runs of chunk and of buffer bits.
  SmallVector<Run> runs = rowRuns(tile.rowBits, plan->chunkBits);
  SmallVector<int64_t> shape;
  for (const Run &r : runs)
    shape.push_back(int64_t(1) << r.len);
  shape.push_back(C);
  View out = runView(view, runs, shape);

  int srcId = intern(reshapeLayout(acc, shape));
  int readId = intern(reshapeLayout(plan->read, shape));
  if (groupWidth(out, readId) * eb < 16)
    return false;

  int64_t k = plan->chunkBits.size();
  int64_t bufRows = R >> k;
  int64_t bytes;
  int64_t workspaceBytes = kc.workspaceBytes;
  View buf = overlay ? sharedView({bufRows, plan->pitch / eb}, elem,
                                  dead.offset, /*pad=*/false, bytes)
                     : workspace({bufRows, plan->pitch / eb}, elem, 0,
                                 /*pad=*/false, bytes);
  bufferAsRuns(buf, runs, shape, plan->chunkBits);

  if (groupWidth(buf, readId) * eb < 16) {
    // (Rows are 16-byte multiples: not expected.) Nothing is left behind.
    buf.base.getDefiningOp()->erase();
    kc.workspaceBytes = workspaceBytes;
    return false;
  }
  LLVM_DEBUG(llvm::dbgs() << "epilogue through shared memory: " << (1 << k)
                          << " chunk(s) of " << plan->bytes << " bytes, row "
                          << plan->pitch << " bytes"
                          << (overlay ? ", on dead operand stages" : "")
                          << "\n");

  // wgmma groups still in flight may read the TMA stages.
  if (dead.tma && overlay && wgmmaPipelined)
    retireBeforeOverlay();
  // The workspace may still be read (a dot's staged tiles, a conversion).
  if (!barrierJustBefore(b))
    barrier();
  beforeAccess(out, readId, /*write=*/true);

  // A wgmma epilogue inside or after a loop of the kernel (not the
  // sequential grid axis' loop: the matmul's epilogue under pl.when(k ==
  // last), where this costs ptxas 8 registers) computes its own thread and
  // block coordinates: those the prologue computed for the kernel's other
  // accesses are equal to the epilogue's (flash attention: o's block and
  // q's), and LLVM would keep them live across the loop beside the
  // accumulators (sm_90a flash attention: 255 registers and a spill).
  // %tid.x and %ctaid.x/y/z are read again here (readSpecialRegister), the
  // thread coordinates derived from that %tid.x (threadCoord, primary), the
  // output's block offsets rebuilt from those %ctaid reads. (mma.sync and
  // MFMA epilogues, with no spill to avoid, keep the prologue's.)
  View outAt = out;
  Value savedTid = kc.tid;
  Operation *savedPrologueEnd = kc.prologueEnd;
  DenseMap<std::pair<int, int64_t>, Value> savedCoords;
  DenseMap<int, Value> savedPrimary;
  Operation *coordAnchor = nullptr;
  if (acc.family == Layout::Family::WgmmaC && inOrAfterKernelLoop(at)) {
    kc.tid = readSpecialRegister(b, kc.loc, "%tid.x");
    // An insertion anchor: the thread coordinates derived from this %tid.x
    // are emitted before it (it stands in as the prologue's end), and it is
    // erased once the store is built.
    coordAnchor = arith::ConstantIndexOp::create(b, kc.loc, 0);
    kc.prologueEnd = coordAnchor;
    std::swap(savedCoords, threadCoordCache);
    std::swap(savedPrimary, primaryCache);
    IRMapping map;
    for (Value &offset : outAt.offsets)
      offset = rebuildFromBlockIds(b, kc.loc, offset, map);
  }
  auto restoreCoords = llvm::scope_exit([&] {
    if (!coordAnchor)
      return;
    kc.tid = savedTid;
    kc.prologueEnd = savedPrologueEnd;
    threadCoordCache = std::move(savedCoords);
    primaryCache = std::move(savedPrimary);
    coordAnchor->erase();
  });
  if (failed(storeEpilogueChunks(buf, outAt, srcId, readId, regs,
                                 plan->chunkRegs)))
    return failure();
  // The workspace is free again once every thread has read its part; at
  // the end of the kernel (no enclosing loop, nothing after the store)
  // nothing else uses it.
  bool last = at->getBlock() == &kernel.getBody().front() &&
              at->getNextNode() == at->getBlock()->getTerminator();
  for (Operation *p = b.getInsertionBlock()->getParentOp(); p && last;
       p = p->getParentOp())
    if (isa<LoopLikeOpInterface>(p))
      last = false;
  if (!last)
    barrier();
  return true;
}
