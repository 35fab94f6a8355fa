//===- HipKernel.h - Loading and launching HIP kernels ------------*- C++ -*-===//
//
// The AMD half of the launch library, over a HipRuntimeApi table (the real
// runtime or a fake), as CudaKernel.h is for CUDA: loading a kernel from an
// HSACO code object into the current device (raising its dynamic LDS limit
// past 64 KiB, which gfx950 allows), and launching it with a
// GpuLaunchGeometry and GpuKernelArgs (src/Launch/GpuLaunchArgs.h) on a stream.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_LAUNCH_HIPLAUNCH_H
#define PALLASC_SRC_LAUNCH_HIPLAUNCH_H

#include "src/Launch/GpuLaunchArgs.h"
#include "src/Launch/GpuStatus.h"
#include "src/Launch/HipRuntimeApi.h"

#include <cstdint>
#include <string>

namespace pallasc::launch {

using HipKernel = GpuKernel;

/// Loads the HSACO `image` into the current device and looks `entry` up.
/// When `sharedBytes` needs the opt-in (past 64 KiB) the kernel's dynamic
/// LDS limit is raised to it. `codeObjectVersion` (0: unknown) explains a
/// code object the runtime rejects.
GpuStatus loadHipKernel(const HipRuntimeApi &api, const void *image,
                        const std::string &entry, int64_t sharedBytes,
                        int64_t codeObjectVersion, HipKernel &kernel);

/// Unloads the kernel's module (if any).
void unloadHipKernel(const HipRuntimeApi &api, HipKernel &kernel);

/// Launches `kernel` on `stream` (null: the default stream) without waiting
/// for it. A geometry without blocks launches nothing.
GpuStatus launchHipKernel(const HipRuntimeApi &api, const HipKernel &kernel,
                          const GpuLaunchGeometry &geometry,
                          GpuKernelArgs &args, void *stream = nullptr);

} // namespace pallasc::launch

#endif // PALLASC_SRC_LAUNCH_HIPLAUNCH_H
