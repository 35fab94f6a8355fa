//===- HipLauncher.h - The runtime of generated ROCm launchers ----*- C++ -*-===//
//
// `pallasc --emit=lib --target rocm:<arch>...` writes, beside the kernel's
// code objects, an entry point `<name>_rocm(inputs..., outputs..., grid
// bounds..., stream)` that hands them to pallasc_launcher_rocm_run below:
// the CUDA launcher's counterpart (CudaLauncher.h), sharing its call
// checks, record text, cache and status mapping (GpuLauncher.h) and the
// geometry and argument packing of the launch library (GpuLaunchArgs.h). It
// runs on the calling thread's current HIP device (hipGetDevice: 0 unless
// the program chose another with hipSetDevice), picks the embedded HSACO
// whose target fits the device's gcnArchName, loads it once per device
// (thread-safe), and launches it asynchronously on the given stream
// (hipModuleLaunchKernel). The HIP runtime is dlopen'ed (HipRuntimeApi.h).
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_LAUNCH_HIPLAUNCHER_H
#define PALLASC_SRC_LAUNCH_HIPLAUNCHER_H

#include "src/Launch/GpuLauncher.h"
#include "src/Launch/HipRuntimeApi.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

extern "C" {

/// Launches a generated `--target rocm` entry point: the arguments of
/// pallasc_launcher_cuda_run, over HSACO images (each image's `kind` is its
/// code object version, 4, 5 or 6). Returns a status code (Launcher.h).
int pallasc_launcher_rocm_run(const char *entry,
                              const pallasc_gpu_image *images,
                              int64_t numImages, const int64_t *grid,
                              int64_t gridRank, void *const *operands,
                              int64_t numInputs, int64_t numOutputs,
                              const int64_t *bounds, int64_t numBounds,
                              void *stream);

/// vmap's batch loop around the kernel: pallasc_launcher_cuda_run_batch's
/// counterpart (one launch per iteration, in order on `stream`).
int pallasc_launcher_rocm_run_batch(
    const char *entry, const pallasc_gpu_image *images, int64_t numImages,
    const int64_t *grid, int64_t gridRank, void *const *operands,
    int64_t numInputs, int64_t numOutputs, const int64_t *const *boundArgs,
    int64_t numBoundArgs, void *stream, const int64_t *batchLoop,
    int64_t batchLoopSize);

/// A symbolic call: pallasc_launcher_cuda_run_symbolic's counterpart.
int pallasc_launcher_rocm_run_symbolic(
    const char *entry, const pallasc_gpu_image *images, int64_t numImages,
    const int64_t *grid, int64_t gridRank, void *const *operands,
    int64_t numInputs, int64_t numOutputs, const int64_t *bounds,
    int64_t numBounds, void *stream, const char *plan, int64_t planSize);
} // extern "C"

namespace pallasc::launch {

constexpr const char *kRocmRunSymbol = "pallasc_launcher_rocm_run";
constexpr const char *kRocmRunSymbolicSymbol =
    "pallasc_launcher_rocm_run_symbolic";
constexpr const char *kRocmRunBatchSymbol = "pallasc_launcher_rocm_run_batch";

/// An AMDGPU target ID as images and gcnArchName spell it:
/// `gfx90a:sramecc+:xnack-` is the processor `gfx90a` with two feature
/// settings; a feature an ID does not name is "any".
struct AmdTargetId {
  std::string processor;
  std::vector<std::pair<std::string, bool>> features; ///< name, on
};
bool parseAmdTargetId(std::string_view text, AmdTargetId &id);

/// Whether a code object built for `image` runs on a device whose
/// gcnArchName is `device`: the same processor (code objects do not run
/// across processors), and each feature the image sets set the same way on
/// the device.
bool amdTargetRuns(const AmdTargetId &image, const AmdTargetId &device);

/// The index of the image to load on a device of gcnArchName `device`, or
/// -1 when none fits. Among fitting images, the one naming the most
/// features wins (the most specific code object).
int64_t selectRocmImage(const pallasc_gpu_image *images, int64_t numImages,
                        std::string_view device);

/// Tests: launchers use `api` instead of libamdhip64.so (null: the real
/// runtime again), and forget every module they loaded.
void setRocmLauncherRuntimeForTesting(const HipRuntimeApi *api);

} // namespace pallasc::launch

#endif // PALLASC_SRC_LAUNCH_HIPLAUNCHER_H
