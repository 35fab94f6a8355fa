//===- DistributeState.h - the distributor's data by concern ----*- C++ -*-===//
//
// What the GPU lowering's distributor (Distribute.h) works on, apart from
// its code: a memref seen through a block's window (View), a distributed
// tensor (Dist), what the pass sets up for it (KernelContext), and its state
// in one struct per concern: the layout table, the layout assignment's
// result, the scratch buffers kept in registers, the staging of dot
// operands, the emission state, the memory-ordering barriers and the wgmma
// groups in flight.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_CONVERSION_PALLASTOGPU_DISTRIBUTESTATE_H
#define PALLASC_PASSES_CONVERSION_PALLASTOGPU_DISTRIBUTESTATE_H

#include "passes/Conversion/PallasToGPU/Analysis/Layout.h"
#include "passes/Conversion/PallasToGPU/PallasToGPU.h"
#include "chips/GpuTarget.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"

#include <deque>
#include <functional>

namespace mlir::pallas::gpu {

/// A memref seen through a block's window.
struct View {
  Value base;             ///< memref: kernel parameter or shared memory
  MemRefType baseType;
  /// Per base dimension: where the window starts (index) and a known
  /// power-of-two divisor of that start.
  SmallVector<Value> offsets;
  SmallVector<int64_t> offsetDiv;
  /// Per base dimension: whether an index may leave [0, dim) and must be
  /// checked (reads give the uninitialized value, writes are dropped).
  SmallVector<bool> checkLow, checkHigh;
  /// Per view dimension: the base dimension it walks and the stride.
  SmallVector<int64_t> dimOf, strides;
  SmallVector<int64_t> shape;
  /// Per base dimension of a symbolic operand (empty otherwise): the size
  /// of a dynamic dimension (index, null where static) and a power-of-two
  /// divisor known of it.
  SmallVector<Value> dynSizes;
  SmallVector<int64_t> dynSizeDiv;

  Type elementType() const { return baseType.getElementType(); }
  /// Whether base dimension `d` is dynamic.
  bool isDynamicDim(int64_t d) const {
    return !dynSizes.empty() && dynSizes[d];
  }
  /// The size of base dimension `d` where only its divisibility by powers
  /// of two matters: the static size, or the known divisor of a dynamic one.
  int64_t sizeForDivisibility(int64_t d) const {
    return isDynamicDim(d) ? dynSizeDiv[d] : baseType.getDimSize(d);
  }
  int64_t rank() const { return shape.size(); }
  bool isShared() const;
  bool needsChecks() const;
};

/// A distributed tensor: its layout (an index into the distributor's
/// layout table) and one scalar per register.
struct Dist {
  int layout = -1;
  SmallVector<Value> regs;
};

/// Set up by the pass for the distributor.
struct KernelContext {
  explicit KernelContext(Location loc) : loc(loc) {}
  Location loc;
  Value tid;                 ///< gpu.thread_id x, index
  int64_t numWarps = 4;
  /// pallas-to-gpu's print-schedule: a remark on each tensor-core dot with
  /// its software pipeline (PipelineSchedule.h).
  bool printSchedules = false;
  Value smemBase;            ///< memref<?xi8, workgroup> (dynamic)
  int64_t workspaceOffset = 0;
  int64_t workspaceBytes = 0; ///< grows as the distributor needs
  /// The chip: its entry of the GPU target table (chips/GpuTarget.h).
  const pallasc::GpuTarget *target = nullptr;
  /// Whether the chip has matrix instructions of `kind`.
  bool has(pallasc::MatrixInstrKind kind) const {
    return target->hasMatrixInstr(kind);
  }
  /// log2 of the threads per warp (32 on NVIDIA, 64 on AMD CDNA).
  int64_t laneBits = 5;
  int64_t threadsPerWarp() const { return int64_t(1) << laneBits; }
  /// Where thread-invariant values (thread coordinates) are emitted.
  Block *prologueBlock = nullptr;
  Operation *prologueEnd = nullptr; ///< insert before this

