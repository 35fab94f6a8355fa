//===- PallasToGPU.h - pallas to gpu/nvvm: shared names ---------*- C++ -*-===//

#ifndef PALLASC_PASSES_CONVERSION_PALLASTOGPU_PALLASTOGPU_H
#define PALLASC_PASSES_CONVERSION_PALLASTOGPU_PALLASTOGPU_H

#include "passes/Conversion/Passes.h"

namespace mlir::pallas {

// The module's record of the pallas.call (set by pallas-gpu-prepare),
// `pallas.gpu.call` (kGpuCallAttrName), is a #pallas.gpu_call:
// dialects/Pallas/IR/GpuCallAttrs.h.

/// A symbolic call's `symbolic` dictionary (pallas.call's: symbols, grid
/// and shape expressions), copied to the module by pallas-gpu-prepare for
/// pallas-to-gpu, which makes each symbol a kernel parameter.
constexpr const char *kGpuSymbolicAttrName = "pallas.gpu.symbolic";

// The gpu.func's launch record, `pallas.gpu.launch` (kGpuLaunchAttrName), is
// a #pallas.gpu_launch: dialects/Pallas/IR/GpuLaunchAttrs.h.

} // namespace mlir::pallas

#endif // PALLASC_PASSES_CONVERSION_PALLASTOGPU_PALLASTOGPU_H
