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
// registers already in the fragment layouts) and read per k step.
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

#include "dialects/Pallas/IR/PallasOps.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::gpu;

namespace {

struct DotShape {
  int64_t batch = 0; ///< 0: not batched
  int64_t m, n, k;
  Type a, b, c;
};

DotShape dotShape(Operation *op) {
  auto lin = cast<linalg::LinalgOp>(op);
  auto at = cast<RankedTensorType>(lin.getDpsInputs()[0].getType());
  auto bt = cast<RankedTensorType>(lin.getDpsInputs()[1].getType());
  auto ct = cast<RankedTensorType>(op->getResult(0).getType());
  DotShape s;
  int64_t r = ct.getRank();
  if (r == 3)
    s.batch = ct.getDimSize(0);
  s.m = ct.getDimSize(r - 2);
  s.n = ct.getDimSize(r - 1);
  s.k = at.getDimSize(r - 1);
  s.a = at.getElementType();
  s.b = bt.getElementType();
  s.c = ct.getElementType();
  return s;
}

bool mmaTypes(const DotShape &s) {
  return s.batch == 0 && s.a == s.b && (s.a.isF16() || s.a.isBF16()) &&
         s.c.isF32();
}

/// f32 x f32 -> f32 at a precision that allows tf32 (default or high).
bool tf32Types(Operation *op, const DotShape &s) {
  if (s.batch != 0 || !s.a.isF32() || !s.b.isF32() || !s.c.isF32())
    return false;
  auto p = op->getAttrOfType<DotPrecisionAttr>(kDotPrecisionAttrName);
  return !p || p.getValue() != DotPrecision::Highest;
}

} // namespace

/// Whether a value computed from a dot's result is reduced along the dot's
/// columns somewhere in the kernel (a softmax over the scores): then every
/// dot keeps whole rows inside one warp.
static bool rowsAreReduced(func::FuncOp kernel) {
  bool reduced = false;
  kernel.walk([&](Operation *op) {
    if (!isa<linalg::MatmulOp>(op))
      return;
    SmallVector<Value> work = {op->getResult(0)};
    DenseSet<Value> seen;
    while (!work.empty() && !reduced) {
      Value v = work.pop_back_val();
      if (!seen.insert(v).second)
        continue;
      for (Operation *user : v.getUsers()) {
        if (auto r = dyn_cast<linalg::ReduceOp>(user)) {
          auto t = cast<RankedTensorType>(v.getType());
          if (t.getRank() == 2 && llvm::is_contained(r.getDimensions(), 1))
            reduced = true;
        } else if (isa<linalg::GenericOp>(user) &&
                   cast<linalg::GenericOp>(user).getNumReductionLoops() == 0) {
          for (Value r : user->getResults())
            work.push_back(r);
        }
      }
    }
  });
  return reduced;
}

int Distributor::dotLayout(Operation *op) {
  DotShape s = dotShape(op);
  // wgmma (sm_90a): warpgroups of 4 warps, 64-row slabs; warpgroups along M
  // first, the rest along N (whole rows per warp when rows are reduced).
  using pallasc::MatrixElemType;
  using pallasc::MatrixInstrKind;
  if (kc.has(MatrixInstrKind::Wgmma) && mmaTypes(s) && kc.numWarps % 4 == 0 &&
      s.k % 16 == 0) {
    if (!rowsReduced)
      rowsReduced = rowsAreReduced(kernel) ? 1 : 0;
    int64_t groups = kc.numWarps / 4;
    for (int64_t gm = groups; gm >= 1; gm /= 2) {
      int64_t gn = groups / gm;
      if (s.m % (64 * gm) || s.n % (8 * gn) || (*rowsReduced && gn != 1))
        continue;
      return intern(wgmmaCLayout(s.m, s.n, gm, gn));
    }
  }
  // One warp's tile (16 x 8 for mma.sync.m16n8k16, 16 x 16 for MFMA
  // 16x16x16), from the chip's f16 instruction of its family.
  bool mfma = kc.has(MatrixInstrKind::Mfma);
  const pallasc::MatrixInstr *frag = kc.target->findMatrixInstr(
      mfma ? MatrixInstrKind::Mfma : MatrixInstrKind::MmaSync,
      MatrixElemType::F16);
  const pallasc::MatrixInstr *tf32Frag = kc.target->findMatrixInstr(
      MatrixInstrKind::MmaSync, MatrixElemType::TF32);
  int64_t tileN = frag ? frag->n : 8;
  bool tf32 = tf32Frag && tf32Types(op, s);
  if (((frag && mmaTypes(s) && s.k % frag->k == 0) ||
       (tf32 && s.k % tf32Frag->k == 0)) &&
      s.m % 16 == 0 && s.n % tileN == 0) {
    if (!rowsReduced)
      rowsReduced = rowsAreReduced(kernel) ? 1 : 0;
    // Whole rows per warp when rows are reduced; otherwise the squarest
    // warp tiles (operand tiles read from shared memory by fewer warps).
    int64_t bestWm = 0;
    for (int64_t wm = 1; wm <= kc.numWarps; wm *= 2) {
      int64_t wn = kc.numWarps / wm;
      if (s.m % (16 * wm) || s.n % (tileN * wn))
        continue;
      if (*rowsReduced && wn != 1)
        continue;
      auto skew = [&](int64_t m) {
        int64_t a = s.m / m, b = s.n / (kc.numWarps / m);
        return a > b ? a / b : b / a;
      };
      if (!bestWm || skew(wm) < skew(bestWm) ||
          (skew(wm) == skew(bestWm) && wm > bestWm))
        bestWm = wm;
    }
    if (bestWm)
      return intern(mfma
                        ? mfmaCLayout(s.m, s.n, bestWm, kc.numWarps / bestWm)
                        : mmaCLayout(s.m, s.n, bestWm, kc.numWarps / bestWm));
  }
  return defaultLayout(cast<RankedTensorType>(op->getResult(0).getType()));
}

