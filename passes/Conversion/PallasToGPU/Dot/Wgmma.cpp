//===- Wgmma.cpp - dots on wgmma.mma_async (sm_90a) -------------*- C++ -*-===//
//
// The wgmma family of the dot lowering (DotEmitters.h): core-matrix tiles
// of wgmma operands in shared memory, their layouts, the retirement of
// groups left in flight, and DotLowering::wgmma, the warpgroup MMA lowering
// of a dot whose accumulator is in a WgmmaC layout (operands fed by TMA
// plans, cp.async chunks or staged tiles).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/Distribute.h"
#include "passes/Conversion/PallasToGPU/Dot/DotEmitters.h"
#include "passes/Conversion/PallasToGPU/Dot/DotUtils.h"

#include "dialects/Pallas/IR/PallasOps.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::gpu;
using namespace mlir::pallas::gpu::detail;

using CoreTile = StagingState::CoreTile;
using TmaOperand = StagingState::TmaOperand;
using TmaPlan = StagingState::TmaPlan;

/// Whether the i1 `v` is the same in every thread: computed without the
/// thread index from block arguments (induction variables, kernel
/// parameters) by pure single-block ops.
static bool isUniform(Value v, llvm::SmallPtrSetImpl<Value> &seen) {
  if (!seen.insert(v).second)
    return true;
  Operation *def = v.getDefiningOp();
  if (!def)
    return true;
  if (isa<mlir::gpu::ThreadIdOp, mlir::gpu::LaneIdOp>(def) ||
      def->getNumRegions() || !isMemoryEffectFree(def) || seen.size() > 256)
    return false;
  return llvm::all_of(def->getOperands(),
                      [&](Value o) { return isUniform(o, seen); });
}

void Distributor::retireWgmma(ArrayRef<Value> regs) {
  if (wgmmaPendingRegs.empty() || llvm::none_of(regs, [&](Value r) {
        return wgmmaPendingRegs.contains(r);
      }))
    return;
  NVVM::WgmmaWaitGroupSyncOp::create(b, kc.loc, 0);
  // A wait in a nested region (a `pl.when` epilogue) leaves the groups in
  // flight on the other paths: later reads wait again.
  if (b.getInsertionBlock() == wgmmaPendingBlock)
    wgmmaPendingRegs.clear();
}

CoreTile Distributor::coreTile(RankedTensorType type, int64_t cdim,
                               int64_t absOffset, int64_t &bytes) {
  int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  int64_t outer = cdim == 1 ? rows : cols, inner = cdim == 1 ? cols : rows;
  View v = sharedView({outer / 8, inner / 8, 8, 8}, type.getElementType(),
                      absOffset, /*pad=*/false, bytes);
  return CoreTile{v, cdim, absOffset, rows, cols, Value()};
}

int Distributor::coreLayout(int id, int64_t cdim) {
  const Layout &l = layout(id);
  int64_t rows = l.shape[0], cols = l.shape[1];
  // [R, C] -> [R/8, 8, C/8, 8] (the same linear index), then the core
  // matrices' order.
  Layout split = reshapeLayout(l, {rows / 8, 8, cols / 8, 8});
  if (cdim == 1)
    return intern(
        projectLayout(split, {0, 2, 1, 3}, {rows / 8, cols / 8, 8, 8}));
  return intern(
      projectLayout(split, {2, 0, 3, 1}, {cols / 8, rows / 8, 8, 8}));
}

namespace {

/// The accumulator before the first k step: a value (scale-d 1), zeros (no
/// register input, scale-d 0), or zeros on a uniform condition (selects:
/// the runtime scale-d `scaleD`).
enum class AccInit { Value, Zero, Select };

/// A matrix descriptor's parts the k loop offsets.
struct Desc {
  Value value; ///< i64, the warpgroup's first row (A) / column (B), k = 0
  int64_t strideK, strideMN;
  int trans;
  /// A TMA tile (128B swizzle): K-major or not, its rows (see planTma).
  bool swizzled = false, kMajor = true;
  int64_t rows = 0;
};

/// The wgmma lowering of one dot (DotLowering::wgmma), in steps: the
/// accumulator's start state, the operands (TMA stages, cp.async chunks,
/// core-matrix tiles, registers), the TMA copies ahead, the descriptors,
/// the k loop, the groups retired or left in flight.
class WgmmaEmitter : DotFamilyEmitter {
public:
  using DotFamilyEmitter::DotFamilyEmitter;

