//===- MmaSync.cpp - dots on mma.sync (sm_80+) ------------------*- C++ -*-===//
//
// f16/bf16 x f16/bf16 -> f32 on sm_80+: `mma.sync.m16n8k16` (nvvm.mma.sync)
// with the accumulator in the mma C fragment layout. Operands already held
// in the A/B fragment layouts (e.g. a softmax computed in the accumulator
// layout of a previous dot) are used from registers; small loop-invariant
// ones are converted into it once; the rest is staged in shared memory
// (padded rows, stored in the order the value is contiguous in; cp.async
// copies of streamed operands, in chunks along k, or the prefetch stages of
// planStages) and each fragment is read just before its mma (ldmatrix on
// 16-bit tiles).
//
// f32 x f32 -> f32 at the default or `high` precision on sm_80+: tf32 tensor
// cores, `mma.sync.m16n8k8.tf32` with the operands rounded to tf32 (cvt.rna)
// as they are read, as Pallas' Triton lowering does (DEFAULT and HIGH map to
// tf32, HIGHEST to IEEE f32).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/Dot/DotEmitters.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::gpu;
using namespace mlir::pallas::gpu::detail;

namespace {

/// The mma.sync lowering of one dot (DotLowering::mmaSync), in steps: the
/// schedule, the operands (prefetch stages, cp.async chunks, registers or
/// staged tiles), the lane's ldmatrix addresses, the k loop.
class MmaSyncEmitter : DotFamilyEmitter {
public:
  using DotFamilyEmitter::DotFamilyEmitter;

  LogicalResult run();

private:
  void schedulePipeline();
  std::optional<View> planAsync(Value v, int64_t kdim);
  View stageView(const View &tile, Value stage);
  LogicalResult prefetchStages();
  LogicalResult stageOperand(Value v, int id, std::optional<View> &tile,
                             SmallVector<Value> &regs, bool &storedNow);
  LogicalResult stageOperands();
  Value toTf32(Value x);
  Value pack(Value x, Value y);
  SmallVector<Value> packAll(Value v, ArrayRef<Value> regs);
  void laneCoordinates();
  SmallVector<Value> ldmatrix(const View &tile, bool isB, int64_t fConst,
                              int64_t kConst, int64_t numTiles);
  FailureOr<SmallVector<Value>> aFragment(int64_t mi, int64_t kk);
  FailureOr<SmallVector<Value>> bFragment(int64_t ni, int64_t kk);
  void mma(ArrayRef<Value> aFrag, ArrayRef<Value> bFrag, int64_t mi,
           int64_t ni);
  LogicalResult emitKLoop();

  PipelineSchedule sched;
  /// The prefetch stages of the dot's operands (planStages), if any.
  const StagingState::StagePlan *sp = nullptr;

  int64_t wm = 0, wn = 0, kStep = 16;
  bool tf32 = false;
  int aId = -1, bId = -1;
  NVVM::MMATypes mmaType = NVVM::MMATypes::f16;
  /// Operands come from registers when they already hold the fragments
  /// (inRegisters), else from shared memory.
  std::optional<View> aStage, bStage;
  SmallVector<Value> aRegs, bRegs, aPacked, bPacked;
  SmallVector<DotLowering::AsyncChunks, 2> plans;
  bool staged = false, aLdm = false, bLdm = false;
  /// The lane's coordinates for ldmatrix addresses (laneCoordinates).
  Value laneRow, warpM, warpN, matLo8, matHi8;
  /// The lane's address in each ldmatrix tile, by tile base.
  DenseMap<Value, Value> lanePtrs;
  /// The B fragments of two n tiles (one ldmatrix.x4).
  SmallVector<Value> bPair;
};

} // namespace

/// The schedule (PipelineSchedule.h), decided before anything is emitted.
void MmaSyncEmitter::schedulePipeline() {
  PipelineInput in;
  in.family = PipelineInput::Family::MmaSync;
  in.kStep = kStep;
  in.warpsM = wm;
  in.warpsN = wn;
  sched = dl.schedule(in, aId, bId);
  if (auto it = dl.staging.stagePlans.find(dl.op);
      it != dl.staging.stagePlans.end())
    sp = &it->second;
}

