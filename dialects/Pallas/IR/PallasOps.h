//===- PallasOps.h - pallas operations ------------------------*- C++ -*-===//

#ifndef PALLASC_DIALECTS_PALLAS_IR_PALLASOPS_H
#define PALLASC_DIALECTS_PALLAS_IR_PALLASOPS_H

#include "dialects/Pallas/IR/PallasDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::pallas {

/// Marker in `static_sizes` of an indexer: the dimension is indexed by an
/// integer and dropped from the result.
constexpr int64_t kPointIndex = -1;

/// Discardable attribute carrying a `pallas.dot`'s non-default precision
/// (a #pallas.precision) onto the linalg matmul it lowers to.
constexpr llvm::StringLiteral kDotPrecisionAttrName = "pallas.precision";

/// One dimension of a normalized ref indexer.
struct IndexerDim {
  bool isPoint = false;  ///< integer index: dimension dropped
  int64_t staticStart = 0;
  Value dynStart;        ///< set when the start is dynamic (i32)
  int64_t size = 1;
  int64_t stride = 1;
  bool isDynamic() const { return static_cast<bool>(dynStart); }
};

/// A normalized indexer: exactly one entry per ref dimension.
struct Indexer {
  SmallVector<IndexerDim> dims;
  /// Shape of the value read or written (point dims dropped).
  SmallVector<int64_t> getResultShape() const;
  /// True when every dim is a static full slice of `shape` with stride 1.
  bool isWholeRef(ArrayRef<int64_t> shape) const;
};

namespace detail {
bool hasMask(Operation &op);
bool hasOther(Operation &op);
Indexer buildIndexer(RefType refType, ValueRange dynStarts,
                     ArrayRef<int64_t> starts, ArrayRef<int64_t> sizes,
                     ArrayRef<int64_t> strides);
} // namespace detail

/// The first op under `root` that communicates across devices (a remote copy
/// or signal, the device id, the barrier semaphore): only the tpu target
/// compiles those. Emits "'<op>' op communicates across devices ...; target
/// <target> runs one device" at it and fails; succeeds when there is none.
LogicalResult refuseCrossDeviceOps(Operation *root, StringRef target);

} // namespace mlir::pallas

#define GET_OP_CLASSES
#include "dialects/Pallas/IR/PallasOps.h.inc"

#endif // PALLASC_DIALECTS_PALLAS_IR_PALLASOPS_H
