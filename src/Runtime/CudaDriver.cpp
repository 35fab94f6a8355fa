//===- CudaDriver.cpp - The CUDA driver API, loaded at run time -*- C++ -*-===//

#include "src/Runtime/CudaDriver.h"

#include <algorithm>
#include <dlfcn.h>

namespace pallasc::runtime {

namespace {
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
constexpr int kAttrCapabilityMajor = 75;
constexpr int kAttrCapabilityMinor = 76;
constexpr int kFuncAttrMaxDynamicShared = 8;
constexpr int kJitErrorLogBuffer = 5;
constexpr int kJitErrorLogBufferSize = 6;
} // namespace

/// The driver entry points, looked up by name.
struct CudaDevice::Api {
  void *handle = nullptr;
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(void **, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxSetCurrent)(void *);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuModuleLoadDataEx)(void **, const void *, unsigned, int *,
                                 void **);
  CUresult (*cuModuleUnload)(void *);
  CUresult (*cuModuleGetFunction)(void **, void *, const char *);
  CUresult (*cuFuncSetAttribute)(void *, int, int);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*cuMemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
  CUresult (*cuLaunchKernel)(void *, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, void *, void **,
                             void **);
  CUresult (*cuEventCreate)(void **, unsigned);
  CUresult (*cuEventRecord)(void *, void *);
  CUresult (*cuEventSynchronize)(void *);
  CUresult (*cuEventElapsedTime)(float *, void *, void *);
  CUresult (*cuEventDestroy)(void *);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  /// cuTensorMapEncodeTiled (CUDA 12+): the CUtensorMap (128 bytes,
  /// 64-byte aligned) a TMA copy reads.
  CUresult (*cuTensorMapEncodeTiled)(void *, int, uint32_t, void *,
                                     const uint64_t *, const uint64_t *,
                                     const uint32_t *, const uint32_t *, int,
                                     int, int, int);

  std::string describe(CUresult r) {
    const char *s = nullptr;
    if (cuGetErrorString && cuGetErrorString(r, &s) == 0 && s)
      return std::string(s) + " (" + std::to_string(r) + ")";
    return "CUDA error " + std::to_string(r);
  }
};

namespace {
template <typename F> bool bind(void *handle, F &fn, const char *name) {
  fn = reinterpret_cast<F>(dlsym(handle, name));
  return fn != nullptr;
}
} // namespace

#define CU_CHECK(call, what)                                                 \
  do {                                                                       \
    CUresult r_ = (call);                                                    \
    if (r_ != 0) {                                                           \
      error = std::string(what) + ": " + api->describe(r_);                  \
      return false;                                                          \
    }                                                                        \
  } while (0)

CudaDevice::~CudaDevice() {
  if (!api)
    return;
  for (uint64_t p : allocations)
    api->cuMemFree(p);
  if (module)
    api->cuModuleUnload(module);
  if (context)
    api->cuDevicePrimaryCtxRelease(device);
}