/// A streamed operand copied with cp.async in the schedule's k chunks into
/// its tile; none when its alignment does not allow it.
std::optional<View> MmaSyncEmitter::planAsync(Value v, int64_t kdim) {
  // The whole tile as stage() lays it out (ldmatrix reads it the same).
  StreamedLoad in = dl.streamedTile(v);
  if (!in.source)
    return std::nullopt;
  auto type = cast<RankedTensorType>(v.getType());
  int64_t bytes;
  View tile = d.tileView(type, in.id, dl.nextTileOffset(), bytes);
  // One chunk: its own blocked layout over the source, seen through the
  // transpose in the tile.
  DotLowering::StreamedChunk ch =
      dl.streamedChunk(v, in.x, in.perm, kdim, sched.chunkK);
  SmallVector<OpFoldResult> zeros(type.getRank(), b.getIndexAttr(0));
  SmallVector<int64_t> ones(type.getRank(), 1);
  View src0 = d.subview(*in.source, zeros, {}, ch.sourceShape, ones, {});
  View dst0 = d.subview(tile, zeros, {}, ch.shape, ones, {});
  int64_t width = d.asyncCopyWidth(src0, ch.sourceId, dst0, ch.tileId);
  if (!width) {
    if (Operation *def = tile.base.getDefiningOp(); def && def->use_empty())
      def->erase();
    return std::nullopt;
  }
  dl.reserveTile(bytes);
  plans.push_back(DotLowering::AsyncChunks{
      *in.source, tile, ch.sourceId, ch.tileId, ch.sourceDim, kdim, width});
  return tile;
}

/// The tile of `stage` (index): stage 0's view shifted.
View MmaSyncEmitter::stageView(const View &tile, Value stage) {
  auto viewOp = tile.base.getDefiningOp<memref::ViewOp>();
  Value shift = arith::AddIOp::create(
      b, loc, viewOp.getByteShift(),
      arith::MulIOp::create(b, loc, stage, dl.idx(sp->stageBytes)));
  View v = tile;
  v.base = memref::ViewOp::create(b, loc, viewOp.getType(), viewOp.getSource(),
                                  shift, viewOp.getSizes());
  return v;
}

/// Operands copied `stages` steps ahead (planStages): the copies of the
/// steps ahead (one commit group per step, in range or not), the wait for
/// this step's, its stage's tiles.
LogicalResult MmaSyncEmitter::prefetchStages() {
  Value iv = dl.kc.seqIv;
  Value numStagesV = dl.idx(sp->stages);
  struct Staged {
    Value arg;
    int sourceId, tileId;
    View tile; ///< stage 0
    int64_t width;
  };
  SmallVector<Staged, 2> stagedOps;
  for (auto [i, v] : llvm::enumerate(sp->values)) {
    StreamedLoad in = streamedLoad(d, v);
    auto tt = in.x.getDefiningOp<bufferization::ToTensorOp>();
    if (!in.source || !tt)
      return dl.op->emitOpError() << "lost a prefetched dot operand";
    auto type = cast<RankedTensorType>(v.getType());
    int64_t bytes;
    View tile = d.tileView(type, in.id, sp->region + sp->offsets[i], bytes);
    int64_t width = d.asyncCopyWidth(*in.source, in.sourceId, tile, in.id);
    if (!width || bytes > sp->stageBytes)
      return dl.op->emitOpError()
             << "cannot prefetch a dot operand with cp.async";
    stagedOps.push_back({tt.getBuffer(), in.sourceId, in.id, tile, width});
  }
  auto issue = [&](Value j) -> LogicalResult {
    Value stage = arith::RemUIOp::create(b, loc, j, numStagesV);
    for (const Staged &st : stagedOps) {
      auto src = dl.kc.tmaSources.lookup(st.arg).viewAt(b, j);
      if (failed(src) ||
          failed(d.copyAsync(*src, st.sourceId, stageView(st.tile, stage),
                             st.tileId, st.width)))
        return dl.op->emitOpError() << "cannot prefetch a dot operand "
                                       "with cp.async";
    }
    return success();
  };
  // One commit group per step, in range or not.
  if (failed(d.prefetchSteps(sched.copyAhead, issue, [&] {
        NVVM::CpAsyncCommitGroupOp::create(b, loc);
      })))
    return failure();
  NVVM::CpAsyncWaitGroupOp::create(b, loc,
                                   b.getI32IntegerAttr(sched.copyWait));
  dl.barrier();
  Value stage = arith::RemUIOp::create(b, loc, iv, numStagesV);
  for (auto [i, v] : llvm::enumerate(sp->values)) {
    View t = stageView(stagedOps[i].tile, stage);
    if (v == dl.aVal)
      aStage = t;
    else
      bStage = t;
  }
  return success();
}

