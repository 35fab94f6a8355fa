//===- DotEmitters.h - one dot lowering interface ---------------*- C++ -*-===//
//
// A dot (linalg.matmul, linalg.batch_matmul) is lowered by the emitter of
// the family of its accumulator layout (DotLayout.cpp chose it), as
// Triton's DotOpToLLVM lowers each MMA version in a file of its own:
//
//   WgmmaC  wgmma.mma_async (sm_90a)              Wgmma.cpp
//   MmaC    mma.sync m16n8k16, tf32 m16n8k8        MmaSync.cpp
//   MfmaC   v_mfma (AMD CDNA, wave64)              Mfma.cpp
//   WmmaC   v_wmma (AMD RDNA, wave32)              Wmma.cpp
//   other   SIMT, both operands in shared memory   Simt.cpp
//
// Batched dots always take the SIMT emitter. MFMA and WMMA share one
// emitter (Mfma.cpp, waveMatrix), parameterized by the instruction
// (DotUtils.h, WaveMatrixInstr). Dot.cpp holds what every family uses: the
// prologue (the dot's shape and operands, its accumulator in its layout),
// the staging of an operand in the workspace, and the dispatch
// (dotFamilies). A new instruction family is one member here, one file
// and one line of the table.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_CONVERSION_PALLASTOGPU_DOT_DOTEMITTERS_H
#define PALLASC_PASSES_CONVERSION_PALLASTOGPU_DOT_DOTEMITTERS_H

#include "passes/Conversion/PallasToGPU/Analysis/PipelineSchedule.h"
#include "passes/Conversion/PallasToGPU/Dot/DotUtils.h"
#include "passes/Conversion/PallasToGPU/Emitters/EmitContext.h"

namespace mlir::pallas::gpu::detail {

/// One dot being lowered: its operands, shape and accumulator (the
/// registers of `init` in the result layout `cId`), the part of the
/// workspace its staged operands take, and the family emitters.
class DotLowering {
public:
  DotLowering(EmitContext &d, Operation *op, int cId, SmallVector<Value> acc);

  /// Lowers the dot with its family's emitter (dotFamilies).
  LogicalResult run();

  // The family emitters: each emits the dot at `b`'s insertion point and
  // binds the result (finish).
  LogicalResult wgmma();   ///< Wgmma.cpp
  LogicalResult mmaSync(); ///< MmaSync.cpp
  LogicalResult mfma();    ///< Mfma.cpp
  LogicalResult wmma();    ///< Wmma.cpp
  LogicalResult simt();    ///< Simt.cpp
  /// The dot of a matrix instruction held in one wavefront's registers
  /// (MFMA, WMMA; Mfma.cpp).
  LogicalResult waveMatrix(const WaveMatrixInstr &wave);