  LogicalResult run();

private:
  void planAccumulator();
  void schedulePipeline();
  std::optional<CoreTile> planAsync(Value v, int64_t kdim);
  FailureOr<CoreTile> stageCore(Value v);
  LogicalResult stageOperands();
  void fenceProxy();
  void warpgroupCoordinates();
  Value descriptor(Value base, int64_t offset, Value first, uint64_t fields);
  Desc makeDesc(const CoreTile &t, int64_t kdim, Value groupIndex,
                int64_t groupSpan);
  Desc makeTmaDesc(const TmaOperand &t, Value groupIndex, int64_t groupSpan);
  Value barrierAt(Value stage, int64_t c);
  Value stageOf(Value j);
  LogicalResult issueTma(Value j);
  LogicalResult startTma();
  void waitChunk(int64_t c);
  Value at(const Desc &desc, int64_t mn, int64_t k);
  Value pack(Value x, Value y);
  void mma(MutableArrayRef<Value> regs, Value aD, ArrayRef<Value> aFrag,
           Value bD, AccInit mode);
  void emitKLoop();
  LogicalResult retire();

  PipelineSchedule sched;

  int64_t gm = 0, gn = 0, mW = 0, nW = 0, instrN = 0;
  int aId = -1;
  AccInit init = AccInit::Value;
  Value scaleD; ///< i32, AccInit::Select
  bool aInRegisters = false;
  const TmaPlan *tma = nullptr;
  const TmaOperand *aTma = nullptr, *bTma = nullptr;
  SmallVector<DotLowering::AsyncChunks, 2> plans;
  std::optional<CoreTile> aTile, bTile;
  SmallVector<Value> aRegs, aPacked;
  Value groupM, groupN, smemAddr;
  Value tmaRegion, numStagesV, tmaStage;
  std::optional<Desc> aDesc;
  Desc bDesc;
};

} // namespace

void WgmmaEmitter::planAccumulator() {
  auto isZero = [](Value v) { return matchPattern(v, m_PosZeroFloat()); };
  if (llvm::all_of(dl.acc, isZero)) {
    init = AccInit::Zero;
    return;
  }
  Value cond;
  bool zeroWhenTrue = false;
  SmallVector<Value> inner;
  for (Value v : dl.acc) {
    auto sel = v.getDefiningOp<arith::SelectOp>();
    if (!sel || !sel.getCondition().getType().isInteger(1))
      break;
    bool t = isZero(sel.getTrueValue()), f = isZero(sel.getFalseValue());
    if (t == f || (cond && (cond != sel.getCondition() || zeroWhenTrue != t)))
      break;
    cond = sel.getCondition();
    zeroWhenTrue = t;
    inner.push_back(t ? sel.getFalseValue() : sel.getTrueValue());
  }
  llvm::SmallPtrSet<Value, 16> seen;
  if (inner.size() != dl.acc.size() || !isUniform(cond, seen))
    return;
  init = AccInit::Select;
  dl.acc = inner;
  Value accumulate =
      zeroWhenTrue
          ? arith::XOrIOp::create(b, loc, cond,
                                  arith::ConstantIntOp::create(b, loc, 1, 1))
          : cond;
  scaleD = arith::ExtUIOp::create(b, loc, b.getI32Type(), accumulate);
}

/// The schedule (PipelineSchedule.h), decided before anything is emitted,
/// and the TMA operands it feeds from.
void WgmmaEmitter::schedulePipeline() {
  PipelineInput in;
  in.family = PipelineInput::Family::Wgmma;
  in.warpsM = dl.C.warpsM;
  in.warpsN = dl.C.warpsN;
  sched = dl.schedule(in, aId, /*bId=*/-1);
  aInRegisters = sched.a == OperandFeed::Registers;
  if (auto it = dl.staging.tmaPlans.find(dl.op);
      it != dl.staging.tmaPlans.end())
    tma = &it->second;
  auto tmaOf = [&](Value v) -> const TmaOperand * {
    if (tma)
      for (const TmaOperand &t : tma->operands)
        if (t.value == v)
          return &t;
    return nullptr;
  };
  aTma = sched.a == OperandFeed::Tma ? tmaOf(dl.aVal) : nullptr;
  bTma = sched.b == OperandFeed::Tma ? tmaOf(dl.bVal) : nullptr;
}

