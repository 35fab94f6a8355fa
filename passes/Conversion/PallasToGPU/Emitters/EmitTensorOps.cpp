//===- EmitTensorOps.cpp - tensor ops ---------------------------*- C++ -*-===//
//
// The tensor ops pallas-to-linalg leaves: tensor.generate,
// extract / insert and extract_slice / insert_slice.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/DistributeUtils.h"
#include "passes/Conversion/PallasToGPU/Emitters/EmitContext.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"
using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::gpu;
using namespace mlir::pallas::gpu::detail;

//===----------------------------------------------------------------------===//
// Tensor ops
//===----------------------------------------------------------------------===//

namespace {

/// The tensor ops: relabelings, tensor.generate, element and slice
/// extraction and insertion.
class TensorEmitter : EmitterBase {
public:
  using EmitterBase::EmitterBase;
  /// transpose / collapse_shape / expand_shape: the same registers under
  /// the relabeled layout the analysis chose.
  LogicalResult emitRelabel(Operation *op);
  LogicalResult emitGenerate(Operation *op);
  LogicalResult emitExtract(Operation *op);
  LogicalResult emitInsert(Operation *op);
  LogicalResult emitExtractSlice(Operation *op);
  LogicalResult emitInsertSlice(Operation *op);
};

} // namespace

void mlir::pallas::gpu::populateTensorEmitters(EmitterRegistry &r) {
  r.add<linalg::TransposeOp, tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
      emitWith<TensorEmitter, &TensorEmitter::emitRelabel>);
  r.add<tensor::GenerateOp>(
      emitWith<TensorEmitter, &TensorEmitter::emitGenerate>);
  r.add<tensor::ExtractOp>(
      emitWith<TensorEmitter, &TensorEmitter::emitExtract>);
  r.add<tensor::InsertOp>(emitWith<TensorEmitter, &TensorEmitter::emitInsert>);
  r.add<tensor::ExtractSliceOp>(
      emitWith<TensorEmitter, &TensorEmitter::emitExtractSlice>);
  r.add<tensor::InsertSliceOp>(
      emitWith<TensorEmitter, &TensorEmitter::emitInsertSlice>);
}

LogicalResult TensorEmitter::emitRelabel(Operation *op) {
  Value in = op->getOperand(0);
  int inLayout = cx.layoutOrDefault(in);
  auto regs = cx.get(in, inLayout);
  if (failed(regs))
    return failure();
  int out = analysis.layoutOf.lookup(op->getResult(0));
  // The analysis made `out` the relabeled input layout.
  cx.setDist(op->getResult(0), Dist{out, *regs});
  return success();
}

LogicalResult TensorEmitter::emitGenerate(Operation *op) {
  auto gen = cast<tensor::GenerateOp>(op);
  // A window past the ref's end: one distributed load (EmitWindow.cpp).
  FailureOr<bool> window = emitWindowLoad(cx, gen);
  if (failed(window))
    return failure();
  if (*window)
    return success();
  int id = cx.layoutOrDefault(gen.getResult());
  Block &body = gen.getBody().front();
  // Order the reads before any lane diverges.
  gen.walk([&](memref::LoadOp load) {
    if (auto it = emission.views.find(load.getMemref());
        it != emission.views.end())
      cx.beforeAccess(it->second, -1, false);
  });
  SmallVector<Value> regs;
  for (int64_t r = 0; r < cx.layout(id).numRegs(); ++r) {
    SmallVector<Value> c = cx.coords(id, r);
    for (auto [i, arg] : llvm::enumerate(body.getArguments()))
      emission.scalars.map(arg, c[i]);
    emission.inLaneContext = true;
    LogicalResult ok = cx.emitBlock(body);
    emission.inLaneContext = false;
    if (failed(ok))
      return failure();
    regs.push_back(
        emission.scalars.lookup(body.getTerminator()->getOperand(0)));
  }
  cx.setDist(gen.getResult(), Dist{id, regs});
  return success();
}

