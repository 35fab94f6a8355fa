//===- HipRuntimeApi.cpp - The HIP runtime API as a table ---------*- C++ -*-===//

#include "src/Launch/HipRuntimeApi.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <vector>

namespace pallasc::launch {

std::string HipRuntimeApi::describe(hipError_t error) const {
  const char *s = hipGetErrorName ? hipGetErrorName(error) : nullptr;
  if (s && *s)
    return std::string(s) + " (" + std::to_string(error) + ")";
  return "HIP error " + std::to_string(error);
}

hipError_t HipRuntimeApi::deviceArchName(int device, std::string &arch) const {
  // Aligned as the runtime's struct (size_t members).
  std::vector<unsigned long long> props(hip::kPropsBufferSize /
                                        sizeof(unsigned long long));
  hipError_t r = hipGetDeviceProperties(props.data(), device);
  if (r != hip::kSuccess)
    return r;
  const char *name =
      reinterpret_cast<const char *>(props.data()) + archNameOffset;
  arch.assign(name, strnlen(name, hip::kArchNameSize));
  return hip::kSuccess;
}

namespace {

template <typename F> bool bind(void *handle, F &fn, const char *name) {
  fn = reinterpret_cast<F>(dlsym(handle, name));
  return fn != nullptr;
}

/// The first HIP runtime that loads; `error` is the first failure's reason.
void *openHipRuntime(std::string &error) {
  std::vector<std::string> names = {"libamdhip64.so", "libamdhip64.so.7",
                                    "libamdhip64.so.6", "libamdhip64.so.5"};
  std::vector<std::string> dirs;
  if (const char *root = std::getenv("ROCM_PATH"); root && *root)
    dirs.push_back(std::string(root) + "/lib/");
  dirs.push_back("/opt/rocm/lib/");
  for (const std::string &dir : dirs)
    names.push_back(dir + "libamdhip64.so");
  for (const std::string &name : names) {
    if (void *handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL))
      return handle;
    if (error.empty())
      if (const char *e = dlerror())
        error = e;
  }
  return nullptr;
}

} // namespace

GpuStatus loadHipRuntimeApi(HipRuntimeApi &api) {
  std::string error;
  void *handle = openHipRuntime(error);
  if (!handle)
    return GpuStatus::failure(
        GpuError::DriverNotFound,
        "cannot load the HIP runtime (libamdhip64.so): " + error +
            "; running on an AMD GPU needs ROCm's HIP runtime (set ROCM_PATH "
            "when it is not on the library path)");
  HipRuntimeApi a;
  // hipDeviceProp_t of ROCm 6.0+ first, then the earlier layout.
  if (bind(handle, a.hipGetDeviceProperties, "hipGetDevicePropertiesR0600"))
    a.archNameOffset = hip::kPropsR0600ArchNameOffset;
  else if (bind(handle, a.hipGetDeviceProperties,
                "hipGetDevicePropertiesR0000") ||
           bind(handle, a.hipGetDeviceProperties, "hipGetDeviceProperties"))
    a.archNameOffset = hip::kPropsR0000ArchNameOffset;
  bool ok = a.hipGetDeviceProperties &&
            bind(handle, a.hipInit, "hipInit") &&
            bind(handle, a.hipGetDeviceCount, "hipGetDeviceCount") &&
            bind(handle, a.hipGetDevice, "hipGetDevice") &&
            bind(handle, a.hipModuleLoadData, "hipModuleLoadData") &&
            bind(handle, a.hipModuleUnload, "hipModuleUnload") &&
            bind(handle, a.hipModuleGetFunction, "hipModuleGetFunction") &&
            bind(handle, a.hipFuncSetAttribute, "hipFuncSetAttribute") &&
            bind(handle, a.hipModuleLaunchKernel, "hipModuleLaunchKernel") &&
            bind(handle, a.hipGetErrorName, "hipGetErrorName");
  if (!ok)
    return GpuStatus::failure(
        GpuError::DriverTooOld,
        "the HIP runtime (libamdhip64.so) lacks a needed entry point; is it "
        "older than ROCm 5.2?");
  api = a;
  return GpuStatus::success();
}

} // namespace pallasc::launch
