//===- LauncherTestSupport.h - What the launcher tests share -----*- C++
//-*-===//
//
// The pieces the CUDA and ROCm launcher tests build alike: the image table
// a generated library holds, a fake API installed for one test, the
// two-pointer kernel's launch record and batch loop, and runs of its entry
// point (direct or batched) whose failure is checked by status and message.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_TEST_LAUNCH_LAUNCHERTESTSUPPORT_H
#define PALLASC_TEST_LAUNCH_LAUNCHERTESTSUPPORT_H

#include "src/Launch/GpuLaunchArgs.h"
#include "src/Launch/GpuLauncher.h"
#include "src/Launch/HostGrid.h"
#include "src/Launch/Launcher.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace pallasc::test {

/// Images as a generated library holds them: each with its launch record
/// as encodeGpuLaunchRecord text.
struct LauncherImages {
  std::vector<std::string> records;
  std::vector<pallasc_gpu_image> table;
  /// Adds an image for `arch` of the vendor's `kind`, whose code object is
  /// the 6 bytes at `data`.
  void add(const char *arch, int64_t kind, const char *data,
           const launch::GpuLaunchRecord &record) {
    records.push_back(launch::encodeGpuLaunchRecord(record));
    table.push_back({arch, kind, data, 6, nullptr, 0});
  }
  const pallasc_gpu_image *data() {
    for (size_t i = 0; i < table.size(); ++i) {
      table[i].record = records[i].c_str();
      table[i].recordSize = static_cast<int64_t>(records[i].size());
    }
    return table.data();
  }
  int64_t size() const { return static_cast<int64_t>(table.size()); }
};

/// A fake API table installed as the launchers' for one test (`Set` is the
/// launcher's ...ForTesting hook; nullptr restores the real one).
template <typename Api, void (*Set)(const Api *)> struct InstalledApi {
  Api api;
  template <typename Fake> explicit InstalledApi(Fake &fake) : api(fake.api()) {
    Set(&api);
  }
  ~InstalledApi() { Set(nullptr); }
  InstalledApi(const InstalledApi &) = delete;
  InstalledApi &operator=(const InstalledApi &) = delete;
};

/// A two-pointer kernel (in, out) over a dynamic 1-D grid whose bound is
/// its third parameter, 256 threads.
inline launch::GpuLaunchRecord twoPointerRecord(int64_t warpSize,
                                                int64_t dynamicSharedBytes) {
  launch::GpuLaunchRecord r;
  r.entry = "add";
  r.gridAxes[0] = {0};
  r.block[0] = 256;
  r.warpSize = warpSize;
  r.dynamicSharedBytes = dynamicSharedBytes;
  launch::GpuKernelParam in, out, bound;
  in.kind = out.kind = launch::GpuKernelParam::Kind::Pointer;
  out.isOutput = true;
  bound.kind = launch::GpuKernelParam::Kind::GridBound;
  r.params = {in, out, bound};
  return r;
}

/// Makes `plan` symbolic over the one symbol `n`: a 1-D grid of
/// cdiv(n, `blockRows`) blocks, and every input and output [n].
inline void makeSymbolicRows(launch::HostCallPlan &plan,
                             const launch::HostSymbol &n, int64_t blockRows) {
  plan.symbolic.symbols = {n};
  launch::HostDimExpr grid;
  grid.coefficients = {1};
  grid.divisor = blockRows;
  grid.ceil = true;
  plan.symbolic.gridIsExpr = {true};
  plan.symbolic.grid = {grid};
  launch::HostDimExpr rows;
  rows.coefficients = {1};
  plan.symbolic.inputs.assign(plan.inputs.size(), {rows});
  plan.symbolic.outputs.assign(plan.outputs.size(), {rows});
}

/// A vendor's `pallasc_launcher_<vendor>_run`.
using LauncherRun = int (*)(const char *, const pallasc_gpu_image *, int64_t,
                            const int64_t *, int64_t, void *const *, int64_t,
                            int64_t, const int64_t *, int64_t, void *);