namespace {

/// Element conversion with linalg.matmul's cast semantics.
Value castTo(OpBuilder &b, Location loc, Value v, Type to) {
  Type from = v.getType();
  if (from == to)
    return v;
  auto ff = dyn_cast<FloatType>(from), tf = dyn_cast<FloatType>(to);
  if (ff && tf)
    return tf.getWidth() > ff.getWidth() ||
                   (tf.getWidth() == ff.getWidth() && tf.isF32())
               ? arith::ExtFOp::create(b, loc, to, v).getResult()
               : arith::TruncFOp::create(b, loc, to, v).getResult();
  if (ff)
    return arith::FPToSIOp::create(b, loc, to, v);
  if (tf)
    return arith::SIToFPOp::create(b, loc, to, v);
  if (to.getIntOrFloatBitWidth() > from.getIntOrFloatBitWidth())
    return arith::ExtSIOp::create(b, loc, to, v);
  return arith::TruncIOp::create(b, loc, to, v);
}

/// The dimension a layout's first register basis walks (where each thread's
/// elements are contiguous); the last one for layouts without registers.
int64_t contiguousDim(const Layout &l) {
  int64_t contiguous = l.rank() - 1;
  if (!l.regs.empty())
    for (int64_t d = 0; d < l.rank(); ++d)
      if (l.coord(l.regs[0], d))
        contiguous = d;
  return contiguous;
}

} // namespace

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

  if (C.family == Layout::Family::MfmaC && s.batch == 0) {
    int64_t wm = C.warpsM, wn = C.warpsN;
    int aId = intern(mfmaALayout(s.m, s.k, wm, wn));
    int bId = intern(mfmaBLayout(s.k, s.n, wm, wn));
    // An operand comes from registers when they already hold its fragments
    // (e.g. probabilities computed in the accumulator layout of an earlier
    // dot); otherwise it is staged in LDS and each fragment is read just
    // before its MFMA.
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
    // k chunk at a time in a chunk-sized LDS tile (LDS is 64 KiB on CDNA:
    // two padded 128x128 bf16 tiles would not fit); the others whole.
    int64_t chunkK = std::min<int64_t>(s.k, 32);
    struct Chunked {
      const View *source;
      int sourceId, tileId; ///< layouts of one chunk (source, tile shape)
      int64_t sourceDim;
      View tile;
    };
    int aChunkId = intern(mfmaALayout(s.m, chunkK, wm, wn));
    int bChunkId = intern(mfmaBLayout(chunkK, s.n, wm, wn));
    // `fragmentId`: the MFMA operand layout of one chunk; the tile is stored
    // along the dimension its fragments are contiguous in (k), so each
    // fragment is one 8-byte LDS read (B's copy transposes on the way in).
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
    auto accType = VectorType::get({4}, f32);
    auto opType = VectorType::get({4}, s.a);
    // Registers r0..r0+3 of an operand's tile at `lin` in layout `l` as
    // vector<4xT>, read from `tile` or taken from `regs`.
    auto fragment = [&](int lId, uint64_t lin, const View *tile,
                        const std::optional<SmallVector<Value>> &regs)
        -> FailureOr<Value> {
      int64_t r0 = *registerOf(layout(lId), lin);
      SmallVector<int64_t> subset = {r0, r0 + 1, r0 + 2, r0 + 3};
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
      return vector::FromElementsOp::create(b, loc, opType, elems)
          .getResult();
    };
    for (int64_t kk = 0; kk < s.k / 16; ++kk) {
      int64_t kc0 = kk * 16 % chunkK; // k offset inside the chunk
      if ((aChunked || bChunked) && kc0 == 0) {
        if (kk)
          barrier(); // every wavefront is done with the previous chunk
        if (aChunked && failed(copyChunk(*aChunked, kk * 16 / chunkK)))
          return failure();
        if (bChunked && failed(copyChunk(*bChunked, kk * 16 / chunkK)))
          return failure();
        barrier();
      }
      SmallVector<Value> aFrag;
      for (int64_t mi = 0; mi < s.m / wm / 16; ++mi) {
        FailureOr<Value> f =
            aChunked
                ? fragment(aChunkId,
                           (uint64_t(mi * 16) << nbAChunk) | uint64_t(kc0),
                           &aChunked->tile, std::nullopt)
                : fragment(aId, (uint64_t(mi * 16) << nbA) | uint64_t(kk * 16),
                           aStage ? &*aStage : nullptr, aRegs);
        if (failed(f))
          return failure();
        aFrag.push_back(*f);
      }
      for (int64_t ni = 0; ni < s.n / wn / 16; ++ni) {
        FailureOr<Value> bFrag =
            bChunked
                ? fragment(bChunkId, (uint64_t(kc0) << nbB) | uint64_t(ni * 16),
                           &bChunked->tile, std::nullopt)
                : fragment(bId, (uint64_t(kk * 16) << nbB) | uint64_t(ni * 16),
                           bStage ? &*bStage : nullptr, bRegs);
        if (failed(bFrag))
          return failure();
        for (int64_t mi = 0; mi < s.m / wm / 16; ++mi) {
          uint64_t lin = (uint64_t(mi * 16) << nbC) | uint64_t(ni * 16);
          int64_t r0 = *registerOf(C, lin);
          Value c = vector::FromElementsOp::create(
              b, loc, accType,
              ValueRange{acc[r0], acc[r0 + 1], acc[r0 + 2], acc[r0 + 3]});
          Value d = amdgpu::MFMAOp::create(b, loc, accType, 16, 16, 16, 1,
                                           aFrag[mi], *bFrag, c)
                        .getResult();
          for (int64_t j = 0; j < 4; ++j)
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
      storedNow = true;
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
      storedNow = true;
    }
    bool staged = aStage || bStage;
    if (staged && !async && (!sp || storedNow))
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

void Distributor::planEarlyStaging() {
  int64_t offset = 0;
  kernel.walk([&](Operation *op) {
    if (!isa<linalg::MatmulOp>(op))
      return;
    auto it = layoutOf.find(op->getResult(0));
    if (it == layoutOf.end() ||
        (layout(it->second).family != Layout::Family::MmaC &&
         layout(it->second).family != Layout::Family::MfmaC &&
         layout(it->second).family != Layout::Family::WgmmaC))
      return;
    bool mfma = layout(it->second).family == Layout::Family::MfmaC;
    bool wgmma = layout(it->second).family == Layout::Family::WgmmaC;
    const Layout &C = layout(it->second);
    DotShape s = dotShape(op);
    auto lin = cast<linalg::LinalgOp>(op);
    for (int k = 0; k < 2; ++k) {
      Value operand = lin.getDpsInputs()[k];
      if (streamed.contains(operand) || flexible.contains(operand) ||
          !operand.hasOneUse())
        continue;
      Value def = operand;
      if (auto t = operand.getDefiningOp<linalg::TransposeOp>()) {
        def = t.getInput();
        if (!def.hasOneUse() || flexible.contains(def))
          continue;
      }
      auto opLayout = layoutOf.find(operand);
      if (opLayout == layoutOf.end() || !layoutOf.count(def))
        continue;
      if (wgmma) {
        // B is always read from shared memory; A from registers when they
        // hold its fragments.
        if (k == 0 &&
            providesLocally(layout(opLayout->second),
                            layout(intern(wgmmaALayout(
                                s.m, s.k, C.warpsM / 4, C.warpsN)))))
          continue;
        auto type = cast<RankedTensorType>(operand.getType());
        int64_t bytes = type.getNumElements() * 2;
        earlyTiles[def] = EarlyTile{operand, opLayout->second,
                                    kc.workspaceOffset + offset, true};
        offset += (bytes + 127) / 128 * 128;
        continue;
      }
      bool tf32 = !mfma && tf32Types(op, s);
      int want =
          k == 0 ? intern(mfma   ? mfmaALayout(s.m, s.k, C.warpsM, C.warpsN)
                          : tf32 ? mmaTf32ALayout(s.m, s.k, C.warpsM, C.warpsN)
                                 : mmaALayout(s.m, s.k, C.warpsM, C.warpsN))
                 : intern(mfma   ? mfmaBLayout(s.k, s.n, C.warpsM, C.warpsN)
                          : tf32 ? mmaTf32BLayout(s.k, s.n, C.warpsM, C.warpsN)
                                 : mmaBLayout(s.k, s.n, C.warpsM, C.warpsN));
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
      earlyTiles[def] = EarlyTile{operand, opLayout->second,
                                  kc.workspaceOffset + offset};
      offset += (bytes + 127) / 128 * 128;
    }
  });
  kc.workspaceOffset += offset;
}

LogicalResult Distributor::stageEarly(Value def) {
  auto it = earlyTiles.find(def);
  if (it == earlyTiles.end())
    return success();
  EarlyTile t = it->second;
  earlyTiles.erase(it);
  auto regs = get(def, layoutOrDefault(def));
  if (failed(regs))
    return failure();
  int64_t bytes;
  if (t.core) {
    int64_t cdim = contiguousDim(layout(t.layout));
    CoreTile tile = coreTile(cast<RankedTensorType>(t.operand.getType()),
                             cdim, t.offset, bytes);
    if (failed(store(tile.view, coreLayout(t.layout, cdim), *regs)))
      return failure();
    coreTiles[t.operand] = tile;
    return success();
  }
  View tile = tileView(cast<RankedTensorType>(t.operand.getType()), t.layout,
                       t.offset, bytes);
  if (failed(storeTile(tile, t.layout, *regs)))
    return failure();
  stagedViews[t.operand] = tile;
  return success();
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

void Distributor::planTma() {
  if (!kc.has(pallasc::MatrixInstrKind::Wgmma) || !kc.target->hasTma ||
      !kc.oneSequentialAxis || !kc.addParam)
    return;
  // The shared memory a block may use, less room for the other operands'
  // workspace.
  constexpr int64_t kReserve = 32768;
  for (Operation &o : kernel.getBody().front()) {
    if (!isa<linalg::MatmulOp>(o))
      continue;
    auto lit = layoutOf.find(o.getResult(0));
    if (lit == layoutOf.end() ||
        layout(lit->second).family != Layout::Family::WgmmaC)
      continue;
    DotShape s = dotShape(&o);
    if (s.batch || s.k % 64)
      continue;
    const Layout &C = layout(lit->second);
    int64_t nW = s.n / C.warpsN;
    auto lin = cast<linalg::LinalgOp>(&o);
    TmaPlan plan;
    for (int k = 0; k < 2; ++k) {
      Value v = lin.getDpsInputs()[k];
      if (!streamed.contains(v) || !v.hasOneUse())
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
      TmaOperand op;
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
        m.param = kc.addParam(LLVM::LLVMPointerType::get(b.getContext()));
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
    plan.stages = std::min<int64_t>(numStages > 0 ? numStages : 3,
                                    room / plan.stageBytes);
    plan.stages = std::min<int64_t>(plan.stages, 8);
    if (plan.stages < 1)
      continue;
    plan.region = kc.workspaceOffset;
    kc.workspaceOffset += plan.stages * plan.stageBytes + 1024;
    plan.barriers = kc.workspaceOffset;
    kc.workspaceOffset +=
        (plan.stages * plan.numChunks * 8 + 127) / 128 * 128;
    tmaPlans[&o] = plan;
  }
}

// cp.async stages (sm_80+, mma.sync). As for TMA, a dot at the top of the
// kernel body with one sequential grid axis: every operand it streams from
// global memory is a whole 2-D input block (kc.tmaSources), copied with
// cp.async into the padded tile stage() would use, `stages` steps ahead.
// Per step each thread commits one cp.async group (empty when the step is
// out of range), so `cp.async.wait_group stages-1` leaves the current
// step's copies complete; a barrier publishes them.

void Distributor::planStages() {
  if (!kc.target->hasCpAsync || !kc.oneSequentialAxis)
    return;
  constexpr int64_t kReserve = 16384;
  for (Operation &o : kernel.getBody().front()) {
    if (!isa<linalg::MatmulOp>(o) || tmaPlans.count(&o))
      continue;
    auto lit = layoutOf.find(o.getResult(0));
    if (lit == layoutOf.end() ||
        layout(lit->second).family != Layout::Family::MmaC)
      continue;
    DotShape s = dotShape(&o);
    if (s.batch)
      continue;
    auto lin = cast<linalg::LinalgOp>(&o);
    StagePlan plan;
    bool ok = true;
    for (int k = 0; k < 2 && ok; ++k) {
      Value v = lin.getDpsInputs()[k];
      if (!streamed.contains(v))
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
    plan.stages = std::min<int64_t>(numStages > 0 ? numStages : 3,
                                    room / plan.stageBytes);
    plan.stages = std::min<int64_t>(plan.stages, 8);
    // One stage: the chunked copies of the step itself do better.
    if (plan.stages < 2)
      continue;
    plan.region = kc.workspaceOffset;
    kc.workspaceOffset += plan.stages * plan.stageBytes;
    stagePlans[&o] = plan;
  }
}

LogicalResult
Distributor::prefetchSteps(int64_t stages,
                           function_ref<LogicalResult(Value)> issue,
                           function_ref<void()> after) {
  Location loc = kc.loc;
  Value iv = kc.seqIv, n = kc.seqCount;
  // One issue site: steps [first, s + stages - 1] with first = 0 at the
  // first step, else s + stages - 1 (a loop of `stages` iterations or one).
  Value ahead = arith::AddIOp::create(b, loc, iv, idx(stages - 1));
  Value atFirst =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, iv, idx(0));
  Value first = arith::SelectOp::create(b, loc, atFirst, idx(0), ahead);
  Value end = arith::AddIOp::create(b, loc, ahead, idx(1));
  auto loop = scf::ForOp::create(b, loc, first, end, idx(1));
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop.getBody());
  Value j = loop.getInductionVar();
  {
    OpBuilder::InsertionGuard g2(b);
    Value in = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, j, n);
    auto ifOp = scf::IfOp::create(b, loc, in, false);
    b.setInsertionPointToStart(ifOp.thenBlock());
    if (failed(issue(j)))
      return failure();
  }
  after();
  return success();
}

/// An i32 shared-memory address as the pointer the NVVM ops take.
static Value sharedPtr(OpBuilder &b, Location loc, Value addr) {
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), addr);
}

/// The same address in the shared::cluster window (a CTA's own shared
/// memory has the same address in both), for TMA destinations.
static Value clusterPtr(OpBuilder &b, Location loc, Value addr) {
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 7), addr);
}

