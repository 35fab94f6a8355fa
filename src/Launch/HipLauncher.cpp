//===- HipLauncher.cpp - The runtime of generated ROCm launchers --*- C++ -*-===//

#include "src/Launch/HipLauncher.h"

#include "src/Launch/GpuLaunchArgs.h"
#include "src/Launch/HipKernel.h"
#include "src/Launch/Launcher.h"

#include <memory>
#include <mutex>

namespace pallasc::launch {

//===----------------------------------------------------------------------===//
// Choosing an image
//===----------------------------------------------------------------------===//

bool parseAmdTargetId(std::string_view text, AmdTargetId &id) {
  AmdTargetId t;
  size_t colon = text.find(':');
  t.processor = std::string(text.substr(0, colon));
  if (t.processor.size() < 4 || t.processor.substr(0, 3) != "gfx")
    return false;
  while (colon != std::string_view::npos) {
    text.remove_prefix(colon + 1);
    colon = text.find(':');
    std::string_view feature = text.substr(0, colon);
    if (feature.size() < 2 || (feature.back() != '+' && feature.back() != '-'))
      return false;
    t.features.push_back({std::string(feature.substr(0, feature.size() - 1)),
                          feature.back() == '+'});
  }
  id = std::move(t);
  return true;
}

bool amdTargetRuns(const AmdTargetId &image, const AmdTargetId &device) {
  if (image.processor != device.processor)
    return false;
  for (const auto &[name, on] : image.features) {
    bool matched = false;
    for (const auto &[deviceName, deviceOn] : device.features)
      matched |= deviceName == name && deviceOn == on;
    if (!matched)
      return false;
  }
  return true;
}

int64_t selectRocmImage(const pallasc_gpu_image *images, int64_t numImages,
                        std::string_view device) {
  AmdTargetId target;
  if (!parseAmdTargetId(device, target))
    return -1;
  int64_t best = -1;
  size_t bestFeatures = 0;
  for (int64_t i = 0; i < numImages; ++i) {
    AmdTargetId image;
    if (!images[i].arch || !parseAmdTargetId(images[i].arch, image) ||
        !amdTargetRuns(image, target))
      continue;
    if (best < 0 || image.features.size() > bestFeatures) {
      best = i;
      bestFeatures = image.features.size();
    }
  }
  return best;
}

//===----------------------------------------------------------------------===//
// The runtime and the loaded modules
//===----------------------------------------------------------------------===//

namespace {

/// The kernels are per (image table, device ordinal): a module stays loaded
/// until the process ends (hipDeviceReset unloads it: a program that
/// resets a device must not launch on it again).
using LauncherState =
    GpuRuntimeState<HipRuntimeApi, loadHipRuntimeApi, HipKernel>;

LauncherState &state() { return LauncherState::get(); }

const char *hipFormat(int64_t) { return "HSACO"; }

/// The thread's current device.
GpuStatus currentDevice(const HipRuntimeApi &api, int &device) {
  hipError_t r = api.hipInit(0);
  if (r != hip::kSuccess)
    return GpuStatus::failure(GpuError::NoDevice,
                              "the HIP runtime cannot initialize (" +
                                  api.describe(r) + ")",
                              r);
  int count = 0;
  r = api.hipGetDeviceCount(&count);
  if (r != hip::kSuccess || count == 0)
    return GpuStatus::failure(
        GpuError::NoDevice,
        "no AMD GPU is available (" +
            (r != hip::kSuccess ? api.describe(r) : std::string("0 devices")) +
            ")",
        r);
  if ((r = api.hipGetDevice(&device)) != hip::kSuccess)
    return GpuStatus::failure(GpuError::DeviceSetup,
                              "hipGetDevice: " + api.describe(r), r);
  return GpuStatus::success();
}

} // namespace

void setRocmLauncherRuntimeForTesting(const HipRuntimeApi *api) {
  state().setOverride(api);
}

} // namespace pallasc::launch

using namespace pallasc::launch;

