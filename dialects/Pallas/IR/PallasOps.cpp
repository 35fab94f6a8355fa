//===- PallasOps.cpp - pallas operations ---------------------*- C++ -*-===//

#include "dialects/Pallas/IR/PallasOps.h"
#include "dialects/Pallas/IR/GridMapping.h"
#include "dialects/Pallas/IR/KernelSyntax.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::pallas;

//===----------------------------------------------------------------------===//
// Indexer custom directive and helpers
//===----------------------------------------------------------------------===//

/// A non-negative integer; `what` names it in the error.
static ParseResult parseNonNegative(OpAsmParser &parser, int64_t &value,
                                    StringRef what) {
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseInteger(value))
    return failure();
  if (value < 0)
    return parser.emitError(loc)
           << what << " must be non-negative, got " << value;
  return success();
}

// Parses `e, e, ...` (the brackets are in the op's format) where e is
// `start`, `start : size` or `start : size : stride`.
static ParseResult
parseIndexer(OpAsmParser &parser,
             SmallVectorImpl<OpAsmParser::UnresolvedOperand> &dynStarts,
             DenseI64ArrayAttr &starts, DenseI64ArrayAttr &sizes,
             DenseI64ArrayAttr &strides) {
  SmallVector<int64_t> startVals, sizeVals, strideVals;
  auto parseEntry = [&]() -> ParseResult {
    OpAsmParser::UnresolvedOperand operand;
    OptionalParseResult dyn = parser.parseOptionalOperand(operand);
    if (dyn.has_value()) {
      if (failed(*dyn))
        return failure();
      dynStarts.push_back(operand);
      startVals.push_back(ShapedType::kDynamic);
    } else {
      int64_t start = 0;
      if (parseNonNegative(parser, start, "indexer start"))
        return failure();
      startVals.push_back(start);
    }
    int64_t size = kPointIndex, stride = 1;
    if (succeeded(parser.parseOptionalColon())) {
      // A negative size would alias kPointIndex and silently drop the
      // dimension.
      if (parseNonNegative(parser, size, "indexer size"))
        return failure();
      if (succeeded(parser.parseOptionalColon()) && parser.parseInteger(stride))
        return failure();
    }
    sizeVals.push_back(size);
    strideVals.push_back(stride);
    return success();
  };
  // Empty list: the whole ref.
  if (parser.getCurrentLocation().getPointer() &&
      *parser.getCurrentLocation().getPointer() != ']') {
    if (parser.parseCommaSeparatedList(parseEntry))
      return failure();
  }
  MLIRContext *ctx = parser.getContext();
  starts = DenseI64ArrayAttr::get(ctx, startVals);
  sizes = DenseI64ArrayAttr::get(ctx, sizeVals);
  strides = DenseI64ArrayAttr::get(ctx, strideVals);
  return success();
}

static void printIndexer(OpAsmPrinter &printer, Operation *,
                         OperandRange dynStarts, DenseI64ArrayAttr starts,
                         DenseI64ArrayAttr sizes, DenseI64ArrayAttr strides) {
  unsigned dyn = 0;
  for (size_t i = 0, e = starts.size(); i < e; ++i) {
    if (i)
      printer << ", ";
    if (ShapedType::isDynamic(starts[i]))
      printer << dynStarts[dyn++];
    else
      printer << starts[i];
    if (sizes[i] == kPointIndex)
      continue;
    printer << " : " << sizes[i];
    if (strides[i] != 1)
      printer << " : " << strides[i];
  }
}

SmallVector<int64_t> Indexer::getResultShape() const {
  SmallVector<int64_t> shape;
  for (const IndexerDim &d : dims)
    if (!d.isPoint)
      shape.push_back(d.size);
  return shape;
}

bool Indexer::isWholeRef(ArrayRef<int64_t> shape) const {
  if (dims.size() != shape.size())
    return false;
  for (auto [d, n] : llvm::zip(dims, shape))
    if (d.isPoint || d.isDynamic() || d.staticStart != 0 || d.size != n ||
        d.stride != 1)
      return false;
  return true;
}

Indexer pallas::detail::buildIndexer(RefType refType, ValueRange dynStarts,
                             ArrayRef<int64_t> starts, ArrayRef<int64_t> sizes,
                             ArrayRef<int64_t> strides) {
  Indexer indexer;
  if (starts.empty()) {
    for (int64_t n : refType.getShape()) {
      IndexerDim d;
      d.size = n;
      indexer.dims.push_back(d);
    }
    return indexer;
  }
  unsigned dyn = 0;
  for (size_t i = 0; i < starts.size(); ++i) {
    IndexerDim d;
    if (ShapedType::isDynamic(starts[i])) {
      d.dynStart = dyn < dynStarts.size() ? dynStarts[dyn] : Value();
      ++dyn;
    } else {
      d.staticStart = starts[i];
    }
    d.isPoint = i < sizes.size() && sizes[i] == kPointIndex;
    d.size = d.isPoint ? 1 : (i < sizes.size() ? sizes[i] : 1);
    d.stride = i < strides.size() ? strides[i] : 1;
    indexer.dims.push_back(d);
  }
  return indexer;
}

