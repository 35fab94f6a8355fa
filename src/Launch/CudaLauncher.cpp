//===- CudaLauncher.cpp - The runtime of generated CUDA launchers -*- C++ -*-===//

#include "src/Launch/CudaLauncher.h"

#include "src/Launch/CudaKernel.h"
#include "src/Launch/GpuLaunchArgs.h"
#include "src/Launch/Launcher.h"

#include <memory>
#include <mutex>
#include <utility>

namespace pallasc::launch {

//===----------------------------------------------------------------------===//
// Choosing an image
//===----------------------------------------------------------------------===//

bool parseCudaArch(std::string_view name, CudaArch &arch) {
  if (name.substr(0, 3) != "sm_" || name.size() < 5)
    return false;
  std::string_view digits = name.substr(3);
  CudaArch a;
  if (digits.back() == 'a') {
    a.archSpecific = true;
    digits.remove_suffix(1);
  }
  if (digits.size() < 2 || digits.size() > 4)
    return false;
  int value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9')
      return false;
    value = value * 10 + (c - '0');
  }
  a.major = value / 10;
  a.minor = value % 10;
  arch = a;
  return true;
}

int64_t selectCudaImage(const pallasc_cuda_image *images, int64_t numImages,
                        int major, int minor) {
  int64_t best = -1;
  int bestScore = -1;
  int device = major * 10 + minor;
  for (int64_t i = 0; i < numImages; ++i) {
    CudaArch a;
    if (!images[i].arch || !parseCudaArch(images[i].arch, a))
      continue;
    int value = a.major * 10 + a.minor;
    bool cubin = images[i].kind == kCudaImageCubin;
    bool fits = a.archSpecific ? value == device
                : cubin        ? a.major == major && a.minor <= minor
                               : value <= device;
    if (!fits)
      continue;
    int score = value * 4 + (a.archSpecific ? 2 : 0) + (cubin ? 1 : 0);
    if (score > bestScore) {
      best = i;
      bestScore = score;
    }
  }
  return best;
}

//===----------------------------------------------------------------------===//
// The driver and the loaded modules
//===----------------------------------------------------------------------===//

namespace {

/// The kernels are per (image table, context id): a module stays loaded
/// until the process ends (or its context is destroyed).
using LauncherState =
    GpuRuntimeState<CudaDriverApi, loadCudaDriverApi, CudaKernel>;

LauncherState &state() { return LauncherState::get(); }

const char *cudaFormat(int64_t kind) {
  return kind == kCudaImageCubin ? "cubin" : "PTX";
}

/// The current context (made the primary context of device 0 when the
/// thread has none) and its device's compute capability.
GpuStatus currentContext(const CudaDriverApi &api, unsigned long long &id,
                         int &major, int &minor) {
  CUresult r = api.cuInit(0);
  if (r != cuda::kSuccess)
    return GpuStatus::failure(GpuError::NoDevice,
                              "the CUDA driver cannot initialize (" +
                                  api.describe(r) + ")",
                              r);
  void *context = nullptr;
  if ((r = api.cuCtxGetCurrent(&context)) != cuda::kSuccess)
    return GpuStatus::failure(GpuError::DeviceSetup,
                              "cuCtxGetCurrent: " + api.describe(r), r);
  CUdevice device = 0;
  if (!context) {
    int count = 0;
    if (GpuStatus s = cudaDeviceCount(api, count); !s)
      return s;
    if ((r = api.cuDeviceGet(&device, 0)) != cuda::kSuccess ||
        (r = api.cuDevicePrimaryCtxRetain(&context, device)) !=
            cuda::kSuccess ||
        (r = api.cuCtxSetCurrent(context)) != cuda::kSuccess)
      return GpuStatus::failure(GpuError::DeviceSetup,
                                "cannot make the primary context of CUDA "
                                "device 0 current: " +
                                    api.describe(r),
                                r);
  } else if ((r = api.cuCtxGetDevice(&device)) != cuda::kSuccess) {
    return GpuStatus::failure(GpuError::DeviceSetup,
                              "cuCtxGetDevice: " + api.describe(r), r);
  }
  if ((r = api.cuCtxGetId(context, &id)) != cuda::kSuccess)
    return GpuStatus::failure(GpuError::DeviceSetup,
                              "cuCtxGetId: " + api.describe(r), r);
  if ((r = api.cuDeviceGetAttribute(
           &major, cuda::kAttrComputeCapabilityMajor, device)) !=
          cuda::kSuccess ||
      (r = api.cuDeviceGetAttribute(
           &minor, cuda::kAttrComputeCapabilityMinor, device)) !=
          cuda::kSuccess)
    return GpuStatus::failure(GpuError::DeviceSetup,
                              "cannot read the device's compute capability: " +
                                  api.describe(r),
                              r);
  return GpuStatus::success();
}

/// CUDA's part of runGpuLauncher: kernels are per context (id), chosen by
/// the context device's compute capability.
struct CudaVendor {
  using State = LauncherState;
  static constexpr const char *kName = "cuda";
  static constexpr const char *kLabel = "CUDA";
  struct Device {
    unsigned long long key = 0; ///< the context's id
    int major = 0, minor = 0;
  };

