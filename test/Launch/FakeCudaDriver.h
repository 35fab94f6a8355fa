//===- FakeCudaDriver.h - A CUDA driver API table for tests ------*- C++ -*-===//
//
// A CudaDriverApi whose entry points record their calls in one FakeCuda
// state and return the results a test sets, so the launch library's paths
// (success and every failure) run without a GPU. Not thread-safe: one
// FakeCuda at a time.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_TEST_LAUNCH_FAKECUDADRIVER_H
#define PALLASC_TEST_LAUNCH_FAKECUDADRIVER_H

#include "src/Launch/CudaDriverApi.h"
#include "test/Launch/FakeGpuApi.h"

#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace pallasc::test {

/// What the fake driver has and what it was asked. Results default to
/// success; a test sets `fail[<entry point>]` to make that call fail.
struct FakeCuda
    : FakeGpuApi<FakeCuda, launch::CUresult, launch::cuda::kSuccess> {
  int major = 9, minor = 0;
  std::string deviceName = "Fake H100";
  std::string jitLog = "ptxas fatal: fake";

  // Recorded calls (and `calls`).
  std::set<launch::CUdeviceptr> live;
  launch::CUdeviceptr nextAddress = 0x10000;
  bool contextRetained = false;
  /// What cuCtxGetCurrent reports (null: no current context).
  void *currentContext = nullptr;
  /// Added to the context's id (cuCtxGetId): a new context at the address
  /// of a destroyed one.
  unsigned long long contextGeneration = 0;
  /// Async uploads, with the stream they were ordered on; async frees.
  std::vector<void *> asyncStreams;
  std::vector<launch::CUdeviceptr> asyncFrees;
  int funcAttribute = -1, funcAttributeValue = -1;
  std::vector<std::pair<launch::CUdeviceptr, std::vector<char>>> uploads;
  struct Launch {
    unsigned grid[3], block[3], shared;
    void **params;
    void *stream;
  };
  std::vector<Launch> launches;
  /// When set, each launch also copies this many parameters (8 bytes each)
  /// into launchedParams: the array of an asynchronous launcher is gone when
  /// the call returns.
  size_t copyParams = 0;
  std::vector<std::vector<uint64_t>> launchedParams;
  /// The last cuTensorMapEncodeTiled's arguments.
  struct Encode {
    int dataType;
    uint32_t rank;
    uint64_t address;
    uint64_t dim[2], stride;
    uint32_t box[2], elementStrides[2];
    int interleave, swizzle, l2, oob;
  } encode{};
  /// The address of every cuTensorMapEncodeTiled, in order.
  std::vector<uint64_t> encodedAddresses;

  /// The table whose entry points act on `*this` (made current).
  launch::CudaDriverApi api();
};

