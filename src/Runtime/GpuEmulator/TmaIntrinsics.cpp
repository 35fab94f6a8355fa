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
#include <string>

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

/// The block of the running cluster whose shared memory holds `addr` (the
/// running block's own first), or null.
Scheduler *ownerOf(int64_t addr) {
  auto holds = [&](Scheduler *s) {
    uint64_t a = static_cast<uint64_t>(addr),
             base = reinterpret_cast<uint64_t>(s->smem);
    return a >= base && a < base + s->smemSize;
  };
  if (holds(scheduler) || !scheduler->cluster)
    return scheduler;
  for (Scheduler *s : scheduler->cluster->blocks)
    if (holds(s))
      return s;
  return nullptr;
}

/// `count` arrivals on the mbarrier, expecting `tx` more bytes. The
/// mbarrier may be another block's of the cluster (a shared::cluster
/// address from mapa): its phase and waiters are that block's.
void arrive(int64_t addr, int32_t count, int32_t tx) {
  Scheduler *self = scheduler, *owner = ownerOf(addr);
  if (!owner) {
    scheduler->fail("an mbarrier arrive at an address outside the shared "
                    "memory of every block of the cluster");
    return;
  }
  scheduler = owner;
  struct Restore {
    Scheduler *s;
    ~Restore() { scheduler = s; }
  } restore{self};
  MBarrier *m = mbarrierAt(addr);
  if (!m) {
    if (owner != self)
      self->fail(owner->failure);
    return;
  }
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

/// Whether a TMA box of `bytes`, its rows `rowBytes` wide, fits the 128-byte
/// swizzle at shared-memory `offset`: rows of 128 bytes, 1024-byte aligned,
/// inside the shared memory. Else fails the run, naming the box the copy's
/// `what` ("destination" or "source").
bool swizzledBoxFits(Scheduler &s, int64_t rowBytes, uint64_t offset,
                     int64_t bytes, const char *what) {
  if (rowBytes != 128) {
    s.fail("the emulator handles TMA boxes 128 bytes wide only");
    return false;
  }
  if (offset % 1024 || offset + bytes > s.smemSize) {
    s.fail(std::string("a 128-byte swizzled TMA ") + what +
           " must be 1024-byte aligned and inside the shared memory");
    return false;
  }
  return true;
}

/// The box origin (outermost first) from the instruction's coordinates
/// (innermost first).
void boxOrigin(const EmuTensorMap &t, const int32_t c[5], int64_t coord[5]) {
  for (int d = 0; d < t.rank; ++d)
    coord[d] = c[t.rank - 1 - d];
}

/// A TMA load of the box at `c` (innermost first) of tensor map `map` to
/// shared address `dst`, completing on the mbarrier at `mbar`: into the
/// issuing block, or with a nonzero `mask` (multicast::cluster) into the
/// same offsets of every block of the cluster whose rank's bit is set,
/// each block's mbarrier completing the bytes.
void tmaLoad(int64_t dst, int64_t map, int64_t mbar, const int32_t c[5],
             uint32_t mask) {
  Scheduler &s = *scheduler;
  const auto *t = reinterpret_cast<const EmuTensorMap *>(map);
  if (!t)
    return;
  int64_t coord[5];
  boxOrigin(*t, c, coord);
  uint64_t offset =
      static_cast<uint64_t>(dst) - reinterpret_cast<uint64_t>(s.smem);
  uint64_t mbarOffset =
      static_cast<uint64_t>(mbar) - reinterpret_cast<uint64_t>(s.smem);
  int64_t rowBytes = t->boxCols() * t->elemBytes;
  int64_t bytes = t->boxRows() * rowBytes;
  if (!swizzledBoxFits(s, rowBytes, offset, bytes, "destination"))
    return;
  std::vector<Scheduler *> targets;
  if (!mask) {
    targets.push_back(&s);
  } else {
    size_t n = s.cluster ? s.cluster->blocks.size() : 1;
    if (mask >> n) {
      s.fail("a TMA multicast mask (" + std::to_string(mask) +
             ") names a block outside the cluster of " + std::to_string(n) +
             " blocks");
      return;
    }
    for (size_t r = 0; r < n; ++r)
      if (mask & (1u << r))
        targets.push_back(s.cluster->blocks[r]);
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
  Scheduler *self = scheduler;
  for (Scheduler *target : targets) {
    scheduler = target;
    MBarrier *m = mbarrierAt(reinterpret_cast<int64_t>(target->smem) +
                             static_cast<int64_t>(mbarOffset));
    if (!m) {
      self->fail(target->failure);
      break;
    }
    // The hardware may write the box any time from now: no wgmma still in
    // flight may read it (the first thread of each warpgroup keeps the
    // ranges its groups read).
    for (size_t g = 0; g < target->warpGroups.size(); ++g) {
      const Fiber &f = target->fibers[g * 128];
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
        target->fail("a TMA copy overwrites shared memory that a "
                     "wgmma.mma_async still in flight reads (wgmma.wait_group "
                     "must retire it before the copy is issued)");
    }
    m->copies.push_back({offset, image});
    m->tx -= bytes;
    wakeMbarrierWaiters();
  }
  scheduler = self;
}

extern "C" void pallasc_emu_tma_load(int64_t dst, int64_t map, int64_t mbar,
                                     int32_t c0, int32_t c1, int32_t c2,
                                     int32_t c3, int32_t c4) {
  int32_t c[5] = {c0, c1, c2, c3, c4};
  tmaLoad(dst, map, mbar, c, 0);
}

/// cp.async.bulk.tensor...multicast::cluster: the box into every block of
/// `mask` (bit r: the block of rank r).
extern "C" void pallasc_emu_tma_load_multicast(int64_t dst, int64_t map,
                                               int64_t mbar, int32_t mask,
                                               int32_t c0, int32_t c1,
                                               int32_t c2, int32_t c3,
                                               int32_t c4) {
  int32_t c[5] = {c0, c1, c2, c3, c4};
  if ((mask & 0xffff) == 0) {
    scheduler->fail("a TMA multicast with an empty mask");
    return;
  }
  tmaLoad(dst, map, mbar, c, static_cast<uint32_t>(mask) & 0xffff);
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
  if (!swizzledBoxFits(s, t->boxCols() * t->elemBytes, offset, bytes, "source"))
    return;
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
    me.waitAddr = static_cast<uint64_t>(addr) -
                  reinterpret_cast<uint64_t>(s.smem);
    me.waitParity = parity & 1;
    swapcontext(&me.context, &s.main);
  }
}

/// mapa.shared::cluster: the address in the shared::cluster window of the
/// same offset in the shared memory of the cluster's block `rank`.
extern "C" int64_t pallasc_emu_mapa(int64_t addr, int32_t rank) {
  Scheduler &s = *scheduler;
  uint64_t offset =
      static_cast<uint64_t>(addr) - reinterpret_cast<uint64_t>(s.smem);
  if (!s.cluster || rank < 0 ||
      rank >= static_cast<int32_t>(s.cluster->blocks.size()) ||
      offset >= s.smemSize) {
    s.fail("mapa.shared::cluster of block rank " + std::to_string(rank) +
           " in a cluster of " +
           std::to_string(s.cluster ? s.cluster->blocks.size() : 1) +
           " blocks, or of an address outside the shared memory");
    return addr;
  }
  return static_cast<int64_t>(
      reinterpret_cast<uint64_t>(s.cluster->blocks[rank]->smem) + offset);
}

/// barrier.cluster.arrive: this thread's next arrival on the cluster
/// barrier.
extern "C" void pallasc_emu_cluster_arrive() {
  Scheduler &s = *scheduler;
  Fiber &me = s.fibers[s.current];
  if (me.clusterArrives > me.clusterWaits) {
    s.fail("barrier.cluster.arrive twice without barrier.cluster.wait "
           "between them");
    return;
  }
  ++me.clusterArrives;
  for (Scheduler *b : s.cluster->blocks)
    for (Fiber &f : b->fibers)
      if (f.waitingOn == kClusterWait)
        f.waitingOn = -1;
}

/// barrier.cluster.wait: returns once every thread of the cluster that has
/// not exited has made as many arrivals as this one.
extern "C" void pallasc_emu_cluster_wait() {
  Scheduler &s = *scheduler;
  int64_t phase = s.fibers[s.current].clusterArrives;
  if (phase <= s.fibers[s.current].clusterWaits) {
    s.fail("barrier.cluster.wait without a barrier.cluster.arrive before "
           "it");
    return;
  }
  while (true) {
    bool all = true;
    for (Scheduler *b : s.cluster->blocks)
      for (Fiber &f : b->fibers)
        all = all && (f.done || f.clusterArrives >= phase);
    if (all)
      break;
    Fiber &me = s.fibers[s.current];
    me.waitingOn = kClusterWait;
    swapcontext(&me.context, &s.main);
  }
  s.fibers[s.current].clusterWaits = phase;
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
  appendSymbols(symbols, {PALLASC_EMU_SYMBOL(pallasc_emu_mbar_init),
                          PALLASC_EMU_SYMBOL(pallasc_emu_mbar_arrive_tx),
                          PALLASC_EMU_SYMBOL(pallasc_emu_mbar_arrive),
                          PALLASC_EMU_SYMBOL(pallasc_emu_mbar_wait),
                          PALLASC_EMU_SYMBOL(pallasc_emu_tma_load),
                          PALLASC_EMU_SYMBOL(pallasc_emu_tma_load_multicast),
                          PALLASC_EMU_SYMBOL(pallasc_emu_tma_store),
                          PALLASC_EMU_SYMBOL(pallasc_emu_bulk_commit),
                          PALLASC_EMU_SYMBOL(pallasc_emu_bulk_wait),
                          PALLASC_EMU_SYMBOL(pallasc_emu_mapa),
                          PALLASC_EMU_SYMBOL(pallasc_emu_cluster_arrive),
                          PALLASC_EMU_SYMBOL(pallasc_emu_cluster_wait)});
}

} // namespace pallasc::runtime::emulator