  /// TMA pipelining (sm_90a): set by the pass when the grid has exactly one
  /// sequential axis, run as the loop whose induction variable and trip
  /// count are `seqIv` and `seqCount` (index; set before emit()).
  bool oneSequentialAxis = false;
  Value seqIv, seqCount;
  /// Dynamic shared memory a block may use on the chip (with the opt-in).
  int64_t maxSharedBytes = 0;
  /// Inputs a TMA may read: a kernel argument bound to a 2-D block of an
  /// input array that every block covers whole (no edge checks), and a way
  /// to compute its block at another step of the sequential axis.
  struct TmaSource {
    int64_t input = 0;
    SmallVector<int64_t, 2> globalShape, blockShape;
    std::function<FailureOr<View>(OpBuilder &, Value iv)> viewAt;
  };
  DenseMap<Value, TmaSource> tmaSources;
  /// Appends a kernel parameter of `type` and returns it (set by the pass).
  std::function<Value(Type)> addParam;
  /// The tensor maps the kernel takes (one parameter each, after the
  /// others): the input, its element type and shape, the box a copy moves.
  struct TensorMap {
    int64_t input = 0;
    Type elementType;
    SmallVector<int64_t, 2> globalShape, boxShape;
    Value param;
  };
  SmallVector<TensorMap> tensorMaps;
};

//===----------------------------------------------------------------------===//
// The distributor's data, by concern: base structs Distributor inherits
// privately (their names are the distributor's own); the op families'
// emitters reach the parts they use through EmitContext (EmitContext.h).
//===----------------------------------------------------------------------===//

/// The kernel argument (or other root) a memref value is a view of: its
/// subviews and casts walked back.
Value rootMemref(Value memref);

/// The layouts of a kernel, interned: a layout id indexes `layouts`.
struct LayoutTable {
  /// The id of `layout`: of the table's layout with the same distribution,
  /// else of `layout` added.
  int intern(const Layout &layout);
  const Layout &layout(int id) const { return layouts[id]; }
  /// The blocked layout (Layout.h, blockedLayout) of a tensor of `type`
  /// over the warps and lanes of `kc`.
  int blocked(RankedTensorType type, const KernelContext &kc);

  std::deque<Layout> layouts; // stable references
  /// Reduction slices: parent layout id, for lifting a broadcast back.
  DenseMap<int, int> sliceParent;
  /// The MMA family a layout descends from (warpsM, warpsN; whether it is
  /// a wgmma layout), if any.
  struct MmaRoot {
    int64_t warpsM, warpsN;
    bool wgmma = false;
  };
  DenseMap<int, MmaRoot> mmaRoot;
};

/// The layout assignment's result (LayoutAssignment.h, at prepare; read by
/// the emitters): the layout of every tensor value and what the analysis
/// found about values and kernel arguments.
struct LayoutAssignmentResult {
  DenseMap<Value, int> layoutOf;
  DenseSet<Value> flexible;
  DenseSet<Value> deferred;
  /// Loads of read-only memory whose only use is a dot operand staged in
  /// shared memory: copied there group by group at the dot, never held
  /// whole in registers.
  DenseSet<Value> streamed;
  /// Kernel memref arguments whose memory the kernel may write (through
  /// themselves or an aliased operand).
  DenseSet<Value> writableArgs;
  /// Whether the kernel reduces along rows (DotLayout.cpp, rowsAreReduced:
  /// dot layouts then keep one warp along n); computed once per kernel.
  std::optional<int> rowsReduced;