/// A vendor's `pallasc_launcher_<vendor>_run_batch`.
using LauncherRunBatch = int (*)(const char *, const pallasc_gpu_image *,
                                 int64_t, const int64_t *, int64_t,
                                 void *const *, int64_t, int64_t,
                                 const int64_t *const *, int64_t, void *,
                                 const int64_t *, int64_t);

inline void *address(uintptr_t a) { return reinterpret_cast<void *>(a); }

/// vmap's batch loop of `axisSize` iterations around the two-pointer
/// kernel: input 0 batched (`inStride` bytes per slice) or not (0), output 0
/// stacked (`outStride`), the bound batched or not.
inline std::vector<int64_t> twoPointerLoop(int64_t axisSize, uint64_t inStride,
                                           uint64_t outStride,
                                           bool batchedBound) {
  launch::GpuBatchLoop loop;
  loop.axisSize = axisSize;
  loop.inputStrides = {inStride};
  loop.outputStrides = {outStride};
  loop.batchedBounds = {batchedBound};
  return launch::encodeGpuBatchLoop(loop);
}

/// A generated entry point `name` of the two-pointer kernel, as it calls a
/// vendor's launcher: over a dynamic 1-D grid of `bound` blocks, or in a
/// batch loop.
struct TwoPointerEntry {
  const char *name;
  LauncherRun launcherRun;
  LauncherRunBatch launcherRunBatch;

  int run(LauncherImages &images, void *in, void *out, int64_t bound,
          void *stream = nullptr) const {
    int64_t grid[] = {-1};
    void *operands[] = {in, out};
    return launcherRun(name, images.data(), images.size(), grid, 1, operands, 1,
                       1, &bound, 1, stream);
  }

  /// Runs as run() does and checks that it fails with `status` and
  /// pallasc_last_error() `message`.
  void checkFails(LauncherImages &images, uintptr_t in, uintptr_t out,
                  int64_t bound, int status, const std::string &message) const {
    CHECK(run(images, address(in), address(out), bound) == status);
    CHECK(std::string(pallasc_last_error()) == message);
  }

  /// Runs on this machine's real API (the 6-byte images never load): when
  /// it has none, the launcher's status is NO_DRIVER and its message starts
  /// with `noDriver` and dlopen's reason; with one, the call only fails.
  void checkRealApi(LauncherImages &images, const char *noDriver) const {
    int status = run(images, address(0x1000), address(0x2000), 1);
    if (status == launch::kLauncherNoDriver)
      CHECK_THAT(pallasc_last_error(), Catch::StartsWith(noDriver));
    else
      CHECK(status != launch::kLauncherOk); // fake device pointers never run
  }

  /// What the entry point of a batch loop passes: the batched arrays, a
  /// pointer per bound (its value, or one per iteration), the loop.
  int runBatch(LauncherImages &images, void *in, void *out,
               const int64_t *bound, const std::vector<int64_t> &loop,
               void *stream = nullptr) const {
    int64_t grid[] = {-1};
    void *operands[] = {in, out};
    const int64_t *bounds[] = {bound};
    // An empty loop: none passed (a null pointer).
    return launcherRunBatch(name, images.data(), images.size(), grid, 1,
                            operands, 1, 1, bounds, 1, stream,
                            loop.empty() ? nullptr : loop.data(),
                            static_cast<int64_t>(loop.size()));
  }

  /// Runs as runBatch() does (arrays at 0x10000 and 0x80000) and checks that
  /// it fails with `status` and pallasc_last_error() `message`.
  void checkBatchFails(LauncherImages &images, const int64_t *bound,
                       const std::vector<int64_t> &loop, int status,
                       const std::string &message,
                       uintptr_t in = 0x10000) const {
    CHECK(runBatch(images, address(in), address(0x80000), bound, loop) ==
          status);
    CHECK(std::string(pallasc_last_error()) == message);
  }
};

} // namespace pallasc::test

#endif // PALLASC_TEST_LAUNCH_LAUNCHERTESTSUPPORT_H
