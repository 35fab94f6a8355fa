//===- Scheduler.cpp - The emulated GPU: blocks of fibers -------*- C++ -*-===//

#include "src/Runtime/GpuEmulator/Scheduler.h"

#include <cstring>

namespace pallasc::runtime::emulator {

Scheduler *scheduler = nullptr;

bool runGrid(PackedFn kernel, void **args, const int64_t grid[3],
             int64_t threads, int warpSize, char *smem, size_t smemSize,
             std::string &error, bool reversed) {
  Scheduler sched;
  scheduler = &sched;
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
  sched.smem = smem;
  sched.smemSize = smemSize;
  static thread_local PackedFn entry;
  static thread_local void **entryArgs;
  entry = kernel;
  entryArgs = args;
  auto trampoline = +[](int index) {
    entry(entryArgs);
    Fiber &self = scheduler->fibers[index];
    if (self.wgmmaOpen || self.wgmmaPending)
      scheduler->fail("a thread finished with wgmma.mma_async operations "
                      "not waited for (wgmma.commit_group / wait_group)");
    finishBulkStores(self);
    scheduler->fibers[index].done = true;
    swapcontext(&scheduler->fibers[index].context, &scheduler->main);
  };
  constexpr size_t kStack = 1 << 20;
  bool deadlock = false;
  int64_t numBlocks = grid[0] * grid[1] * grid[2];
  for (int64_t i = 0;
       i < numBlocks && !deadlock && sched.failure.empty(); ++i) {
    int64_t b = reversed ? numBlocks - 1 - i : i;
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
      f.bulkOpen.clear();
      f.bulkGroups.clear();
      f.wgmmaFenced = false;
      f.wgmmaOpen = f.wgmmaPending = 0;
      f.wgmmaOpenReads.clear();
      f.wgmmaReads.clear();
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
      for (int64_t i = 0; i < threads; ++i) {
        int64_t t = reversed ? threads - 1 - i : i;
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

} // namespace pallasc::runtime::emulator
