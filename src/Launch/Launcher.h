//===- Launcher.h - The runtime of generated launchers -----------*- C++ -*-===//
//
// `pallasc --emit=lib` writes `<name>.a`: the kernel's code and, per
// requested target, a typed entry point (declared by `--emit=header`'s
// `<name>.h`) that passes its arguments, the embedded launch plan and a
// table of the kernel's entry points to a function here. So every launcher
// runs the same, tested code: the C ABI below, over the launch library
// (HostGrid for `--target cpu`).
//
// Status codes (launcherStatuses()) are the values the generated header's
// `enum pallasc_status` gives; the message of a thread's last failure is
// `pallasc_last_error()`. Nothing here prints, exits, aborts or throws.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_LAUNCH_LAUNCHER_H
#define PALLASC_SRC_LAUNCH_LAUNCHER_H

#include "src/Launch/HostGrid.h"

#include <cstdint>
#include <string>

namespace pallasc::launch {

/// One status code of generated launchers.
struct LauncherStatus {
  const char *name; ///< the C enumerator, e.g. "PALLASC_ERROR_INVALID_ARGUMENT"
  int value;
  const char *meaning;
};

enum : int {
  kLauncherOk = 0,
  kLauncherInvalidArgument = 1,
  kLauncherRunFailed = 2,
  kLauncherInvalidPlan = 3,
  kLauncherNoDriver = 4,
  kLauncherNoDevice = 5,
  kLauncherNoFittingArch = 6,
  kLauncherLoadFailed = 7,
  kLauncherMisaligned = 8,
  kLauncherLaunchFailed = 9,
};

/// Every status, in value order.
const LauncherStatus *launcherStatuses(size_t &count);

/// Sets the calling thread's last error to "<entry>: <message>" and returns
/// `status` (the runtimes' common failure path).
int launcherFail(int status, const char *entry, const std::string &message);
/// Clears the calling thread's last error (at the start of a call).
void launcherClearError();

} // namespace pallasc::launch

extern "C" {

/// The message of the calling thread's last failed launcher call ("" when
/// the last call succeeded or there was none).
const char *pallasc_last_error(void);

/// Runs a `--target cpu` entry point: decodes `plan` (planSize bytes, see
/// HostPlanCodec.h) over `functions`, checks the operand pointers
/// (`operands`: every input, then every output, in the call's order) and
/// runs the grid on the host with `bounds` (one per dynamic grid bound).
/// `entry` names the entry point in messages. Returns a status code.
int pallasc_launcher_cpu_run(const char *entry, const char *plan,
                             int64_t planSize,
                             const pallasc::launch::PackedFn *functions,
                             int64_t numFunctions, void *const *operands,
                             int64_t numOperands, const int64_t *bounds,
                             int64_t numBounds);

/// The same for vmap's batch loop around the call: `operands` are the
/// batched arrays (the call's inputs batched at axis 0 or not at all, its
/// outputs stacked along a new leading axis), `boundArgs` (numBoundArgs,
/// one per dynamic grid bound) point at each bound's value, or at its axis
/// size values for a batched bound (gatherGpuBatchBounds), `batchLoop` (batchLoopSize)
/// the loop as encodeGpuBatchLoop (GpuLaunchArgs.h) writes it. Runs the grid
/// once per iteration b on slice b of each batched operand
/// (gpuBatchIteration, the arithmetic of the GPU launchers); a failure
/// names its iteration ("batch iteration b of N: ...").
int pallasc_launcher_cpu_run_batch(const char *entry, const char *plan,
                                   int64_t planSize,
                                   const pallasc::launch::PackedFn *functions,
                                   int64_t numFunctions,
                                   void *const *operands, int64_t numOperands,
                                   const int64_t *const *boundArgs,
                                   int64_t numBoundArgs,
                                   const int64_t *batchLoop,
                                   int64_t batchLoopSize);
} // extern "C"

namespace pallasc::launch {
/// The symbols generated entry points call.
constexpr const char *kCpuRunSymbol = "pallasc_launcher_cpu_run";
constexpr const char *kCpuRunBatchSymbol = "pallasc_launcher_cpu_run_batch";
} // namespace pallasc::launch

#endif // PALLASC_SRC_LAUNCH_LAUNCHER_H
