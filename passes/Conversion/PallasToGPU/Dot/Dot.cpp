//===- Dot.cpp - linalg.matmul on a thread block ----------------*- C++ -*-===//
//
// What the dot lowering's instruction families share (DotEmitters.h): the
// prologue of a dot (its shape and operands, the accumulator in the result
// layout), the dispatch to the emitter of the accumulator layout's family
// (dotFamilies: wgmma, mma.sync, MFMA, WMMA; SIMT for the rest), the
// staging of an operand in the workspace, and the views of streamed dot
// operands and of staged tiles.
//
// Upstream has no pattern from linalg.matmul on tensors to mma.sync on a
// thread block's registers; this file and the family files are that
// pattern.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/Distribute.h"
#include "passes/Conversion/PallasToGPU/Dot/DotEmitters.h"

using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::gpu;
using namespace mlir::pallas::gpu::detail;

const View *Distributor::streamedSource(Value v, SmallVector<int64_t> &perm,
                                        Value &x) {
  x = v;
  perm.clear();
  if (auto t = v.getDefiningOp<linalg::TransposeOp>()) {
    x = t.getInput();
    perm.assign(t.getPermutation().begin(), t.getPermutation().end());
  }
  auto tt = x.getDefiningOp<bufferization::ToTensorOp>();
  if (!tt)
    return nullptr;
  if (auto it = snapshots.find(tt.getBuffer()); it != snapshots.end())
    return &it->second;
  if (auto it = views.find(tt.getBuffer()); it != views.end())
    return &it->second;
  return nullptr;
}

int Distributor::streamedLayouts(Value v, Value x, ArrayRef<int64_t> perm,
                                 int &sourceId) {
  sourceId = defaultLayout(cast<RankedTensorType>(x.getType()));
  if (perm.empty())
    return sourceId;
  return intern(projectLayout(layout(sourceId), perm,
                              cast<RankedTensorType>(v.getType()).getShape()));
}

namespace {

/// A dot: its accumulator in the layout the analysis chose (or its
/// instruction's), lowered by DotLowering.
LogicalResult emitDot(EmitContext &cx, Operation *op) {
  const LayoutAssignmentResult &analysis = cx.analysis();
  Value init = cast<linalg::LinalgOp>(op).getDpsInits()[0];
  int cId = analysis.layoutOf.count(op->getResult(0))
                ? analysis.layoutOf.lookup(op->getResult(0))
                : cx.dotLayout(op);
  auto cRegsOr = cx.get(init, cId);
  if (failed(cRegsOr))
    return failure();
  return DotLowering(cx, op, cId, *cRegsOr).run();
}

} // namespace

void mlir::pallas::gpu::populateDotEmitters(EmitterRegistry &r) {
  r.add<linalg::MatmulOp, linalg::BatchMatmulOp>(emitDot);
}

ArrayRef<DotFamily> mlir::pallas::gpu::detail::dotFamilies() {
  static const DotFamily families[] = {
      {Layout::Family::WgmmaC, &DotLowering::wgmma},
      {Layout::Family::MfmaC, &DotLowering::mfma},
      {Layout::Family::WmmaC, &DotLowering::wmma},
      {Layout::Family::MmaC, &DotLowering::mmaSync},
  };
  return families;
}

DotLowering::DotLowering(EmitContext &d, Operation *op, int cId,
                         SmallVector<Value> acc)
    : d(d), analysis(d.analysis()), emission(d.emission()),
      staging(d.staging()), groups(d.wgmmaGroups()), kc(d.context()),
      b(d.builder()), op(op), loc(op->getLoc()), s(dotShape(op)),
      aVal(cast<linalg::LinalgOp>(op).getDpsInputs()[0]),
      bVal(cast<linalg::LinalgOp>(op).getDpsInputs()[1]), cId(cId),
      C(d.layout(cId)), acc(std::move(acc)) {}

LogicalResult DotLowering::run() {
  if (s.batch == 0)
    for (const DotFamily &f : dotFamilies())
      if (f.family == C.family)
        return (this->*f.emit)();
  return simt();
}