LogicalResult TensorEmitter::emitExtract(Operation *op) {
  auto ex = cast<tensor::ExtractOp>(op);
  Value t = ex.getTensor();
  int id = cx.layoutOrDefault(t);
  auto regsOr = cx.get(t, id);
  if (failed(regsOr))
    return failure();
  const Layout &l = cx.layout(id);
  SmallVector<Value> indices;
  for (Value i : ex.getIndices())
    indices.push_back(emission.scalars.lookup(i));
  if (l.rank() == 0) {
    emission.scalars.map(ex.getResult(), (*regsOr)[0]);
    return success();
  }
  // This thread's candidate and whether it holds the element.
  Value value = (*regsOr)[0], owns;
  for (int64_t r = 0; r < l.numRegs(); ++r) {
    SmallVector<Value> c = cx.coords(id, r);
    Value own = arith::ConstantIntOp::create(b, kc.loc, 1, 1);
    for (int64_t d = 0; d < l.rank(); ++d)
      own = arith::AndIOp::create(
          b, kc.loc, own,
          arith::CmpIOp::create(b, kc.loc, arith::CmpIPredicate::eq, c[d],
                                indices[d]));
    if (r == 0) {
      owns = own;
      continue;
    }
    value = arith::SelectOp::create(b, kc.loc, own, (*regsOr)[r], value);
    owns = arith::OrIOp::create(b, kc.loc, owns, own);
  }
  bool everyThread = llvm::all_of(l.lanes, [](uint64_t x) { return x == 0; }) &&
                     llvm::all_of(l.warps, [](uint64_t x) { return x == 0; });
  if (everyThread) {
    emission.scalars.map(ex.getResult(), value);
    return success();
  }
  Type type = value.getType();
  int64_t bytes;
  View ws = cx.workspace({1}, type, 0, false, bytes);
  Value stored = type.isInteger(1)
                     ? arith::ExtUIOp::create(b, kc.loc, b.getI8Type(), value)
                           .getResult()
                     : value;
  auto ifOp = scf::IfOp::create(b, kc.loc, owns, false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    memref::StoreOp::create(b, kc.loc, stored, ws.base, ValueRange{cx.idx(0)});
  }
  cx.barrier();
  Value loaded =
      memref::LoadOp::create(b, kc.loc, ws.base, ValueRange{cx.idx(0)});
  cx.barrier();
  if (type.isInteger(1))
    loaded = arith::TruncIOp::create(b, kc.loc, type, loaded);
  emission.scalars.map(ex.getResult(), loaded);
  return success();
}

LogicalResult TensorEmitter::emitInsert(Operation *op) {
  auto ins = cast<tensor::InsertOp>(op);
  int id = cx.layoutOrDefault(ins.getResult());
  auto regs = cx.get(ins.getDest(), id);
  if (failed(regs))
    return failure();
  Value s = emission.scalars.lookup(ins.getScalar());
  SmallVector<Value> out;
  const Layout &l = cx.layout(id);
  for (int64_t r = 0; r < l.numRegs(); ++r) {
    SmallVector<Value> c = cx.coords(id, r);
    Value own = arith::ConstantIntOp::create(b, kc.loc, 1, 1);
    for (auto [d, i] : llvm::enumerate(ins.getIndices()))
      own = arith::AndIOp::create(
          b, kc.loc, own,
          arith::CmpIOp::create(b, kc.loc, arith::CmpIPredicate::eq, c[d],
                                emission.scalars.lookup(i)));
    out.push_back(arith::SelectOp::create(b, kc.loc, own, s, (*regs)[r]));
  }
  cx.setDist(ins.getResult(), Dist{id, out});
  return success();
}