void Distributor::initTmaBarriers() {
  if (tmaPlans.empty())
    return;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(kc.prologueEnd);
  Location loc = kc.loc;
  Value smemAddr = arith::IndexCastOp::create(
      b, loc, b.getI32Type(),
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, kc.smemBase));
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                      kc.tid, idx(0));
  auto ifOp = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    // Deterministic order: by the plans' barrier offsets.
    SmallVector<const TmaPlan *> plans;
    for (auto &entry : tmaPlans)
      plans.push_back(&entry.second);
    llvm::sort(plans, [](const TmaPlan *x, const TmaPlan *y) {
      return x->barriers < y->barriers;
    });
    for (const TmaPlan *plan : plans)
      for (int64_t i = 0; i < plan->stages * plan->numChunks; ++i) {
        Value addr = arith::AddIOp::create(b, loc, smemAddr,
                                           i32(plan->barriers + 8 * i));
        NVVM::MBarrierInitOp::create(b, loc, sharedPtr(b, loc, addr), i32(1),
                                     Value());
      }
  }
  NVVM::FenceMbarrierInitOp::create(b, loc);
  barrier();
}

Distributor::CoreTile Distributor::coreTile(RankedTensorType type,
                                            int64_t cdim, int64_t absOffset,
                                            int64_t &bytes) {
  int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  int64_t outer = cdim == 1 ? rows : cols, inner = cdim == 1 ? cols : rows;
  View v = sharedView({outer / 8, inner / 8, 8, 8}, type.getElementType(),
                      absOffset, /*pad=*/false, bytes);
  return CoreTile{v, cdim, absOffset, rows, cols};
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

/// `wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}` per warpgroup:
/// B (and A unless its registers already hold the A fragments) in shared
/// memory as core-matrix tiles described by 64-bit matrix descriptors (no
/// swizzle: start address, leading (K) and stride (M/N) byte offsets, all
/// >> 4; K-major or, with the transpose bit, M/N-major, whichever way the
/// operand is contiguous), the accumulator in registers (wgmmaCLayout).
/// Streamed operands are copied with cp.async in up to four k chunks, one
/// commit group each, as for mma.sync. Sequence: stores / cp.async waits,
/// fence.proxy.async (generic-proxy writes made visible to the async proxy
/// wgmma reads through), barrier, wgmma.fence, the wgmmas, commit, wait 0.
/// The wgmma itself is inline PTX: nvvm.wgmma.mma_async takes A from shared
/// memory only.
LogicalResult Distributor::emitWgmma(Operation *op, int cId,
                                     SmallVector<Value> acc) {
  auto lin = cast<linalg::LinalgOp>(op);
  Location loc = op->getLoc();
  DotShape s = dotShape(op);
  Value aVal = lin.getDpsInputs()[0], bVal = lin.getDpsInputs()[1];
  int64_t gm = layout(cId).warpsM / 4, gn = layout(cId).warpsN;
  int64_t mW = s.m / gm, nW = s.n / gn;
  int64_t instrN = std::min<int64_t>(nW, 256);
  int aId = intern(wgmmaALayout(s.m, s.k, gm, gn));
  bool bf16 = s.a.isBF16();
  Type i32t = b.getI32Type(), i64t = b.getI64Type(), f32 = b.getF32Type();

  int64_t wsOffset = 0;
  auto reserve = [&](int64_t bytes) {
    int64_t off = kc.workspaceOffset + wsOffset;
    wsOffset += (bytes + 127) / 128 * 128;
    kc.workspaceBytes = std::max(kc.workspaceBytes, wsOffset);
    return off;
  };

  bool aInRegisters =
      !coreTiles.count(aVal) && !streamed.contains(aVal) &&
      (flexible.contains(aVal) ||
       (dists.count(aVal) &&
        providesLocally(layout(dists.lookup(aVal).layout), layout(aId))));

  // Operands the TMA copies (planTma).
  const TmaPlan *tma = nullptr;
  if (auto it = tmaPlans.find(op); it != tmaPlans.end())
    tma = &it->second;
  auto tmaOf = [&](Value v) -> const TmaOperand * {
    if (tma)
      for (const TmaOperand &t : tma->operands)
        if (t.value == v)
          return &t;
    return nullptr;
  };
  const TmaOperand *aTma = aInRegisters ? nullptr : tmaOf(aVal);
  const TmaOperand *bTma = tmaOf(bVal);

  // Streamed operands: cp.async in chunks along k.
  int64_t numChunks = std::min<int64_t>(4, s.k / 16);
  int64_t chunkK = s.k / numChunks;
  struct AsyncPlan {
    View source;
    CoreTile tile;
    int sourceId, tileId; ///< layouts of one chunk (source; 4-D tile)
    int64_t sourceDim, tileDim, width;
  };
  SmallVector<AsyncPlan, 2> plans;
  auto planAsync = [&](Value v, int64_t kdim) -> std::optional<CoreTile> {
    if (!kc.target->hasCpAsync || !streamed.contains(v) || coreTiles.count(v))
      return std::nullopt;
    SmallVector<int64_t> perm;
    Value x;
    const View *source = streamedSource(v, perm, x);
    if (!source)
      return std::nullopt;
    auto type = cast<RankedTensorType>(v.getType());
    auto stype = cast<RankedTensorType>(x.getType());
    int64_t sdim = perm.empty() ? kdim : perm[kdim];
    int sourceId;
    int id = streamedLayouts(v, x, perm, sourceId);
    int64_t cdim = contiguousDim(layout(id));
    int64_t bytes;
    CoreTile tile =
        coreTile(type, cdim, kc.workspaceOffset + wsOffset, bytes);
    SmallVector<int64_t> cshape(type.getShape()), scshape(stype.getShape());
    cshape[kdim] = chunkK;
    scshape[sdim] = chunkK;
    int csId =
        defaultLayout(RankedTensorType::get(scshape, stype.getElementType()));
    int ctId = perm.empty()
                   ? csId
                   : intern(projectLayout(layout(csId), perm, cshape));
    int ct4 = coreLayout(ctId, cdim);
    SmallVector<int64_t> t4shape(layout(ct4).shape.begin(),
                                 layout(ct4).shape.end());
    SmallVector<OpFoldResult> zeros2(2, b.getIndexAttr(0)),
        zeros4(4, b.getIndexAttr(0));
    SmallVector<int64_t> ones2(2, 1), ones4(4, 1);
    View src0 = subview(*source, zeros2, {}, scshape, ones2, {});
    View dst0 = subview(tile.view, zeros4, {}, t4shape, ones4, {});
    int64_t width = asyncCopyWidth(src0, csId, dst0, ct4);
    if (!width) {
      if (Operation *def = tile.view.base.getDefiningOp();
          def && def->use_empty())
        def->erase();
      return std::nullopt;
    }
    reserve(bytes);
    // The 4-D tile dimension walking k: the core-matrix column when k is
    // the contiguous dimension, else the core-matrix row.
    plans.push_back(AsyncPlan{*source, tile, csId, ct4, sdim,
                              cdim == kdim ? 1 : 0, width});
    return tile;
  };
  // Other operands: stored from registers (or loaded and stored, for a
  // streamed one cp.async cannot copy) into a core-matrix tile.
  auto stageCore = [&](Value v) -> FailureOr<CoreTile> {
    if (auto it = coreTiles.find(v); it != coreTiles.end())
      return it->second;
    auto type = cast<RankedTensorType>(v.getType());
    int64_t bytes;
    if (streamed.contains(v)) {
      SmallVector<int64_t> perm;
      Value x;
      const View *source = streamedSource(v, perm, x);
      if (!source)
        return op->emitOpError() << "reads a memref that is not a view";
      int sourceId;
      int id = streamedLayouts(v, x, perm, sourceId);
      int64_t cdim = contiguousDim(layout(id));
      CoreTile tile =
          coreTile(type, cdim, kc.workspaceOffset + wsOffset, bytes);
      reserve(bytes);
      int id4 = coreLayout(id, cdim);
      int64_t chunk = 4 * groupWidth(*source, sourceId);
      for (int64_t r0 = 0; r0 < layout(id).numRegs(); r0 += chunk) {
        SmallVector<int64_t> subset;
        for (int64_t r = r0; r < std::min(r0 + chunk, layout(id).numRegs());
             ++r)
          subset.push_back(r);
        auto part = load(*source, sourceId, subset);
        if (failed(part))
          return failure();
        if (failed(store(tile.view, id4, *part, {}, subset)))
          return failure();
      }
      return tile;
    }
    int id = layoutOrDefault(v);
    auto regs = get(v, id);
    if (failed(regs))
      return failure();
    int64_t cdim = contiguousDim(layout(id));
    CoreTile tile = coreTile(type, cdim, kc.workspaceOffset + wsOffset, bytes);
    reserve(bytes);
    if (failed(store(tile.view, coreLayout(id, cdim), *regs)))
      return failure();
    return tile;
  };

  std::optional<CoreTile> aTile, bTile;
  if (!aInRegisters && !aTma)
    aTile = planAsync(aVal, 1);
  if (!bTma)
    bTile = planAsync(bVal, 0);
  for (int64_t c = 0; c < numChunks && !plans.empty(); ++c) {
    for (const AsyncPlan &p : plans) {
      SmallVector<OpFoldResult> so(2, b.getIndexAttr(0)),
          to(4, b.getIndexAttr(0));
      so[p.sourceDim] = b.getIndexAttr(c * chunkK);
      to[p.tileDim] = b.getIndexAttr(c * chunkK / 8);
      SmallVector<int64_t> sshape(layout(p.sourceId).shape.begin(),
                                  layout(p.sourceId).shape.end());
      SmallVector<int64_t> tshape(layout(p.tileId).shape.begin(),
                                  layout(p.tileId).shape.end());
      View src = subview(p.source, so, {}, sshape, {1, 1}, {});
      View dst = subview(p.tile.view, to, {}, tshape, {1, 1, 1, 1}, {});
      if (failed(copyAsync(src, p.sourceId, dst, p.tileId, p.width)))
        return op->emitOpError() << "cannot copy a dot operand with cp.async";
    }
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
  }
  bool async = !plans.empty();
  SmallVector<Value> aRegs;
  if (aInRegisters) {
    auto r = get(aVal, aId);
    if (failed(r))
      return failure();
    aRegs = *r;
  } else if (!aTile && !aTma) {
    auto t = stageCore(aVal);
    if (failed(t))
      return failure();
    aTile = *t;
  }
  if (!bTile && !bTma) {
    auto t = stageCore(bVal);
    if (failed(t))
      return failure();
    bTile = *t;
  }
  // Writes through the generic proxy (st.shared, cp.async) become visible
  // to wgmma's async-proxy reads after fence.proxy.async and a barrier.
  auto fenceProxy = [&] {
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
  };
  // (Tiles a TMA fills are waited for on their mbarriers instead.)
  if (!async && (aTile || bTile)) {
    fenceProxy();
    barrier();
  }

  // Descriptors: the warpgroup's part of each tile.
  Value warp = arith::ShRUIOp::create(b, loc, kc.tid, idx(5));
  Value group = arith::ShRUIOp::create(b, loc, warp, idx(2));
  Value groupM = arith::AndIOp::create(b, loc, group, idx(gm - 1));
  Value groupN = arith::ShRUIOp::create(b, loc, group, idx(log2Exact(gm)));
  Value smemAddr = arith::IndexCastOp::create(
      b, loc, i32t,
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, kc.smemBase));
  struct Desc {
    Value value; ///< i64, the warpgroup's first row (A) / column (B), k = 0
    int64_t strideK, strideMN;
    int trans;
    /// A TMA tile (128B swizzle): K-major or not, its rows (see planTma).
    bool swizzled = false, kMajor = true;
    int64_t rows = 0;
  };
  // A matrix descriptor: the start address `base` + `offset` + `first`
  // (bytes; i32, constant, index), the constant fields (strides, swizzle).
  auto descriptor = [&](Value base, int64_t offset, Value first,
                        uint64_t fields) -> Value {
    Value addr = arith::AddIOp::create(
        b, loc, base,
        arith::AddIOp::create(
            b, loc, i32(offset),
            arith::IndexCastOp::create(b, loc, i32t, first)));
    Value start = arith::ShRUIOp::create(
        b, loc, arith::AndIOp::create(b, loc, addr, i32(0x3FFFF)), i32(4));
    Value wide = arith::ExtUIOp::create(b, loc, i64t, start);
    return arith::OrIOp::create(
        b, loc, wide,
        arith::ConstantIntOp::create(b, loc, i64t,
                                     static_cast<int64_t>(fields)));
  };
  auto makeDesc = [&](const CoreTile &t, int64_t kdim, Value groupIndex,
                      int64_t groupSpan) {
    bool kContiguous = t.cdim == kdim;
    int64_t inner = t.cdim == 1 ? t.cols : t.rows;
    int64_t outer = inner / 8 * 128; // bytes between core-matrix rows
    Desc d;
    d.strideK = kContiguous ? 128 : outer;
    d.strideMN = kContiguous ? outer : 128;
    d.trans = kContiguous ? 0 : 1;
    Value first = arith::MulIOp::create(
        b, loc, groupIndex, idx(groupSpan / 8 * d.strideMN));
    d.value = descriptor(smemAddr, t.offset, first,
                         (uint64_t(d.strideK >> 4) << 16) |
                             (uint64_t(d.strideMN >> 4) << 32));
    return d;
  };
  // TMA: the stage of this step, the copies of a later step, the wait
  // for a chunk.
  Value tmaStage;
  auto barrierAt = [&](Value stage, int64_t c) {
    Value slot = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, stage, i32(tma->numChunks)),
        i32(c));
    return sharedPtr(
        b, loc,
        arith::AddIOp::create(
            b, loc, smemAddr,
            arith::AddIOp::create(b, loc, i32(tma->barriers),
                                  arith::MulIOp::create(b, loc, slot, i32(8)))));
  };
  Value tmaRegion;
  if (tma) {
    // The stages, 1024-byte aligned (the swizzle pattern's period).
    tmaRegion = arith::AndIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc, smemAddr, i32(tma->region + 1023)),
        i32(~int64_t(1023)));
    Value iv = kc.seqIv;
    Value numStagesV = idx(tma->stages);
    auto stageOf = [&](Value j) {
      return arith::IndexCastOp::create(
          b, loc, i32t, arith::RemUIOp::create(b, loc, j, numStagesV));
    };
    // Copies step `j` into its stage: per chunk, the expected bytes on the
    // chunk's mbarrier, then the boxes.
    auto issue = [&](Value j) -> LogicalResult {
      Value stage = stageOf(j);
      Value base = arith::AddIOp::create(
          b, loc, tmaRegion,
          arith::MulIOp::create(b, loc, stage, i32(tma->stageBytes)));
      SmallVector<std::pair<Value, Value>> origins; // (row, col) i32
      for (const TmaOperand &t : tma->operands) {
        auto view = kc.tmaSources.lookup(t.arg).viewAt(b, j);
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
        NVVM::MBarrierArriveExpectTxOp::create(b, loc, Type(), bar,
                                               i32(bytes),
                                               NVVM::MemScopeKind::CTA, false,
                                               Value());
        for (size_t ti = 0; ti < tma->operands.size(); ++ti) {
          const TmaOperand &t = tma->operands[ti];
          std::pair<Value, Value> origin = origins[ti];
          Value map = kc.tensorMaps[t.map].param;
          auto box = [&](int64_t dstOffset, int64_t row, int64_t col) {
            Value dst = arith::AddIOp::create(b, loc, base,
                                              i32(t.offset + dstOffset));
            Value c0 = arith::AddIOp::create(b, loc, origin.second, i32(col));
            Value c1 = arith::AddIOp::create(b, loc, origin.first, i32(row));
            NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
                b, loc, clusterPtr(b, loc, dst), map, ValueRange{c0, c1},
                barrierAt(stage, c), ValueRange{}, Value(), Value(),
                NVVM::TMALoadMode::TILE, false, nullptr, Value());
          };
          if (t.kMajor)
            box(c * t.rows * 128, 0, c * tma->chunkK);
          else
            for (int64_t p = 0; p < t.cols / 64; ++p)
              box(p * t.rows * 128 + c * tma->chunkK * 128,
                  c * tma->chunkK, p * 64);
        }
      }
      return success();
    };
    // One thread issues: at the first step the first stages - 1 steps,
    // then at every step the step stages - 1 ahead (whose stage the
    // previous step has finished reading: the barrier ending each dot).
    Value tid0 = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       kc.tid, idx(0));
    auto outer = scf::IfOp::create(b, loc, tid0, false);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(outer.thenBlock());
      if (failed(prefetchSteps(tma->stages, issue, [] {})))
        return failure();
    }
    tmaStage = stageOf(iv);
  }
  // The phase parity of this step's use of its stage's mbarriers.
  auto waitChunk = [&](int64_t c) {
    Value round = arith::DivUIOp::create(b, loc, kc.seqIv, idx(tma->stages));
    Value parity = arith::IndexCastOp::create(
        b, loc, i32t, arith::AndIOp::create(b, loc, round, idx(1)));
    NVVM::MBarrierTryWaitParityOp::create(b, loc, barrierAt(tmaStage, c),
                                          parity, i32(0x989680));
  };
  auto makeTmaDesc = [&](const TmaOperand &t, Value groupIndex,
                         int64_t groupSpan) {
    Desc d;
    d.swizzled = true;
    d.kMajor = t.kMajor;
    d.rows = t.rows;
    d.trans = t.kMajor ? 0 : 1;
    d.strideK = d.strideMN = 0;
    // The warpgroup's first row (K-major) / panel (MN-major).
    Value first = t.kMajor
                      ? arith::MulIOp::create(b, loc, groupIndex,
                                              idx(groupSpan * 128))
                      : arith::MulIOp::create(b, loc, groupIndex,
                                              idx(groupSpan / 64 * t.rows *
                                                  128));
    Value stageBase = arith::AddIOp::create(
        b, loc, tmaRegion,
        arith::MulIOp::create(b, loc, tmaStage, i32(tma->stageBytes)));
    // Leading byte offset (unused when K-major), stride byte offset 1024,
    // swizzle mode 1 (128B).
    uint64_t lbo = t.kMajor ? 1 : (t.rows * 128) >> 4;
    d.value = descriptor(stageBase, t.offset, first,
                         (lbo << 16) | (uint64_t(1024 >> 4) << 32) |
                             (uint64_t(1) << 62));
    return d;
  };
  std::optional<Desc> aDesc;
  if (aTile)
    aDesc = makeDesc(*aTile, 1, groupM, mW);
  else if (aTma)
    aDesc = makeTmaDesc(*aTma, groupM, mW);
  Desc bDesc = bTma ? makeTmaDesc(*bTma, groupN, nW)
                    : makeDesc(*bTile, 0, groupN, nW);
  auto at = [&](const Desc &d, int64_t mn, int64_t k) -> Value {
    int64_t bytes = mn / 8 * d.strideMN + k / 8 * d.strideK;
    if (d.swizzled)
      bytes = d.kMajor ? mn * 128 + k / 64 * d.rows * 128 + k % 64 * 2
                       : mn / 64 * d.rows * 128 + k * 128;
    if (bytes == 0)
      return d.value;
    return arith::AddIOp::create(
        b, loc, d.value, arith::ConstantIntOp::create(b, loc, i64t, bytes >> 4));
  };
  auto pack = [&](Value x, Value y) -> Value {
    Value v = vector::FromElementsOp::create(
        b, loc, VectorType::get({2}, s.a), ValueRange{x, y});
    Value i = vector::BitCastOp::create(b, loc, VectorType::get({1}, i32t), v);
    return vector::ExtractOp::create(b, loc, i, 0);
  };
  SmallVector<Value> aPacked;
  if (aInRegisters)
    for (size_t r = 0; r + 1 < aRegs.size(); r += 2)
      aPacked.push_back(pack(aRegs[r], aRegs[r + 1]));
  std::string type = bf16 ? "bf16" : "f16";
  auto wgmma = [&](MutableArrayRef<Value> d, Value aD,
                   ArrayRef<Value> aFrag, Value bD) {
    int64_t nd = d.size();
    std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                       "wgmma.mma_async.sync.aligned.m64n" +
                       std::to_string(2 * nd) + "k16.f32." + type + "." +
                       type + " {";
    std::string constraints;
    for (int64_t i = 0; i < nd; ++i) {
      text += (i ? ", $" : "$") + std::to_string(i);
      constraints += "=f,";
    }
    text += "}, ";
    SmallVector<Value> operands;
    int64_t next = nd;
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
    for (int64_t i = 0; i < nd; ++i) {
      operands.push_back(d[i]);
      constraints += "," + std::to_string(i);
    }
    SmallVector<Type> fields(nd, f32);
    Type resType = LLVM::LLVMStructType::getLiteral(b.getContext(), fields);
    // Side effects: it reads shared memory and must stay between the
    // barriers and the wgmma fence / commit / wait.
    Value r = LLVM::InlineAsmOp::create(
                  b, loc, resType, operands, b.getStringAttr(text),
                  b.getStringAttr(constraints), b.getUnitAttr(), nullptr,
                  LLVM::TailCallKindAttr::get(
                      b.getContext(), LLVM::tailcallkind::TailCallKind::None),
                  nullptr, nullptr)
                  .getResult(0);
    for (int64_t i = 0; i < nd; ++i)
      d[i] = LLVM::ExtractValueOp::create(b, loc, r, ArrayRef<int64_t>{i});
  };

  const Layout &A = layout(aId), &C = layout(cId);
  int64_t nbA = log2Exact(s.k), nbC = log2Exact(s.n);
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  for (int64_t kk = 0; kk < s.k / 16; ++kk) {
    if (tma && (kk * 16) % tma->chunkK == 0)
      waitChunk(kk * 16 / tma->chunkK);
    if (async && (kk * 16) % chunkK == 0) {
      // This chunk's copies (and those of every thread) have landed.
      int64_t c = kk * 16 / chunkK;
      NVVM::CpAsyncWaitGroupOp::create(
          b, loc, b.getI32IntegerAttr(numChunks - 1 - c));
      fenceProxy();
      barrier();
    }
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
        MutableArrayRef<Value> d(acc.data() + r0, instrN / 2);
        wgmma(d, aD, aFrag, at(bDesc, ni * instrN, kk * 16));
      }
    }
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  // Every warpgroup is done with the tiles before the workspace is reused.
  barrier();
  setDist(op->getResult(0), Dist{cId, acc});
  return success();
}