/// A streamed operand copied with cp.async in the schedule's k chunks into
/// a core-matrix tile; none when the operand's alignment does not allow it.
std::optional<CoreTile> WgmmaEmitter::planAsync(Value v, int64_t kdim) {
  StreamedLoad in = dl.streamedTile(v);
  if (!in.source)
    return std::nullopt;
  auto type = cast<RankedTensorType>(v.getType());
  int64_t cdim = contiguousDim(dl.layout(in.id));
  int64_t bytes;
  CoreTile tile = d.coreTile(type, cdim, dl.nextTileOffset(), bytes);
  // One chunk: its blocked layout over the source, seen through the
  // transpose in the 4-D tile.
  DotLowering::StreamedChunk ch =
      dl.streamedChunk(v, in.x, in.perm, kdim, sched.chunkK);
  int ct4 = d.coreLayout(ch.tileId, cdim);
  SmallVector<int64_t> t4shape(dl.layout(ct4).shape.begin(),
                               dl.layout(ct4).shape.end());
  SmallVector<OpFoldResult> zeros2(2, b.getIndexAttr(0)),
      zeros4(4, b.getIndexAttr(0));
  SmallVector<int64_t> ones2(2, 1), ones4(4, 1);
  View src0 = d.subview(*in.source, zeros2, {}, ch.sourceShape, ones2, {});
  View dst0 = d.subview(tile.view, zeros4, {}, t4shape, ones4, {});
  int64_t width = d.asyncCopyWidth(src0, ch.sourceId, dst0, ct4);
  if (!width) {
    if (Operation *def = tile.view.base.getDefiningOp();
        def && def->use_empty())
      def->erase();
    return std::nullopt;
  }
  dl.reserveTile(bytes);
  // The 4-D tile dimension walking k: the core-matrix column when k is the
  // contiguous dimension, else the core-matrix row (8 elements of k each).
  plans.push_back(DotLowering::AsyncChunks{*in.source, tile.view, ch.sourceId,
                                           ct4, ch.sourceDim,
                                           cdim == kdim ? 1 : 0, width,
                                           /*tileDiv=*/8});
  return tile;
}

/// An operand stored from registers (or loaded and stored, for a streamed
/// one cp.async cannot copy) into a core-matrix tile, unless staged before
/// the dot.
FailureOr<CoreTile> WgmmaEmitter::stageCore(Value v) {
  if (auto it = dl.staging.coreTiles.find(v); it != dl.staging.coreTiles.end())
    return it->second;
  auto type = cast<RankedTensorType>(v.getType());
  int64_t bytes;
  if (dl.analysis.streamed.contains(v)) {
    StreamedLoad in = streamedLoad(d, v);
    if (!in.source)
      return dl.op->emitOpError() << "reads a memref that is not a view";
    int64_t cdim = contiguousDim(dl.layout(in.id));
    CoreTile tile = d.coreTile(type, cdim, dl.nextTileOffset(), bytes);
    dl.reserveTile(bytes);
    if (failed(dl.copyStreamed(*in.source, in.sourceId, tile.view,
                               d.coreLayout(in.id, cdim))))
      return failure();
    return tile;
  }
  int id = d.layoutOrDefault(v);
  auto regs = d.get(v, id);
  if (failed(regs))
    return failure();
  int64_t cdim = contiguousDim(dl.layout(id));
  CoreTile tile = d.coreTile(type, cdim, dl.nextTileOffset(), bytes);
  dl.reserveTile(bytes);
  if (failed(d.store(tile.view, d.coreLayout(id, cdim), *regs)))
    return failure();
  return tile;
}

