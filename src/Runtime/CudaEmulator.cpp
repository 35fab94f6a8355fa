//===- CudaEmulator.cpp - Run a distributed CUDA kernel on CPU threads -*- C++ -*-===//

#include "src/Runtime/CudaEmulator.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <map>
#include <cstring>
#include <memory>
#include <sys/mman.h>
#include <ucontext.h>
#include <vector>

using namespace mlir;

namespace pallasc::runtime {
namespace {

using PackedFn = void (*)(void **);

//===----------------------------------------------------------------------===//
// Emulated hardware: one block at a time, its threads as fibers
//===----------------------------------------------------------------------===//

/// The threads of a block run as fibers (ucontext) on the calling thread and
/// switch only at barriers: block barriers (`bar.sync`) and the implicit
/// warp-wide synchronization of shuffles, mma.sync and ldmatrix. When no
/// thread can run and some have not finished, a barrier is unreachable:
/// the emulation reports a deadlock instead of hanging.
struct Warp {
  uint32_t exchange[64];
  uint64_t addresses[64];
  uint32_t a[64][4], b[64][2];
};

/// One thread's cp.async copies: performed when a wait.group retires their
/// group, not when issued, so a read before the wait sees stale memory.
struct AsyncCopy {
  uint64_t dst, src;
  int32_t bytes;
};

struct Fiber {
  ucontext_t context;
  std::vector<char> stack;
  bool done = false;
  int waitingOn = -1; ///< barrier index, -1: runnable
  std::vector<AsyncCopy> open;                 ///< not yet committed
  std::vector<std::vector<AsyncCopy>> groups;  ///< committed, oldest first
  /// wgmma protocol: a wgmma.fence since the last wait_group; wgmmas not
  /// yet committed; committed groups not yet waited for.
  bool wgmmaFenced = false;
  int wgmmaOpen = 0, wgmmaPending = 0;
};

/// The operands the 128 threads of a warpgroup give one wgmma.mma_async.
struct WarpGroup {
  int32_t flags[128];
  int64_t aDesc[128], bDesc[128];
  uint32_t a[128][4];
};

/// An mbarrier object: arrivals still expected in the current phase, the
/// transaction bytes still expected, the phase, and the TMA copies that
/// land when the phase completes (they are made when a waiter sees the
/// phase complete, so a read without a wait sees stale memory).
struct MBarrier {
  int expected = 0, pending = 0;
  int64_t tx = 0;
  int64_t phase = 0;
  std::vector<std::pair<uint64_t, std::vector<char>>> copies;
};

/// Fiber::waitingOn for a thread blocked in mbarrier.try_wait.parity.
constexpr int kMbarrierWait = 1 << 30;

struct Scheduler {
  ucontext_t main;
  std::vector<Fiber> fibers;
  int current = 0;
  struct BarrierState {
    int count = 0, arrived = 0;
  };
  /// 0: the block barrier; 1 + w: warp w.
  std::vector<BarrierState> barriers;
  std::vector<Warp> warps;
  /// Barriers 1 + warps.size() + g: warpgroup g (wgmma).
  std::vector<WarpGroup> warpGroups;
  /// The emulated shared memory: 2^18-aligned, so the 18 address bits a
  /// wgmma matrix descriptor keeps are the offset into it.
  char *smem = nullptr;
  size_t smemSize = 0;
  /// mbarrier objects by shared memory offset.
  std::map<uint64_t, MBarrier> mbarriers;
  /// The first protocol violation seen (reported after the run).
  std::string failure;
  void fail(const std::string &what) {
    if (failure.empty())
      failure = what;
  }
  int64_t blockId[3] = {0, 0, 0};
  /// 32 (NVIDIA warps) or 64 (AMD wave64 wavefronts).
  int warpSize = 32;