/// An operand not copied with cp.async: its registers when they hold the
/// fragments `id`, else its staged tile (stored now unless a loop's ring
/// prefetched it: `storedNow`).
LogicalResult MmaSyncEmitter::stageOperand(Value v, int id,
                                           std::optional<View> &tile,
                                           SmallVector<Value> &regs,
                                           bool &storedNow) {
  if (tile)
    return success(); // staged by cp.async
  if (dl.inRegisters(v, id)) {
    auto r = d.get(v, id);
    if (failed(r))
      return failure();
    regs = *r;
    return success();
  }
  auto t = dl.stage(v);
  if (failed(t))
    return failure();
  tile = *t;
  storedNow |= !dl.staging.loopStaged.contains(v);
  return success();
}

/// The operands where the schedule puts them, and the barrier before the
/// tiles stored here are read.
LogicalResult MmaSyncEmitter::stageOperands() {
  if (sp && failed(prefetchStages()))
    return failure();
  if (sched.a == OperandFeed::CpAsync)
    aStage = planAsync(dl.aVal, 1);
  if (sched.b == OperandFeed::CpAsync)
    bStage = planAsync(dl.bVal, 0);
  for (int64_t c = 0; c < sched.numChunks && !plans.empty(); ++c)
    if (failed(dl.copyChunk(plans, c, sched.chunkK)))
      return failure();
  bool storedNow = false; // an operand stored into the workspace here
  if (failed(stageOperand(dl.aVal, aId, aStage, aRegs, storedNow)) ||
      failed(stageOperand(dl.bVal, bId, bStage, bRegs, storedNow)))
    return failure();
  staged = aStage || bStage;
  // Tiles a loop's ring prefetched were waited for and published at the
  // start of the iteration (loopStagesBody).
  bool onlyPrefetched =
      (!aStage || dl.staging.loopStaged.contains(dl.aVal)) &&
      (!bStage || dl.staging.loopStaged.contains(dl.bVal));
  if (staged && plans.empty() && (storedNow || (!sp && !onlyPrefetched)))
    dl.barrier();
  return success();
}

/// An f32 operand element as the tf32 the instruction reads (rounded to
/// nearest, ties away, as cvt.rna.tf32.f32 does).
Value MmaSyncEmitter::toTf32(Value x) {
  return NVVM::ConvertFloatToTF32Op::create(
      b, loc, b.getI32Type(), x, NVVM::FPRoundingMode::RNA,
      NVVM::SaturationMode::NONE, false);
}

/// Two 16-bit elements as the instruction's register (f16: vector<2xf16>).
Value MmaSyncEmitter::pack(Value x, Value y) {
  auto vt = VectorType::get({2}, s.a);
  Value v = vector::FromElementsOp::create(b, loc, vt, ValueRange{x, y});
  if (mmaType == NVVM::MMATypes::f16)
    return v;
  Value i = vector::BitCastOp::create(
      b, loc, VectorType::get({1}, b.getI32Type()), v);
  return vector::ExtractOp::create(b, loc, i, 0);
}

/// Register-resident operands are packed in pairs where they are defined,
/// so the unpacked values (e.g. f32 probabilities before their f16
/// truncation) die there rather than at the last mma.
SmallVector<Value> MmaSyncEmitter::packAll(Value v, ArrayRef<Value> regs) {
  SmallVector<Value> packed(regs.size());
  OpBuilder::InsertionGuard guard(b);
  if (auto dp = dl.emission.defPoints.find(v);
      dp != dl.emission.defPoints.end() && dp->second.block) {
    if (dp->second.after)
      b.setInsertionPointAfter(dp->second.after);
    else
      b.setInsertionPointToStart(dp->second.block);
  }
  if (tf32) {
    for (size_t r = 0; r < regs.size(); ++r)
      packed[r] = toTf32(regs[r]);
    return packed;
  }
  for (size_t r = 0; r + 1 < regs.size(); r += 2)
    packed[r] = pack(regs[r], regs[r + 1]);
  return packed;
}

