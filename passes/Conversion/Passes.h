//===- Passes.h - pallasc conversion passes -------------------*- C++ -*-===//

#ifndef PALLASC_PASSES_CONVERSION_PASSES_H
#define PALLASC_PASSES_CONVERSION_PASSES_H

#include "dialects/Pallas/IR/PallasOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::pallas {

/// Unit attribute on the `func.func` made from a `pallas.kernel`.
constexpr const char *kKernelFuncAttrName = "pallas.kernel";
/// Unit attribute on a lowered `@func` index map.
constexpr const char *kIndexMapFuncAttrName = "pallas.index_map";
/// i64 attribute on a lowered kernel: how many program-id (and as many
/// num-programs) i32 arguments lead its signature.
constexpr const char *kNumGridAxesAttrName = "pallas.num_grid_axes";
/// String array attribute on a kernel (and its lowered function): the
/// symbols of its symbolic call, sorted by name. With pallas-to-linalg's
/// `symbol-args`, one i64 argument each follows the memrefs.
constexpr const char *kKernelSymbolsAttrName = "pallas.symbols";
/// i64 attribute pallas-to-linalg (without `symbol-args`) puts on each
/// pallas.symbol_value it keeps: its symbol's index among the call's symbols
/// sorted by name (`symbols[s]` of the GPU launch record's parameters).
constexpr const char *kSymbolIndexAttrName = "pallas.symbol_index";

/// Runtime functions the lowered `pallas.debug_print` calls (see
/// src/Launch/RuntimeSymbols.cpp for their C definitions).
constexpr const char *kDebugPrintPrefix = "pallasc_debug_";

#define GEN_PASS_DECL
#include "passes/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Conversion/Passes.h.inc"

} // namespace mlir::pallas

#endif // PALLASC_PASSES_CONVERSION_PASSES_H