void DotLowering::reserveTile(int64_t bytes) {
  wsOffset += (bytes + 127) / 128 * 128;
  kc.workspaceBytes = std::max(kc.workspaceBytes, wsOffset);
}

LogicalResult DotLowering::finish(SmallVector<Value> regs) {
  d.setDist(op->getResult(0), Dist{cId, std::move(regs)});
  return success();
}

bool DotLowering::staged(Value v) const {
  return C.family == Layout::Family::WgmmaC ? staging.coreTiles.count(v)
                                            : staging.stagedViews.count(v);
}

bool DotLowering::inRegisters(Value v, int want) {
  if (staged(v) || analysis.streamed.contains(v))
    return false;
  if (analysis.flexible.contains(v))
    return true;
  auto it = emission.dists.find(v);
  return it != emission.dists.end() &&
         providesLocally(layout(it->second.layout), layout(want));
}

const View *DotLowering::streamedOperand(Value v, Value &x,
                                         SmallVector<int64_t> &perm) {
  if (!analysis.streamed.contains(v) || staged(v))
    return nullptr;
  return d.streamedSource(v, perm, x);
}

StreamedLoad DotLowering::streamedTile(Value v) {
  if (!analysis.streamed.contains(v) || staged(v))
    return {};
  return streamedLoad(d, v);
}

DotLowering::StreamedChunk
DotLowering::streamedChunk(Value v, Value x, ArrayRef<int64_t> perm,
                           int64_t kdim, int64_t chunkK) {
  auto type = cast<RankedTensorType>(v.getType());
  auto stype = cast<RankedTensorType>(x.getType());
  StreamedChunk ch;
  ch.sourceDim = perm.empty() ? kdim : perm[kdim];
  ch.shape.assign(type.getShape().begin(), type.getShape().end());
  ch.sourceShape.assign(stype.getShape().begin(), stype.getShape().end());
  ch.shape[kdim] = chunkK;
  ch.sourceShape[ch.sourceDim] = chunkK;
  ch.sourceId = d.defaultLayout(
      RankedTensorType::get(ch.sourceShape, stype.getElementType()));
  ch.tileId = perm.empty() ? ch.sourceId
                           : intern(projectLayout(layout(ch.sourceId), perm,
                                                  ch.shape));
  return ch;
}

FailureOr<View> DotLowering::stage(Value v) {
  if (auto it = staging.stagedViews.find(v); it != staging.stagedViews.end())
    return it->second;
  auto type = cast<RankedTensorType>(v.getType());
  int64_t bytes;
  if (analysis.streamed.contains(v)) {
    // A streamed load: copied group by group from its view.
    StreamedLoad in = streamedLoad(d, v);
    if (!in.source)
      return v.getDefiningOp()->emitOpError()
             << "reads a memref that is not a view";
    View tile = d.tileView(type, in.id, nextTileOffset(), bytes, padStaged);
    reserveTile(bytes);
    if (failed(copyStreamed(*in.source, in.sourceId, tile, in.id)))
      return failure();
    return tile;
  }
  int id = d.layoutOrDefault(v);
  auto regs = d.get(v, id);
  if (failed(regs))
    return failure();
  View tile =
      d.tileView(type, id, nextTileOffset(), bytes, padStaged);
  reserveTile(bytes);
  if (failed(d.storeTile(tile, id, *regs)))
    return failure();
  return tile;
}

LogicalResult DotLowering::copyStreamed(const View &source, int sourceId,
                                        const View &tile, int tileId) {
  // Four access groups at a time: a few registers in flight.
  int64_t chunk = 4 * d.groupWidth(source, sourceId);
  int64_t numRegs = layout(tileId).numRegs();
  for (int64_t r0 = 0; r0 < numRegs; r0 += chunk) {
    SmallVector<int64_t> subset;
    for (int64_t r = r0; r < std::min(r0 + chunk, numRegs); ++r)
      subset.push_back(r);
    auto part = d.load(source, sourceId, subset);
    if (failed(part))
      return failure();
    if (failed(d.storeTile(tile, tileId, *part, subset)))
      return failure();
  }
  return success();
}