/// Writes through the generic proxy (st.shared, cp.async) become visible
/// to wgmma's async-proxy reads after fence.proxy.async and a barrier.
void WgmmaEmitter::fenceProxy() {
  NVVM::FenceProxyOp::create(
      b, loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
}

/// The operands where the schedule puts them: cp.async chunks (copied
/// here, one commit group per chunk), registers, or core-matrix tiles
/// stored now or before the dot; TMA operands are copied by startTma.
LogicalResult WgmmaEmitter::stageOperands() {
  if (sched.a == OperandFeed::CpAsync)
    aTile = planAsync(dl.aVal, 1);
  if (sched.b == OperandFeed::CpAsync)
    bTile = planAsync(dl.bVal, 0);
  for (int64_t c = 0; c < sched.numChunks && !plans.empty(); ++c)
    if (failed(dl.copyChunk(plans, c, sched.chunkK)))
      return failure();
  if (aInRegisters) {
    auto r = d.get(dl.aVal, aId);
    if (failed(r))
      return failure();
    aRegs = *r;
  } else if (!aTile && !aTma) {
    auto t = stageCore(dl.aVal);
    if (failed(t))
      return failure();
    aTile = *t;
  }
  if (!bTile && !bTma) {
    auto t = stageCore(dl.bVal);
    if (failed(t))
      return failure();
    bTile = *t;
  }
  // (Tiles a TMA fills are waited for on their mbarriers instead.)
  // (Tiles a loop's ring prefetched were fenced and published at the start
  // of the iteration, loopStagesBody.)
  bool onlyPrefetched =
      (!aTile || dl.staging.loopStaged.contains(dl.aVal)) &&
      (!bTile || dl.staging.loopStaged.contains(dl.bVal));
  if (plans.empty() && (aTile || bTile) && !onlyPrefetched) {
    fenceProxy();
    dl.barrier();
  }
  return success();
}

/// The warpgroup's coordinates in the grid of warpgroups, the base of
/// shared memory.
void WgmmaEmitter::warpgroupCoordinates() {
  Value warp = arith::ShRUIOp::create(b, loc, dl.kc.tid, dl.idx(5));
  Value group = arith::ShRUIOp::create(b, loc, warp, dl.idx(2));
  groupM = arith::AndIOp::create(b, loc, group, dl.idx(gm - 1));
  groupN = arith::ShRUIOp::create(b, loc, group, dl.idx(log2Exact(gm)));
  smemAddr = arith::IndexCastOp::create(
      b, loc, b.getI32Type(),
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, dl.kc.smemBase));
}

/// A matrix descriptor: the start address `base` + `offset` + `first`
/// (bytes; i32, constant, index), the constant fields (strides, swizzle).
Value WgmmaEmitter::descriptor(Value base, int64_t offset, Value first,
                               uint64_t fields) {
  Type i32t = b.getI32Type(), i64t = b.getI64Type();
  Value addr = arith::AddIOp::create(
      b, loc, base,
      arith::AddIOp::create(b, loc, dl.i32(offset),
                            arith::IndexCastOp::create(b, loc, i32t, first)));
  Value start = arith::ShRUIOp::create(
      b, loc, arith::AndIOp::create(b, loc, addr, dl.i32(0x3FFFF)),
      dl.i32(4));
  Value wide = arith::ExtUIOp::create(b, loc, i64t, start);
  return arith::OrIOp::create(
      b, loc, wide,
      arith::ConstantIntOp::create(b, loc, i64t,
                                   static_cast<int64_t>(fields)));
}

/// The descriptor of the warpgroup's part of a core-matrix tile (no
/// swizzle).
Desc WgmmaEmitter::makeDesc(const CoreTile &t, int64_t kdim, Value groupIndex,
                            int64_t groupSpan) {
  bool kContiguous = t.cdim == kdim;
  int64_t inner = t.cdim == 1 ? t.cols : t.rows;
  int64_t outer = inner / 8 * 128; // bytes between core-matrix rows
  Desc desc;
  desc.strideK = kContiguous ? 128 : outer;
  desc.strideMN = kContiguous ? outer : 128;
  desc.trans = kContiguous ? 0 : 1;
  Value first = arith::MulIOp::create(
      b, loc, groupIndex, dl.idx(groupSpan / 8 * desc.strideMN));
  Value base = smemAddr;
  if (t.shift) // a ring slot (loopStagesBody)
    base = arith::AddIOp::create(
        b, loc, smemAddr,
        arith::IndexCastOp::create(b, loc, b.getI32Type(), t.shift));
  desc.value = descriptor(base, t.offset, first,
                          (uint64_t(desc.strideK >> 4) << 16) |
                              (uint64_t(desc.strideMN >> 4) << 32));
  return desc;
}

