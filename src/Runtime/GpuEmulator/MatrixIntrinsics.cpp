//===- MatrixIntrinsics.cpp - mma.sync, MFMA, WMMA, wgmma, ldmatrix -*- C++ -*-===//
//
// The matrix instructions, from their ISA descriptions: every lane of the
// warp (wavefront, warpgroup) gives its fragments, one lane gathers nothing
// the others have not written (warpSync), and each computes its part of the
// result in f32.
//
//===----------------------------------------------------------------------===//

#include "src/Runtime/GpuEmulator/Intrinsics.h"
#include "src/Runtime/GpuEmulator/Scheduler.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

namespace pallasc::runtime::emulator {
namespace {

/// cvt.rna.tf32.f32: round to nearest, ties away from zero, keeping 10
/// mantissa bits (the low 13 bits zero); NaN becomes the canonical NaN.
extern "C" int32_t pallasc_emu_cvt_rna_tf32(float x) {
  if (std::isnan(x))
    return 0x7fffffff;
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  bits = (bits + 0x1000u) & ~0x1fffu;
  return static_cast<int32_t>(bits);
}

/// A tf32 operand register as mma.sync reads it: the f32 bits with the low
/// 13 mantissa bits ignored.
float tf32ToFloat(uint32_t bits) {
  bits &= ~0x1fffu;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// Lane `lane`'s four accumulators of an m16n8kK mma.sync, with g = lane / 4
/// and t = lane % 4: c0, c1 = D[g][2t], D[g][2t+1] and c2, c3 the same 8
/// rows down, each C + the sum over k of A[row][k] B[k][col] (in k order),
/// into `out`.
template <int K>
void mmaLaneResults(const float (&A)[16][K], const float (&B)[K][8],
                    const float *c, int lane, float *out) {
  int row = lane / 4, col = 2 * (lane % 4);
  for (int i = 0; i < 4; ++i) {
    int r = row + (i >= 2 ? 8 : 0), n = col + (i & 1);
    float acc = c[i];
    for (int k = 0; k < K; ++k)
      acc += A[r][k] * B[k][n];
    out[i] = acc;
  }
}

/// mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 (kind 2): with
/// g = lane / 4, t = lane % 4, a0..a3 = A[g][t], A[g+8][t], A[g][t+4],
/// A[g+8][t+4] and b0, b1 = B[t][g], B[t+4][g]; C as for m16n8k16.
void emulateMmaTf32(Warp &w, int lane, const float c[4], float *out) {
  float A[16][8], B[8][8];
  for (int t = 0; t < 32; ++t) {
    int g = t / 4, q = t % 4;
    A[g][q] = tf32ToFloat(w.a[t][0]);
    A[g + 8][q] = tf32ToFloat(w.a[t][1]);
    A[g][q + 4] = tf32ToFloat(w.a[t][2]);
    A[g + 8][q + 4] = tf32ToFloat(w.a[t][3]);
    B[q][g] = tf32ToFloat(w.b[t][0]);
    B[q + 4][g] = tf32ToFloat(w.b[t][1]);
  }
  warpSync();
  mmaLaneResults(A, B, c, lane, out);
}

/// mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16} (kind 0: f16, 1: bf16)
/// and m16n8k8 tf32 (kind 2): the fragments of all 32 lanes are gathered,
/// each lane computes its four accumulators.
extern "C" void pallasc_emu_mma(int32_t kind, int32_t a0, int32_t a1,
                                int32_t a2, int32_t a3, int32_t b0, int32_t b1,
                                float c0, float c1, float c2, float c3,
                                float *, float *out, int64_t offset, int64_t,
                                int64_t) {
  Warp &w = myWarp();
  int lane = myLane();
  uint32_t av[4] = {uint32_t(a0), uint32_t(a1), uint32_t(a2), uint32_t(a3)};
  std::memcpy(w.a[lane], av, sizeof av);
  w.b[lane][0] = uint32_t(b0);
  w.b[lane][1] = uint32_t(b1);
  warpSync();
  if (kind == 2) {
    float c[4] = {c0, c1, c2, c3};
    emulateMmaTf32(w, lane, c, out + offset);
    return;
  }
  bool bf16 = kind == 1;
  float A[16][16], B[16][8];
  for (int t = 0; t < 32; ++t) {
    int row = t / 4, col = 2 * (t % 4);
    for (int i = 0; i < 4; ++i)
      for (int h = 0; h < 2; ++h) {
        uint16_t bits = static_cast<uint16_t>(w.a[t][i] >> (16 * h));
        // a0a1: (row, col); a2a3: (row+8, col); a4a5: (row, col+8);
        // a6a7: (row+8, col+8).
        int r = row + ((i & 1) ? 8 : 0), k = col + h + ((i & 2) ? 8 : 0);
        A[r][k] = halfToFloat(bits, bf16);
      }
    for (int i = 0; i < 2; ++i)
      for (int h = 0; h < 2; ++h) {
        uint16_t bits = static_cast<uint16_t>(w.b[t][i] >> (16 * h));
        // b0b1: (k = col, n = row); b2b3: k + 8.
        B[col + h + 8 * i][row] = halfToFloat(bits, bf16);
      }
  }
  warpSync();
  float c[4] = {c0, c1, c2, c3};
  mmaLaneResults(A, B, c, lane, out + offset);
}

/// Lane `lane`'s four results of a 16x16xK MFMA, VGPR v holding
/// D[4 (lane / 16) + v][lane % 16] = C_v + sum over k of A[row][k] B[k][col]
/// (accumulated in k order), into `out`.
template <int K>
void mfmaLaneResults(const float (&A)[16][K], const float (&B)[K][16],
                     const float (&c)[4], int lane, float *out) {
  for (int v = 0; v < 4; ++v) {
    int row = 4 * (lane / 16) + v, col = lane % 16;
    float acc = c[v];
    for (int k = 0; k < K; ++k)
      acc += A[row][k] * B[k][col];
    out[v] = acc;
  }
}

/// AMD v_mfma_f32_16x16x16{f16,bf16} on a wave64: lane l holds
/// A[l % 16][4 (l / 16) + j], B[4 (l / 16) + j][l % 16] and accumulates
/// D[4 (l / 16) + j][l % 16], j = 0..3 (the 16-bit operands packed in an
/// i64, element j in bits 16j..16j+15).
extern "C" void pallasc_emu_mfma(int32_t kind, int64_t a, int64_t b,
                                 float c0, float c1, float c2, float c3,
                                 float *, float *out, int64_t offset, int64_t,
                                 int64_t) {
  Warp &w = myWarp();
  int lane = myLane();
  w.a[lane][0] = static_cast<uint32_t>(a);
  w.a[lane][1] = static_cast<uint32_t>(static_cast<uint64_t>(a) >> 32);
  w.b[lane][0] = static_cast<uint32_t>(b);
  w.b[lane][1] = static_cast<uint32_t>(static_cast<uint64_t>(b) >> 32);
  warpSync();
  bool bf16 = kind == 1;
  auto element = [&](const uint32_t *packed, int j) {
    return halfToFloat(static_cast<uint16_t>(packed[j / 2] >> (16 * (j % 2))),
                       bf16);
  };
  float A[16][16], B[16][16];
  for (int t = 0; t < 64; ++t)
    for (int j = 0; j < 4; ++j) {
      A[t % 16][4 * (t / 16) + j] = element(w.a[t], j);
      B[4 * (t / 16) + j][t % 16] = element(w.b[t], j);
    }
  warpSync();
  float c[4] = {c0, c1, c2, c3};
  mfmaLaneResults(A, B, c, lane, out + offset);
}

/// CDNA4 (gfx950) v_mfma_f32_16x16x32_{f16,bf16} (llvm.amdgcn.mfma.f32.
/// 16x16x32.{f16,bf16}) on a wave64, from the CDNA4 ISA's MFMA operand
/// layout: A and B take 4 VGPRs (8 16-bit elements) per lane. Lanes
/// 16 g .. 16 g + 15 (g = 0..3) carry K = 8 g .. 8 g + 7: lane l's VGPR v
/// holds A[l % 16][8 (l / 16) + 2 v] in bits 0..15 and A[..][.. + 1] in
/// bits 16..31, and B[8 (l / 16) + 2 v (+1)][l % 16] likewise. The result
/// is the 16x16x16 one's: VGPR v of lane l is D[4 (l / 16) + v][l % 16].
/// `a0`/`a1` (`b0`/`b1`): VGPRs 0-1 and 2-3, the lower VGPR in the low
/// half.
extern "C" void pallasc_emu_mfma_16x16x32(int32_t kind, int64_t a0,
                                          int64_t a1, int64_t b0, int64_t b1,
                                          float c0, float c1, float c2,
                                          float c3, float *, float *out,
                                          int64_t offset, int64_t, int64_t) {
  if (scheduler->warpSize != 64) {
    scheduler->fail("v_mfma runs on wave64 wavefronts only, not on " +
                    std::to_string(scheduler->warpSize) + " lanes");
    return;
  }
  Warp &w = myWarp();
  int lane = myLane();
  uint64_t as[2] = {uint64_t(a0), uint64_t(a1)};
  uint64_t bs[2] = {uint64_t(b0), uint64_t(b1)};
  for (int v = 0; v < 4; ++v) {
    w.a[lane][v] = static_cast<uint32_t>(as[v / 2] >> (32 * (v % 2)));
    w.b[lane][v] = static_cast<uint32_t>(bs[v / 2] >> (32 * (v % 2)));
  }
  warpSync();
  bool bf16 = kind == 1;
  float A[16][32], B[32][16];
  for (int t = 0; t < 64; ++t)
    for (int v = 0; v < 4; ++v)
      for (int h = 0; h < 2; ++h) {
        int kk = 8 * (t / 16) + 2 * v + h;
        A[t % 16][kk] =
            halfToFloat(static_cast<uint16_t>(w.a[t][v] >> (16 * h)), bf16);
        B[kk][t % 16] =
            halfToFloat(static_cast<uint16_t>(w.b[t][v] >> (16 * h)), bf16);
      }
  warpSync();
  float c[4] = {c0, c1, c2, c3};
  mfmaLaneResults(A, B, c, lane, out + offset);
}

/// AMD v_wmma_f32_16x16x16_{f16,bf16} (llvm.amdgcn.wmma.f32.16x16x16.
/// {f16,bf16}) on a wave32, from the RDNA3 and RDNA4 ISA guides' WMMA
/// matrix layouts (16-bit A and B, 32-bit C and D). `kind` bit 0: bf16
/// (else f16); bit 1: RDNA4 (gfx12), else RDNA3 (gfx11). The operands are
/// the lane's A and B VGPRs (two 16-bit elements each, the lower in bits
/// 0..15), four per i64; `c` its eight C VGPRs.
///  RDNA3: A and B take 8 VGPRs: lane l holds row l % 16 of A (VGPR v:
///    K = 2v, 2v + 1) and column l % 16 of B (K likewise); lanes 16..31 must
///    hold what lanes 0..15 hold. C/D VGPR v of lane l: D[2v + l / 16][l % 16].
///  RDNA4: 4 VGPRs: lane l holds A[l % 16][8 (l / 16) + 2v, +1] and
///    B[8 (l / 16) + 2v, +1][l % 16]; C/D VGPR v: D[8 (l / 16) + v][l % 16].
extern "C" void pallasc_emu_wmma(int32_t kind, int64_t a0, int64_t a1,
                                 int64_t a2, int64_t a3, int64_t b0,
                                 int64_t b1, int64_t b2, int64_t b3, float c0,
                                 float c1, float c2, float c3, float c4,
                                 float c5, float c6, float c7, float *,
                                 float *out, int64_t offset, int64_t,
                                 int64_t) {
  if (scheduler->warpSize != 32) {
    scheduler->fail("v_wmma runs on wave32 wavefronts only, not on " +
                    std::to_string(scheduler->warpSize) + " lanes");
    return;
  }
  int lane = myLane();
  // The A and B VGPRs of every thread of the block (8 each on RDNA3), by
  // thread: the wavefront's lanes are threads current - lane ... + 31.
  static std::vector<std::array<uint32_t, 16>> vgprs;
  if (vgprs.size() < scheduler->fibers.size())
    vgprs.resize(scheduler->fibers.size());
  int base = scheduler->current - lane;
  int64_t as[4] = {a0, a1, a2, a3}, bs[4] = {b0, b1, b2, b3};
  std::array<uint32_t, 16> &mine = vgprs[scheduler->current];
  for (int q = 0; q < 4; ++q) {
    uint64_t a = static_cast<uint64_t>(as[q]), b = static_cast<uint64_t>(bs[q]);
    mine[2 * q] = static_cast<uint32_t>(a);
    mine[2 * q + 1] = static_cast<uint32_t>(a >> 32);
    mine[8 + 2 * q] = static_cast<uint32_t>(b);
    mine[8 + 2 * q + 1] = static_cast<uint32_t>(b >> 32);
  }
  warpSync();
  auto aRegs = [&](int t) { return vgprs[base + t].data(); };
  auto bRegs = [&](int t) { return vgprs[base + t].data() + 8; };
  bool bf16 = kind & 1, rdna4 = kind & 2;
  // Element h (0: bits 0..15, 1: bits 16..31) of VGPR v.
  auto half = [&](const uint32_t *regs, int v, int h) {
    return halfToFloat(static_cast<uint16_t>(regs[v] >> (16 * h)), bf16);
  };
  float A[16][16], B[16][16];
  for (int t = 0; t < 32; ++t) {
    int mn = t % 16;
    if (!rdna4) {
      if (t >= 16) {
        for (int v = 0; v < 8; ++v)
          if (aRegs(t)[v] != aRegs(t - 16)[v] ||
              bRegs(t)[v] != bRegs(t - 16)[v])
            scheduler->fail("v_wmma on RDNA3: lane " + std::to_string(t) +
                            " holds other A/B values than lane " +
                            std::to_string(t - 16) +
                            " (the ISA requires the half-waves to match)");
        continue;
      }
      for (int v = 0; v < 8; ++v)
        for (int h = 0; h < 2; ++h) {
          A[mn][2 * v + h] = half(aRegs(t), v, h);
          B[2 * v + h][mn] = half(bRegs(t), v, h);
        }
    } else {
      for (int v = 0; v < 4; ++v)
        for (int h = 0; h < 2; ++h) {
          int k = 8 * (t / 16) + 2 * v + h;
          A[mn][k] = half(aRegs(t), v, h);
          B[k][mn] = half(bRegs(t), v, h);
        }
    }
  }
  warpSync();
  float c[8] = {c0, c1, c2, c3, c4, c5, c6, c7};
  for (int v = 0; v < 8; ++v) {
    int row = rdna4 ? 8 * (lane / 16) + v : 2 * v + lane / 16;
    int col = lane % 16;
    float acc = c[v];
    for (int k = 0; k < 16; ++k)
      acc += A[row][k] * B[k][col];
    out[offset + v] = acc;
  }
}

//===----------------------------------------------------------------------===//
// wgmma (sm_90a), written from the PTX ISA's description of
// wgmma.mma_async.m64nNk16, its register fragments, the shared memory
// matrix layouts and the matrix descriptor.
//===----------------------------------------------------------------------===//

extern "C" void pallasc_emu_wgmma_fence() {
  scheduler->fibers[scheduler->current].wgmmaFenced = true;
}

extern "C" void pallasc_emu_wgmma_commit() {
  Fiber &f = scheduler->fibers[scheduler->current];
  f.wgmmaPending += 1;
  f.wgmmaOpen = 0;
  if (scheduler->current % 128 == 0) {
    f.wgmmaReads.push_back(std::move(f.wgmmaOpenReads));
    f.wgmmaOpenReads.clear();
  }
}

/// wgmma.wait_group n: at most n committed groups stay pending. The
/// products were computed when issued; this checks the protocol (the
/// accumulators are read only after a wait_group that retires them).
extern "C" void pallasc_emu_wgmma_wait(int32_t n) {
  Fiber &f = scheduler->fibers[scheduler->current];
  if (f.wgmmaOpen)
    scheduler->fail("wgmma.wait_group with wgmma.mma_async operations not "
                    "committed (wgmma.commit_group)");
  f.wgmmaPending = std::min(f.wgmmaPending, std::max(n, 0));
  f.wgmmaFenced = false;
  while (f.wgmmaReads.size() > static_cast<size_t>(std::max(n, 0)))
    f.wgmmaReads.pop_front();
}

/// The shared memory bytes descElement read since the last reset.
thread_local uint64_t readLo, readHi;

/// Element (mn, k) of a 16-bit operand in shared memory described by a
/// wgmma matrix descriptor (18-bit offsets into the 2^18-aligned emulated
/// shared memory): bits 0-13 start address >> 4, 16-29 leading
/// dimension byte offset >> 4, 32-45 stride dimension byte offset >> 4,
/// 49-51 base offset, 62-63 swizzle mode. Without swizzling the matrix is
/// made of core matrices of 8 rows x 16 bytes, stored contiguously: rows
/// along M/N for K-major (transpose 0), along K for M/N-major (transpose
/// 1). The leading dimension byte offset is the distance between core
/// matrices adjacent in K, the stride one between those adjacent in M/N.
float descElement(int64_t desc, bool transposed, int mn, int k, bool bf16) {
  uint64_t d = static_cast<uint64_t>(desc);
  uint64_t start = (d & 0x3FFF) << 4;
  uint64_t lbo = ((d >> 16) & 0x3FFF) << 4;
  uint64_t sbo = ((d >> 32) & 0x3FFF) << 4;
  uint64_t mode = (d >> 62) & 3;
  if ((mode != 0 && mode != 1) || ((d >> 49) & 7) != 0) {
    scheduler->fail("the emulator handles wgmma descriptors without "
                    "swizzling or with 128-byte swizzling, base offset 0");
    return 0;
  }
  uint64_t offset;
  if (mode == 0) {
    offset = start + (mn / 8) * sbo + (k / 8) * lbo +
             (transposed ? (k % 8) * 16 + (mn % 8) * 2
                         : (mn % 8) * 16 + (k % 8) * 2);
  } else {
    // 128-byte swizzle: rows of 128 bytes, 8-row groups `sbo` apart; K-major
    // rows along M/N (k in the row), MN-major rows along K with 64-element
    // M/N panels `lbo` apart. The swizzle applies to the address.
    offset = transposed ? start + (mn / 64) * lbo + (mn % 64) * 2 +
                              (k / 8) * sbo + (k % 8) * 128
                        : start + (mn / 8) * sbo + (mn % 8) * 128 + k * 2;
    offset = swizzle128(offset);
  }
  if (offset + 2 > scheduler->smemSize) {
    scheduler->fail("a wgmma descriptor addresses memory outside the "
                    "shared memory");
    return 0;
  }
  readLo = std::min(readLo, offset);
  readHi = std::max(readHi, offset + 2);
  uint16_t h;
  std::memcpy(&h, scheduler->smem + offset, 2);
  return halfToFloat(h, bf16);
}

/// wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16} by the warpgroup
/// (128 consecutive threads). `flags`: bit 0 bf16, bit 1 A from registers,
/// bit 2 transpose A, bit 3 transpose B, bit 4 scale-d (accumulate into
/// `din`; else D = A B), bits 8..: N.
/// Thread t (warp w = t / 32 of the warpgroup, lane l) holds, with
/// g = l / 4 and q = l % 4:
///   A (registers): a_i (element i of its four 32-bit registers, two per
///     register, low half first) at row 16w + g + 8 ((i / 2) % 2),
///     column 2q + i % 2 + 8 (i / 4);
///   D: d_i at row 16w + g + 8 ((i / 2) % 2), column 8 (i / 4) + 2q + i % 2.
extern "C" void pallasc_emu_wgmma(int32_t flags, int64_t aDesc, int32_t a0,
                                  int32_t a1, int32_t a2, int32_t a3,
                                  int64_t bDesc, float *, float *din,
                                  int64_t dinOffset, int64_t, int64_t,
                                  float *, float *dout, int64_t doutOffset,
                                  int64_t, int64_t) {
  Scheduler &s = *scheduler;
  Fiber &me = s.fibers[s.current];
  int n = flags >> 8;
  bool bf16 = flags & 1, aRegs = flags & 2, transA = flags & 4,
       transB = flags & 8, accumulate = flags & 16;
  if (!me.wgmmaFenced)
    s.fail("wgmma.mma_async without a wgmma.fence before it");
  me.wgmmaOpen += 1;
  int group = s.current / 128, t = s.current % 128;
  if (group >= static_cast<int>(s.warpGroups.size())) {
    s.fail("wgmma.mma_async in a block of fewer than 128 threads");
    return;
  }
  WarpGroup &wg = s.warpGroups[group];
  wg.flags[t] = flags;
  wg.aDesc[t] = aDesc;
  wg.bDesc[t] = bDesc;
  uint32_t regs[4] = {uint32_t(a0), uint32_t(a1), uint32_t(a2), uint32_t(a3)};
  std::memcpy(wg.a[t], regs, sizeof regs);
  int barrier = 1 + static_cast<int>(s.warps.size()) + group;
  s.arrive(barrier);
  for (int u = 0; u < 128; ++u)
    if (wg.flags[u] != flags || wg.bDesc[u] != bDesc ||
        (!aRegs && wg.aDesc[u] != aDesc))
      s.fail("wgmma.mma_async operands (shape, types, descriptors) differ "
             "across the warpgroup");
  static thread_local float A[64][16], B[16][256];
  readLo = UINT64_MAX;
  readHi = 0;
  auto noteReads = [&] {
    if (t == 0 && readLo < readHi)
      me.wgmmaOpenReads.push_back({readLo, readHi});
    readLo = UINT64_MAX;
    readHi = 0;
  };
  if (aRegs) {
    for (int u = 0; u < 128; ++u) {
      int w = u / 32, g = (u % 32) / 4, q = u % 4;
      for (int i = 0; i < 8; ++i) {
        uint16_t h = static_cast<uint16_t>(wg.a[u][i / 2] >> (16 * (i % 2)));
        A[16 * w + g + 8 * ((i / 2) % 2)][2 * q + i % 2 + 8 * (i / 4)] =
            halfToFloat(h, bf16);
      }
    }
  } else {
    for (int m = 0; m < 64; ++m)
      for (int k = 0; k < 16; ++k)
        A[m][k] = descElement(aDesc, transA, m, k, bf16);
    noteReads();
  }
  for (int k = 0; k < 16; ++k)
    for (int c = 0; c < n; ++c)
      B[k][c] = descElement(bDesc, transB, c, k, bf16);
  noteReads();
  int w = t / 32, g = (t % 32) / 4, q = t % 4;
  for (int i = 0; i < n / 2; ++i) {
    int row = 16 * w + g + 8 * ((i / 2) % 2);
    int col = 8 * (i / 4) + 2 * q + i % 2;
    float acc = accumulate ? din[dinOffset + i] : 0.0f;
    for (int k = 0; k < 16; ++k)
      acc += A[row][k] * B[k][col];
    dout[doutOffset + i] = acc;
  }
  // Nobody overwrites the warpgroup's operands before all have read them.
  s.arrive(barrier);
}

/// ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16: lane 8j+r gives
/// the address of row r of matrix j.
extern "C" void pallasc_emu_ldmatrix(int64_t address, int32_t num,
                                     int32_t trans, int32_t *, int32_t *out,
                                     int64_t offset, int64_t, int64_t) {
  Warp &w = myWarp();
  int lane = myLane();
  w.addresses[lane] = static_cast<uint64_t>(address);
  warpSync();
  int row = lane / 4, col = 2 * (lane % 4);
  for (int j = 0; j < num; ++j) {
    uint16_t h[2];
    for (int e = 0; e < 2; ++e) {
      const uint8_t *p;
      if (!trans)
        p = reinterpret_cast<const uint8_t *>(w.addresses[8 * j + row]) +
            2 * (col + e);
      else
        p = reinterpret_cast<const uint8_t *>(w.addresses[8 * j + col + e]) +
            2 * row;
      std::memcpy(&h[e], p, 2);
    }
    out[offset + j] = static_cast<int32_t>(uint32_t(h[0]) |
                                           (uint32_t(h[1]) << 16));
  }
  warpSync();
}

} // namespace

void addMatrixIntrinsics(std::vector<EmulatorSymbol> &symbols) {
  appendSymbols(symbols, {PALLASC_EMU_SYMBOL(pallasc_emu_mma),
                          PALLASC_EMU_SYMBOL(pallasc_emu_mfma),
                          PALLASC_EMU_SYMBOL(pallasc_emu_mfma_16x16x32),
                          PALLASC_EMU_SYMBOL(pallasc_emu_wmma),
                          PALLASC_EMU_SYMBOL(pallasc_emu_ldmatrix),
                          PALLASC_EMU_SYMBOL(pallasc_emu_cvt_rna_tf32),
                          PALLASC_EMU_SYMBOL(pallasc_emu_wgmma),
                          PALLASC_EMU_SYMBOL(pallasc_emu_wgmma_fence),
                          PALLASC_EMU_SYMBOL(pallasc_emu_wgmma_commit),
                          PALLASC_EMU_SYMBOL(pallasc_emu_wgmma_wait)});
}

} // namespace pallasc::runtime::emulator
