//===- Simt.cpp - dots without matrix instructions --------------*- C++ -*-===//
//
// Everything the matrix instructions do not take (exact f32, integers, i1,
// batched dots, chips without them): both operands staged in shared memory
// and a loop over k, each thread accumulating its registers of the result's
// layout.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/Dot/DotEmitters.h"
#include "passes/Utils/ElementCast.h"

using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::gpu;
using namespace mlir::pallas::gpu::detail;

LogicalResult DotLowering::simt() {
  // SIMT: both operands in shared memory, a loop over k. Where both padded
  // tiles do not fit (128x128 bf16 operands in sm_75's 64 KiB), unpadded.
  auto stagedBytes = [&](Value v, bool pad) {
    auto type = cast<RankedTensorType>(v.getType());
    int64_t elemBytes =
        std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
    int64_t n = type.getNumElements() * elemBytes, most = n;
    if (pad && type.getRank() >= 2)
      for (int64_t dim : type.getShape())
        if (dim * elemBytes >= 64)
          most = std::max(most, n / dim * (dim + 16 / elemBytes));
    return (most + 127) / 128 * 128;
  };
  if (kc.maxSharedBytes > 0 && !staging.stagedViews.count(aVal) &&
      !staging.stagedViews.count(bVal) &&
      kc.workspaceOffset + stagedBytes(aVal, true) + stagedBytes(bVal, true) >
          kc.maxSharedBytes &&
      kc.workspaceOffset + stagedBytes(aVal, false) +
              stagedBytes(bVal, false) <=
          kc.maxSharedBytes)
    padStaged = false;
  auto aView = stage(aVal);
  if (failed(aView))
    return failure();
  auto bView = stage(bVal);
  if (failed(bView))
    return failure();
  barrier();
  int64_t rank = C.rank();
  SmallVector<SmallVector<Value>> cc;
  for (int64_t r = 0; r < C.numRegs(); ++r)
    cc.push_back(d.coords(cId, r));
  auto loop = scf::ForOp::create(b, loc, idx(0), idx(s.k), idx(1), acc);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value kv = loop.getInductionVar();
    auto element = [&](const View &v, SmallVector<Value> c) {
      SmallVector<Value> bi = d.baseIndices(v, c);
      Value x = memref::LoadOp::create(b, loc, v.base, bi);
      if (x.getType() != v.elementType())
        x = arith::TruncIOp::create(b, loc, b.getI1Type(), x);
      return x;
    };
    SmallVector<Value> next;
    for (int64_t r = 0; r < C.numRegs(); ++r) {
      SmallVector<Value> ac, bc;
      if (rank == 3) {
        ac.push_back(cc[r][0]);
        bc.push_back(cc[r][0]);
      }
      ac.push_back(cc[r][rank - 2]);
      ac.push_back(kv);
      bc.push_back(kv);
      bc.push_back(cc[r][rank - 1]);
      Value x = convertElementType(b, loc, element(*aView, ac), s.c);
      Value y = convertElementType(b, loc, element(*bView, bc), s.c);
      Value cur = loop.getRegionIterArgs()[r];
      if (isa<FloatType>(s.c))
        next.push_back(arith::AddFOp::create(
            b, loc, cur, arith::MulFOp::create(b, loc, x, y)));
      else if (s.c.isInteger(1))
        next.push_back(arith::OrIOp::create(
            b, loc, cur, arith::AndIOp::create(b, loc, x, y)));
      else
        next.push_back(arith::AddIOp::create(
            b, loc, cur, arith::MulIOp::create(b, loc, x, y)));
    }
    scf::YieldOp::create(b, loc, next);
  }
  barrier();
  return finish(SmallVector<Value>(loop.getResults()));

}
