//===- CudaDriver.h - The CUDA driver API, loaded at run time --*- C++ -*-===//
//
// `pallasc run --target cuda:<arch>` talks to the GPU through the CUDA
// driver API, opened with dlopen("libcuda.so.1") when a run needs it: the
// build needs no CUDA headers or libraries, and a machine without a GPU (or
// without the driver) gets a clear error instead of a link failure.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_RUNTIME_CUDADRIVER_H
#define PALLASC_SRC_RUNTIME_CUDADRIVER_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace pallasc::runtime {

/// One GPU, its primary context, and one loaded PTX module.
class CudaDevice {
public:
  ~CudaDevice();

  /// Opens libcuda, initializes device `ordinal`; nullptr with `error` set
  /// when there is no driver or no device.
  static std::unique_ptr<CudaDevice> open(int ordinal, std::string &error);

  /// "sm_90" for a compute capability 9.0 device.
  std::string arch() const;
  std::string name() const { return deviceName; }

  /// JIT-loads `ptx` and looks `entry` up; sets the dynamic shared memory
  /// limit to `sharedBytes` when it exceeds the default 48 KiB.
  bool load(const std::string &ptx, const std::string &entry,
            int64_t sharedBytes, std::string &error);

  /// Device memory.
  bool alloc(size_t bytes, uint64_t &ptr, std::string &error);
  bool upload(uint64_t dst, const void *src, size_t bytes,
              std::string &error);
  bool download(void *dst, uint64_t src, size_t bytes, std::string &error);
  /// A CUtensorMap of the 2-D 16-bit array at device address `array`
  /// (128-byte swizzle, boxes of `boxShape`, zeros out of bounds), encoded
  /// with cuTensorMapEncodeTiled and copied to device memory: `ptr`.
  bool tensorMap(uint64_t array, bool bf16, const int64_t globalShape[2],
                 const int64_t boxShape[2], uint64_t &ptr,
                 std::string &error);
  bool copy(uint64_t dst, uint64_t src, size_t bytes, std::string &error);

  /// Launches the loaded kernel and waits for it. `params` holds pointers to
  /// the argument values (CUdeviceptr / int32). With `reps` > 0 the launch
  /// is then timed over `reps` repetitions: `ms` is the mean.
  bool launch(const int64_t grid[3], int64_t threads, int64_t sharedBytes,
              std::vector<void *> &params, int reps, double &ms,
              std::string &error);

  /// Mean time of a device-to-device copy of `bytes` (the bandwidth
  /// reference), over `reps` copies.
  bool timeCopy(uint64_t dst, uint64_t src, size_t bytes, int reps,
                double &ms, std::string &error);

private:
  CudaDevice() = default;
  struct Api;
  std::unique_ptr<Api> api;
  int device = 0;
  int major = 0, minor = 0;
  std::string deviceName;
  void *context = nullptr, *module = nullptr, *function = nullptr;
  std::vector<uint64_t> allocations;
};

} // namespace pallasc::runtime

#endif // PALLASC_SRC_RUNTIME_CUDADRIVER_H
