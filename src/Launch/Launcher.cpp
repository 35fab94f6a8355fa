//===- Launcher.cpp - The runtime of generated launchers ---------*- C++ -*-===//

#include "src/Launch/Launcher.h"

#include "src/Launch/GpuLaunchArgs.h"
#include "src/Launch/HostPlanCodec.h"

#include <climits>
#include <new>
#include <string>
#include <vector>

namespace pallasc::launch {

namespace {

constexpr LauncherStatus kStatuses[] = {
    {"PALLASC_OK", kLauncherOk, "success"},
    {"PALLASC_ERROR_INVALID_ARGUMENT", kLauncherInvalidArgument,
     "an argument is invalid (a null operand, a grid bound out of range)"},
    {"PALLASC_ERROR_RUN_FAILED", kLauncherRunFailed,
     "the kernel could not run (memory, an index map out of range)"},
    {"PALLASC_ERROR_INVALID_PLAN", kLauncherInvalidPlan,
     "the embedded launch plan does not match the runtime library"},
    {"PALLASC_ERROR_NO_DRIVER", kLauncherNoDriver,
     "the GPU driver cannot be loaded (or is too old)"},
    {"PALLASC_ERROR_NO_DEVICE", kLauncherNoDevice,
     "no GPU device or context is available"},
    {"PALLASC_ERROR_NO_FITTING_ARCH", kLauncherNoFittingArch,
     "no embedded code object runs on the current device's architecture"},
    {"PALLASC_ERROR_LOAD_FAILED", kLauncherLoadFailed,
     "the driver cannot load the kernel (or grant its shared memory)"},
    {"PALLASC_ERROR_MISALIGNED", kLauncherMisaligned,
     "an operand's address is not aligned as the kernel requires (its "
     "pointer_alignment, 16 bytes; TMA: 16 bytes)"},
    {"PALLASC_ERROR_LAUNCH_FAILED", kLauncherLaunchFailed,
     "the driver refused the launch (or a step before it)"},
};

thread_local std::string lastError;

} // namespace

int launcherFail(int status, const char *entry, const std::string &message) {
  try {
    lastError = std::string(entry ? entry : "pallasc launcher") + ": " +
                message;
  } catch (const std::bad_alloc &) {
    lastError.clear();
  }
  return status;
}

void launcherClearError() { lastError.clear(); }

namespace {
int fail(int status, const char *entry, const std::string &message) {
  return launcherFail(status, entry, message);
}
} // namespace

const LauncherStatus *launcherStatuses(size_t &count) {
  count = sizeof(kStatuses) / sizeof(kStatuses[0]);
  return kStatuses;
}

} // namespace pallasc::launch

using namespace pallasc::launch;

extern "C" const char *pallasc_last_error(void) { return lastError.c_str(); }

namespace {

/// Decodes a `--target cpu` entry point's plan and checks its counts
/// (`numBounds` < 0: the bounds are a batch loop's, checked against it).
int decodeCpuPlan(const char *entry, const char *plan, int64_t planSize,
                  const PackedFn *functions, int64_t numFunctions,
                  int64_t numOperands, int64_t numBounds, HostCallPlan &host) {
  std::string error;
  if (!plan || planSize < 0 || numFunctions < 0 ||
      !decodeHostCallPlan(std::string_view(plan, planSize), functions,
                          static_cast<size_t>(numFunctions), host, error))
    return fail(kLauncherInvalidPlan, entry,
                error.empty() ? "no launch plan" : error);
  size_t numIn = host.inputs.size(), numOut = host.outputs.size();
  // A symbolic call's symbol values follow its dynamic bounds.
  int64_t numValues = host.numDynamicBounds() +
                      static_cast<int64_t>(host.symbolic.symbols.size());
  if (numBounds >= 0 && (numOperands != static_cast<int64_t>(numIn + numOut) ||
                         numBounds != numValues))
    return fail(kLauncherInvalidPlan, entry,
                "the entry point passes " + std::to_string(numOperands) +
                    " operands and " + std::to_string(numBounds) +
                    " grid bounds; its plan has " +
                    std::to_string(numIn + numOut) + " and " +
                    std::to_string(numValues));
  if (numOperands != static_cast<int64_t>(numIn + numOut))
    return fail(kLauncherInvalidPlan, entry,
                "the entry point passes " + std::to_string(numOperands) +
                    " operands; its plan has " +
                    std::to_string(numIn + numOut));
  return kLauncherOk;
}

/// Runs the grid of `host` once on `operands` (inputs then outputs) with
/// `bounds`; `where` ("batch iteration b of N: " or "") starts the message
/// of a failure.
int runCpuGrid(const char *entry, const HostCallPlan &host,
               void *const *operands, const int64_t *bounds,
               int64_t numBounds, const std::string &where) {
  size_t numIn = host.inputs.size(), numOut = host.outputs.size();
  if (numBounds != host.numDynamicBounds())
    return fail(kLauncherInvalidPlan, entry,
                "the entry point passes " + std::to_string(numBounds) +
                    " grid bounds; its plan has " +
                    std::to_string(host.numDynamicBounds()));
  std::vector<void *> inputs, outputs;
  for (size_t k = 0; k < numIn + numOut; ++k) {
    bool isOut = k >= numIn;
    size_t index = isOut ? k - numIn : k;
    const HostArrayType &type = isOut ? host.outputs[index] : host.inputs[index];
    uint64_t bytes = 0;
    if (!operands[k] && (!type.byteSize(bytes) || bytes != 0))
      return fail(kLauncherInvalidArgument, entry,
                  where + (isOut ? "output " : "input ") +
                      std::to_string(index) + " (" + type.describe() +
                      ") is a null pointer");
    (isOut ? outputs : inputs).push_back(operands[k]);
  }
  HostGridOptions options;
  if (numBounds > 0)
    options.dynamicBounds.assign(bounds, bounds + numBounds);
  for (size_t i = 0; i < options.dynamicBounds.size(); ++i)
    if (options.dynamicBounds[i] < 0 || options.dynamicBounds[i] > INT32_MAX)
      return fail(kLauncherInvalidArgument, entry,
                  where + "dynamic grid bound " + std::to_string(i) + " is " +
                      std::to_string(options.dynamicBounds[i]) +
                      "; bounds must be in [0, 2^31)");
  std::string error;
  if (!runHostGrid(host, inputs, /*inputsWritable=*/false, outputs, options,
                   error))
    return fail(kLauncherRunFailed, entry, where + error);
  return kLauncherOk;
}

} // namespace

