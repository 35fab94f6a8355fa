//===- Vmap.cpp - pallas-vmap: batch a pallas_call -------------*- C++ -*-===//
//
// JAX's _pallas_call_batching_rule, _batch_block_mapping,
// _broadcast_input_output_aliases and _batch_with_explicit_loop, applied to
// every function of the module that holds a pallas.call (the driver's
// `func.func @main`).
//
// The function is batched as jax.vmap would batch it: `in-axes` gives the
// batch axis of each of its inputs (-1: not batched), every value computed
// from a batched value is batched, and its results are batched at axis 0. The
// ops a wrapper holds each have a rule: pallas.call (JAX's rule),
// pallas.broadcast_in_dim / transpose / reshape (those pallasc itself puts in
// wrappers) and func.return; any other op with a batched operand (e.g. the
// scf.for of an earlier vmap's explicit loop) runs once per batch element in
// an scf.for of its own, as jax.vmap of an op without a batching rule would
// under lax.map.
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/CallUtils.h"
#include "passes/Transforms/Passes.h"
#include "src/Spec/SymExpr.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <optional>

namespace mlir::pallas {
#define GEN_PASS_DEF_PALLASVMAP
#include "passes/Transforms/Passes.h.inc"
} // namespace mlir::pallas

#define DEBUG_TYPE "pallas-vmap"

using namespace mlir;
using namespace mlir::pallas;

/// Discardable attribute on a pallas.call run once per batch element by the
/// explicit-loop fallback; the manifest writer emits it as `batch_loop`.
static constexpr const char *kBatchLoopAttrName = "pallas.batch_loop";

