//===- EmitReduce.cpp - reductions ------------------------------*- C++ -*-===//
//
// linalg.reduce: in registers, then across the lanes of a warp with xor
// shuffles, then across warps through shared memory.
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

namespace {

/// linalg.reduce.
class ReduceEmitter : EmitterBase {
public:
  using EmitterBase::EmitterBase;
  LogicalResult emitReduce(Operation *op);

private:
  /// The combiner `body` (a block of `2n` arguments: `in`, then `acc`)
  /// cloned at the builder; its `n` results.
  SmallVector<Value> combine(Block &body, ArrayRef<Value> in,
                             ArrayRef<Value> acc);
  /// `v` from the lane `mask` away (xor) in the warp.
  Value shuffleXor(Value v, int64_t mask);
  /// The registers of each of `values` in layout `id` (EmitContext::get).
  LogicalResult getEach(ValueRange values, int id,
                        SmallVector<SmallVector<Value>> &regs);
};

} // namespace

void mlir::pallas::gpu::populateReduceEmitters(EmitterRegistry &r) {
  r.add<linalg::ReduceOp>(emitWith<ReduceEmitter, &ReduceEmitter::emitReduce>);
}

SmallVector<Value> ReduceEmitter::combine(Block &body, ArrayRef<Value> in,
                                          ArrayRef<Value> acc) {
  SmallVector<Value> args(in);
  args.append(acc.begin(), acc.end());
  return cloneBody(b, body, args);
}

LogicalResult ReduceEmitter::getEach(ValueRange values, int id,
                                     SmallVector<SmallVector<Value>> &regs) {
  for (Value v : values) {
    auto got = cx.get(v, id);
    if (failed(got))
      return failure();
    regs.push_back(*got);
  }
  return success();
}

Value ReduceEmitter::shuffleXor(Value v, int64_t mask) {
  Location loc = kc.loc;
  Type t = v.getType();
  auto shfl = [&](Value x) {
    return mlir::gpu::ShuffleOp::create(b, loc, x, static_cast<int32_t>(mask),
                                        static_cast<int32_t>(kc.threadsPerWarp()),
                                        mlir::gpu::ShuffleMode::XOR)
        .getShuffleResult();
  };
  if (t.isF32() || t.isInteger(32))
    return shfl(v);
  if (t.isIndex()) {
    Value w = arith::IndexCastOp::create(b, loc, b.getI64Type(), v);
    return arith::IndexCastOp::create(b, loc, t, shuffleXor(w, mask));
  }
  unsigned bits = t.getIntOrFloatBitWidth();
  Type intType = b.getIntegerType(bits);
  Value asInt = isa<FloatType>(t)
                    ? arith::BitcastOp::create(b, loc, intType, v).getResult()
                    : v;
  Value result;
  if (bits == 64) {
    Value lo = arith::TruncIOp::create(b, loc, b.getI32Type(), asInt);
    Value hi = arith::TruncIOp::create(
        b, loc, b.getI32Type(),
        arith::ShRUIOp::create(
            b, loc, asInt,
            arith::ConstantIntOp::create(b, loc, b.getI64Type(), 32)));
    Value slo = arith::ExtUIOp::create(b, loc, b.getI64Type(), shfl(lo));
    Value shi = arith::ShLIOp::create(
        b, loc, arith::ExtUIOp::create(b, loc, b.getI64Type(), shfl(hi)),
        arith::ConstantIntOp::create(b, loc, b.getI64Type(), 32));
    result = arith::OrIOp::create(b, loc, slo, shi);
  } else {
    Value wide = arith::ExtUIOp::create(b, loc, b.getI32Type(), asInt);
    result = arith::TruncIOp::create(b, loc, intType, shfl(wide));
  }
  if (isa<FloatType>(t))
    result = arith::BitcastOp::create(b, loc, t, result);
  return result;
}

