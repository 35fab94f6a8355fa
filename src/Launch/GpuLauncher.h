//===- GpuLauncher.h - What generated CUDA and ROCm launchers share -*- C++ -*-===//
//
// A generated `<name>_cuda` or `<name>_rocm` entry point hands the runtime a
// table of embedded code objects (pallasc_gpu_image: one per architecture
// and format, each with its launch record as text), the pallas grid with
// its dynamic bounds, the operands' device addresses and a stream. The
// vendor runtimes (CudaLauncher.h, HipLauncher.h) differ in the driver they
// call and in which image fits a device; everything else is here, one piece
// of code for both: the record's text form, the call's checks and grid
// sizes, the operand split, the image list of messages, the per-device
// cache of loaded kernels and the mapping of GpuError to the status codes
// of Launcher.h.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_LAUNCH_GPULAUNCHER_H
#define PALLASC_SRC_LAUNCH_GPULAUNCHER_H

#include "src/Launch/GpuLaunchArgs.h"
#include "src/Launch/GpuLaunchRecord.h"
#include "src/Launch/GpuStatus.h"
#include "src/Launch/Launcher.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

extern "C" {

/// One embedded code object of a generated GPU launcher (the layout the
/// generator emits: four 8-byte fields, then the record).
struct pallasc_gpu_image {
  const char *arch;   ///< "sm_90a", "gfx942"; NUL-terminated
  int64_t kind;       ///< the vendor's kind (CudaLauncher.h, HipLauncher.h)
  const void *data;   ///< the code object (PTX: NUL-terminated)
  int64_t size;       ///< bytes of `data`
  const char *record; ///< encodeGpuLaunchRecord text of this arch
  int64_t recordSize;
};

} // extern "C"