namespace {

using BDim = std::optional<int64_t>;

/// `shape` with `size` inserted at `axis`.
SmallVector<int64_t> insertDim(ArrayRef<int64_t> shape, int64_t axis,
                               int64_t size) {
  SmallVector<int64_t> out(shape);
  out.insert(out.begin() + axis, size);
  return out;
}

RankedTensorType batchedType(RankedTensorType type, int64_t axis,
                             int64_t size) {
  return RankedTensorType::get(insertDim(type.getShape(), axis, size),
                               type.getElementType());
}

/// The size in bytes of `type`, or nullopt when it leaves int64 (an index
/// element counts 8 bytes).
std::optional<int64_t> checkedByteSize(RankedTensorType type) {
  Type elem = type.getElementType();
  int64_t bytes = elem.isIntOrFloat()
                      ? std::max<int64_t>(1, elem.getIntOrFloatBitWidth() / 8)
                      : 8;
  for (int64_t d : type.getShape())
    if (!ShapedType::isDynamic(d) && llvm::MulOverflow(bytes, d, bytes))
      return std::nullopt;
  return bytes;
}

/// An error on the first value of `func` (argument or result) whose batched
/// type's size in bytes leaves int64: the axis size was too large for it.
LogicalResult checkBatchedSizes(func::FuncOp func, int64_t axisSize) {
  auto check = [&](Value v, Location loc) -> LogicalResult {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || checkedByteSize(type))
      return success();
    return emitError(loc) << "pallas-vmap: batching by axis size " << axisSize
                          << " gives a value of type " << type
                          << ", whose size in bytes overflows int64";
  };
  for (BlockArgument arg : func.getArguments())
    if (failed(check(arg, func.getLoc())))
      return failure();
  WalkResult walk = func.walk([&](Operation *op) {
    for (Value r : op->getResults())
      if (failed(check(r, op->getLoc())))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

/// Batches one function.
class FunctionBatcher {
public:
  /// `axisExpr`: the symbolic axis size (axis-expr), or null; then
  /// `axisSize` is ShapedType::kDynamic.
  FunctionBatcher(func::FuncOp func, int64_t axisSize,
                  const pallasc::spec::DimExpr *axisExpr, SymbolTable &symbols)
      : func(func), axisSize(axisSize), axisExpr(axisExpr), symbols(symbols) {}

  LogicalResult run(ArrayRef<int64_t> inAxes);

private:
  BDim dimOf(Value v) const {
    auto it = bdims.find(v);
    if (it == bdims.end())
      return std::nullopt;
    return it->second;
  }

  LogicalResult batchOp(Operation *op);
  /// The symbolic axis size as index arithmetic over @func's symbol
  /// arguments, at the start of its body.
  LogicalResult emitAxisValue();
  /// An error at `op`: `what` cannot take the symbolic axis size.
  LogicalResult refuseSymbolicAxis(Operation *op, const Twine &what) {
    return op->emitError() << "pallas-vmap: " << what
                           << " cannot be batched by the symbolic axis size '"
                           << axisExpr->str()
                           << "' (it takes static shapes; give vmap an "
                              "integer axis_size)";
  }
  /// Replaces the results of `old` by `news` (each batched at 0) and
  /// erases it.
  LogicalResult replaceBatched(Operation *old, ValueRange news) {
    for (auto [oldResult, newResult] : llvm::zip(old->getResults(), news)) {
      oldResult.replaceAllUsesWith(newResult);
      bdims[newResult] = 0;
    }
    old->erase();
    return success();
  }
  LogicalResult batchCall(CallOp call);
  LogicalResult batchCallSqueezed(CallOp call, ArrayRef<BDim> boundDims,
                                  ArrayRef<BDim> inDims);
  LogicalResult batchCallWithLoop(CallOp call, ArrayRef<BDim> boundDims,
                                  SmallVector<BDim> inDims);
  FailureOr<BlockSpecAttr> batchBlockSpec(CallOp call, BlockSpecAttr spec,
                                          BDim dim, RankedTensorType array);
  FailureOr<FlatSymbolRefAttr>
  batchIndexFunc(CallOp call, FlatSymbolRefAttr funcName, BDim dim);
  LogicalResult batchReturn(func::ReturnOp ret);
  /// The fallback rule: `op` once per batch element in an scf.for.
  LogicalResult batchWithLoop(Operation *op);
  /// Element `iv` of `v` along its batch axis `axis`: a rank-reduced slice,
  /// or the scalar of a batched index (a tensor<N x index>).
  Value sliceBatch(OpBuilder &b, Location loc, Value v, int64_t axis,
                   Value iv);
  /// `acc` (batched at 0) with element `iv` replaced by `v`.
  Value insertBatch(OpBuilder &b, Location loc, Value v, Value acc, Value iv);

  /// `_broadcast_input_output_aliases`: aliased inputs end up batched at 0.
  LogicalResult broadcastAliases(CallOp call, SmallVectorImpl<Value> &inputs,
                                 SmallVectorImpl<BDim> &inDims);
  /// v (unbatched) broadcast to a leading batch dimension.
  FailureOr<Value> broadcastBatch(OpBuilder &b, Location loc, Value v);
  /// v (batched at `dim`) with its batch dimension moved to 0.
  Value moveBatchToFront(OpBuilder &b, Location loc, Value v, int64_t dim);

  func::FuncOp func;
  int64_t axisSize;
  const pallasc::spec::DimExpr *axisExpr;
  /// The symbolic axis size's value in @func (with axisExpr).
  Value axisValue;
  SymbolTable &symbols;
  DenseMap<Value, int64_t> bdims;
  /// Batched copies of @func index maps, by (function, batch dim or -1).
  DenseMap<std::pair<Operation *, int64_t>, FlatSymbolRefAttr> indexFuncs;
};

LogicalResult FunctionBatcher::run(ArrayRef<int64_t> inAxes) {
  Block &entry = func.front();
  // JAX's message; jax.vmap itself needs an argument to batch.
  if (entry.getNumArguments() == 0)
    return func.emitError("vmapping pallas_call with no arguments");
  SmallVector<BlockArgument> tensorArgs;
  for (BlockArgument arg : entry.getArguments())
    if (!arg.getType().isIndex())
      tensorArgs.push_back(arg);
  // One axis per input, or one per argument with the dynamic grid bounds
  // (index arguments) included.
  ArrayRef<BlockArgument> targets;
  SmallVector<BlockArgument> allArgs(entry.getArguments());
  if (inAxes.size() == tensorArgs.size())
    targets = tensorArgs;
  else if (inAxes.size() == allArgs.size())
    targets = allArgs;
  else
    return func.emitError()
           << "pallas-vmap: in-axes has " << inAxes.size() << " entries but @"
           << func.getSymName() << " takes " << tensorArgs.size() << " inputs"
           << (tensorArgs.size() != allArgs.size()
                   ? " (" + std::to_string(allArgs.size()) +
                         " with its dynamic grid bounds)"
                   : std::string());

  bool anyBatched = false;
  for (auto [i, axis] : llvm::enumerate(inAxes)) {
    if (axis == -1)
      continue;
    BlockArgument arg = targets[i];
    Type type = arg.getType();
    if (auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                      "pallas.symbol"))
      return func.emitError()
             << "pallas-vmap: in-axes[" << i << "] = " << axis << ": argument "
             << arg.getArgNumber() << " of @" << func.getSymName()
             << " is the symbol '" << name.getValue()
             << "' of a symbolic call, which has one value per launch and is "
                "not batched (expected -1)";
    if (isa<HiType>(type))
      return func.emitError()
             << "pallas-vmap: input " << i << " of @" << func.getSymName()
             << " is a !pallas.hi aggregate; run pallas-hi-to-lo first";
    if (type.isIndex()) {
      if (axis != 0)
        return func.emitError()
               << "pallas-vmap: in-axes[" << i << "] = " << axis
               << ": a dynamic grid bound is a scalar; its batch axis must "
                  "be 0 or -1";
      arg.setType(RankedTensorType::get({axisSize}, type));
    } else {
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (!tensor)
        return func.emitError()
               << "pallas-vmap: input " << i << " of @" << func.getSymName()
               << " has type " << type << ", which cannot be batched";
      if (axis < 0 || axis > tensor.getRank())
        return func.emitError()
               << "pallas-vmap: in-axes[" << i << "] = " << axis
               << " is out of range for input " << i << " of type " << type
               << " (expected -1 or an axis in [0, " << tensor.getRank()
               << "])";
      arg.setType(batchedType(tensor, axis, axisSize));
    }
    bdims[arg] = axis;
    anyBatched = true;
  }
  // No batched operand: nothing changes (JAX's rule returns the call
  // as it is, its outputs unbatched).
  if (!anyBatched) {
    func.walk([](CallOp call) { recordTransform(call, "vmap"); });
    return success();
  }

  if (axisExpr && failed(emitAxisValue()))
    return failure();
  SmallVector<Operation *> ops;
  for (Operation &op : entry)
    ops.push_back(&op);
  for (Operation *op : ops)
    if (failed(batchOp(op)))
      return failure();
  updateFunctionType(func);
  return success();
}

LogicalResult FunctionBatcher::emitAxisValue() {
  std::map<std::string, Value> args;
  for (BlockArgument arg : func.getArguments())
    if (auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                      "pallas.symbol"))
      args[name.str()] = arg;
  OpBuilder b = OpBuilder::atBlockBegin(&func.front());
  Location loc = func.getLoc();
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value acc;
  for (const auto &[name, coefficient] : axisExpr->num.terms) {
    auto it = args.find(name);
    if (it == args.end())
      return func.emitError()
             << "pallas-vmap: the axis size '" << axisExpr->str()
             << "' uses the symbol '" << name << "', which @"
             << func.getSymName()
             << " does not take (expected a symbol of the call's "
                "`symbolic` attribute, an argument with pallas.symbol)";
    Value term = it->second;
    if (coefficient != 1)
      term = arith::MulIOp::create(b, loc, term, constant(coefficient));
    acc = acc ? arith::AddIOp::create(b, loc, acc, term).getResult() : term;
  }
  if (axisExpr->num.constant != 0)
    acc = arith::AddIOp::create(b, loc, acc, constant(axisExpr->num.constant));
  axisValue = acc;
  return success();
}

LogicalResult FunctionBatcher::batchOp(Operation *op) {
  if (auto ret = dyn_cast<func::ReturnOp>(op))
    return batchReturn(ret);
  bool batched = llvm::any_of(op->getOperands(),
                              [&](Value v) { return dimOf(v).has_value(); });
  if (!batched && op->getNumRegions()) {
    SetVector<Value> captured;
    getUsedValuesDefinedAbove(op->getRegions(), captured);
    batched =
        llvm::any_of(captured, [&](Value v) { return dimOf(v).has_value(); });
  }
  if (!batched) {
    if (auto call = dyn_cast<CallOp>(op))
      recordTransform(call, "vmap");
    return success();
  }
  OpBuilder b(op);
  Location loc = op->getLoc();
  if (auto call = dyn_cast<CallOp>(op))
    return batchCall(call);
  if (axisExpr)
    return refuseSymbolicAxis(op, "'" + op->getName().getStringRef() + "'");
  if (auto bcast = dyn_cast<BroadcastInDimOp>(op)) {
    // Batch at 0, operand dims shift by one.
    Value in = moveBatchToFront(b, loc, bcast.getOperand(),
                                *dimOf(bcast.getOperand()));
    SmallVector<int64_t> dims{0};
    for (int64_t d : bcast.getDims())
      dims.push_back(d + 1);
    auto type = batchedType(bcast.getResult().getType(), 0, axisSize);
    auto batched = BroadcastInDimOp::create(b, loc, type, in,
                                            b.getDenseI64ArrayAttr(dims));
    return replaceBatched(op, batched->getResults());
  }
  if (auto transpose = dyn_cast<TransposeOp>(op)) {
    int64_t d = *dimOf(transpose.getOperand());
    SmallVector<int64_t> perm{d};
    for (int64_t p : transpose.getPermutation())
      perm.push_back(p < d ? p : p + 1);
    auto type = batchedType(transpose.getResult().getType(), 0, axisSize);
    auto batched = TransposeOp::create(b, loc, type, transpose.getOperand(),
                                       b.getDenseI64ArrayAttr(perm));
    return replaceBatched(op, batched->getResults());
  }
  if (auto reshape = dyn_cast<ReshapeOp>(op)) {
    Value in = moveBatchToFront(b, loc, reshape.getOperand(),
                                *dimOf(reshape.getOperand()));
    auto type = batchedType(reshape.getResult().getType(), 0, axisSize);
    return replaceBatched(op,
                          ReshapeOp::create(b, loc, type, in)->getResults());
  }
  return batchWithLoop(op);
}

Value FunctionBatcher::sliceBatch(OpBuilder &b, Location loc, Value v,
                                  int64_t axis, Value iv) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getRank() == 1 && type.getElementType().isIndex())
    return tensor::ExtractOp::create(b, loc, v, iv);
  SmallVector<OpFoldResult> offsets, sizes, strides;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    offsets.push_back(i == axis ? OpFoldResult(iv)
                                : OpFoldResult(b.getIndexAttr(0)));
    sizes.push_back(b.getIndexAttr(i == axis ? 1 : type.getDimSize(i)));
    strides.push_back(b.getIndexAttr(1));
  }
  SmallVector<int64_t> shape(type.getShape());
  shape.erase(shape.begin() + axis);
  return tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), v, offsets,
      sizes, strides);
}

