//===- GpuLaunchAttrs.h - pallas-to-gpu's typed launch record ---*- C++ -*-===//
//
// #pallas.gpu_launch and #pallas.gpu_param (GpuLaunchAttrs.td): the launch
// record pallas-to-gpu attaches to its gpu.func. Included by the dialect's
// registration, the writer (pallas-to-gpu) and the readers (the manifest,
// the launchers, `pallasc run`) only.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_DIALECTS_PALLAS_IR_GPULAUNCHATTRS_H
#define PALLASC_DIALECTS_PALLAS_IR_GPULAUNCHATTRS_H

#include "dialects/Pallas/IR/AttrGroups.h"
#include "dialects/Pallas/IR/PallasDialect.h"

#include "mlir/IR/DialectImplementation.h"

#include <string>

#include "dialects/Pallas/IR/GpuLaunchEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Pallas/IR/GpuLaunchAttrs.h.inc"

namespace mlir::pallas {

/// gpu.func attribute (set by pallas-to-gpu): a #pallas.gpu_launch, the
/// launch geometry and parameters (docs/cuda.md, docs/dialect.md); the
/// dialect refuses any other value under this name.
constexpr const char *kGpuLaunchAttrName = "pallas.gpu.launch";

/// The dialect's hooks for #pallas.gpu_launch and #pallas.gpu_param
/// (AttrGroups.h).
const AttrGroup &gpuLaunchAttrGroup();

} // namespace mlir::pallas

#endif // PALLASC_DIALECTS_PALLAS_IR_GPULAUNCHATTRS_H
