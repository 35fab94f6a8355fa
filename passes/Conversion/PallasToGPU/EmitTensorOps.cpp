//===- EmitTensorOps.cpp - tensor ops ---------------------------*- C++ -*-===//
//
// The tensor ops pallas-to-linalg leaves: tensor.generate,
// extract / insert and extract_slice / insert_slice.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/Distribute.h"
#include "passes/Conversion/PallasToGPU/DistributeUtils.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "pallas-to-gpu"

using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::gpu;
using namespace mlir::pallas::gpu::detail;

//===----------------------------------------------------------------------===//
// Tensor ops
//===----------------------------------------------------------------------===//

void mlir::pallas::gpu::populateTensorEmitters(EmitterRegistry &r) {
  r.add<linalg::TransposeOp, tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
      &Distributor::emitRelabel);
  r.add<tensor::GenerateOp>(&Distributor::emitGenerate);
  r.add<tensor::ExtractOp>(&Distributor::emitExtract);
  r.add<tensor::InsertOp>(&Distributor::emitInsert);
  r.add<tensor::ExtractSliceOp>(&Distributor::emitExtractSlice);
  r.add<tensor::InsertSliceOp>(&Distributor::emitInsertSlice);
}

LogicalResult Distributor::emitRelabel(Operation *op) {
  Value in = op->getOperand(0);
  int inLayout = layoutOrDefault(in);
  auto regs = get(in, inLayout);
  if (failed(regs))
    return failure();
  int out = layoutOf.lookup(op->getResult(0));
  // The analysis made `out` the relabeled input layout.
  setDist(op->getResult(0), Dist{out, *regs});
  return success();
}

LogicalResult Distributor::emitGenerate(Operation *op) {
  auto gen = cast<tensor::GenerateOp>(op);
  int id = layoutOrDefault(gen.getResult());
  Block &body = gen.getBody().front();
  // Order the reads before any lane diverges.
  gen.walk([&](memref::LoadOp load) {
    if (auto it = views.find(load.getMemref()); it != views.end())
      beforeAccess(it->second, -1, false);
  });
  SmallVector<Value> regs;
  for (int64_t r = 0; r < layout(id).numRegs(); ++r) {
    SmallVector<Value> c = coords(id, r);
    for (auto [i, arg] : llvm::enumerate(body.getArguments()))
      scalars.map(arg, c[i]);
    inLaneContext = true;
    LogicalResult ok = emitBlock(body);
    inLaneContext = false;
    if (failed(ok))
      return failure();
    regs.push_back(scalars.lookup(body.getTerminator()->getOperand(0)));
  }
  setDist(gen.getResult(), Dist{id, regs});
  return success();
}

LogicalResult Distributor::emitExtract(Operation *op) {
  auto ex = cast<tensor::ExtractOp>(op);
  Value t = ex.getTensor();
  int id = layoutOrDefault(t);
  auto regsOr = get(t, id);
  if (failed(regsOr))
    return failure();
  const Layout &l = layout(id);
  SmallVector<Value> indices;
  for (Value i : ex.getIndices())
    indices.push_back(scalars.lookup(i));
  if (l.rank() == 0) {
    scalars.map(ex.getResult(), (*regsOr)[0]);
    return success();
  }
  // This thread's candidate and whether it holds the element.
  Value value = (*regsOr)[0], owns;
  for (int64_t r = 0; r < l.numRegs(); ++r) {
    SmallVector<Value> c = coords(id, r);
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
    scalars.map(ex.getResult(), value);
    return success();
  }
  Type type = value.getType();
  int64_t bytes;
  View ws = workspace({1}, type, 0, false, bytes);
  Value stored = type.isInteger(1)
                     ? arith::ExtUIOp::create(b, kc.loc, b.getI8Type(), value)
                           .getResult()
                     : value;
  auto ifOp = scf::IfOp::create(b, kc.loc, owns, false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    memref::StoreOp::create(b, kc.loc, stored, ws.base, ValueRange{idx(0)});
  }
  barrier();
  Value loaded = memref::LoadOp::create(b, kc.loc, ws.base, ValueRange{idx(0)});
  barrier();
  if (type.isInteger(1))
    loaded = arith::TruncIOp::create(b, kc.loc, type, loaded);
  scalars.map(ex.getResult(), loaded);
  return success();
}

LogicalResult Distributor::emitInsert(Operation *op) {
  auto ins = cast<tensor::InsertOp>(op);
  int id = layoutOrDefault(ins.getResult());
  auto regs = get(ins.getDest(), id);
  if (failed(regs))
    return failure();
  Value s = scalars.lookup(ins.getScalar());
  SmallVector<Value> out;
  const Layout &l = layout(id);
  for (int64_t r = 0; r < l.numRegs(); ++r) {
    SmallVector<Value> c = coords(id, r);
    Value own = arith::ConstantIntOp::create(b, kc.loc, 1, 1);
    for (auto [d, i] : llvm::enumerate(ins.getIndices()))
      own = arith::AndIOp::create(
          b, kc.loc, own,
          arith::CmpIOp::create(b, kc.loc, arith::CmpIPredicate::eq, c[d],
                                scalars.lookup(i)));
    out.push_back(arith::SelectOp::create(b, kc.loc, own, s, (*regs)[r]));
  }
  setDist(ins.getResult(), Dist{id, out});
  return success();
}