  /// Whether `memref` is a view of a kernel argument of `kernel` that the
  /// kernel never writes (writableArgs).
  bool isReadOnly(Value memref, func::FuncOp kernel) const;
};

/// Scratch buffers kept in registers (findPromotable, at prepare; their
/// current registers during emission).
struct PromotionState {
  /// Scratch buffers only read and written whole (at the top level of the
  /// kernel or under scf.if): kept in registers, in one layout, carried
  /// across the in-block sequential loop by the caller.
  struct Promoted {
    RankedTensorType type;
    int layout = -1;
    SmallVector<Value> loads;
    SmallVector<Value> stored;
    SmallVector<Value> regs; ///< current value during emission
  };
  SmallVector<Value> scratchArgs;
  int64_t scratchSharedBytes = 0; ///< shared memory of the others
  llvm::MapVector<Value, Promoted> promoted;
  DenseMap<Value, SmallVector<Value>> promotedSnapshots; ///< alloc -> regs
};

/// The staging of dot operands in shared memory: the plans made at prepare
/// (StagingPlanner.h: early tiles, TMA, cp.async stages, loop rings) and the
/// tiles bound during emission.
struct StagingState {
  /// Dot operands staged where they are defined, in a tile of their own
  /// (their registers die at once): the defining value -> tile.
  struct EarlyTile {
    Value operand;
    int layout;
    int64_t offset;
    bool core = false; ///< a wgmma core-matrix tile (coreTile)
  };
  DenseMap<Value, EarlyTile> earlyTiles;
  DenseMap<Value, View> stagedViews; ///< dot operand -> its tile
  /// A 16-bit wgmma operand [R, C] in shared memory in the no-swizzle
  /// canonical layout: 8x8 core matrices (8 rows of 16 contiguous bytes,
  /// 128 bytes each), stored as [O/8, Cc/8, 8, 8] where Cc is the
  /// dimension `cdim` stored contiguously and O the other one.
  struct CoreTile {
    View view;
    int64_t cdim = 1;
    int64_t offset = 0; ///< byte offset in dynamic shared memory
    int64_t rows = 0, cols = 0;
    /// Bytes added to `offset` at run time (index; null: none): the ring
    /// slot of a tile prefetched across an scf.for (planLoopStages).
    Value shift;
  };
  DenseMap<Value, CoreTile> coreTiles; ///< early-staged wgmma operands
  /// wgmma operands a TMA copies (128-byte swizzled panels, see
  /// StagingPlans.cpp), prefetched `stages` steps ahead along the sequential
  /// grid axis, one mbarrier per (stage, 64-wide k chunk).
  struct TmaOperand {
    Value value, arg;   ///< the dot operand; the kernel argument it reads
    int64_t kdim = 0;   ///< the operand's k dimension (A: 1, B: 0)
    bool kMajor = true; ///< k is the source's contiguous dimension
    int64_t rows = 0, cols = 0; ///< the source block ([rows, cols])
    int64_t offset = 0; ///< the tile's byte offset in a stage
    int map = 0;        ///< index into kc.tensorMaps
  };
  struct TmaPlan {
    SmallVector<TmaOperand, 2> operands;
    int64_t stages = 1, chunkK = 64, numChunks = 1, stageBytes = 0;
    int64_t region = 0;   ///< workspace offset of the stages (+1 KiB slack)
    int64_t barriers = 0; ///< workspace offset of the mbarriers
  };
  DenseMap<Operation *, TmaPlan> tmaPlans;
  int64_t numStages = 0; ///< compiler_params.gpu.num_stages (0: absent)
  /// mma.sync operands copied with cp.async `stages` steps ahead along the
  /// sequential grid axis (sm_80+; whole 2-D input blocks, as for TMA):
  /// padded tiles (tileView) at `offsets` in each stage of the region.
  struct StagePlan {
    SmallVector<Value, 2> values;
    SmallVector<int64_t, 2> kdims, offsets;
    int64_t stages = 1, stageBytes = 0, region = 0;
  };
  DenseMap<Operation *, StagePlan> stagePlans;
  /// Dot operands streamed inside an scf.for from a window of a kernel
  /// argument that moves with the induction variable (flash attention's K
  /// and V blocks): copied with cp.async `stages - 1` iterations ahead into
  /// a ring of `stages` tiles per operand (sm_80+, `num_stages` >= 2; see
  /// StagingPlans.cpp). The loop -> its plan.
  struct LoopStageOperand {
    Value value;               ///< the dot operand (a load or its transpose)
    Operation *window = nullptr; ///< the memref.subview the load reads
    bool core = false;         ///< a wgmma core-matrix tile (else tileView)
    int64_t offset = 0;        ///< the tile's byte offset in a stage
  };
  struct LoopStagePlan {
    SmallVector<LoopStageOperand, 2> operands;
    int64_t stages = 1, stageBytes = 0, region = 0;
  };
  DenseMap<Operation *, LoopStagePlan> loopPlans;
  /// Dot operands whose tile this iteration's prefetch already holds (and
  /// a barrier published): the dots wait and synchronize no further.
  DenseSet<Value> loopStaged;
};

/// The emission state (Distributor.cpp): the registers, scalars and views
/// of the values emitted so far and the caches of derived values.
struct EmissionState {
  IRMapping scalars;
  DenseMap<Value, View> views;
  DenseMap<Value, View> snapshots; ///< snapshot alloc -> source view
  DenseMap<Value, Dist> dists;
  struct DefPoint {
    Block *block = nullptr;
    Operation *after = nullptr; ///< null: block start
  };
  DenseMap<Value, DefPoint> defPoints;
  /// (value, layout) -> registers; conversions are placed at the value's
  /// definition, materializations of flexible values where first used.
  struct Memo {
    Block *block;
    SmallVector<Value> regs;
  };
  DenseMap<std::pair<Value, int>, Memo> memo;
  DenseMap<std::pair<int, int64_t>, Value> threadCoordCache;
  DenseMap<int, Value> primaryCache;
  /// Inside a per-register copy of a tensor.generate body: lanes may
  /// diverge, so no barriers and no elected accesses.
  bool inLaneContext = false;
  bool stagingFailed = false;
};

/// Memory-ordering barriers for kernel-visible memory (Distributor.cpp,
/// beforeAccess): the accesses since the last barrier.
struct BarrierState {
  struct AccessKey {
    int layout = -1; ///< -1: unknown / uniform
    SmallVector<Value> offsets;
    bool write = false;
  };
  DenseSet<Value> writtenBases;
  DenseMap<Value, SmallVector<AccessKey>> accessesSinceBarrier;
};

/// wgmma groups left in flight (Wgmma.cpp).
struct WgmmaState {
  /// A pipelined dot (see DotLowering::wgmma): the accumulator registers
  /// of the newest group, the block its wait_group was emitted in, and
  /// whether any group may be pending at all.
  DenseSet<Value> wgmmaPendingRegs;
  Block *wgmmaPendingBlock = nullptr;
  bool wgmmaPipelined = false;
};

/// The data is private: the pass and the dot lowering reach it through the

} // namespace mlir::pallas::gpu

#endif // PALLASC_PASSES_CONVERSION_PALLASTOGPU_DISTRIBUTESTATE_H
