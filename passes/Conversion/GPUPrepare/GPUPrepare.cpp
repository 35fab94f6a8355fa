//===- GPUPrepare.cpp - pallas-gpu-prepare ----------------------*- C++ -*-===//
//
// Runs before pallas-to-linalg: records the pallas.call on the module and
// rewrites the ops whose CPU lowering does not fit a GPU (atomics become real
// atomics, divisibility hints become masks, scalar prints become
// gpu.printf).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/PallasToGPU.h"
#include "dialects/Pallas/IR/GpuCallAttrs.h"
#include "passes/Utils/InterpretMode.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/MathExtras.h"

#define DEBUG_TYPE "pallas-gpu-prepare"

namespace mlir::pallas {
#define GEN_PASS_DEF_PALLASGPUPREPARE
#include "passes/Conversion/Passes.h.inc"
} // namespace mlir::pallas

using namespace mlir;
using namespace mlir::pallas;

namespace {

Value indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

std::optional<arith::AtomicRMWKind> rmwKind(AtomicKind kind, Type type) {
  bool isFloat = isa<FloatType>(type);
  switch (kind) {
  case AtomicKind::Add:
    return isFloat ? arith::AtomicRMWKind::addf : arith::AtomicRMWKind::addi;
  case AtomicKind::Max:
    return isFloat ? arith::AtomicRMWKind::maximumf
                   : arith::AtomicRMWKind::maxs;
  case AtomicKind::Min:
    return isFloat ? arith::AtomicRMWKind::minimumf
                   : arith::AtomicRMWKind::mins;
  case AtomicKind::And:
    return isFloat ? std::nullopt
                   : std::optional(arith::AtomicRMWKind::andi);
  case AtomicKind::Or:
    return isFloat ? std::nullopt : std::optional(arith::AtomicRMWKind::ori);
  case AtomicKind::Xor:
    return isFloat ? std::nullopt : std::optional(arith::AtomicRMWKind::xori);
  case AtomicKind::Xchg:
    return arith::AtomicRMWKind::assign;
  }
  return std::nullopt;
}

/// One lane of an atomic: ref indices and whether they are in bounds.
struct Lane {
  SmallVector<Value> indices;
  Value inBounds; // i1
};

/// The starts of `indexer` on a ref of `shape`, clamped to [0, dim] as
/// interpret mode's dynamic_slice does; `inBounds` collects which dims need
/// a per-lane check.
struct Starts {
  SmallVector<Value> starts;
  SmallVector<bool> dynamic;
};

Starts buildStarts(OpBuilder &b, Location loc, const Indexer &indexer,
                   ArrayRef<int64_t> shape) {
  Starts s;
  for (auto [d, dim] : llvm::enumerate(indexer.dims)) {
    if (!dim.isDynamic()) {
      s.starts.push_back(indexConst(b, loc, dim.staticStart));
      s.dynamic.push_back(false);
      continue;
    }
    Value v = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                         dim.dynStart);
    v = arith::MaxSIOp::create(b, loc, v, indexConst(b, loc, 0));
    v = arith::MinSIOp::create(b, loc, v, indexConst(b, loc, shape[d]));
    s.starts.push_back(v);
    s.dynamic.push_back(true);
  }
  return s;
}

Lane laneAt(OpBuilder &b, Location loc, const Indexer &indexer,
            const Starts &s, ArrayRef<int64_t> shape, ValueRange ivs) {
  Lane lane;
  Value ok = arith::ConstantIntOp::create(b, loc, 1, 1);
  unsigned r = 0;
  for (auto [d, dim] : llvm::enumerate(indexer.dims)) {
    Value idx = s.starts[d];
    if (!dim.isPoint) {
      Value iv = ivs[r++];
      if (dim.stride != 1)
        iv = arith::MulIOp::create(b, loc, iv,
                                   indexConst(b, loc, dim.stride));
      idx = arith::AddIOp::create(b, loc, idx, iv);
    }
    if (s.dynamic[d]) {
      Value c = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, idx,
                                      indexConst(b, loc, shape[d]));
      ok = arith::AndIOp::create(b, loc, ok, c);
    }
    lane.indices.push_back(idx);
  }
  lane.inBounds = ok;
  return lane;
}

