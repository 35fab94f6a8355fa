//===- FakeHipRuntime.h - A HIP runtime API table for tests ------*- C++ -*-===//
//
// A HipRuntimeApi whose entry points record their calls in one FakeHip
// state and return the results a test sets, so the ROCm launcher's paths
// (success and every failure) run without ROCm or a GPU. Not thread-safe:
// one FakeHip at a time.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_TEST_LAUNCH_FAKEHIPRUNTIME_H
#define PALLASC_TEST_LAUNCH_FAKEHIPRUNTIME_H

#include "src/Launch/HipRuntimeApi.h"
#include "test/Launch/FakeGpuApi.h"

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace pallasc::test {

/// What the fake runtime has and what it was asked. Results default to
/// success; a test sets `fail[<entry point>]` to make that call fail.
struct FakeHip
    : FakeGpuApi<FakeHip, launch::hipError_t, launch::hip::kSuccess> {
  /// hipGetDevice's answer, and each device's gcnArchName.
  int currentDevice = 0;
  std::vector<std::string> archNames = {"gfx942:sramecc+:xnack-"};
  /// Where the fake's hipDeviceProp_t keeps the name (either layout).
  size_t archNameOffset = launch::hip::kPropsR0600ArchNameOffset;

  // Recorded calls (and `calls`).
  /// The image and device of each hipModuleLoadData.
  std::vector<std::pair<const void *, int>> loads;
  const void *attributeFunction = nullptr;
  int funcAttribute = -1, funcAttributeValue = -1;
  struct Launch {
    unsigned grid[3], block[3], shared;
    void *stream;
    std::vector<uint64_t> params; ///< copyParams of them, 8 bytes each
  };
  std::vector<Launch> launches;
  size_t copyParams = 0;

  /// The table whose entry points act on `*this` (made current).
  launch::HipRuntimeApi api();
};

namespace fakehip {
inline int function; ///< the address hipModuleGetFunction hands out
} // namespace fakehip

inline launch::HipRuntimeApi FakeHip::api() {
  using namespace launch;
  current = this;
  HipRuntimeApi a;
  a.archNameOffset = archNameOffset;
  a.hipInit = [](unsigned) { return FakeHip::call("hipInit"); };
  a.hipGetDeviceCount = [](int *n) {
    *n = FakeHip::current->deviceCount;
    return FakeHip::call("hipGetDeviceCount");
  };
  a.hipGetDevice = [](int *d) {
    *d = FakeHip::current->currentDevice;
    return FakeHip::call("hipGetDevice");
  };
  a.hipGetDeviceProperties = [](void *props, int device) {
    FakeHip &f = *FakeHip::current;
    // Garbage around the name, as a real struct has other fields there.
    std::memset(props, 0x7f, hip::kPropsBufferSize);
    char *name = static_cast<char *>(props) + f.archNameOffset;
    std::memset(name, 0, hip::kArchNameSize);
    const std::string &arch = f.archNames.at(static_cast<size_t>(device));
    std::memcpy(name, arch.data(), arch.size());
    return FakeHip::call("hipGetDeviceProperties");
  };
  a.hipModuleLoadData = [](void **module, const void *image) {
    static int m;
    *module = &m;
    FakeHip::current->loads.push_back({image, FakeHip::current->currentDevice});
    return FakeHip::call("hipModuleLoadData");
  };
  a.hipModuleUnload = [](void *) { return FakeHip::call("hipModuleUnload"); };
  a.hipModuleGetFunction = [](void **fn, void *, const char *) {
    *fn = &fakehip::function;
    return FakeHip::call("hipModuleGetFunction");
  };
  a.hipFuncSetAttribute = [](const void *fn, int attr, int value) {
    FakeHip::current->attributeFunction = fn;
    FakeHip::current->funcAttribute = attr;
    FakeHip::current->funcAttributeValue = value;
    return FakeHip::call("hipFuncSetAttribute");
  };
  a.hipModuleLaunchKernel = [](void *, unsigned gx, unsigned gy, unsigned gz,
                               unsigned bx, unsigned by, unsigned bz,
                               unsigned shared, void *stream, void **params,
                               void **) {
    FakeHip &f = *FakeHip::current;
    std::vector<uint64_t> values(f.copyParams, 0);
    for (size_t i = 0; i < f.copyParams; ++i)
      std::memcpy(&values[i], params[i], sizeof(uint64_t));
    f.launches.push_back({{gx, gy, gz}, {bx, by, bz}, shared, stream, values});
    return FakeHip::call("hipModuleLaunchKernel");
  };
  a.hipGetErrorName = [](hipError_t r) {
    return r == 100 ? "hipErrorNoDevice" : "hipErrorFake";
  };
  return a;
}

} // namespace pallasc::test

#endif // PALLASC_TEST_LAUNCH_FAKEHIPRUNTIME_H