  /// Stages `v` in the workspace (its staged view when it has one), stored
  /// along the dimension its layout is contiguous in; a streamed load is
  /// copied there group by group from its view. Rows are padded with
  /// `padStaged`.
  FailureOr<View> stage(Value v);
  /// The absolute byte offset of the next tile in dynamic shared memory.
  int64_t nextTileOffset() const { return kc.workspaceOffset + wsOffset; }
  /// Takes `bytes` (rounded up to 128) at nextTileOffset().
  void reserveTile(int64_t bytes);
  /// Whether operand `v` is already staged before the dot (DotStaging.cpp)
  /// as the tile this dot's family reads: a wgmma core-matrix tile
  /// (coreTiles), else a padded tile (stagedViews).
  bool staged(Value v) const;
  /// Whether operand `v` is used from registers in the fragment layout
  /// `want`: not staged or streamed, and either flexible or already held in
  /// a layout that provides `want`'s elements in the same threads (e.g.
  /// probabilities computed in the accumulator layout of an earlier dot).
  bool inRegisters(Value v, int want);
  /// The view a streamed operand `v` not staged yet is loaded from
  /// (EmitContext::streamedSource: the loaded tensor `x` seen through the
  /// transpose `perm`); null for other operands.
  const View *streamedOperand(Value v, Value &x, SmallVector<int64_t> &perm);
  /// The same with the layouts its whole tile is copied with
  /// (streamedLoad); no source for other operands.
  StreamedLoad streamedTile(Value v);
  /// One k chunk, `chunkK` wide along dimension `kdim`, of a streamed
  /// operand `v` (the loaded tensor `x` seen through the transpose `perm`,
  /// EmitContext::streamedSource): its shape in `v` and in `x`, the
  /// dimension k is in `x`, the blocked layout the chunk is copied with
  /// over `x` (`sourceId`) and that layout seen in `v`'s shape (`tileId`).
  struct StreamedChunk {
    SmallVector<int64_t> shape, sourceShape;
    int64_t sourceDim;
    int sourceId, tileId;
  };
  StreamedChunk streamedChunk(Value v, Value x, ArrayRef<int64_t> perm,
                              int64_t kdim, int64_t chunkK);
  /// Copies a streamed operand from `source` (loaded in layout `sourceId`)
  /// into `tile` (layout `tileId`: the same registers in the tile's
  /// coordinates), four access groups at a time.
  LogicalResult copyStreamed(const View &source, int sourceId,
                             const View &tile, int tileId);
  /// A streamed operand copied with cp.async into `tile` in chunks along
  /// k, one commit group per chunk (mma.sync and wgmma): the layouts of one
  /// chunk over the source and the tile, the dimensions k walks in each,
  /// the copy width. Chunk c starts at c * chunkK in the source and at
  /// c * chunkK / tileDiv in the tile (8 for core-matrix tiles).
  struct AsyncChunks {
    View source, tile;
    int sourceId, tileId;
    int64_t sourceDim, tileDim, width;
    int64_t tileDiv = 1;
  };
  /// Copies chunk `c` of every plan and commits it as one group.
  LogicalResult copyChunk(ArrayRef<AsyncChunks> plans, int64_t c,
                          int64_t chunkK);
  /// The software pipeline of this dot (PipelineSchedule.h), decided
  /// before it is emitted from `in` and the facts of its operands (`aId`:
  /// A's fragment layout when A may come from registers, else -1; B never
  /// does); a remark under print-schedule.
  PipelineSchedule schedule(PipelineInput in, int aId, int bId);
  /// Binds the dot's result to `regs` in the accumulator layout.
  LogicalResult finish(SmallVector<Value> regs);

  Value idx(int64_t v) { return d.idx(v); }
  Value i32(int64_t v) { return d.i32(v); }
  const Layout &layout(int id) const { return d.layout(id); }
  int intern(const Layout &l) { return d.intern(l); }
  void barrier() { d.barrier(); }

  /// The distributor as the emitters see it, for its emission services
  /// (registers, views, loads and stores, tiles).
  EmitContext &d;
  /// The state the dot lowering reads or writes, by concern: the layout
  /// assignment (streamed, flexible operands), the values emitted so far,
  /// the staging plans and staged tiles, the wgmma groups in flight.
  const LayoutAssignmentResult &analysis;
  const EmissionState &emission;
  StagingState &staging;
  WgmmaState &groups;
  KernelContext &kc;
  OpBuilder &b;
  Operation *op;
  Location loc;
  DotShape s;
  Value aVal, bVal;
  int cId;
  const Layout &C;       ///< the accumulator layout
  SmallVector<Value> acc; ///< the accumulator before the dot
  /// Rows of staged tiles are padded by 16 bytes (no bank conflicts) unless
  /// the padded tiles would not fit the chip's shared memory (simt).
  bool padStaged = true;

private:
  int64_t wsOffset = 0; ///< workspace bytes this dot's tiles take
};

/// What the emitter class of a family's dot (MmaSyncEmitter, WgmmaEmitter)
/// holds: the dot being lowered and, cached, the parts it uses most.
class DotFamilyEmitter {
public:
  explicit DotFamilyEmitter(DotLowering &dl)
      : dl(dl), d(dl.d), b(dl.b), loc(dl.loc), s(dl.s) {}

protected:
  DotLowering &dl;
  EmitContext &d;
  OpBuilder &b;
  Location loc;
  const DotShape &s;
};

/// The emitter of the dots whose accumulator layout is of `family`.
struct DotFamily {
  Layout::Family family;
  LogicalResult (DotLowering::*emit)();
};

/// The instruction families (Dot.cpp); dots of other layouts, and batched
/// ones, are SIMT dots.
ArrayRef<DotFamily> dotFamilies();

} // namespace mlir::pallas::gpu::detail

#endif // PALLASC_PASSES_CONVERSION_PALLASTOGPU_DOT_DOTEMITTERS_H
