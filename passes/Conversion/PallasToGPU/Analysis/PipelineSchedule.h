//===- PipelineSchedule.h - a tensor-core dot's software pipeline -*- C++ -*-===//
//
// The software pipeline of one mma.sync or wgmma dot, decided before the
// dot is emitted (the dot families read it: Dot/MmaSync.cpp, Dot/Wgmma.cpp):
// where each operand's tile comes from (registers, TMA stages, cp.async
// stages along the sequential grid axis, cp.async chunks along k, a
// shared-memory tile), how many steps the copies run ahead, the
// cp.async.wait_group of the prefetched stages, and how many wgmma groups
// the dot's wait_group leaves in flight across the sequential steps.
//
// Its input is plain facts about the dot (its shape and warps, the staging
// plans StagingPlanner made for it, where each operand is held when the dot
// is reached), its output a plain struct; pallas-to-gpu's print-schedule
// shows it (lit/Conversion/pallas-to-gpu-schedule.mlir).
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_CONVERSION_PALLASTOGPU_ANALYSIS_PIPELINESCHEDULE_H
#define PALLASC_PASSES_CONVERSION_PALLASTOGPU_ANALYSIS_PIPELINESCHEDULE_H

#include "passes/Conversion/PallasToGPU/DistributeState.h"

#include "llvm/Support/raw_ostream.h"

namespace mlir::pallas::gpu {

/// Where a dot operand's tile comes from.
enum class OperandFeed {
  Registers,  ///< registers already holding the instruction's fragments
  Tma,        ///< TMA stages along the sequential axis (StagingState::TmaPlan)
  Prefetched, ///< cp.async stages along the sequential axis (StagePlan)
  CpAsync,    ///< cp.async in the schedule's k chunks (stored instead when
              ///< the copy's alignment does not allow it)
  Ring,       ///< a loop's cp.async ring (LoopStagePlan), waited for at the
              ///< start of the iteration
  Stored,     ///< stored into a shared-memory tile (at the dot or where the
              ///< operand is defined)
};

/// The feed's name in print-schedule's remarks.
StringRef feedName(OperandFeed feed);

/// The facts one dot's schedule is decided from.
struct PipelineInput {
  enum class Family { MmaSync, Wgmma } family = Family::MmaSync;
  int64_t m = 0, n = 0, k = 0;
  int64_t kStep = 16;             ///< the instruction's k
  int64_t warpsM = 1, warpsN = 1; ///< warps over the accumulator
  bool hasCpAsync = false;        ///< the chip has cp.async
  /// The staging plans of the dot (null: none).
  const StagingState::TmaPlan *tma = nullptr;
  const StagingState::StagePlan *stagePlan = nullptr;
  /// One operand (A, B) where the dot is reached.
  struct Operand {
    Value value;
    bool inRegisters = false; ///< registers hold its fragments
    bool streamed = false;    ///< a load not staged yet (cp.async can copy)
    bool ring = false;        ///< a loop's ring holds its tile
  } a, b;
};

/// One dot's software pipeline.
struct PipelineSchedule {
  /// Copy stages along the sequential grid axis (TMA or cp.async prefetch;
  /// 0: none) and the steps whose copies are issued ahead of their use.
  int64_t stages = 0, copyAhead = 0;
  /// The cp.async.wait_group before the step's prefetched stage is read.
  int64_t copyWait = 0;
  /// wgmma groups the dot's wait_group leaves in flight (1: pipelined
  /// across the sequential steps).
  int64_t waitDepth = 0;
  /// Chunks along k of the operands copied with cp.async at the dot, one
  /// commit group each, and their width.
  int64_t numChunks = 1, chunkK = 0;
  OperandFeed a = OperandFeed::Stored, b = OperandFeed::Stored;
};

/// The schedule of a dot.
PipelineSchedule schedulePipeline(const PipelineInput &in);

/// `stages S ahead N copy-wait W wait-group G chunks C x K a F b F`.
void printSchedule(llvm::raw_ostream &os, const PipelineSchedule &s);

} // namespace mlir::pallas::gpu

#endif // PALLASC_PASSES_CONVERSION_PALLASTOGPU_ANALYSIS_PIPELINESCHEDULE_H
