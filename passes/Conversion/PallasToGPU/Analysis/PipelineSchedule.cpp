//===- PipelineSchedule.cpp - a tensor-core dot's software pipeline -------===//
//
// The schedules of mma.sync and wgmma dots (PipelineSchedule.h).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/Analysis/PipelineSchedule.h"

#include "llvm/Support/ErrorHandling.h"

using namespace mlir;
using namespace mlir::pallas::gpu;

StringRef mlir::pallas::gpu::feedName(OperandFeed feed) {
  switch (feed) {
  case OperandFeed::Registers:
    return "registers";
  case OperandFeed::Tma:
    return "tma";
  case OperandFeed::Prefetched:
    return "prefetched";
  case OperandFeed::CpAsync:
    return "cp.async";
  case OperandFeed::Ring:
    return "ring";
  case OperandFeed::Stored:
    return "stored";
  }
  llvm_unreachable("unknown operand feed");
}

/// An operand neither prefetched nor copied by a TMA: from registers, a
/// loop's ring, cp.async chunks at the dot, or a stored tile.
static OperandFeed localFeed(const PipelineInput::Operand &o, bool registers,
                             bool cpAsync) {
  if (registers && o.inRegisters)
    return OperandFeed::Registers;
  if (cpAsync && o.streamed)
    return OperandFeed::CpAsync;
  return o.ring ? OperandFeed::Ring : OperandFeed::Stored;
}

/// mma.sync: operands prefetched along the sequential axis wait for their
/// stage with `cp.async.wait_group stages - 1`; streamed ones are copied
/// with cp.async (sm_80+) in chunks along k, each committed as its own
/// group: the mma steps of chunk c wait for that chunk only, and the copies
/// of the later chunks overlap them. Each chunk costs a wait and a
/// block-wide barrier, so a chunk keeps each warp's tensor cores busy for
/// at least kMinMmaPerChunk instructions: a small dot (decode attention's
/// 16-row dots, 32 mma.sync per warp) is waited for whole.
static PipelineSchedule scheduleMmaSync(const PipelineInput &in) {
  constexpr int64_t kMinMmaPerChunk = 32;
  PipelineSchedule s;
  int64_t mmaPerWarp = std::max<int64_t>(1, in.m / in.warpsM / 16) *
                       std::max<int64_t>(1, in.n / in.warpsN / 8) *
                       (in.k / in.kStep);
  s.numChunks = std::max<int64_t>(
      1, std::min<int64_t>({4, in.k / in.kStep, mmaPerWarp / kMinMmaPerChunk}));
  s.chunkK = in.k / s.numChunks;
  const StagingState::StagePlan *sp = in.stagePlan;
  auto feed = [&](const PipelineInput::Operand &o) {
    if (sp && llvm::is_contained(sp->values, o.value))
      return OperandFeed::Prefetched;
    // cp.async chunks unless prefetched stages feed the dot.
    return localFeed(o, /*registers=*/true, !sp && in.hasCpAsync);
  };
  s.a = feed(in.a);
  s.b = feed(in.b);
  if (sp) {
    s.stages = sp->stages;
    s.copyAhead = sp->stages;
    s.copyWait = sp->stages - 1;
  }
  return s;
}

/// wgmma: streamed operands are copied with cp.async in up to four chunks
/// along k. A dot whose operands both come from TMA stages (at least two:
/// one read by the group in flight, one being filled) is pipelined across
/// the steps of the sequential axis: its wait_group leaves one group in
/// flight, and the copies use one stage fewer (one stays with each group in
/// flight).
static PipelineSchedule scheduleWgmma(const PipelineInput &in) {
  PipelineSchedule s;
  s.numChunks = std::min<int64_t>(4, in.k / 16);
  s.chunkK = in.k / s.numChunks;
  auto isTma = [&](Value v) {
    return in.tma &&
           llvm::any_of(in.tma->operands, [&](const auto &t) {
             return t.value == v;
           });
  };
  // A from registers when they hold its fragments; B always from shared
  // memory.
  bool aTma = !in.a.inRegisters && isTma(in.a.value);
  bool bTma = isTma(in.b.value);
  s.a = aTma ? OperandFeed::Tma
             : localFeed(in.a, /*registers=*/true, in.hasCpAsync);
  s.b = bTma ? OperandFeed::Tma
             : localFeed(in.b, /*registers=*/false, in.hasCpAsync);
  if (in.tma) {
    s.stages = in.tma->stages;
    s.waitDepth = aTma && bTma && in.tma->stages >= 2 ? 1 : 0;
    s.copyAhead = in.tma->stages - s.waitDepth;
  }
  return s;
}

PipelineSchedule mlir::pallas::gpu::schedulePipeline(const PipelineInput &in) {
  return in.family == PipelineInput::Family::Wgmma ? scheduleWgmma(in)
                                                   : scheduleMmaSync(in);
}

void mlir::pallas::gpu::printSchedule(llvm::raw_ostream &os,
                                      const PipelineSchedule &s) {
  os << "stages " << s.stages << " ahead " << s.copyAhead << " copy-wait "
     << s.copyWait << " wait-group " << s.waitDepth << " chunks "
     << s.numChunks << " x " << s.chunkK << " a " << feedName(s.a) << " b "
     << feedName(s.b);
}