/// The atomic on one lane, returning the old value: in bounds and unmasked
/// it is the atomic, masked off a plain read, out of bounds the
/// uninitialized value.
Value atomicLane(OpBuilder &b, Location loc, Value memref, const Lane &lane,
                 Value mask,
                 function_ref<Value(OpBuilder &, Location)> atomic) {
  Type type = cast<MemRefType>(memref.getType()).getElementType();
  auto outer = scf::IfOp::create(b, loc, TypeRange{type}, lane.inBounds,
                                 /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(outer.thenBlock());
    Value old;
    if (mask) {
      auto inner = scf::IfOp::create(b, loc, TypeRange{type}, mask, true);
      b.setInsertionPointToStart(inner.thenBlock());
      scf::YieldOp::create(b, loc, atomic(b, loc));
      b.setInsertionPointToStart(inner.elseBlock());
      scf::YieldOp::create(
          b, loc,
          memref::LoadOp::create(b, loc, memref, lane.indices).getResult());
      b.setInsertionPointAfter(inner);
      old = inner.getResult(0);
    } else {
      old = atomic(b, loc);
    }
    scf::YieldOp::create(b, loc, old);
    b.setInsertionPointToStart(outer.elseBlock());
    scf::YieldOp::create(b, loc, uninitializedValue(b, loc, type));
  }
  return outer.getResult(0);
}

/// Rewrites one atomic op. `perLane` builds the atomic for a lane given the
/// lane's value (and compare value for CAS).
LogicalResult rewriteAtomic(Operation *op, Value ref, const Indexer &indexer,
                            Value value, Value cmp, Value mask,
                            function_ref<Value(OpBuilder &, Location, Value,
                                               const Lane &, Value, Value)>
                                perLane) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  auto refType = cast<RefType>(ref.getType());
  auto memrefType =
      MemRefType::get(refType.getShape(), refType.getElementType());
  Value memref =
      UnrealizedConversionCastOp::create(b, loc, memrefType, ref).getResult(0);
  Starts starts = buildStarts(b, loc, indexer, refType.getShape());
  auto valueType = dyn_cast<RankedTensorType>(value.getType());
  if (!valueType) {
    Lane lane = laneAt(b, loc, indexer, starts, refType.getShape(), {});
    Value old = atomicLane(b, loc, memref, lane, mask, [&](OpBuilder &b,
                                                            Location loc) {
      return perLane(b, loc, memref, lane, value, cmp);
    });
    op->getResult(0).replaceAllUsesWith(old);
    op->erase();
    return success();
  }
  // A block of lanes: a loop nest carrying the tensor of old values.
  Value init = tensor::EmptyOp::create(b, loc, valueType.getShape(),
                                       valueType.getElementType());
  SmallVector<Value> lbs, ubs, steps;
  for (int64_t n : valueType.getShape()) {
    lbs.push_back(indexConst(b, loc, 0));
    ubs.push_back(indexConst(b, loc, n));
    steps.push_back(indexConst(b, loc, 1));
  }
  scf::LoopNest nest = scf::buildLoopNest(
      b, loc, lbs, ubs, steps, ValueRange{init},
      [&](OpBuilder &b, Location loc, ValueRange ivs,
          ValueRange iter) -> scf::ValueVector {
        Lane lane = laneAt(b, loc, indexer, starts, refType.getShape(), ivs);
        Value v = tensor::ExtractOp::create(b, loc, value, ivs);
        Value c = cmp ? tensor::ExtractOp::create(b, loc, cmp, ivs).getResult()
                      : Value();
        Value m = mask ? tensor::ExtractOp::create(b, loc, mask, ivs)
                             .getResult()
                       : Value();
        Value old = atomicLane(b, loc, memref, lane, m,
                               [&](OpBuilder &b, Location loc) {
                                 return perLane(b, loc, memref, lane, v, c);
                               });
        return {tensor::InsertOp::create(b, loc, old, iter[0], ivs)};
      });
  op->getResult(0).replaceAllUsesWith(nest.results[0]);
  op->erase();
  return success();
}

LogicalResult rewriteAtomicRMW(AtomicRMWOp op) {
  Type elementType = getElementTypeOf(op.getValue().getType());
  std::optional<arith::AtomicRMWKind> kind =
      rmwKind(op.getKind(), elementType);
  if (!kind)
    return op.emitOpError()
           << "'" << stringifyAtomicKind(op.getKind())
           << "' on " << elementType
           << " has no GPU atomic; the GPU lowering supports and/or/xor on "
              "integers only";
  return rewriteAtomic(
      op, op.getRef(), op.getIndexer(), op.getValue(), Value(), op.getMask(),
      [&](OpBuilder &b, Location loc, Value memref, const Lane &lane,
          Value v, Value) -> Value {
        return memref::AtomicRMWOp::create(b, loc, *kind, v, memref,
                                           lane.indices);
      });
}

