//===- PallasToGPU.h - pallas to gpu/nvvm: shared names ---------*- C++ -*-===//

#ifndef PALLASC_PASSES_CONVERSION_PALLASTOGPU_PALLASTOGPU_H
#define PALLASC_PASSES_CONVERSION_PALLASTOGPU_PALLASTOGPU_H

#include "passes/Conversion/Passes.h"

namespace mlir::pallas {

/// Module attribute (set by pallas-gpu-prepare): the pallas.call's attribute
/// dictionary plus `input_types` / `output_types`.
constexpr const char *kGpuCallAttrName = "pallas.gpu.call";

// The gpu.func's launch record, `pallas.gpu.launch` (kGpuLaunchAttrName), is
// a #pallas.gpu_launch: dialects/Pallas/IR/GpuLaunchAttrs.h.

} // namespace mlir::pallas

#endif // PALLASC_PASSES_CONVERSION_PALLASTOGPU_PALLASTOGPU_H
