//===- TPUDialect.h - The tpu dialect subset pallasc emits ----*- C++ -*-===//

#ifndef PALLASC_DIALECTS_TPU_IR_TPUDIALECT_H
#define PALLASC_DIALECTS_TPU_IR_TPUDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <optional>

#include "dialects/TPU/IR/TPUOpsDialect.h.inc"
#include "dialects/TPU/IR/TPUOpsEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/TPU/IR/TPUOpsAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/TPU/IR/TPUOpsTypes.h.inc"

#define GET_OP_CLASSES
#include "dialects/TPU/IR/TPUOps.h.inc"

#endif // PALLASC_DIALECTS_TPU_IR_TPUDIALECT_H