/// Checks an indexer against its ref; on success `resultShape` is the shape
/// it selects (integer-indexed dims dropped). `which` prefixes messages
/// ("" or e.g. "src ").
static LogicalResult verifyIndexer(Operation *op, RefType refType,
                                   size_t numDynStarts,
                                   ArrayRef<int64_t> starts,
                                   ArrayRef<int64_t> sizes,
                                   ArrayRef<int64_t> strides,
                                   SmallVectorImpl<int64_t> &resultShape,
                                   StringRef which = "") {
  if (starts.size() != sizes.size() || starts.size() != strides.size())
    return op->emitOpError() << which
                             << "indexer arrays must have equal lengths";
  size_t expectedDyn = llvm::count_if(starts, ShapedType::isDynamic);
  if (expectedDyn != numDynStarts)
    return op->emitOpError() << which << "indexer has " << expectedDyn
                             << " dynamic starts but " << numDynStarts
                             << " start operands";
  ArrayRef<int64_t> shape = refType.getShape();
  if (!starts.empty() && starts.size() != shape.size())
    return op->emitOpError()
           << which << "indexer has " << starts.size()
           << " entries but the ref " << refType << " has rank "
           << shape.size();
  for (size_t i = 0; i < starts.size(); ++i) {
    bool point = sizes[i] == kPointIndex;
    if (!point && sizes[i] < 0)
      return op->emitOpError() << which << "indexer size in dimension " << i
                               << " must be non-negative, got " << sizes[i];
    if (strides[i] < 1)
      return op->emitOpError() << which << "indexer stride in dimension " << i
                               << " must be positive, got " << strides[i];
    if (point && strides[i] != 1)
      return op->emitOpError() << which << "integer index in dimension " << i
                               << " cannot have a stride";
    int64_t size = point ? 1 : sizes[i];
    // A dynamic dimension's size is known at launch: a slice past it reads
    // unspecified values and drops its writes there, as at a ragged edge.
    if (!ShapedType::isDynamic(starts[i]) && !ShapedType::isDynamic(shape[i]) &&
        size > 0) {
      // Last element touched: start + (size - 1) * stride, in int128 terms.
      __int128 last = static_cast<__int128>(starts[i]) +
                      static_cast<__int128>(size - 1) * strides[i];
      if (last >= shape[i])
        return op->emitOpError()
               << which << "indexer reads past the end of dimension " << i
               << " (size " << shape[i] << "): start " << starts[i]
               << ", size " << size << ", stride " << strides[i];
    }
    if (!point)
      resultShape.push_back(sizes[i]);
  }
  if (starts.empty()) {
    if (llvm::any_of(shape, ShapedType::isDynamic))
      return op->emitOpError()
             << which << "reads the whole of " << refType
             << ", whose dynamic dimensions give no static block shape; "
                "expected an indexer with a static size in every dimension "
                "(pl.ds(start, size))";
    resultShape.assign(shape.begin(), shape.end());
  }
  return success();
}

/// Checks an indexer against its ref and the type of the value read or
/// written; `what` names that value in messages.
static LogicalResult verifyIndexedAccess(Operation *op, RefType refType,
                                         size_t numDynStarts,
                                         ArrayRef<int64_t> starts,
                                         ArrayRef<int64_t> sizes,
                                         ArrayRef<int64_t> strides,
                                         Type valueType, StringRef what) {
  SmallVector<int64_t> resultShape;
  if (failed(verifyIndexer(op, refType, numDynStarts, starts, sizes, strides,
                           resultShape)))
    return failure();
  Type elementType = refType.getElementType();
  if (getElementTypeOf(valueType) != elementType)
    return op->emitOpError() << what << " element type "
                             << getElementTypeOf(valueType)
                             << " does not match the ref element type "
                             << elementType;
  auto tensor = dyn_cast<RankedTensorType>(valueType);
  if (!tensor) {
    if (!resultShape.empty())
      return op->emitOpError()
             << what << " is a scalar but the indexer selects a block of "
             << "shape [" << resultShape << "]";
    return success();
  }
  if (tensor.getShape() != ArrayRef<int64_t>(resultShape))
    return op->emitOpError() << what << " has type " << valueType
                             << " but the indexer selects a block of shape ["
                             << resultShape << "]";
  return success();
}

bool pallas::detail::hasMask(Operation &op) {
  return llvm::TypeSwitch<Operation *, bool>(&op)
      .Case<LoadOp, StoreOp, SwapOp, AtomicRMWOp, GatherOp>(
          [](auto typed) { return static_cast<bool>(typed.getMask()); })
      .Default([](Operation *) { return false; });
}

bool pallas::detail::hasOther(Operation &op) {
  if (auto load = dyn_cast<LoadOp>(&op))
    return static_cast<bool>(load.getOther());
  if (auto gather = dyn_cast<GatherOp>(&op))
    return static_cast<bool>(gather.getOther());
  return false;
}

