//===- Scheduler.h - The emulated GPU: blocks of fibers ---------*- C++ -*-===//
//
// The emulator's model of one thread block: its threads as fibers, their
// warps (or wavefronts) and warpgroups with the operand exchange areas of
// warp-wide instructions, barriers (block, warp, warpgroup), each thread's
// asynchronous copy groups and wgmma protocol state, mbarriers and the
// shared memory. The intrinsics (Intrinsics.h) act on the block that runs;
// runGrid runs the kernel's clusters one after another, the blocks of a
// cluster together (their threads interleaved at barriers), so that a
// remote mbarrier arrive or barrier.cluster synchronizes them.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_RUNTIME_GPUEMULATOR_SCHEDULER_H
#define PALLASC_SRC_RUNTIME_GPUEMULATOR_SCHEDULER_H

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <ucontext.h>
#include <utility>
#include <vector>

namespace pallasc::runtime::emulator {

/// The threads of a block run as fibers (ucontext) on the calling thread and
/// switch only at barriers: block barriers (`bar.sync`) and the implicit
/// warp-wide synchronization of shuffles, mma.sync and ldmatrix. When no
/// thread can run and some have not finished, a barrier is unreachable:
/// the emulation reports a deadlock instead of hanging.
struct Warp {
  uint32_t exchange[64];
  uint64_t addresses[64];
  /// A and B operand registers of each lane (mma.sync, MFMA).
  uint32_t a[64][4], b[64][4];
};

/// One thread's cp.async copies: performed when a wait.group retires their
/// group, not when issued, so a read before the wait sees stale memory.
struct AsyncCopy {
  uint64_t dst, src;
  int32_t bytes;
};

/// One TMA store (cp.async.bulk.tensor global.shared::cta): the box it
/// copies, read from shared memory when issued (row-major, unswizzled) and
/// written to global memory when its bulk group is waited for; `offset`
/// and `swizzled` are the shared memory it reads, checked unchanged then.
struct BulkStore {
  const void *map = nullptr; ///< EmuTensorMap
  int64_t coord[5] = {};      ///< the box's origin, outermost first
  uint64_t offset = 0;
  std::vector<char> swizzled;
};

struct Fiber {
  ucontext_t context;
  std::vector<char> stack;
  bool done = false;
  int waitingOn = -1; ///< barrier index, -1: runnable
  /// What a thread blocked in mbarrier.try_wait.parity waits for (the
  /// mbarrier's shared memory offset and the parity), for the report of a
  /// kernel that is stuck.
  uint64_t waitAddr = 0;
  int32_t waitParity = 0;
  /// barrier.cluster: the arrivals this thread made, the waits it passed.
  int64_t clusterArrives = 0, clusterWaits = 0;
  std::vector<AsyncCopy> open;                 ///< not yet committed
  std::vector<std::vector<AsyncCopy>> groups;  ///< committed, oldest first
  /// TMA stores (bulk async groups): not yet committed; committed, oldest
  /// first.
  std::vector<BulkStore> bulkOpen;
  std::deque<std::vector<BulkStore>> bulkGroups;
  /// wgmma protocol: a wgmma.fence since the last wait_group; wgmmas not
  /// yet committed; committed groups not yet waited for.
  bool wgmmaFenced = false;
  int wgmmaOpen = 0, wgmmaPending = 0;
  /// On the first thread of a warpgroup: the shared memory byte ranges
  /// [lo, hi) its wgmmas read, not yet committed and of each committed
  /// group not yet waited for (oldest first), so that a TMA copy into
  /// memory a group in flight still reads is an error.
  std::vector<std::pair<uint64_t, uint64_t>> wgmmaOpenReads;
  std::deque<std::vector<std::pair<uint64_t, uint64_t>>> wgmmaReads;
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

/// The hardware's named barriers (bar.sync ID, COUNT): 16 per block.
constexpr int kNamedBarriers = 16;

/// Fiber::waitingOn for a thread blocked in mbarrier.try_wait.parity.
constexpr int kMbarrierWait = 1 << 30;
/// Fiber::waitingOn for a thread blocked in barrier.cluster.wait.
constexpr int kClusterWait = (1 << 30) + 1;

struct Scheduler;

/// The blocks of the cluster being run, by rank (%cluster_ctarank, x
/// fastest): each block's shared memory is visible to the others through
/// the shared::cluster window (mapa).
struct Cluster {
  std::vector<Scheduler *> blocks;
};

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
  /// The barrier index of named barrier `id` (bar.sync id, count), after
  /// the warpgroups'; its count is set by its first arrival of a round.
  int namedBarrier(int id) const {
    return static_cast<int>(1 + warps.size() + warpGroups.size()) + id;
  }
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
  /// The kernel's packed arguments as this block sees them (its own shared
  /// memory descriptor last).
  void **args = nullptr;
  /// The cluster this block runs in, and its rank there.
  Cluster *cluster = nullptr;
  int rank = 0;
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

/// A thread's TMA stores still in flight when it finishes complete (the
/// hardware finishes them; TmaIntrinsics.cpp).
void finishBulkStores(Fiber &f);

/// The block being run (set by runGrid).
extern Scheduler *scheduler;

inline Warp &myWarp() {
  return scheduler->warps[scheduler->current / scheduler->warpSize];
}
inline int myLane() { return scheduler->current % scheduler->warpSize; }
/// The implicit synchronization of a warp-wide instruction.
inline void warpSync() {
  scheduler->arrive(1 + scheduler->current / scheduler->warpSize);
}

/// A JIT-compiled host function with packed arguments.
using PackedFn = void (*)(void **);

/// Runs `kernel` as every thread of every block of `grid` (x fastest), in
/// clusters of `cluster` blocks (which tile the grid), `threads` threads
/// per block in warps of `warpSize`. The block of rank r in its cluster
/// calls the kernel with `args[r]` and has the `smemSize` bytes at
/// `smem[r]` as its shared memory. Stops at the first stuck cluster (a
/// barrier or mbarrier nothing left can complete: the error names the
/// block, the thread and what it waits on) or protocol violation: false
/// with `error` set. With `reversed`, another legal schedule: the clusters
/// and the blocks of each run last first and, in each round, the runnable
/// threads are resumed last first.
bool runGrid(PackedFn kernel, const std::vector<void **> &args,
             const int64_t grid[3], const int64_t cluster[3],
             int64_t threads, int warpSize, const std::vector<char *> &smem,
             size_t smemSize, std::string &error, bool reversed = false);

} // namespace pallasc::runtime::emulator

#endif // PALLASC_SRC_RUNTIME_GPUEMULATOR_SCHEDULER_H
