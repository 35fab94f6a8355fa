//===- MgpuDialect.h - The pallas_mgpu dialect (Mosaic GPU) ---*- C++ -*-===//

#ifndef PALLASC_DIALECTS_PALLASMGPU_IR_MGPUDIALECT_H
#define PALLASC_DIALECTS_PALLASMGPU_IR_MGPUDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/PallasMGPU/IR/MgpuOpsDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/PallasMGPU/IR/MgpuOpsAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/PallasMGPU/IR/MgpuOpsTypes.h.inc"

namespace mlir::pallas_mgpu {
/// A memref whose memory space is `#pallas_mgpu.smem`.
bool isSmem(Type type);
/// A memref whose memory space is `#pallas_mgpu.acc`.
bool isAcc(Type type);
/// A memref with no memory space: global memory.
bool isGmem(Type type);
} // namespace mlir::pallas_mgpu

#define GET_OP_CLASSES
#include "dialects/PallasMGPU/IR/MgpuOps.h.inc"

#endif // PALLASC_DIALECTS_PALLASMGPU_IR_MGPUDIALECT_H
