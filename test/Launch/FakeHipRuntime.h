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

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace pallasc::test {

/// What the fake runtime has and what it was asked. Results default to
/// success; a test sets `fail[<entry point>]` to make that call fail.
struct FakeHip {
  int deviceCount = 1;
  /// hipGetDevice's answer, and each device's gcnArchName.
  int currentDevice = 0;
  std::vector<std::string> archNames = {"gfx942:sramecc+:xnack-"};
  /// Where the fake's hipDeviceProp_t keeps the name (either layout).
  size_t archNameOffset = launch::hip::kPropsR0600ArchNameOffset;
  std::map<std::string, launch::hipError_t> fail;
  /// Calls of an entry point that succeed before `fail` makes it fail
  /// (absent: from the first).
  std::map<std::string, size_t> failAfter;

  // Recorded calls.
  std::vector<std::string> calls;
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

  size_t count(const std::string &call) const {
    size_t n = 0;
    for (const std::string &c : calls)
      n += c == call;
    return n;
  }

  /// The table whose entry points act on `*this` (made current).
  launch::HipRuntimeApi api();

  static FakeHip *current;
};

inline FakeHip *FakeHip::current = nullptr;

namespace fakehip {
inline launch::hipError_t call(const char *name) {
  FakeHip &f = *FakeHip::current;
  f.calls.push_back(name);
  auto it = f.fail.find(name);
  // failAfter[name]: that many calls succeed before `fail` applies.
  auto after = f.failAfter.find(name);
  if (after != f.failAfter.end() && f.count(name) <= after->second)
    return launch::hip::kSuccess;
  return it == f.fail.end() ? launch::hip::kSuccess : it->second;
}
inline int function; ///< the address hipModuleGetFunction hands out
} // namespace fakehip

inline launch::HipRuntimeApi FakeHip::api() {
  using namespace launch;
  current = this;
  HipRuntimeApi a;
  a.archNameOffset = archNameOffset;
  a.hipInit = [](unsigned) { return fakehip::call("hipInit"); };
  a.hipGetDeviceCount = [](int *n) {
    *n = FakeHip::current->deviceCount;
    return fakehip::call("hipGetDeviceCount");
  };
  a.hipGetDevice = [](int *d) {
    *d = FakeHip::current->currentDevice;
    return fakehip::call("hipGetDevice");
  };
  a.hipGetDeviceProperties = [](void *props, int device) {
    FakeHip &f = *FakeHip::current;
    // Garbage around the name, as a real struct has other fields there.
    std::memset(props, 0x7f, hip::kPropsBufferSize);
    char *name = static_cast<char *>(props) + f.archNameOffset;
    std::memset(name, 0, hip::kArchNameSize);
    const std::string &arch = f.archNames.at(static_cast<size_t>(device));
    std::memcpy(name, arch.data(), arch.size());
    return fakehip::call("hipGetDeviceProperties");
  };
  a.hipModuleLoadData = [](void **module, const void *image) {
    static int m;
    *module = &m;
    FakeHip::current->loads.push_back({image, FakeHip::current->currentDevice});
    return fakehip::call("hipModuleLoadData");
  };
  a.hipModuleUnload = [](void *) { return fakehip::call("hipModuleUnload"); };
  a.hipModuleGetFunction = [](void **fn, void *, const char *) {
    *fn = &fakehip::function;
    return fakehip::call("hipModuleGetFunction");
  };
  a.hipFuncSetAttribute = [](const void *fn, int attr, int value) {
    FakeHip::current->attributeFunction = fn;
    FakeHip::current->funcAttribute = attr;
    FakeHip::current->funcAttributeValue = value;
    return fakehip::call("hipFuncSetAttribute");
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
    return fakehip::call("hipModuleLaunchKernel");
  };
  a.hipGetErrorName = [](hipError_t r) {
    return r == 100 ? "hipErrorNoDevice" : "hipErrorFake";
  };
  return a;
}

} // namespace pallasc::test

#endif // PALLASC_TEST_LAUNCH_FAKEHIPRUNTIME_H