#define PALLAS_INDEXER_IMPL(OP)                                                \
  Indexer OP::getIndexer() {                                                   \
    return pallas::detail::buildIndexer(cast<RefType>(getRef().getType()),            \
                                getDynStarts(), getStaticStarts(),             \
                                getStaticSizes(), getStaticStrides());         \
  }
PALLAS_INDEXER_IMPL(LoadOp)
PALLAS_INDEXER_IMPL(StoreOp)
PALLAS_INDEXER_IMPL(SwapOp)
PALLAS_INDEXER_IMPL(AtomicRMWOp)
PALLAS_INDEXER_IMPL(AtomicCASOp)
PALLAS_INDEXER_IMPL(SemaphoreSignalOp)
PALLAS_INDEXER_IMPL(RemoteSemaphoreSignalOp)
PALLAS_INDEXER_IMPL(SemaphoreWaitOp)
PALLAS_INDEXER_IMPL(SemaphoreReadOp)
#undef PALLAS_INDEXER_IMPL

// The result of swap/atomic_rmw/atomic_cas has the value's type. The value
// follows the variadic dyn_starts, so it is found through the adaptor.
#define PALLAS_INFER_FROM_VALUE(OP)                                            \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location>, ValueRange operands,            \
      DictionaryAttr attributes, OpaqueProperties properties,                 \
      RegionRange regions, SmallVectorImpl<Type> &inferredReturnTypes) {      \
    OP::Adaptor adaptor(operands, attributes, properties, regions);            \
    if (!adaptor.getValue())                                                   \
      return failure();                                                        \
    inferredReturnTypes.push_back(adaptor.getValue().getType());              \
    return success();                                                          \
  }
PALLAS_INFER_FROM_VALUE(SwapOp)
PALLAS_INFER_FROM_VALUE(AtomicRMWOp)
PALLAS_INFER_FROM_VALUE(AtomicCASOp)
#undef PALLAS_INFER_FROM_VALUE

template <typename OpT>
static LogicalResult verifyIndexed(OpT op, Type valueType, StringRef what) {
  return verifyIndexedAccess(op, cast<RefType>(op.getRef().getType()),
                             op.getDynStarts().size(), op.getStaticStarts(),
                             op.getStaticSizes(), op.getStaticStrides(),
                             valueType, what);
}

//===----------------------------------------------------------------------===//
// PlatformIndexOp
//===----------------------------------------------------------------------===//

/// The platform names `lax.platform_dependent` groups may hold: JAX's
/// canonical ones, and `mosaic`, the name JAX's TPU kernel lowering matches.
//===----------------------------------------------------------------------===//
// SymbolValueOp
//===----------------------------------------------------------------------===//

LogicalResult SymbolValueOp::verify() {
  StringRef name = getSymbol();
  auto isIdent = [](char c, bool first) {
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (!first && c >= '0' && c <= '9');
  };
  if (name.empty() || !isIdent(name.front(), true) ||
      !llvm::all_of(name.drop_front(),
                    [&](char c) { return isIdent(c, false); }))
    return emitOpError() << "symbol '" << name
                         << "' is not a symbol name, expected an identifier "
                            "([A-Za-z_][A-Za-z0-9_]*)";
  // Only a kernel reads symbols: a pallas.kernel, or the function a
  // kernel lowers to (pallas-to-linalg marks it `pallas.kernel`); not an
  // index map or the wrapper, whose sizes are the call's operands.
  if ((*this)->getParentOfType<KernelOp>())
    return success();
  auto func = (*this)->getParentOfType<func::FuncOp>();
  if (func && !func->hasAttr("pallas.kernel"))
    return emitOpError() << "reads symbol '" << name << "' in @"
                         << func.getSymName()
                         << ", which is not a kernel; only a kernel body "
                            "reads a symbol's value";
  return success();
}

static constexpr llvm::StringLiteral kPlatformNames[] = {"cpu", "cuda", "rocm",
                                                         "tpu", "mosaic"};

LogicalResult PlatformIndexOp::verify() {
  if (getPlatforms().empty() && !getHasDefault())
    return emitOpError("needs at least one group of platform names or a "
                       "default");
  llvm::SmallSet<llvm::StringRef, 8> seen;
  for (auto [i, group] : llvm::enumerate(getPlatforms())) {
    auto names = dyn_cast<ArrayAttr>(group);
    if (!names || names.empty())
      return emitOpError() << "group " << i
                           << " must be a non-empty array of platform names";
    for (Attribute a : names) {
      auto name = dyn_cast<StringAttr>(a);
      if (!name)
        return emitOpError() << "group " << i << " holds " << a
                             << ", expected a platform name string";
      if (!llvm::is_contained(kPlatformNames, name.getValue()))
        return emitOpError()
               << "unknown platform '" << name.getValue() << "' in group " << i
               << ", expected one of cpu, cuda, rocm, tpu, mosaic";
      if (!seen.insert(name.getValue()).second)
        return emitOpError() << "platform '" << name.getValue()
                             << "' is named in two groups";
    }
  }
  return success();
}