Value FunctionBatcher::insertBatch(OpBuilder &b, Location loc, Value v,
                                   Value acc, Value iv) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type)
    return tensor::InsertOp::create(b, loc, v, acc, iv);
  SmallVector<OpFoldResult> offsets{iv}, sizes{b.getIndexAttr(1)},
      strides{b.getIndexAttr(1)};
  for (int64_t n : type.getShape()) {
    offsets.push_back(b.getIndexAttr(0));
    sizes.push_back(b.getIndexAttr(n));
    strides.push_back(b.getIndexAttr(1));
  }
  return tensor::InsertSliceOp::create(b, loc, v, acc, offsets, sizes,
                                       strides);
}

LogicalResult FunctionBatcher::batchWithLoop(Operation *op) {
  if (axisExpr)
    return refuseSymbolicAxis(op, "'" + op->getName().getStringRef() +
                                      "' (run once per batch element)");
  // Results become tensors batched at 0: ranked tensors gain a leading
  // dimension, index and integer/float scalars become 1-D tensors.
  SmallVector<Type> batchedTypes;
  for (Type t : op->getResultTypes()) {
    auto shaped = dyn_cast<ShapedType>(t);
    if (shaped && !shaped.hasStaticShape())
      return op->emitError() << "pallas-vmap cannot batch '" << op->getName()
                             << "' in a loop: its result of type " << t
                             << " has a symbolic shape";
    if (auto rt = dyn_cast<RankedTensorType>(t))
      batchedTypes.push_back(batchedType(rt, 0, axisSize));
    else if (t.isIntOrIndexOrFloat())
      batchedTypes.push_back(RankedTensorType::get({axisSize}, t));
    else
      return op->emitError() << "pallas-vmap cannot batch '" << op->getName()
                             << "': its result of type " << t
                             << " cannot hold a batch";
  }
  // Batched values the op reads, directly or inside its regions.
  SetVector<Value> reads(op->getOperands().begin(), op->getOperands().end());
  getUsedValuesDefinedAbove(op->getRegions(), reads);
  OpBuilder b(op);
  Location loc = op->getLoc();
  SmallVector<Value> inits;
  for (Type t : batchedTypes) {
    auto rt = cast<RankedTensorType>(t);
    inits.push_back(tensor::EmptyOp::create(b, loc, rt.getShape(),
                                            rt.getElementType()));
  }
  Value lower = arith::ConstantIndexOp::create(b, loc, 0);
  Value upper = arith::ConstantIndexOp::create(b, loc, axisSize);
  Value step = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(
      b, loc, lower, upper, step, inits,
      [&](OpBuilder &lb, Location loc, Value iv, ValueRange acc) {
        IRMapping mapping;
        for (Value v : reads)
          if (BDim d = dimOf(v))
            mapping.map(v, sliceBatch(lb, loc, v, *d, iv));
        Operation *inner = lb.clone(*op, mapping);
        inner->walk([&](CallOp call) { recordTransform(call, "vmap"); });
        SmallVector<Value> updated;
        for (auto [r, a] : llvm::zip(inner->getResults(), acc))
          updated.push_back(insertBatch(lb, loc, r, a, iv));
        scf::YieldOp::create(lb, loc, updated);
      });
  return replaceBatched(op, loop.getResults());
}

