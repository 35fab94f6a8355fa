//===- CudaDriverApi.cpp - The CUDA driver API as a table ---------*- C++ -*-===//

#include "src/Launch/CudaDriverApi.h"

#include <dlfcn.h>

namespace pallasc::launch {

std::string CudaDriverApi::describe(CUresult result) const {
  const char *s = nullptr;
  if (cuGetErrorString && cuGetErrorString(result, &s) == cuda::kSuccess && s)
    return std::string(s) + " (" + std::to_string(result) + ")";
  return "CUDA error " + std::to_string(result);
}

namespace {
template <typename F> bool bind(void *handle, F &fn, const char *name) {
  fn = reinterpret_cast<F>(dlsym(handle, name));
  return fn != nullptr;
}
} // namespace

GpuStatus loadCudaDriverApi(CudaDriverApi &api) {
  void *handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return GpuStatus::failure(
        GpuError::DriverNotFound,
        "cannot load the CUDA driver (libcuda.so.1): " +
            std::string(dlerror()) +
            "; running on a GPU needs an NVIDIA GPU and its driver");
  CudaDriverApi a;
  bool ok = bind(handle, a.cuInit, "cuInit") &&
            bind(handle, a.cuDeviceGetCount, "cuDeviceGetCount") &&
            bind(handle, a.cuDeviceGet, "cuDeviceGet") &&
            bind(handle, a.cuDeviceGetAttribute, "cuDeviceGetAttribute") &&
            bind(handle, a.cuDeviceGetName, "cuDeviceGetName") &&
            bind(handle, a.cuDevicePrimaryCtxRetain,
                 "cuDevicePrimaryCtxRetain") &&
            bind(handle, a.cuDevicePrimaryCtxRelease,
                 "cuDevicePrimaryCtxRelease_v2") &&
            bind(handle, a.cuCtxSetCurrent, "cuCtxSetCurrent") &&
            bind(handle, a.cuCtxSynchronize, "cuCtxSynchronize") &&
            bind(handle, a.cuCtxGetCurrent, "cuCtxGetCurrent") &&
            bind(handle, a.cuCtxGetDevice, "cuCtxGetDevice") &&
            bind(handle, a.cuCtxGetId, "cuCtxGetId") &&
            bind(handle, a.cuModuleLoadDataEx, "cuModuleLoadDataEx") &&
            bind(handle, a.cuModuleUnload, "cuModuleUnload") &&
            bind(handle, a.cuModuleGetFunction, "cuModuleGetFunction") &&
            bind(handle, a.cuFuncSetAttribute, "cuFuncSetAttribute") &&
            bind(handle, a.cuMemAlloc, "cuMemAlloc_v2") &&
            bind(handle, a.cuMemFree, "cuMemFree_v2") &&
            bind(handle, a.cuMemAllocAsync, "cuMemAllocAsync") &&
            bind(handle, a.cuMemFreeAsync, "cuMemFreeAsync") &&
            bind(handle, a.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2") &&
            bind(handle, a.cuMemcpyHtoD, "cuMemcpyHtoD_v2") &&
            bind(handle, a.cuMemcpyDtoH, "cuMemcpyDtoH_v2") &&
            bind(handle, a.cuMemcpyDtoD, "cuMemcpyDtoD_v2") &&
            bind(handle, a.cuLaunchKernel, "cuLaunchKernel") &&
            bind(handle, a.cuEventCreate, "cuEventCreate") &&
            bind(handle, a.cuEventRecord, "cuEventRecord") &&
            bind(handle, a.cuEventSynchronize, "cuEventSynchronize") &&
            bind(handle, a.cuEventElapsedTime, "cuEventElapsedTime_v2") &&
            bind(handle, a.cuEventDestroy, "cuEventDestroy_v2") &&
            bind(handle, a.cuGetErrorString, "cuGetErrorString") &&
            bind(handle, a.cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled");
  if (!ok)
    return GpuStatus::failure(
        GpuError::DriverTooOld,
        "the CUDA driver (libcuda.so.1) lacks a needed entry point; is it "
        "older than CUDA 12?");
  api = a;
  return GpuStatus::success();
}

} // namespace pallasc::launch
