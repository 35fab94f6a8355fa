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

LogicalResult DotLowering::mmaSync() {
  int64_t wm = C.warpsM, wn = C.warpsN;
  // f16/bf16: m16n8k16; f32: m16n8k8 on tf32.
  bool tf32 = tf32Types(op, s);
  int64_t kStep = tf32 ? 8 : 16;
  FragmentSelect mma{pallasc::MatrixInstrKind::MmaSync, kStep};
  int aId =
      intern(fragmentLayout(mma, pallasc::MatrixOperand::A, s.m, s.k, wm, wn));
  int bId =
      intern(fragmentLayout(mma, pallasc::MatrixOperand::B, s.k, s.n, wm, wn));
  const Layout &A = layout(aId), &B = layout(bId);
  // Operands come from registers when they already hold the fragments
  // (inRegisters), else from shared memory.
  std::optional<View> aStage, bStage;
  SmallVector<Value> aRegs, bRegs;
  // Streamed operands are copied with cp.async (sm_80+) in chunks along
  // k, each committed as its own group: the mma steps of chunk c wait for
  // that chunk only, and the copies of the later chunks overlap them. Each
  // chunk costs a wait and a block-wide barrier, so a chunk keeps each
  // warp's tensor cores busy for at least kMinMmaPerChunk instructions: a
  // small dot (decode attention's 16-row dots, 32 mma.sync per warp) is
  // waited for whole.
  constexpr int64_t kMinMmaPerChunk = 32;
  int64_t mmaPerWarp = std::max<int64_t>(1, s.m / wm / 16) *
                       std::max<int64_t>(1, s.n / wn / 8) * (s.k / kStep);
  int64_t numChunks = std::max<int64_t>(
      1, std::min<int64_t>({4, s.k / kStep, mmaPerWarp / kMinMmaPerChunk}));
  int64_t chunkK = s.k / numChunks;
  struct AsyncPlan {
    View source, tile;
    int sourceId, tileId; ///< layouts of one chunk
    int64_t sourceDim, tileDim, width;
  };
  SmallVector<AsyncPlan, 2> plans;
  auto planAsync = [&](Value v, int64_t kdim) -> std::optional<View> {
    Value x;
    SmallVector<int64_t> perm;
    const View *source = streamedOperand(v, x, perm);
    if (!source)
      return std::nullopt;
    auto type = cast<RankedTensorType>(v.getType());
    // The whole tile as stage() lays it out (ldmatrix reads it the same).
    int sourceId;
    int id = d.streamedLayouts(v, x, perm, sourceId);
    int64_t bytes;
    View tile = d.tileView(type, id, nextTileOffset(), bytes);
    // One chunk: its own blocked layout over the source, seen through the
    // transpose in the tile.
    StreamedChunk ch = streamedChunk(v, x, perm, kdim, chunkK);
    SmallVector<OpFoldResult> zeros(type.getRank(), b.getIndexAttr(0));
    SmallVector<int64_t> ones(type.getRank(), 1);
    View src0 = d.subview(*source, zeros, {}, ch.sourceShape, ones, {});
    View dst0 = d.subview(tile, zeros, {}, ch.shape, ones, {});
    int64_t width = d.asyncCopyWidth(src0, ch.sourceId, dst0, ch.tileId);
    if (!width) {
      if (Operation *def = tile.base.getDefiningOp(); def && def->use_empty())
        def->erase();
      return std::nullopt;
    }
    reserveTile(bytes);
    plans.push_back(AsyncPlan{*source, tile, ch.sourceId, ch.tileId,
                              ch.sourceDim, kdim, width});
    return tile;
  };
  // Operands copied stages steps ahead (planStages).
  const StagingState::StagePlan *sp = nullptr;
  if (auto it = staging.stagePlans.find(op); it != staging.stagePlans.end())
    sp = &it->second;
  if (sp) {
    Value iv = kc.seqIv;
    Value numStagesV = idx(sp->stages);
    struct Staged {
      Value arg;
      int sourceId, tileId;
      View tile; ///< stage 0
      int64_t width;
    };
    SmallVector<Staged, 2> staged;
    for (auto [i, v] : llvm::enumerate(sp->values)) {
      Value x;
      SmallVector<int64_t> perm;
      const View *source = d.streamedSource(v, perm, x);
      auto tt = x.getDefiningOp<bufferization::ToTensorOp>();
      if (!source || !tt)
        return op->emitOpError() << "lost a prefetched dot operand";
      auto type = cast<RankedTensorType>(v.getType());
      int sourceId;
      int id = d.streamedLayouts(v, x, perm, sourceId);
      int64_t bytes;
      View tile = d.tileView(type, id, sp->region + sp->offsets[i], bytes);
      int64_t width = d.asyncCopyWidth(*source, sourceId, tile, id);
      if (!width || bytes > sp->stageBytes)
        return op->emitOpError()
               << "cannot prefetch a dot operand with cp.async";
      staged.push_back({tt.getBuffer(), sourceId, id, tile, width});
    }
    // The tile of `stage` (index): stage 0's view shifted.
    auto stageView = [&](const View &tile, Value stage) {
      auto viewOp = tile.base.getDefiningOp<memref::ViewOp>();
      Value shift = arith::AddIOp::create(
          b, loc, viewOp.getByteShift(),
          arith::MulIOp::create(b, loc, stage, idx(sp->stageBytes)));
      View v = tile;
      v.base = memref::ViewOp::create(b, loc, viewOp.getType(),
                                      viewOp.getSource(), shift,
                                      viewOp.getSizes());
      return v;
    };
    auto issue = [&](Value j) -> LogicalResult {
      Value stage = arith::RemUIOp::create(b, loc, j, numStagesV);
      for (const Staged &st : staged) {
        auto src = kc.tmaSources.lookup(st.arg).viewAt(b, j);
        if (failed(src) ||
            failed(d.copyAsync(*src, st.sourceId, stageView(st.tile, stage),
                             st.tileId, st.width)))
          return op->emitOpError() << "cannot prefetch a dot operand "
                                      "with cp.async";
      }
      return success();
    };
    // One commit group per step, in range or not.
    if (failed(d.prefetchSteps(sp->stages, issue, [&] {
          NVVM::CpAsyncCommitGroupOp::create(b, loc);
        })))
      return failure();
    NVVM::CpAsyncWaitGroupOp::create(
        b, loc, b.getI32IntegerAttr(sp->stages - 1));
    barrier();
    Value stage = arith::RemUIOp::create(b, loc, iv, numStagesV);
    for (auto [i, v] : llvm::enumerate(sp->values)) {
      View t = stageView(staged[i].tile, stage);
      if (v == aVal)
        aStage = t;
      else
        bStage = t;
    }
  }
  if (!sp && kc.target->hasCpAsync && !inRegisters(aVal, aId))
    aStage = planAsync(aVal, 1);
  if (!sp && kc.target->hasCpAsync && !inRegisters(bVal, bId))
    bStage = planAsync(bVal, 0);
  for (int64_t c = 0; c < numChunks && !plans.empty(); ++c) {
    for (const AsyncPlan &p : plans) {
      int64_t rank = p.tile.rank();
      SmallVector<OpFoldResult> so(rank, b.getIndexAttr(0)), to = so;
      so[p.sourceDim] = b.getIndexAttr(c * chunkK);
      to[p.tileDim] = b.getIndexAttr(c * chunkK);
      SmallVector<int64_t> ones(rank, 1);
      SmallVector<int64_t> sshape(layout(p.sourceId).shape.begin(),
                                  layout(p.sourceId).shape.end());
      SmallVector<int64_t> tshape(layout(p.tileId).shape.begin(),
                                  layout(p.tileId).shape.end());
      View src = d.subview(p.source, so, {}, sshape, ones, {});
      View dst = d.subview(p.tile, to, {}, tshape, ones, {});
      if (failed(d.copyAsync(src, p.sourceId, dst, p.tileId, p.width)))
        return op->emitOpError() << "cannot copy a dot operand with "
                                    "cp.async";
    }
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
  }
  bool async = !plans.empty();
  bool storedNow = false; // an operand stored into the workspace here
  if (aStage) {
    // staged by cp.async above
  } else if (inRegisters(aVal, aId)) {
    auto r = d.get(aVal, aId);
    if (failed(r))
      return failure();
    aRegs = *r;
  } else {
    auto v = stage(aVal);
    if (failed(v))
      return failure();
    aStage = *v;
    storedNow |= !staging.loopStaged.contains(aVal);
  }
  if (bStage) {
    // staged by cp.async above
  } else if (inRegisters(bVal, bId)) {
    auto r = d.get(bVal, bId);
    if (failed(r))
      return failure();
    bRegs = *r;
  } else {
    auto v = stage(bVal);
    if (failed(v))
      return failure();
    bStage = *v;
    storedNow |= !staging.loopStaged.contains(bVal);
  }
  bool staged = aStage || bStage;
  // Tiles a loop's ring prefetched were waited for and published at the
  // start of the iteration (loopStagesBody).
  bool onlyPrefetched = (!aStage || staging.loopStaged.contains(aVal)) &&
                        (!bStage || staging.loopStaged.contains(bVal));
  if (staged && !async && (storedNow || (!sp && !onlyPrefetched)))
    barrier();
  int64_t nbA = log2Exact(s.k), nbC = log2Exact(s.n), nbB = nbC;
  auto mmaType = tf32          ? NVVM::MMATypes::tf32
                 : s.a.isBF16() ? NVVM::MMATypes::bf16
                                : NVVM::MMATypes::f16;
  // An f32 operand element as the tf32 the instruction reads (rounded to
  // nearest, ties away, as cvt.rna.tf32.f32 does).
  auto toTf32 = [&](Value x) -> Value {
    return NVVM::ConvertFloatToTF32Op::create(
        b, loc, b.getI32Type(), x, NVVM::FPRoundingMode::RNA,
        NVVM::SaturationMode::NONE, false);
  };
  Type f32 = b.getF32Type();
  Type resultType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), {f32, f32, f32, f32});
  auto pack = [&](Value x, Value y) -> Value {
    auto vt = VectorType::get({2}, s.a);
    Value v = vector::FromElementsOp::create(b, loc, vt, ValueRange{x, y});
    if (mmaType == NVVM::MMATypes::f16)
      return v;
    Value i = vector::BitCastOp::create(
        b, loc, VectorType::get({1}, b.getI32Type()), v);
    return vector::ExtractOp::create(b, loc, i, 0);
  };
  // Register-resident operands are packed in pairs where they are
  // defined, so the unpacked values (e.g. f32 probabilities before their
  // f16 truncation) die there rather than at the last mma.
  auto packAll = [&](Value v, ArrayRef<Value> regs) {
    SmallVector<Value> packed(regs.size());
    OpBuilder::InsertionGuard guard(b);
    if (auto dp = emission.defPoints.find(v);
        dp != emission.defPoints.end() && dp->second.block) {
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
  };
  // ldmatrix on 16-bit tiles whose rows are 16-byte aligned: one
  // instruction per four 8x8 matrices, transposing when the tile is
  // stored along the fragment's row dimension.
  auto ldmatrixOk = [&](const std::optional<View> &tile) {
    if (!tile || !tile->isShared() || tile->rank() != 2 ||
        tile->baseType.getRank() != 2)
      return false;
    Type e = tile->elementType();
    return (e.isF16() || e.isBF16()) &&
           (tile->baseType.getDimSize(1) * 2) % 16 == 0;
  };
  Value lane = arith::AndIOp::create(b, loc, kc.tid, idx(31));
  Value laneRow = arith::AndIOp::create(b, loc, lane, idx(7));
  Value laneMat = arith::ShRUIOp::create(b, loc, lane, idx(3));
  Value warp = arith::ShRUIOp::create(b, loc, kc.tid, idx(5));
  Value warpM = arith::MulIOp::create(
      b, loc, arith::AndIOp::create(b, loc, warp, idx(wm - 1)),
      idx(s.m / wm));
  Value warpN = arith::MulIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, warp, idx(log2Exact(wm))),
      idx(s.n / wn));
  Value matLo8 = arith::MulIOp::create(
      b, loc, arith::AndIOp::create(b, loc, laneMat, idx(1)), idx(8));
  Value matHi8 = arith::MulIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, laneMat, idx(1)), idx(8));
  // Fragments of operand `isB` at constant (fragment-row, k) offsets: 4 x
  // vector<2xT> (A: a0a1..a6a7; B: b0b1, b2b3 of two n tiles). The lane's
  // part of the address is computed once per tile; fragments are constant
  // byte offsets from it (immediates in the PTX).
  DenseMap<Value, Value> lanePtrs;
  auto ldmatrix = [&](const View &tile, bool isB, int64_t fConst,
                      int64_t kConst, int64_t numTiles) {
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
          b, loc, arith::MulIOp::create(b, loc, indices[0], idx(pitch)),
          indices[1]);
      auto viewOp = tile.base.getDefiningOp<memref::ViewOp>();
      Value byteOffset = arith::AddIOp::create(
          b, loc, viewOp.getByteShift(),
          arith::MulIOp::create(b, loc, elem, idx(2)));
      Value base = memref::ExtractAlignedPointerAsIndexOp::create(
          b, loc, kc.smemBase);
      lanePtr = arith::IndexCastOp::create(
          b, loc, b.getI32Type(),
          arith::AddIOp::create(b, loc, base, byteOffset));
    }
    int64_t c[2];
    c[tile.dimOf[fDim]] = fConst;
    c[tile.dimOf[kDim]] = kConst;
    int64_t bytes = (c[0] * pitch + c[1]) * 2;
    // Inline PTX (as Triton emits it): the 32-bit shared address plus an
    // immediate, so no per-fragment address lives in a register. Marked
    // as having side effects: it must stay between the barriers.
    std::string text = "ldmatrix.sync.aligned.m8n8.x" +
                       std::to_string(numTiles) +
                       (transpose ? ".trans" : "") + ".shared.b16 {";
    std::string constraints;
    for (int64_t j = 0; j < numTiles; ++j) {
      text += (j ? ", $" : "$") + std::to_string(j);
      constraints += "=r,";
    }
    text += "}, [$" + std::to_string(numTiles) + "+" +
            std::to_string(bytes) + "];";
    constraints += "r";
    Type i32t = b.getI32Type();
    SmallVector<Type> fields(numTiles, i32t);
    Type resType = LLVM::LLVMStructType::getLiteral(b.getContext(), fields);
    Value m = LLVM::InlineAsmOp::create(
                  b, loc, resType, ValueRange{lanePtr},
                  b.getStringAttr(text), b.getStringAttr(constraints),
                  b.getUnitAttr(), nullptr,
                  LLVM::TailCallKindAttr::get(b.getContext(),
                                              LLVM::tailcallkind::TailCallKind::None),
                  nullptr, nullptr)
                  .getResult(0);
    SmallVector<Value> regs;
    for (int64_t j = 0; j < numTiles; ++j) {
      Value v = LLVM::ExtractValueOp::create(b, loc, m,
                                             ArrayRef<int64_t>{j});
      if (mmaType == NVVM::MMATypes::f16)
        v = vector::BitCastOp::create(
            b, loc, VectorType::get({2}, s.a),
            vector::FromElementsOp::create(
                b, loc, VectorType::get({1}, i32t), ValueRange{v}));
      regs.push_back(v);
    }
    return regs;
  };
  bool aLdm = ldmatrixOk(aStage), bLdm = ldmatrixOk(bStage);
  int64_t nTiles = s.n / wn / 8;
  SmallVector<Value> aPacked, bPacked;
  if (!aStage)
    aPacked = packAll(aVal, aRegs);
  if (!bStage)
    bPacked = packAll(bVal, bRegs);
  SmallVector<Value> bPair;
  for (int64_t kk = 0; kk < s.k / kStep; ++kk) {
    if (async && (kk * kStep) % chunkK == 0) {
      // This chunk's copies (and those of every thread) have landed.
      int64_t c = kk * kStep / chunkK;
      NVVM::CpAsyncWaitGroupOp::create(
          b, loc, b.getI32IntegerAttr(numChunks - 1 - c));
      barrier();
    }
    // Fragments of this k step.
    SmallVector<SmallVector<Value>> aFrag, bFrag;
    // A fragments: tf32 a0..a3 are registers r0..r0+3 of the tile;
    // f16/bf16 a0a1..a6a7 are r0..r0+7 in pairs.
    for (int64_t mi = 0; mi < s.m / wm / 16; ++mi) {
      uint64_t lin = (uint64_t(mi * 16) << nbA) | uint64_t(kk * kStep);
      int64_t r0 = *registerOf(A, lin);
      int64_t count = tf32 ? 4 : 8;
      SmallVector<int64_t> subset;
      for (int64_t j = 0; j < count; ++j)
        subset.push_back(r0 + j);
      if (!aStage) {
        SmallVector<Value> frag;
        for (int64_t j = 0; j < 4; ++j)
          frag.push_back(aPacked[r0 + (tf32 ? j : 2 * j)]);
        aFrag.push_back(frag);
        continue;
      }
      if (aLdm) {
        aFrag.push_back(ldmatrix(*aStage, false, mi * 16, kk * 16, 4));
        continue;
      }
      auto loaded = d.load(*aStage, aId, subset);
      if (failed(loaded))
        return failure();
      SmallVector<Value> frag;
      for (int64_t j = 0; j < 4; ++j)
        frag.push_back(tf32 ? toTf32((*loaded)[r0 + j])
                            : pack((*loaded)[r0 + 2 * j],
                                   (*loaded)[r0 + 2 * j + 1]));
      aFrag.push_back(frag);
    }
    for (int64_t ni = 0; ni < s.n / wn / 8; ++ni) {
      bFrag.clear();
      uint64_t lin = (uint64_t(kk * kStep) << nbB) | uint64_t(ni * 8);
      int64_t r0 = *registerOf(B, lin);
      SmallVector<int64_t> subset = {r0, r0 + 1, r0 + 2, r0 + 3};
      if (tf32) {
        // b0, b1: registers r0, r0+1.
        if (bStage) {
          auto loaded = d.load(*bStage, bId, {r0, r0 + 1});
          if (failed(loaded))
            return failure();
          bFrag.push_back({toTf32((*loaded)[r0]), toTf32((*loaded)[r0 + 1])});
        } else {
          bFrag.push_back({bPacked[r0], bPacked[r0 + 1]});
        }
      } else if (bStage && bLdm) {
        // Two n tiles per ldmatrix.x4.
        if (ni % 2 == 0) {
          bPair = ldmatrix(*bStage, true, ni * 8, kk * 16,
                           ni + 1 < nTiles ? 4 : 2);
        }
        bFrag.push_back({bPair[(ni % 2) * 2], bPair[(ni % 2) * 2 + 1]});
      } else if (bStage) {
        auto loaded = d.load(*bStage, bId, subset);
        if (failed(loaded))
          return failure();
        SmallVector<Value> frag;
        for (int64_t r : subset)
          frag.push_back((*loaded)[r]);
        bFrag.push_back({pack(frag[0], frag[1]), pack(frag[2], frag[3])});
      } else {
        bFrag.push_back({bPacked[r0], bPacked[r0 + 2]});
      }
      for (int64_t mi = 0; mi < s.m / wm / 16; ++mi) {
        uint64_t lin = (uint64_t(mi * 16) << nbC) | uint64_t(ni * 8);
        int64_t r0 = *registerOf(C, lin);
        SmallVector<Value> cFrag = {acc[r0], acc[r0 + 1], acc[r0 + 2],
                                    acc[r0 + 3]};
        auto mma = NVVM::MmaOp::create(
            b, loc, resultType, aFrag[mi], bFrag[0], cFrag,
            {16, 8, static_cast<int32_t>(kStep)},
            std::nullopt, std::nullopt,
            std::array<NVVM::MMATypes, 2>{mmaType, mmaType},
            std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                           NVVM::MMALayout::col});
        for (int64_t j = 0; j < 4; ++j)
          acc[r0 + j] = LLVM::ExtractValueOp::create(b, loc, mma.getResult(),
                                                     ArrayRef<int64_t>{j});
      }
    }
  }
  if (staged)
    barrier();
  return finish(acc);

}