/// The descriptor of the warpgroup's part of a TMA tile in this step's
/// stage (128B swizzle).
Desc WgmmaEmitter::makeTmaDesc(const TmaOperand &t, Value groupIndex,
                               int64_t groupSpan) {
  Desc desc;
  desc.swizzled = true;
  desc.kMajor = t.kMajor;
  desc.rows = t.rows;
  desc.trans = t.kMajor ? 0 : 1;
  desc.strideK = desc.strideMN = 0;
  // The warpgroup's first row (K-major) / panel (MN-major).
  Value first =
      t.kMajor
          ? arith::MulIOp::create(b, loc, groupIndex,
                                  dl.idx(groupSpan * 128))
          : arith::MulIOp::create(b, loc, groupIndex,
                                  dl.idx(groupSpan / 64 * t.rows * 128));
  Value stageBase = arith::AddIOp::create(
      b, loc, tmaRegion,
      arith::MulIOp::create(b, loc, tmaStage, dl.i32(tma->stageBytes)));
  // Leading byte offset (unused when K-major), stride byte offset 1024,
  // swizzle mode 1 (128B).
  uint64_t lbo = t.kMajor ? 1 : (t.rows * 128) >> 4;
  desc.value = descriptor(stageBase, t.offset, first,
                          (lbo << 16) | (uint64_t(1024 >> 4) << 32) |
                              (uint64_t(1) << 62));
  return desc;
}

/// The mbarrier of chunk `c` of stage `stage` (i32).
Value WgmmaEmitter::barrierAt(Value stage, int64_t c) {
  Value slot = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, stage, dl.i32(tma->numChunks)),
      dl.i32(c));
  return sharedPtr(
      b, loc,
      arith::AddIOp::create(
          b, loc, smemAddr,
          arith::AddIOp::create(
              b, loc, dl.i32(tma->barriers),
              arith::MulIOp::create(b, loc, slot, dl.i32(8)))));
}

/// The stage of step `j` (index), as i32.
Value WgmmaEmitter::stageOf(Value j) {
  return arith::IndexCastOp::create(
      b, loc, b.getI32Type(), arith::RemUIOp::create(b, loc, j, numStagesV));
}

/// Copies step `j` into its stage: per chunk, the expected bytes on the
/// chunk's mbarrier, then the boxes.
LogicalResult WgmmaEmitter::issueTma(Value j) {
  Type i32t = b.getI32Type();
  Value stage = stageOf(j);
  Value base = arith::AddIOp::create(
      b, loc, tmaRegion,
      arith::MulIOp::create(b, loc, stage, dl.i32(tma->stageBytes)));
  SmallVector<std::pair<Value, Value>> origins; // (row, col) i32
  for (const TmaOperand &t : tma->operands) {
    auto view = dl.kc.tmaSources.lookup(t.arg).viewAt(b, j);
    if (failed(view))
      return failure();
    origins.push_back(
        {arith::IndexCastOp::create(b, loc, i32t, view->offsets[0]),
         arith::IndexCastOp::create(b, loc, i32t, view->offsets[1])});
  }
  for (int64_t c = 0; c < tma->numChunks; ++c) {
    int64_t bytes = 0;
    for (const TmaOperand &t : tma->operands)
      bytes += t.kMajor ? t.rows * 128 : t.cols * 128;
    Value bar = barrierAt(stage, c);
    NVVM::MBarrierArriveExpectTxOp::create(b, loc, Type(), bar, dl.i32(bytes),
                                           NVVM::MemScopeKind::CTA, false,
                                           Value());
    for (size_t ti = 0; ti < tma->operands.size(); ++ti) {
      const TmaOperand &t = tma->operands[ti];
      std::pair<Value, Value> origin = origins[ti];
      Value map = dl.kc.tensorMaps[t.map].param;
      auto box = [&](int64_t dstOffset, int64_t row, int64_t col) {
        Value dst =
            arith::AddIOp::create(b, loc, base, dl.i32(t.offset + dstOffset));
        Value c0 = arith::AddIOp::create(b, loc, origin.second, dl.i32(col));
        Value c1 = arith::AddIOp::create(b, loc, origin.first, dl.i32(row));
        NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
            b, loc, clusterPtr(b, loc, dst), map, ValueRange{c0, c1},
            barrierAt(stage, c), ValueRange{}, Value(), Value(),
            NVVM::TMALoadMode::TILE, false, nullptr, Value());
      };
      if (t.kMajor)
        box(c * t.rows * 128, 0, c * tma->chunkK);
      else
        for (int64_t p = 0; p < t.cols / 64; ++p)
          box(p * t.rows * 128 + c * tma->chunkK * 128, c * tma->chunkK,
              p * 64);
    }
  }
  return success();
}