LogicalResult rewriteAtomicCAS(AtomicCASOp op) {
  return rewriteAtomic(
      op, op.getRef(), op.getIndexer(), op.getValue(), op.getCmp(), Value(),
      [&](OpBuilder &b, Location loc, Value memref, const Lane &lane,
          Value v, Value c) -> Value {
        auto rmw =
            memref::GenericAtomicRMWOp::create(b, loc, memref, lane.indices);
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(rmw.getBody());
        Value cur = rmw.getCurrentValue();
        Value eq = isa<FloatType>(cur.getType())
                       ? arith::CmpFOp::create(b, loc,
                                               arith::CmpFPredicate::OEQ, cur,
                                               c)
                             .getResult()
                       : arith::CmpIOp::create(b, loc,
                                               arith::CmpIPredicate::eq, cur,
                                               c)
                             .getResult();
        Value next = arith::SelectOp::create(b, loc, eq, v, cur);
        memref::AtomicYieldOp::create(b, loc, next);
        return rmw.getResult();
      });
}

/// `{}` placeholders to printf conversions.
LogicalResult rewriteDebugPrint(DebugPrintOp op) {
  std::string format;
  StringRef text = op.getFormat();
  auto values = op.getValues();
  size_t next = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char ch = text[i];
    if (ch == '%') {
      format += "%%";
      continue;
    }
    if (ch == '{' && i + 1 < text.size() && text[i + 1] == '}') {
      if (next >= values.size())
        return op.emitOpError() << "has more '{}' than values";
      Type t = values[next++].getType();
      if (isa<RankedTensorType>(t))
        return op.emitOpError()
               << "prints a block (" << t
               << "); the GPU lowering prints scalars only";
      if (isa<FloatType>(t))
        format += "%f";
      else if (t.isIndex() || t.getIntOrFloatBitWidth() == 64)
        format += "%lld";
      else
        format += "%d";
      ++i;
      continue;
    }
    format += ch;
  }
  for (; next < values.size(); ++next)
    if (isa<RankedTensorType>(values[next].getType()))
      return op.emitOpError()
             << "prints a block; the GPU lowering prints scalars only";
  format += "\n";
  OpBuilder b(op);
  SmallVector<Value> args;
  for (Value v : values) {
    // vprintf promotes: small integers to i32, index to i64.
    if (v.getType().isIndex())
      v = arith::IndexCastOp::create(b, op.getLoc(), b.getI64Type(), v);
    else if (auto it = dyn_cast<IntegerType>(v.getType());
             it && it.getWidth() < 32)
      v = arith::ExtSIOp::create(b, op.getLoc(), b.getI32Type(), v);
    args.push_back(v);
  }
  mlir::gpu::PrintfOp::create(b, op.getLoc(), b.getStringAttr(format), args);
  op->erase();
  return success();
}

/// The #pallas.gpu_call of `call` (what pallas-to-gpu reads once
/// pallas-to-linalg has replaced the call), or null after a diagnostic on
/// the call: the GPU lowering takes ranked tensors only.
static GpuCallAttr recordCall(CallOp call) {
  auto tensors = [&](TypeRange types, StringRef what,
                     SmallVector<RankedTensorType> &out) -> LogicalResult {
    for (auto [i, type] : llvm::enumerate(types)) {
      auto t = dyn_cast<RankedTensorType>(type);
      if (!t)
        return call.emitOpError() << what << " " << i << " of type " << type
                                  << " is not a ranked tensor";
      out.push_back(t);
    }
    return success();
  };
  SmallVector<RankedTensorType> inputs, outputs;
  if (failed(tensors(call.getInputs().getTypes(), "input", inputs)) ||
      failed(tensors(call.getResultTypes(), "output", outputs)))
    return {};
  SmallVector<StringAttr> gridNames;
  if (ArrayAttr names = call.getGridNamesAttr())
    for (Attribute n : names)
      gridNames.push_back(cast<StringAttr>(n));
  auto specs = [](ArrayAttr array) {
    SmallVector<BlockSpecAttr> out;
    for (Attribute a : array)
      out.push_back(cast<BlockSpecAttr>(a));
    return out;
  };
  SmallVector<RefType> scratch;
  for (Attribute t : call.getScratch())
    scratch.push_back(cast<RefType>(cast<TypeAttr>(t).getValue()));
  SmallVector<BlockSpecAttr> inSpecs = specs(call.getInSpecs()),
                            outSpecs = specs(call.getOutSpecs());
  return GpuCallAttr::getChecked(
      [&] { return call.emitOpError(); }, call.getContext(),
      call.getKernelAttr(), call.getNameAttr(), call.getGrid(),
      ArrayRef<StringAttr>(gridNames), call.getVmappedDims(),
      static_cast<int64_t>(call.getNumScalarPrefetch()),
      ArrayRef<BlockSpecAttr>(inSpecs), ArrayRef<BlockSpecAttr>(outSpecs),
      call.getInputOutputAliases(), call.getCompilerParamsAttr(),
      ArrayRef<RefType>(scratch), ArrayRef<RankedTensorType>(inputs),
      ArrayRef<RankedTensorType>(outputs));
}