std::optional<int32_t> PlatformIndexOp::indexFor(llvm::StringRef platform) {
  for (auto [i, group] : llvm::enumerate(getPlatforms()))
    for (Attribute a : cast<ArrayAttr>(group))
      if (cast<StringAttr>(a).getValue() == platform)
        return static_cast<int32_t>(i);
  if (getHasDefault())
    return static_cast<int32_t>(getPlatforms().size());
  return std::nullopt;
}

LogicalResult LoadOp::verify() {
  if (getOther() && !getMask())
    return emitOpError("'other' requires a 'mask'");
  if (std::optional<StringRef> e = getEvictionPolicy();
      e && *e != "evict_first" && *e != "evict_last" && *e != "evict_normal")
    return emitOpError("eviction_policy '")
           << *e
           << "' is not one of 'evict_first', 'evict_last', 'evict_normal'";
  return verifyIndexed(*this, getResult().getType(), "result");
}

LogicalResult StoreOp::verify() {
  return verifyIndexed(*this, getValue().getType(), "stored value");
}

LogicalResult SwapOp::verify() {
  return verifyIndexed(*this, getValue().getType(), "swapped value");
}

LogicalResult AtomicRMWOp::verify() {
  if (failed(verifyIndexed(*this, getValue().getType(), "value")))
    return failure();
  Type elementType = getElementTypeOf(getValue().getType());
  bool isFloat = isa<FloatType>(elementType);
  switch (getKind()) {
  case AtomicKind::And:
  case AtomicKind::Or:
  case AtomicKind::Xor:
    if (isFloat)
      return emitOpError() << "atomic '" << stringifyAtomicKind(getKind())
                           << "' needs an integer element type, got "
                           << elementType;
    break;
  default:
    break;
  }
  return success();
}

LogicalResult AtomicCASOp::verify() {
  return verifyIndexed(*this, getValue().getType(), "value");
}

//===----------------------------------------------------------------------===//
// DmaStartOp / DmaWaitOp
//===----------------------------------------------------------------------===//

#define PALLAS_DMA_INDEXERS_IMPL(OP)                                           \
  Indexer OP::getSrcIndexer() {                                                \
    return pallas::detail::buildIndexer(                                       \
        cast<RefType>(getSrc().getType()), getSrcDynStarts(),                  \
        getSrcStaticStarts(), getSrcStaticSizes(), getSrcStaticStrides());     \
  }                                                                            \
  Indexer OP::getDstIndexer() {                                                \
    return pallas::detail::buildIndexer(                                       \
        cast<RefType>(getDst().getType()), getDstDynStarts(),                  \
        getDstStaticStarts(), getDstStaticSizes(), getDstStaticStrides());     \
  }                                                                            \
  Indexer OP::getSemIndexer() {                                                \
    return pallas::detail::buildIndexer(                                       \
        cast<RefType>(getSem().getType()), getSemDynStarts(),                  \
        getSemStaticStarts(), getSemStaticSizes(), getSemStaticStrides());     \
  }
PALLAS_DMA_INDEXERS_IMPL(DmaStartOp)
PALLAS_DMA_INDEXERS_IMPL(DmaWaitOp)
PALLAS_DMA_INDEXERS_IMPL(RemoteDmaStartOp)
PALLAS_DMA_INDEXERS_IMPL(RemoteDmaWaitOp)
#undef PALLAS_DMA_INDEXERS_IMPL

Indexer RemoteDmaStartOp::getSendSemIndexer() {
  return pallas::detail::buildIndexer(
      cast<RefType>(getSendSem().getType()), getSendSemDynStarts(),
      getSendSemStaticStarts(), getSendSemStaticSizes(),
      getSendSemStaticStrides());
}

/// `shape`, what the `what` of a semaphore ref `type` selects, is one
/// semaphore (an integer index per dimension).
static LogicalResult verifyOneSemaphore(Operation *op, StringRef what,
                                        Type type, ArrayRef<int64_t> shape) {
  if (shape.empty())
    return success();
  return op->emitOpError()
         << what
         << " must pick one semaphore with an integer index per dimension of "
         << type << ", but it selects shape [" << shape << "]";
}

