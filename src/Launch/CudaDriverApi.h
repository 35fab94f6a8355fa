//===- CudaDriverApi.h - The CUDA driver API as a table -----------*- C++ -*-===//
//
// The CUDA driver entry points the launch library calls, as a table of
// function pointers with the driver's C signatures (handles as void *, so
// no CUDA header is needed to build). loadCudaDriverApi fills it from
// libcuda.so.1 (dlopen) when a run needs it: the build needs no CUDA
// library, and a machine without a GPU or driver gets a clear status
// instead of a link failure. Unit tests fill it with fakes.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_LAUNCH_CUDADRIVERAPI_H
#define PALLASC_SRC_LAUNCH_CUDADRIVERAPI_H

#include "src/Launch/GpuStatus.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace pallasc::launch {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;

/// The driver's enum values the library uses (cuda.h), by enum.
namespace cuda {
constexpr CUresult kSuccess = 0; // CUDA_SUCCESS
// CUdevice_attribute, CUfunction_attribute:
constexpr int kAttrComputeCapabilityMajor = 75,
              kAttrComputeCapabilityMinor = 76;
constexpr int kFuncAttrMaxDynamicSharedSizeBytes = 8;
// CUjit_option:
constexpr int kJitErrorLogBuffer = 5, kJitErrorLogBufferSizeBytes = 6;
// CUtensorMapDataType, CUtensorMapInterleave, CUtensorMapSwizzle,
// CUtensorMapL2promotion, CUtensorMapFloatOOBfill:
constexpr int kTensorMapDataTypeFloat16 = 6, kTensorMapDataTypeBFloat16 = 9,
              kTensorMapInterleaveNone = 0, kTensorMapSwizzle128B = 3,
              kTensorMapL2Promotion128B = 2, kTensorMapFloatOobFillNone = 0;
} // namespace cuda

struct CudaDriverApi {
  CUresult (*cuInit)(unsigned flags) = nullptr;
  CUresult (*cuDeviceGetCount)(int *count) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice *device, int ordinal) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int *value, int attribute,
                                   CUdevice device) = nullptr;
  CUresult (*cuDeviceGetName)(char *name, int length,
                              CUdevice device) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(void **context,
                                       CUdevice device) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice device) = nullptr;
  CUresult (*cuCtxSetCurrent)(void *context) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  /// The calling thread's current context (null when none) and its device:
  /// generated launchers run in the caller's context.
  CUresult (*cuCtxGetCurrent)(void **context) = nullptr;
  CUresult (*cuCtxGetDevice)(CUdevice *device) = nullptr;
  /// A context's process-unique id (CUDA 12.0+): unlike its address, never
  /// reused by a later context.
  CUresult (*cuCtxGetId)(void *context, unsigned long long *id) = nullptr;
  CUresult (*cuModuleLoadDataEx)(void **module, const void *image,
                                 unsigned numOptions, int *options,
                                 void **optionValues) = nullptr;
  CUresult (*cuModuleUnload)(void *module) = nullptr;
  CUresult (*cuModuleGetFunction)(void **function, void *module,
                                  const char *name) = nullptr;
  CUresult (*cuFuncSetAttribute)(void *function, int attribute,
                                 int value) = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr *ptr, size_t bytes) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr ptr) = nullptr;
  /// Stream-ordered memory (CUDA 11.2+): a generated launcher's tensor maps
  /// live from their upload to the end of the launch on the caller's stream.
  CUresult (*cuMemAllocAsync)(CUdeviceptr *ptr, size_t bytes,
                              void *stream) = nullptr;
  CUresult (*cuMemFreeAsync)(CUdeviceptr ptr, void *stream) = nullptr;
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr dst, const void *src,
                                size_t bytes, void *stream) = nullptr;
  CUresult (*cuMemcpyHtoD)(CUdeviceptr dst, const void *src,
                           size_t bytes) = nullptr;
  CUresult (*cuMemcpyDtoH)(void *dst, CUdeviceptr src, size_t bytes) = nullptr;
  CUresult (*cuMemcpyDtoD)(CUdeviceptr dst, CUdeviceptr src,
                           size_t bytes) = nullptr;
  CUresult (*cuLaunchKernel)(void *function, unsigned gridX, unsigned gridY,
                             unsigned gridZ, unsigned blockX, unsigned blockY,
                             unsigned blockZ, unsigned sharedBytes,
                             void *stream, void **params,
                             void **extra) = nullptr;
  CUresult (*cuEventCreate)(void **event, unsigned flags) = nullptr;
  CUresult (*cuEventRecord)(void *event, void *stream) = nullptr;
  CUresult (*cuEventSynchronize)(void *event) = nullptr;
  CUresult (*cuEventElapsedTime)(float *ms, void *start, void *end) = nullptr;
  CUresult (*cuEventDestroy)(void *event) = nullptr;
  CUresult (*cuGetErrorString)(CUresult result, const char **text) = nullptr;
  /// cuTensorMapEncodeTiled (CUDA 12+): the CUtensorMap (128 bytes, 64-byte
  /// aligned) a TMA copy reads.
  CUresult (*cuTensorMapEncodeTiled)(
      void *map, int dataType, uint32_t rank, void *globalAddress,
      const uint64_t *globalDim, const uint64_t *globalStrides,
      const uint32_t *boxDim, const uint32_t *elementStrides, int interleave,
      int swizzle, int l2Promotion, int oobFill) = nullptr;

  /// "CUDA_ERROR_OUT_OF_MEMORY (2)" from cuGetErrorString, else
  /// "CUDA error 2".
  std::string describe(CUresult result) const;
};

/// Fills `api` from libcuda.so.1 (loaded once, never unloaded). Fails with
/// DriverNotFound when the library cannot be loaded, DriverTooOld when an
/// entry point is missing (older than CUDA 12).
GpuStatus loadCudaDriverApi(CudaDriverApi &api);

} // namespace pallasc::launch

#endif // PALLASC_SRC_LAUNCH_CUDADRIVERAPI_H