std::unique_ptr<CudaDevice> CudaDevice::open(int ordinal, std::string &error) {
  void *handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    error = "cannot load the CUDA driver (libcuda.so.1): " +
            std::string(dlerror()) +
            "; running on a GPU needs an NVIDIA GPU and its driver (use "
            "--emulate to run the CUDA lowering on the CPU instead)";
    return nullptr;
  }
  std::unique_ptr<CudaDevice> dev(new CudaDevice());
  dev->api = std::make_unique<Api>();
  Api &a = *dev->api;
  a.handle = handle;
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
            bind(handle, a.cuModuleLoadDataEx, "cuModuleLoadDataEx") &&
            bind(handle, a.cuModuleUnload, "cuModuleUnload") &&
            bind(handle, a.cuModuleGetFunction, "cuModuleGetFunction") &&
            bind(handle, a.cuFuncSetAttribute, "cuFuncSetAttribute") &&
            bind(handle, a.cuMemAlloc, "cuMemAlloc_v2") &&
            bind(handle, a.cuMemFree, "cuMemFree_v2") &&
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
  if (!ok) {
    error = "the CUDA driver (libcuda.so.1) lacks a needed entry point; is "
            "it older than CUDA 12?";
    return nullptr;
  }
  CUresult r = a.cuInit(0);
  int count = 0;
  if (r == 0)
    r = a.cuDeviceGetCount(&count);
  if (r != 0 || count == 0) {
    error = "no CUDA device is available (" +
            (r != 0 ? a.describe(r) : std::string("0 devices")) +
            "); use --emulate to run the CUDA lowering on the CPU instead";
    return nullptr;
  }
  if (ordinal >= count) {
    error = "CUDA device " + std::to_string(ordinal) + " does not exist (" +
            std::to_string(count) + " found)";
    return nullptr;
  }
  dev->device = ordinal;
  char name[256] = {0};
  if (a.cuDeviceGet(&dev->device, ordinal) ||
      a.cuDeviceGetAttribute(&dev->major, kAttrCapabilityMajor, dev->device) ||
      a.cuDeviceGetAttribute(&dev->minor, kAttrCapabilityMinor, dev->device) ||
      a.cuDeviceGetName(name, sizeof(name) - 1, dev->device) ||
      a.cuDevicePrimaryCtxRetain(&dev->context, dev->device) ||
      a.cuCtxSetCurrent(dev->context)) {
    error = "cannot set up CUDA device " + std::to_string(ordinal);
    return nullptr;
  }
  dev->deviceName = name;
  return dev;
}

std::string CudaDevice::arch() const {
  return "sm_" + std::to_string(major) + std::to_string(minor);
}

bool CudaDevice::load(const std::string &ptx, const std::string &entry,
                      int64_t sharedBytes, std::string &error) {
  std::vector<char> log(16384, 0);
  int options[] = {kJitErrorLogBuffer, kJitErrorLogBufferSize};
  void *values[] = {log.data(),
                    reinterpret_cast<void *>(uintptr_t(log.size() - 1))};
  CUresult r = api->cuModuleLoadDataEx(&module, ptx.c_str(), 2, options,
                                       values);
  if (r != 0) {
    error = "the CUDA driver cannot load the PTX: " + api->describe(r) +
            "\n" + log.data();
    return false;
  }
  CU_CHECK(api->cuModuleGetFunction(&function, module, entry.c_str()),
           "no kernel named '" + entry + "' in the PTX");
  if (sharedBytes > 48 * 1024)
    CU_CHECK(api->cuFuncSetAttribute(function, kFuncAttrMaxDynamicShared,
                                     static_cast<int>(sharedBytes)),
             "the kernel needs " + std::to_string(sharedBytes) +
                 " bytes of shared memory, more than this GPU allows");
  return true;
}

bool CudaDevice::alloc(size_t bytes, uint64_t &ptr, std::string &error) {
  CUdeviceptr p = 0;
  CU_CHECK(api->cuMemAlloc(&p, std::max<size_t>(bytes, 16)),
           "cannot allocate " + std::to_string(bytes) + " bytes on the GPU");
  allocations.push_back(p);
  ptr = p;
  return true;
}

bool CudaDevice::tensorMap(uint64_t array, bool bf16,
                           const int64_t globalShape[2],
                           const int64_t boxShape[2], uint64_t &ptr,
                           std::string &error) {
  // The driver's enums: CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6, _BFLOAT16 = 9;
  // INTERLEAVE_NONE = 0; SWIZZLE_128B = 3; L2_PROMOTION_L2_128B = 2;
  // FLOAT_OOB_FILL_NONE = 0 (zeros). Dimensions innermost first.
  alignas(64) unsigned char map[128] = {};
  uint64_t dims[2] = {static_cast<uint64_t>(globalShape[1]),
                      static_cast<uint64_t>(globalShape[0])};
  uint64_t strides[1] = {static_cast<uint64_t>(globalShape[1]) * 2};
  uint32_t box[2] = {static_cast<uint32_t>(boxShape[1]),
                     static_cast<uint32_t>(boxShape[0])};
  uint32_t elementStrides[2] = {1, 1};
  CU_CHECK(api->cuTensorMapEncodeTiled(map, bf16 ? 9 : 6, 2,
                                       reinterpret_cast<void *>(array), dims,
                                       strides, box, elementStrides, 0, 3, 2,
                                       0),
           "cannot encode a tensor map");
  if (!alloc(sizeof map, ptr, error) || !upload(ptr, map, sizeof map, error))
    return false;
  return true;
}