/// ldmatrix reads 16-bit tiles whose rows are 16-byte aligned.
static bool ldmatrixOk(const std::optional<View> &tile) {
  if (!tile || !tile->isShared() || tile->rank() != 2 ||
      tile->baseType.getRank() != 2)
    return false;
  Type e = tile->elementType();
  return (e.isF16() || e.isBF16()) &&
         (tile->baseType.getDimSize(1) * 2) % 16 == 0;
}

/// The lane's row and matrix among ldmatrix's four, the warp's first row
/// (A) and column (B).
void MmaSyncEmitter::laneCoordinates() {
  Value lane = arith::AndIOp::create(b, loc, dl.kc.tid, dl.idx(31));
  laneRow = arith::AndIOp::create(b, loc, lane, dl.idx(7));
  Value laneMat = arith::ShRUIOp::create(b, loc, lane, dl.idx(3));
  Value warp = arith::ShRUIOp::create(b, loc, dl.kc.tid, dl.idx(5));
  warpM = arith::MulIOp::create(
      b, loc, arith::AndIOp::create(b, loc, warp, dl.idx(wm - 1)),
      dl.idx(s.m / wm));
  warpN = arith::MulIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, warp, dl.idx(log2Exact(wm))),
      dl.idx(s.n / wn));
  matLo8 = arith::MulIOp::create(
      b, loc, arith::AndIOp::create(b, loc, laneMat, dl.idx(1)), dl.idx(8));
  matHi8 = arith::MulIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, laneMat, dl.idx(1)), dl.idx(8));
}

/// Fragments of operand `isB` at constant (fragment-row, k) offsets, one
/// instruction per four 8x8 matrices, transposing when the tile is stored
/// along the fragment's row dimension: 4 x vector<2xT> (A: a0a1..a6a7; B:
/// b0b1, b2b3 of two n tiles). The lane's part of the address is computed
/// once per tile; fragments are constant byte offsets from it (immediates
/// in the PTX).
SmallVector<Value> MmaSyncEmitter::ldmatrix(const View &tile, bool isB,
                                            int64_t fConst, int64_t kConst,
                                            int64_t numTiles) {
  int64_t fDim = isB ? 1 : 0, kDim = isB ? 0 : 1;
  bool transpose = tile.dimOf[kDim] != 1;
  int64_t pitch = tile.baseType.getDimSize(1);
  Value &lanePtr = lanePtrs[tile.base];
  if (!lanePtr) {
    Value f = arith::AddIOp::create(b, loc, isB ? warpN : warpM,
                                    isB ? matHi8 : matLo8);
    Value k = isB ? matLo8 : matHi8;
    if (transpose)
      k = arith::AddIOp::create(b, loc, k, laneRow);
    else
      f = arith::AddIOp::create(b, loc, f, laneRow);
    SmallVector<Value> indices(2);
    indices[tile.dimOf[fDim]] = f;
    indices[tile.dimOf[kDim]] = k;
    Value elem = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, indices[0], dl.idx(pitch)),
        indices[1]);
    auto viewOp = tile.base.getDefiningOp<memref::ViewOp>();
    Value byteOffset = arith::AddIOp::create(
        b, loc, viewOp.getByteShift(),
        arith::MulIOp::create(b, loc, elem, dl.idx(2)));
    Value base =
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, dl.kc.smemBase);
    lanePtr = arith::IndexCastOp::create(
        b, loc, b.getI32Type(), arith::AddIOp::create(b, loc, base, byteOffset));
  }
  int64_t c[2];
  c[tile.dimOf[fDim]] = fConst;
  c[tile.dimOf[kDim]] = kConst;
  int64_t bytes = (c[0] * pitch + c[1]) * 2;
  // Inline PTX (as Triton emits it): the 32-bit shared address plus an
  // immediate, so no per-fragment address lives in a register. Marked as
  // having side effects: it must stay between the barriers.
  std::string text = "ldmatrix.sync.aligned.m8n8.x" + std::to_string(numTiles) +
                     (transpose ? ".trans" : "") + ".shared.b16 {";
  std::string constraints;
  for (int64_t j = 0; j < numTiles; ++j) {
    text += (j ? ", $" : "$") + std::to_string(j);
    constraints += "=r,";
  }
  text += "}, [$" + std::to_string(numTiles) + "+" + std::to_string(bytes) +
          "];";
  constraints += "r";
  Type i32t = b.getI32Type();
  SmallVector<Type> fields(numTiles, i32t);
  Type resType = LLVM::LLVMStructType::getLiteral(b.getContext(), fields);
  Value m = inlineAsm(b, loc, resType, ValueRange{lanePtr}, text, constraints);
  SmallVector<Value> regs;
  for (int64_t j = 0; j < numTiles; ++j) {
    Value v = LLVM::ExtractValueOp::create(b, loc, m, ArrayRef<int64_t>{j});
    if (mmaType == NVVM::MMATypes::f16)
      v = vector::BitCastOp::create(
          b, loc, VectorType::get({2}, s.a),
          vector::FromElementsOp::create(b, loc, VectorType::get({1}, i32t),
                                         ValueRange{v}));
    regs.push_back(v);
  }
  return regs;
}

