//===- ThreadIntrinsics.cpp - Ids, barriers, shuffles, cp.async -*- C++ -*-===//

#include "src/Runtime/GpuEmulator/Intrinsics.h"
#include "src/Runtime/GpuEmulator/Scheduler.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace pallasc::runtime::emulator {
namespace {

extern "C" int64_t pallasc_emu_tid() { return scheduler->current; }

extern "C" int64_t pallasc_emu_bid(int32_t dim) {
  return scheduler->blockId[dim];
}

extern "C" void pallasc_emu_barrier() { scheduler->arrive(0); }

/// bar.sync `id`, `count`: hardware barrier `id` (0 to 15) completes when
/// `count` threads (a multiple of the warp size) have arrived; -1: every
/// thread of the block. Barrier 0 for the whole block is the block barrier.
extern "C" void pallasc_emu_bar_sync(int32_t id, int32_t count) {
  Scheduler &s = *scheduler;
  int threads = static_cast<int>(s.fibers.size());
  if (count < 0)
    count = threads;
  if (id < 0 || id >= kNamedBarriers || count <= 0 || count > threads ||
      count % s.warpSize) {
    s.fail("bar.sync " + std::to_string(id) + ", " + std::to_string(count) +
           ": the barrier must be 0 to 15 and the thread count a positive "
           "multiple of the warp size, at most the block's " +
           std::to_string(threads));
    return;
  }
  if (id == 0 && count == threads) {
    s.arrive(0);
    return;
  }
  Scheduler::BarrierState &bar = s.barriers[s.namedBarrier(id)];
  if (bar.arrived == 0)
    bar.count = count;
  else if (bar.count != count) {
    s.fail("bar.sync " + std::to_string(id) + " used with " +
           std::to_string(count) + " threads while " +
           std::to_string(bar.count) + " are expected");
    return;
  }
  s.arrive(s.namedBarrier(id));
}

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

} // namespace

void addThreadIntrinsics(std::vector<EmulatorSymbol> &symbols) {
  appendSymbols(symbols, {PALLASC_EMU_SYMBOL(pallasc_emu_div_full),
                          PALLASC_EMU_SYMBOL(pallasc_emu_tid),
                          PALLASC_EMU_SYMBOL(pallasc_emu_bid),
                          PALLASC_EMU_SYMBOL(pallasc_emu_barrier),
                          PALLASC_EMU_SYMBOL(pallasc_emu_bar_sync),
                          PALLASC_EMU_SYMBOL(pallasc_emu_shfl_xor),
                          PALLASC_EMU_SYMBOL(pallasc_emu_cp_async),
                          PALLASC_EMU_SYMBOL(pallasc_emu_cp_commit),
                          PALLASC_EMU_SYMBOL(pallasc_emu_cp_wait)});
}

} // namespace pallasc::runtime::emulator