LogicalResult FunctionBatcher::batchReturn(func::ReturnOp ret) {
  OpBuilder b(ret);
  SmallVector<Value> results;
  for (Value v : ret.getOperands()) {
    BDim d = dimOf(v);
    if (!d) {
      FailureOr<Value> bcast = broadcastBatch(b, ret.getLoc(), v);
      if (failed(bcast))
        return failure();
      results.push_back(*bcast);
    } else {
      results.push_back(moveBatchToFront(b, ret.getLoc(), v, *d));
    }
  }
  ret->setOperands(results);
  return success();
}

FailureOr<Value> FunctionBatcher::broadcastBatch(OpBuilder &b, Location loc,
                                                 Value v) {
  if (axisExpr)
    return refuseSymbolicAxis(v.getDefiningOp() ? v.getDefiningOp() : func,
                              "broadcasting an unbatched value along the "
                              "batch axis");
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape())
    return emitError(loc) << "pallas-vmap: cannot broadcast a value of type "
                          << v.getType() << " along the batch axis"
                          << (type ? " (a symbolic shape)" : "");
  SmallVector<int64_t> dims;
  for (int64_t i = 0; i < type.getRank(); ++i)
    dims.push_back(i + 1);
  auto bcast = BroadcastInDimOp::create(b, loc, batchedType(type, 0, axisSize),
                                        v, b.getDenseI64ArrayAttr(dims));
  bdims[bcast.getResult()] = 0;
  return bcast.getResult();
}

Value FunctionBatcher::moveBatchToFront(OpBuilder &b, Location loc, Value v,
                                        int64_t dim) {
  if (dim == 0)
    return v;
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> perm{dim}, shape{type.getDimSize(dim)};
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (i != dim) {
      perm.push_back(i);
      shape.push_back(type.getDimSize(i));
    }
  auto transpose = TransposeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), v,
      b.getDenseI64ArrayAttr(perm));
  bdims[transpose.getResult()] = 0;
  return transpose.getResult();
}