/// The A fragment of m tile `mi` at k step `kk`: tf32 a0..a3 are registers
/// r0..r0+3 of the tile; f16/bf16 a0a1..a6a7 are r0..r0+7 in pairs.
FailureOr<SmallVector<Value>> MmaSyncEmitter::aFragment(int64_t mi,
                                                        int64_t kk) {
  uint64_t lin =
      (uint64_t(mi * 16) << log2Exact(s.k)) | uint64_t(kk * kStep);
  int64_t r0 = *registerOf(dl.layout(aId), lin);
  int64_t count = tf32 ? 4 : 8;
  SmallVector<int64_t> subset;
  for (int64_t j = 0; j < count; ++j)
    subset.push_back(r0 + j);
  SmallVector<Value> frag;
  if (!aStage) {
    for (int64_t j = 0; j < 4; ++j)
      frag.push_back(aPacked[r0 + (tf32 ? j : 2 * j)]);
    return frag;
  }
  if (aLdm)
    return ldmatrix(*aStage, false, mi * 16, kk * 16, 4);
  auto loaded = d.load(*aStage, aId, subset);
  if (failed(loaded))
    return failure();
  for (int64_t j = 0; j < 4; ++j)
    frag.push_back(tf32 ? toTf32((*loaded)[r0 + j])
                        : pack((*loaded)[r0 + 2 * j],
                               (*loaded)[r0 + 2 * j + 1]));
  return frag;
}

/// The B fragment of n tile `ni` at k step `kk` (two registers).
FailureOr<SmallVector<Value>> MmaSyncEmitter::bFragment(int64_t ni,
                                                        int64_t kk) {
  uint64_t lin = (uint64_t(kk * kStep) << log2Exact(s.n)) | uint64_t(ni * 8);
  int64_t r0 = *registerOf(dl.layout(bId), lin);
  SmallVector<int64_t> subset = {r0, r0 + 1, r0 + 2, r0 + 3};
  if (tf32) {
    // b0, b1: registers r0, r0+1.
    if (!bStage)
      return SmallVector<Value>{bPacked[r0], bPacked[r0 + 1]};
    auto loaded = d.load(*bStage, bId, {r0, r0 + 1});
    if (failed(loaded))
      return failure();
    return SmallVector<Value>{toTf32((*loaded)[r0]),
                              toTf32((*loaded)[r0 + 1])};
  }
  if (bStage && bLdm) {
    // Two n tiles per ldmatrix.x4.
    int64_t nTiles = s.n / wn / 8;
    if (ni % 2 == 0)
      bPair = ldmatrix(*bStage, true, ni * 8, kk * 16, ni + 1 < nTiles ? 4 : 2);
    return SmallVector<Value>{bPair[(ni % 2) * 2], bPair[(ni % 2) * 2 + 1]};
  }
  if (bStage) {
    auto loaded = d.load(*bStage, bId, subset);
    if (failed(loaded))
      return failure();
    SmallVector<Value> frag;
    for (int64_t r : subset)
      frag.push_back((*loaded)[r]);
    return SmallVector<Value>{pack(frag[0], frag[1]), pack(frag[2], frag[3])};
  }
  return SmallVector<Value>{bPacked[r0], bPacked[r0 + 2]};
}

