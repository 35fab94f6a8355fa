//===- Scheduler.cpp - The emulated GPU: blocks of fibers -------*- C++ -*-===//

#include "src/Runtime/GpuEmulator/Scheduler.h"

#include <cstring>
#include <memory>

namespace pallasc::runtime::emulator {

Scheduler *scheduler = nullptr;

namespace {

constexpr size_t kStack = 1 << 20;

/// Wakes the threads of `cluster` blocked in barrier.cluster.wait (they
/// check their condition again).
void wakeClusterWaiters(Cluster &cluster) {
  for (Scheduler *s : cluster.blocks)
    for (Fiber &f : s->fibers)
      if (f.waitingOn == kClusterWait)
        f.waitingOn = -1;
}

/// Sets up `sched` for block `threads` threads of `warpSize`.
void initBlock(Scheduler &sched, int64_t threads, int warpSize) {
  sched.fibers.resize(threads);
  sched.warpSize = warpSize;
  sched.warps.resize((threads + warpSize - 1) / warpSize);
  sched.warpGroups.resize(threads / 128);
  sched.barriers.resize(1 + sched.warps.size() + sched.warpGroups.size() +
                        kNamedBarriers);
  sched.barriers[0].count = static_cast<int>(threads);
  for (size_t w = 0; w < sched.warps.size(); ++w)
    sched.barriers[1 + w].count = warpSize;
  for (size_t g = 0; g < sched.warpGroups.size(); ++g)
    sched.barriers[1 + sched.warps.size() + g].count = 128;
}

/// What the first blocked thread of a stuck cluster waits on.
std::string stuckReport(const Cluster &cluster) {
  for (const Scheduler *s : cluster.blocks)
    for (size_t t = 0; t < s->fibers.size(); ++t) {
      const Fiber &f = s->fibers[t];
      if (f.done || f.waitingOn < 0)
        continue;
      std::string who = "block (" + std::to_string(s->blockId[0]) + ", " +
                        std::to_string(s->blockId[1]) + ", " +
                        std::to_string(s->blockId[2]) + ") thread " +
                        std::to_string(t);
      if (f.waitingOn == kMbarrierWait) {
        std::string state;
        auto it = s->mbarriers.find(f.waitAddr);
        if (it != s->mbarriers.end())
          state = ", " + std::to_string(it->second.pending) + " of " +
                  std::to_string(it->second.expected) +
                  " arrivals missing, " + std::to_string(it->second.tx) +
                  " transaction bytes pending";
        return who + " waits on the mbarrier at shared memory offset " +
               std::to_string(f.waitAddr) + " (parity " +
               std::to_string(f.waitParity) + state +
               ") and no thread left can arrive on it";
      }
      if (f.waitingOn == kClusterWait)
        return who + " waits in barrier.cluster.wait for a barrier.cluster."
                     "arrive that a thread of its cluster never makes";
      return who + " waits on a barrier (bar.sync, or a warp or warpgroup "
                   "instruction) that not every thread reaches";
    }
  return "no thread can run";
}

} // namespace

bool runGrid(PackedFn kernel, const std::vector<void **> &args,
             const int64_t grid[3], const int64_t clusterShape[3],
             int64_t threads, int warpSize, const std::vector<char *> &smem,
             size_t smemSize, std::string &error, bool reversed) {
  int64_t clusterBlocks = clusterShape[0] * clusterShape[1] * clusterShape[2];
  if (static_cast<int64_t>(args.size()) != clusterBlocks ||
      static_cast<int64_t>(smem.size()) != clusterBlocks) {
    error = "the emulator was given arguments for the wrong cluster size";
    return false;
  }
  for (int d = 0; d < 3; ++d)
    if (clusterShape[d] <= 0 || grid[d] % clusterShape[d]) {
      error = "the grid is not a whole number of clusters";
      return false;
    }
  Cluster cluster;
  std::vector<std::unique_ptr<Scheduler>> blocks;
  for (int64_t r = 0; r < clusterBlocks; ++r) {
    blocks.push_back(std::make_unique<Scheduler>());
    Scheduler &sched = *blocks.back();
    initBlock(sched, threads, warpSize);
    sched.smem = smem[r];
    sched.smemSize = smemSize;
    sched.args = args[r];
    sched.cluster = &cluster;
    sched.rank = static_cast<int>(r);
    cluster.blocks.push_back(&sched);
  }
  static thread_local PackedFn entry;
  entry = kernel;
  auto trampoline = +[](int index) {
    entry(scheduler->args);
    Fiber &self = scheduler->fibers[index];
    if (self.wgmmaOpen || self.wgmmaPending)
      scheduler->fail("a thread finished with wgmma.mma_async operations "
                      "not waited for (wgmma.commit_group / wait_group)");
    finishBulkStores(self);
    self.done = true;
    // An exited thread no longer holds back barrier.cluster.wait.
    wakeClusterWaiters(*scheduler->cluster);
    swapcontext(&self.context, &scheduler->main);
  };
  auto failed = [&]() -> Scheduler * {
    for (auto &b : blocks)
      if (!b->failure.empty())
        return b.get();
    return nullptr;
  };
  bool stuck = false;
  int64_t clusters[3] = {grid[0] / clusterShape[0], grid[1] / clusterShape[1],
                         grid[2] / clusterShape[2]};
  int64_t numClusters = clusters[0] * clusters[1] * clusters[2];
  for (int64_t i = 0; i < numClusters && !stuck && !failed(); ++i) {
    int64_t c = reversed ? numClusters - 1 - i : i;
    int64_t cid[3] = {c % clusters[0], (c / clusters[0]) % clusters[1],
                      c / (clusters[0] * clusters[1])};
    for (int64_t r = 0; r < clusterBlocks; ++r) {
      Scheduler &sched = *blocks[r];
      // Unwritten shared memory reads as NaN / all ones.
      std::memset(sched.smem, 0xff, smemSize);
      int64_t within[3] = {r % clusterShape[0],
                           (r / clusterShape[0]) % clusterShape[1],
                           r / (clusterShape[0] * clusterShape[1])};
      for (int d = 0; d < 3; ++d)
        sched.blockId[d] = cid[d] * clusterShape[d] + within[d];
      for (int64_t t = 0; t < threads; ++t) {
        Fiber &f = sched.fibers[t];
        f.stack.resize(kStack);
        f.done = false;
        f.waitingOn = -1;
        f.open.clear();
        f.groups.clear();
        f.bulkOpen.clear();
        f.bulkGroups.clear();
        f.wgmmaFenced = false;
        f.wgmmaOpen = f.wgmmaPending = 0;
        f.wgmmaOpenReads.clear();
        f.wgmmaReads.clear();
        f.clusterArrives = f.clusterWaits = 0;
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
    }
    while (!failed()) {
      bool ran = false, finished = true;
      for (int64_t k = 0; k < clusterBlocks; ++k) {
        Scheduler &sched = *blocks[reversed ? clusterBlocks - 1 - k : k];
        scheduler = &sched;
        for (int64_t j = 0; j < threads; ++j) {
          int64_t t = reversed ? threads - 1 - j : j;
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
      }
      if (finished)
        break;
      if (!ran) {
        stuck = true;
        break;
      }
    }
  }
  scheduler = nullptr;
  if (Scheduler *s = failed()) {
    error = s->failure;
    return false;
  }
  if (stuck) {
    error = "the emulated kernel is stuck: " + stuckReport(cluster);
    return false;
  }
  return true;
}

} // namespace pallasc::runtime::emulator