LogicalResult FunctionBatcher::broadcastAliases(CallOp call,
                                                SmallVectorImpl<Value> &inputs,
                                                SmallVectorImpl<BDim> &inDims) {
  OpBuilder b(call);
  for (auto [in, out] : call.getAliasPairs()) {
    BDim d = inDims[in];
    if (!d) {
      FailureOr<Value> bcast = broadcastBatch(b, call.getLoc(), inputs[in]);
      if (failed(bcast))
        return failure();
      inputs[in] = *bcast;
    } else if (*d != 0) {
      // As JAX does: the batch axis moves to the front (moving the output's
      // batch axis instead would save this transpose; JAX does not either).
      inputs[in] = moveBatchToFront(b, call.getLoc(), inputs[in], *d);
    }
    inDims[in] = 0;
  }
  return success();
}

LogicalResult FunctionBatcher::batchCall(CallOp call) {
  SmallVector<BDim> boundDims, inDims;
  for (Value v : call.getDynamicGridBounds())
    boundDims.push_back(dimOf(v));
  for (Value v : call.getInputs())
    inDims.push_back(dimOf(v));
  for (Value v : call.getInputs())
    if (isa<HiType>(v.getType()))
      return call.emitOpError()
             << "has !pallas.hi operands; run pallas-hi-to-lo before "
                "pallas-vmap";

  // "Why are we even vmapping?": squeeze the size-1 axis off, call the
  // kernel as it is, and expand the outputs. A symbolic call's arrays have
  // dynamic dims, which pallas.reshape does not take: it gets a grid axis
  // of 1 instead.
  DictionaryAttr symbolic = call.getSymbolicAttr();
  if (axisExpr && !symbolic)
    return call.emitOpError()
           << "pallas-vmap: the axis size '" << axisExpr->str()
           << "' is symbolic but the call has no symbolic shapes";
  if (axisSize == 1 && !symbolic)
    return batchCallSqueezed(call, boundDims, inDims);

  // Batched dynamic grid bounds or scalar-prefetch operands: the grid
  // cannot carry the batch, so the call runs once per batch element.
  int64_t nsp = call.getNumScalarPrefetch();
  bool needsLoop =
      llvm::any_of(boundDims, [](BDim d) { return d.has_value(); }) ||
      llvm::any_of(ArrayRef<BDim>(inDims).take_front(nsp),
                   [](BDim d) { return d.has_value(); });
  // An aliased scalar-prefetch operand would have to be broadcast, which
  // batches it: the loop as well.
  for (auto [in, out] : call.getAliasPairs())
    if (in < nsp)
      needsLoop = true;
  if (needsLoop && symbolic)
    return call.emitOpError()
           << "pallas-vmap: batching a dynamic grid bound or scalar-prefetch "
              "operand of a symbolic call needs the explicit batch loop, "
              "which does not take symbolic shapes yet";
  if (needsLoop)
    return batchCallWithLoop(call, boundDims, inDims);
  // A symbolic array aliased to an output must be batched at axis 0: the
  // broadcast or transpose that would put it there takes static shapes.
  if (symbolic)
    for (auto [in, out] : call.getAliasPairs()) {
      auto type = cast<RankedTensorType>(call.getInputs()[in].getType());
      BDim d = inDims[in];
      if ((type.hasStaticShape() && !axisExpr) || (d && *d == 0))
        continue;
      return call.emitOpError()
             << "pallas-vmap: input " << in << " of type " << type
             << " is aliased to output " << out << " and "
             << (d ? "batched at axis " + std::to_string(*d)
                   : std::string("not batched"))
             << "; "
             << (type.hasStaticShape()
                     ? "with the symbolic axis size '" + axisExpr->str() +
                           "' an array"
                     : std::string("a symbolic array"))
             << " aliased to an output must be batched at axis 0 (its "
             << (d ? "transpose" : "broadcast") << " takes static shapes)";
    }

  // The unbatched array of each input, as the kernel's call saw it.
  SmallVector<RankedTensorType> arrays;
  for (auto [v, d] : llvm::zip(call.getInputs(), inDims)) {
    auto type = cast<RankedTensorType>(v.getType());
    if (d) {
      SmallVector<int64_t> shape(type.getShape());
      shape.erase(shape.begin() + *d);
      type = RankedTensorType::get(shape, type.getElementType());
    }
    arrays.push_back(type);
  }
  SmallVector<Value> inputs(call.getInputs());
  if (failed(broadcastAliases(call, inputs, inDims)))
    return failure();

  MLIRContext *ctx = call.getContext();
  SmallVector<Attribute> inSpecs, outSpecs;
  for (auto [i, attr] : llvm::enumerate(call.getInSpecs())) {
    int64_t input = nsp + i;
    FailureOr<BlockSpecAttr> spec = batchBlockSpec(
        call, cast<BlockSpecAttr>(attr), inDims[input], arrays[input]);
    if (failed(spec))
      return failure();
    inSpecs.push_back(*spec);
  }
  SmallVector<Type> resultTypes;
  for (auto [i, attr] : llvm::enumerate(call.getOutSpecs())) {
    auto array = cast<RankedTensorType>(call.getOutputs()[i].getType());
    FailureOr<BlockSpecAttr> spec =
        batchBlockSpec(call, cast<BlockSpecAttr>(attr), 0, array);
    if (failed(spec))
      return failure();
    outSpecs.push_back(*spec);
    resultTypes.push_back(batchedType(array, 0, axisSize));
  }

  OpBuilder b(call);
  // A symbolic axis size: the new grid axis is dynamic (its bound the
  // axis size's value), and so is each output's new leading dim.
  SmallVector<Value> bounds(call.getDynamicGridBounds());
  std::optional<SmallVector<Value>> sizes;
  if (axisExpr) {
    bounds.insert(bounds.begin(), axisValue);
    sizes.emplace();
    ValueRange oldSizes = call.getDynamicSizes();
    for (Type t : call.getResultTypes()) {
      sizes->push_back(axisValue);
      int64_t n = cast<RankedTensorType>(t).getNumDynamicDims();
      llvm::append_range(*sizes, oldSizes.take_front(n));
      oldSizes = oldSizes.drop_front(n);
    }
  }
  CallOp batched =
      cloneCallWith(b, call, bounds, inputs, resultTypes,
                    sizes ? std::optional<ValueRange>(*sizes) : std::nullopt);
  batched.setInSpecsAttr(b.getArrayAttr(inSpecs));
  batched.setOutSpecsAttr(b.getArrayAttr(outSpecs));
  batched.setGrid(insertDim(call.getGrid(), 0, axisExpr ? -1 : axisSize));
  // A symbolic call: each batched operand's shape entry gets the axis size
  // at its batch axis; the new grid axis is static (no expression) or the
  // symbolic axis size.
  if (symbolic) {
    std::string axisText =
        axisExpr ? axisExpr->str() : std::to_string(axisSize);
    auto withBatch = [&](Attribute entry, int64_t axis) -> Attribute {
      SmallVector<Attribute> dims(cast<ArrayAttr>(entry).getValue());
      dims.insert(dims.begin() + axis, b.getStringAttr(axisText));
      return b.getArrayAttr(dims);
    };
    SmallVector<Attribute> symInputs = getSymbolicShapes(call, "inputs");
    for (auto [i, d] : llvm::enumerate(inDims))
      if (d)
        symInputs[i] = withBatch(symInputs[i], *d);
    SmallVector<Attribute> symOutputs;
    for (Attribute e : getSymbolicShapes(call, "outputs"))
      symOutputs.push_back(withBatch(e, 0));
    setSymbolicShapes(batched, symInputs, symOutputs);
    SmallVector<Attribute> grid{
        b.getStringAttr(axisExpr ? axisText : std::string())};
    llvm::append_range(grid, symbolic.getAs<ArrayAttr>("grid").getValue());
    NamedAttrList entries(batched.getSymbolicAttr());
    entries.set("grid", b.getArrayAttr(grid));
    batched.setSymbolicAttr(entries.getDictionary(ctx));
  }
  // The batch dimension is unnamed.
  if (auto names = call.getGridNamesAttr()) {
    SmallVector<Attribute> newNames{b.getStringAttr("")};
    llvm::append_range(newNames, names.getValue());
    batched.setGridNamesAttr(b.getArrayAttr(newNames));
  }
  SmallVector<int64_t> vmapped{0};
  for (int64_t d : call.getVmappedDims())
    vmapped.push_back(d + 1);
  batched.setVmappedDims(vmapped);
  // The cost estimate is a number per call: with a symbolic axis size the
  // batched call's has no value, so it is dropped.
  if (axisExpr)
    batched.removeCostEstimateAttr();
  else if (CostEstimateAttr cost = call.getCostEstimateAttr()) {
    int64_t flops, bytes, trans;
    if (llvm::MulOverflow(cost.getFlops(), axisSize, flops) ||
        llvm::MulOverflow(cost.getBytesAccessed(), axisSize, bytes) ||
        llvm::MulOverflow(cost.getTranscendentals(), axisSize, trans))
      return call.emitOpError()
             << "cost estimate overflows int64 when scaled by the axis size "
             << axisSize;
    batched.setCostEstimateAttr(
        CostEstimateAttr::get(ctx, flops, bytes, trans));
  }
  recordTransform(batched, "vmap");
  return replaceBatched(call, batched.getResults());
}

