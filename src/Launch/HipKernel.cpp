//===- HipKernel.cpp - Loading and launching HIP kernels ----------*- C++ -*-===//

#include "src/Launch/HipKernel.h"

namespace pallasc::launch {

GpuStatus loadHipKernel(const HipRuntimeApi &api, const void *image,
                        const std::string &entry, int64_t sharedBytes,
                        int64_t codeObjectVersion, HipKernel &kernel) {
  hipError_t r = api.hipModuleLoadData(&kernel.module, image);
  if (r != hip::kSuccess) {
    std::string hint;
    if (codeObjectVersion >= 6)
      hint = " (code object version " + std::to_string(codeObjectVersion) +
             " needs ROCm 6.3 or newer; --code-object-version 5 suits older "
             "runtimes)";
    return GpuStatus::failure(GpuError::LoadFailed,
                              "the HIP runtime cannot load the HSACO: " +
                                  api.describe(r) + hint,
                              r);
  }
  r = api.hipModuleGetFunction(&kernel.function, kernel.module, entry.c_str());
  if (r != hip::kSuccess)
    return GpuStatus::failure(GpuError::KernelNotFound,
                              "no kernel named '" + entry +
                                  "' in the HSACO: " + api.describe(r),
                              r);
  if (needsSharedMemoryOptIn(sharedBytes, kAmdDefaultDynamicSharedLimit)) {
    r = api.hipFuncSetAttribute(kernel.function,
                                hip::kFuncAttributeMaxDynamicSharedMemorySize,
                                static_cast<int>(sharedBytes));
    if (r != hip::kSuccess)
      return GpuStatus::failure(
          GpuError::SharedMemoryTooLarge,
          "the kernel needs " + std::to_string(sharedBytes) +
              " bytes of LDS, more than this GPU allows: " + api.describe(r),
          r);
  }
  return GpuStatus::success();
}

void unloadHipKernel(const HipRuntimeApi &api, HipKernel &kernel) {
  if (kernel.module)
    api.hipModuleUnload(kernel.module);
  kernel = HipKernel();
}

GpuStatus launchHipKernel(const HipRuntimeApi &api, const HipKernel &kernel,
                          const GpuLaunchGeometry &geometry,
                          GpuKernelArgs &args, void *stream) {
  if (geometry.numBlocks() == 0)
    return GpuStatus::success();
  hipError_t r = api.hipModuleLaunchKernel(
      kernel.function, static_cast<unsigned>(geometry.grid[0]),
      static_cast<unsigned>(geometry.grid[1]),
      static_cast<unsigned>(geometry.grid[2]),
      static_cast<unsigned>(geometry.block[0]),
      static_cast<unsigned>(geometry.block[1]),
      static_cast<unsigned>(geometry.block[2]),
      static_cast<unsigned>(geometry.sharedBytes), stream, args.data(),
      nullptr);
  if (r != hip::kSuccess)
    return GpuStatus::failure(GpuError::LaunchFailed,
                              "kernel launch failed: " + api.describe(r), r);
  return GpuStatus::success();
}

} // namespace pallasc::launch
