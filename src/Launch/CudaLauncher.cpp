//===- CudaLauncher.cpp - The runtime of generated CUDA launchers -*- C++ -*-===//

#include "src/Launch/CudaLauncher.h"

#include "src/Launch/CudaLaunch.h"
#include "src/Launch/GpuLaunch.h"
#include "src/Launch/Launcher.h"

#include <climits>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <sstream>
#include <system_error>
#include <utility>

namespace pallasc::launch {

//===----------------------------------------------------------------------===//
// The record as text
//===----------------------------------------------------------------------===//

namespace {
constexpr const char *kRecordMagic = "pallasc-gpu-record-1";
} // namespace

std::string encodeGpuLaunchRecord(const GpuLaunchRecord &r) {
  std::ostringstream os;
  os << kRecordMagic << ' ' << r.entry;
  for (const std::vector<int64_t> &axes : r.gridAxes) {
    os << ' ' << axes.size();
    for (int64_t a : axes)
      os << ' ' << a;
  }
  os << ' ' << r.block[0] << ' ' << r.block[1] << ' ' << r.block[2] << ' '
     << r.warpSize << ' ' << r.dynamicSharedBytes << ' ' << r.params.size();
  for (const GpuKernelParam &p : r.params) {
    switch (p.kind) {
    case GpuKernelParam::Kind::Pointer:
      os << " P " << (p.isOutput ? 1 : 0) << ' ' << p.index;
      break;
    case GpuKernelParam::Kind::GridBound:
      os << " G " << p.axis;
      break;
    case GpuKernelParam::Kind::TensorMap: {
      const GpuTensorMap &m = p.tensorMap;
      os << " T " << m.input << ' ' << (m.bf16 ? 1 : 0) << ' '
         << m.globalShape[0] << ' ' << m.globalShape[1] << ' ' << m.boxShape[0]
         << ' ' << m.boxShape[1];
      break;
    }
    }
  }
  return os.str();
}

bool decodeGpuLaunchRecord(std::string_view text, GpuLaunchRecord &record,
                           std::string &error) {
  std::istringstream is{std::string(text)};
  GpuLaunchRecord r;
  std::string magic;
  auto bad = [&](const std::string &what) {
    error = "the embedded launch record is malformed (" + what + ")";
    return false;
  };
  if (!(is >> magic) || magic != kRecordMagic)
    return bad("expected '" + std::string(kRecordMagic) + "'");
  if (!(is >> r.entry))
    return bad("no kernel name");
  // Counts are bounded so that hostile text cannot allocate without bound.
  constexpr size_t kMaxCount = 4096;
  for (std::vector<int64_t> &axes : r.gridAxes) {
    size_t n = 0;
    if (!(is >> n) || n > kMaxCount)
      return bad("grid axes");
    axes.resize(n);
    for (int64_t &a : axes)
      if (!(is >> a))
        return bad("grid axes");
  }
  size_t numParams = 0;
  if (!(is >> r.block[0] >> r.block[1] >> r.block[2] >> r.warpSize >>
        r.dynamicSharedBytes >> numParams) ||
      numParams > kMaxCount)
    return bad("block, shared memory or parameter count");
  for (size_t i = 0; i < numParams; ++i) {
    GpuKernelParam p;
    std::string kind;
    int flag = 0;
    is >> kind;
    if (kind == "P" && is >> flag >> p.index) {
      p.kind = GpuKernelParam::Kind::Pointer;
      p.isOutput = flag != 0;
    } else if (kind == "G" && is >> p.axis) {
      p.kind = GpuKernelParam::Kind::GridBound;
    } else if (kind == "T" &&
               is >> p.tensorMap.input >> flag >> p.tensorMap.globalShape[0] >>
                   p.tensorMap.globalShape[1] >> p.tensorMap.boxShape[0] >>
                   p.tensorMap.boxShape[1]) {
      p.kind = GpuKernelParam::Kind::TensorMap;
      p.tensorMap.bf16 = flag != 0;
    } else {
      return bad("parameter " + std::to_string(i));
    }
    r.params.push_back(p);
  }
  std::string rest;
  if (is >> rest)
    return bad("trailing '" + rest + "'");
  record = std::move(r);
  return true;
}

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

struct LoadedKernel {
  CudaKernel kernel;
  GpuLaunchRecord record;
  std::string arch;
  const char *format = "";
};

struct LauncherState {
  std::mutex mutex;
  const CudaDriverApi *override = nullptr;
  bool loaded = false;
  CudaDriverApi real;
  GpuStatus loadStatus;
  /// Per (image table, context id): the module loaded into it. Modules stay
  /// loaded until the process ends (or their context is destroyed).
  std::map<std::pair<const void *, unsigned long long>,
           std::unique_ptr<LoadedKernel>>
      kernels;
};

LauncherState &state() {
  static LauncherState *s = new LauncherState; // never destroyed: launches
  return *s;                                   // may run during exit
}

/// The driver table (under the state's mutex).
GpuStatus driverApi(LauncherState &s, const CudaDriverApi *&api) {
  if (s.override) {
    api = s.override;
    return GpuStatus::success();
  }
  if (!s.loaded) {
    s.loadStatus = loadCudaDriverApi(s.real);
    s.loaded = true;
  }
  api = &s.real;
  return s.loadStatus;
}

int statusOf(GpuError e) {
  switch (e) {
  case GpuError::None:
    return kLauncherOk;
  case GpuError::DriverNotFound:
  case GpuError::DriverTooOld:
    return kLauncherNoDriver;
  case GpuError::NoDevice:
  case GpuError::InvalidDevice:
  case GpuError::DeviceSetup:
    return kLauncherNoDevice;
  case GpuError::LoadFailed:
  case GpuError::KernelNotFound:
  case GpuError::SharedMemoryTooLarge:
    return kLauncherLoadFailed;
  case GpuError::Misaligned:
    return kLauncherMisaligned;
  case GpuError::InvalidLaunchRecord:
    return kLauncherInvalidPlan;
  case GpuError::OutOfMemory:
  case GpuError::CopyFailed:
  case GpuError::TensorMapFailed:
  case GpuError::LaunchFailed:
  case GpuError::KernelFailed:
  case GpuError::DriverCallFailed:
    return kLauncherLaunchFailed;
  }
  return kLauncherLaunchFailed;
}

std::string imageList(const pallasc_cuda_image *images, int64_t n) {
  std::string s;
  for (int64_t i = 0; i < n; ++i)
    s += std::string(i ? ", " : "") +
         (images[i].kind == kCudaImageCubin ? "cubin " : "PTX ") +
         (images[i].arch ? images[i].arch : "?");
  return s.empty() ? "none" : s;
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
    r = api.cuDeviceGetCount(&count);
    if (r != cuda::kSuccess || count == 0)
      return GpuStatus::failure(
          GpuError::NoDevice,
          "no CUDA device is available (" +
              (r != cuda::kSuccess ? api.describe(r)
                                   : std::string("0 devices")) +
              ")",
          r);
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

} // namespace

void setCudaLauncherDriverForTesting(const CudaDriverApi *api) {
  LauncherState &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.override = api;
  s.kernels.clear(); // the fake's modules are gone with it
}

} // namespace pallasc::launch