bool CudaDevice::upload(uint64_t dst, const void *src, size_t bytes,
                        std::string &error) {
  if (bytes)
    CU_CHECK(api->cuMemcpyHtoD(dst, src, bytes), "copy to the GPU failed");
  return true;
}

bool CudaDevice::download(void *dst, uint64_t src, size_t bytes,
                          std::string &error) {
  if (bytes)
    CU_CHECK(api->cuMemcpyDtoH(dst, src, bytes), "copy from the GPU failed");
  return true;
}

bool CudaDevice::copy(uint64_t dst, uint64_t src, size_t bytes,
                      std::string &error) {
  if (bytes)
    CU_CHECK(api->cuMemcpyDtoD(dst, src, bytes), "copy on the GPU failed");
  return true;
}

bool CudaDevice::launch(const int64_t grid[3], int64_t threads,
                        int64_t sharedBytes, std::vector<void *> &params,
                        int reps, double &ms, std::string &error) {
  auto once = [&]() {
    return api->cuLaunchKernel(
        function, static_cast<unsigned>(grid[0]),
        static_cast<unsigned>(grid[1]), static_cast<unsigned>(grid[2]),
        static_cast<unsigned>(threads), 1, 1,
        static_cast<unsigned>(sharedBytes), nullptr, params.data(), nullptr);
  };
  if (grid[0] * grid[1] * grid[2] == 0)
    return true;
  CU_CHECK(once(), "kernel launch failed");
  CU_CHECK(api->cuCtxSynchronize(), "the kernel failed");
  ms = 0;
  if (reps <= 0)
    return true;
  void *start = nullptr, *stop = nullptr;
  CU_CHECK(api->cuEventCreate(&start, 0), "cuEventCreate");
  CU_CHECK(api->cuEventCreate(&stop, 0), "cuEventCreate");
  CU_CHECK(api->cuEventRecord(start, nullptr), "cuEventRecord");
  for (int i = 0; i < reps; ++i)
    CU_CHECK(once(), "kernel launch failed");
  CU_CHECK(api->cuEventRecord(stop, nullptr), "cuEventRecord");
  CU_CHECK(api->cuEventSynchronize(stop), "the kernel failed");
  float total = 0;
  CU_CHECK(api->cuEventElapsedTime(&total, start, stop), "cuEventElapsedTime");
  api->cuEventDestroy(start);
  api->cuEventDestroy(stop);
  ms = total / reps;
  return true;
}

bool CudaDevice::timeCopy(uint64_t dst, uint64_t src, size_t bytes, int reps,
                          double &ms, std::string &error) {
  void *start = nullptr, *stop = nullptr;
  CU_CHECK(api->cuMemcpyDtoD(dst, src, bytes), "copy on the GPU failed");
  CU_CHECK(api->cuEventCreate(&start, 0), "cuEventCreate");
  CU_CHECK(api->cuEventCreate(&stop, 0), "cuEventCreate");
  CU_CHECK(api->cuEventRecord(start, nullptr), "cuEventRecord");
  for (int i = 0; i < reps; ++i)
    CU_CHECK(api->cuMemcpyDtoD(dst, src, bytes), "copy on the GPU failed");
  CU_CHECK(api->cuEventRecord(stop, nullptr), "cuEventRecord");
  CU_CHECK(api->cuEventSynchronize(stop), "copy on the GPU failed");
  float total = 0;
  CU_CHECK(api->cuEventElapsedTime(&total, start, stop), "cuEventElapsedTime");
  api->cuEventDestroy(start);
  api->cuEventDestroy(stop);
  ms = total / std::max(reps, 1);
  return true;
}

} // namespace pallasc::runtime
