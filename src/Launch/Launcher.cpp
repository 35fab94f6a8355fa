//===- Launcher.cpp - The runtime of generated launchers ---------*- C++ -*-===//

#include "src/Launch/Launcher.h"

#include "src/Launch/HostPlanCodec.h"

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
     "an operand's address is not aligned as the kernel requires (TMA: 16 "
     "bytes)"},
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
    std::string error;
    if (!plan || planSize < 0 || numFunctions < 0 ||
        !decodeHostCallPlan(std::string_view(plan, planSize), functions,
                            static_cast<size_t>(numFunctions), host, error))
      return fail(kLauncherInvalidPlan, entry,
                  error.empty() ? "no launch plan" : error);
    size_t numIn = host.inputs.size(), numOut = host.outputs.size();
    if (numOperands != static_cast<int64_t>(numIn + numOut) ||
        numBounds != host.numDynamicBounds())
      return fail(kLauncherInvalidPlan, entry,
                  "the entry point passes " + std::to_string(numOperands) +
                      " operands and " + std::to_string(numBounds) +
                      " grid bounds; its plan has " +
                      std::to_string(numIn + numOut) + " and " +
                      std::to_string(host.numDynamicBounds()));
    std::vector<void *> inputs, outputs;
    for (size_t k = 0; k < numIn + numOut; ++k) {
      bool isOut = k >= numIn;
      size_t index = isOut ? k - numIn : k;
      const HostArrayType &type = isOut ? host.outputs[index] : host.inputs[index];
      uint64_t bytes = 0;
      if (!operands[k] && (!type.byteSize(bytes) || bytes != 0))
        return fail(kLauncherInvalidArgument, entry,
                    std::string(isOut ? "output " : "input ") +
                        std::to_string(index) + " (" + type.describe() +
                        ") is a null pointer");
      (isOut ? outputs : inputs).push_back(operands[k]);
    }
    HostGridOptions options;
    if (numBounds > 0)
      options.dynamicBounds.assign(bounds, bounds + numBounds);
    for (size_t i = 0; i < options.dynamicBounds.size(); ++i)
      if (options.dynamicBounds[i] < 0 ||
          options.dynamicBounds[i] > INT32_MAX)
        return fail(kLauncherInvalidArgument, entry,
                    "dynamic grid bound " + std::to_string(i) + " is " +
                        std::to_string(options.dynamicBounds[i]) +
                        "; bounds must be in [0, 2^31)");
    if (!runHostGrid(host, inputs, /*inputsWritable=*/false, outputs, options,
                     error))
      return fail(kLauncherRunFailed, entry, error);
    return kLauncherOk;
  } catch (const std::bad_alloc &) {
    return fail(kLauncherRunFailed, entry, "out of host memory");
  }
}
