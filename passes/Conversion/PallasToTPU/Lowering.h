//===- Lowering.h - pallas-to-tpu internals --------------------*- C++ -*-===//
//
// Shared by the pass (PallasToTPU.cpp: signature, window params, transform
// functions, block-shape checks) and the body lowering (KernelBody.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_CONVERSION_PALLASTOTPU_LOWERING_H
#define PALLASC_PASSES_CONVERSION_PALLASTOTPU_LOWERING_H

#include "dialects/Pallas/IR/PallasOps.h"
#include "dialects/TPU/IR/TPUDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#include <string>

namespace mlir::pallas::tpu_lowering {

/// How a kernel ref argument is seen by the Mosaic kernel.
struct RefInfo {
  /// The kernel's ref type (its block shape, squeezed dims dropped).
  RefType refType;
  MemRefType type;
  /// Per memref dim: a squeezed block dim (size 1, invisible to the kernel).
  SmallVector<bool> squeezed;
  /// The kernel's element type is i1, stored as i32 (as Mosaic does).
  bool boolAsI32 = false;
  /// For messages: "in_specs[0]", "scratch[1]", "inputs[0]" (prefetch).
  std::string name;

  tpu::MemorySpace getMemorySpace() const {
    if (auto ms = dyn_cast_or_null<tpu::MemorySpaceAttr>(type.getMemorySpace()))
      return ms.getValue();
    return tpu::MemorySpace::kAny;
  }
};

/// The grid as the kernel body sees it.
struct GridInfo {
  /// All grid bounds (-1 dynamic), vmapped dims included.
  SmallVector<int64_t> grid;
  SmallVector<int64_t> vmappedDims;
  /// The kernel func's leading i32 arguments, one per grid dim (empty in
  /// index-map functions, which never ask for program ids).
  SmallVector<Value> indices;
  /// The symbols the kernel reads (pallas.symbol_value), in the order of
  /// their first read: the k-th is the placeholder constant
  /// kSymbolPlaceholderTop - k, as JAX's Mosaic lowering writes
  /// `dim_as_value` (null in index maps, which read no symbol).
  SmallVector<std::string> *symbolsRead = nullptr;
  /// The grid dim of the kernel's axis `axis` (vmapped dims skipped), or -1.
  int64_t gridDimOfAxis(int64_t axis) const;
};

/// The first placeholder of a symbol's value (int32's maximum, JAX's
/// DIM_UPPER_BOUND); the next symbols count down from it.
constexpr int64_t kSymbolPlaceholderTop = 2147483647;

/// The i32-to-index, i1-to-i32, tensor-to-vector conventions of Mosaic.
/// `tensor<f32>` (rank 0) becomes the scalar `f32`.
Type convertValueType(Type type);

/// Lowers, in place, every op of `region` (the moved kernel body or an index
/// map function's body) whose ref arguments are described by `refs`:
/// pallas ops become vector/arith/memref/tpu ops, other ops get vector
/// types. Emits an error naming the op and fails on anything Mosaic cannot
/// lower.
LogicalResult lowerBody(Region &region, const GridInfo &grid,
                        const llvm::DenseMap<Value, RefInfo> &refs);

/// An `i32` constant.
Value constI32(OpBuilder &b, Location loc, int64_t v);

/// True when `user` hands a semaphore ref to a DMA (local or remote): that
/// semaphore is a `!tpu.dma_semaphore`.
bool isDmaSemaphoreUser(Operation *user);

} // namespace mlir::pallas::tpu_lowering

#endif // PALLASC_PASSES_CONVERSION_PALLASTOTPU_LOWERING_H
