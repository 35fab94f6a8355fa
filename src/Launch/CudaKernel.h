//===- CudaKernel.h - Loading and launching CUDA kernels ----------*- C++ -*-===//
//
// The CUDA half of the launch library, over a CudaDriverApi table (the real
// driver or a fake): loading a kernel from a PTX or cubin image (raising
// its dynamic shared memory limit past 48 KiB), encoding the TMA tensor
// maps a launch record asks for, and launching with a GpuLaunchGeometry and
// GpuKernelArgs (src/Launch/GpuLaunchArgs.h). CudaDevice adds what a
// self-contained run needs (a device and its primary context, device
// memory owned until the device is closed, timing); `pallasc run --target
// cuda:<arch>` uses it.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_LAUNCH_CUDALAUNCH_H
#define PALLASC_SRC_LAUNCH_CUDALAUNCH_H

#include "src/Launch/CudaDriverApi.h"
#include "src/Launch/GpuLaunchArgs.h"
#include "src/Launch/GpuLaunchRecord.h"
#include "src/Launch/GpuStatus.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace pallasc::launch {

using CudaKernel = GpuKernel;

/// Loads `image` (NUL-terminated PTX, or a cubin; `format` names it in
/// messages) into the current context and looks `entry` up. When
/// `sharedBytes` needs the opt-in (needsSharedMemoryOptIn) the kernel's
/// dynamic shared memory limit is raised to it.
GpuStatus loadCudaKernel(const CudaDriverApi &api, const void *image,
                         const char *format, const std::string &entry,
                         int64_t sharedBytes, CudaKernel &kernel);

/// Unloads the kernel's module (if any).
void unloadCudaKernel(const CudaDriverApi &api, CudaKernel &kernel);

/// The arguments of cuTensorMapEncodeTiled for one tensor-map parameter
/// over the array at `globalAddress` (docs/cuda.md, "Kernel ABI").
struct CudaTensorMapEncoding {
  int dataType = 0;
  uint32_t rank = 2;
  uint64_t globalAddress = 0;
  uint64_t globalDim[kMaxTensorMapRank] = {};  ///< innermost first
  uint64_t globalStrides[kMaxTensorMapRank - 1] = {}; ///< bytes, outer dims
  uint32_t boxDim[kMaxTensorMapRank] = {};     ///< innermost first
  uint32_t elementStrides[kMaxTensorMapRank] = {1, 1, 1, 1, 1};
  int interleave = cuda::kTensorMapInterleaveNone;
  int swizzle = cuda::kTensorMapSwizzle128B;
  int l2Promotion = cuda::kTensorMapL2Promotion128B;
  int oobFill = cuda::kTensorMapFloatOobFillNone;
};
CudaTensorMapEncoding cudaTensorMapEncoding(const GpuTensorMap &map,
                                            uint64_t globalAddress);

/// An encoded CUtensorMap.
struct alignas(64) CudaTensorMapImage {
  unsigned char bytes[128] = {};
};

/// Encodes `map` over the array at `globalAddress`. Fails with Misaligned
/// when the address is not 16-byte aligned (TMA's requirement),
/// TensorMapFailed when the driver rejects the map.
GpuStatus encodeCudaTensorMap(const CudaDriverApi &api, const GpuTensorMap &map,
                              uint64_t globalAddress,
                              CudaTensorMapImage &image);

/// Launches `kernel` on `stream` (null: the default stream) without waiting
/// for it. A geometry without blocks launches nothing.
GpuStatus launchCudaKernel(const CudaDriverApi &api, const CudaKernel &kernel,
                           const GpuLaunchGeometry &geometry,
                           GpuKernelArgs &args, void *stream = nullptr);

/// The name of a compute capability as the GPU target table spells its
/// chips: "sm_90" for 9.0 (the arch-specific "a" variants are the table's).
std::string cudaArchName(int major, int minor);

/// The number of CUDA devices (cuDeviceGetCount), or NoDevice "no CUDA
/// device is available (<the driver's error, or 0 devices>)" where there is
/// none. cuInit must have succeeded.
GpuStatus cudaDeviceCount(const CudaDriverApi &api, int &count);

/// One GPU, its primary context (current while the device is open), one
/// loaded kernel, and the device memory allocated through it (freed when it
/// is destroyed).
class CudaDevice {
public:
  ~CudaDevice();

  /// Initializes the driver and device `ordinal`. Fails with NoDevice when
  /// the machine has none, InvalidDevice when `ordinal` is not one.
  static GpuStatus open(const CudaDriverApi &api, int ordinal,
                        std::unique_ptr<CudaDevice> &device);

  /// "sm_90" for a compute capability 9.0 device (cudaArchName).
  std::string arch() const;
  std::string name() const { return deviceName; }
  const CudaDriverApi &driver() const { return api; }

  /// Loads the kernel the device launches (loadCudaKernel).
  GpuStatus load(const std::string &ptx, const std::string &entry,
                 int64_t sharedBytes);

  /// Device memory (at least 16 bytes per allocation).
  GpuStatus alloc(size_t bytes, uint64_t &ptr);
  GpuStatus upload(uint64_t dst, const void *src, size_t bytes);
  GpuStatus download(void *dst, uint64_t src, size_t bytes);
  GpuStatus copy(uint64_t dst, uint64_t src, size_t bytes);

  /// Encodes `map` over the array at device address `array` and copies it
  /// to device memory: `ptr` is what the kernel's parameter gets.
  GpuStatus tensorMap(const GpuTensorMap &map, uint64_t array, uint64_t &ptr);

  /// The loaded kernel (load).
  const CudaKernel &loadedKernel() const { return kernel; }

  /// Waits for everything launched in the context (KernelFailed when a
  /// kernel failed).
  GpuStatus synchronize();

  /// Launches the loaded kernel and waits for it.
  GpuStatus launch(const GpuLaunchGeometry &geometry, GpuKernelArgs &args);

  /// Launches once and waits, then times `reps` launches (CUDA events):
  /// `ms` is the mean.
  GpuStatus timeLaunches(const GpuLaunchGeometry &geometry, GpuKernelArgs &args,
                         int reps, double &ms);

  /// Mean time of a device-to-device copy of `bytes` (the bandwidth
  /// reference), over `reps` copies.
  GpuStatus timeCopy(uint64_t dst, uint64_t src, size_t bytes, int reps,
                     double &ms);

private:
  explicit CudaDevice(const CudaDriverApi &api) : api(api) {}
  CudaDriverApi api;
  int device = 0;
  int major = 0, minor = 0;
  std::string deviceName;
  void *context = nullptr;
  CudaKernel kernel;
  std::vector<uint64_t> allocations;
};

} // namespace pallasc::launch

#endif // PALLASC_SRC_LAUNCH_CUDALAUNCH_H