LogicalResult FunctionBatcher::batchCallSqueezed(CallOp call,
                                                 ArrayRef<BDim> boundDims,
                                                 ArrayRef<BDim> inDims) {
  OpBuilder b(call);
  Location loc = call.getLoc();
  SmallVector<Value> bounds, inputs;
  for (auto [v, d] : llvm::zip(call.getDynamicGridBounds(), boundDims)) {
    if (!d) {
      bounds.push_back(v);
      continue;
    }
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    bounds.push_back(tensor::ExtractOp::create(b, loc, v, zero));
  }
  for (auto [v, d] : llvm::zip(call.getInputs(), inDims)) {
    if (!d) {
      inputs.push_back(v);
      continue;
    }
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape.erase(shape.begin() + *d);
    inputs.push_back(ReshapeOp::create(
        b, loc, RankedTensorType::get(shape, type.getElementType()), v));
  }
  CallOp squeezed =
      cloneCallWith(b, call, bounds, inputs, call.getResultTypes());
  recordTransform(squeezed, "vmap");
  for (auto [oldResult, newResult] :
       llvm::zip(call.getResults(), squeezed.getResults())) {
    auto type = cast<RankedTensorType>(newResult.getType());
    auto expanded =
        ReshapeOp::create(b, loc, batchedType(type, 0, 1), newResult);
    oldResult.replaceAllUsesWith(expanded.getResult());
    bdims[expanded.getResult()] = 0;
  }
  call.erase();
  return success();
}