/// The TMA stages (1024-byte aligned: the swizzle pattern's period), the
/// copies of the steps ahead, and this step's stage.
LogicalResult WgmmaEmitter::startTma() {
  tmaRegion = arith::AndIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, smemAddr, dl.i32(tma->region + 1023)),
      dl.i32(~int64_t(1023)));
  numStagesV = dl.idx(tma->stages);
  // One thread issues, from one site: at the first step steps
  // 0 .. ahead - 1, then at step s the step s + ahead - 1, into the stage
  // of step s - 1 - inFlight (retired by the previous step's wait; all
  // warpgroups are past the barrier after it).
  Value tid0 = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                     dl.kc.tid, dl.idx(0));
  auto outer = scf::IfOp::create(b, loc, tid0, false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(outer.thenBlock());
    if (failed(d.prefetchSteps(
            sched.copyAhead, [&](Value j) { return issueTma(j); }, [] {})))
      return failure();
  }
  tmaStage = stageOf(dl.kc.seqIv);
  return success();
}

/// Waits for chunk `c` of this step's stage: the phase parity of this
/// step's use of the stage's mbarriers.
void WgmmaEmitter::waitChunk(int64_t c) {
  Value round =
      arith::DivUIOp::create(b, loc, dl.kc.seqIv, dl.idx(tma->stages));
  Value parity = arith::IndexCastOp::create(
      b, loc, b.getI32Type(), arith::AndIOp::create(b, loc, round, dl.idx(1)));
  NVVM::MBarrierTryWaitParityOp::create(b, loc, barrierAt(tmaStage, c), parity,
                                        dl.i32(0x989680));
}

/// The descriptor of the core matrices at (`mn`, `k`) of a tile.
Value WgmmaEmitter::at(const Desc &desc, int64_t mn, int64_t k) {
  int64_t bytes = mn / 8 * desc.strideMN + k / 8 * desc.strideK;
  if (desc.swizzled)
    bytes = desc.kMajor ? mn * 128 + k / 64 * desc.rows * 128 + k % 64 * 2
                        : mn / 64 * desc.rows * 128 + k * 128;
  if (bytes == 0)
    return desc.value;
  return arith::AddIOp::create(
      b, loc, desc.value,
      arith::ConstantIntOp::create(b, loc, b.getI64Type(), bytes >> 4));
}

/// Two 16-bit elements as one i32 register.
Value WgmmaEmitter::pack(Value x, Value y) {
  Value v = vector::FromElementsOp::create(
      b, loc, VectorType::get({2}, s.a), ValueRange{x, y});
  Value i = vector::BitCastOp::create(
      b, loc, VectorType::get({1}, b.getI32Type()), v);
  return vector::ExtractOp::create(b, loc, i, 0);
}