/// The checks shared by dma_start and dma_wait: data slices of the same shape
/// and element type outside semaphore memory, without strides; one integer
/// index per dimension of a `semaphore` ref.
template <typename OpT>
static LogicalResult verifyDma(OpT op) {
  auto srcType = cast<RefType>(op.getSrc().getType());
  auto dstType = cast<RefType>(op.getDst().getType());
  auto semType = cast<RefType>(op.getSem().getType());
  SmallVector<int64_t> srcShape, dstShape, semShape;
  if (failed(verifyIndexer(op, srcType, op.getSrcDynStarts().size(),
                           op.getSrcStaticStarts(), op.getSrcStaticSizes(),
                           op.getSrcStaticStrides(), srcShape, "src ")) ||
      failed(verifyIndexer(op, dstType, op.getDstDynStarts().size(),
                           op.getDstStaticStarts(), op.getDstStaticSizes(),
                           op.getDstStaticStrides(), dstShape, "dst ")) ||
      failed(verifyIndexer(op, semType, op.getSemDynStarts().size(),
                           op.getSemStaticStarts(), op.getSemStaticSizes(),
                           op.getSemStaticStrides(), semShape, "sem ")))
    return failure();
  for (auto [which, type] : {std::pair<StringRef, RefType>{"src", srcType},
                             {"dst", dstType}})
    if (type.getMemorySpace() == MemorySpace::Semaphore)
      return op.emitOpError() << which << " " << type
                              << " is a semaphore ref; DMAs copy data refs";
  for (auto [which, strides] :
       {std::pair<StringRef, ArrayRef<int64_t>>{"src",
                                                op.getSrcStaticStrides()},
        {"dst", op.getDstStaticStrides()}})
    if (llvm::any_of(strides, [](int64_t s) { return s != 1; }))
      return op.emitOpError() << which
                              << " slice has a stride; DMA slices are "
                                 "contiguous (pl.ds without stride)";
  if (srcType.getElementType() != dstType.getElementType())
    return op.emitOpError()
           << "src element type " << srcType.getElementType()
           << " does not match dst element type " << dstType.getElementType();
  if (srcShape != dstShape)
    return op.emitOpError() << "src slice has shape [" << srcShape
                            << "] but dst slice has shape [" << dstShape
                            << "]";
  if (semType.getMemorySpace() != MemorySpace::Semaphore)
    return op.emitOpError() << "sem must be a ref in the semaphore memory "
                               "space, got "
                            << semType;
  return verifyOneSemaphore(op, "sem indexer", semType, semShape);
}

LogicalResult DmaStartOp::verify() { return verifyDma(*this); }
LogicalResult DmaWaitOp::verify() { return verifyDma(*this); }

//===----------------------------------------------------------------------===//
// Semaphore ops
//===----------------------------------------------------------------------===//

/// A `semaphore` ref indexed down to one semaphore (an integer index per
/// dimension).
template <typename OpT>
static LogicalResult verifySemaphoreOp(OpT op) {
  auto type = cast<RefType>(op.getRef().getType());
  if (type.getMemorySpace() != MemorySpace::Semaphore)
    return op.emitOpError() << "needs a ref in the semaphore memory space "
                               "(pltpu.SemaphoreType.REGULAR scratch), got "
                            << type;
  if (!type.getElementType().isInteger(32))
    return op.emitOpError() << "semaphore ref " << type
                            << " must have element type i32";
  SmallVector<int64_t> shape;
  if (failed(verifyIndexer(op, type, op.getDynStarts().size(),
                           op.getStaticStarts(), op.getStaticSizes(),
                           op.getStaticStrides(), shape, "")))
    return failure();
  return verifyOneSemaphore(op, "indexer", type, shape);
}

LogicalResult SemaphoreSignalOp::verify() { return verifySemaphoreOp(*this); }
LogicalResult SemaphoreWaitOp::verify() { return verifySemaphoreOp(*this); }
LogicalResult SemaphoreReadOp::verify() { return verifySemaphoreOp(*this); }

//===----------------------------------------------------------------------===//
// Multi-device ops
//===----------------------------------------------------------------------===//

LogicalResult RemoteSemaphoreSignalOp::verify() {
  return verifySemaphoreOp(*this);
}

LogicalResult RemoteDmaStartOp::verify() {
  if (failed(verifyDma(*this)))
    return failure();
  auto type = cast<RefType>(getSendSem().getType());
  SmallVector<int64_t> shape;
  if (failed(verifyIndexer(*this, type, getSendSemDynStarts().size(),
                           getSendSemStaticStarts(), getSendSemStaticSizes(),
                           getSendSemStaticStrides(), shape, "send_sem ")))
    return failure();
  if (type.getMemorySpace() != MemorySpace::Semaphore)
    return emitOpError() << "send_sem must be a ref in the semaphore memory "
                            "space, got "
                         << type;
  return verifyOneSemaphore(*this, "send_sem indexer", type, shape);
}

LogicalResult RemoteDmaWaitOp::verify() { return verifyDma(*this); }

LogicalResult mlir::pallas::refuseCrossDeviceOps(Operation *root,
                                                 StringRef target) {
  WalkResult r = root->walk([&](Operation *op) {
    StringRef what =
        llvm::TypeSwitch<Operation *, StringRef>(op)
            .Case<RemoteDmaStartOp, RemoteDmaWaitOp>(
                [](Operation *) { return "a copy to or from another device"; })
            .Case<RemoteSemaphoreSignalOp>(
                [](Operation *) { return "a signal to another device"; })
            .Case<DeviceIdOp>([](Operation *) {
              return "this device's id in the mesh (lax.axis_index)";
            })
            .Case<BarrierSemaphoreOp>([](Operation *) {
              return "the barrier semaphore other devices signal";
            })
            .Default([](Operation *) { return StringRef(); });
    if (what.empty())
      return WalkResult::advance();
    op->emitOpError() << "communicates across devices (" << what
                      << "); target " << target
                      << " runs one device: only tpu compiles multi-device "
                         "kernels";
    return WalkResult::interrupt();
  });
  return failure(r.wasInterrupted());
}

