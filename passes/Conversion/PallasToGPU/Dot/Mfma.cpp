//===- Mfma.cpp - dots on AMD wavefront matrix instructions -----*- C++ -*-===//
//
// On AMD CDNA (gfx90a, gfx94x): `v_mfma_f32_16x16x16{f16,bf16}`
// (amdgpu.mfma) on wave64, with the operands staged in LDS (or taken from
// registers already in the fragment layouts) and read per k step; on CDNA4
// (gfx950) `v_mfma_f32_16x16x32_{f16,bf16}` where K is a multiple of 32
// (the chip's entry of the target table, mfmaEntry: the k step, 8 operand
// elements per lane).
//
// The dot itself (waveMatrix: operands from registers, staged in LDS or
// streamed one k chunk at a time; the k loop; the accumulator in the C
// layout) serves every matrix instruction held in one wavefront's
// registers: RDNA's WMMA (Wmma.cpp) brings only its fragments and op.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/Dot/DotEmitters.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::gpu;
using namespace mlir::pallas::gpu::detail;

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
  i.fragments = {pallasc::MatrixInstrKind::Mfma, i.k};
  int64_t k = i.k;
  i.create = [k](OpBuilder &b, Location loc, Value a, Value bv, Value c) {
    return amdgpu::MFMAOp::create(b, loc, c.getType(), 16, 16, k, 1, a, bv,
                                  c)
        .getResult();
  };
  return i;
}

LogicalResult DotLowering::mfma() {
  return waveMatrix(mfmaInstr(*kc.target, s));
}

LogicalResult DotLowering::waveMatrix(const WaveMatrixInstr &wave) {
  int64_t wm = C.warpsM, wn = C.warpsN;
  int aId = intern(wave.aLayout(s.m, s.k, wm, wn));
  int bId = intern(wave.bLayout(s.k, s.n, wm, wn));
  // An operand comes from registers when they already hold its fragments
  // (e.g. probabilities computed in the accumulator layout of an earlier
  // dot); otherwise it is staged in LDS and each fragment is read just
  // before its instruction.
  auto fromRegisters = [&](Value v, int want) -> std::optional<
                                                  SmallVector<Value>> {
    if (!inRegisters(v, want))
      return std::nullopt;
    auto regs = d.get(v, want);
    if (failed(regs))
      return std::nullopt;
    return *regs;
  };
  std::optional<SmallVector<Value>> aRegs = fromRegisters(aVal, aId);
  std::optional<SmallVector<Value>> bRegs = fromRegisters(bVal, bId);
  // Operands loaded from global memory for this dot only are staged one
  // k chunk at a time in a chunk-sized LDS tile (LDS is 64 KiB on CDNA2/3:
  // two padded 128x128 bf16 tiles would not fit); the others whole.
  int64_t kStep = wave.k;
  int64_t chunkK = std::min<int64_t>(s.k, std::max<int64_t>(32, kStep));
  struct Chunked {
    const View *source;
    int sourceId, tileId; ///< layouts of one chunk (source, tile shape)
    int64_t sourceDim;
    View tile;
  };
  int aChunkId = intern(wave.aLayout(s.m, chunkK, wm, wn));
  int bChunkId = intern(wave.bLayout(chunkK, s.n, wm, wn));
  // `fragmentId`: the operand layout of one chunk; the tile is stored
  // along the dimension its fragments are contiguous in (k), so each
  // fragment is one LDS read (B's copy transposes on the way in).
  auto planChunked = [&](Value v, int64_t kdim,
                         int fragmentId) -> std::optional<Chunked> {
    Value x;
    SmallVector<int64_t> perm;
    const View *source = chunkK == s.k ? nullptr : streamedOperand(v, x, perm);
    if (!source)
      return std::nullopt;
    auto type = cast<RankedTensorType>(v.getType());
    StreamedChunk ch = streamedChunk(v, x, perm, kdim, chunkK);
    int64_t bytes;
    View tile =
        d.tileView(RankedTensorType::get(ch.shape, type.getElementType()),
                   fragmentId, nextTileOffset(), bytes);
    reserveTile(bytes);
    return Chunked{source, ch.sourceId, ch.tileId, ch.sourceDim, tile};
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
    View src = d.subview(*ch.source, offsets, {}, shape, ones, {});
    auto regs = d.load(src, ch.sourceId);
    if (failed(regs))
      return failure();
    return d.storeTile(ch.tile, ch.tileId, *regs);
  };
  int64_t nbA = log2Exact(s.k), nbB = log2Exact(s.n), nbC = nbB;
  int64_t nbAChunk = log2Exact(chunkK);
  Type f32 = b.getF32Type();
  auto accType = VectorType::get({wave.cRegs}, f32);
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
      auto loaded = d.load(*tile, lId, subset);
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
                         &aChunked->tile, std::nullopt, wave.aRegs)
              : fragment(aId, (uint64_t(mi * 16) << nbA) | uint64_t(kk * kStep),
                         aStage ? &*aStage : nullptr, aRegs, wave.aRegs);
      if (failed(f))
        return failure();
      aFrag.push_back(*f);
    }
    for (int64_t ni = 0; ni < s.n / wn / 16; ++ni) {
      FailureOr<Value> bFrag =
          bChunked
              ? fragment(bChunkId, (uint64_t(kc0) << nbB) | uint64_t(ni * 16),
                         &bChunked->tile, std::nullopt, wave.bRegs)
              : fragment(bId, (uint64_t(kk * kStep) << nbB) | uint64_t(ni * 16),
                         bStage ? &*bStage : nullptr, bRegs, wave.bRegs);
      if (failed(bFrag))
        return failure();
      for (int64_t mi = 0; mi < s.m / wm / 16; ++mi) {
        uint64_t lin = (uint64_t(mi * 16) << nbC) | uint64_t(ni * 16);
        int64_t r0 = *registerOf(C, lin);
        Value c = vector::FromElementsOp::create(
            b, loc, accType,
            ArrayRef<Value>(acc).slice(r0, wave.cRegs));
        Value dv = wave.create(b, loc, aFrag[mi], *bFrag, c);
        for (int64_t j = 0; j < wave.cRegs; ++j)
          acc[r0 + j] = vector::ExtractOp::create(b, loc, dv, j);
      }
    }
  }
  bool staged = aStage || bStage || aChunked || bChunked;
  if (staged)
    barrier();
  return finish(acc);

}
