//===- BlockViews.cpp - pallas-to-gpu: the kernel's arguments bound -*- C++ -*-===//
//
// What the kernel's arguments become in the gpu.func: its program ids and
// grid sizes the grid values, each operand the window of its block in the
// whole array (from its index map, with the bounds checks interpret mode
// implies at array edges); aliased operands share the output's memory.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/DistributeUtils.h"
#include "passes/Conversion/PallasToGPU/KernelSkeleton.h"
#include "passes/Utils/IndexMapExpr.h"

using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::gpu;

namespace {

/// Inlines the body of a lowered `@func` index map; returns its results.
FailureOr<SmallVector<Value>> inlineIndexMap(OpBuilder &b, func::FuncOp f,
                                             ArrayRef<Value> args) {
  if (!f.getBody().hasOneBlock())
    return f.emitOpError() << "index map has control flow between blocks, "
                              "which the GPU lowering cannot inline";
  return mlir::pallas::gpu::detail::cloneBody(b, f.getBody().front(), args);
}

int64_t lowBit(int64_t v) {
  if (v == 0)
    return int64_t(1) << 30;
  uint64_t u = static_cast<uint64_t>(v);
  return static_cast<int64_t>(std::min<uint64_t>(u & (~u + 1), 1u << 30));
}

} // namespace

DenseMap<int64_t, int64_t>
mlir::pallas::gpu::markAliasesAndScratch(Distributor &dist,
                                         func::FuncOp kernel,
                                         const CallInfo &info,
                                         int64_t visibleAxes) {
  int64_t numIn = info.numInputs(), numOut = info.numOutputs();
  // An input aliased to an output is the output's memory: same base, so
  // accesses through either are ordered, and neither is read-only.
  DenseMap<int64_t, int64_t> aliasOf;
  for (auto [in, out] : info.mapping.getAliases())
    aliasOf[in] = out;
  for (auto [in, out] : aliasOf) {
    dist.markWritable(kernel.getArgument(2 * visibleAxes + in));
    dist.markWritable(kernel.getArgument(2 * visibleAxes + numIn + out));
  }
  for (size_t k = 0; k < info.scratch.size(); ++k)
    dist.markScratch(
        kernel.getArgument(2 * visibleAxes + numIn + numOut + k));
  return aliasOf;
}

BlockViews::BlockViews(OpBuilder &b, Location loc, ModuleOp module,
                       func::FuncOp kernel, const CallInfo &info,
                       const KernelFunction &kf, ArrayRef<int64_t> seqAxes,
                       GridValues &grid)
    : b(b), loc(loc), module(module), kernel(kernel), info(info), kf(kf),
      seqAxes(seqAxes), grid(grid) {}

