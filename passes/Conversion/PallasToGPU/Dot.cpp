//===- Dot.cpp - linalg.matmul on a thread block ----------------*- C++ -*-===//
//
// f16/bf16 x f16/bf16 -> f32 on sm_80+: `mma.sync.m16n8k16` (nvvm.mma.sync)
// with the accumulator in the mma C fragment layout. Operands already held
// in the A/B fragment layouts (e.g. a softmax computed in the accumulator
// layout of a previous dot) are used from registers; small loop-invariant
// ones are converted into it once; the rest is staged in shared memory
// (padded rows, stored in the order the value is contiguous in) and each
// fragment is read just before its mma.
//
// On AMD CDNA (gfx90a, gfx94x): `v_mfma_f32_16x16x16{f16,bf16}`
// (amdgpu.mfma) on wave64, with the operands staged in LDS (or taken from
// registers already in the fragment layouts) and read per k step; on CDNA4
// (gfx950) `v_mfma_f32_16x16x32_{f16,bf16}` where K is a multiple of 32
// (the chip's entry of the target table, mfmaEntry: the k step, 8 operand
// elements per lane); on RDNA
// (gfx11, gfx12) the same with `v_wmma_f32_16x16x16_{f16,bf16}` on wave32
// (Wmma.cpp: its fragments and op).
//
// f32 x f32 -> f32 at the default or `high` precision on sm_80+: tf32 tensor
// cores, `mma.sync.m16n8k8.tf32` with the operands rounded to tf32 (cvt.rna)
// as they are read, as Pallas' Triton lowering does (DEFAULT and HIGH map to
// tf32, HIGHEST to IEEE f32).
//
// Everything else (exact f32, integers, batched dots): a SIMT dot with both
// operands in shared memory and the accumulator in the result's layout.
//
// Upstream has no pattern from linalg.matmul on tensors to mma.sync on a
// thread block's registers; this file is that pattern.
//
//===----------------------------------------------------------------------===//


#include "passes/Conversion/PallasToGPU/Distribute.h"
#include "passes/Conversion/PallasToGPU/DotUtils.h"

#include "dialects/Pallas/IR/PallasOps.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::gpu;
using namespace mlir::pallas::gpu::detail;

const View *Distributor::streamedSource(Value v, SmallVector<int64_t> &perm,
                                        Value &x) {
  x = v;
  perm.clear();
  if (auto t = v.getDefiningOp<linalg::TransposeOp>()) {
    x = t.getInput();
    perm.assign(t.getPermutation().begin(), t.getPermutation().end());
  }
  auto tt = x.getDefiningOp<bufferization::ToTensorOp>();
  if (!tt)
    return nullptr;
  if (auto it = snapshots.find(tt.getBuffer()); it != snapshots.end())
    return &it->second;
  if (auto it = views.find(tt.getBuffer()); it != views.end())
    return &it->second;
  return nullptr;
}

int Distributor::streamedLayouts(Value v, Value x, ArrayRef<int64_t> perm,
                                 int &sourceId) {
  sourceId = defaultLayout(cast<RankedTensorType>(x.getType()));
  if (perm.empty())
    return sourceId;
  return intern(projectLayout(layout(sourceId), perm,
                              cast<RankedTensorType>(v.getType()).getShape()));
}

WaveMatrixInstr
mlir::pallas::gpu::detail::mfmaInstr(const pallasc::GpuTarget &target,
                                     const DotShape &s) {
  const pallasc::MatrixInstr *entry = mfmaEntry(target, s);
  WaveMatrixInstr i;
  // 64 lanes: 16 rows (columns) of A (B) times 4 groups of k / 4 elements.
  i.k = entry ? entry->k : 16;
  int64_t perLane = i.k / 4;
  i.aRegs = i.bRegs = perLane;
  i.cRegs = 4;
  i.aLayout = [perLane](int64_t m, int64_t k, int64_t wm, int64_t wn) {
    return mfmaALayout(m, k, wm, wn, perLane);
  };
  i.bLayout = [perLane](int64_t k, int64_t n, int64_t wm, int64_t wn) {
    return mfmaBLayout(k, n, wm, wn, perLane);
  };
  i.cLayout = [](int64_t m, int64_t n, int64_t wm, int64_t wn) {
    return mfmaCLayout(m, n, wm, wn);
  };
  int64_t k = i.k;
  i.create = [k](OpBuilder &b, Location loc, Value a, Value bv, Value c) {
    return amdgpu::MFMAOp::create(b, loc, c.getType(), 16, 16, k, 1, a, bv,
                                  c)
        .getResult();
  };
  return i;
}