namespace pallasc::launch {

/// The record as one line of text, and back (false with `error` set on
/// malformed text).
std::string encodeGpuLaunchRecord(const GpuLaunchRecord &record);
bool decodeGpuLaunchRecord(std::string_view text, GpuLaunchRecord &record,
                           std::string &error);

/// The launcher status code (Launcher.h) of a failed launch-library step.
int gpuLauncherStatus(GpuError error);

/// A generated entry point's call, as the runtime receives it.
struct GpuLauncherCall {
  const char *entry = nullptr;
  const pallasc_gpu_image *images = nullptr;
  int64_t numImages = 0;
  const int64_t *grid = nullptr; ///< -1 for each dynamic bound
  int64_t gridRank = 0;
  void *const *operands = nullptr; ///< inputs, then outputs
  int64_t numInputs = 0, numOutputs = 0;
  const int64_t *bounds = nullptr;
  int64_t numBounds = 0;
  void *stream = nullptr;
  /// vmap's batch loop around the kernel (encodeGpuBatchLoop's integers),
  /// or null for a direct call. With a loop, `operands` are the batched
  /// arrays and `boundArgs` (numBounds of them, `bounds` unused) the bound
  /// arguments gatherGpuBatchBounds reads.
  const int64_t *batchLoop = nullptr;
  int64_t batchLoopSize = 0;
  const int64_t *const *boundArgs = nullptr;
  /// A symbolic call's symbol values (sorted by name), passed to the kernel
  /// after its grid bounds (gpuLauncherRunSymbolic checks them first).
  const int64_t *symbols = nullptr;
  int64_t numSymbols = 0;
};

/// One launch of a call: its grid sizes (dynamic bounds filled in) and
/// operand device addresses.
struct GpuLauncherLaunch {
  std::vector<int64_t> gridSizes;
  std::vector<uint64_t> inputs, outputs;
  /// A symbolic call's symbol values (the kernel's `symbol` parameters).
  std::vector<int64_t> symbols;
};

/// What every entry-point shape passes alike; the gpuLauncherRun* body
/// adds the bounds.
GpuLauncherCall gpuLauncherCall(const char *entry,
                                const pallasc_gpu_image *images,
                                int64_t numImages, const int64_t *grid,
                                int64_t gridRank, void *const *operands,
                                int64_t numInputs, int64_t numOutputs,
                                void *stream);

/// The body of a vendor's pallasc_launcher_*_run: clears the thread's last
/// error, adds the bounds to `call` and runs `run` on it, turning an
/// exception (out of host memory, a lock failure) into a status.
int gpuLauncherRun(int (*run)(const GpuLauncherCall &call),
                   GpuLauncherCall call, const int64_t *bounds,
                   int64_t numBounds);
/// The same for a symbolic call (docs/integration.md#symbolic-shapes):
/// `bounds` holds the dynamic bounds then one value per symbol; `plan`
/// (planSize bytes) is the call's host plan (encodeHostCallPlan) with its
/// symbolic section. The values are checked against the constraints (and
/// to fit the kernel's i32 parameters) and give the grid expressions'
/// bounds before anything launches: a violation is
/// PALLASC_ERROR_INVALID_ARGUMENT with the CPU entry point's message
/// ("n = 100 is not a multiple of 8").
int gpuLauncherRunSymbolic(int (*run)(const GpuLauncherCall &call),
                           GpuLauncherCall call, const int64_t *bounds,
                           int64_t numBounds, const char *plan,
                           int64_t planSize);
/// The same for a batch loop (GpuLauncherCall::batchLoop).
int gpuLauncherRunBatch(int (*run)(const GpuLauncherCall &call),
                        GpuLauncherCall call, const int64_t *const *boundArgs,
                        int64_t numBoundArgs, const int64_t *batchLoop,
                        int64_t batchLoopSize);

/// The launches of the call: one for a direct call, one per iteration of
/// its batch loop (gpuBatchIteration: slice b of each batched operand,
/// element b of each batched bound), every bound checked before anything
/// launches. Returns kLauncherOk or the status of a failure, whose message
/// is set (launcherFail; `vendor` names the missing code objects).
/// `checkBounds` false leaves a bound outside [0, 2^31) in the launches'
/// grid sizes for the caller to report in its own words (`pallasc run
/// --target` names the grid axis and iteration).
int gpuLauncherLaunches(const GpuLauncherCall &call, const char *vendor,
                        std::vector<GpuLauncherLaunch> &launches,
                        bool checkBounds = true);

/// Checks every launch's pointer operands against the record's alignment
/// (checkPointerAlignment) before the first launch: kLauncherOk, or
/// kLauncherMisaligned with the message "<where>: [batch iteration b of N:
/// ]inputs[i] needs a 16-byte aligned address ..., got A".
int gpuLauncherCheckAlignment(const GpuLauncherCall &call,
                              const GpuLaunchRecord &record,
                              const std::vector<GpuLauncherLaunch> &launches,
                              const std::string &where);

/// Checks every launch's alignment (gpuLauncherCheckAlignment), then runs
/// `launch` on each launch in order. Returns kLauncherOk, or the status of
/// the first failure with the message "<where>: [batch iteration b of N:
/// ]<its message>".
int gpuLauncherLaunchEach(
    const GpuLauncherCall &call, const GpuLaunchRecord &record,
    const std::vector<GpuLauncherLaunch> &launches, const std::string &where,
    const std::function<GpuStatus(const GpuLauncherLaunch &)> &launch);

/// "batch iteration 2 of 4: " for the message of a failed launch of a
/// batch loop ("" for a direct call).
std::string gpuLauncherIterationPrefix(const GpuLauncherCall &call,
                                       size_t launch, size_t numLaunches);

/// Checks the call's counts and fills `gridSizes` (the grid with the
/// dynamic bounds in [0, 2^31)). Returns kLauncherOk or the status of a
/// failure, whose message is set (launcherFail; `vendor` names the missing
/// code objects).
int gpuLauncherGridSizes(const GpuLauncherCall &call, const char *vendor,
                         std::vector<int64_t> &gridSizes);

/// The device addresses of the call's inputs and outputs.
void gpuLauncherOperands(const GpuLauncherCall &call,
                         std::vector<uint64_t> &inputs,
                         std::vector<uint64_t> &outputs);

/// "cubin sm_90a, PTX sm_90a" for messages: each image's `format(kind)`
/// and arch ("none" without images).
std::string gpuImageList(const pallasc_gpu_image *images, int64_t numImages,
                         const char *(*format)(int64_t kind));

/// Decodes `image`'s launch record; false with `error` set (a record that
/// is missing or malformed).
bool gpuImageRecord(const pallasc_gpu_image &image, GpuLaunchRecord &record,
                    std::string &error);

/// The kernels a vendor runtime has loaded, one per (image table, device
/// or context key): each stays loaded until the process ends. Not
/// synchronized: the runtime holds its lock around every use.
template <typename Kernel> class GpuKernelCache {
public:
  struct Loaded {
    Kernel kernel;
    GpuLaunchRecord record;
    std::string arch;
    const char *format = "";
  };

  Loaded *find(const pallasc_gpu_image *images, unsigned long long key) {
    auto it = kernels.find({images, key});
    return it == kernels.end() ? nullptr : it->second.get();
  }
  Loaded *insert(const pallasc_gpu_image *images, unsigned long long key,
                 std::unique_ptr<Loaded> loaded) {
    Loaded *p = loaded.get();
    kernels[{images, key}] = std::move(loaded);
    return p;
  }
  void clear() { kernels.clear(); }

private:
  std::map<std::pair<const void *, unsigned long long>,
           std::unique_ptr<Loaded>>
      kernels;
};

/// A vendor runtime's process-wide state: its lock, the driver table
/// (loaded on first use with `Load`, or a test's fake) and the loaded
/// kernels. Created on first use and never destroyed (launches may run
/// during exit).
template <typename Api, GpuStatus (*Load)(Api &), typename Kernel>
class GpuRuntimeState {
public:
  using DriverApi = Api;