  static GpuStatus currentDevice(const CudaDriverApi &api, Device &device) {
    return currentContext(api, device.key, device.major, device.minor);
  }
  static GpuStatus deviceName(const CudaDriverApi &, const Device &device,
                              std::string &name) {
    name = cudaArchName(device.major, device.minor);
    return GpuStatus::success();
  }
  static int64_t select(const pallasc_cuda_image *images, int64_t numImages,
                        const Device &device, const std::string &) {
    return selectCudaImage(images, numImages, device.major, device.minor);
  }
  static std::string describeDevice(const Device &device,
                                    const std::string &name) {
    return "compute capability " + std::to_string(device.major) + "." +
           std::to_string(device.minor) + ", " + name;
  }
  static std::string compileHint(const Device &, const std::string &name) {
    return "; compile with --target cuda:" + name +
           " (or an older architecture, as PTX)";
  }
  static const char *format(int64_t kind) { return cudaFormat(kind); }
  static GpuStatus load(const CudaDriverApi &api,
                        const pallasc_cuda_image &image,
                        const GpuLaunchRecord &record, CudaKernel &kernel) {
    return loadCudaKernel(api, image.data, cudaFormat(image.kind), record.entry,
                          record.dynamicSharedBytes, kernel);
  }
  /// Each iteration's tensor maps are encoded over its own slices.
  static GpuStatus launch(const CudaDriverApi &api, const CudaKernel &kernel,
                          const GpuLaunchRecord &record,
                          const GpuLauncherLaunch &launch, void *stream) {
    return launchCudaIteration(api, kernel, record, launch, stream);
  }
};

} // namespace

void setCudaLauncherDriverForTesting(const CudaDriverApi *api) {
  state().setOverride(api);
}

GpuStatus launchCudaIteration(const CudaDriverApi &api,
                              const CudaKernel &kernel,
                              const GpuLaunchRecord &record,
                              const GpuLauncherLaunch &launch, void *stream) {
  const std::vector<uint64_t> &inputs = launch.inputs;
  GpuLaunchGeometry geometry;
  if (GpuStatus s = computeLaunchGeometry(record, launch.gridSizes, geometry);
      !s)
    return s;
  std::vector<GpuTensorMap> maps = tensorMapParams(record);
  std::vector<CudaTensorMapImage> encoded(maps.size());
  for (size_t i = 0; i < maps.size(); ++i) {
    uint64_t operand = 0;
    if (GpuStatus s =
            tensorMapOperand(maps[i], inputs, launch.outputs, operand);
        !s)
      return s;
    if (GpuStatus s = encodeCudaTensorMap(api, maps[i], operand, encoded[i]);
        !s)
      return s;
  }
  CUdeviceptr mapMemory = 0;
  std::vector<uint64_t> mapAddresses;
  if (!encoded.empty()) {
    size_t bytes = encoded.size() * sizeof(CudaTensorMapImage);
    CUresult r = api.cuMemAllocAsync(&mapMemory, bytes, stream);
    if (r != cuda::kSuccess)
      return GpuStatus::failure(
          GpuError::OutOfMemory,
          "cannot allocate the tensor maps: " + api.describe(r), r);
    r = api.cuMemcpyHtoDAsync(mapMemory, encoded.data(), bytes, stream);
    if (r != cuda::kSuccess) {
      api.cuMemFreeAsync(mapMemory, stream);
      return GpuStatus::failure(
          GpuError::CopyFailed,
          "cannot upload the tensor maps: " + api.describe(r), r);
    }
    for (size_t i = 0; i < encoded.size(); ++i)
      mapAddresses.push_back(mapMemory + i * sizeof(CudaTensorMapImage));
  }
  GpuKernelArgs args;
  GpuStatus s = args.pack(record, inputs, launch.outputs, launch.gridSizes,
                          mapAddresses, launch.symbols);
  if (s)
    s = launchCudaKernel(api, kernel, geometry, args, stream);
  if (mapMemory)
    api.cuMemFreeAsync(mapMemory, stream);
  return s;
}

} // namespace pallasc::launch

using namespace pallasc::launch;

PALLASC_GPU_LAUNCHER_ENTRY_POINTS(cuda, pallasc_cuda_image,
                                  runGpuLauncher<CudaVendor>)