void mlir::pallas::gpu::populateDotEmitters(EmitterRegistry &r) {
  r.add<linalg::MatmulOp, linalg::BatchMatmulOp>(&Distributor::emitDot);
}

LogicalResult Distributor::emitDot(Operation *op) {
  auto lin = cast<linalg::LinalgOp>(op);
  Location loc = op->getLoc();
  DotShape s = dotShape(op);
  Value aVal = lin.getDpsInputs()[0], bVal = lin.getDpsInputs()[1];
  Value init = lin.getDpsInits()[0];
  int cId = layoutOf.count(op->getResult(0)) ? layoutOf.lookup(op->getResult(0))
                                              : dotLayout(op);
  const Layout &C = layout(cId);
  auto cRegsOr = get(init, cId);
  if (failed(cRegsOr))
    return failure();
  SmallVector<Value> acc = *cRegsOr;
  if (C.family == Layout::Family::WgmmaC && s.batch == 0)
    return emitWgmma(op, cId, acc);

  // Stages `v` in the workspace, stored along the dimension its layout is
  // contiguous in.
  int64_t wsOffset = 0;
  // Rows of staged tiles are padded by 16 bytes (no bank conflicts) unless
  // the padded tiles would not fit the chip's shared memory.
  bool padStaged = true;
  auto stage = [&](Value v) -> FailureOr<View> {
    if (auto it = stagedViews.find(v); it != stagedViews.end())
      return it->second;
    auto type = cast<RankedTensorType>(v.getType());
    int64_t bytes;
    if (streamed.contains(v)) {
      // A streamed load: copied group by group from its view.
      Value x;
      SmallVector<int64_t> perm;
      const View *source = streamedSource(v, perm, x);
      if (!source)
        return v.getDefiningOp()->emitOpError()
               << "reads a memref that is not a view";
      int sourceId;
      int id = streamedLayouts(v, x, perm, sourceId);
      View tile =
          tileView(type, id, kc.workspaceOffset + wsOffset, bytes, padStaged);
      wsOffset += (bytes + 127) / 128 * 128;
      kc.workspaceBytes = std::max(kc.workspaceBytes, wsOffset);
      // Four access groups at a time: a few registers in flight.
      int64_t chunk = 4 * groupWidth(*source, sourceId);
      for (int64_t r0 = 0; r0 < layout(id).numRegs(); r0 += chunk) {
        SmallVector<int64_t> subset;
        for (int64_t r = r0; r < std::min(r0 + chunk, layout(id).numRegs());
             ++r)
          subset.push_back(r);
        auto part = load(*source, sourceId, subset);
        if (failed(part))
          return failure();
        if (failed(storeTile(tile, id, *part, subset)))
          return failure();
      }
      return tile;
    }
    int id = layoutOrDefault(v);
    auto regs = get(v, id);
    if (failed(regs))
      return failure();
    View tile =
        tileView(type, id, kc.workspaceOffset + wsOffset, bytes, padStaged);
    wsOffset += (bytes + 127) / 128 * 128;
    kc.workspaceBytes = std::max(kc.workspaceBytes, wsOffset);
    if (failed(storeTile(tile, id, *regs)))
      return failure();
    return tile;
  };

  std::optional<WaveMatrixInstr> wave = waveMatrixInstr(C, *kc.target, s);
  if (wave && s.batch == 0) {
    int64_t wm = C.warpsM, wn = C.warpsN;
    int aId = intern(wave->aLayout(s.m, s.k, wm, wn));
    int bId = intern(wave->bLayout(s.k, s.n, wm, wn));
    // An operand comes from registers when they already hold its fragments
    // (e.g. probabilities computed in the accumulator layout of an earlier
    // dot); otherwise it is staged in LDS and each fragment is read just
    // before its instruction.
    auto fromRegisters = [&](Value v, int want) -> std::optional<
                                                    SmallVector<Value>> {
      if (stagedViews.count(v) || streamed.contains(v))
        return std::nullopt;
      auto it = dists.find(v);
      if (!flexible.contains(v) &&
          (it == dists.end() ||
           !providesLocally(layout(it->second.layout), layout(want))))
        return std::nullopt;
      auto regs = get(v, want);
      if (failed(regs))
        return std::nullopt;
      return *regs;
    };
    std::optional<SmallVector<Value>> aRegs = fromRegisters(aVal, aId);
    std::optional<SmallVector<Value>> bRegs = fromRegisters(bVal, bId);
    // Operands loaded from global memory for this dot only are staged one
    // k chunk at a time in a chunk-sized LDS tile (LDS is 64 KiB on CDNA2/3:
    // two padded 128x128 bf16 tiles would not fit); the others whole.
    int64_t kStep = wave->k;
    int64_t chunkK = std::min<int64_t>(s.k, std::max<int64_t>(32, kStep));
    struct Chunked {
      const View *source;
      int sourceId, tileId; ///< layouts of one chunk (source, tile shape)
      int64_t sourceDim;
      View tile;
    };
    int aChunkId = intern(wave->aLayout(s.m, chunkK, wm, wn));
    int bChunkId = intern(wave->bLayout(chunkK, s.n, wm, wn));
    // `fragmentId`: the operand layout of one chunk; the tile is stored
    // along the dimension its fragments are contiguous in (k), so each
    // fragment is one LDS read (B's copy transposes on the way in).
    auto planChunked = [&](Value v, int64_t kdim,
                           int fragmentId) -> std::optional<Chunked> {
      if (!streamed.contains(v) || stagedViews.count(v) || chunkK == s.k)
        return std::nullopt;
      Value x;
      SmallVector<int64_t> perm;
      const View *source = streamedSource(v, perm, x);
      if (!source)
        return std::nullopt;
      auto type = cast<RankedTensorType>(v.getType());
      auto stype = cast<RankedTensorType>(x.getType());
      int64_t sdim = perm.empty() ? kdim : perm[kdim];
      SmallVector<int64_t> cshape(type.getShape()), scshape(stype.getShape());
      cshape[kdim] = chunkK;
      scshape[sdim] = chunkK;
      int csId = defaultLayout(
          RankedTensorType::get(scshape, stype.getElementType()));
      int ctId = perm.empty() ? csId
                              : intern(projectLayout(layout(csId), perm,
                                                     cshape));
      int64_t bytes;
      View tile =
          tileView(RankedTensorType::get(cshape, type.getElementType()),
                   fragmentId, kc.workspaceOffset + wsOffset, bytes);
      wsOffset += (bytes + 127) / 128 * 128;
      kc.workspaceBytes = std::max(kc.workspaceBytes, wsOffset);
      return Chunked{source, csId, ctId, sdim, tile};
    };
    std::optional<Chunked> aChunked, bChunked;
    std::optional<View> aStage, bStage;
    if (!aRegs && !(aChunked = planChunked(aVal, 1, aChunkId))) {
      auto v = stage(aVal);
      if (failed(v))
        return failure();
      aStage = *v;
    }
    if (!bRegs && !(bChunked = planChunked(bVal, 0, bChunkId))) {
      auto v = stage(bVal);
      if (failed(v))
        return failure();
      bStage = *v;
    }
    if (aStage || bStage)
      barrier();
    // Copies chunk `c` of a chunked operand into its tile.
    auto copyChunk = [&](const Chunked &ch, int64_t c) -> LogicalResult {
      int64_t rank = ch.source->rank();
      SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
      offsets[ch.sourceDim] = b.getIndexAttr(c * chunkK);
      SmallVector<int64_t> shape(layout(ch.sourceId).shape.begin(),
                                 layout(ch.sourceId).shape.end());
      SmallVector<int64_t> ones(rank, 1);
      View src = subview(*ch.source, offsets, {}, shape, ones, {});
      auto regs = load(src, ch.sourceId);
      if (failed(regs))
        return failure();
      return storeTile(ch.tile, ch.tileId, *regs);
    };
    int64_t nbA = log2Exact(s.k), nbB = log2Exact(s.n), nbC = nbB;
    int64_t nbAChunk = log2Exact(chunkK);
    Type f32 = b.getF32Type();
    auto accType = VectorType::get({wave->cRegs}, f32);
    // Registers r0..r0+count-1 of an operand's tile at `lin` in layout `l`
    // as vector<count x T>, read from `tile` or taken from `regs`.
    auto fragment = [&](int lId, uint64_t lin, const View *tile,
                        const std::optional<SmallVector<Value>> &regs,
                        int64_t count) -> FailureOr<Value> {
      int64_t r0 = *registerOf(layout(lId), lin);
      SmallVector<int64_t> subset;
      for (int64_t j = 0; j < count; ++j)
        subset.push_back(r0 + j);
      SmallVector<Value> elems;
      if (tile) {
        auto loaded = load(*tile, lId, subset);
        if (failed(loaded))
          return failure();
        for (int64_t r : subset)
          elems.push_back((*loaded)[r]);
      } else {
        for (int64_t r : subset)
          elems.push_back((*regs)[r]);
      }
      return vector::FromElementsOp::create(
                 b, loc, VectorType::get({count}, s.a), elems)
          .getResult();
    };
    for (int64_t kk = 0; kk < s.k / kStep; ++kk) {
      int64_t kc0 = kk * kStep % chunkK; // k offset inside the chunk
      if ((aChunked || bChunked) && kc0 == 0) {
        if (kk)
          barrier(); // every wavefront is done with the previous chunk
        if (aChunked && failed(copyChunk(*aChunked, kk * kStep / chunkK)))
          return failure();
        if (bChunked && failed(copyChunk(*bChunked, kk * kStep / chunkK)))
          return failure();
        barrier();
      }
      SmallVector<Value> aFrag;
      for (int64_t mi = 0; mi < s.m / wm / 16; ++mi) {
        FailureOr<Value> f =
            aChunked
                ? fragment(aChunkId,
                           (uint64_t(mi * 16) << nbAChunk) | uint64_t(kc0),
                           &aChunked->tile, std::nullopt, wave->aRegs)
                : fragment(aId, (uint64_t(mi * 16) << nbA) | uint64_t(kk * kStep),
                           aStage ? &*aStage : nullptr, aRegs, wave->aRegs);
        if (failed(f))
          return failure();
        aFrag.push_back(*f);
      }
      for (int64_t ni = 0; ni < s.n / wn / 16; ++ni) {
        FailureOr<Value> bFrag =
            bChunked
                ? fragment(bChunkId, (uint64_t(kc0) << nbB) | uint64_t(ni * 16),
                           &bChunked->tile, std::nullopt, wave->bRegs)
                : fragment(bId, (uint64_t(kk * kStep) << nbB) | uint64_t(ni * 16),
                           bStage ? &*bStage : nullptr, bRegs, wave->bRegs);
        if (failed(bFrag))
          return failure();
        for (int64_t mi = 0; mi < s.m / wm / 16; ++mi) {
          uint64_t lin = (uint64_t(mi * 16) << nbC) | uint64_t(ni * 16);
          int64_t r0 = *registerOf(C, lin);
          Value c = vector::FromElementsOp::create(
              b, loc, accType,
              ArrayRef<Value>(acc).slice(r0, wave->cRegs));
          Value d = wave->create(b, loc, aFrag[mi], *bFrag, c);
          for (int64_t j = 0; j < wave->cRegs; ++j)
            acc[r0 + j] = vector::ExtractOp::create(b, loc, d, j);
        }
      }
    }
    bool staged = aStage || bStage || aChunked || bChunked;
    if (staged)
      barrier();
    setDist(op->getResult(0), Dist{cId, acc});
    return success();
  }

  if (C.family == Layout::Family::MmaC && s.batch == 0) {
    int64_t wm = C.warpsM, wn = C.warpsN;
    // f16/bf16: m16n8k16; f32: m16n8k8 on tf32.
    bool tf32 = tf32Types(op, s);
    int64_t kStep = tf32 ? 8 : 16;
    int aId = intern(tf32 ? mmaTf32ALayout(s.m, s.k, wm, wn)
                          : mmaALayout(s.m, s.k, wm, wn));
    int bId = intern(tf32 ? mmaTf32BLayout(s.k, s.n, wm, wn)
                          : mmaBLayout(s.k, s.n, wm, wn));
    const Layout &A = layout(aId), &B = layout(bId);
    // From registers when they already hold the fragments (e.g. a softmax
    // computed in the accumulator layout of an earlier dot).
    auto inRegisters = [&](Value v, int want, int64_t) {
      if (stagedViews.count(v) || streamed.contains(v))
        return false;
      if (flexible.contains(v))
        return true;
      auto it = dists.find(v);
      return it != dists.end() &&
             providesLocally(layout(it->second.layout), layout(want));
    };
    std::optional<View> aStage, bStage;
    SmallVector<Value> aRegs, bRegs;
    // Streamed operands are copied with cp.async (sm_80+) in chunks along
    // k, each committed as its own group: the mma steps of chunk c wait for
    // that chunk only, and the copies of the later chunks overlap them.
    int64_t numChunks = std::min<int64_t>(4, s.k / kStep);
    int64_t chunkK = s.k / numChunks;
    struct AsyncPlan {
      View source, tile;
      int sourceId, tileId; ///< layouts of one chunk
      int64_t sourceDim, tileDim, width;
    };
    SmallVector<AsyncPlan, 2> plans;
    auto planAsync = [&](Value v, int64_t kdim) -> std::optional<View> {
      if (!streamed.contains(v) || stagedViews.count(v))
        return std::nullopt;
      Value x;
      SmallVector<int64_t> perm;
      const View *source = streamedSource(v, perm, x);
      if (!source)
        return std::nullopt;
      auto type = cast<RankedTensorType>(v.getType());
      auto stype = cast<RankedTensorType>(x.getType());
      int64_t sdim = perm.empty() ? kdim : perm[kdim];
      // The whole tile as stage() lays it out (ldmatrix reads it the same).
      int sourceId;
      int id = streamedLayouts(v, x, perm, sourceId);
      int64_t bytes;
      View tile = tileView(type, id, kc.workspaceOffset + wsOffset, bytes);
      // One chunk: its own blocked layout over the source, seen through the
      // transpose in the tile.
      SmallVector<int64_t> cshape(type.getShape()), scshape(stype.getShape());
      cshape[kdim] = chunkK;
      scshape[sdim] = chunkK;
      int csId = defaultLayout(
          RankedTensorType::get(scshape, stype.getElementType()));
      int ctId = perm.empty() ? csId
                              : intern(projectLayout(layout(csId), perm,
                                                     cshape));
      SmallVector<OpFoldResult> zeros(type.getRank(), b.getIndexAttr(0));
      SmallVector<int64_t> ones(type.getRank(), 1);
      View src0 = subview(*source, zeros, {}, scshape, ones, {});
      View dst0 = subview(tile, zeros, {}, cshape, ones, {});
      int64_t width = asyncCopyWidth(src0, csId, dst0, ctId);
      if (!width) {
        if (Operation *def = tile.base.getDefiningOp(); def && def->use_empty())
          def->erase();
        return std::nullopt;
      }
      wsOffset += (bytes + 127) / 128 * 128;
      kc.workspaceBytes = std::max(kc.workspaceBytes, wsOffset);
      plans.push_back(AsyncPlan{*source, tile, csId, ctId, sdim, kdim, width});
      return tile;
    };
    // Operands copied stages steps ahead (planStages).
    const StagePlan *sp = nullptr;
    if (auto it = stagePlans.find(op); it != stagePlans.end())
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
        const View *source = streamedSource(v, perm, x);
        auto tt = x.getDefiningOp<bufferization::ToTensorOp>();
        if (!source || !tt)
          return op->emitOpError() << "lost a prefetched dot operand";
        auto type = cast<RankedTensorType>(v.getType());
        int sourceId;
        int id = streamedLayouts(v, x, perm, sourceId);
        int64_t bytes;
        View tile = tileView(type, id, sp->region + sp->offsets[i], bytes);
        int64_t width = asyncCopyWidth(*source, sourceId, tile, id);
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
              failed(copyAsync(*src, st.sourceId, stageView(st.tile, stage),
                               st.tileId, st.width)))
            return op->emitOpError() << "cannot prefetch a dot operand "
                                        "with cp.async";
        }
        return success();
      };
      // One commit group per step, in range or not.
      if (failed(prefetchSteps(sp->stages, issue, [&] {
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
    if (!sp && kc.target->hasCpAsync && !inRegisters(aVal, aId, 64))
      aStage = planAsync(aVal, 1);
    if (!sp && kc.target->hasCpAsync && !inRegisters(bVal, bId, 32))
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
        View src = subview(p.source, so, {}, sshape, ones, {});
        View dst = subview(p.tile, to, {}, tshape, ones, {});
        if (failed(copyAsync(src, p.sourceId, dst, p.tileId, p.width)))
          return op->emitOpError() << "cannot copy a dot operand with "
                                      "cp.async";
      }
      NVVM::CpAsyncCommitGroupOp::create(b, loc);
    }
    bool async = !plans.empty();
    bool storedNow = false; // an operand stored into the workspace here
    if (aStage) {
      // staged by cp.async above
    } else if (inRegisters(aVal, aId, 64)) {
      auto r = get(aVal, aId);
      if (failed(r))
        return failure();
      aRegs = *r;
    } else {
      auto v = stage(aVal);
      if (failed(v))
        return failure();
      aStage = *v;
      storedNow |= !loopStaged.contains(aVal);
    }
    if (bStage) {
      // staged by cp.async above
    } else if (inRegisters(bVal, bId, 32)) {
      auto r = get(bVal, bId);
      if (failed(r))
        return failure();
      bRegs = *r;
    } else {
      auto v = stage(bVal);
      if (failed(v))
        return failure();
      bStage = *v;
      storedNow |= !loopStaged.contains(bVal);
    }
    bool staged = aStage || bStage;
    // Tiles a loop's ring prefetched were waited for and published at the
    // start of the iteration (loopStagesBody).
    bool onlyPrefetched = (!aStage || loopStaged.contains(aVal)) &&
                          (!bStage || loopStaged.contains(bVal));
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
      if (auto dp = defPoints.find(v); dp != defPoints.end() &&
                                        dp->second.block) {
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
        auto loaded = load(*aStage, aId, subset);
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
            auto loaded = load(*bStage, bId, {r0, r0 + 1});
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
          auto loaded = load(*bStage, bId, subset);
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
    setDist(op->getResult(0), Dist{cId, acc});
    return success();
  }

  // SIMT: both operands in shared memory, a loop over k. Where both padded
  // tiles do not fit (128x128 bf16 operands in sm_75's 64 KiB), unpadded.
  auto stagedBytes = [&](Value v, bool pad) {
    auto type = cast<RankedTensorType>(v.getType());
    int64_t elemBytes =
        std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
    int64_t n = type.getNumElements() * elemBytes, most = n;
    if (pad && type.getRank() >= 2)
      for (int64_t d : type.getShape())
        if (d * elemBytes >= 64)
          most = std::max(most, n / d * (d + 16 / elemBytes));
    return (most + 127) / 128 * 128;
  };
  if (kc.maxSharedBytes > 0 && !stagedViews.count(aVal) &&
      !stagedViews.count(bVal) &&
      kc.workspaceOffset + stagedBytes(aVal, true) + stagedBytes(bVal, true) >
          kc.maxSharedBytes &&
      kc.workspaceOffset + stagedBytes(aVal, false) +
              stagedBytes(bVal, false) <=
          kc.maxSharedBytes)
    padStaged = false;
  auto aView = stage(aVal);
  if (failed(aView))
    return failure();
  auto bView = stage(bVal);
  if (failed(bView))
    return failure();
  barrier();
  int64_t rank = C.rank();
  SmallVector<SmallVector<Value>> cc;
  for (int64_t r = 0; r < C.numRegs(); ++r)
    cc.push_back(coords(cId, r));
  auto loop = scf::ForOp::create(b, loc, idx(0), idx(s.k), idx(1), acc);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value kv = loop.getInductionVar();
    auto element = [&](const View &v, SmallVector<Value> c) {
      SmallVector<Value> bi = baseIndices(v, c);
      Value x = memref::LoadOp::create(b, loc, v.base, bi);
      if (x.getType() != v.elementType())
        x = arith::TruncIOp::create(b, loc, b.getI1Type(), x);
      return x;
    };
    SmallVector<Value> next;
    for (int64_t r = 0; r < C.numRegs(); ++r) {
      SmallVector<Value> ac, bc;
      if (rank == 3) {
        ac.push_back(cc[r][0]);
        bc.push_back(cc[r][0]);
      }
      ac.push_back(cc[r][rank - 2]);
      ac.push_back(kv);
      bc.push_back(kv);
      bc.push_back(cc[r][rank - 1]);
      Value x = castTo(b, loc, element(*aView, ac), s.c);
      Value y = castTo(b, loc, element(*bView, bc), s.c);
      Value cur = loop.getRegionIterArgs()[r];
      if (isa<FloatType>(s.c))
        next.push_back(arith::AddFOp::create(
            b, loc, cur, arith::MulFOp::create(b, loc, x, y)));
      else if (s.c.isInteger(1))
        next.push_back(arith::OrIOp::create(
            b, loc, cur, arith::AndIOp::create(b, loc, x, y)));
      else
        next.push_back(arith::AddIOp::create(
            b, loc, cur, arith::MulIOp::create(b, loc, x, y)));
    }
    scf::YieldOp::create(b, loc, next);
  }
  barrier();
  setDist(op->getResult(0), Dist{cId, SmallVector<Value>(loop.getResults())});
  return success();
}