  static GpuRuntimeState &get() {
    static GpuRuntimeState *s = new GpuRuntimeState;
    return *s;
  }

  std::mutex mutex;
  GpuKernelCache<Kernel> kernels;

  /// The driver table (under `mutex`): the fake, else the real one, loaded
  /// once (its failure is kept and returned again).
  GpuStatus api(const Api *&out) {
    if (override) {
      out = override;
      return GpuStatus::success();
    }
    if (!loaded) {
      loadStatus = Load(real);
      loaded = true;
    }
    out = &real;
    return loadStatus;
  }

  /// Tests: use `api` (null: the real driver again) and forget every
  /// loaded kernel (the fake's modules are gone with it).
  void setOverride(const Api *api) {
    std::lock_guard<std::mutex> lock(mutex);
    override = api;
    kernels.clear();
  }

private:
  const Api *override = nullptr;
  bool loaded = false;
  Api real;
  GpuStatus loadStatus;
};

/// The body of a vendor's run function (the `RUN` of
/// PALLASC_GPU_LAUNCHER_ENTRY_POINTS): the call's launches, the vendor's
/// current device, its kernel (loaded from the best fitting image on the
/// first call for that device, then cached), one launch per iteration.
/// `where` collects "which kernel, which arch" for the message of a
/// failure. `Vendor` gives what differs:
///   State:  its GpuRuntimeState (whose DriverApi is `api`'s type);
///   Device: the current device;
///   kName ("cuda"), kLabel ("CUDA"): names in messages;
///   currentDevice(api, device): the device, with its cache key `key`;
///   deviceName(api, device, name): the arch name images are chosen for;
///   select(images, numImages, device, name): the image index, or -1;
///   describeDevice(device, name), compileHint(device, name): the message
///     when no image fits;
///   format(kind): the image's format ("PTX");
///   load(api, image, record, kernel): loads the kernel record.entry;
///   launch(api, kernel, record, launch, stream): one asynchronous launch.
template <typename Vendor> int runGpuLauncher(const GpuLauncherCall &call) {
  using Loaded = typename GpuKernelCache<GpuKernel>::Loaded;
  const char *entry = call.entry;
  const pallasc_gpu_image *images = call.images;
  std::string where = Vendor::kName;
  auto fail = [&](GpuStatus s) {
    return launcherFail(gpuLauncherStatus(s.error), entry,
                        where + ": " + s.message);
  };
  std::vector<GpuLauncherLaunch> launches;
  if (int status = gpuLauncherLaunches(call, Vendor::kLabel, launches))
    return status;

  using Api = typename Vendor::State::DriverApi;
  auto &st = Vendor::State::get();
  const Api *apiPtr = nullptr;
  Loaded *loaded = nullptr;
  {
    // Driver loading, device lookup and module loading are serialized:
    // each module is loaded once per device key.
    std::lock_guard<std::mutex> lock(st.mutex);
    if (GpuStatus s = st.api(apiPtr); !s)
      return fail(s);
    const Api &api = *apiPtr;
    typename Vendor::Device device;
    if (GpuStatus s = Vendor::currentDevice(api, device); !s)
      return fail(s);
    loaded = st.kernels.find(images, device.key);
    if (!loaded) {
      std::string name;
      if (GpuStatus s = Vendor::deviceName(api, device, name); !s)
        return fail(s);
      int64_t chosen = Vendor::select(images, call.numImages, device, name);
      if (chosen < 0)
        return launcherFail(
            kLauncherNoFittingArch, entry,
            std::string(Vendor::kName) +
                ": no embedded code object runs on this device (" +
                Vendor::describeDevice(device, name) + "); embedded: " +
                gpuImageList(images, call.numImages, Vendor::format) +
                Vendor::compileHint(device, name));
      const pallasc_gpu_image &image = images[chosen];
      auto k = std::make_unique<Loaded>();
      k->arch = image.arch;
      k->format = Vendor::format(image.kind);
      where = std::string(Vendor::kName) + ", " + k->format + " " + k->arch +
              " on " + name;
      std::string error;
      if (!gpuImageRecord(image, k->record, error))
        return launcherFail(kLauncherInvalidPlan, entry, where + ": " + error);
      if (GpuStatus s = Vendor::load(api, image, k->record, k->kernel); !s)
        return fail(s);
      loaded = st.kernels.insert(images, device.key, std::move(k));
    }
  }
  const Api &api = *apiPtr;
  const GpuLaunchRecord &record = loaded->record;
  where = std::string(Vendor::kName) + ", " + loaded->format + " " +
          loaded->arch + ", @" + record.entry;

  // One launch per iteration of a batch loop (one for a direct call), in
  // order on the caller's stream.
  return gpuLauncherLaunchEach(
      call, record, launches, where, [&](const GpuLauncherLaunch &launch) {
        return Vendor::launch(api, loaded->kernel, record, launch, call.stream);
      });
}

} // namespace pallasc::launch