LogicalResult BarrierSemaphoreOp::verify() {
  auto type = cast<RefType>(getResult().getType());
  if (type.getMemorySpace() != MemorySpace::Semaphore || type.getRank() != 0 ||
      !type.getElementType().isInteger(32))
    return emitOpError() << "result must be !pallas.ref<i32, semaphore> (one "
                            "semaphore), got "
                         << type;
  return success();
}

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

void KernelOp::build(OpBuilder &builder, OperationState &state, StringRef name,
                     FunctionType type) {
  state.addAttribute(SymbolTable::getSymbolAttrName(),
                     builder.getStringAttr(name));
  state.addAttribute(getFunctionTypeAttrName(state.name), TypeAttr::get(type));
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  for (Type t : type.getInputs())
    block->addArgument(t, state.location);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(block);
  ReturnOp::create(builder, state.location);
}

ParseResult KernelOp::parse(OpAsmParser &parser, OperationState &result) {
  if (parseKernelSyntax<KernelOp>(parser, result))
    return failure();
  Region &body = *result.regions.front();
  if (body.empty())
    return parser.emitError(parser.getCurrentLocation(),
                            "a pallas.kernel needs a body");
  OpBuilder builder(parser.getContext());
  KernelOp::ensureTerminator(body, builder, result.location);
  return success();
}

void KernelOp::print(OpAsmPrinter &p) { printKernelSyntax(*this, p); }

LogicalResult KernelOp::verify() {
  if (!getFunctionType().getResults().empty())
    return emitOpError("a kernel returns nothing; it writes its output refs");
  for (auto [i, type] : llvm::enumerate(getArgumentTypes()))
    if (!isa<RefType, HiType>(type))
      return emitOpError() << "argument #" << i << " has type " << type
                           << "; kernel arguments must be !pallas.ref (or "
                              "!pallas.hi aggregates of refs)";
  Block &entry = getBody().front();
  if (entry.getNumArguments() != getArgumentTypes().size())
    return emitOpError("entry block arguments do not match the signature");
  return success();
}

//===----------------------------------------------------------------------===//
// DotOp
//===----------------------------------------------------------------------===//

LogicalResult DotOp::verify() {
  auto lhs = getLhs().getType(), rhs = getRhs().getType();
  auto res = getResult().getType();
  int64_t rank = lhs.getRank();
  if ((rank != 2 && rank != 3) || rhs.getRank() != rank ||
      res.getRank() != rank)
    return emitOpError() << "operands and result must all be 2-D, or 3-D with "
                            "a leading batch dimension; got "
                         << lhs << ", " << rhs << " -> " << res;
  int64_t b = rank - 2;
  int64_t m = lhs.getDimSize(b + (getTransposeLhs() ? 1 : 0));
  int64_t kl = lhs.getDimSize(b + (getTransposeLhs() ? 0 : 1));
  int64_t kr = rhs.getDimSize(b + (getTransposeRhs() ? 1 : 0));
  int64_t n = rhs.getDimSize(b + (getTransposeRhs() ? 0 : 1));
  if (kl != kr)
    return emitOpError() << "contracting dimensions differ: " << kl << " vs "
                         << kr;
  if (res.getDimSize(b) != m || res.getDimSize(b + 1) != n)
    return emitOpError() << "result has type " << res << " but expected "
                         << m << "x" << n << " rows x columns";
  if (rank == 3 && (lhs.getDimSize(0) != rhs.getDimSize(0) ||
                    lhs.getDimSize(0) != res.getDimSize(0)))
    return emitOpError("batch dimensions differ");
  if (getAcc() && getAcc().getType() != res)
    return emitOpError() << "accumulator type " << getAcc().getType()
                         << " differs from the result type " << res;
  Type le = lhs.getElementType(), re = rhs.getElementType(),
       oe = res.getElementType();
  if (isa<FloatType>(le) != isa<FloatType>(re) ||
      isa<FloatType>(le) != isa<FloatType>(oe))
    return emitOpError("operands and result must be all float or all integer");
  return success();
}

//===----------------------------------------------------------------------===//
// ReduceOp
//===----------------------------------------------------------------------===//