namespace {

/// The launch proper; `where` collects "which kernel, which arch" for the
/// message of a failure.
int runRocm(const GpuLauncherCall &call) {
  const char *entry = call.entry;
  const pallasc_gpu_image *images = call.images;
  std::string where = "rocm";
  auto fail = [&](GpuStatus s) {
    return launcherFail(gpuLauncherStatus(s.error), entry,
                        where + ": " + s.message);
  };
  std::vector<GpuLauncherLaunch> launches;
  if (int status = gpuLauncherLaunches(call, "ROCm", launches))
    return status;

  LauncherState &st = state();
  const HipRuntimeApi *apiPtr = nullptr;
  GpuKernelCache<HipKernel>::Loaded *loaded = nullptr;
  {
    // Runtime loading, device lookup and module loading are serialized:
    // each module is loaded once per device.
    std::lock_guard<std::mutex> lock(st.mutex);
    if (GpuStatus s = st.api(apiPtr); !s)
      return fail(s);
    const HipRuntimeApi &api = *apiPtr;
    int device = 0;
    if (GpuStatus s = currentDevice(api, device); !s)
      return fail(s);
    loaded = st.kernels.find(images, static_cast<unsigned long long>(device));
    if (!loaded) {
      std::string arch;
      if (hipError_t r = api.deviceArchName(device, arch); r != hip::kSuccess)
        return fail(GpuStatus::failure(
            GpuError::DeviceSetup,
            "cannot read the properties of HIP device " +
                std::to_string(device) + ": " + api.describe(r),
            r));
      std::string base = arch.substr(0, arch.find(':'));
      int64_t chosen = selectRocmImage(images, call.numImages, arch);
      if (chosen < 0)
        return launcherFail(
            kLauncherNoFittingArch, entry,
            "rocm: no embedded code object runs on this device (HIP device " +
                std::to_string(device) + ", " +
                (arch.empty() ? std::string("no gcnArchName") : arch) +
                "); embedded: " +
                gpuImageList(images, call.numImages, hipFormat) +
                (base.empty() ? std::string()
                              : "; compile with --target rocm:" + base));
      const pallasc_gpu_image &image = images[chosen];
      auto k = std::make_unique<GpuKernelCache<HipKernel>::Loaded>();
      k->arch = image.arch;
      k->format = hipFormat(image.kind);
      where = "rocm, HSACO " + k->arch + " on " + arch;
      std::string error;
      if (!gpuImageRecord(image, k->record, error))
        return launcherFail(kLauncherInvalidPlan, entry, where + ": " + error);
      if (GpuStatus s = loadHipKernel(api, image.data, k->record.entry,
                                      k->record.dynamicSharedBytes, image.kind,
                                      k->kernel);
          !s)
        return fail(s);
      loaded = st.kernels.insert(
          images, static_cast<unsigned long long>(device), std::move(k));
    }
  }
  const HipRuntimeApi &api = *apiPtr;
  const GpuLaunchRecord &record = loaded->record;
  where = "rocm, HSACO " + loaded->arch + ", @" + record.entry;

  // One launch per iteration of a batch loop (one for a direct call), in
  // order on the caller's stream. AMD kernels take no tensor maps: a record
  // with one is not a ROCm record, and packing it fails.
  return gpuLauncherLaunchEach(
      call, record, launches, where,
      [&](const GpuLauncherLaunch &l) -> GpuStatus {
        GpuLaunchGeometry geometry;
        GpuKernelArgs args;
        GpuStatus s = computeLaunchGeometry(record, l.gridSizes, geometry);
        if (s)
          s = args.pack(record, l.inputs, l.outputs, l.gridSizes, {},
                        l.symbols);
        if (s)
          s = launchHipKernel(api, loaded->kernel, geometry, args,
                              call.stream);
        return s;
      });
}

} // namespace

PALLASC_GPU_LAUNCHER_ENTRY_POINTS(rocm, pallasc_gpu_image, runRocm)