/// The GpuLauncherCall of an entry point's common arguments (in
/// PALLASC_GPU_LAUNCHER_ENTRY_POINTS).
#define PALLASC_GPU_LAUNCHER_CALL_                                             \
  ::pallasc::launch::gpuLauncherCall(entry, images, numImages, grid, gridRank, \
                                     operands, numInputs, numOutputs, stream)

/// Defines a vendor's three C entry points, the names generated launchers
/// call: pallasc_launcher_<VENDOR>_run, _run_symbolic and _run_batch, each
/// forwarding to gpuLauncherRun* with the vendor's `RUN` function. `IMAGE`
/// is the vendor's image struct (pallasc_gpu_image's layout).
#define PALLASC_GPU_LAUNCHER_ENTRY_POINTS(VENDOR, IMAGE, RUN)                  \
  extern "C" int pallasc_launcher_##VENDOR##_run_batch(                        \
      const char *entry, const IMAGE *images, int64_t numImages,               \
      const int64_t *grid, int64_t gridRank, void *const *operands,            \
      int64_t numInputs, int64_t numOutputs, const int64_t *const *boundArgs,  \
      int64_t numBoundArgs, void *stream, const int64_t *batchLoop,            \
      int64_t batchLoopSize) {                                                 \
    return ::pallasc::launch::gpuLauncherRunBatch(                             \
        RUN, PALLASC_GPU_LAUNCHER_CALL_, boundArgs, numBoundArgs, batchLoop,   \
        batchLoopSize);                                                        \
  }                                                                            \
  extern "C" int pallasc_launcher_##VENDOR##_run(                              \
      const char *entry, const IMAGE *images, int64_t numImages,               \
      const int64_t *grid, int64_t gridRank, void *const *operands,            \
      int64_t numInputs, int64_t numOutputs, const int64_t *bounds,            \
      int64_t numBounds, void *stream) {                                       \
    return ::pallasc::launch::gpuLauncherRun(RUN, PALLASC_GPU_LAUNCHER_CALL_,  \
                                             bounds, numBounds);               \
  }                                                                            \
  extern "C" int pallasc_launcher_##VENDOR##_run_symbolic(                     \
      const char *entry, const IMAGE *images, int64_t numImages,               \
      const int64_t *grid, int64_t gridRank, void *const *operands,            \
      int64_t numInputs, int64_t numOutputs, const int64_t *bounds,            \
      int64_t numBounds, void *stream, const char *plan, int64_t planSize) {   \
    return ::pallasc::launch::gpuLauncherRunSymbolic(                          \
        RUN, PALLASC_GPU_LAUNCHER_CALL_, bounds, numBounds, plan, planSize);   \
  }

#endif // PALLASC_SRC_LAUNCH_GPULAUNCHER_H