extern "C" int pallasc_launcher_cpu_run(const char *entry, const char *plan,
                                        int64_t planSize,
                                        const PackedFn *functions,
                                        int64_t numFunctions,
                                        void *const *operands,
                                        int64_t numOperands,
                                        const int64_t *bounds,
                                        int64_t numBounds) {
  lastError.clear();
  // The grid walk allocates; nothing may escape into C callers.
  try {
    HostCallPlan host;
    if (int status = decodeCpuPlan(entry, plan, planSize, functions,
                                   numFunctions, numOperands, numBounds, host))
      return status;
    // A symbolic call: its symbols' values (after the dynamic bounds) are
    // checked and give the shapes and the grid before anything runs.
    int64_t numSymbols = static_cast<int64_t>(host.symbolic.symbols.size());
    if (numSymbols > 0) {
      numBounds -= numSymbols;
      std::vector<int64_t> values(bounds + numBounds,
                                  bounds + numBounds + numSymbols);
      std::string error;
      if (!instantiateSymbols(host, values, error))
        return fail(kLauncherInvalidArgument, entry, error);
    }
    return runCpuGrid(entry, host, operands, bounds, numBounds, "");
  } catch (const std::bad_alloc &) {
    return fail(kLauncherRunFailed, entry, "out of host memory");
  }
}

extern "C" int pallasc_launcher_cpu_run_batch(
    const char *entry, const char *plan, int64_t planSize,
    const PackedFn *functions, int64_t numFunctions, void *const *operands,
    int64_t numOperands, const int64_t *const *boundArgs,
    int64_t numBoundArgs, const int64_t *batchLoop, int64_t batchLoopSize) {
  lastError.clear();
  try {
    HostCallPlan host;
    if (int status = decodeCpuPlan(entry, plan, planSize, functions,
                                   numFunctions, numOperands, -1, host))
      return status;
    int64_t numIn = static_cast<int64_t>(host.inputs.size());
    int64_t numOut = static_cast<int64_t>(host.outputs.size());
    GpuBatchLoop loop;
    if (GpuStatus s = decodeGpuBatchLoop(batchLoop, batchLoopSize, numIn,
                                         numOut, host.numDynamicBounds(),
                                         loop);
        !s)
      return fail(kLauncherInvalidPlan, entry, s.message);
    GpuBatchOperands all, iteration;
    bool badArgument = false;
    std::string error;
    if (!gatherGpuBatchBounds(loop, boundArgs, numBoundArgs, all.bounds,
                              badArgument, error))
      return fail(badArgument ? kLauncherInvalidArgument : kLauncherInvalidPlan,
                  entry, error);
    for (int64_t k = 0; k < numIn + numOut; ++k)
      (k < numIn ? all.inputs : all.outputs)
          .push_back(reinterpret_cast<uintptr_t>(operands[k]));
    // A null operand fails in iteration 0, before anything ran.
    for (int64_t b = 0; b < loop.axisSize; ++b) {
      std::string where = "batch iteration " + std::to_string(b) + " of " +
                          std::to_string(loop.axisSize) + ": ";
      if (GpuStatus s = gpuBatchIteration(loop, b, all, iteration); !s)
        return fail(kLauncherInvalidArgument, entry, where + s.message);
      std::vector<void *> iterOperands;
      for (uint64_t a : iteration.inputs)
        iterOperands.push_back(reinterpret_cast<void *>(a));
      for (uint64_t a : iteration.outputs)
        iterOperands.push_back(reinterpret_cast<void *>(a));
      if (int status = runCpuGrid(
              entry, host, iterOperands.data(), iteration.bounds.data(),
              static_cast<int64_t>(iteration.bounds.size()), where))
        return status;
    }
    return kLauncherOk;
  } catch (const std::bad_alloc &) {
    return fail(kLauncherRunFailed, entry, "out of host memory");
  }
}
