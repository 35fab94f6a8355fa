//===- LauncherTestSupport.h - What the launcher tests share -----*- C++ -*-===//
//
// The pieces the CUDA and ROCm launcher tests build alike: the image table
// a generated library holds, a fake API installed for one test, the
// two-pointer kernel's launch record, and a run of its entry point whose
// failure is checked by status and message.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_TEST_LAUNCH_LAUNCHERTESTSUPPORT_H
#define PALLASC_TEST_LAUNCH_LAUNCHERTESTSUPPORT_H

#include "src/Launch/GpuLaunchArgs.h"
#include "src/Launch/GpuLauncher.h"
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

/// A vendor's `pallasc_launcher_<vendor>_run`.
using LauncherRun = int (*)(const char *, const pallasc_gpu_image *, int64_t,
                            const int64_t *, int64_t, void *const *, int64_t,
                            int64_t, const int64_t *, int64_t, void *);

/// Runs `entry` of the two-pointer kernel through `launcherRun` over a grid
/// of `bound` blocks.
inline int runTwoPointer(LauncherRun launcherRun, const char *entry,
                         LauncherImages &images, void *in, void *out,
                         int64_t bound, void *stream = nullptr) {
  int64_t grid[] = {-1};
  void *operands[] = {in, out};
  return launcherRun(entry, images.data(), images.size(), grid, 1, operands,
                     1, 1, &bound, 1, stream);
}

inline void *address(uintptr_t a) { return reinterpret_cast<void *>(a); }

/// Runs as runTwoPointer does and checks that it fails with `status` and
/// pallasc_last_error() `message`.
inline void checkTwoPointerFails(LauncherRun launcherRun, const char *entry,
                                 LauncherImages &images, uintptr_t in,
                                 uintptr_t out, int64_t bound, int status,
                                 const std::string &message) {
  CHECK(runTwoPointer(launcherRun, entry, images, address(in), address(out),
                      bound) == status);
  CHECK(std::string(pallasc_last_error()) == message);
}

} // namespace pallasc::test

#endif // PALLASC_TEST_LAUNCH_LAUNCHERTESTSUPPORT_H