  void arrive(int id) {
    BarrierState &bar = barriers[id];
    if (++bar.arrived == bar.count) {
      bar.arrived = 0;
      for (Fiber &f : fibers)
        if (f.waitingOn == id)
          f.waitingOn = -1;
      return;
    }
    Fiber &me = fibers[current];
    me.waitingOn = id;
    swapcontext(&me.context, &main);
  }
};
Scheduler *scheduler = nullptr;

Warp &myWarp() {
  return scheduler->warps[scheduler->current / scheduler->warpSize];
}
int myLane() { return scheduler->current % scheduler->warpSize; }
void warpSync() {
  scheduler->arrive(1 + scheduler->current / scheduler->warpSize);
}

float halfToFloat(uint16_t h, bool bf16) {
  uint32_t bits;
  if (bf16) {
    bits = static_cast<uint32_t>(h) << 16;
  } else {
    uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    if (exp == 0) {
      if (man == 0) {
        bits = sign << 31;
      } else {
        exp = 127 - 15 + 1;
        while (!(man & 0x400)) {
          man <<= 1;
          --exp;
        }
        man &= 0x3ff;
        bits = (sign << 31) | (exp << 23) | (man << 13);
      }
    } else if (exp == 31) {
      bits = (sign << 31) | 0x7f800000 | (man << 13);
    } else {
      bits = (sign << 31) | ((exp + 127 - 15) << 23) | (man << 13);
    }
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

//===----------------------------------------------------------------------===//
// The functions the rewritten kernel calls
//===----------------------------------------------------------------------===//

extern "C" int64_t pallasc_emu_tid() { return scheduler->current; }

extern "C" int64_t pallasc_emu_bid(int32_t dim) {
  return scheduler->blockId[dim];
}

extern "C" void pallasc_emu_barrier() { scheduler->arrive(0); }

extern "C" int32_t pallasc_emu_shfl_xor(int32_t value, int32_t mask) {
  Warp &w = myWarp();
  int lane = myLane();
  w.exchange[lane] = static_cast<uint32_t>(value);
  warpSync();
  uint32_t other = w.exchange[(lane ^ mask) & (scheduler->warpSize - 1)];
  warpSync();
  return static_cast<int32_t>(other);
}

extern "C" void pallasc_emu_cp_async(int64_t dst, int64_t src,
                                     int32_t bytes) {
  scheduler->fibers[scheduler->current].open.push_back(
      {static_cast<uint64_t>(dst), static_cast<uint64_t>(src), bytes});
}

extern "C" void pallasc_emu_cp_commit() {
  Fiber &f = scheduler->fibers[scheduler->current];
  f.groups.push_back(std::move(f.open));
  f.open.clear();
}

/// cp.async.wait_group n: all but the n most recent groups are complete.
extern "C" void pallasc_emu_cp_wait(int32_t n) {
  Fiber &f = scheduler->fibers[scheduler->current];
  while (f.groups.size() > static_cast<size_t>(std::max(n, 0))) {
    for (const AsyncCopy &c : f.groups.front())
      std::memcpy(reinterpret_cast<void *>(c.dst),
                  reinterpret_cast<const void *>(c.src), c.bytes);
    f.groups.erase(f.groups.begin());
  }
}

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
static float tf32ToFloat(uint32_t bits) {
  bits &= ~0x1fffu;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 (kind 2): with
/// g = lane / 4, t = lane % 4, a0..a3 = A[g][t], A[g+8][t], A[g][t+4],
/// A[g+8][t+4] and b0, b1 = B[t][g], B[t+4][g]; C as for m16n8k16.
static void emulateMmaTf32(Warp &w, int lane, const float c[4], float *out) {
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
  int row = lane / 4, col = 2 * (lane % 4);
  for (int i = 0; i < 4; ++i) {
    int r = row + (i >= 2 ? 8 : 0), n = col + (i & 1);
    float acc = c[i];
    for (int k = 0; k < 8; ++k)
      acc += A[r][k] * B[k][n];
    out[i] = acc;
  }
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
  int row = lane / 4, col = 2 * (lane % 4);
  for (int i = 0; i < 4; ++i) {
    int r = row + (i >= 2 ? 8 : 0), n = col + (i & 1);
    float acc = c[i];
    for (int k = 0; k < 16; ++k)
      acc += A[r][k] * B[k][n];
    out[offset + i] = acc;
  }
}

/// div.full.f32 (llvm.nvvm.div.full) as ptxas expands it for sm_80 and
/// sm_90: both operands scaled by 1/4 when |d| > 2^126 and by 2^24 when
/// |d| < 2^-126, then n * rcp(d). MUFU.RCP is modeled as the correctly
/// rounded reciprocal (the hardware's is within 1 ulp of it), so the result
/// is the GPU's up to that last bit of the reciprocal.
extern "C" float pallasc_emu_div_full(float n, float d) {
  float ad = std::fabs(d);
  if (ad > 0x1p126f) {
    n *= 0.25f;
    d *= 0.25f;
  } else if (ad < 0x1p-126f) {
    n *= 0x1p24f;
    d *= 0x1p24f;
  }
  float r = 1.0f / d; // rounded once, as MUFU.RCP's result; then the FMUL
  return n * r;
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
  for (int j = 0; j < 4; ++j) {
    int row = 4 * (lane / 16) + j, col = lane % 16;
    float acc = c[j];
    for (int k = 0; k < 16; ++k)
      acc += A[row][k] * B[k][col];
    out[offset + j] = acc;
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
}

//===----------------------------------------------------------------------===//
// TMA and mbarriers (sm_90a), from the PTX ISA: cp.async.bulk.tensor copies
// a box of a tensor map into shared memory and completes its bytes on an
// mbarrier; mbarrier.try_wait.parity waits for a phase to complete.
//===----------------------------------------------------------------------===//

/// The launch record's description of a CUtensorMap (2-D, 16-bit elements,
/// 128-byte swizzle, zero fill out of bounds), as the emulated kernel's
/// tensor-map parameters point to it.
struct EmuTensorMap {
  const char *base = nullptr;
  int64_t rows = 0, cols = 0;       ///< the array
  int64_t boxRows = 0, boxCols = 0; ///< one copy
  int64_t elemBytes = 2;
};

/// CU_TENSOR_MAP_SWIZZLE_128B (and wgmma's 128B swizzle mode): address bits
/// 4-6 (the 16-byte chunk in a 128-byte row) xor bits 7-9 (the row mod 8).
static uint64_t swizzle128(uint64_t offset) {
  return offset ^ (((offset >> 7) & 7) << 4);
}

static MBarrier *mbarrierAt(int64_t addr) {
  uint64_t offset = static_cast<uint64_t>(addr) -
                    reinterpret_cast<uint64_t>(scheduler->smem);
  auto it = scheduler->mbarriers.find(offset);
  if (it == scheduler->mbarriers.end()) {
    scheduler->fail("an mbarrier is used before mbarrier.init");
    return nullptr;
  }
  return &it->second;
}

static void wakeMbarrierWaiters() {
  for (Fiber &f : scheduler->fibers)
    if (f.waitingOn == kMbarrierWait)
      f.waitingOn = -1;
}

/// Completes the current phase: the copies land, the phase advances, the
/// pending arrivals reset.
static void completePhase(MBarrier &m) {
  for (auto &[offset, image] : m.copies)
    std::memcpy(scheduler->smem + offset, image.data(), image.size());
  m.copies.clear();
  m.phase += 1;
  m.pending = m.expected;
  wakeMbarrierWaiters();
}

extern "C" void pallasc_emu_mbar_init(int64_t addr, int32_t count) {
  uint64_t offset = static_cast<uint64_t>(addr) -
                    reinterpret_cast<uint64_t>(scheduler->smem);
  if (offset % 8 || offset + 8 > scheduler->smemSize) {
    scheduler->fail("mbarrier.init at an address that is not an 8-byte "
                    "aligned shared memory address");
    return;
  }
  MBarrier m;
  m.expected = m.pending = count;
  scheduler->mbarriers[offset] = m;
}

extern "C" void pallasc_emu_mbar_arrive_tx(int64_t addr, int32_t tx) {
  MBarrier *m = mbarrierAt(addr);
  if (!m)
    return;
  // A phase whose arrivals and bytes are all in completes before the next
  // one starts.
  if (m->pending == 0 && m->tx == 0)
    completePhase(*m);
  m->tx += tx;
  if (--m->pending < 0)
    scheduler->fail("more arrivals on an mbarrier than its count");
  wakeMbarrierWaiters();
}

extern "C" void pallasc_emu_tma_load(int64_t dst, int64_t map, int64_t mbar,
                                     int32_t c0, int32_t c1) {
  Scheduler &s = *scheduler;
  const auto *t = reinterpret_cast<const EmuTensorMap *>(map);
  MBarrier *m = mbarrierAt(mbar);
  if (!m || !t)
    return;
  uint64_t offset =
      static_cast<uint64_t>(dst) - reinterpret_cast<uint64_t>(s.smem);
  int64_t rowBytes = t->boxCols * t->elemBytes;
  int64_t bytes = t->boxRows * rowBytes;
  if (rowBytes != 128) {
    s.fail("the emulator handles TMA boxes 128 bytes wide only");
    return;
  }
  if (offset % 1024 || offset + bytes > s.smemSize) {
    s.fail("a 128-byte swizzled TMA destination must be 1024-byte aligned "
           "and inside the shared memory");
    return;
  }
  // The box image, swizzled; read now (the inputs do not change), written
  // when the phase completes.
  std::vector<char> image(bytes, 0);
  for (int64_t r = 0; r < t->boxRows; ++r)
    for (int64_t c = 0; c < t->boxCols; ++c) {
      int64_t gr = c1 + r, gc = c0 + c;
      if (gr < 0 || gr >= t->rows || gc < 0 || gc >= t->cols)
        continue; // zero fill
      std::memcpy(image.data() + swizzle128(r * rowBytes + c * t->elemBytes),
                  t->base + (gr * t->cols + gc) * t->elemBytes, t->elemBytes);
    }
  m->copies.push_back({offset, std::move(image)});
  m->tx -= bytes;
  wakeMbarrierWaiters();
}

/// mbarrier.try_wait.parity in a loop: returns once the phase with parity
/// `parity` has completed.
extern "C" void pallasc_emu_mbar_wait(int64_t addr, int32_t parity) {
  Scheduler &s = *scheduler;
  while (true) {
    MBarrier *m = mbarrierAt(addr);
    if (!m)
      return;
    if ((m->phase & 1) != (parity & 1))
      return;
    if (m->pending == 0 && m->tx == 0) {
      completePhase(*m);
      continue;
    }
    Fiber &me = s.fibers[s.current];
    me.waitingOn = kMbarrierWait;
    swapcontext(&me.context, &s.main);
  }
}

namespace {
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
  uint16_t h;
  std::memcpy(&h, scheduler->smem + offset, 2);
  return halfToFloat(h, bf16);
}
} // namespace

/// wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16} with scale-d = 1,
/// by the warpgroup (128 consecutive threads). `flags`: bit 0 bf16, bit 1
/// A from registers, bit 2 transpose A, bit 3 transpose B, bits 8..: N.
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
       transB = flags & 8;
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
  }
  for (int k = 0; k < 16; ++k)
    for (int c = 0; c < n; ++c)
      B[k][c] = descElement(bDesc, transB, c, k, bf16);
  int w = t / 32, g = (t % 32) / 4, q = t % 4;
  for (int i = 0; i < n / 2; ++i) {
    int row = 16 * w + g + 8 * ((i / 2) % 2);
    int col = 8 * (i / 4) + 2 * q + i % 2;
    float acc = din[dinOffset + i];
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

//===----------------------------------------------------------------------===//
// Rewriting the gpu.func into a host function
//===----------------------------------------------------------------------===//

func::FuncOp declare(OpBuilder &b, ModuleOp module, StringRef name,
                     TypeRange args, TypeRange results) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(module.getBody());
  auto f = func::FuncOp::create(b, module.getLoc(), name,
                                b.getFunctionType(args, results));
  f.setPrivate();
  return f;
}

Type stripSpace(Type t) {
  auto m = dyn_cast<MemRefType>(t);
  if (!m || !m.getMemorySpace())
    return t;
  return MemRefType::get(m.getShape(), m.getElementType(), m.getLayout());
}

/// Replaces `llvm.extractvalue %r[j]` users of `r` by loads of `buffer[j]`.
LogicalResult replaceExtracts(OpBuilder &b, Value r, Value buffer) {
  for (Operation *user : llvm::make_early_inc_range(r.getUsers())) {
    auto ex = dyn_cast<LLVM::ExtractValueOp>(user);
    if (!ex)
      return user->emitOpError() << "uses an mma/ldmatrix result in a way "
                                    "the emulator does not handle";
    b.setInsertionPoint(ex);
    Value j = arith::ConstantIndexOp::create(b, ex.getLoc(),
                                             ex.getPosition()[0]);
    Value v = memref::LoadOp::create(b, ex.getLoc(), buffer, ValueRange{j});
    ex.getResult().replaceAllUsesWith(v);
    ex.erase();
  }
  return success();
}

/// The wgmma.mma_async inline PTX the CUDA lowering emits:
///   { .reg .pred p; setp.ne.b32 p, 1, 0;
///     wgmma.mma_async.sync.aligned.m64nNk16.f32.T.T {$0, ..}, A, $b, p, 1, 1,
///     [trans-a,] trans-b; }
/// with A a descriptor `$a` or four registers `{$a0, $a1, $a2, $a3}`, the
/// accumulators tied to the outputs. Becomes a call of pallasc_emu_wgmma.
LogicalResult rewriteWgmma(OpBuilder &b, ModuleOp module,
                           LLVM::InlineAsmOp asmOp, std::string &error) {
  Location l = asmOp.getLoc();
  StringRef text = asmOp.getAsmString();
  auto bad = [&](const std::string &why) {
    error = "the emulator cannot run this wgmma (" + why + "): " + text.str();
    return failure();
  };
  if (!text.contains("setp.ne.b32 p, 1, 0;"))
    return bad("scale-d must be 1");
  StringRef rest = text.substr(text.find("wgmma.mma_async"));
  if (!rest.consume_front("wgmma.mma_async.sync.aligned.m64n"))
    return bad("not m64nNk16");
  int n = 0;
  if (rest.consumeInteger(10, n) || n % 8 || n < 8 || n > 256 ||
      !rest.consume_front("k16.f32."))
    return bad("not m64nNk16 with f32 accumulators");
  bool bf16;
  if (rest.consume_front("bf16.bf16 "))
    bf16 = true;
  else if (rest.consume_front("f16.f16 "))
    bf16 = false;
  else
    return bad("types other than f16/bf16");
  // Placeholders: outputs first ($0 .. $(n/2-1)), then the operands.
  int nd = n / 2;
  auto placeholder = [&](StringRef &r) -> int {
    r = r.ltrim(" ,{}");
    int v = -1;
    if (!r.consume_front("$") || r.consumeInteger(10, v))
      return -1;
    return v;
  };
  for (int i = 0; i < nd; ++i)
    if (placeholder(rest) != i)
      return bad("unexpected accumulator list");
  if (!rest.consume_front("}, "))
    return bad("unexpected accumulator list");
  bool aRegs = rest.starts_with("{");
  SmallVector<int> aOps;
  for (int j = 0; j < (aRegs ? 4 : 1); ++j)
    aOps.push_back(placeholder(rest) - nd);
  int bOp = placeholder(rest) - nd;
  rest = rest.ltrim(" ,");
  SmallVector<StringRef> imms;
  rest.take_until([](char c) { return c == ';'; }).split(imms, ", ");
  // p, scale-a, scale-b, [trans-a,] trans-b
  if (imms.size() != (aRegs ? 4u : 5u) || imms[0] != "p" || imms[1] != "1" ||
      imms[2] != "1")
    return bad("unexpected immediates");
  bool transA = !aRegs && imms[3] == "1";
  bool transB = imms.back() == "1";
  // Tied accumulator inputs from the constraints.
  SmallVector<StringRef> constraints;
  asmOp.getConstraints().split(constraints, ',');
  ValueRange operands = asmOp.getOperands();
  if (constraints.size() != static_cast<size_t>(nd) + operands.size())
    return bad("unexpected constraints");
  SmallVector<Value> d(nd);
  for (size_t i = 0; i < operands.size(); ++i) {
    int tied;
    if (!constraints[nd + i].getAsInteger(10, tied) && tied >= 0 && tied < nd)
      d[tied] = operands[i];
  }
  for (int op : aOps)
    if (op < 0 || op >= static_cast<int>(operands.size()))
      return bad("unexpected A operand");
  if (bOp < 0 || bOp >= static_cast<int>(operands.size()) ||
      llvm::any_of(d, [](Value v) { return !v; }))
    return bad("unexpected operands");
  b.setInsertionPoint(asmOp);
  Type i32 = b.getI32Type(), i64 = b.getI64Type(), f32 = b.getF32Type();
  auto bufferType = MemRefType::get({128}, f32);
  Value din, dout;
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(
        &asmOp->getParentOfType<func::FuncOp>().getBody().front());
    din = memref::AllocaOp::create(b, l, bufferType);
    dout = memref::AllocaOp::create(b, l, bufferType);
  }
  for (int i = 0; i < nd; ++i)
    memref::StoreOp::create(b, l, d[i], din,
                            ValueRange{arith::ConstantIndexOp::create(b, l, i)});
  int32_t flags = (bf16 ? 1 : 0) | (aRegs ? 2 : 0) | (transA ? 4 : 0) |
                  (transB ? 8 : 0) | (n << 8);
  SmallVector<Value> args = {arith::ConstantIntOp::create(b, l, i32, flags)};
  if (aRegs) {
    args.push_back(arith::ConstantIntOp::create(b, l, i64, 0));
    for (int op : aOps)
      args.push_back(operands[op]);
  } else {
    args.push_back(operands[aOps[0]]);
    for (int j = 0; j < 4; ++j)
      args.push_back(arith::ConstantIntOp::create(b, l, i32, 0));
  }
  args.push_back(operands[bOp]);
  args.push_back(din);
  args.push_back(dout);
  SmallVector<Type> types;
  for (Value a : args)
    types.push_back(a.getType());
  if (types[1] != i64 || types[6] != i64 ||
      llvm::any_of(ArrayRef<Type>(types).slice(2, 4),
                   [&](Type t) { return t != i32; }))
    return bad("unexpected operand types");
  auto f = declare(b, module, "pallasc_emu_wgmma", types, {});
  func::CallOp::create(b, l, f, args);
  if (failed(replaceExtracts(b, asmOp.getResult(0), dout)))
    return bad("unexpected use of its result");
  asmOp.erase();
  return success();
}

/// A pointer operand as an i64 address: an llvm.inttoptr of a 32-bit
/// shared address (zero-extended), or a pointer argument (a tensor map).
Value addressOf(OpBuilder &b, Location l, Value ptr) {
  if (auto cast = ptr.getDefiningOp<LLVM::IntToPtrOp>())
    return arith::ExtUIOp::create(b, l, b.getI64Type(), cast.getArg());
  return LLVM::PtrToIntOp::create(b, l, b.getI64Type(), ptr);
}

/// mbarrier.init / arrive.expect_tx / try_wait.parity and the TMA load
/// become calls of the emulator's functions.
LogicalResult rewriteTmaOp(OpBuilder &b, ModuleOp module, Operation *op,
                           std::string &error) {
  Location l = op->getLoc();
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto call = [&](StringRef name, ArrayRef<Value> args) {
    SmallVector<Type> types;
    for (Value a : args)
      types.push_back(a.getType());
    func::CallOp::create(b, l, declare(b, module, name, types, {}), args);
  };
  if (auto init = dyn_cast<NVVM::MBarrierInitOp>(op)) {
    if (init.getPredicate())
      return error = "the emulator runs mbarrier.init without a predicate",
             failure();
    call("pallasc_emu_mbar_init",
         {addressOf(b, l, init.getAddr()), init.getCount()});
  } else if (auto arrive = dyn_cast<NVVM::MBarrierArriveExpectTxOp>(op)) {
    if (arrive.getPredicate() || arrive.getNumResults())
      return error = "the emulator runs mbarrier.arrive.expect_tx without a "
                     "predicate or result",
             failure();
    call("pallasc_emu_mbar_arrive_tx",
         {addressOf(b, l, arrive.getAddr()), arrive.getTxcount()});
  } else if (auto wait = dyn_cast<NVVM::MBarrierTryWaitParityOp>(op)) {
    call("pallasc_emu_mbar_wait",
         {addressOf(b, l, wait.getAddr()), wait.getPhase()});
  } else {
    auto tma = cast<NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp>(op);
    if (tma.getCoordinates().size() != 2 || !tma.getIm2colOffsets().empty() ||
        tma.getMulticastMask() || tma.getL2CacheHint() || tma.getPredicate())
      return error = "the emulator runs 2-D tiled TMA loads only", failure();
    call("pallasc_emu_tma_load",
         {addressOf(b, l, tma.getDstMem()),
          addressOf(b, l, tma.getTmaDescriptor()),
          addressOf(b, l, tma.getMbar()), tma.getCoordinates()[0],
          tma.getCoordinates()[1]});
  }
  (void)i32;
  (void)i64;
  op->erase();
  return success();
}

FailureOr<func::FuncOp> buildHostKernel(ModuleOp module, std::string &error) {
  MLIRContext *ctx = module.getContext();
  mlir::gpu::GPUFuncOp kernel;
  module.walk([&](mlir::gpu::GPUFuncOp f) { kernel = f; });
  if (!kernel) {
    error = "no gpu.func to emulate";
    return failure();
  }
  OpBuilder b(ctx);
  Location loc = kernel.getLoc();
  SmallVector<Type> args;
  for (Type t : kernel.getArgumentTypes())
    args.push_back(stripSpace(t));
  args.push_back(MemRefType::get({ShapedType::kDynamic}, b.getI8Type()));
  b.setInsertionPointToEnd(module.getBody());
  auto host = func::FuncOp::create(b, loc, "pallasc_emu_kernel",
                                   b.getFunctionType(args, {}));
  host->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                b.getUnitAttr());
  host.getBody().takeBody(kernel.getBody());
  Block &entry = host.getBody().front();
  Value smem = entry.addArgument(args.back(), loc);

  // Rewrite the GPU-specific ops.
  SmallVector<Operation *> ops;
  // Only the ops rewritten below: rewriting an mma/ldmatrix also erases the
  // llvm.extractvalue ops that use it, which must not be visited afterwards.
  host.walk([&](Operation *op) {
    if (isa<mlir::gpu::ThreadIdOp, mlir::gpu::BlockIdOp, mlir::gpu::BarrierOp,
            mlir::gpu::ShuffleOp, mlir::gpu::PrintfOp,
            mlir::gpu::DynamicSharedMemoryOp, mlir::gpu::ReturnOp, NVVM::MmaOp,
            NVVM::ConvertFloatToTF32Op,
            amdgpu::MFMAOp,
            nvgpu::DeviceAsyncCopyOp, NVVM::CpAsyncCommitGroupOp,
            NVVM::CpAsyncWaitGroupOp, NVVM::WgmmaFenceAlignedOp,
            NVVM::WgmmaGroupSyncAlignedOp, NVVM::WgmmaWaitGroupSyncOp,
            NVVM::FenceProxyOp, LLVM::InlineAsmOp, NVVM::MBarrierInitOp,
            NVVM::MBarrierArriveExpectTxOp, NVVM::MBarrierTryWaitParityOp,
            NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp,
            NVVM::FenceMbarrierInitOp, LLVM::CallIntrinsicOp>(op))
      ops.push_back(op);
  });
  Type i32 = b.getI32Type(), f32 = b.getF32Type(), index = b.getIndexType();
  auto buffer = [&](Type elem) {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&entry);
    return memref::AllocaOp::create(b, loc, MemRefType::get({4}, elem))
        .getResult();
  };
  auto toI32 = [&](Value v) -> Value {
    if (v.getType().isInteger(32))
      return v;
    if (auto vt = dyn_cast<VectorType>(v.getType())) {
      Value c = vector::BitCastOp::create(
          b, loc, VectorType::get({1}, i32), v);
      return vector::ExtractOp::create(b, loc, c, 0);
    }
    return arith::BitcastOp::create(b, loc, i32, v);
  };
  for (Operation *op : ops) {
    b.setInsertionPoint(op);
    Location l = op->getLoc();
    if (isa<mlir::gpu::ThreadIdOp>(op)) {
      auto f = declare(b, module, "pallasc_emu_tid", {}, {index});
      op->getResult(0).replaceAllUsesWith(
          func::CallOp::create(b, l, f, ValueRange{}).getResult(0));
      op->erase();
    } else if (auto bid = dyn_cast<mlir::gpu::BlockIdOp>(op)) {
      auto f = declare(b, module, "pallasc_emu_bid", {i32}, {index});
      Value d = arith::ConstantIntOp::create(
          b, l, i32, static_cast<int64_t>(bid.getDimension()));
      op->getResult(0).replaceAllUsesWith(
          func::CallOp::create(b, l, f, ValueRange{d}).getResult(0));
      op->erase();
    } else if (isa<mlir::gpu::BarrierOp>(op)) {
      auto f = declare(b, module, "pallasc_emu_barrier", {}, {});
      func::CallOp::create(b, l, f, ValueRange{});
      op->erase();
    } else if (auto sh = dyn_cast<mlir::gpu::ShuffleOp>(op)) {
      if (sh.getMode() != mlir::gpu::ShuffleMode::XOR) {
        error = "the emulator handles xor shuffles only";
        return failure();
      }
      auto f = declare(b, module, "pallasc_emu_shfl_xor", {i32, i32}, {i32});
      Value v = sh.getValue();
      bool isFloat = v.getType().isF32();
      if (isFloat)
        v = arith::BitcastOp::create(b, l, i32, v);
      Value r = func::CallOp::create(b, l, f, ValueRange{v, sh.getOffset()})
                    .getResult(0);
      if (isFloat)
        r = arith::BitcastOp::create(b, l, f32, r);
      sh.getShuffleResult().replaceAllUsesWith(r);
      sh.getValid().replaceAllUsesWith(
          arith::ConstantIntOp::create(b, l, 1, 1).getResult());
      op->erase();
    } else if (isa<mlir::gpu::PrintfOp>(op)) {
      op->erase();
    } else if (isa<mlir::gpu::DynamicSharedMemoryOp>(op)) {
      op->getResult(0).replaceAllUsesWith(smem);
      op->erase();
    } else if (isa<mlir::gpu::ReturnOp>(op)) {
      func::ReturnOp::create(b, l);
      op->erase();
    } else if (auto cvt = dyn_cast<NVVM::ConvertFloatToTF32Op>(op)) {
      if (cvt.getRnd() != NVVM::FPRoundingMode::RNA || cvt.getRelu() ||
          cvt.getSat() != NVVM::SaturationMode::NONE) {
        error = "the emulator handles cvt.rna.tf32.f32 only";
        return failure();
      }
      auto f = declare(b, module, "pallasc_emu_cvt_rna_tf32", {f32}, {i32});
      cvt.getResult().replaceAllUsesWith(
          func::CallOp::create(b, l, f, ValueRange{cvt.getSrc()})
              .getResult(0));
      cvt.erase();
    } else if (auto mma = dyn_cast<NVVM::MmaOp>(op)) {
      int32_t kind = 0;
      if (auto t = mma.getMultiplicandAPtxType())
        kind = *t == NVVM::MMATypes::bf16   ? 1
               : *t == NVVM::MMATypes::tf32 ? 2
                                            : 0;
      auto shape = mma.getShapeAttr();
      if (shape.getK() != (kind == 2 ? 8 : 16)) {
        error = "the emulator handles m16n8k16 f16/bf16 and m16n8k8 tf32 "
                "mma.sync only";
        return failure();
      }
      Value out = buffer(f32);
      SmallVector<Type> types = {i32};
      SmallVector<Value> operands = {
          arith::ConstantIntOp::create(b, l, i32, kind)};
      for (Value a : mma.getOperandA()) {
        operands.push_back(toI32(a));
        types.push_back(i32);
      }
      for (Value v : mma.getOperandB()) {
        operands.push_back(toI32(v));
        types.push_back(i32);
      }
      for (Value c : mma.getOperandC()) {
        operands.push_back(c);
        types.push_back(f32);
      }
      if (operands.size() != 11) {
        error = "the emulator handles m16n8k16 mma.sync only";
        return failure();
      }
      operands.push_back(out);
      types.push_back(out.getType());
      auto f = declare(b, module, "pallasc_emu_mma", types, {});
      func::CallOp::create(b, l, f, operands);
      if (failed(replaceExtracts(b, mma.getResult(), out))) {
        error = "unexpected use of an mma result";
        return failure();
      }
      mma.erase();
    } else if (auto mfma = dyn_cast<amdgpu::MFMAOp>(op)) {
      auto at = dyn_cast<VectorType>(mfma.getSourceA().getType());
      auto ct = dyn_cast<VectorType>(mfma.getDestC().getType());
      if (mfma.getM() != 16 || mfma.getN() != 16 || mfma.getK() != 16 ||
          mfma.getBlocks() != 1 || !at || at.getNumElements() != 4 ||
          !(at.getElementType().isF16() || at.getElementType().isBF16()) ||
          !ct || ct.getNumElements() != 4 || !ct.getElementType().isF32()) {
        error = "the emulator handles 16x16x16 f16/bf16 MFMA only";
        return failure();
      }
      Type i64 = b.getI64Type();
      auto pack = [&](Value v) -> Value {
        Value c = vector::BitCastOp::create(
            b, l, VectorType::get({1}, i64), v);
        return vector::ExtractOp::create(b, l, c, 0);
      };
      Value out = buffer(f32);
      SmallVector<Value> operands = {
          arith::ConstantIntOp::create(b, l, i32,
                                       at.getElementType().isBF16() ? 1 : 0),
          pack(mfma.getSourceA()), pack(mfma.getSourceB())};
      SmallVector<Type> types = {i32, i64, i64};
      for (int64_t j = 0; j < 4; ++j) {
        operands.push_back(
            vector::ExtractOp::create(b, l, mfma.getDestC(), j));
        types.push_back(f32);
      }
      operands.push_back(out);
      types.push_back(out.getType());
      auto f = declare(b, module, "pallasc_emu_mfma", types, {});
      func::CallOp::create(b, l, f, operands);
      SmallVector<Value> results;
      for (int64_t j = 0; j < 4; ++j)
        results.push_back(memref::LoadOp::create(
            b, l, out, ValueRange{arith::ConstantIndexOp::create(b, l, j)}));
      mfma.getDestD().replaceAllUsesWith(
          vector::FromElementsOp::create(b, l, ct, results).getResult());
      op->erase();
    } else if (auto copy = dyn_cast<nvgpu::DeviceAsyncCopyOp>(op)) {
      // The byte addresses of both ends.
      auto address = [&](Value m, ValueRange indices) -> Value {
        auto type = cast<MemRefType>(m.getType());
        Value ptr =
            memref::ExtractAlignedPointerAsIndexOp::create(b, l, m);
        auto meta = memref::ExtractStridedMetadataOp::create(b, l, m);
        Value linear = meta.getOffset();
        for (auto [i, stride] : llvm::zip(indices, meta.getStrides()))
          linear = arith::AddIOp::create(
              b, l, linear, arith::MulIOp::create(b, l, i, stride));
        int64_t bytes = type.getElementTypeBitWidth() / 8;
        Value a = arith::AddIOp::create(
            b, l, ptr,
            arith::MulIOp::create(
                b, l, linear, arith::ConstantIndexOp::create(b, l, bytes)));
        return arith::IndexCastOp::create(b, l, b.getI64Type(), a);
      };
      Value dst = address(copy.getDst(), copy.getDstIndices());
      Value src = address(copy.getSrc(), copy.getSrcIndices());
      if (copy.getSrcElements()) {
        error = "the emulator does not handle partial cp.async copies";
        return failure();
      }
      int64_t bytes = copy.getDstElements().getZExtValue() *
                      copy.getDst().getType().getElementTypeBitWidth() / 8;
      auto f = declare(b, module, "pallasc_emu_cp_async",
                       {b.getI64Type(), b.getI64Type(), i32}, {});
      func::CallOp::create(
          b, l, f,
          ValueRange{dst, src, arith::ConstantIntOp::create(b, l, i32, bytes)});
      if (!copy.getAsyncToken().use_empty()) {
        error = "the emulator does not handle nvgpu async tokens";
        return failure();
      }
      op->erase();
    } else if (isa<NVVM::CpAsyncCommitGroupOp>(op)) {
      auto f = declare(b, module, "pallasc_emu_cp_commit", {}, {});
      func::CallOp::create(b, l, f, ValueRange{});
      op->erase();
    } else if (auto wait = dyn_cast<NVVM::CpAsyncWaitGroupOp>(op)) {
      auto f = declare(b, module, "pallasc_emu_cp_wait", {i32}, {});
      func::CallOp::create(
          b, l, f,
          ValueRange{arith::ConstantIntOp::create(b, l, i32, wait.getN())});
      op->erase();
    } else if (isa<NVVM::WgmmaFenceAlignedOp>(op)) {
      auto f = declare(b, module, "pallasc_emu_wgmma_fence", {}, {});
      func::CallOp::create(b, l, f, ValueRange{});
      op->erase();
    } else if (isa<NVVM::WgmmaGroupSyncAlignedOp>(op)) {
      auto f = declare(b, module, "pallasc_emu_wgmma_commit", {}, {});
      func::CallOp::create(b, l, f, ValueRange{});
      op->erase();
    } else if (auto wait = dyn_cast<NVVM::WgmmaWaitGroupSyncOp>(op)) {
      auto f = declare(b, module, "pallasc_emu_wgmma_wait", {i32}, {});
      func::CallOp::create(
          b, l, f,
          ValueRange{arith::ConstantIntOp::create(
              b, l, i32, static_cast<int64_t>(wait.getGroup()))});
      op->erase();
    } else if (isa<NVVM::FenceProxyOp, NVVM::FenceMbarrierInitOp>(op)) {
      // Host memory has one proxy; mbarrier.init is seen at once.
      op->erase();
    } else if (isa<NVVM::MBarrierInitOp, NVVM::MBarrierArriveExpectTxOp,
                   NVVM::MBarrierTryWaitParityOp,
                   NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp>(op)) {
      if (failed(rewriteTmaOp(b, module, op, error)))
        return failure();
    } else if (auto intr = dyn_cast<LLVM::CallIntrinsicOp>(op)) {
      if (intr.getIntrin() != "llvm.nvvm.div.full") {
        error = "the emulator cannot run the intrinsic " +
                intr.getIntrin().str();
        return failure();
      }
      auto f = declare(b, module, "pallasc_emu_div_full", {f32, f32}, {f32});
      op->getResult(0).replaceAllUsesWith(
          func::CallOp::create(b, l, f, intr.getArgs()).getResult(0));
      op->erase();
    } else if (auto asmOp = dyn_cast<LLVM::InlineAsmOp>(op);
               asmOp && asmOp.getAsmString().contains("wgmma.mma_async")) {
      if (failed(rewriteWgmma(b, module, asmOp, error)))
        return failure();
    } else if (auto asmOp = dyn_cast<LLVM::InlineAsmOp>(op)) {
      StringRef text = asmOp.getAsmString();
      if (!text.starts_with("ldmatrix.sync.aligned.m8n8.x")) {
        error = "the emulator cannot run inline assembly '" + text.str() + "'";
        return failure();
      }
      int32_t num = text[strlen("ldmatrix.sync.aligned.m8n8.x")] - '0';
      int32_t trans = text.contains(".trans") ? 1 : 0;
      int64_t offset = 0;
      StringRef tail = text.substr(text.rfind('+') + 1);
      tail = tail.take_while([](char c) { return std::isdigit(c); });
      tail.getAsInteger(10, offset);
      Value out = buffer(i32);
      Value addr = arith::ExtUIOp::create(b, l, b.getI64Type(),
                                          asmOp.getOperands()[0]);
      addr = arith::AddIOp::create(
          b, l, addr,
          arith::ConstantIntOp::create(b, l, b.getI64Type(), offset));
      auto f = declare(b, module, "pallasc_emu_ldmatrix",
                       {b.getI64Type(), i32, i32, out.getType()}, {});
      func::CallOp::create(
          b, l, f,
          ValueRange{addr, arith::ConstantIntOp::create(b, l, i32, num),
                     arith::ConstantIntOp::create(b, l, i32, trans), out});
      if (failed(replaceExtracts(b, asmOp.getResult(0), out))) {
        error = "unexpected use of an ldmatrix result";
        return failure();
      }
      asmOp.erase();
    }
  }
  // Addresses made for the rewritten ops.
  host.walk([&](LLVM::IntToPtrOp op) {
    if (op->use_empty())
      op->erase();
  });
  // Shared memory is plain host memory here.
  host.walk([&](Operation *op) {
    for (Value r : op->getResults())
      r.setType(stripSpace(r.getType()));
    for (Region &region : op->getRegions())
      for (Block &blk : region)
        for (BlockArgument a : blk.getArguments())
          a.setType(stripSpace(a.getType()));
  });
  for (BlockArgument a : entry.getArguments())
    a.setType(stripSpace(a.getType()));
  // The gpu.module is no longer needed.
  module.walk([&](mlir::gpu::GPUModuleOp m) { m.erase(); });
  module->removeAttr(mlir::gpu::GPUDialect::getContainerModuleAttrName());
  return host;
}

LogicalResult lowerHostKernel(ModuleOp module) {
  PassManager pm(module.getContext());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  return pm.run(module);
}

/// A memref descriptor for a static-shape, row-major buffer.
std::vector<int64_t> descriptor(void *data, ArrayRef<int64_t> shape) {
  std::vector<int64_t> d = {reinterpret_cast<int64_t>(data),
                            reinterpret_cast<int64_t>(data), 0};
  for (int64_t s : shape)
    d.push_back(s);
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    strides[i - 1] = strides[i] * shape[i];
  for (int64_t s : strides)
    d.push_back(s);
  return d;
}

} // namespace

