//===- TPUDialect.cpp - The tpu dialect subset pallasc emits --*- C++ -*-===//

#include "dialects/TPU/IR/TPUDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tpu;

#include "dialects/TPU/IR/TPUOpsDialect.cpp.inc"
#include "dialects/TPU/IR/TPUOpsEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/TPU/IR/TPUOpsAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/TPU/IR/TPUOpsTypes.cpp.inc"

#define GET_OP_CLASSES
#include "dialects/TPU/IR/TPUOps.cpp.inc"

void TPUDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/TPU/IR/TPUOpsAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/TPU/IR/TPUOpsTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/TPU/IR/TPUOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Verifiers: the structural rules Mosaic's verifiers check for what we emit
//===----------------------------------------------------------------------===//

/// `indices` address every dimension of `base`; `strides` is empty or has
/// one entry per dimension.
static LogicalResult verifyAccess(Operation *op, MemRefType base,
                                  size_t numIndices,
                                  ArrayRef<int32_t> strides,
                                  bool stridesMayBeEmpty) {
  if (numIndices != static_cast<size_t>(base.getRank()))
    return op->emitOpError("expected ")
           << base.getRank() << " indices for the memref, got " << numIndices;
  if ((!stridesMayBeEmpty || !strides.empty()) &&
      strides.size() != static_cast<size_t>(base.getRank()))
    return op->emitOpError("expected ")
           << base.getRank() << " strides, got " << strides.size();
  return success();
}

LogicalResult VectorStoreOp::verify() {
  auto base = cast<MemRefType>(getBase().getType());
  VectorType value = getValueToStore().getType();
  if (failed(verifyAccess(*this, base, getIndices().size(), getStrides(),
                          /*stridesMayBeEmpty=*/true)))
    return failure();
  if (value.getElementType() != base.getElementType())
    return emitOpError("value element type ")
           << value.getElementType() << " differs from the memref's "
           << base.getElementType();
  if (value.getRank() != base.getRank())
    return emitOpError("value rank ")
           << value.getRank() << " differs from the memref rank "
           << base.getRank();
  if (Value mask = getMask()) {
    auto maskType = cast<VectorType>(mask.getType());
    if (maskType.getShape() != value.getShape() ||
        !maskType.getElementType().isInteger(1))
      return emitOpError("mask must be a vector of i1 shaped like the value");
  }
  return success();
}

/// A strided access of `base`: an index and a stride per dimension, and
/// the vector (`what`: "result" or "value") of the memref's rank and
/// element type.
static LogicalResult verifyStridedAccess(Operation *op, Value base,
                                         size_t numIndices,
                                         ArrayRef<int32_t> strides,
                                         VectorType vector, StringRef what) {
  auto memref = cast<MemRefType>(base.getType());
  if (failed(verifyAccess(op, memref, numIndices, strides,
                          /*stridesMayBeEmpty=*/false)))
    return failure();
  if (vector.getRank() != memref.getRank() ||
      vector.getElementType() != memref.getElementType())
    return op->emitOpError()
           << what << " must have the memref's rank and element type";
  return success();
}

LogicalResult StridedLoadOp::verify() {
  return verifyStridedAccess(*this, getBase(), getIndices().size(),
                             getStrides(), getResult().getType(), "result");
}

LogicalResult StridedStoreOp::verify() {
  return verifyStridedAccess(*this, getBase(), getIndices().size(),
                             getStrides(), getValueToStore().getType(),
                             "value");
}

LogicalResult MatmulOp::verify() {
  auto lhs = cast<VectorType>(getLhs().getType());
  auto rhs = cast<VectorType>(getRhs().getType());
  auto acc = cast<VectorType>(getAcc().getType());
  if (acc != getResult().getType())
    return emitOpError("accumulator and result types differ");
  if (lhs.getRank() != rhs.getRank() || lhs.getRank() != acc.getRank())
    return emitOpError("operands must have the same rank");
  if (auto dims = getDimensionNumbersAttr()) {
    if (dims.getLhsContractingDims().size() != 1 ||
        dims.getRhsContractingDims().size() != 1)
      return emitOpError("expected one contracting dimension per operand");
    int64_t l = dims.getLhsContractingDims()[0];
    int64_t r = dims.getRhsContractingDims()[0];
    if (l < 0 || l >= lhs.getRank() || r < 0 || r >= rhs.getRank())
      return emitOpError("contracting dimension out of range");
    if (lhs.getDimSize(l) != rhs.getDimSize(r))
      return emitOpError("contracting dimensions differ in size: ")
             << lhs.getDimSize(l) << " vs " << rhs.getDimSize(r);
  }
  return success();
}