LogicalResult FunctionBatcher::batchCallWithLoop(CallOp call,
                                                 ArrayRef<BDim> boundDims,
                                                 SmallVector<BDim> inDims) {
  SmallVector<Value> inputs(call.getInputs());
  if (failed(broadcastAliases(call, inputs, inDims)))
    return failure();

  OpBuilder b(call);
  Location loc = call.getLoc();
  // The outputs are completely overwritten: start from empty tensors.
  SmallVector<Value> inits;
  for (Type t : call.getResultTypes()) {
    auto type = batchedType(cast<RankedTensorType>(t), 0, axisSize);
    inits.push_back(tensor::EmptyOp::create(b, loc, type.getShape(),
                                            type.getElementType()));
  }
  Value lower = arith::ConstantIndexOp::create(b, loc, 0);
  Value upper = arith::ConstantIndexOp::create(b, loc, axisSize);
  Value step = arith::ConstantIndexOp::create(b, loc, 1);

  SmallVector<int64_t> inAxes, boundAxes;
  for (BDim d : inDims)
    inAxes.push_back(d ? *d : -1);
  for (BDim d : boundDims)
    boundAxes.push_back(d ? *d : -1);
  auto loopAttr = b.getDictionaryAttr(
      {b.getNamedAttr("axis_size", b.getI64IntegerAttr(axisSize)),
       b.getNamedAttr("in_axes", b.getDenseI64ArrayAttr(inAxes)),
       b.getNamedAttr("grid_bound_axes", b.getDenseI64ArrayAttr(boundAxes))});

  auto loop = scf::ForOp::create(
      b, loc, lower, upper, step, inits,
      [&](OpBuilder &lb, Location loc, Value iv, ValueRange acc) {
        SmallVector<Value> bounds, args;
        for (auto [v, d] : llvm::zip(call.getDynamicGridBounds(), boundDims))
          bounds.push_back(
              d ? tensor::ExtractOp::create(lb, loc, v, iv).getResult() : v);
        for (auto [v, d] : llvm::zip(inputs, inDims))
          args.push_back(d ? sliceBatch(lb, loc, v, *d, iv) : v);
        CallOp inner =
            cloneCallWith(lb, call, bounds, args, call.getResultTypes());
        inner->setAttr(kBatchLoopAttrName, loopAttr);
        recordTransform(inner, "vmap");
        SmallVector<Value> updated;
        for (auto [r, a] : llvm::zip(inner.getResults(), acc))
          updated.push_back(insertBatch(lb, loc, r, a, iv));
        scf::YieldOp::create(lb, loc, updated);
      });
  return replaceBatched(call, loop.getResults());
}

FailureOr<BlockSpecAttr>
FunctionBatcher::batchBlockSpec(CallOp call, BlockSpecAttr spec, BDim dim,
                                RankedTensorType array) {
  MLIRContext *ctx = call.getContext();
  unsigned newGridRank = call.getGrid().size() + 1;
  auto squeezed = static_cast<int64_t>(BlockDimKind::Squeezed);
  if (spec.isWholeArray()) {
    // Unbatched: still the whole array. Batched: one whole batch element
    // per step, i.e. the array's shape as blocks plus a squeezed batch dim.
    if (!dim)
      return spec;
    if (!array.hasStaticShape())
      return call.emitOpError()
             << "pallas-vmap cannot batch an operand in memory space 'any' "
                "whose shape "
             << array
             << " is symbolic: each batch element would be a block of that "
                "shape, and block shapes are static (leave it unbatched, or "
                "give it a block shape)";
    SmallVector<int64_t> sizes(array.getShape());
    SmallVector<int64_t> kinds(sizes.size(),
                               static_cast<int64_t>(BlockDimKind::Blocked));
    SmallVector<int64_t> pads(sizes.size() + 1, 0);
    sizes.insert(sizes.begin() + *dim, 1);
    kinds.insert(kinds.begin() + *dim, squeezed);
    SmallVector<AffineExpr> results(sizes.size(),
                                    getAffineConstantExpr(0, ctx));
    results[*dim] = getAffineDimExpr(0, ctx);
    auto map = AffineMap::get(newGridRank, 0, results, ctx);
    return BlockSpecAttr::get(ctx, sizes, kinds, pads, pads, map,
                              FlatSymbolRefAttr(), MemorySpace::Any);
  }
  SmallVector<int64_t> sizes(spec.getSizes()), kinds(spec.getKinds()),
      lo(spec.getPadLow()), hi(spec.getPadHigh());
  if (dim) {
    sizes.insert(sizes.begin() + *dim, 1);
    kinds.insert(kinds.begin() + *dim, squeezed);
    lo.insert(lo.begin() + *dim, 0);
    hi.insert(hi.begin() + *dim, 0);
  }
  AffineMap map = spec.getIndexMap();
  FlatSymbolRefAttr indexFunc = spec.getIndexFunc();
  if (indexFunc) {
    FailureOr<FlatSymbolRefAttr> batched = batchIndexFunc(call, indexFunc, dim);
    if (failed(batched))
      return failure();
    indexFunc = *batched;
  } else if (map) {
    // The new grid index is d0; the old ones shift by one.
    AffineMap shifted = map.shiftDims(1);
    SmallVector<AffineExpr> results(shifted.getResults());
    if (dim)
      results.insert(results.begin() + *dim, getAffineDimExpr(0, ctx));
    map = AffineMap::get(newGridRank, 0, results, ctx);
  } else if (dim) {
    // No map means block index 0 everywhere; the batch dim needs d0.
    SmallVector<AffineExpr> results(sizes.size(),
                                    getAffineConstantExpr(0, ctx));
    results[*dim] = getAffineDimExpr(0, ctx);
    map = AffineMap::get(newGridRank, 0, results, ctx);
  }
  return BlockSpecAttr::get(ctx, sizes, kinds, lo, hi, map, indexFunc,
                            spec.getMemorySpace(), spec.getBufferCount());
}

