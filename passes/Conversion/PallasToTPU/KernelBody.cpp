//===- KernelBody.cpp - pallas-to-tpu: the kernel body --------*- C++ -*-===//
//
// Lowers a kernel body (or an index-map function) in place, in program
// order, following jax/_src/pallas/mosaic/lowering.py op by op: ref reads
// and writes become vector.load / tpu.vector_store (tpu.strided_* with
// strides, memref.load/store on SMEM), block ops become vector and tpu ops,
// and every other op keeps its dialect with tensor types turned into vector
// types (rank-0 tensors into scalars).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToTPU/Lowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <array>
#include <limits>

#define DEBUG_TYPE "pallas-to-tpu"

using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::tpu_lowering;

int64_t GridInfo::gridDimOfAxis(int64_t axis) const {
  int64_t seen = 0;
  for (int64_t d = 0, e = grid.size(); d < e; ++d) {
    if (llvm::is_contained(vmappedDims, d))
      continue;
    if (seen++ == axis)
      return d;
  }
  return -1;
}

Type tpu_lowering::convertValueType(Type type) {
  if (auto t = dyn_cast<RankedTensorType>(type)) {
    if (t.getRank() == 0)
      return t.getElementType();
    return VectorType::get(t.getShape(), t.getElementType());
  }
  return type;
}

Value tpu_lowering::constI32(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
}

