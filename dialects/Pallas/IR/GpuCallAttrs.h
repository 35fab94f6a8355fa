//===- GpuCallAttrs.h - pallas-gpu-prepare's typed call record --*- C++ -*-===//
//
// #pallas.gpu_call (GpuCallAttrs.td): the record of the pallas.call that
// pallas-gpu-prepare attaches to the module for pallas-to-gpu. Included by
// the dialect's registration, GridMapping.cpp, the writer
// (pallas-gpu-prepare) and the reader (pallas-to-gpu's CallInfo.cpp) only.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_DIALECTS_PALLAS_IR_GPUCALLATTRS_H
#define PALLASC_DIALECTS_PALLAS_IR_GPUCALLATTRS_H

#include "dialects/Pallas/IR/AttrGroups.h"
#include "dialects/Pallas/IR/PallasDialect.h"

#include "mlir/IR/DialectImplementation.h"

#define GET_ATTRDEF_CLASSES
#include "dialects/Pallas/IR/GpuCallAttrs.h.inc"

namespace mlir::pallas {

/// Module attribute (set by pallas-gpu-prepare): a #pallas.gpu_call, the
/// pallas.call the module's GPU lowering reads (docs/dialect.md); the
/// dialect refuses any other value under this name.
constexpr const char *kGpuCallAttrName = "pallas.gpu.call";

/// The dialect's hooks for #pallas.gpu_call (AttrGroups.h).
const AttrGroup &gpuCallAttrGroup();

} // namespace mlir::pallas

#endif // PALLASC_DIALECTS_PALLAS_IR_GPUCALLATTRS_H