inline launch::CudaDriverApi FakeCuda::api() {
  using namespace launch;
  current = this;
  CudaDriverApi a;
  a.cuInit = [](unsigned) { return FakeCuda::call("cuInit"); };
  a.cuDeviceGetCount = [](int *n) {
    *n = FakeCuda::current->deviceCount;
    return FakeCuda::call("cuDeviceGetCount");
  };
  a.cuDeviceGet = [](CUdevice *d, int ordinal) {
    *d = ordinal;
    return FakeCuda::call("cuDeviceGet");
  };
  a.cuDeviceGetAttribute = [](int *v, int attr, CUdevice) {
    *v = attr == cuda::kAttrComputeCapabilityMajor ? FakeCuda::current->major
                                                   : FakeCuda::current->minor;
    return FakeCuda::call("cuDeviceGetAttribute");
  };
  a.cuDeviceGetName = [](char *name, int length, CUdevice) {
    std::strncpy(name, FakeCuda::current->deviceName.c_str(), length);
    return FakeCuda::call("cuDeviceGetName");
  };
  a.cuDevicePrimaryCtxRetain = [](void **ctx, CUdevice) {
    static int context;
    *ctx = &context;
    CUresult r = FakeCuda::call("cuDevicePrimaryCtxRetain");
    FakeCuda::current->contextRetained = r == cuda::kSuccess;
    return r;
  };
  a.cuDevicePrimaryCtxRelease = [](CUdevice) {
    FakeCuda::current->contextRetained = false;
    return FakeCuda::call("cuDevicePrimaryCtxRelease");
  };
  a.cuCtxSetCurrent = [](void *ctx) {
    CUresult r = FakeCuda::call("cuCtxSetCurrent");
    if (r == cuda::kSuccess)
      FakeCuda::current->currentContext = ctx;
    return r;
  };
  a.cuCtxGetCurrent = [](void **ctx) {
    *ctx = FakeCuda::current->currentContext;
    return FakeCuda::call("cuCtxGetCurrent");
  };
  a.cuCtxGetId = [](void *ctx, unsigned long long *id) {
    *id = reinterpret_cast<uintptr_t>(ctx) +
          FakeCuda::current->contextGeneration;
    return FakeCuda::call("cuCtxGetId");
  };
  a.cuCtxGetDevice = [](CUdevice *d) {
    *d = 0;
    return FakeCuda::call("cuCtxGetDevice");
  };
  a.cuMemAllocAsync = [](CUdeviceptr *p, size_t bytes, void *stream) {
    CUresult r = FakeCuda::call("cuMemAllocAsync");
    if (r == cuda::kSuccess) {
      FakeCuda &f = *FakeCuda::current;
      *p = f.nextAddress;
      f.nextAddress += (bytes + 255) / 256 * 256;
      f.live.insert(*p);
      f.asyncStreams.push_back(stream);
    }
    return r;
  };
  a.cuMemFreeAsync = [](CUdeviceptr p, void *stream) {
    FakeCuda::current->live.erase(p);
    FakeCuda::current->asyncFrees.push_back(p);
    FakeCuda::current->asyncStreams.push_back(stream);
    return FakeCuda::call("cuMemFreeAsync");
  };
  a.cuMemcpyHtoDAsync = [](CUdeviceptr dst, const void *src, size_t bytes,
                           void *stream) {
    const char *s = static_cast<const char *>(src);
    FakeCuda::current->uploads.push_back({dst, std::vector<char>(s, s + bytes)});
    FakeCuda::current->asyncStreams.push_back(stream);
    return FakeCuda::call("cuMemcpyHtoDAsync");
  };
  a.cuCtxSynchronize = [] { return FakeCuda::call("cuCtxSynchronize"); };
  a.cuModuleLoadDataEx = [](void **module, const void *, unsigned n,
                            int *options, void **values) {
    static int m;
    *module = &m;
    CUresult r = FakeCuda::call("cuModuleLoadDataEx");
    // The JIT error log goes into the buffer the caller passed.
    for (unsigned i = 0; r != cuda::kSuccess && i < n; ++i)
      if (options[i] == cuda::kJitErrorLogBuffer)
        std::strcpy(static_cast<char *>(values[i]),
                    FakeCuda::current->jitLog.c_str());
    return r;
  };
  a.cuModuleUnload = [](void *) { return FakeCuda::call("cuModuleUnload"); };
  a.cuModuleGetFunction = [](void **fn, void *, const char *) {
    static int f;
    *fn = &f;
    return FakeCuda::call("cuModuleGetFunction");
  };
  a.cuFuncSetAttribute = [](void *, int attr, int value) {
    FakeCuda::current->funcAttribute = attr;
    FakeCuda::current->funcAttributeValue = value;
    return FakeCuda::call("cuFuncSetAttribute");
  };
  a.cuMemAlloc = [](CUdeviceptr *p, size_t bytes) {
    CUresult r = FakeCuda::call("cuMemAlloc");
    if (r == cuda::kSuccess) {
      FakeCuda &f = *FakeCuda::current;
      *p = f.nextAddress;
      f.nextAddress += (bytes + 255) / 256 * 256;
      f.live.insert(*p);
    }
    return r;
  };
  a.cuMemFree = [](CUdeviceptr p) {
    FakeCuda::current->live.erase(p);
    return FakeCuda::call("cuMemFree");
  };
  a.cuMemcpyHtoD = [](CUdeviceptr dst, const void *src, size_t bytes) {
    const char *s = static_cast<const char *>(src);
    FakeCuda::current->uploads.push_back({dst, std::vector<char>(s, s + bytes)});
    return FakeCuda::call("cuMemcpyHtoD");
  };
  a.cuMemcpyDtoH = [](void *, CUdeviceptr, size_t) {
    return FakeCuda::call("cuMemcpyDtoH");
  };
  a.cuMemcpyDtoD = [](CUdeviceptr, CUdeviceptr, size_t) {
    return FakeCuda::call("cuMemcpyDtoD");
  };
  a.cuLaunchKernel = [](void *, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned shared,
                        void *stream, void **params, void **) {
    FakeCuda &f = *FakeCuda::current;
    f.launches.push_back({{gx, gy, gz}, {bx, by, bz}, shared, params, stream});
    std::vector<uint64_t> values(f.copyParams, 0);
    for (size_t i = 0; i < f.copyParams; ++i)
      std::memcpy(&values[i], params[i], sizeof(uint64_t));
    f.launchedParams.push_back(values);
    return FakeCuda::call("cuLaunchKernel");
  };
  a.cuEventCreate = [](void **e, unsigned) {
    static int event;
    *e = &event;
    return FakeCuda::call("cuEventCreate");
  };
  a.cuEventRecord = [](void *, void *) {
    return FakeCuda::call("cuEventRecord");
  };
  a.cuEventSynchronize = [](void *) {
    return FakeCuda::call("cuEventSynchronize");
  };
  a.cuEventElapsedTime = [](float *ms, void *, void *) {
    *ms = 10.0f;
    return FakeCuda::call("cuEventElapsedTime");
  };
  a.cuEventDestroy = [](void *) { return FakeCuda::call("cuEventDestroy"); };
  a.cuGetErrorString = [](CUresult r, const char **s) {
    *s = r == 2 ? "CUDA_ERROR_OUT_OF_MEMORY" : "CUDA_ERROR_FAKE";
    return cuda::kSuccess;
  };
  a.cuTensorMapEncodeTiled = [](void *map, int dataType, uint32_t rank,
                                void *address, const uint64_t *dim,
                                const uint64_t *strides, const uint32_t *box,
                                const uint32_t *elementStrides, int interleave,
                                int swizzle, int l2, int oob) {
    FakeCuda::Encode &e = FakeCuda::current->encode;
    FakeCuda::current->encodedAddresses.push_back(
        reinterpret_cast<uint64_t>(address));
    e = {dataType,
         rank,
         reinterpret_cast<uint64_t>(address),
         {dim[0], dim[1]},
         strides[0],
         {box[0], box[1]},
         {elementStrides[0], elementStrides[1]},
         interleave,
         swizzle,
         l2,
         oob};
    std::memset(map, 0xab, 128);
    return FakeCuda::call("cuTensorMapEncodeTiled");
  };
  return a;
}

} // namespace pallasc::test

#endif // PALLASC_TEST_LAUNCH_FAKECUDADRIVER_H