namespace {

Value constIndex(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// A splat constant of `type` (a vector or a scalar).
Value splatConstant(OpBuilder &b, Location loc, Type type, TypedAttr scalar) {
  if (auto v = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(b, loc, SplatElementsAttr::get(v, scalar));
  return arith::ConstantOp::create(b, loc, scalar);
}

bool isSupportedDialect(Operation *op) {
  StringRef ns = op->getDialect() ? op->getDialect()->getNamespace() : "";
  return ns == "arith" || ns == "math" || ns == "scf" || ns == "vector";
}

/// Where one ref access reads or writes, in memref coordinates.
struct Access {
  SmallVector<Value> indices;   // one index per memref dim
  SmallVector<int64_t> shape;   // the accessed slice (1 for dropped dims)
  SmallVector<int32_t> strides; // per memref dim
  bool strided = false;
  bool allPoints = true;        // every memref dim is dropped
};

class BodyLowerer {
public:
  BodyLowerer(const GridInfo &grid, const llvm::DenseMap<Value, RefInfo> &refs)
      : grid(grid), refs(refs) {}

  LogicalResult run(Region &region);

private:
  LogicalResult lowerOp(Operation *op);
  LogicalResult convertInPlace(Operation *op);
  LogicalResult lowerConstant(arith::ConstantOp op);
  LogicalResult lowerTensorOp(Operation *op);

  const RefInfo *lookupRef(Operation *op, Value ref);
  FailureOr<Access> buildAccess(OpBuilder &b, Location loc, Operation *op,
                                const RefInfo &info, const Indexer &indexer);
  /// The normalized indexer of a ref access op, against the kernel's ref
  /// type (the ref value itself is already a memref).
  template <typename OpTy>
  Indexer indexerOf(OpTy op, const RefInfo &info) {
    return pallas::detail::buildIndexer(info.refType, op.getDynStarts(),
                                op.getStaticStarts(), op.getStaticSizes(),
                                op.getStaticStrides());
  }
  /// The ref a load or store op reads or writes, and its access.
  struct AccessedRef {
    const RefInfo *info;
    Access access;
    tpu::MemorySpace space;
    Type memElem; // the memref's element type
  };
  template <typename OpTy>
  FailureOr<AccessedRef> accessOf(OpBuilder &b, OpTy op) {
    const RefInfo *info = lookupRef(op, op.getRef());
    if (!info)
      return failure();
    FailureOr<Access> access =
        buildAccess(b, op->getLoc(), op, *info, indexerOf(op, *info));
    if (failed(access))
      return failure();
    return AccessedRef{info, std::move(*access), info->getMemorySpace(),
                       info->type.getElementType()};
  }
  /// The error for a load (`verb` "reads") or a store ("writes") of a ref
  /// in neither VMEM nor SMEM.
  static InFlightDiagnostic spaceError(Operation *op, const RefInfo &info,
                                       StringRef verb);
  template <typename OpTy>
  FailureOr<Value> emitLoad(OpBuilder &b, OpTy op, Type resultType);
  template <typename OpTy>
  LogicalResult emitStore(OpBuilder &b, OpTy op, Value value, Value mask);

  LogicalResult lower(ProgramIdOp op);
  LogicalResult lower(NumProgramsOp op);
  LogicalResult lower(SymbolValueOp op);
  LogicalResult lower(LoadOp op);
  LogicalResult lower(StoreOp op);
  LogicalResult lower(SwapOp op);
  LogicalResult lower(DotOp op);
  LogicalResult lower(ReduceOp op);
  LogicalResult lower(BroadcastInDimOp op);
  LogicalResult lower(IotaOp op);
  LogicalResult lower(ReshapeOp op);
  LogicalResult lower(TransposeOp op);
  LogicalResult lower(SelectOp op);
  LogicalResult lower(MultipleOfOp op);
  LogicalResult lower(MaxContiguousOp op);
  LogicalResult lower(DebugPrintOp op);
  LogicalResult lower(pallas::DmaStartOp op);
  LogicalResult lower(pallas::DmaWaitOp op);
  LogicalResult lower(SemaphoreSignalOp op);
  LogicalResult lower(SemaphoreWaitOp op);
  LogicalResult lower(SemaphoreReadOp op);
  LogicalResult lower(RemoteDmaStartOp op);
  LogicalResult lower(RemoteDmaWaitOp op);
  LogicalResult lower(RemoteSemaphoreSignalOp op);
  LogicalResult lower(DeviceIdOp op);
  LogicalResult lower(ReturnOp op);

  FailureOr<Value> dmaView(OpBuilder &b, Operation *op, Value ref,
                           ValueRange dynStarts, ArrayRef<int64_t> starts,
                           ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides);
  /// The (source, target, semaphore) memrefs of a DMA op.
  template <typename OpTy>
  FailureOr<std::array<Value, 3>> dmaOperands(OpBuilder &b, OpTy op);
  /// The rank-0 `!tpu.semaphore` memref a semaphore op picks.
  template <typename OpTy>
  FailureOr<Value> semaphoreOperand(OpBuilder &b, OpTy op);
  /// Lowers a DMA op: `emit(b, src, dst, sem)` writes its Mosaic op (a
  /// failure is reported by `emit`), then the op goes.
  template <typename OpTy, typename EmitFn>
  LogicalResult lowerDma(OpTy op, EmitFn emit);
  /// Lowers a semaphore op: `emit(b, sem)` writes its Mosaic op and returns
  /// the value that replaces the op's result (null for an op without one).
  template <typename OpTy, typename EmitFn>
  LogicalResult lowerSemaphoreOp(OpTy op, EmitFn emit);

  void replace(Operation *op, Value v) {
    op->getResult(0).replaceAllUsesWith(v);
    op->erase();
  }

  const GridInfo &grid;
  const llvm::DenseMap<Value, RefInfo> &refs;
};

} // namespace

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

LogicalResult BodyLowerer::run(Region &region) {
  // Block arguments of the body itself are the refs and grid indices (set
  // by the caller); nested blocks get their types converted with their op.
  SmallVector<Operation *> ops;
  region.walk<WalkOrder::PreOrder>([&](Operation *op) { ops.push_back(op); });
  for (Operation *op : ops)
    if (failed(lowerOp(op)))
      return failure();
  return success();
}

LogicalResult BodyLowerer::lowerOp(Operation *op) {
  if (op->getDialect() && isa<PallasDialect>(op->getDialect())) {
    return llvm::TypeSwitch<Operation *, LogicalResult>(op)
        .Case<ProgramIdOp, NumProgramsOp, SymbolValueOp, LoadOp, StoreOp, SwapOp, DotOp,
              ReduceOp, BroadcastInDimOp, IotaOp, ReshapeOp, TransposeOp,
              SelectOp, MultipleOfOp, MaxContiguousOp, DebugPrintOp,
              pallas::DmaStartOp, pallas::DmaWaitOp, SemaphoreSignalOp,
              SemaphoreWaitOp, SemaphoreReadOp, RemoteDmaStartOp,
              RemoteDmaWaitOp, RemoteSemaphoreSignalOp, DeviceIdOp, ReturnOp>(
            [&](auto typed) { return lower(typed); })
        .Case<AtomicRMWOp, AtomicCASOp>([&](Operation *) {
          return op->emitError()
                 << "'" << op->getName()
                 << "' has no Mosaic lowering: TPU kernels have no atomics";
        })
        .Case<CumsumOp>([&](Operation *) {
          return op->emitError()
                 << "'" << op->getName()
                 << "' has no Mosaic lowering in Pallas' TPU backend";
        })
        .Case<GetGlobalOp>([&](Operation *) {
          return op->emitError()
                 << "'" << op->getName()
                 << "' reads a closed-over ref, which the TPU lowering cannot "
                    "pass to the kernel; run the discharge_state transform "
                    "first";
        })
        .Case<HiPackOp, HiUnpackOp>([&](Operation *) {
          return op->emitError()
                 << "'" << op->getName()
                 << "' works on hi types, which the TPU lowering cannot "
                    "pass to the kernel; run the hi_to_lo transform first";
        })
        .Default([&](Operation *) {
          return op->emitError()
                 << "'" << op->getName() << "' has no Mosaic lowering";
        });
  }
  if (auto c = dyn_cast<arith::ConstantOp>(op))
    return lowerConstant(c);
  // tpu.sem_barrier: a pallas.barrier_semaphore lowered before the walk.
  if (isa<func::ReturnOp, tpu::GetBarrierSemaphoreOp>(op))
    return success();
  if (op->getDialect() && isa<tensor::TensorDialect>(op->getDialect()))
    return lowerTensorOp(op);
  if (isSupportedDialect(op))
    return convertInPlace(op);
  return op->emitError() << "'" << op->getName()
                         << "' has no Mosaic lowering (TPU kernels use "
                            "arith, math, scf and pallas ops)";
}

LogicalResult BodyLowerer::convertInPlace(Operation *op) {
  auto check = [&](Type t) -> LogicalResult {
    if (isa<RefType>(t))
      return op->emitError() << "a ref flows through '" << op->getName()
                             << "'; the TPU lowering needs refs to be kernel "
                                "arguments used directly";
    if (auto tt = dyn_cast<TensorType>(t); tt && !isa<RankedTensorType>(tt))
      return op->emitError() << "unranked tensor in '" << op->getName() << "'";
    return success();
  };
  for (Value r : op->getResults()) {
    if (failed(check(r.getType())))
      return failure();
    r.setType(convertValueType(r.getType()));
  }
  for (Region &region : op->getRegions())
    for (Block &block : region)
      for (BlockArgument arg : block.getArguments()) {
        if (failed(check(arg.getType())))
          return failure();
        arg.setType(convertValueType(arg.getType()));
      }
  return success();
}

LogicalResult BodyLowerer::lowerConstant(arith::ConstantOp op) {
  auto tensorType = dyn_cast<RankedTensorType>(op.getType());
  if (!tensorType)
    return success();
  auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
  if (!dense)
    return op.emitError() << "constant of type " << tensorType
                          << " is not a dense elements attribute; the TPU "
                             "lowering needs inline dense constants";
  OpBuilder b(op);
  TypedAttr value;
  if (tensorType.getRank() == 0)
    value = cast<TypedAttr>(dense.getSplatValue<Attribute>());
  else
    value = dense.reshape(
        VectorType::get(tensorType.getShape(), tensorType.getElementType()));
  replace(op, arith::ConstantOp::create(b, op.getLoc(), value));
  return success();
}

LogicalResult BodyLowerer::lowerTensorOp(Operation *op) {
  OpBuilder b(op);
  // Rank-0 tensors are scalars here: extracting or building one is a no-op.
  // (Operands are already converted; results not yet.)
  if (isa<tensor::ExtractOp>(op) && op->getNumOperands() == 1 &&
      op->getOperand(0).getType() == op->getResult(0).getType()) {
    replace(op, op->getOperand(0));
    return success();
  }
  if (auto f = dyn_cast<tensor::FromElementsOp>(op);
      f && f.getType().getRank() == 0) {
    replace(op, f.getElements().front());
    return success();
  }
  if (auto s = dyn_cast<tensor::SplatOp>(op);
      s && s.getType().hasStaticShape()) {
    replace(op, vector::BroadcastOp::create(
                    b, op->getLoc(), convertValueType(s.getType()),
                    s.getInput()));
    return success();
  }
  return op->emitError() << "'" << op->getName()
                         << "' has no Mosaic lowering";
}

//===----------------------------------------------------------------------===//
// Grid
//===----------------------------------------------------------------------===//

LogicalResult BodyLowerer::lower(ProgramIdOp op) {
  int64_t dim = grid.gridDimOfAxis(op.getAxis());
  if (dim < 0 || grid.indices.empty())
    return op.emitError() << "program_id axis " << op.getAxis()
                          << " is out of range for the kernel's grid of rank "
                          << grid.grid.size() - grid.vmappedDims.size();
  replace(op, grid.indices[dim]);
  return success();
}

LogicalResult BodyLowerer::lower(NumProgramsOp op) {
  int64_t dim = grid.gridDimOfAxis(op.getAxis());
  if (dim < 0)
    return op.emitError() << "num_programs axis " << op.getAxis()
                          << " is out of range for the kernel's grid of rank "
                          << grid.grid.size() - grid.vmappedDims.size();
  OpBuilder b(op);
  // As Pallas does: a static bound is a constant, a dynamic one is read.
  if (grid.grid[dim] >= 0)
    replace(op, constI32(b, op.getLoc(), grid.grid[dim]));
  else
    replace(op, tpu::GetIterationBoundOp::create(b, op.getLoc(),
                                                 b.getI32Type(), dim));
  return success();
}

LogicalResult BodyLowerer::lower(SymbolValueOp op) {
  if (!grid.symbolsRead)
    return op.emitError() << "'" << op->getName()
                          << "' outside the kernel body has no Mosaic "
                             "lowering";
  // As JAX's Mosaic lowering writes `dim_as_value`: an i32 placeholder
  // constant, which the TPU runtime replaces with the value when it
  // specializes the module (the module's
  // tpu.dynamic_dimension_mapping_* attributes say how, PallasToTPU.cpp).
  std::string name = op.getSymbol().str();
  auto *it = llvm::find(*grid.symbolsRead, name);
  int64_t k = it - grid.symbolsRead->begin();
  if (it == grid.symbolsRead->end())
    grid.symbolsRead->push_back(name);
  OpBuilder b(op);
  Value v = constI32(b, op.getLoc(), kSymbolPlaceholderTop - k);
  Type type = convertValueType(op.getType());
  if (type.isIndex())
    v = arith::IndexCastOp::create(b, op.getLoc(), type, v);
  else if (type != v.getType())
    v = arith::ExtSIOp::create(b, op.getLoc(), type, v);
  replace(op, v);
  return success();
}

LogicalResult BodyLowerer::lower(ReturnOp op) {
  OpBuilder b(op);
  func::ReturnOp::create(b, op.getLoc());
  op.erase();
  return success();
}

//===----------------------------------------------------------------------===//
// Ref access
//===----------------------------------------------------------------------===//

const RefInfo *BodyLowerer::lookupRef(Operation *op, Value ref) {
  auto it = refs.find(ref);
  if (it == refs.end()) {
    op->emitError() << "the TPU lowering needs the ref of '" << op->getName()
                    << "' to be a kernel argument";
    return nullptr;
  }
  return &it->second;
}

FailureOr<Access> BodyLowerer::buildAccess(OpBuilder &b, Location loc,
                                           Operation *op, const RefInfo &info,
                                           const Indexer &indexer) {
  Access a;
  size_t visible = llvm::count(info.squeezed, false);
  if (indexer.dims.size() != visible) {
    op->emitError() << "indexer has " << indexer.dims.size()
                    << " entries but the ref has rank " << visible;
    return failure();
  }
  auto next = indexer.dims.begin();
  for (bool squeezed : info.squeezed) {
    if (squeezed) {
      // Mosaic keeps squeezed block dims as size 1: index them at 0.
      a.indices.push_back(constIndex(b, loc, 0));
      a.shape.push_back(1);
      a.strides.push_back(1);
      continue;
    }
    const IndexerDim &d = *next++;
    if (d.isDynamic())
      a.indices.push_back(
          arith::IndexCastOp::create(b, loc, b.getIndexType(), d.dynStart));
    else
      a.indices.push_back(constIndex(b, loc, d.staticStart));
    a.shape.push_back(d.isPoint ? 1 : d.size);
    a.strides.push_back(d.isPoint ? 1 : static_cast<int32_t>(d.stride));
    if (!d.isPoint) {
      a.allPoints = false;
      if (d.stride != 1)
        a.strided = true;
    }
  }
  return a;
}

static const char *spaceName(tpu::MemorySpace ms) {
  return tpu::stringifyMemorySpace(ms).data();
}

InFlightDiagnostic BodyLowerer::spaceError(Operation *op, const RefInfo &info,
                                           StringRef verb) {
  tpu::MemorySpace ms = info.getMemorySpace();
  bool load = verb == "reads";
  return op->emitError() << "'" << op->getName() << "' " << verb << " "
                         << info.name << " in memory space " << spaceName(ms)
                         << "; Mosaic allows "
                         << (load ? "loads only from" : "stores only to")
                         << " VMEM and SMEM refs"
                         << (load && (ms == tpu::MemorySpace::kAny ||
                                      ms == tpu::MemorySpace::kHbm)
                                 ? " (an ANY/HBM ref is only reachable by DMA)"
                                 : "");
}

template <typename OpTy>
FailureOr<Value> BodyLowerer::emitLoad(OpBuilder &b, OpTy typedOp,
                                       Type resultType) {
  Operation *op = typedOp;
  Value ref = typedOp.getRef();
  FailureOr<AccessedRef> accessed = accessOf(b, typedOp);
  if (failed(accessed))
    return failure();
  const RefInfo *info = accessed->info;
  Access &access = accessed->access;
  tpu::MemorySpace ms = accessed->space;
  Type memElem = accessed->memElem;
  Location loc = op->getLoc();
  auto toBool = [&](Value v) -> Value {
    if (!info->boolAsI32)
      return v;
    Value zero = splatConstant(b, loc, v.getType(), b.getI32IntegerAttr(0));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v, zero);
  };
  if (ms == tpu::MemorySpace::kSmem) {
    if (!isa<VectorType>(resultType) && access.allPoints)
      return toBool(memref::LoadOp::create(b, loc, ref, access.indices));
    op->emitError() << "'" << op->getName() << "' reads a block of "
                    << info->name
                    << " in SMEM; Mosaic can only load scalars from SMEM";
    return failure();
  }
  if (ms != tpu::MemorySpace::kVmem) {
    spaceError(op, *info, "reads");
    return failure();
  }
  auto vecType = VectorType::get(access.shape, memElem);
  Value v;
  if (access.strided)
    v = tpu::StridedLoadOp::create(b, loc, vecType, ref, access.indices,
                                   ArrayRef<int32_t>(access.strides));
  else
    v = vector::LoadOp::create(b, loc, vecType, ref, access.indices);
  if (auto rv = dyn_cast<VectorType>(resultType)) {
    if (rv.getShape() != vecType.getShape())
      v = vector::ShapeCastOp::create(
          b, loc, VectorType::get(rv.getShape(), memElem), v);
  } else {
    v = vector::ExtractOp::create(
        b, loc, v, SmallVector<int64_t>(access.shape.size(), 0));
  }
  return toBool(v);
}

template <typename OpTy>
LogicalResult BodyLowerer::emitStore(OpBuilder &b, OpTy typedOp, Value value,
                                     Value mask) {
  Operation *op = typedOp;
  Value ref = typedOp.getRef();
  FailureOr<AccessedRef> accessed = accessOf(b, typedOp);
  if (failed(accessed))
    return failure();
  const RefInfo *info = accessed->info;
  Access &access = accessed->access;
  tpu::MemorySpace ms = accessed->space;
  Type memElem = accessed->memElem;
  Location loc = op->getLoc();
  if (info->boolAsI32)
    value = arith::ExtUIOp::create(
        b, loc,
        isa<VectorType>(value.getType())
            ? Type(cast<VectorType>(value.getType()).clone(memElem))
            : memElem,
        value);
  if (ms == tpu::MemorySpace::kSmem) {
    if (mask)
      return op->emitError() << "masked store to " << info->name
                             << " in SMEM; Mosaic's SMEM stores take no mask";
    if (isa<VectorType>(value.getType()) || !access.allPoints)
      return op->emitError() << "'" << op->getName() << "' writes a block of "
                             << info->name
                             << " in SMEM; Mosaic can only store scalars to "
                                "SMEM";
    memref::StoreOp::create(b, loc, value, ref, access.indices);
    return success();
  }
  if (ms != tpu::MemorySpace::kVmem)
    return spaceError(op, *info, "writes");
  auto valueType = dyn_cast<VectorType>(value.getType());
  if (!valueType)
    return op->emitError() << "'" << op->getName() << "' stores a scalar to "
                           << info->name
                           << " in VMEM; Mosaic cannot store scalars to VMEM "
                              "(store a block of shape [1, ...] instead)";
  auto vecType = VectorType::get(access.shape, memElem);
  if (mask && memElem.getIntOrFloatBitWidth() != 32)
    return op->emitError() << "masked store of " << memElem << " to "
                           << info->name
                           << "; Mosaic supports masked stores of 32-bit data "
                              "only";
  if (valueType.getShape() != vecType.getShape()) {
    value = vector::ShapeCastOp::create(b, loc, vecType, value);
    if (mask)
      mask = vector::ShapeCastOp::create(
          b, loc, VectorType::get(access.shape, b.getI1Type()), mask);
  }
  if (access.strided) {
    if (mask)
      return op->emitError() << "masked strided store to " << info->name
                             << " has no Mosaic lowering";
    tpu::StridedStoreOp::create(b, loc, value, ref, access.indices,
                                ArrayRef<int32_t>(access.strides));
    return success();
  }
  tpu::VectorStoreOp::create(b, loc, value, ref, access.indices,
                             /*strides=*/ArrayRef<int32_t>{}, mask,
                             /*add=*/false);
  return success();
}

LogicalResult BodyLowerer::lower(LoadOp op) {
  OpBuilder b(op);
  Type resultType = convertValueType(op.getResult().getType());
  FailureOr<Value> v = emitLoad(b, op, resultType);
  if (failed(v))
    return failure();
  Value result = *v;
  // Masked-off lanes take `other`. The whole block lives in VMEM, so the
  // unmasked read is in bounds (Pallas' TPU lowering has no masked load).
  if (op.getMask() && op.getOther())
    result = arith::SelectOp::create(b, op.getLoc(), op.getMask(), result,
                                     op.getOther());
  replace(op, result);
  return success();
}

LogicalResult BodyLowerer::lower(StoreOp op) {
  OpBuilder b(op);
  if (failed(emitStore(b, op, op.getValue(), op.getMask())))
    return failure();
  op.erase();
  return success();
}

LogicalResult BodyLowerer::lower(SwapOp op) {
  OpBuilder b(op);
  Type resultType = convertValueType(op.getResult().getType());
  FailureOr<Value> old = emitLoad(b, op, resultType);
  if (failed(old))
    return failure();
  if (failed(emitStore(b, op, op.getValue(), op.getMask())))
    return failure();
  replace(op, *old);
  return success();
}

//===----------------------------------------------------------------------===//
// DMA
//===----------------------------------------------------------------------===//

/// A DMA operand as Pallas' lowering passes it (`_lower_transformed_refs`):
/// the memref itself when the indexer selects all of it, else a
/// `tpu.memref_slice` at the indexer's i32 starts; integer-indexed and
/// squeezed block dims are then dropped with `tpu.memref_squeeze`.
FailureOr<Value> BodyLowerer::dmaView(OpBuilder &b, Operation *op, Value ref,
                                      ValueRange dynStarts,
                                      ArrayRef<int64_t> starts,
                                      ArrayRef<int64_t> sizes,
                                      ArrayRef<int64_t> strides) {
  const RefInfo *info = lookupRef(op, ref);
  if (!info)
    return failure();
  if (info->boolAsI32)
    return op->emitError() << "'" << op->getName() << "' copies " << info->name
                           << " of booleans; Pallas' TPU lowering has no "
                              "DMAs of bool data";
  Location loc = op->getLoc();
  Indexer indexer = pallas::detail::buildIndexer(info->refType, dynStarts,
                                                 starts, sizes, strides);
  size_t visible = llvm::count(info->squeezed, false);
  if (indexer.dims.size() != visible)
    return op->emitError() << "indexer has " << indexer.dims.size()
                           << " entries but the ref has rank " << visible;
  ArrayRef<int64_t> memShape = info->type.getShape();
  SmallVector<Value> base;
  SmallVector<int64_t> sliceShape, keptShape;
  bool whole = true, squeeze = false;
  auto next = indexer.dims.begin();
  for (auto [dim, squeezed] : llvm::enumerate(info->squeezed)) {
    if (squeezed) {
      base.push_back(constI32(b, loc, 0));
      sliceShape.push_back(1);
      squeeze = true;
      continue;
    }
    const IndexerDim &d = *next++;
    base.push_back(d.isDynamic() ? d.dynStart
                                 : constI32(b, loc, d.staticStart));
    sliceShape.push_back(d.size);
    if (d.isPoint)
      squeeze = true;
    else
      keptShape.push_back(d.size);
    whole &= !d.isPoint && !d.isDynamic() && d.staticStart == 0 &&
             d.size == memShape[dim];
  }
  Type elem = info->type.getElementType();
  Attribute space = info->type.getMemorySpace();
  Value view = ref;
  if (!whole)
    view = tpu::MemRefSliceOp::create(
        b, loc, MemRefType::get(sliceShape, elem, MemRefLayoutAttrInterface(),
                                space),
        ref, base, ValueRange{});
  if (squeeze)
    view = tpu::MemRefSqueezeOp::create(
        b, loc, MemRefType::get(keptShape, elem, MemRefLayoutAttrInterface(),
                                space),
        view);
  return view;
}

template <typename OpTy>
FailureOr<std::array<Value, 3>> BodyLowerer::dmaOperands(OpBuilder &b,
                                                         OpTy op) {
  // Pallas lowers the semaphore first, then the source and the target.
  FailureOr<Value> sem =
      dmaView(b, op, op.getSem(), op.getSemDynStarts(),
              op.getSemStaticStarts(), op.getSemStaticSizes(),
              op.getSemStaticStrides());
  if (failed(sem))
    return failure();
  if (!isa<tpu::DMASemaphoreType>(
          cast<MemRefType>(sem->getType()).getElementType()))
    return op.emitError() << "the semaphore of '" << op->getName()
                          << "' must be a semaphore scratch ref (a DMA "
                             "semaphore)";
  FailureOr<Value> src =
      dmaView(b, op, op.getSrc(), op.getSrcDynStarts(),
              op.getSrcStaticStarts(), op.getSrcStaticSizes(),
              op.getSrcStaticStrides());
  if (failed(src))
    return failure();
  FailureOr<Value> dst =
      dmaView(b, op, op.getDst(), op.getDstDynStarts(),
              op.getDstStaticStarts(), op.getDstStaticSizes(),
              op.getDstStaticStrides());
  if (failed(dst))
    return failure();
  return std::array<Value, 3>{*src, *dst, *sem};
}

template <typename OpTy, typename EmitFn>
LogicalResult BodyLowerer::lowerDma(OpTy op, EmitFn emit) {
  OpBuilder b(op);
  FailureOr<std::array<Value, 3>> v = dmaOperands(b, op);
  if (failed(v))
    return failure();
  auto [src, dst, sem] = *v;
  if (failed(emit(b, src, dst, sem)))
    return failure();
  op.erase();
  return success();
}

/// tpu.enqueue_dma: a local copy has no send semaphore and no device id.
static void enqueueDma(OpBuilder &b, Location loc, Value src, Value sendSem,
                       Value dst, Value sem, Value deviceId) {
  tpu::EnqueueDMAOp::create(b, loc, src, sendSem, dst, sem, deviceId,
                            /*core_id=*/Value(), /*subcore_id=*/Value(),
                            /*priority=*/b.getI32IntegerAttr(0),
                            /*strict_ordering=*/b.getBoolAttr(false));
}

LogicalResult BodyLowerer::lower(pallas::DmaStartOp op) {
  return lowerDma(op, [&](OpBuilder &b, Value src, Value dst, Value sem) {
    enqueueDma(b, op.getLoc(), src, /*sendSem=*/Value(), dst, sem,
               /*deviceId=*/Value());
    return success();
  });
}

LogicalResult BodyLowerer::lower(pallas::DmaWaitOp op) {
  return lowerDma(op, [&](OpBuilder &b, Value src, Value dst, Value sem) {
    tpu::WaitDMA2Op::create(b, op.getLoc(), sem, src, dst,
                            /*device_id=*/Value(), /*core_id=*/Value(),
                            /*strict_ordering=*/b.getBoolAttr(false));
    return success();
  });
}

template <typename OpTy>
FailureOr<Value> BodyLowerer::semaphoreOperand(OpBuilder &b, OpTy op) {
  // As Pallas' _transform_ref: tpu.memref_slice to the one semaphore, then
  // tpu.memref_squeeze to rank 0.
  FailureOr<Value> sem =
      dmaView(b, op, op.getRef(), op.getDynStarts(), op.getStaticStarts(),
              op.getStaticSizes(), op.getStaticStrides());
  if (failed(sem))
    return failure();
  if (!isa<tpu::SemaphoreType>(
          cast<MemRefType>(sem->getType()).getElementType()))
    return op.emitError() << "'" << op->getName()
                          << "' needs a regular semaphore "
                             "(pltpu.SemaphoreType.REGULAR), but this "
                             "semaphore scratch is also used by DMAs (a "
                             "pltpu.SemaphoreType.DMA semaphore)";
  return sem;
}

template <typename OpTy, typename EmitFn>
LogicalResult BodyLowerer::lowerSemaphoreOp(OpTy op, EmitFn emit) {
  OpBuilder b(op);
  FailureOr<Value> sem = semaphoreOperand(b, op);
  if (failed(sem))
    return failure();
  if (Value result = emit(b, *sem))
    replace(op, result);
  else
    op.erase();
  return success();
}

LogicalResult BodyLowerer::lower(SemaphoreSignalOp op) {
  return lowerSemaphoreOp(op, [&](OpBuilder &b, Value sem) {
    tpu::SemaphoreSignalOp::create(b, op.getLoc(), sem, op.getValue(),
                                   /*device_id=*/Value(), /*core_id=*/Value(),
                                   /*subcore_id=*/Value());
    return Value();
  });
}

LogicalResult BodyLowerer::lower(SemaphoreWaitOp op) {
  return lowerSemaphoreOp(op, [&](OpBuilder &b, Value sem) {
    tpu::SemaphoreWaitOp::create(b, op.getLoc(), sem, op.getValue());
    return Value();
  });
}

LogicalResult BodyLowerer::lower(SemaphoreReadOp op) {
  return lowerSemaphoreOp(op, [&](OpBuilder &b, Value sem) -> Value {
    return tpu::SemaphoreReadOp::create(b, op.getLoc(), b.getI32Type(), sem);
  });
}

//===----------------------------------------------------------------------===//
// Multi-device ops: remote copies and signals, the device id, the barrier
//===----------------------------------------------------------------------===//

bool tpu_lowering::isDmaSemaphoreUser(Operation *user) {
  return isa<pallas::DmaStartOp, pallas::DmaWaitOp, RemoteDmaStartOp,
             RemoteDmaWaitOp>(user);
}

LogicalResult BodyLowerer::lower(RemoteDmaStartOp op) {
  return lowerDma(op, [&](OpBuilder &b, Value src, Value dst, Value sem) {
    FailureOr<Value> send =
        dmaView(b, op, op.getSendSem(), op.getSendSemDynStarts(),
                op.getSendSemStaticStarts(), op.getSendSemStaticSizes(),
                op.getSendSemStaticStrides());
    if (failed(send))
      return failure();
    enqueueDma(b, op.getLoc(), src, *send, dst, sem, op.getDeviceId());
    return success();
  });
}

LogicalResult BodyLowerer::lower(RemoteDmaWaitOp op) {
  return lowerDma(op, [&](OpBuilder &b, Value src, Value dst, Value sem) {
    // wait_send: Pallas' insert_dummy_device (device and core 0).
    Value device = op.getDeviceId(), core;
    if (op.getSend())
      device = core = constI32(b, op.getLoc(), 0);
    tpu::WaitDMA2Op::create(b, op.getLoc(), sem, src, dst, device, core,
                            /*strict_ordering=*/b.getBoolAttr(false));
    return success();
  });
}

LogicalResult BodyLowerer::lower(RemoteSemaphoreSignalOp op) {
  return lowerSemaphoreOp(op, [&](OpBuilder &b, Value sem) {
    tpu::SemaphoreSignalOp::create(b, op.getLoc(), sem, op.getValue(),
                                   op.getDeviceId(), /*core_id=*/Value(),
                                   /*subcore_id=*/Value());
    return Value();
  });
}

LogicalResult BodyLowerer::lower(DeviceIdOp op) {
  OpBuilder b(op);
  replace(op, tpu::DeviceIdOp::create(b, op.getLoc(), b.getI32Type()));
  return success();
}

/// Every pallas.barrier_semaphore of `region` becomes a tpu.sem_barrier,
/// added to `refs` so the semaphore ops find it as they find a kernel
/// argument.
static void lowerBarrierSemaphores(Region &region,
                                   llvm::DenseMap<Value, RefInfo> &refs) {
  SmallVector<BarrierSemaphoreOp> barriers;
  region.walk([&](BarrierSemaphoreOp op) { barriers.push_back(op); });
  for (BarrierSemaphoreOp op : barriers) {
    OpBuilder b(op);
    MLIRContext *ctx = op.getContext();
    RefInfo info;
    info.refType = cast<RefType>(op.getType());
    info.type = MemRefType::get(
        {}, tpu::SemaphoreType::get(ctx), MemRefLayoutAttrInterface(),
        tpu::MemorySpaceAttr::get(ctx, tpu::MemorySpace::kSemaphoreMem));
    info.name = "the barrier semaphore";
    Value barrier =
        tpu::GetBarrierSemaphoreOp::create(b, op.getLoc(), info.type);
    op.getResult().replaceAllUsesWith(barrier);
    op.erase();
    refs[barrier] = info;
  }
}

//===----------------------------------------------------------------------===//
// Block computations
//===----------------------------------------------------------------------===//

LogicalResult BodyLowerer::lower(DotOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto resultType = cast<VectorType>(convertValueType(op.getType()));
  Type elem = resultType.getElementType();
  if (!(elem.isF32() || elem.isBF16() || isa<IntegerType>(elem) ||
        isa<Float8E5M2Type, Float8E4M3FNType, Float8E4M3B11FNUZType>(elem)))
    return op.emitError() << "'pallas.dot' with a " << elem
                          << " result has no Mosaic lowering (tpu.matmul "
                             "accumulates in f32, bf16 or integers)";
  int64_t rank = resultType.getRank();
  bool batched = rank == 3;
  int64_t base = batched ? 1 : 0;
  int64_t lhsContract = base + (op.getTransposeLhs() ? 0 : 1);
  int64_t rhsContract = base + (op.getTransposeRhs() ? 1 : 0);
  SmallVector<int64_t> batch = batched ? SmallVector<int64_t>{0}
                                       : SmallVector<int64_t>{};
  SmallVector<int64_t> lhsNon, rhsNon, order;
  for (int64_t d = base; d < rank; ++d) {
    if (d != lhsContract)
      lhsNon.push_back(d);
    if (d != rhsContract)
      rhsNon.push_back(d);
  }
  for (int64_t d : batch)
    order.append({0, d});
  for (int64_t d : lhsNon)
    order.append({0, d});
  for (int64_t d : rhsNon)
    order.append({1, d});
  auto dims = tpu::DotDimensionNumbersAttr::get(
      b.getContext(), {lhsContract}, {rhsContract}, lhsNon, rhsNon, order,
      batch, batch);

  tpu::ContractPrecisionAttr precision;
  switch (op.getPrecision()) {
  case DotPrecision::Default:
    break;
  case DotPrecision::Highest:
    precision = tpu::ContractPrecisionAttr::get(b.getContext(),
                                                tpu::ContractPrecision::kFP32);
    break;
  case DotPrecision::High:
    return op.emitError() << "'pallas.dot' with precision high has no Mosaic "
                             "lowering (use default or highest)";
  }
  TypedAttr zero = isa<FloatType>(elem) ? TypedAttr(b.getFloatAttr(elem, 0.0))
                                        : TypedAttr(b.getIntegerAttr(elem, 0));
  Value acc = splatConstant(b, loc, resultType, zero);
  Value result = tpu::MatmulOp::create(
      b, loc, resultType, op.getLhs(), op.getRhs(), acc,
      /*transpose_lhs=*/false, /*transpose_rhs=*/false, precision, dims,
      /*transpose_lhs_hint=*/b.getBoolAttr(false));
  // Pallas adds the accumulator after the product, as `acc + dot(a, b)`.
  if (Value a = op.getAcc()) {
    if (isa<FloatType>(elem))
      result = arith::AddFOp::create(b, loc, a, result);
    else
      result = arith::AddIOp::create(b, loc, a, result);
  }
  replace(op, result);
  return success();
}

LogicalResult BodyLowerer::lower(ReduceOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value input = op.getInput();
  auto inType = cast<VectorType>(input.getType());
  Type elem = inType.getElementType();
  Type resultType = convertValueType(op.getType());
  ArrayRef<int64_t> dims = op.getDims();

  if (op.getKind() == ReduceKind::Argmax || op.getKind() == ReduceKind::Argmin) {
    if (!elem.isF32())
      return op.emitError() << "'pallas.reduce "
                            << stringifyReduceKind(op.getKind()) << "' of "
                            << elem << " has no Mosaic lowering (f32 only)";
    if (dims.size() != 1)
      return op.emitError() << "'pallas.reduce "
                            << stringifyReduceKind(op.getKind())
                            << "' over several dims has no Mosaic lowering";
    if (!getElementTypeOf(op.getType()).isInteger(32))
      return op.emitError() << "'pallas.reduce "
                            << stringifyReduceKind(op.getKind())
                            << "' must return i32 indices on TPU";
    tpu::ReductionKind kind = op.getKind() == ReduceKind::Argmax
                                  ? tpu::ReductionKind::kArgMax
                                  : tpu::ReductionKind::kArgMin;
    int64_t axis = dims[0];
    if (inType.getRank() == 1) {
      // Mosaic has no 1-D reduce_index: reduce a [1, n] vector.
      auto in2 = VectorType::get({1, inType.getDimSize(0)}, elem);
      Value x = vector::ShapeCastOp::create(b, loc, in2, input);
      auto out = VectorType::get({1}, b.getI32Type());
      Value r = tpu::ReduceIndexOp::create(b, loc, out, x, 1, kind);
      replace(op, vector::ExtractOp::create(b, loc, r, ArrayRef<int64_t>{0}));
      return success();
    }
    replace(op, tpu::ReduceIndexOp::create(b, loc, resultType, input, axis,
                                           kind));
    return success();
  }

  vector::CombiningKind kind;
  TypedAttr identity;
  if (auto f = dyn_cast<FloatType>(elem)) {
    const llvm::fltSemantics &sem = f.getFloatSemantics();
    switch (op.getKind()) {
    case ReduceKind::Sum:
      kind = vector::CombiningKind::ADD;
      identity = b.getFloatAttr(f, 0.0);
      break;
    case ReduceKind::Max:
      kind = vector::CombiningKind::MAXIMUMF;
      identity = b.getFloatAttr(f, APFloat::getInf(sem, /*Negative=*/true));
      break;
    default:
      kind = vector::CombiningKind::MINIMUMF;
      identity = b.getFloatAttr(f, APFloat::getInf(sem, /*Negative=*/false));
      break;
    }
  } else if (elem.isInteger(32)) {
    switch (op.getKind()) {
    case ReduceKind::Sum:
      kind = vector::CombiningKind::ADD;
      identity = b.getI32IntegerAttr(0);
      break;
    case ReduceKind::Max:
      kind = vector::CombiningKind::MAXSI;
      identity = b.getI32IntegerAttr(std::numeric_limits<int32_t>::min());
      break;
    default:
      kind = vector::CombiningKind::MINSI;
      identity = b.getI32IntegerAttr(std::numeric_limits<int32_t>::max());
      break;
    }
  } else {
    return op.emitError() << "'pallas.reduce " << stringifyReduceKind(op.getKind())
                          << "' over " << elem
                          << " has no Mosaic lowering (floats and i32 only)";
  }

  if (!isa<VectorType>(resultType)) {
    // Reducing to a scalar: as Pallas does, reduce a vector with a leading
    // unit dimension to vector<1xT> and extract the element.
    SmallVector<int64_t> shape{1};
    llvm::append_range(shape, inType.getShape());
    Value x = vector::ShapeCastOp::create(b, loc,
                                          VectorType::get(shape, elem), input);
    SmallVector<bool> mask(shape.size(), true);
    mask[0] = false;
    Value acc = splatConstant(b, loc, VectorType::get({1}, elem), identity);
    Value r = vector::MultiDimReductionOp::create(b, loc, x, acc, mask, kind);
    replace(op, vector::ExtractOp::create(b, loc, r, ArrayRef<int64_t>{0}));
    return success();
  }
  SmallVector<bool> mask(inType.getRank(), false);
  for (int64_t d : dims)
    mask[d] = true;
  Value acc = splatConstant(b, loc, resultType, identity);
  replace(op, vector::MultiDimReductionOp::create(b, loc, input, acc, mask,
                                                  kind));
  return success();
}

LogicalResult BodyLowerer::lower(BroadcastInDimOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto resultType = cast<VectorType>(convertValueType(op.getType()));
  Value v = op.getOperand();
  auto inType = dyn_cast<VectorType>(v.getType());
  if (!inType) {
    replace(op, vector::BroadcastOp::create(b, loc, resultType, v));
    return success();
  }
  if (inType == resultType) {
    replace(op, v);
    return success();
  }
  // Operand dim i goes to result dim dims[i] (increasing, as verified):
  // insert unit dims (a shape_cast), then broadcast them.
  ArrayRef<int64_t> dims = op.getDims();
  SmallVector<int64_t> expanded(resultType.getRank(), 1);
  for (auto [i, d] : llvm::enumerate(dims))
    expanded[d] = inType.getDimSize(i);
  auto expandedType = VectorType::get(expanded, inType.getElementType());
  if (expandedType != inType)
    v = vector::ShapeCastOp::create(b, loc, expandedType, v);
  if (expandedType != resultType)
    v = vector::BroadcastOp::create(b, loc, resultType, v);
  replace(op, v);
  return success();
}

LogicalResult BodyLowerer::lower(IotaOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto resultType = cast<VectorType>(convertValueType(op.getType()));
  if (resultType.getRank() == 1) {
    // Mosaic's iota is at least 2-D: build [1, n] along dim 1.
    auto t2 = VectorType::get({1, resultType.getDimSize(0)},
                              resultType.getElementType());
    Value i = tpu::IotaOp::create(b, loc, t2, b.getDenseI32ArrayAttr({1}));
    replace(op, vector::ShapeCastOp::create(b, loc, resultType, i));
    return success();
  }
  replace(op, tpu::IotaOp::create(
                  b, loc, resultType,
                  b.getDenseI32ArrayAttr(
                      {static_cast<int32_t>(op.getDimension())})));
  return success();
}

LogicalResult BodyLowerer::lower(ReshapeOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Type resultType = convertValueType(op.getType());
  Value v = op.getOperand();
  if (!isa<VectorType>(v.getType()))
    replace(op, vector::BroadcastOp::create(b, loc, resultType, v));
  else if (!isa<VectorType>(resultType))
    replace(op, vector::ExtractOp::create(
                    b, loc, v,
                    SmallVector<int64_t>(
                        cast<VectorType>(v.getType()).getRank(), 0)));
  else if (v.getType() == resultType)
    replace(op, v);
  else
    replace(op, vector::ShapeCastOp::create(b, loc, resultType, v));
  return success();
}

LogicalResult BodyLowerer::lower(TransposeOp op) {
  OpBuilder b(op);
  replace(op, tpu::TransposeOp::create(b, op.getLoc(),
                                       convertValueType(op.getType()),
                                       op.getOperand(), op.getPermutation()));
  return success();
}

LogicalResult BodyLowerer::lower(SelectOp op) {
  OpBuilder b(op);
  replace(op, arith::SelectOp::create(b, op.getLoc(), op.getCond(),
                                      op.getOnTrue(), op.getOnFalse()));
  return success();
}

LogicalResult BodyLowerer::lower(MultipleOfOp op) {
  Value v = op.getOperand();
  if (isa<VectorType>(v.getType())) {
    replace(op, v); // a hint Mosaic has only for scalars
    return success();
  }
  OpBuilder b(op);
  replace(op, tpu::AssumeMultipleOp::create(
                  b, op.getLoc(), v,
                  static_cast<int32_t>(op.getDivisor())));
  return success();
}

LogicalResult BodyLowerer::lower(MaxContiguousOp op) {
  replace(op, op.getOperand()); // a Triton hint; Mosaic has no equivalent
  return success();
}

LogicalResult BodyLowerer::lower(DebugPrintOp op) {
  OpBuilder b(op);
  for (Value v : op.getValues())
    if (isa<VectorType>(v.getType()))
      return op.emitError() << "'pallas.debug_print' of a block has no "
                               "lowering in pallasc's TPU path (print "
                               "scalars)";
  StringRef fmt = op.getFormat();
  bool placeholders = !op.getValues().empty();
  std::string tag;
  if (placeholders) {
    for (Value v : op.getValues())
      if (!v.getType().isInteger(32))
        return op.emitError()
               << "'pallas.debug_print' on TPU prints i32 values only (got "
               << v.getType() << ")";
    // Mosaic's placeholders are $0, $1, ...
    unsigned next = 0;
    for (size_t i = 0; i < fmt.size(); ++i) {
      if (fmt.substr(i).starts_with("{}")) {
        tag += "$" + std::to_string(next++);
        ++i;
      } else {
        tag += fmt[i];
      }
    }
  } else {
    tag = fmt.str();
  }
  tpu::LogOp::create(b, op.getLoc(), op.getValues(), tag, placeholders);
  op.erase();
  return success();
}

LogicalResult tpu_lowering::lowerBody(
    Region &region, const GridInfo &grid,
    const llvm::DenseMap<Value, RefInfo> &refs) {
  llvm::DenseMap<Value, RefInfo> withBarriers(refs);
  lowerBarrierSemaphores(region, withBarriers);
  BodyLowerer lowerer(grid, withBarriers);
  return lowerer.run(region);
}