Value BlockViews::cst(int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

View BlockViews::wholeView(int64_t operand) {
  View v;
  v.base = kf.operands[operand];
  v.baseType = cast<MemRefType>(v.base.getType());
  if (!kf.dynSizes[operand].empty()) {
    v.dynSizes = kf.dynSizes[operand];
    for (int64_t div : kf.dynSizeDivisor[operand])
      v.dynSizeDiv.push_back(std::min(lowBit(div), int64_t(1) << 30));
  }
  for (int64_t d = 0; d < v.baseType.getRank(); ++d) {
    v.offsets.push_back(cst(0));
    v.offsetDiv.push_back(int64_t(1) << 30);
    v.checkLow.push_back(false);
    v.checkHigh.push_back(false);
    v.dimOf.push_back(d);
    v.strides.push_back(1);
    v.shape.push_back(v.baseType.getDimSize(d));
  }
  return v;
}

FailureOr<View> BlockViews::blockView(int64_t operand, BlockSpecAttr spec,
                                      StringRef what) {
  const GridMapping &mapping = info.mapping;
  int64_t rank = mapping.getRank();
  View v = wholeView(operand);
  if (spec.isWholeArray())
    return v;
  ArrayRef<int64_t> shape = v.baseType.getShape();
  int64_t r = v.baseType.getRank();
  if (static_cast<int64_t>(spec.getRank()) != r)
    return kernel.emitOpError() << what << " has rank " << r
                                << " but its block spec rank "
                                << spec.getRank();
  SmallVector<Value> raw;
  SmallVector<int64_t> rawDiv(r, 1);
  if (spec.getIndexFunc()) {
    auto f = module.lookupSymbol<func::FuncOp>(spec.getIndexFunc());
    if (!f)
      return kernel.emitOpError() << "index map " << spec.getIndexFunc()
                                  << " of " << what << " is missing";
    SmallVector<Value> args(gridI32);
    llvm::append_range(args, prefetchParams);
    auto results = inlineIndexMap(b, f, args);
    if (failed(results))
      return failure();
    for (Value res : *results)
      raw.push_back(res.getType().isIndex()
                        ? res
                        : arith::IndexCastOp::create(b, loc,
                                                     b.getIndexType(), res)
                              .getResult());
  } else if (AffineMap map = spec.getIndexMap()) {
    SmallVector<int64_t> dimDivs(rank, 1);
    for (int64_t a : seqAxes)
      dimDivs[a] = 1;
    for (auto [i, e] : llvm::enumerate(map.getResults())) {
      raw.push_back(expandIndexMapExpr(b, loc, e, grid.gridIdx, b.getIndexType(),
                                       IndexMapArith::FloorOps));
      rawDiv[i] = affineDivisor(e, dimDivs);
    }
  } else {
    for (int64_t d = 0; d < r; ++d) {
      raw.push_back(cst(0));
      rawDiv[d] = int64_t(1) << 30;
    }
  }
  if (static_cast<int64_t>(raw.size()) != r)
    return kernel.emitOpError() << "index map of " << what << " returns "
                                << raw.size() << " values for rank " << r;
  v.dimOf.clear();
  v.strides.clear();
  v.shape.clear();
  for (int64_t d = 0; d < r; ++d) {
    BlockDimKind kind = spec.getKind(d);
    int64_t bs = kind == BlockDimKind::Squeezed ? 1 : spec.getSizes()[d];
    int64_t lo = kind == BlockDimKind::Element ? spec.getPadLow()[d] : 0;
    int64_t hi = kind == BlockDimKind::Element ? spec.getPadHigh()[d] : 0;
    Value start = raw[d];
    int64_t div = rawDiv[d];
    if (kind == BlockDimKind::Blocked) {
      start = arith::MulIOp::create(b, loc, start, cst(bs));
      div = std::min<int64_t>(div * lowBit(bs), int64_t(1) << 30);
    }
    start = arith::MaxSIOp::create(b, loc, start, cst(0));
    if (v.isDynamicDim(d)) {
      // A symbolic dimension: the same clamp and edge check at the actual
      // size; no check where the symbols' multiple_of proves the blocks
      // tile it exactly.
      Value padded = arith::AddIOp::create(b, loc, v.dynSizes[d],
                                           cst(lo + hi));
      Value total = arith::MulIOp::create(
          b, loc, arith::CeilDivSIOp::create(b, loc, padded, cst(bs)),
          cst(bs));
      start = arith::MinSIOp::create(
          b, loc, start, arith::SubIOp::create(b, loc, total, cst(bs)));
      div = std::min(div, lowBit(bs));
      int64_t known = kf.dynSizeDivisor[operand][d];
      v.checkHigh[d] = lo != 0 || hi != 0 || known % bs != 0;
    } else {
      int64_t total = (lo + shape[d] + hi + bs - 1) / bs * bs;
      start = arith::MinSIOp::create(b, loc, start, cst(total - bs));
      div = std::min(div, lowBit(total - bs));
      v.checkHigh[d] = total - lo > shape[d];
    }
    if (lo) {
      start = arith::SubIOp::create(b, loc, start, cst(lo));
      div = std::min(div, lowBit(lo));
    }
    v.offsets[d] = start;
    v.offsetDiv[d] = div;
    v.checkLow[d] = lo > 0;
    if (kind == BlockDimKind::Squeezed)
      continue;
    v.dimOf.push_back(d);
    v.strides.push_back(1);
    v.shape.push_back(bs);
  }
  return v;
}

LogicalResult BlockViews::bind(Distributor &dist, KernelContext &kc,
                               Block &body, int64_t visibleAxes,
                               const DenseMap<int64_t, int64_t> &aliasOf) {
  const GridMapping &mapping = info.mapping;
  int64_t rank = mapping.getRank();
  int64_t nsp = mapping.getNumScalarPrefetch();
  int64_t numIn = info.numInputs(), numOut = info.numOutputs();
  SmallVector<Value> &gridIdx = grid.gridIdx, &gridSize = grid.gridSize;
  // The program ids and grid sizes of the kernel-visible axes.
  {
    int64_t arg = 0;
    for (int64_t a = 0; a < rank; ++a) {
      if (mapping.isVmapped(a))
        continue;
      dist.bindScalar(kernel.getArgument(arg),
                      arith::IndexCastOp::create(b, loc, b.getI32Type(),
                                                 gridIdx[a]));
      dist.bindScalar(kernel.getArgument(visibleAxes + arg),
                      arith::IndexCastOp::create(b, loc, b.getI32Type(),
                                                 gridSize[a]));
      ++arg;
    }
  }
  for (int64_t a = 0; a < rank; ++a)
    gridI32.push_back(
        arith::IndexCastOp::create(b, loc, b.getI32Type(), gridIdx[a]));
  for (int64_t i = 0; i < nsp; ++i)
    prefetchParams.push_back(body.getArgument(i));

  int64_t argBase = 2 * visibleAxes;
  for (int64_t i = 0; i < numIn; ++i) {
    int64_t param = i;
    Value old = kernel.getArgument(argBase + i);
    if (auto it = aliasOf.find(i); it != aliasOf.end())
      param = numIn + it->second;
    if (i < nsp) {
      if (!kf.dynSizes[param].empty())
        return kernel.emitOpError()
               << "scalar-prefetch input " << i << " is symbolic, which "
               << "the GPU lowering does not support yet";
      dist.bindView(old, wholeView(param));
      continue;
    }
    auto v = blockView(param, mapping.getInSpecs()[i - nsp],
                       ("input " + std::to_string(i)));
    if (failed(v))
      return failure();
    dist.bindView(old, *v);
    // The same block at another step of the sequential axis (TMA
    // prefetching), computed where the distributor's builder stands.
    if (auto it = kc.tmaSources.find(old); it != kc.tmaSources.end()) {
      int64_t axis = seqAxes.front();
      BlockSpecAttr spec = mapping.getInSpecs()[i - nsp];
      it->second.viewAt = [this, param, spec, axis,
                           i](OpBuilder &at, Value iv) -> FailureOr<View> {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(at.getInsertionBlock(), at.getInsertionPoint());
        SmallVector<Value> &gridIdx = grid.gridIdx;
        Value savedIdx = gridIdx[axis], savedI32 = gridI32[axis];
        gridIdx[axis] = iv;
        gridI32[axis] =
            arith::IndexCastOp::create(b, loc, b.getI32Type(), iv);
        auto view = blockView(param, spec, "input " + std::to_string(i));
        gridIdx[axis] = savedIdx;
        gridI32[axis] = savedI32;
        at.setInsertionPoint(b.getInsertionBlock(), b.getInsertionPoint());
        return view;
      };
    }
  }
  for (int64_t j = 0; j < numOut; ++j) {
    auto v = blockView(numIn + j, mapping.getOutSpecs()[j],
                       ("output " + std::to_string(j)));
    if (failed(v))
      return failure();
    dist.bindView(kernel.getArgument(argBase + numIn + j), *v);
  }
  return success();
}
