//===- CudaKernel.cpp - Loading and launching CUDA kernels --------*- C++ -*-===//

#include "src/Launch/CudaKernel.h"

#include <algorithm>

namespace pallasc::launch {

namespace {

/// The status of a failed driver call: `what: <driver's description>`.
GpuStatus driverFailure(const CudaDriverApi &api, GpuError error,
                        CUresult result, const std::string &what) {
  return GpuStatus::failure(error, what + ": " + api.describe(result), result);
}

} // namespace

#define PALLASC_CU_CHECK(call, error, what)                                  \
  do {                                                                       \
    CUresult r_ = (call);                                                    \
    if (r_ != cuda::kSuccess)                                                \
      return driverFailure(api, (error), r_, (what));                       \
  } while (0)

//===----------------------------------------------------------------------===//
// Kernels, tensor maps, launches
//===----------------------------------------------------------------------===//

GpuStatus loadCudaKernel(const CudaDriverApi &api, const void *image,
                         const char *format, const std::string &entry,
                         int64_t sharedBytes, CudaKernel &kernel) {
  std::vector<char> log(16384, 0);
  int options[] = {cuda::kJitErrorLogBuffer,
                   cuda::kJitErrorLogBufferSizeBytes};
  void *values[] = {log.data(),
                    reinterpret_cast<void *>(uintptr_t(log.size() - 1))};
  CUresult r = api.cuModuleLoadDataEx(&kernel.module, image, 2, options,
                                      values);
  if (r != cuda::kSuccess)
    return GpuStatus::failure(GpuError::LoadFailed,
                              "the CUDA driver cannot load the " +
                                  std::string(format) + ": " +
                                  api.describe(r) + "\n" + log.data(),
                              r);
  PALLASC_CU_CHECK(
      api.cuModuleGetFunction(&kernel.function, kernel.module, entry.c_str()),
      GpuError::KernelNotFound,
      "no kernel named '" + entry + "' in the " + std::string(format));
  if (needsSharedMemoryOptIn(sharedBytes))
    PALLASC_CU_CHECK(
        api.cuFuncSetAttribute(kernel.function,
                               cuda::kFuncAttrMaxDynamicSharedSizeBytes,
                               static_cast<int>(sharedBytes)),
        GpuError::SharedMemoryTooLarge,
        "the kernel needs " + std::to_string(sharedBytes) +
            " bytes of shared memory, more than this GPU allows");
  return GpuStatus::success();
}

void unloadCudaKernel(const CudaDriverApi &api, CudaKernel &kernel) {
  if (kernel.module)
    api.cuModuleUnload(kernel.module);
  kernel = CudaKernel();
}

CudaTensorMapEncoding cudaTensorMapEncoding(const GpuTensorMap &map,
                                            uint64_t globalAddress) {
  // Dimensions innermost first; 16-bit elements.
  CudaTensorMapEncoding e;
  e.dataType = map.bf16 ? cuda::kTensorMapDataTypeBFloat16
                        : cuda::kTensorMapDataTypeFloat16;
  int rank = std::clamp(map.rank, 2, kMaxTensorMapRank);
  e.rank = static_cast<uint32_t>(rank);
  e.globalAddress = globalAddress;
  uint64_t stride = 2;
  for (int i = 0; i < rank; ++i) {
    int d = rank - 1 - i; // innermost first
    e.globalDim[i] = static_cast<uint64_t>(map.globalShape[d]);
    e.boxDim[i] = static_cast<uint32_t>(map.boxShape[d]);
    stride *= e.globalDim[i];
    if (i + 1 < rank)
      e.globalStrides[i] = stride;
  }
  return e;
}

GpuStatus encodeCudaTensorMap(const CudaDriverApi &api, const GpuTensorMap &map,
                              uint64_t globalAddress,
                              CudaTensorMapImage &image) {
  if (globalAddress % 16 != 0)
    return GpuStatus::failure(
        GpuError::Misaligned,
        std::string("the tensor map of ") +
            (map.isOutput ? "outputs[" : "inputs[") +
            std::to_string(map.input) +
            "] needs a 16-byte aligned address (TMA), got " +
            std::to_string(globalAddress));
  CudaTensorMapEncoding e = cudaTensorMapEncoding(map, globalAddress);
  PALLASC_CU_CHECK(
      api.cuTensorMapEncodeTiled(
          image.bytes, e.dataType, e.rank,
          reinterpret_cast<void *>(static_cast<uintptr_t>(e.globalAddress)),
          e.globalDim, e.globalStrides, e.boxDim, e.elementStrides,
          e.interleave, e.swizzle, e.l2Promotion, e.oobFill),
      GpuError::TensorMapFailed, "cannot encode a tensor map");
  return GpuStatus::success();
}

GpuStatus launchCudaKernel(const CudaDriverApi &api, const CudaKernel &kernel,
                           const GpuLaunchGeometry &geometry,
                           GpuKernelArgs &args, void *stream) {
  if (geometry.numBlocks() == 0)
    return GpuStatus::success();
  PALLASC_CU_CHECK(
      api.cuLaunchKernel(kernel.function,
                         static_cast<unsigned>(geometry.grid[0]),
                         static_cast<unsigned>(geometry.grid[1]),
                         static_cast<unsigned>(geometry.grid[2]),
                         static_cast<unsigned>(geometry.block[0]),
                         static_cast<unsigned>(geometry.block[1]),
                         static_cast<unsigned>(geometry.block[2]),
                         static_cast<unsigned>(geometry.sharedBytes), stream,
                         args.data(), nullptr),
      GpuError::LaunchFailed, "kernel launch failed");
  return GpuStatus::success();
}

//===----------------------------------------------------------------------===//
// CudaDevice
//===----------------------------------------------------------------------===//

CudaDevice::~CudaDevice() {
  for (uint64_t p : allocations)
    api.cuMemFree(p);
  unloadCudaKernel(api, kernel);
  if (context)
    api.cuDevicePrimaryCtxRelease(device);
}

/// NoDevice "no CUDA device is available (<the driver's error, or 0
/// devices>)".
static GpuStatus noCudaDevice(const CudaDriverApi &api, CUresult r) {
  return GpuStatus::failure(GpuError::NoDevice,
                            "no CUDA device is available (" +
                                (r != cuda::kSuccess
                                     ? api.describe(r)
                                     : std::string("0 devices")) +
                                ")",
                            r);
}

GpuStatus cudaDeviceCount(const CudaDriverApi &api, int &count) {
  count = 0;
  CUresult r = api.cuDeviceGetCount(&count);
  if (r != cuda::kSuccess || count == 0)
    return noCudaDevice(api, r);
  return GpuStatus::success();
}

GpuStatus CudaDevice::open(const CudaDriverApi &api, int ordinal,
                           std::unique_ptr<CudaDevice> &out) {
  std::unique_ptr<CudaDevice> dev(new CudaDevice(api));
  CUresult r = api.cuInit(0);
  if (r != cuda::kSuccess)
    return noCudaDevice(api, r);
  int count = 0;
  if (GpuStatus s = cudaDeviceCount(api, count); !s)
    return s;
  if (ordinal >= count)
    return GpuStatus::failure(GpuError::InvalidDevice,
                              "CUDA device " + std::to_string(ordinal) +
                                  " does not exist (" + std::to_string(count) +
                                  " found)");
  dev->device = ordinal;
  char name[256] = {0};
  if (api.cuDeviceGet(&dev->device, ordinal) ||
      api.cuDeviceGetAttribute(&dev->major, cuda::kAttrComputeCapabilityMajor,
                               dev->device) ||
      api.cuDeviceGetAttribute(&dev->minor, cuda::kAttrComputeCapabilityMinor,
                               dev->device) ||
      api.cuDeviceGetName(name, sizeof(name) - 1, dev->device) ||
      api.cuDevicePrimaryCtxRetain(&dev->context, dev->device) ||
      api.cuCtxSetCurrent(dev->context))
    return GpuStatus::failure(GpuError::DeviceSetup,
                              "cannot set up CUDA device " +
                                  std::to_string(ordinal));
  dev->deviceName = name;
  out = std::move(dev);
  return GpuStatus::success();
}

std::string cudaArchName(int major, int minor) {
  return "sm_" + std::to_string(major) + std::to_string(minor);
}

std::string CudaDevice::arch() const { return cudaArchName(major, minor); }

GpuStatus CudaDevice::load(const std::string &ptx, const std::string &entry,
                           int64_t sharedBytes) {
  unloadCudaKernel(api, kernel);
  return loadCudaKernel(api, ptx.c_str(), "PTX", entry, sharedBytes, kernel);
}

GpuStatus CudaDevice::alloc(size_t bytes, uint64_t &ptr) {
  CUdeviceptr p = 0;
  PALLASC_CU_CHECK(api.cuMemAlloc(&p, std::max<size_t>(bytes, 16)),
                   GpuError::OutOfMemory,
                   "cannot allocate " + std::to_string(bytes) +
                       " bytes on the GPU");
  allocations.push_back(p);
  ptr = p;
  return GpuStatus::success();
}

GpuStatus CudaDevice::tensorMap(const GpuTensorMap &map, uint64_t array,
                                uint64_t &ptr) {
  CudaTensorMapImage image;
  if (GpuStatus s = encodeCudaTensorMap(api, map, array, image); !s)
    return s;
  if (GpuStatus s = alloc(sizeof image.bytes, ptr); !s)
    return s;
  return upload(ptr, image.bytes, sizeof image.bytes);
}

GpuStatus CudaDevice::upload(uint64_t dst, const void *src, size_t bytes) {
  if (bytes)
    PALLASC_CU_CHECK(api.cuMemcpyHtoD(dst, src, bytes), GpuError::CopyFailed,
                     "copy to the GPU failed");
  return GpuStatus::success();
}

GpuStatus CudaDevice::download(void *dst, uint64_t src, size_t bytes) {
  if (bytes)
    PALLASC_CU_CHECK(api.cuMemcpyDtoH(dst, src, bytes), GpuError::CopyFailed,
                     "copy from the GPU failed");
  return GpuStatus::success();
}

GpuStatus CudaDevice::copy(uint64_t dst, uint64_t src, size_t bytes) {
  if (bytes)
    PALLASC_CU_CHECK(api.cuMemcpyDtoD(dst, src, bytes), GpuError::CopyFailed,
                     "copy on the GPU failed");
  return GpuStatus::success();
}

GpuStatus CudaDevice::synchronize() {
  PALLASC_CU_CHECK(api.cuCtxSynchronize(), GpuError::KernelFailed,
                   "the kernel failed");
  return GpuStatus::success();
}

GpuStatus CudaDevice::launch(const GpuLaunchGeometry &geometry,
                             GpuKernelArgs &args) {
  if (geometry.numBlocks() == 0)
    return GpuStatus::success();
  if (GpuStatus s = launchCudaKernel(api, kernel, geometry, args); !s)
    return s;
  PALLASC_CU_CHECK(api.cuCtxSynchronize(), GpuError::KernelFailed,
                   "the kernel failed");
  return GpuStatus::success();
}

namespace {

/// Times `reps` runs of `step` (a GpuStatus() callable) between two events
/// recorded on the default stream: `ms` is their total time over `divisor`.
/// A step that fails returns its status; the stop event's synchronization
/// fails with `syncError` and `syncWhat` (a failed run).
template <typename Step>
GpuStatus timeWithEvents(const CudaDriverApi &api, int reps, Step step,
                         GpuError syncError, const char *syncWhat, int divisor,
                         double &ms) {
  const GpuError timing = GpuError::DriverCallFailed;
  void *start = nullptr, *stop = nullptr;
  PALLASC_CU_CHECK(api.cuEventCreate(&start, 0), timing, "cuEventCreate");
  PALLASC_CU_CHECK(api.cuEventCreate(&stop, 0), timing, "cuEventCreate");
  PALLASC_CU_CHECK(api.cuEventRecord(start, nullptr), timing, "cuEventRecord");
  for (int i = 0; i < reps; ++i)
    if (GpuStatus s = step(); !s)
      return s;
  PALLASC_CU_CHECK(api.cuEventRecord(stop, nullptr), timing, "cuEventRecord");
  PALLASC_CU_CHECK(api.cuEventSynchronize(stop), syncError, syncWhat);
  float total = 0;
  PALLASC_CU_CHECK(api.cuEventElapsedTime(&total, start, stop), timing,
                   "cuEventElapsedTime");
  api.cuEventDestroy(start);
  api.cuEventDestroy(stop);
  ms = total / divisor;
  return GpuStatus::success();
}

} // namespace

GpuStatus CudaDevice::timeLaunches(const GpuLaunchGeometry &geometry,
                                   GpuKernelArgs &args, int reps, double &ms) {
  if (geometry.numBlocks() == 0)
    return GpuStatus::success();
  if (GpuStatus s = launch(geometry, args); !s)
    return s;
  ms = 0;
  if (reps <= 0)
    return GpuStatus::success();
  return timeWithEvents(
      api, reps, [&] { return launchCudaKernel(api, kernel, geometry, args); },
      GpuError::KernelFailed, "the kernel failed", reps, ms);
}

GpuStatus CudaDevice::timeCopy(uint64_t dst, uint64_t src, size_t bytes,
                               int reps, double &ms) {
  auto copy = [&]() -> GpuStatus {
    PALLASC_CU_CHECK(api.cuMemcpyDtoD(dst, src, bytes), GpuError::CopyFailed,
                     "copy on the GPU failed");
    return GpuStatus::success();
  };
  if (GpuStatus s = copy(); !s)
    return s;
  return timeWithEvents(api, reps, copy, GpuError::CopyFailed,
                        "copy on the GPU failed", std::max(reps, 1), ms);
}

#undef PALLASC_CU_CHECK

} // namespace pallasc::launch