LogicalResult ReduceOp::verify() {
  auto in = getInput().getType();
  auto out = getResult().getType();
  ArrayRef<int64_t> dims = getDims();
  llvm::SmallSet<int64_t, 4> seen;
  for (int64_t d : dims) {
    if (d < 0 || d >= in.getRank())
      return emitOpError() << "reduction dimension " << d
                           << " is out of range for rank " << in.getRank();
    if (!seen.insert(d).second)
      return emitOpError() << "reduction dimension " << d << " repeated";
  }
  bool isArg =
      getKind() == ReduceKind::Argmax || getKind() == ReduceKind::Argmin;
  if (isArg && dims.size() != 1)
    return emitOpError("argmax/argmin reduce exactly one dimension");
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < in.getRank(); ++i)
    if (!seen.contains(i))
      shape.push_back(in.getDimSize(i));
  if (out.getShape() != ArrayRef<int64_t>(shape))
    return emitOpError() << "result shape must be [" << shape
                         << "] (the input's without the reduced dims), got "
                         << out;
  if (isArg) {
    if (!out.getElementType().isSignlessInteger())
      return emitOpError("argmax/argmin return integer indices");
  } else if (out.getElementType() != in.getElementType()) {
    return emitOpError("result element type must match the input");
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

LogicalResult BroadcastInDimOp::verify() {
  ArrayRef<int64_t> in = getShapeOf(getOperand().getType());
  auto out = getResult().getType();
  if (getElementTypeOf(getOperand().getType()) != out.getElementType())
    return emitOpError("element types of operand and result differ");
  if (getDims().size() != in.size())
    return emitOpError() << "dims has " << getDims().size()
                         << " entries but the operand has rank " << in.size();
  int64_t prev = -1;
  for (auto [i, d] : llvm::enumerate(getDims())) {
    if (d < 0 || d >= out.getRank())
      return emitOpError() << "dims[" << i << "] = " << d
                           << " is out of range for the result rank "
                           << out.getRank();
    if (d <= prev)
      return emitOpError("dims must be strictly increasing");
    prev = d;
    if (in[i] != 1 && in[i] != out.getDimSize(d))
      return emitOpError() << "operand dimension " << i << " (size " << in[i]
                           << ") cannot broadcast to result dimension " << d
                           << " (size " << out.getDimSize(d) << ")";
  }
  return success();
}

OpFoldResult BroadcastInDimOp::fold(FoldAdaptor adaptor) {
  if (getOperand().getType() == getResult().getType())
    return getOperand();
  if (auto splat = dyn_cast_or_null<SplatElementsAttr>(adaptor.getOperand()))
    return SplatElementsAttr::get(getResult().getType(),
                                  splat.getSplatValue<Attribute>());
  if (adaptor.getOperand() && !isa<ShapedType>(getOperand().getType()) &&
      isa<IntegerAttr, FloatAttr>(adaptor.getOperand()))
    return SplatElementsAttr::get(getResult().getType(), adaptor.getOperand());
  return {};
}

LogicalResult IotaOp::verify() {
  if (static_cast<int64_t>(getDimension()) >= getResult().getType().getRank())
    return emitOpError() << "dimension " << getDimension()
                         << " is out of range for " << getResult().getType();
  return success();
}

LogicalResult ReshapeOp::verify() {
  auto in = getOperand().getType(), out = getResult().getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("element types differ");
  if (!in.hasStaticShape() || !out.hasStaticShape() ||
      in.getNumElements() != out.getNumElements())
    return emitOpError() << "cannot reshape " << in << " to " << out
                         << ": element counts differ";
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getOperand().getType() == getResult().getType())
    return getOperand();
  if (auto producer = getOperand().getDefiningOp<ReshapeOp>()) {
    getOperandMutable().assign(producer.getOperand());
    return getResult();
  }
  if (auto splat = dyn_cast_or_null<SplatElementsAttr>(adaptor.getOperand()))
    return SplatElementsAttr::get(getResult().getType(),
                                  splat.getSplatValue<Attribute>());
  return {};
}

LogicalResult TransposeOp::verify() {
  auto in = getOperand().getType(), out = getResult().getType();
  ArrayRef<int64_t> perm = getPermutation();
  if (perm.size() != static_cast<size_t>(in.getRank()))
    return emitOpError() << "permutation has " << perm.size()
                         << " entries but the operand has rank "
                         << in.getRank();
  SmallVector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= in.getRank() || seen[p])
      return emitOpError("permutation must be a permutation of [0, rank)");
    seen[p] = true;
  }
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(in.getDimSize(p));
  if (out.getShape() != ArrayRef<int64_t>(shape) ||
      out.getElementType() != in.getElementType())
    return emitOpError() << "result must have shape [" << shape << "], got "
                         << out;
  return success();
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  if (llvm::equal(getPermutation(),
                  llvm::seq<int64_t>(0, getPermutation().size())))
    return getOperand();
  return {};
}

LogicalResult SelectOp::verify() {
  Type cond = getCond().getType();
  if (getElementTypeOf(cond) != IntegerType::get(getContext(), 1))
    return emitOpError() << "condition must be i1 or a tensor of i1, got "
                         << cond;
  if (isa<RankedTensorType>(cond) &&
      getShapeOf(cond) != getShapeOf(getResult().getType()))
    return emitOpError() << "condition shape does not match the result "
                         << getResult().getType();
  return success();
}