LogicalResult ReduceEmitter::emitReduce(Operation *op) {
  auto red = cast<linalg::ReduceOp>(op);
  ArrayRef<int64_t> dims = red.getDimensions();
  Block &body = red.getCombiner().front();
  size_t n = red.getInputs().size();
  Value in0 = red.getInputs()[0];
  int a = cx.layoutOrDefault(in0);
  // Every basis must lie inside or outside the reduced dims.
  auto pure = [&](const Layout &l) {
    for (uint64_t basis : llvm::concat<const uint64_t>(l.regs, l.lanes,
                                                        l.warps)) {
      bool inRed = false, outRed = false;
      for (int64_t d = 0; d < l.rank(); ++d)
        if (l.coord(basis, d))
          (llvm::is_contained(dims, d) ? inRed : outRed) = true;
      if (inRed && outRed)
        return false;
    }
    return true;
  };
  if (!pure(cx.layout(a)))
    a = cx.defaultLayout(cast<RankedTensorType>(in0.getType()));
  const Layout &A = cx.layout(a);
  int s = analysis.layoutOf.count(red->getResult(0))
              ? analysis.layoutOf.lookup(red->getResult(0))
              : cx.intern(sliceLayout(A, dims));
  Layout expect = sliceLayout(A, dims);
  if (!cx.layout(s).sameDistribution(expect))
    s = cx.intern(expect);
  const Layout &S = cx.layout(s);
  SmallVector<int64_t> kept;
  for (int64_t d = 0; d < A.rank(); ++d)
    if (!llvm::is_contained(dims, d))
      kept.push_back(d);

  SmallVector<SmallVector<Value>> inputs;
  if (failed(getEach(red.getInputs(), a, inputs)))
    return failure();
  // 1. Registers of the same output element.
  SmallVector<SmallVector<int64_t>> groups(S.numRegs());
  for (int64_t r = 0; r < A.numRegs(); ++r) {
    uint64_t lin = projectLinear(A, A.regLinear(r), kept, S.shape);
    groups[*registerOf(S, lin)].push_back(r);
  }
  // partial[s][k]: input k's partial for output register s.
  SmallVector<SmallVector<Value>> partial(S.numRegs());
  for (int64_t sr = 0; sr < S.numRegs(); ++sr) {
    SmallVector<SmallVector<Value>> items;
    for (int64_t r : groups[sr]) {
      SmallVector<Value> item;
      for (size_t k = 0; k < n; ++k)
        item.push_back(inputs[k][r]);
      items.push_back(item);
    }
    while (items.size() > 1) {
      SmallVector<SmallVector<Value>> next;
      for (size_t i = 0; i + 1 < items.size(); i += 2)
        next.push_back(combine(body, items[i + 1], items[i]));
      if (items.size() % 2)
        next.push_back(items.back());
      items = std::move(next);
    }
    partial[sr] = items.front();
  }
  // 2. Lanes.
  for (auto [i, basis] : llvm::enumerate(A.lanes)) {
    if (basis == 0 || projectLinear(A, basis, kept, S.shape) != 0)
      continue;
    for (auto &p : partial) {
      SmallVector<Value> other;
      for (Value v : p)
        other.push_back(shuffleXor(v, int64_t(1) << i));
      p = combine(body, other, p);
    }
  }
  // 3. Warps, through shared memory.
  SmallVector<int64_t> warpBits;
  for (auto [i, basis] : llvm::enumerate(A.warps))
    if (basis != 0 && projectLinear(A, basis, kept, S.shape) == 0)
      warpBits.push_back(i);
  if (!warpBits.empty()) {
    int64_t groupsN = int64_t(1) << warpBits.size();
    int64_t elems = S.numElements();
    Value g = cx.idx(0);
    for (auto [k, bit] : llvm::enumerate(warpBits)) {
      Value t = arith::AndIOp::create(
          b, kc.loc,
          arith::ShRUIOp::create(b, kc.loc, kc.tid, cx.idx(kc.laneBits + bit)),
          cx.idx(1));
      if (k)
        t = arith::ShLIOp::create(b, kc.loc, t, cx.idx(k));
      g = arith::OrIOp::create(b, kc.loc, g, t);
    }
    std::vector<View> ws;
    int64_t offset = 0;
    for (size_t k = 0; k < n; ++k) {
      Type t = cast<RankedTensorType>(red.getInputs()[k].getType())
                   .getElementType();
      int64_t bytes;
      ws.push_back(cx.workspace({groupsN, elems}, t, offset, false, bytes));
      offset += (bytes + 15) / 16 * 16;
    }
    auto linear = [&](int64_t sr) {
      SmallVector<Value> c = cx.coords(s, sr);
      Value lin = cx.idx(0);
      int64_t stride = 1;
      for (int64_t d = S.rank() - 1; d >= 0; --d) {
        lin = arith::AddIOp::create(
            b, kc.loc, lin,
            arith::MulIOp::create(b, kc.loc, c[d], cx.idx(stride)));
        stride *= S.shape[d];
      }
      return lin;
    };
    auto toStorage = [&](Value v) {
      return v.getType().isInteger(1)
                 ? arith::ExtUIOp::create(b, kc.loc, b.getI8Type(), v)
                       .getResult()
                 : v;
    };
    auto fromStorage = [&](Value v, Type t) {
      return t.isInteger(1)
                 ? arith::TruncIOp::create(b, kc.loc, t, v).getResult()
                 : v;
    };
    SmallVector<Value> lins;
    for (int64_t sr = 0; sr < S.numRegs(); ++sr) {
      lins.push_back(linear(sr));
      for (size_t k = 0; k < n; ++k)
        memref::StoreOp::create(b, kc.loc, toStorage(partial[sr][k]),
                                ws[k].base, ValueRange{g, lins[sr]});
    }
    cx.barrier();
    for (int64_t sr = 0; sr < S.numRegs(); ++sr) {
      SmallVector<Value> acc;
      for (size_t k = 0; k < n; ++k)
        acc.push_back(
            fromStorage(memref::LoadOp::create(b, kc.loc, ws[k].base,
                                               ValueRange{cx.idx(0), lins[sr]}),
                        partial[sr][k].getType()));
      for (int64_t gi = 1; gi < groupsN; ++gi) {
        SmallVector<Value> other;
        for (size_t k = 0; k < n; ++k)
          other.push_back(fromStorage(
              memref::LoadOp::create(b, kc.loc, ws[k].base,
                                     ValueRange{cx.idx(gi), lins[sr]}),
              partial[sr][k].getType()));
        acc = combine(body, other, acc);
      }
      partial[sr] = acc;
    }
    cx.barrier();
  }
  // 4. The init values.
  SmallVector<SmallVector<Value>> inits;
  if (failed(getEach(red.getInits(), s, inits)))
    return failure();
  SmallVector<SmallVector<Value>> results(n);
  for (int64_t sr = 0; sr < S.numRegs(); ++sr) {
    SmallVector<Value> acc;
    for (size_t k = 0; k < n; ++k)
      acc.push_back(inits[k][sr]);
    SmallVector<Value> out = combine(body, partial[sr], acc);
    for (size_t k = 0; k < n; ++k)
      results[k].push_back(out[k]);
  }
  for (size_t k = 0; k < n; ++k)
    cx.setDist(red->getResult(k), Dist{s, results[k]});
  return success();
}
