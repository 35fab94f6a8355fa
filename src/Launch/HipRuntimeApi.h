//===- HipRuntimeApi.h - The HIP runtime API as a table -----------*- C++ -*-===//
//
// The HIP runtime entry points generated ROCm launchers call, as a table of
// function pointers with the runtime's C signatures (handles as void *,
// enums as int), so no HIP header is needed to build. loadHipRuntimeApi
// fills it from libamdhip64.so (dlopen) when a launch needs it: programs
// link without ROCm, and a machine without it gets a clear status. Unit
// tests fill it with fakes (test/Launch/FakeHipRuntime.h).
//
// hipDeviceProp_t changed layout in ROCm 6.0 (hipGetDevicePropertiesR0600)
// and is large; only its `gcnArchName` is read, at the offset of the layout
// the bound entry point fills (deviceArchName).
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_LAUNCH_HIPRUNTIMEAPI_H
#define PALLASC_SRC_LAUNCH_HIPRUNTIMEAPI_H

#include "src/Launch/GpuStatus.h"

#include <cstddef>
#include <string>

namespace pallasc::launch {

using hipError_t = int;

/// The runtime's enum values the library uses (hip_runtime_api.h).
namespace hip {
constexpr hipError_t kSuccess = 0;
constexpr int kFuncAttributeMaxDynamicSharedMemorySize = 8;
/// Where hipDeviceProp_t keeps `char gcnArchName[256]`: ROCm 6.0+
/// (hipGetDevicePropertiesR0600) and earlier (hipGetDeviceProperties).
constexpr size_t kPropsR0600ArchNameOffset = 1160;
constexpr size_t kPropsR0000ArchNameOffset = 396;
/// Bytes the library passes as hipDeviceProp_t (either layout is smaller:
/// 1472 and 792 bytes).
constexpr size_t kPropsBufferSize = 4096;
constexpr size_t kArchNameSize = 256;
} // namespace hip

struct HipRuntimeApi {
  hipError_t (*hipInit)(unsigned flags) = nullptr;
  hipError_t (*hipGetDeviceCount)(int *count) = nullptr;
  /// The calling thread's current device (0 unless hipSetDevice chose
  /// another): generated launchers run on it.
  hipError_t (*hipGetDevice)(int *device) = nullptr;
  /// hipGetDevicePropertiesR0600 (or the older hipGetDeviceProperties):
  /// fills a hipDeviceProp_t whose gcnArchName is at `archNameOffset`.
  hipError_t (*hipGetDeviceProperties)(void *props, int device) = nullptr;
  size_t archNameOffset = hip::kPropsR0600ArchNameOffset;
  hipError_t (*hipModuleLoadData)(void **module, const void *image) = nullptr;
  hipError_t (*hipModuleUnload)(void *module) = nullptr;
  hipError_t (*hipModuleGetFunction)(void **function, void *module,
                                     const char *name) = nullptr;
  hipError_t (*hipFuncSetAttribute)(const void *function, int attribute,
                                    int value) = nullptr;
  hipError_t (*hipModuleLaunchKernel)(void *function, unsigned gridX,
                                      unsigned gridY, unsigned gridZ,
                                      unsigned blockX, unsigned blockY,
                                      unsigned blockZ, unsigned sharedBytes,
                                      void *stream, void **params,
                                      void **extra) = nullptr;
  const char *(*hipGetErrorName)(hipError_t error) = nullptr;

  /// "hipErrorNoDevice (100)" from hipGetErrorName, else "HIP error 100".
  std::string describe(hipError_t error) const;

  /// The device's `gcnArchName` ("gfx90a:sramecc+:xnack-"): the
  /// properties' arch name, bounded and NUL-terminated.
  hipError_t deviceArchName(int device, std::string &arch) const;
};

/// Fills `api` from the HIP runtime (libamdhip64.so, .so.7, .so.6, .so.5 on
/// the library path, then under $ROCM_PATH/lib and /opt/rocm/lib; loaded
/// once, never unloaded). Fails with DriverNotFound when none loads,
/// DriverTooOld when an entry point is missing.
GpuStatus loadHipRuntimeApi(HipRuntimeApi &api);

} // namespace pallasc::launch

#endif // PALLASC_SRC_LAUNCH_HIPRUNTIMEAPI_H