View Distributor::tileView(RankedTensorType type, int id, int64_t absOffset,
                           int64_t &bytes, bool pad) {
  const Layout &l = layout(id);
  int64_t rank = type.getRank();
  // Stored along the dimension of the first register basis (where the
  // value is contiguous), rows padded by 16 bytes.
  int64_t contiguous = rank - 1;
  if (!l.regs.empty())
    for (int64_t d = 0; d < rank; ++d)
      if (l.coord(l.regs[0], d))
        contiguous = d;
  SmallVector<int64_t> order; // base dims, outermost first
  for (int64_t d = 0; d < rank; ++d)
    if (d != contiguous)
      order.push_back(d);
  order.push_back(contiguous);
  SmallVector<int64_t> baseShape;
  for (int64_t d : order)
    baseShape.push_back(type.getDimSize(d));
  View view = sharedView(baseShape, type.getElementType(), absOffset, pad,
                         bytes);
  view.shape.assign(type.getShape().begin(), type.getShape().end());
  view.dimOf.assign(rank, 0);
  view.strides.assign(rank, 1);
  for (auto [pos, d] : llvm::enumerate(order))
    view.dimOf[d] = pos;
  return view;
}

LogicalResult Distributor::storeTile(const View &tile, int id,
                                     ArrayRef<Value> regs,
                                     ArrayRef<int64_t> subset) {
  SmallVector<Value> values(regs);
  for (Value &r : values)
    if (r && r.getType().isInteger(1))
      r = arith::ExtUIOp::create(b, kc.loc, b.getI8Type(), r);
  return store(tile, id, values, {}, subset);
}