/// One mma.sync on the accumulator registers of tile (`mi`, `ni`).
void MmaSyncEmitter::mma(ArrayRef<Value> aFrag, ArrayRef<Value> bFrag,
                         int64_t mi, int64_t ni) {
  Type f32 = b.getF32Type();
  Type resultType = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                     {f32, f32, f32, f32});
  SmallVector<Value> &acc = dl.acc;
  uint64_t lin = (uint64_t(mi * 16) << log2Exact(s.n)) | uint64_t(ni * 8);
  int64_t r0 = *registerOf(dl.C, lin);
  SmallVector<Value> cFrag = {acc[r0], acc[r0 + 1], acc[r0 + 2], acc[r0 + 3]};
  auto op = NVVM::MmaOp::create(
      b, loc, resultType, aFrag, bFrag, cFrag,
      {16, 8, static_cast<int32_t>(kStep)}, std::nullopt, std::nullopt,
      std::array<NVVM::MMATypes, 2>{mmaType, mmaType},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  for (int64_t j = 0; j < 4; ++j)
    acc[r0 + j] = LLVM::ExtractValueOp::create(b, loc, op.getResult(),
                                               ArrayRef<int64_t>{j});
}

/// The k steps: the wait for each cp.async chunk, the fragments, the mmas.
LogicalResult MmaSyncEmitter::emitKLoop() {
  bool async = !plans.empty();
  for (int64_t kk = 0; kk < s.k / kStep; ++kk) {
    if (async && (kk * kStep) % sched.chunkK == 0) {
      // This chunk's copies (and those of every thread) have landed.
      int64_t c = kk * kStep / sched.chunkK;
      NVVM::CpAsyncWaitGroupOp::create(
          b, loc, b.getI32IntegerAttr(sched.numChunks - 1 - c));
      dl.barrier();
    }
    SmallVector<SmallVector<Value>> aFrag;
    for (int64_t mi = 0; mi < s.m / wm / 16; ++mi) {
      auto frag = aFragment(mi, kk);
      if (failed(frag))
        return failure();
      aFrag.push_back(std::move(*frag));
    }
    for (int64_t ni = 0; ni < s.n / wn / 8; ++ni) {
      auto bFrag = bFragment(ni, kk);
      if (failed(bFrag))
        return failure();
      for (int64_t mi = 0; mi < s.m / wm / 16; ++mi)
        mma(aFrag[mi], *bFrag, mi, ni);
    }
  }
  return success();
}

LogicalResult MmaSyncEmitter::run() {
  wm = dl.C.warpsM;
  wn = dl.C.warpsN;
  // f16/bf16: m16n8k16; f32: m16n8k8 on tf32.
  tf32 = tf32Types(dl.op, s);
  kStep = tf32 ? 8 : 16;
  FragmentSelect select{pallasc::MatrixInstrKind::MmaSync, kStep};
  aId = dl.intern(
      fragmentLayout(select, pallasc::MatrixOperand::A, s.m, s.k, wm, wn));
  bId = dl.intern(
      fragmentLayout(select, pallasc::MatrixOperand::B, s.k, s.n, wm, wn));
  schedulePipeline();
  if (failed(stageOperands()))
    return failure();
  mmaType = tf32           ? NVVM::MMATypes::tf32
            : s.a.isBF16() ? NVVM::MMATypes::bf16
                           : NVVM::MMATypes::f16;
  laneCoordinates();
  aLdm = ldmatrixOk(aStage);
  bLdm = ldmatrixOk(bStage);
  if (!aStage)
    aPacked = packAll(dl.aVal, aRegs);
  if (!bStage)
    bPacked = packAll(dl.bVal, bRegs);
  if (failed(emitKLoop()))
    return failure();
  if (staged)
    dl.barrier();
  return dl.finish(dl.acc);
}

LogicalResult DotLowering::mmaSync() { return MmaSyncEmitter(*this).run(); }