LogicalResult IotaOp::verify() {
  int64_t rank = getOutput().getType().getRank();
  for (int32_t d : getDimensions())
    if (d < 0 || d >= rank)
      return emitOpError("dimension ") << d << " out of range for rank " << rank;
  return success();
}

LogicalResult TransposeOp::verify() {
  auto in = cast<VectorType>(getVector().getType());
  auto out = cast<VectorType>(getResult().getType());
  ArrayRef<int64_t> perm = getPermutation();
  if (static_cast<int64_t>(perm.size()) != in.getRank() ||
      out.getRank() != in.getRank())
    return emitOpError("permutation must have one entry per dimension");
  SmallVector<bool> seen(perm.size(), false);
  for (auto [i, p] : llvm::enumerate(perm)) {
    if (p < 0 || p >= in.getRank() || seen[p])
      return emitOpError("invalid permutation");
    seen[p] = true;
    if (out.getDimSize(i) != in.getDimSize(p))
      return emitOpError("result dimension ") << i << " must equal operand "
                                              << "dimension " << p;
  }
  return success();
}

LogicalResult ReduceIndexOp::verify() {
  auto in = cast<VectorType>(getInput().getType());
  if (getAxis() < 0 || getAxis() >= in.getRank())
    return emitOpError("axis out of range");
  if (getKind() != ReductionKind::kArgMax && getKind() != ReductionKind::kArgMin)
    return emitOpError("kind must be arg_max or arg_min");
  return success();
}

LogicalResult MemRefSliceOp::verify() {
  auto source = cast<MemRefType>(getMemRef().getType());
  auto result = cast<MemRefType>(getResult().getType());
  if (getBaseIdx().size() != static_cast<size_t>(source.getRank()))
    return emitOpError() << "needs one base index per dimension of " << source;
  if (result.getRank() != source.getRank() ||
      result.getElementType() != source.getElementType() ||
      result.getMemorySpace() != source.getMemorySpace())
    return emitOpError() << "result " << result
                         << " must keep the rank, element type and memory "
                            "space of "
                         << source;
  if (getDynamicSizes().size() !=
      static_cast<size_t>(result.getNumDynamicDims()))
    return emitOpError("needs one dynamic size per dynamic result dimension");
  for (auto [r, s] : llvm::zip(result.getShape(), source.getShape()))
    if (!ShapedType::isDynamic(r) && r > s)
      return emitOpError() << "result " << result << " is larger than "
                           << source;
  return success();
}

LogicalResult MemRefSqueezeOp::verify() {
  auto source = cast<MemRefType>(getInput().getType());
  auto result = cast<MemRefType>(getResult().getType());
  // The result's dims are the source's with some unit dims removed.
  ArrayRef<int64_t> in = source.getShape(), out = result.getShape();
  size_t j = 0;
  for (int64_t d : in) {
    if (j < out.size() && out[j] == d)
      ++j;
    else if (d != 1)
      break;
  }
  if (j != out.size() || result.getElementType() != source.getElementType() ||
      result.getMemorySpace() != source.getMemorySpace() ||
      result.getRank() + llvm::count(in, 1) < source.getRank())
    return emitOpError() << "result " << result << " must be " << source
                         << " with some unit dims removed";
  return success();
}

/// DMA data operands: same element type and shape.
static LogicalResult verifyDmaPair(Operation *op, Value src, Value dst) {
  auto s = cast<MemRefType>(src.getType());
  auto d = cast<MemRefType>(dst.getType());
  if (s.getElementType() != d.getElementType() || s.getShape() != d.getShape())
    return op->emitOpError() << "source " << s << " and target " << d
                             << " must have the same shape and element type";
  return success();
}

LogicalResult EnqueueDMAOp::verify() {
  if (cast<MemRefType>(getTargetSemaphore().getType()).getRank() != 0)
    return emitOpError("target_semaphore must be a rank-0 memref");
  return verifyDmaPair(*this, getSource(), getTarget());
}

LogicalResult WaitDMA2Op::verify() {
  if (cast<MemRefType>(getSemaphore().getType()).getRank() != 0)
    return emitOpError("semaphore must be a rank-0 memref");
  return verifyDmaPair(*this, getSrc(), getDst());
}

LogicalResult SemaphoreSignalOp::verify() {
  if (cast<MemRefType>(getSemaphore().getType()).getRank() != 0)
    return emitOpError("semaphore must be a rank-0 memref");
  return success();
}

LogicalResult SemaphoreWaitOp::verify() {
  if (cast<MemRefType>(getSemaphore().getType()).getRank() != 0)
    return emitOpError("semaphore must be a rank-0 memref");
  return success();
}

LogicalResult SemaphoreReadOp::verify() {
  if (cast<MemRefType>(getSemaphore().getType()).getRank() != 0)
    return emitOpError("semaphore must be a rank-0 memref");
  return success();
}