bool emulateGpuKernel(ModuleOp module, const launch::GpuLaunchRecord &record,
                      ArrayRef<void *> buffers, ArrayRef<int32_t> scalars,
                      const int64_t grid[3], std::string &error) {
  SmallVector<MemRefType> params;
  module.walk([&](mlir::gpu::GPUFuncOp f) {
    for (Type t : f.getArgumentTypes())
      if (auto m = dyn_cast<MemRefType>(t))
        params.push_back(m);
  });
  int64_t threads = record.block[0];
  int64_t smemBytes = record.dynamicSharedBytes;
  int warpSize = static_cast<int>(record.warpSize);
  if (warpSize != 32 && warpSize != 64) {
    error = "the emulator runs 32- or 64-thread warps, not " +
            std::to_string(record.warpSize);
    return false;
  }
  if (params.size() != buffers.size()) {
    error = "the kernel takes " + std::to_string(params.size()) +
            " arrays, " + std::to_string(buffers.size()) + " were given";
    return false;
  }
  if (failed(buildHostKernel(module, error)))
    return false;
  if (failed(lowerHostKernel(module))) {
    error = "cannot lower the kernel for the host";
    return false;
  }

  static bool init = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)init;
  ExecutionEngineOptions options;
  // ExecutionEngineOptions::transformer is a function_ref: keep the callable
  // alive until ExecutionEngine::create has run.
  std::function<llvm::Error(llvm::Module *)> transformer =
      makeOptimizingTransformer(2, 0, nullptr);
  options.transformer = transformer;
  auto engine = ExecutionEngine::create(module, options);
  if (!engine) {
    llvm::raw_string_ostream os(error);
    os << "cannot JIT the emulated kernel: " << engine.takeError();
    return false;
  }
  (*engine)->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    auto add = [&](const char *name, void *address) {
      map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                             llvm::JITSymbolFlags::Exported};
    };
    add("pallasc_emu_tid", reinterpret_cast<void *>(&pallasc_emu_tid));
    add("pallasc_emu_bid", reinterpret_cast<void *>(&pallasc_emu_bid));
    add("pallasc_emu_barrier", reinterpret_cast<void *>(&pallasc_emu_barrier));
    add("pallasc_emu_shfl_xor",
        reinterpret_cast<void *>(&pallasc_emu_shfl_xor));
    add("pallasc_emu_mma", reinterpret_cast<void *>(&pallasc_emu_mma));
    add("pallasc_emu_mfma", reinterpret_cast<void *>(&pallasc_emu_mfma));
    add("pallasc_emu_div_full",
        reinterpret_cast<void *>(&pallasc_emu_div_full));
    add("pallasc_emu_ldmatrix",
        reinterpret_cast<void *>(&pallasc_emu_ldmatrix));
    add("pallasc_emu_cvt_rna_tf32",
        reinterpret_cast<void *>(&pallasc_emu_cvt_rna_tf32));
    add("pallasc_emu_cp_async",
        reinterpret_cast<void *>(&pallasc_emu_cp_async));
    add("pallasc_emu_cp_commit",
        reinterpret_cast<void *>(&pallasc_emu_cp_commit));
    add("pallasc_emu_cp_wait", reinterpret_cast<void *>(&pallasc_emu_cp_wait));
    add("pallasc_emu_wgmma", reinterpret_cast<void *>(&pallasc_emu_wgmma));
    add("pallasc_emu_wgmma_fence",
        reinterpret_cast<void *>(&pallasc_emu_wgmma_fence));
    add("pallasc_emu_wgmma_commit",
        reinterpret_cast<void *>(&pallasc_emu_wgmma_commit));
    add("pallasc_emu_wgmma_wait",
        reinterpret_cast<void *>(&pallasc_emu_wgmma_wait));
    add("pallasc_emu_mbar_init",
        reinterpret_cast<void *>(&pallasc_emu_mbar_init));
    add("pallasc_emu_mbar_arrive_tx",
        reinterpret_cast<void *>(&pallasc_emu_mbar_arrive_tx));
    add("pallasc_emu_mbar_wait",
        reinterpret_cast<void *>(&pallasc_emu_mbar_wait));
    add("pallasc_emu_tma_load",
        reinterpret_cast<void *>(&pallasc_emu_tma_load));
    return map;
  });
  auto fn = (*engine)->lookupPacked("_mlir_ciface_pallasc_emu_kernel");
  if (!fn) {
    llvm::raw_string_ostream os(error);
    os << "the emulated kernel has no entry: " << fn.takeError();
    return false;
  }
  PackedFn kernel = *fn;

  // Shared memory below 2 GiB: the lowering computes 32-bit shared
  // addresses (ldmatrix) from it. Aligned to 2^18 bytes: a wgmma matrix
  // descriptor keeps address bits 4..17, the offset into it.
  size_t smemSize = std::max<int64_t>(16, (smemBytes + 4095) / 4096 * 4096);
  constexpr size_t kSmemAlign = size_t(1) << 18;
  size_t mapSize = smemSize + kSmemAlign;
  void *mapping = mmap(nullptr, mapSize, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
  if (mapping == MAP_FAILED) {
    error = "cannot map the emulated shared memory";
    return false;
  }
  void *smem = reinterpret_cast<void *>(
      (reinterpret_cast<uintptr_t>(mapping) + kSmemAlign - 1) &
      ~(kSmemAlign - 1));

  // Packed arguments: descriptors for arrays, values for scalars, then the
  // shared memory descriptor.
  std::vector<std::vector<int64_t>> descs;
  for (auto [p, t] : llvm::zip(buffers, params))
    descs.push_back(descriptor(p, t.getShape()));
  std::vector<int64_t> smemDesc =
      descriptor(smem, {static_cast<int64_t>(smemSize)});
  std::vector<void *> descPtrs;
  for (auto &d : descs)
    descPtrs.push_back(d.data());
  void *smemPtr = smemDesc.data();
  std::vector<int32_t> scalarValues(scalars.begin(), scalars.end());
  std::vector<void *> packed;
  for (void *&p : descPtrs)
    packed.push_back(&p);
  for (int32_t &s : scalarValues)
    packed.push_back(&s);
  // Tensor maps: the emulator's description of each (the launch record's).
  std::vector<EmuTensorMap> maps;
  for (const launch::GpuKernelParam &p : record.params) {
    if (p.kind != launch::GpuKernelParam::Kind::TensorMap)
      continue;
    if (p.tensorMap.input >= buffers.size()) {
      error = "a tensor-map parameter of the launch record is malformed";
      return false;
    }
    EmuTensorMap m;
    m.base = static_cast<const char *>(buffers[p.tensorMap.input]);
    m.rows = p.tensorMap.globalShape[0];
    m.cols = p.tensorMap.globalShape[1];
    m.boxRows = p.tensorMap.boxShape[0];
    m.boxCols = p.tensorMap.boxShape[1];
    maps.push_back(m);
  }
  std::vector<void *> mapPtrs;
  for (EmuTensorMap &m : maps)
    mapPtrs.push_back(&m);
  for (void *&p : mapPtrs)
    packed.push_back(&p);
  packed.push_back(&smemPtr);

  Scheduler sched;
  scheduler = &sched;
  sched.fibers.resize(threads);
  sched.warpSize = warpSize;
  sched.warps.resize((threads + warpSize - 1) / warpSize);
  sched.warpGroups.resize(threads / 128);
  sched.barriers.resize(1 + sched.warps.size() + sched.warpGroups.size());
  sched.barriers[0].count = static_cast<int>(threads);
  for (size_t w = 0; w < sched.warps.size(); ++w)
    sched.barriers[1 + w].count = warpSize;
  for (size_t g = 0; g < sched.warpGroups.size(); ++g)
    sched.barriers[1 + sched.warps.size() + g].count = 128;
  sched.smem = static_cast<char *>(smem);
  sched.smemSize = smemSize;
  static thread_local PackedFn entry;
  static thread_local void **entryArgs;
  entry = kernel;
  entryArgs = packed.data();
  auto trampoline = +[](int index) {
    entry(entryArgs);
    Fiber &self = scheduler->fibers[index];
    if (self.wgmmaOpen || self.wgmmaPending)
      scheduler->fail("a thread finished with wgmma.mma_async operations "
                      "not waited for (wgmma.commit_group / wait_group)");
    scheduler->fibers[index].done = true;
    swapcontext(&scheduler->fibers[index].context, &scheduler->main);
  };
  constexpr size_t kStack = 1 << 20;
  bool deadlock = false;
  for (int64_t b = 0;
       b < grid[0] * grid[1] * grid[2] && !deadlock && sched.failure.empty();
       ++b) {
    // Unwritten shared memory reads as NaN / all ones.
    std::memset(smem, 0xff, smemSize);
    sched.blockId[0] = b % grid[0];
    sched.blockId[1] = (b / grid[0]) % grid[1];
    sched.blockId[2] = b / (grid[0] * grid[1]);
    for (int64_t t = 0; t < threads; ++t) {
      Fiber &f = sched.fibers[t];
      f.stack.resize(kStack);
      f.done = false;
      f.waitingOn = -1;
      f.open.clear();
      f.groups.clear();
      f.wgmmaFenced = false;
      f.wgmmaOpen = f.wgmmaPending = 0;
      getcontext(&f.context);
      f.context.uc_stack.ss_sp = f.stack.data();
      f.context.uc_stack.ss_size = kStack;
      f.context.uc_link = &sched.main;
      makecontext(&f.context, reinterpret_cast<void (*)()>(trampoline), 1,
                  static_cast<int>(t));
    }
    for (auto &bar : sched.barriers)
      bar.arrived = 0;
    sched.mbarriers.clear();
    while (true) {
      bool ran = false, finished = true;
      for (int64_t t = 0; t < threads; ++t) {
        Fiber &f = sched.fibers[t];
        if (f.done)
          continue;
        finished = false;
        if (f.waitingOn >= 0)
          continue;
        sched.current = static_cast<int>(t);
        swapcontext(&sched.main, &f.context);
        ran = true;
      }
      if (finished)
        break;
      if (!ran) {
        deadlock = true;
        break;
      }
    }
  }
  scheduler = nullptr;
  munmap(mapping, mapSize);
  if (deadlock) {
    error = "a barrier was not reached by every thread of a block (the "
            "emulated kernel deadlocked)";
    return false;
  }
  if (!sched.failure.empty()) {
    error = sched.failure;
    return false;
  }
  return true;
}

} // namespace pallasc::runtime
