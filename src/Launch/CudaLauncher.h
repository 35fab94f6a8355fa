//===- CudaLauncher.h - The runtime of generated CUDA launchers ---*- C++ -*-===//
//
// `pallasc --emit=lib --target cuda:<arch>...` writes, beside the kernel's
// images, an entry point `<name>_cuda(inputs..., outputs..., grid bounds...,
// stream)` that hands them to pallasc_launcher_cuda_run below. It runs in
// the calling thread's current CUDA context (the primary context of device
// 0, made current, when the thread has none), loads the best image for the
// context's device once per context (thread-safe), and launches through the
// launch library (CudaKernel.h, GpuLaunchArgs.h) that `pallasc run --target
// cuda:<arch>` uses: geometry, the shared memory opt-in, TMA tensor maps
// (encoded on the host, uploaded and freed in the caller's stream order),
// kernel arguments. The launch is asynchronous on the given stream.
//
// The embedded launch record is text (encodeGpuLaunchRecord): one record per
// architecture, as the lowering for each differs. What the ROCm runtime
// (HipLauncher.h) does the same way is shared (GpuLauncher.h).
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_LAUNCH_CUDALAUNCHER_H
#define PALLASC_SRC_LAUNCH_CUDALAUNCHER_H

#include "src/Launch/CudaDriverApi.h"
#include "src/Launch/CudaKernel.h"
#include "src/Launch/GpuLaunchRecord.h"
#include "src/Launch/GpuLauncher.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

extern "C" {

/// The embedded code objects of a generated CUDA launcher: kind is
/// pallasc::launch::kCudaImageCubin or kCudaImagePtx.
typedef struct pallasc_gpu_image pallasc_cuda_image;

/// Launches a generated `--target cuda` entry point. `images` (numImages)
/// are its code objects; `grid` (gridRank) the pallas grid, -1 for each
/// dynamic bound, which `bounds` (numBounds) fill in order; `operands` the
/// device addresses of every input then every output. `entry` names the
/// entry point in messages. Returns a status code (Launcher.h).
int pallasc_launcher_cuda_run(const char *entry,
                              const pallasc_cuda_image *images,
                              int64_t numImages, const int64_t *grid,
                              int64_t gridRank, void *const *operands,
                              int64_t numInputs, int64_t numOutputs,
                              const int64_t *bounds, int64_t numBounds,
                              void *stream);

/// The same for a symbolic call: `bounds` (numBounds) are the dynamic
/// bounds then one value per symbol, `plan` (planSize) the call's host plan
/// with its symbolic section (gpuLauncherRunSymbolic, GpuLauncher.h): the
/// values are checked and give the grid before anything launches.
int pallasc_launcher_cuda_run_symbolic(
    const char *entry, const pallasc_cuda_image *images, int64_t numImages,
    const int64_t *grid, int64_t gridRank, void *const *operands,
    int64_t numInputs, int64_t numOutputs, const int64_t *bounds,
    int64_t numBounds, void *stream, const char *plan, int64_t planSize);

/// The same for vmap's batch loop around the kernel: `operands` are the
/// batched arrays, `boundArgs` (numBoundArgs, one per dynamic grid bound)
/// point at each bound's value, or at its axis-size values for a batched
/// bound (gatherGpuBatchBounds, GpuLaunchArgs.h), `batchLoop`
/// (batchLoopSize) the loop as encodeGpuBatchLoop (GpuLaunchArgs.h) writes it.
/// One launch per iteration, in order on `stream`, on each iteration's
/// slices (gpuBatchIteration); every bound is checked before the first
/// launch, and a failure names its iteration ("batch iteration b of N").
int pallasc_launcher_cuda_run_batch(
    const char *entry, const pallasc_cuda_image *images, int64_t numImages,
    const int64_t *grid, int64_t gridRank, void *const *operands,
    int64_t numInputs, int64_t numOutputs, const int64_t *const *boundArgs,
    int64_t numBoundArgs, void *stream, const int64_t *batchLoop,
    int64_t batchLoopSize);
} // extern "C"

namespace pallasc::launch {

constexpr const char *kCudaRunSymbol = "pallasc_launcher_cuda_run";
constexpr const char *kCudaRunSymbolicSymbol =
    "pallasc_launcher_cuda_run_symbolic";
constexpr const char *kCudaRunBatchSymbol = "pallasc_launcher_cuda_run_batch";
constexpr int64_t kCudaImageCubin = 0;
constexpr int64_t kCudaImagePtx = 1;

/// A CUDA architecture as the images name it: sm_<major><minor>[a].
struct CudaArch {
  int major = 0, minor = 0;
  bool archSpecific = false; ///< the `a` suffix: runs on this chip alone
};
bool parseCudaArch(std::string_view name, CudaArch &arch);

/// The index of the image to load on a device of compute capability
/// major.minor, or -1 when none fits. A cubin runs on its major version at
/// an equal or higher minor one; PTX JIT-compiles on any equal or newer
/// device; `a` architectures run on exactly their chip. The highest fitting
/// architecture wins, a cubin before PTX of the same one.
int64_t selectCudaImage(const pallasc_cuda_image *images, int64_t numImages,
                        int major, int minor);

/// One launch of `kernel` on `launch`'s grid and operands (one iteration
/// of a call, gpuLauncherLaunches), asynchronous on `stream`: geometry,
/// TMA tensor maps encoded on the host over `launch`'s input addresses and
/// uploaded into stream-ordered device memory that is freed after the
/// launch in the same stream order, kernel arguments. Generated launchers
/// and `pallasc run --target cuda:<arch>` launch through it.
GpuStatus launchCudaIteration(const CudaDriverApi &api,
                              const CudaKernel &kernel,
                              const GpuLaunchRecord &record,
                              const GpuLauncherLaunch &launch, void *stream);

/// Tests: launchers use `api` instead of libcuda.so.1 (null: the real
/// driver again), and forget every module they loaded.
void setCudaLauncherDriverForTesting(const CudaDriverApi *api);

} // namespace pallasc::launch

#endif // PALLASC_SRC_LAUNCH_CUDALAUNCHER_H