using namespace pallasc::launch;

namespace {

/// The launch proper; `where` collects "which kernel, which arch" for the
/// message of a failure.
int runCuda(const char *entry, const pallasc_cuda_image *images,
            int64_t numImages, const int64_t *grid, int64_t gridRank,
            void *const *operands, int64_t numInputs, int64_t numOutputs,
            const int64_t *bounds, int64_t numBounds, void *stream) {
  std::string where = "cuda";
  auto fail = [&](GpuStatus s) {
    return launcherFail(statusOf(s.error), entry, where + ": " + s.message);
  };
  if (!images || numImages <= 0 || gridRank < 0 || numInputs < 0 ||
      numOutputs < 0 || numBounds < 0)
    return launcherFail(kLauncherInvalidPlan, entry,
                        "no embedded CUDA code object");
  // Grid sizes with the dynamic bounds filled in.
  std::vector<int64_t> gridSizes(grid, grid + gridRank);
  int64_t next = 0;
  for (int64_t &g : gridSizes) {
    if (g >= 0)
      continue;
    if (next >= numBounds)
      return launcherFail(kLauncherInvalidPlan, entry,
                          "the entry point passes fewer grid bounds than the "
                          "grid has dynamic axes");
    int64_t b = bounds[next];
    if (b < 0 || b > INT32_MAX)
      return launcherFail(kLauncherInvalidArgument, entry,
                          "dynamic grid bound " + std::to_string(next) +
                              " is " + std::to_string(b) +
                              "; bounds must be in [0, 2^31)");
    g = b;
    ++next;
  }
  if (next != numBounds)
    return launcherFail(kLauncherInvalidPlan, entry,
                        "the entry point passes more grid bounds than the "
                        "grid has dynamic axes");

  LauncherState &st = state();
  const CudaDriverApi *apiPtr = nullptr;
  LoadedKernel *loaded = nullptr;
  {
    // Driver loading, context lookup and module loading are serialized:
    // each module is loaded once per context.
    std::lock_guard<std::mutex> lock(st.mutex);
    if (GpuStatus s = driverApi(st, apiPtr); !s)
      return fail(s);
    const CudaDriverApi &api = *apiPtr;
    unsigned long long context = 0;
    int major = 0, minor = 0;
    if (GpuStatus s = currentContext(api, context, major, minor); !s)
      return fail(s);
    std::string device = "sm_" + std::to_string(major) + std::to_string(minor);
    auto key = std::make_pair(static_cast<const void *>(images), context);
    auto it = st.kernels.find(key);
    if (it != st.kernels.end()) {
      loaded = it->second.get();
    } else {
      int64_t chosen = selectCudaImage(images, numImages, major, minor);
      if (chosen < 0)
        return launcherFail(kLauncherNoFittingArch, entry,
                            "cuda: no embedded code object runs on this "
                            "device (compute capability " +
                                std::to_string(major) + "." +
                                std::to_string(minor) + ", " + device +
                                "); embedded: " +
                                imageList(images, numImages) +
                                "; compile with --target cuda:" + device +
                                " (or an older architecture, as PTX)");
      const pallasc_cuda_image &image = images[chosen];
      auto k = std::make_unique<LoadedKernel>();
      k->arch = image.arch;
      k->format = image.kind == kCudaImageCubin ? "cubin" : "PTX";
      where = "cuda, " + std::string(k->format) + " " + k->arch + " on " +
              device;
      std::string error;
      if (!image.record || image.recordSize < 0 ||
          !decodeGpuLaunchRecord(
              std::string_view(image.record,
                               static_cast<size_t>(image.recordSize)),
              k->record, error))
        return launcherFail(kLauncherInvalidPlan, entry,
                            where + ": " +
                                (error.empty() ? "no launch record" : error));
      if (GpuStatus s =
              loadCudaKernel(api, image.data, k->format, k->record.entry,
                             k->record.dynamicSharedBytes, k->kernel);
          !s)
        return fail(s);
      loaded = k.get();
      st.kernels.emplace(key, std::move(k));
    }
  }
  const CudaDriverApi &api = *apiPtr;
  const GpuLaunchRecord &record = loaded->record;
  where = "cuda, " + std::string(loaded->format) + " " + loaded->arch + ", @" +
          record.entry;

  std::vector<uint64_t> inputs, outputs;
  for (int64_t k = 0; k < numInputs + numOutputs; ++k)
    (k < numInputs ? inputs : outputs)
        .push_back(reinterpret_cast<uintptr_t>(operands[k]));
  GpuLaunchGeometry geometry;
  if (GpuStatus s = computeLaunchGeometry(record, gridSizes, geometry); !s)
    return fail(s);

  // Tensor maps (TMA): encoded on the host, uploaded into stream-ordered
  // device memory that is freed after the launch in the same stream order.
  std::vector<GpuTensorMap> maps = tensorMapParams(record);
  std::vector<CudaTensorMapImage> encoded(maps.size());
  for (size_t i = 0; i < maps.size(); ++i) {
    if (maps[i].input >= inputs.size())
      return fail(GpuStatus::failure(GpuError::InvalidLaunchRecord,
                                     "a tensor map names inputs[" +
                                         std::to_string(maps[i].input) + "]"));
    if (GpuStatus s =
            encodeCudaTensorMap(api, maps[i], inputs[maps[i].input],
                                encoded[i]);
        !s)
      return fail(s);
  }
  CUdeviceptr mapMemory = 0;
  std::vector<uint64_t> mapAddresses;
  if (!encoded.empty()) {
    size_t bytes = encoded.size() * sizeof(CudaTensorMapImage);
    CUresult r = api.cuMemAllocAsync(&mapMemory, bytes, stream);
    if (r != cuda::kSuccess)
      return fail(GpuStatus::failure(
          GpuError::OutOfMemory,
          "cannot allocate the tensor maps: " + api.describe(r), r));
    r = api.cuMemcpyHtoDAsync(mapMemory, encoded.data(), bytes, stream);
    if (r != cuda::kSuccess) {
      api.cuMemFreeAsync(mapMemory, stream);
      return fail(GpuStatus::failure(
          GpuError::CopyFailed,
          "cannot upload the tensor maps: " + api.describe(r), r));
    }
    for (size_t i = 0; i < encoded.size(); ++i)
      mapAddresses.push_back(mapMemory + i * sizeof(CudaTensorMapImage));
  }
  GpuKernelArgs args;
  GpuStatus s = args.pack(record, inputs, outputs, gridSizes, mapAddresses);
  if (s)
    s = launchCudaKernel(api, loaded->kernel, geometry, args, stream);
  if (mapMemory)
    api.cuMemFreeAsync(mapMemory, stream);
  if (!s)
    return fail(s);
  return kLauncherOk;
}

} // namespace

extern "C" int pallasc_launcher_cuda_run(
    const char *entry, const pallasc_cuda_image *images, int64_t numImages,
    const int64_t *grid, int64_t gridRank, void *const *operands,
    int64_t numInputs, int64_t numOutputs, const int64_t *bounds,
    int64_t numBounds, void *stream) {
  launcherClearError();
  try {
    return runCuda(entry, images, numImages, grid, gridRank, operands,
                   numInputs, numOutputs, bounds, numBounds, stream);
  } catch (const std::bad_alloc &) {
    return launcherFail(kLauncherLaunchFailed, entry, "out of host memory");
  } catch (const std::system_error &) {
    return launcherFail(kLauncherLaunchFailed, entry,
                        "cannot lock the launcher's state");
  }
}