/// One wgmma (inline PTX) updating `regs`: A from the descriptor `aD` or
/// the registers `aFrag`, B from `bD`; `mode`: the accumulator as input
/// (scale-d 1), none (scale-d 0), or as input with scale-d `scaleD`.
void WgmmaEmitter::mma(MutableArrayRef<Value> regs, Value aD,
                       ArrayRef<Value> aFrag, Value bD, AccInit mode) {
  std::string type = s.a.isBF16() ? "bf16" : "f16";
  int64_t nd = regs.size();
  SmallVector<Value> operands;
  int64_t next = nd;
  std::string scale = mode == AccInit::Zero ? "0" : "1";
  if (mode == AccInit::Select) {
    scale = "$" + std::to_string(next++);
    operands.push_back(scaleD);
  }
  std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, " + scale +
                     ", 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n" +
                     std::to_string(2 * nd) + "k16.f32." + type + "." + type +
                     " {";
  std::string constraints;
  for (int64_t i = 0; i < nd; ++i) {
    text += (i ? ", $" : "$") + std::to_string(i);
    constraints += "=f,";
  }
  if (mode == AccInit::Select)
    constraints += "r,";
  text += "}, ";
  if (aD) {
    text += "$" + std::to_string(next++);
    operands.push_back(aD);
    constraints += "l,";
  } else {
    text += "{";
    for (int64_t j = 0; j < 4; ++j) {
      text += (j ? ", $" : "$") + std::to_string(next++);
      operands.push_back(aFrag[j]);
      constraints += "r,";
    }
    text += "}";
  }
  text += ", $" + std::to_string(next++);
  operands.push_back(bD);
  constraints += "l";
  text += ", p, 1, 1";
  if (aD)
    text += ", " + std::to_string(aDesc->trans);
  text += ", " + std::to_string(bDesc.trans) + ";\n}";
  if (mode != AccInit::Zero)
    for (int64_t i = 0; i < nd; ++i) {
      operands.push_back(regs[i]);
      constraints += "," + std::to_string(i);
    }
  SmallVector<Type> fields(nd, b.getF32Type());
  Type resType = LLVM::LLVMStructType::getLiteral(b.getContext(), fields);
  // Side effects: it reads shared memory and must stay between the
  // barriers and the wgmma fence / commit / wait.
  Value r = inlineAsm(b, loc, resType, operands, text, constraints);
  for (int64_t i = 0; i < nd; ++i)
    regs[i] = LLVM::ExtractValueOp::create(b, loc, r, ArrayRef<int64_t>{i});
}

/// The k steps: the waits for the chunks (TMA mbarriers, cp.async groups),
/// the fence after them, the warpgroup's wgmmas.
void WgmmaEmitter::emitKLoop() {
  const Layout &A = dl.layout(aId);
  const Layout &C = dl.C;
  int64_t nbA = log2Exact(s.k), nbC = log2Exact(s.n);
  bool async = !plans.empty();
  for (int64_t kk = 0; kk < s.k / 16; ++kk) {
    // The fence follows the waits (see DotLowering::wgmma).
    bool fence = kk == 0;
    if (tma && (kk * 16) % tma->chunkK == 0) {
      waitChunk(kk * 16 / tma->chunkK);
      fence = true;
    }
    if (async && (kk * 16) % sched.chunkK == 0) {
      fence = true;
      // This chunk's copies (and those of every thread) have landed.
      int64_t c = kk * 16 / sched.chunkK;
      NVVM::CpAsyncWaitGroupOp::create(
          b, loc, b.getI32IntegerAttr(sched.numChunks - 1 - c));
      fenceProxy();
      dl.barrier();
    }
    if (fence)
      NVVM::WgmmaFenceAlignedOp::create(b, loc);
    for (int64_t mi = 0; mi < mW / 64; ++mi) {
      SmallVector<Value> aFrag;
      Value aD;
      if (aInRegisters) {
        int64_t r0 = *registerOf(A, (uint64_t(mi * 64) << nbA) |
                                        uint64_t(kk * 16));
        for (int64_t j = 0; j < 4; ++j)
          aFrag.push_back(aPacked[r0 / 2 + j]);
      } else {
        aD = at(*aDesc, mi * 64, kk * 16);
      }
      for (int64_t ni = 0; ni < nW / instrN; ++ni) {
        int64_t r0 = *registerOf(C, (uint64_t(mi * 64) << nbC) |
                                        uint64_t(ni * instrN));
        MutableArrayRef<Value> regs(dl.acc.data() + r0, instrN / 2);
        mma(regs, aD, aFrag, at(bDesc, ni * instrN, kk * 16),
            kk == 0 ? init : AccInit::Value);
      }
    }
  }
}