LogicalResult Distributor::emitExtractSlice(Operation *op) {
  auto ex = cast<tensor::ExtractSliceOp>(op);
  Value src = ex.getSource();
  auto srcType = cast<RankedTensorType>(src.getType());
  int srcId = layoutOrDefault(src);
  auto regs = get(src, srcId);
  if (failed(regs))
    return failure();
  int64_t bytes;
  View ws = workspace(srcType.getShape(), srcType.getElementType(), 0, false,
                      bytes);
  SmallVector<Value> stored(*regs);
  if (srcType.getElementType().isInteger(1))
    for (Value &r : stored)
      r = arith::ExtUIOp::create(b, kc.loc, b.getI8Type(), r);
  if (failed(store(ws, srcId, stored)))
    return failure();
  barrier();
  SmallVector<OpFoldResult> offsets;
  for (OpFoldResult o : ex.getMixedOffsets()) {
    if (auto v = dyn_cast<Value>(o))
      offsets.push_back(scalars.lookup(v));
    else
      offsets.push_back(o);
  }
  SmallVector<int64_t> sizes(ex.getStaticSizes()),
      strides(ex.getStaticStrides());
  if (ShapedType::isDynamicShape(sizes) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return op->emitOpError() << "has dynamic sizes or strides";
  View slice = subview(ws, offsets, {}, sizes, strides, ex.getDroppedDims());
  int id = layoutOrDefault(ex.getResult());
  auto loaded = load(slice, id);
  if (failed(loaded))
    return failure();
  barrier();
  if (srcType.getElementType().isInteger(1))
    for (Value &r : *loaded)
      r = arith::TruncIOp::create(b, kc.loc, b.getI1Type(), r);
  setDist(ex.getResult(), Dist{id, *loaded});
  return success();
}

LogicalResult Distributor::emitInsertSlice(Operation *op) {
  auto ins = cast<tensor::InsertSliceOp>(op);
  auto srcType = cast<RankedTensorType>(ins.getSource().getType());
  int srcId = layoutOrDefault(ins.getSource());
  auto src = get(ins.getSource(), srcId);
  if (failed(src))
    return failure();
  int id = layoutOrDefault(ins.getResult());
  auto dest = get(ins.getDest(), id);
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
  View ws = workspace(srcType.getShape(), elem, 0, false, bytes);
  SmallVector<Value> stored(*src);
  if (isBool)
    for (Value &r : stored)
      r = arith::ExtUIOp::create(b, kc.loc, b.getI8Type(), r);
  if (failed(store(ws, srcId, stored)))
    return failure();
  barrier();
  // Destination dims the source keeps (rank-reducing inserts drop some).
  llvm::SmallBitVector dropped = ins.getDroppedDims();
  SmallVector<Value> offsets;
  for (OpFoldResult o : ins.getMixedOffsets()) {
    if (auto v = dyn_cast<Value>(o))
      offsets.push_back(scalars.lookup(v));
    else
      offsets.push_back(idx(*getConstantIntValue(o)));
  }
  const Layout &l = layout(id);
  SmallVector<Value> out;
  for (int64_t r = 0; r < l.numRegs(); ++r) {
    SmallVector<Value> c = coords(id, r);
    Value inside = arith::ConstantIntOp::create(b, kc.loc, 1, 1);
    SmallVector<Value> srcIdx;
    for (int64_t d = 0; d < l.rank(); ++d) {
      Value rel = arith::SubIOp::create(b, kc.loc, c[d], offsets[d]);
      Value q = rel;
      if (strides[d] != 1) {
        q = arith::DivSIOp::create(b, kc.loc, rel, idx(strides[d]));
        Value exact = arith::CmpIOp::create(
            b, kc.loc, arith::CmpIPredicate::eq,
            arith::RemSIOp::create(b, kc.loc, rel, idx(strides[d])), idx(0));
        inside = arith::AndIOp::create(b, kc.loc, inside, exact);
      }
      Value ge = arith::CmpIOp::create(b, kc.loc, arith::CmpIPredicate::sge,
                                       q, idx(0));
      Value lt = arith::CmpIOp::create(b, kc.loc, arith::CmpIPredicate::slt,
                                       q, idx(sizes[d]));
      inside = arith::AndIOp::create(
          b, kc.loc, inside, arith::AndIOp::create(b, kc.loc, ge, lt));
      if (!dropped.test(d))
        srcIdx.push_back(q);
    }
    for (Value &s : srcIdx)
      s = arith::SelectOp::create(b, kc.loc, inside, s, idx(0));
    if (srcIdx.empty())
      srcIdx.push_back(idx(0));
    Value v = memref::LoadOp::create(b, kc.loc, ws.base, srcIdx);
    if (isBool)
      v = arith::TruncIOp::create(b, kc.loc, b.getI1Type(), v);
    out.push_back(arith::SelectOp::create(b, kc.loc, inside, v, (*dest)[r]));
  }
  barrier();
  setDist(ins.getResult(), Dist{id, out});
  return success();
}