struct PallasGPUPreparePass
    : public mlir::pallas::impl::PallasGPUPrepareBase<PallasGPUPreparePass> {
  using PallasGPUPrepareBase::PallasGPUPrepareBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<CallOp> calls;
    module.walk([&](CallOp call) { calls.push_back(call); });
    if (calls.size() > 1) {
      module.emitError() << "the module holds " << calls.size()
                         << " pallas.call ops; the GPU lowering takes one";
      return signalPassFailure();
    }
    if (calls.size() == 1) {
      GpuCallAttr record = recordCall(calls.front());
      if (!record)
        return signalPassFailure();
      module->setAttr(kGpuCallAttrName, record);
      // A symbolic call's symbols and shape expressions (pallas.call's
      // `symbolic`): pallas-to-gpu makes the symbols kernel parameters.
      if (DictionaryAttr symbolic = calls.front().getSymbolicAttr())
        module->setAttr(kGpuSymbolicAttrName, symbolic);
    }

    // TPU async copies have no GPU lowering (Pallas' GPU backends copy with
    // their own primitives).
    WalkResult dma = module.walk([&](Operation *op) {
      if (!isa<pallas::DmaStartOp, pallas::DmaWaitOp>(op))
        return WalkResult::advance();
      op->emitOpError() << "is a TPU DMA (pltpu.make_async_copy); DMAs are "
                           "TPU-only and have no GPU lowering";
      return WalkResult::interrupt();
    });
    if (dma.wasInterrupted())
      return signalPassFailure();

    // Gathers reach the distributor as a tensor.generate of memref.loads,
    // which it does not distribute correctly yet: refuse them by name.
    WalkResult gather = module.walk([&](pallas::GatherOp op) {
      op.emitOpError() << "has no GPU lowering yet (a gather at index "
                          "vectors); compile it for the CPU";
      return WalkResult::interrupt();
    });
    if (gather.wasInterrupted())
      return signalPassFailure();

    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<AtomicRMWOp, AtomicCASOp, MultipleOfOp, DebugPrintOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      LogicalResult r = success();
      if (auto rmw = dyn_cast<AtomicRMWOp>(op))
        r = rewriteAtomicRMW(rmw);
      else if (auto cas = dyn_cast<AtomicCASOp>(op))
        r = rewriteAtomicCAS(cas);
      else if (auto print = dyn_cast<DebugPrintOp>(op))
        r = rewriteDebugPrint(print);
      else if (auto hint = dyn_cast<MultipleOfOp>(op)) {
        Value v = hint.getOperand();
        if (auto it = dyn_cast<IntegerType>(v.getType())) {
          int64_t divisor = hint.getDivisor();
          int64_t pow2 = divisor & -divisor;
          if (pow2 > 1 && it.getWidth() <= 64) {
            OpBuilder b(hint);
            Value mask = arith::ConstantOp::create(
                b, hint.getLoc(), b.getIntegerAttr(it, -pow2));
            v = arith::AndIOp::create(b, hint.getLoc(), v, mask);
          }
        }
        hint.getResult().replaceAllUsesWith(v);
        hint.erase();
      }
      if (failed(r))
        return signalPassFailure();
    }
  }
};

} // namespace
