//===- TmaIntrinsics.cpp - TMA copies and mbarriers (sm_90a) ----*- C++ -*-===//
//
// From the PTX ISA: cp.async.bulk.tensor copies a box of a tensor map into
// shared memory and completes its bytes on an mbarrier;
// mbarrier.try_wait.parity waits for a phase to complete. The other way
// (.global.shared::cta, a TMA store) it copies a box of shared memory into
// the tensor, clipped at its bounds, tracked by the issuing thread's bulk
// async groups (cp.async.bulk.commit_group / wait_group[.read]).
//
//===----------------------------------------------------------------------===//

#include "src/Runtime/GpuEmulator/Intrinsics.h"
#include "src/Runtime/GpuEmulator/Scheduler.h"

#include <algorithm>
#include <cstring>

namespace pallasc::runtime::emulator {
namespace {

MBarrier *mbarrierAt(int64_t addr) {
  uint64_t offset = static_cast<uint64_t>(addr) -
                    reinterpret_cast<uint64_t>(scheduler->smem);
  auto it = scheduler->mbarriers.find(offset);
  if (it == scheduler->mbarriers.end()) {
    scheduler->fail("an mbarrier is used before mbarrier.init");
    return nullptr;
  }
  return &it->second;
}

void wakeMbarrierWaiters() {
  for (Fiber &f : scheduler->fibers)
    if (f.waitingOn == kMbarrierWait)
      f.waitingOn = -1;
}

/// Completes the current phase: the copies land, the phase advances, the
/// pending arrivals reset.
void completePhase(MBarrier &m) {
  for (auto &[offset, image] : m.copies)
    std::memcpy(scheduler->smem + offset, image.data(), image.size());
  m.copies.clear();
  m.phase += 1;
  m.pending = m.expected;
  wakeMbarrierWaiters();
}

/// mbarrier.init, by the threads whose predicate `enabled` is nonzero.
extern "C" void pallasc_emu_mbar_init(int64_t addr, int32_t count,
                                      int32_t enabled) {
  if (!enabled)
    return;
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

/// `count` arrivals on the mbarrier, expecting `tx` more bytes.
void arrive(int64_t addr, int32_t count, int32_t tx) {
  MBarrier *m = mbarrierAt(addr);
  if (!m)
    return;
  // A phase whose arrivals and bytes are all in completes before the next
  // one starts.
  if (m->pending == 0 && m->tx == 0)
    completePhase(*m);
  m->tx += tx;
  m->pending -= count;
  if (m->pending < 0)
    scheduler->fail("more arrivals on an mbarrier than its count");
  wakeMbarrierWaiters();
}

extern "C" void pallasc_emu_mbar_arrive_tx(int64_t addr, int32_t tx) {
  arrive(addr, 1, tx);
}

/// mbarrier.arrive (no transaction bytes), `count` arrivals.
extern "C" void pallasc_emu_mbar_arrive(int64_t addr, int32_t count) {
  arrive(addr, count, 0);
}

/// The box origin (outermost first) from the instruction's coordinates
/// (innermost first).
void boxOrigin(const EmuTensorMap &t, const int32_t c[5], int64_t coord[5]) {
  for (int d = 0; d < t.rank; ++d)
    coord[d] = c[t.rank - 1 - d];
}

extern "C" void pallasc_emu_tma_load(int64_t dst, int64_t map, int64_t mbar,
                                     int32_t c0, int32_t c1, int32_t c2,
                                     int32_t c3, int32_t c4) {
  Scheduler &s = *scheduler;
  const auto *t = reinterpret_cast<const EmuTensorMap *>(map);
  MBarrier *m = mbarrierAt(mbar);
  if (!m || !t)
    return;
  int32_t c[5] = {c0, c1, c2, c3, c4};
  int64_t coord[5];
  boxOrigin(*t, c, coord);
  uint64_t offset =
      static_cast<uint64_t>(dst) - reinterpret_cast<uint64_t>(s.smem);
  int64_t rowBytes = t->boxCols() * t->elemBytes;
  int64_t bytes = t->boxRows() * rowBytes;
  if (rowBytes != 128) {
    s.fail("the emulator handles TMA boxes 128 bytes wide only");
    return;
  }
  if (offset % 1024 || offset + bytes > s.smemSize) {
    s.fail("a 128-byte swizzled TMA destination must be 1024-byte aligned "
           "and inside the shared memory");
    return;
  }
  // The hardware may write the box any time from now: no wgmma still in
  // flight may read it (the first thread of each warpgroup keeps the
  // ranges its groups read).
  for (size_t g = 0; g < s.warpGroups.size(); ++g) {
    const Fiber &f = s.fibers[g * 128];
    auto hit = [&](const std::pair<uint64_t, uint64_t> &r) {
      return r.first < offset + bytes && offset < r.second;
    };
    bool overlaps =
        std::any_of(f.wgmmaOpenReads.begin(), f.wgmmaOpenReads.end(), hit);
    for (const auto &group : f.wgmmaReads)
      overlaps = overlaps || std::any_of(group.begin(), group.end(), hit);
    // Reported after the run; the copy still lands (else the waiters on
    // its mbarrier would deadlock and that would be the report).
    if (overlaps)
      s.fail("a TMA copy overwrites shared memory that a wgmma.mma_async "
             "still in flight reads (wgmma.wait_group must retire it "
             "before the copy is issued)");
  }
  // The box image, swizzled; read now (the inputs do not change), written
  // when the phase completes.
  std::vector<char> image(bytes, 0);
  for (int64_t r = 0; r < t->boxRows(); ++r)
    for (int64_t col = 0; col < t->boxCols(); ++col) {
      int64_t g = t->offsetOf(coord, r, col);
      if (g < 0)
        continue; // zero fill
      std::memcpy(image.data() + swizzle128(r * rowBytes + col * t->elemBytes),
                  t->base + g, t->elemBytes);
    }
  m->copies.push_back({offset, std::move(image)});
  m->tx -= bytes;
  wakeMbarrierWaiters();
}

/// cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group: the box at
/// shared address `src` (128-byte rows, swizzled) into the tensor of `map`
/// at column `c0`, row `c1`. Its bytes are read now and written when a
/// wait retires its group.
extern "C" void pallasc_emu_tma_store(int64_t src, int64_t map, int32_t c0,
                                      int32_t c1, int32_t c2, int32_t c3,
                                      int32_t c4) {
  Scheduler &s = *scheduler;
  const auto *t = reinterpret_cast<const EmuTensorMap *>(map);
  if (!t)
    return;
  uint64_t offset =
      static_cast<uint64_t>(src) - reinterpret_cast<uint64_t>(s.smem);
  int64_t bytes = t->boxRows() * t->boxCols() * t->elemBytes;
  if (t->boxCols() * t->elemBytes != 128) {
    s.fail("the emulator handles TMA boxes 128 bytes wide only");
    return;
  }
  if (offset % 1024 || offset + bytes > s.smemSize) {
    s.fail("a 128-byte swizzled TMA source must be 1024-byte aligned and "
           "inside the shared memory");
    return;
  }
  BulkStore store;
  store.map = t;
  int32_t c[5] = {c0, c1, c2, c3, c4};
  boxOrigin(*t, c, store.coord);
  store.offset = offset;
  store.swizzled.assign(s.smem + offset, s.smem + offset + bytes);
  s.fibers[s.current].bulkOpen.push_back(std::move(store));
}

/// cp.async.bulk.commit_group: the thread's uncommitted TMA stores become a
/// group (an empty one if there are none).
extern "C" void pallasc_emu_bulk_commit() {
  Fiber &f = scheduler->fibers[scheduler->current];
  f.bulkGroups.push_back(std::move(f.bulkOpen));
  f.bulkOpen.clear();
}

/// Writes one TMA store's box into its tensor, clipped at the tensor's
/// bounds (as the hardware: elements outside are not written). A store
/// whose shared memory changed since it was issued raced with that write.
void completeStore(const BulkStore &store) {
  Scheduler &s = *scheduler;
  const auto *t = static_cast<const EmuTensorMap *>(store.map);
  if (std::memcmp(s.smem + store.offset, store.swizzled.data(),
                  store.swizzled.size()) != 0)
    s.fail("shared memory a TMA store reads was written before "
           "cp.async.bulk.wait_group.read retired the store (wait_smem_to_"
           "gmem before reusing the buffer)");
  int64_t rowBytes = t->boxCols() * t->elemBytes;
  for (int64_t r = 0; r < t->boxRows(); ++r)
    for (int64_t c = 0; c < t->boxCols(); ++c) {
      int64_t g = t->offsetOf(store.coord, r, c);
      if (g < 0)
        continue; // clipped
      std::memcpy(t->base + g,
                  store.swizzled.data() +
                      swizzle128(r * rowBytes + c * t->elemBytes),
                  t->elemBytes);
    }
}

/// cp.async.bulk.wait_group[.read] n: all but the thread's n most recent
/// groups complete (the emulator completes their writes too for .read).
extern "C" void pallasc_emu_bulk_wait(int32_t n) {
  Fiber &f = scheduler->fibers[scheduler->current];
  while (f.bulkGroups.size() > static_cast<size_t>(std::max(n, 0))) {
    for (const BulkStore &store : f.bulkGroups.front())
      completeStore(store);
    f.bulkGroups.pop_front();
  }
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

} // namespace

void finishBulkStores(Fiber &f) {
  for (const std::vector<BulkStore> &group : f.bulkGroups)
    for (const BulkStore &store : group)
      completeStore(store);
  for (const BulkStore &store : f.bulkOpen)
    completeStore(store);
  f.bulkGroups.clear();
  f.bulkOpen.clear();
}

void addTmaIntrinsics(std::vector<EmulatorSymbol> &symbols) {
  symbols.push_back({"pallasc_emu_mbar_init", reinterpret_cast<void *>(&pallasc_emu_mbar_init)});
  symbols.push_back({"pallasc_emu_mbar_arrive_tx", reinterpret_cast<void *>(&pallasc_emu_mbar_arrive_tx)});
  symbols.push_back({"pallasc_emu_mbar_arrive", reinterpret_cast<void *>(&pallasc_emu_mbar_arrive)});
  symbols.push_back({"pallasc_emu_mbar_wait", reinterpret_cast<void *>(&pallasc_emu_mbar_wait)});
  symbols.push_back({"pallasc_emu_tma_load", reinterpret_cast<void *>(&pallasc_emu_tma_load)});
  symbols.push_back({"pallasc_emu_tma_store", reinterpret_cast<void *>(&pallasc_emu_tma_store)});
  symbols.push_back({"pallasc_emu_bulk_commit", reinterpret_cast<void *>(&pallasc_emu_bulk_commit)});
  symbols.push_back({"pallasc_emu_bulk_wait", reinterpret_cast<void *>(&pallasc_emu_bulk_wait)});
}

} // namespace pallasc::runtime::emulator