PipelineSchedule DotLowering::schedule(PipelineInput in, int aId, int bId) {
  auto facts = [&](Value v, int id) {
    PipelineInput::Operand o;
    o.value = v;
    o.inRegisters = id >= 0 && inRegisters(v, id);
    o.streamed = analysis.streamed.contains(v) && !staged(v);
    o.ring = staging.loopStaged.contains(v);
    return o;
  };
  in.m = s.m;
  in.n = s.n;
  in.k = s.k;
  in.hasCpAsync = kc.target->hasCpAsync;
  if (auto it = staging.tmaPlans.find(op); it != staging.tmaPlans.end())
    in.tma = &it->second;
  if (auto it = staging.stagePlans.find(op); it != staging.stagePlans.end())
    in.stagePlan = &it->second;
  in.a = facts(aVal, aId);
  in.b = facts(bVal, bId);
  PipelineSchedule sched = schedulePipeline(in);
  if (kc.printSchedules) {
    InFlightDiagnostic remark = op->emitRemark() << "pipeline: ";
    std::string text;
    llvm::raw_string_ostream os(text);
    printSchedule(os, sched);
    remark << text;
  }
  return sched;
}

LogicalResult DotLowering::copyChunk(ArrayRef<AsyncChunks> plans, int64_t c,
                                     int64_t chunkK) {
  for (const AsyncChunks &p : plans) {
    SmallVector<int64_t> sshape(layout(p.sourceId).shape.begin(),
                                layout(p.sourceId).shape.end());
    SmallVector<int64_t> tshape(layout(p.tileId).shape.begin(),
                                layout(p.tileId).shape.end());
    SmallVector<OpFoldResult> so(sshape.size(), b.getIndexAttr(0)),
        to(tshape.size(), b.getIndexAttr(0));
    so[p.sourceDim] = b.getIndexAttr(c * chunkK);
    to[p.tileDim] = b.getIndexAttr(c * chunkK / p.tileDiv);
    View src = d.subview(p.source, so, {}, sshape,
                         SmallVector<int64_t>(sshape.size(), 1), {});
    View dst = d.subview(p.tile, to, {}, tshape,
                         SmallVector<int64_t>(tshape.size(), 1), {});
    if (failed(d.copyAsync(src, p.sourceId, dst, p.tileId, p.width)))
      return op->emitOpError() << "cannot copy a dot operand with cp.async";
  }
  NVVM::CpAsyncCommitGroupOp::create(b, loc);
  return success();
}

View Distributor::tileView(RankedTensorType type, int id, int64_t absOffset,
                           int64_t &bytes, bool pad) {
  const Layout &l = layout(id);
  int64_t rank = type.getRank();
  // Stored along the dimension of the first register basis (where the
  // value is contiguous), rows padded by 16 bytes.
  int64_t contiguous = rank - 1;
  if (!l.regs.empty())
    for (int64_t d = 0; d < rank; ++d)
      if (l.coord(l.regs[0], d))
        contiguous = d;
  SmallVector<int64_t> order; // base dims, outermost first
  for (int64_t d = 0; d < rank; ++d)
    if (d != contiguous)
      order.push_back(d);
  order.push_back(contiguous);
  SmallVector<int64_t> baseShape;
  for (int64_t d : order)
    baseShape.push_back(type.getDimSize(d));
  View view = sharedView(baseShape, type.getElementType(), absOffset, pad,
                         bytes);
  view.shape.assign(type.getShape().begin(), type.getShape().end());
  view.dimOf.assign(rank, 0);
  view.strides.assign(rank, 1);
  for (auto [pos, d] : llvm::enumerate(order))
    view.dimOf[d] = pos;
  return view;
}

LogicalResult Distributor::storeTile(const View &tile, int id,
                                     ArrayRef<Value> regs,
                                     ArrayRef<int64_t> subset) {
  SmallVector<Value> values(regs);
  for (Value &r : values)
    if (r && r.getType().isInteger(1))
      r = arith::ExtUIOp::create(b, kc.loc, b.getI8Type(), r);
  return store(tile, id, values, {}, subset);
}

