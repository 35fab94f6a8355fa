//===- Lowering.h - pallas-to-linalg internals ----------------*- C++ -*-===//
//
// Shared by the files of the pallas-to-linalg pass: each lowers one family of
// pallas ops in place (the op is replaced, its operands are already lowered).
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_CONVERSION_PALLASTOLINALG_LOWERING_H
#define PALLASC_PASSES_CONVERSION_PALLASTOLINALG_LOWERING_H

#include "passes/Conversion/Passes.h"
#include "passes/Utils/ElementCast.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::pallas::lowering {

/// What the lowering of one function needs to know.
struct FuncState {
  func::FuncOp func;
  /// Number of grid axes the kernel sees; -1 for an index-map function
  /// (where program_id is meaningless).
  int64_t numAxes = -1;
  /// Memref arguments (former refs) that some op writes: loads from them
  /// take a snapshot copy, loads from the others read the buffer directly.
  llvm::DenseSet<Value> writtenRefs;
  /// The symbols of the kernel's symbolic call (sorted by name) and, with
  /// `symbol-args`, the index of the first of their i64 arguments (-1:
  /// pallas.symbol_value is kept).
  llvm::SmallVector<std::string> symbols = {};
  int64_t firstSymbolArg = -1;
};

/// `tensor.empty` of `type`.
Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type);

/// `text` as a memref<?xi8> of a private constant global of `module` named
/// `prefix` and a number (DebugPrint.cpp; one global per distinct text).
Value textGlobal(OpBuilder &b, Location loc, ModuleOp module, StringRef prefix,
                 StringRef text);

/// The sums, maxima and minima of reductions and atomics.
enum class ArithCombine { Add, Max, Min };
/// `lhs` and `rhs` (scalars or tensors of one type) combined: arith's
/// add / maximum / minimum for floats (NaN propagating), signed for integers.
Value combineArith(OpBuilder &b, Location loc, ArithCombine kind, Value lhs,
                   Value rhs);

/// Success when `op`'s ref (operand 0) is a memref (a lowered argument of
/// one of the kinds `arguments` names), else an error that says so.
LogicalResult checkArgumentRef(Operation *op, StringRef arguments);

/// Lowers pallas.load/store/swap/atomic_rmw/atomic_cas.
LogicalResult lowerRefAccess(Operation *op, FuncState &state,
                             RewriterBase &rewriter);

/// Lowers pallas.gather to a tensor.generate reading the memref at the
/// clamped indices (masked-off lanes take `other`).
LogicalResult lowerGather(Operation *op, RewriterBase &rewriter);

/// Lowers pallas.dma_start as interpret mode runs it: the src slice is
/// copied into the dst slice at once; pallas.dma_wait does nothing.
LogicalResult lowerDma(Operation *op, FuncState &state,
                       RewriterBase &rewriter);

/// Zeroes the semaphore refs the kernel's semaphore ops use at grid point
/// (0, ..., 0); an error when such a ref is not a kernel argument.
LogicalResult initSemaphores(FuncState &state);

/// Lowers pallas.semaphore_signal/wait/read on an i32 counter buffer; a wait
/// that can never be satisfied calls `pallasc_semaphore_wait_stuck`.
LogicalResult lowerSemaphore(Operation *op, ModuleOp module,
                             RewriterBase &rewriter);

/// Lowers dot, reduce, broadcast_in_dim, iota, reshape, transpose, select,
/// cumsum and the hints.
LogicalResult lowerBlockOp(Operation *op, RewriterBase &rewriter);

/// Lowers pallas.debug_print to runtime calls, declaring them in `module`.
LogicalResult lowerDebugPrint(DebugPrintOp op, ModuleOp module,
                              RewriterBase &rewriter);

} // namespace mlir::pallas::lowering

#endif // PALLASC_PASSES_CONVERSION_PALLASTOLINALG_LOWERING_H