LogicalResult TensorEmitter::emitExtractSlice(Operation *op) {
  auto ex = cast<tensor::ExtractSliceOp>(op);
  Value src = ex.getSource();
  auto srcType = cast<RankedTensorType>(src.getType());
  int srcId = cx.layoutOrDefault(src);
  auto regs = cx.get(src, srcId);
  if (failed(regs))
    return failure();
  int64_t bytes;
  View ws = cx.workspace(srcType.getShape(), srcType.getElementType(), 0, false,
                         bytes);
  SmallVector<Value> stored(*regs);
  if (srcType.getElementType().isInteger(1))
    for (Value &r : stored)
      r = arith::ExtUIOp::create(b, kc.loc, b.getI8Type(), r);
  if (failed(cx.store(ws, srcId, stored)))
    return failure();
  cx.barrier();
  SmallVector<OpFoldResult> offsets;
  for (OpFoldResult o : ex.getMixedOffsets()) {
    if (auto v = dyn_cast<Value>(o))
      offsets.push_back(emission.scalars.lookup(v));
    else
      offsets.push_back(o);
  }
  SmallVector<int64_t> sizes(ex.getStaticSizes()),
      strides(ex.getStaticStrides());
  if (ShapedType::isDynamicShape(sizes) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return op->emitOpError() << "has dynamic sizes or strides";
  View slice = cx.subview(ws, offsets, {}, sizes, strides, ex.getDroppedDims());
  int id = cx.layoutOrDefault(ex.getResult());
  auto loaded = cx.load(slice, id);
  if (failed(loaded))
    return failure();
  cx.barrier();
  if (srcType.getElementType().isInteger(1))
    for (Value &r : *loaded)
      r = arith::TruncIOp::create(b, kc.loc, b.getI1Type(), r);
  cx.setDist(ex.getResult(), Dist{id, *loaded});
  return success();
}

LogicalResult TensorEmitter::emitInsertSlice(Operation *op) {
  auto ins = cast<tensor::InsertSliceOp>(op);
  auto srcType = cast<RankedTensorType>(ins.getSource().getType());
  int srcId = cx.layoutOrDefault(ins.getSource());
  auto src = cx.get(ins.getSource(), srcId);
  if (failed(src))
    return failure();
  int id = cx.layoutOrDefault(ins.getResult());
  auto dest = cx.get(ins.getDest(), id);
  if (failed(dest))
    return failure();
  SmallVector<int64_t> sizes(ins.getStaticSizes()),
      strides(ins.getStaticStrides());
  if (ShapedType::isDynamicShape(sizes) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return op->emitOpError() << "has dynamic sizes or strides";
  Type elem = srcType.getElementType();
  bool isBool = elem.isInteger(1);
  int64_t bytes;
  View ws = cx.workspace(srcType.getShape(), elem, 0, false, bytes);
  SmallVector<Value> stored(*src);
  if (isBool)
    for (Value &r : stored)
      r = arith::ExtUIOp::create(b, kc.loc, b.getI8Type(), r);
  if (failed(cx.store(ws, srcId, stored)))
    return failure();
  cx.barrier();
  // Destination dims the source keeps (rank-reducing inserts drop some).
  llvm::SmallBitVector dropped = ins.getDroppedDims();
  SmallVector<Value> offsets;
  for (OpFoldResult o : ins.getMixedOffsets()) {
    if (auto v = dyn_cast<Value>(o))
      offsets.push_back(emission.scalars.lookup(v));
    else
      offsets.push_back(cx.idx(*getConstantIntValue(o)));
  }
  const Layout &l = cx.layout(id);
  SmallVector<Value> out;
  for (int64_t r = 0; r < l.numRegs(); ++r) {
    SmallVector<Value> c = cx.coords(id, r);
    Value inside = arith::ConstantIntOp::create(b, kc.loc, 1, 1);
    SmallVector<Value> srcIdx;
    for (int64_t d = 0; d < l.rank(); ++d) {
      Value rel = arith::SubIOp::create(b, kc.loc, c[d], offsets[d]);
      Value q = rel;
      if (strides[d] != 1) {
        q = arith::DivSIOp::create(b, kc.loc, rel, cx.idx(strides[d]));
        Value exact = arith::CmpIOp::create(
            b, kc.loc, arith::CmpIPredicate::eq,
            arith::RemSIOp::create(b, kc.loc, rel, cx.idx(strides[d])),
            cx.idx(0));
        inside = arith::AndIOp::create(b, kc.loc, inside, exact);
      }
      Value ge = arith::CmpIOp::create(b, kc.loc, arith::CmpIPredicate::sge, q,
                                       cx.idx(0));
      Value lt = arith::CmpIOp::create(b, kc.loc, arith::CmpIPredicate::slt, q,
                                       cx.idx(sizes[d]));
      inside = arith::AndIOp::create(
          b, kc.loc, inside, arith::AndIOp::create(b, kc.loc, ge, lt));
      if (!dropped.test(d))
        srcIdx.push_back(q);
    }
    for (Value &s : srcIdx)
      s = arith::SelectOp::create(b, kc.loc, inside, s, cx.idx(0));
    if (srcIdx.empty())
      srcIdx.push_back(cx.idx(0));
    Value v = memref::LoadOp::create(b, kc.loc, ws.base, srcIdx);
    if (isBool)
      v = arith::TruncIOp::create(b, kc.loc, b.getI1Type(), v);
    out.push_back(arith::SelectOp::create(b, kc.loc, inside, v, (*dest)[r]));
  }
  cx.barrier();
  cx.setDist(ins.getResult(), Dist{id, out});
  return success();
}
