//===- TargetSupport.h - Which targets compile a Mosaic GPU kernel -*- C++ -*-===//
//
// A Mosaic GPU kernel (`pallas_mgpu` ops) uses Hopper's asynchronous
// machinery: wgmma.mma_async, TMA (cp.async.bulk.tensor), mbarrier waits,
// the async-proxy fence, setmaxnreg and clusters. This names, for a target,
// the first op whose instruction the target lacks, so that the driver can
// refuse the kernel with one located line before anything is built.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_CONVERSION_PALLASMGPUTOGPU_TARGETSUPPORT_H
#define PALLASC_PASSES_CONVERSION_PALLASMGPUTOGPU_TARGETSUPPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include <string>

namespace mlir::pallas_mgpu {

/// True when `module` holds any `pallas_mgpu` op.
bool hasMosaicGpuOps(ModuleOp module);

/// The target the Mosaic GPU lowering is built for: `cuda:sm_90a`.
constexpr const char *kMosaicGpuTarget = "cuda:sm_90a";

/// Checks that `target` (a `--target` name: `cuda:sm_80`, `rocm:gfx942`,
/// `cpu`, `tpu`) can compile the Mosaic GPU kernel in `module`. On failure
/// emits one error, located at the first op that needs an instruction the
/// target lacks (or at the kernel, for a target that runs no Mosaic GPU
/// kernel at all), naming the op, the instruction and the target, and
/// returns failure. Succeeds for `cuda:sm_90a`.
LogicalResult checkMosaicGpuTarget(ModuleOp module, const std::string &target);

} // namespace mlir::pallas_mgpu

#endif // PALLASC_PASSES_CONVERSION_PALLASMGPUTOGPU_TARGETSUPPORT_H
