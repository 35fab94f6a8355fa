//===- LauncherGen.h - --emit=header / --emit=lib: generated launchers -*- C++ -*-===//
//
// `--emit=header` writes `<name>.h`, a C header (C11 and C++17 clean) with
// one typed entry point per requested launcher target; `--emit=lib` writes
// `<name>.a`, a static library that defines them. A program includes the
// header and links the library and the launch runtime (`pallasc::launch`
// in the CMake package). See docs/integration.md.
//
// `--target cuda:<arch>...`: `<name>_cuda(inputs..., outputs..., grid
// bounds..., stream)` launches on the caller's CUDA stream (device
// pointers); the library embeds each architecture's cubin (when ptxas ran)
// and PTX with its launch record, and the runtime (src/Launch/CudaLauncher.h)
// picks the one for the device.
//
// `--target rocm:<arch>...`: `<name>_rocm(inputs..., outputs..., grid
// bounds..., stream)` launches on the caller's HIP stream; the library
// embeds each architecture's HSACO with its launch record, and the runtime
// (src/Launch/HipLauncher.h) picks the one for the device.
//
// `--target cpu`: `<name>_cpu(inputs..., outputs..., grid bounds...)` runs
// the whole grid on the host with pallasc run's semantics and results
// (src/Launch/HostGrid). The library holds the kernel and its index maps
// lowered for the host (internal symbols, so several kernels link into one
// program), packed entry points for them, the launch plan as text
// (src/Launch/HostPlanCodec.h) and the entry point, which hands them to
// the runtime (src/Launch/Launcher.h).
//
// vmap's explicit batch loop around one call (runtime::planBatchLoop) gets
// the same entry points over @main's batched arrays, a pointer to the
// per-iteration values of each batched bound, and the loop embedded as
// integers (encodeGpuBatchLoop); the runtimes' `_run_batch` functions run
// or launch the call once per iteration (gpuBatchIteration). Other
// wrappers (reshapes, broadcasts around the call) are refused.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_DRIVER_LAUNCHERGEN_H
#define PALLASC_SRC_DRIVER_LAUNCHERGEN_H

#include "src/Target/CudaArtifacts.h"
#include "src/Target/RocmArtifacts.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace pallasc {

/// The launcher files of one compilation.
struct LauncherFiles {
  std::string header;  ///< `<name>.h` contents (when asked for)
  std::string library; ///< `<name>.a` contents (when asked for)
};

/// The C identifier a launcher's names start with: `name` with every
/// character other than letters, digits and `_` replaced by `_`.
std::string launcherPrefix(const std::string &name);

/// Generates the launcher of `module`'s call (after the transforms): the
/// `--target cpu` entry point when `cpu`, the CUDA one when `cudaImages`
/// (every cuda:<arch> of the invocation, from emitCudaArtifacts with
/// launcherImages) is not empty, the ROCm one when `rocmImages` (from
/// emitRocmArtifacts) is not empty. The header needs only the images'
/// architectures. `sources` names the kernel and spec in the
/// header's comment. Fails with an error printed (a call the generated
/// launchers do not support yet, a lowering failure).
mlir::LogicalResult
emitLaunchers(mlir::ModuleOp module, const std::string &name,
              const std::string &sources, bool wantHeader, bool wantLibrary,
              bool cpu, const std::vector<CudaArtifacts::Image> &cudaImages,
              const std::vector<RocmArtifacts::Image> &rocmImages,
              LauncherFiles &files);

} // namespace pallasc

#endif // PALLASC_SRC_DRIVER_LAUNCHERGEN_H
