//===- MosaicGpu.h - Mosaic GPU kernels in the driver ----------*- C++ -*-===//
//
// A kernel written in JAX's Mosaic GPU model (`pallas_mgpu.kernel`, exported
// from `plgpu.kernel`) has no pallas.call: its spec describes whole operands
// in global memory (`memory_space: any`) and the mesh's grid. The driver
// checks the spec against the kernel here instead of importing it, refuses
// the targets that cannot run it, and describes the call for the manifest;
// the CUDA target lowers it with pallas-mgpu-to-gpu (docs/cuda.md, "Mosaic
// GPU kernels").
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_DRIVER_MOSAICGPU_H
#define PALLASC_SRC_DRIVER_MOSAICGPU_H

#include "src/Manifest/Manifest.h"
#include "src/Spec/GridSpec.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace pallasc {

struct DriverOptions;

/// Checks a module holding Mosaic GPU ops before its spec is read: every
/// `--target` must compile it (TargetSupport.h: one located line naming
/// the op, the instruction and the target), and `pallasc run` without
/// --target (the CPU) is refused at the kernel. Succeeds for a module
/// without such ops.
mlir::LogicalResult checkMosaicGpuTargets(mlir::ModuleOp module,
                                          const DriverOptions &options);

/// Checks the spec against the module's `pallas_mgpu.kernel` (the one the
/// spec's `kernel` names): its operands' shapes and dtypes, its grid, whole
/// operands (`memory_space: any`, no block shape), and nothing a Mosaic GPU
/// kernel does not take (scalar prefetch, scratch shapes, aliases,
/// transforms). Reports each mismatch at its JSON path; failure then.
mlir::LogicalResult checkMosaicGpuSpec(mlir::ModuleOp module,
                                       const spec::GridSpec &spec,
                                       const DriverOptions &options);

/// The manifest's description of the call of the module's Mosaic GPU kernel
/// (nullopt for a module without one).
std::optional<ManifestMosaicGpuCall>
mosaicGpuManifestCall(mlir::ModuleOp module, const spec::GridSpec &spec);

} // namespace pallasc

#endif // PALLASC_SRC_DRIVER_MOSAICGPU_H