/// Commits the group and waits down to the schedule's depth; a pipelined
/// group stays in flight (retireWgmma waits for it before another read).
LogicalResult WgmmaEmitter::retire() {
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, sched.waitDepth);
  // Every warpgroup is done with the tiles (pipelined: the previous step's)
  // before the workspace is reused or the stage refilled.
  dl.barrier();
  if (sched.waitDepth > 0) {
    dl.groups.wgmmaPipelined = true;
    dl.groups.wgmmaPendingRegs.clear();
    dl.groups.wgmmaPendingRegs.insert(dl.acc.begin(), dl.acc.end());
    dl.groups.wgmmaPendingBlock = b.getInsertionBlock();
  }
  return dl.finish(std::move(dl.acc));
}

LogicalResult WgmmaEmitter::run() {
  gm = dl.C.warpsM / 4;
  gn = dl.C.warpsN;
  mW = s.m / gm;
  nW = s.n / gn;
  instrN = std::min<int64_t>(nW, 256);
  aId = dl.intern(fragmentLayout({pallasc::MatrixInstrKind::Wgmma},
                                 pallasc::MatrixOperand::A, s.m, s.k, gm, gn));
  schedulePipeline();
  planAccumulator();
  if (failed(stageOperands()))
    return failure();
  warpgroupCoordinates();
  if (tma && failed(startTma()))
    return failure();
  if (aTile)
    aDesc = makeDesc(*aTile, 1, groupM, mW);
  else if (aTma)
    aDesc = makeTmaDesc(*aTma, groupM, mW);
  bDesc = bTma ? makeTmaDesc(*bTma, groupN, nW)
               : makeDesc(*bTile, 0, groupN, nW);
  if (aInRegisters)
    for (size_t r = 0; r + 1 < aRegs.size(); r += 2)
      aPacked.push_back(pack(aRegs[r], aRegs[r + 1]));
  emitKLoop();
  return retire();
}

/// `wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}` per warpgroup:
/// B (and A unless its registers already hold the A fragments) in shared
/// memory as core-matrix tiles described by 64-bit matrix descriptors (no
/// swizzle: start address, leading (K) and stride (M/N) byte offsets, all
/// >> 4; K-major or, with the transpose bit, M/N-major, whichever way the
/// operand is contiguous), the accumulator in registers (the wgmma C
/// fragments of chips/MatrixFragments.cpp).
/// Streamed operands are copied with cp.async in up to four k chunks, one
/// commit group each, as for mma.sync. Sequence: stores / cp.async waits,
/// fence.proxy.async (generic-proxy writes made visible to the async proxy
/// wgmma reads through), barrier, wgmma.fence, the wgmmas, commit, wait.
/// The fence comes after every wait (cp.async, mbarrier) and right before
/// the wgmmas that follow it: ptxas inserts a warpgroup.arrive of its own
/// (C7519) before a wgmma when control flow (an mbarrier wait loop) or a
/// definition of its registers lies between the fence and it. A zero
/// accumulator is no register input (scale-d 0), and one that is zero on a
/// uniform condition (`pl.when(k == 0)` zeroing a scratch accumulator:
/// selects) becomes the runtime scale-d of the first k step, so no
/// instruction touches the accumulators between wgmmas.
/// The schedule (PipelineSchedule.h) is decided first: a dot whose
/// operands both come from TMA stages is pipelined across the steps of the
/// sequential axis: `wgmma.wait_group 1` leaves the step's group in flight
/// (it only retires the previous step's; the copies use one stage fewer,
/// so the stage refilled at the next step is one a retired group read),
/// and any other read of the accumulators (retireWgmma, e.g. the epilogue
/// of the last step) and the end of the sequential loop wait for all
/// (`wait_group 0`).
/// The wgmma itself is inline PTX: nvvm.wgmma.mma_async takes A from shared
/// memory only.
LogicalResult DotLowering::wgmma() { return WgmmaEmitter(*this).run(); }
