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

/// ROCm's part of runGpuLauncher: kernels are per device ordinal, chosen by
/// the device's gcnArchName.
struct RocmVendor {
  using State = LauncherState;
  static constexpr const char *kName = "rocm";
  static constexpr const char *kLabel = "ROCm";
  struct Device {
    unsigned long long key = 0; ///< the device ordinal
  };

  static GpuStatus currentDevice(const HipRuntimeApi &api, Device &device) {
    int ordinal = 0;
    GpuStatus s = pallasc::launch::currentDevice(api, ordinal);
    device.key = static_cast<unsigned long long>(ordinal);
    return s;
  }
  static GpuStatus deviceName(const HipRuntimeApi &api, const Device &device,
                              std::string &name) {
    int ordinal = static_cast<int>(device.key);
    if (hipError_t r = api.deviceArchName(ordinal, name); r != hip::kSuccess)
      return GpuStatus::failure(GpuError::DeviceSetup,
                                "cannot read the properties of HIP device " +
                                    std::to_string(ordinal) + ": " +
                                    api.describe(r),
                                r);
    return GpuStatus::success();
  }
  static int64_t select(const pallasc_gpu_image *images, int64_t numImages,
                        const Device &, const std::string &name) {
    return selectRocmImage(images, numImages, name);
  }
  static std::string describeDevice(const Device &device,
                                    const std::string &name) {
    return "HIP device " + std::to_string(device.key) + ", " +
           (name.empty() ? std::string("no gcnArchName") : name);
  }
  static std::string compileHint(const Device &, const std::string &name) {
    std::string base = name.substr(0, name.find(':'));
    return base.empty() ? std::string()
                        : "; compile with --target rocm:" + base;
  }
  static const char *format(int64_t kind) { return hipFormat(kind); }
  static GpuStatus load(const HipRuntimeApi &api,
                        const pallasc_gpu_image &image,
                        const GpuLaunchRecord &record, HipKernel &kernel) {
    return loadHipKernel(api, image.data, record.entry,
                         record.dynamicSharedBytes, image.kind, kernel);
  }
  /// AMD kernels take no tensor maps: a record with one is not a ROCm
  /// record, and packing it fails.
  static GpuStatus launch(const HipRuntimeApi &api, const HipKernel &kernel,
                          const GpuLaunchRecord &record,
                          const GpuLauncherLaunch &l, void *stream) {
    GpuLaunchGeometry geometry;
    GpuKernelArgs args;
    GpuStatus s = computeLaunchGeometry(record, l.gridSizes, geometry);
    if (s)
      s = args.pack(record, l.inputs, l.outputs, l.gridSizes, {}, l.symbols);
    if (s)
      s = launchHipKernel(api, kernel, geometry, args, stream);
    return s;
  }
};

} // namespace

void setRocmLauncherRuntimeForTesting(const HipRuntimeApi *api) {
  state().setOverride(api);
}

} // namespace pallasc::launch

using namespace pallasc::launch;

PALLASC_GPU_LAUNCHER_ENTRY_POINTS(rocm, pallasc_gpu_image,
                                  runGpuLauncher<RocmVendor>)