OpFoldResult SelectOp::fold(FoldAdaptor adaptor) {
  if (getOnTrue() == getOnFalse())
    return getOnTrue();
  Attribute cond = adaptor.getCond();
  if (auto splat = dyn_cast_or_null<SplatElementsAttr>(cond))
    cond = splat.getSplatValue<Attribute>();
  if (auto b = dyn_cast_or_null<IntegerAttr>(cond))
    return b.getValue().isOne() ? getOnTrue() : getOnFalse();
  return {};
}

LogicalResult CumsumOp::verify() {
  if (static_cast<int64_t>(getDim()) >= getOperand().getType().getRank())
    return emitOpError() << "dim " << getDim() << " is out of range for "
                         << getOperand().getType();
  return success();
}

/// The fold of a hint op (multiple_of, max_contiguous): a constant
/// `operand` needs no hint.
static OpFoldResult foldHint(Attribute constant, Value operand) {
  if (constant)
    return operand;
  return {};
}

OpFoldResult MultipleOfOp::fold(FoldAdaptor adaptor) {
  return foldHint(adaptor.getOperand(), getOperand());
}

LogicalResult GatherOp::verify() {
  auto refType = cast<RefType>(getRef().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (getIndices().size() != static_cast<size_t>(refType.getRank()))
    return emitOpError() << "needs one index tensor per dimension of "
                         << refType << " (" << refType.getRank() << "), got "
                         << getIndices().size();
  for (auto [i, index] : llvm::enumerate(getIndices()))
    if (cast<RankedTensorType>(index.getType()).getShape() !=
        result.getShape())
      return emitOpError() << "index tensor #" << i << " has type "
                           << index.getType()
                           << " but the result has shape [" << result.getShape()
                           << "]";
  if (result.getElementType() != refType.getElementType())
    return emitOpError() << "result element type " << result.getElementType()
                         << " does not match the ref element type "
                         << refType.getElementType();
  if (getOther() && !getMask())
    return emitOpError("'other' requires 'mask'");
  return success();
}

LogicalResult MaxContiguousOp::verify() {
  if (getValues().size() != static_cast<size_t>(getOperand().getType().getRank()))
    return emitOpError() << "needs one value per dimension ("
                         << getOperand().getType().getRank() << "), got "
                         << getValues().size();
  for (int64_t v : getValues())
    if (v < 1)
      return emitOpError("values must be positive");
  return success();
}

OpFoldResult MaxContiguousOp::fold(FoldAdaptor adaptor) {
  return foldHint(adaptor.getOperand(), getOperand());
}

LogicalResult DebugPrintOp::verify() {
  StringRef fmt = getFormat();
  size_t placeholders = 0;
  for (size_t pos = fmt.find("{}"); pos != StringRef::npos;
       pos = fmt.find("{}", pos + 2))
    ++placeholders;
  if (placeholders != 0 && placeholders != getValues().size())
    return emitOpError() << "format has " << placeholders
                         << " '{}' placeholders but " << getValues().size()
                         << " values are printed";
  return success();
}

//===----------------------------------------------------------------------===//
// Globals and hi types
//===----------------------------------------------------------------------===//

LogicalResult
GetGlobalOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto global =
      symbolTable.lookupNearestSymbolFrom<RefGlobalOp>(*this, getNameAttr());
  if (!global)
    return emitOpError() << "'" << getName()
                         << "' does not name a pallas.ref_global";
  if (global.getType() != getResult().getType())
    return emitOpError() << "result type " << getResult().getType()
                         << " differs from the global's type "
                         << global.getType();
  return success();
}

/// The check of pallas.hi_pack / hi_unpack that `parts` (their operands,
/// resp. results: `what`) have the types of `hi`'s parts.
static LogicalResult verifyHiParts(Operation *op, ValueRange parts, HiType hi,
                                   StringRef what) {
  if (!llvm::equal(parts.getTypes(), hi.getParts()))
    return op->emitOpError() << what
                             << " types must be the parts of the hi type";
  return success();
}

LogicalResult HiPackOp::verify() {
  return verifyHiParts(*this, getParts(), getResult().getType(), "operand");
}

LogicalResult HiUnpackOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  if (operands.size() != 1)
    return failure();
  auto hi = dyn_cast<HiType>(operands[0].getType());
  if (!hi)
    return failure();
  llvm::append_range(inferredReturnTypes, hi.getParts());
  return success();
}

LogicalResult HiUnpackOp::verify() {
  return verifyHiParts(*this, getParts(), getAggregate().getType(), "result");
}

namespace {
/// hi_unpack(hi_pack(x...)) -> x...
struct FoldUnpackOfPack : OpRewritePattern<HiUnpackOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(HiUnpackOp op,
                                PatternRewriter &rewriter) const override {
    auto pack = op.getAggregate().getDefiningOp<HiPackOp>();
    if (!pack)
      return failure();
    rewriter.replaceOp(op, pack.getParts());
    return success();
  }
};
} // namespace

void HiUnpackOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                             MLIRContext *context) {
  results.add<FoldUnpackOfPack>(context);
}

#define GET_OP_CLASSES
#include "dialects/Pallas/IR/PallasOps.cpp.inc"