FailureOr<FlatSymbolRefAttr>
FunctionBatcher::batchIndexFunc(CallOp call, FlatSymbolRefAttr funcName,
                                BDim dim) {
  auto indexFunc =
      SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(call, funcName);
  if (!indexFunc)
    return call.emitOpError()
           << "index map " << funcName << " does not name a func.func";
  auto key = std::make_pair(indexFunc.getOperation(), dim ? *dim : -1);
  if (auto it = indexFuncs.find(key); it != indexFuncs.end())
    return it->second;

  // A copy taking the batch index first; when the operand is batched it
  // returns that index at the batch dimension. Copies go before the wrapper,
  // in the order they are made.
  OpBuilder b(func);
  auto batched = cast<func::FuncOp>(b.clone(*indexFunc));
  batched.setSymName((indexFunc.getSymName() + "_vmap").str());
  // Inserting renames the copy if its name is taken.
  symbols.insert(batched);
  Type indexType = b.getI32Type();
  if (!call.getGrid().empty() && batched.getNumArguments() > 0)
    indexType = batched.getArgumentTypes()[0];
  if (failed(batched.insertArgument(0, indexType, DictionaryAttr(),
                                    indexFunc.getLoc())))
    return failure();
  if (dim) {
    Value batchIndex = batched.getArgument(0);
    batched.walk([&](func::ReturnOp ret) {
      SmallVector<Value> results(ret.getOperands());
      results.insert(results.begin() + *dim, batchIndex);
      ret->setOperands(results);
    });
    SmallVector<Type> resultTypes(batched.getResultTypes());
    resultTypes.insert(resultTypes.begin() + *dim, indexType);
    batched.setType(FunctionType::get(call.getContext(),
                                      batched.getArgumentTypes(), resultTypes));
  }
  auto ref = FlatSymbolRefAttr::get(batched.getSymNameAttr());
  indexFuncs[key] = ref;
  return ref;
}

struct PallasVmapPass
    : public mlir::pallas::impl::PallasVmapBase<PallasVmapPass> {
  using PallasVmapBase::PallasVmapBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t size = axisSize;
    std::optional<pallasc::spec::DimExpr> expr;
    if (!axisExpr.empty()) {
      pallasc::spec::DimExprError error;
      expr = pallasc::spec::parseDimExpr(axisExpr, /*allowDivision=*/false,
                                         error);
      if (!expr) {
        module.emitError() << "pallas-vmap: axis-expr '" << axisExpr
                           << "': " << error.message;
        return signalPassFailure();
      }
      if (expr->isConstant()) {
        size = expr->num.constant;
        expr.reset();
      } else {
        size = ShapedType::kDynamic;
      }
    }
    if (!expr && size < 1) {
      module.emitError() << "pallas-vmap: axis-size must be at least 1, got "
                         << size;
      return signalPassFailure();
    }
    SmallVector<int64_t> axes(inAxes.begin(), inAxes.end());
    for (auto [i, axis] : llvm::enumerate(axes))
      if (axis < -1) {
        module.emitError() << "pallas-vmap: in-axes[" << i << "] = " << axis
                           << ": expected -1 (not batched) or a "
                              "non-negative axis";
        return signalPassFailure();
      }
    SymbolTable symbols(module);
    for (func::FuncOp func : getCallWrappers(module)) {
      FunctionBatcher batcher(func, size, expr ? &*expr : nullptr, symbols);
      if (failed(batcher.run(axes)) || failed(checkBatchedSizes(func, size)))
        return signalPassFailure();
    }
  }
};

} // namespace
