//===- Distribute.h - block programs over a thread block --------*- C++ -*-===//
//
// The distributor turns the body of a lowered kernel (a func.func over
// memrefs holding tensor-level linalg/tensor/scf code, as pallas-to-linalg
// leaves it) into SIMT code inside a gpu.func: every tensor value gets a
// layout (Layout.h) and becomes the list of scalars each thread holds;
// scalars stay uniform across the block (all control flow is uniform).
//
// Memory goes through Views: a memref (a kernel parameter or a slice of
// dynamic shared memory) plus per-dimension start offsets and the bounds
// checks interpret mode implies at array edges.
//
// Implemented by concern: Distributor.cpp (the core: values in layouts,
// conversions, barriers, the emission driver and the dispatch of each op to
// its family's emitter, EmitterRegistry), LayoutAssignment.cpp (the layout
// of every value, before emission), EmitElementwise.cpp, EmitReduce.cpp,
// EmitControlFlow.cpp, EmitTensorOps.cpp, Memory.cpp (views, loads, stores,
// atomics, cp.async), Epilogue.cpp (dot results restaged through shared
// memory for 16-byte stores), DotLayout.cpp (the matrix instruction of a dot),
// the dot lowering behind one interface (DotEmitters.h: Dot.cpp, the shared
// prologue and dispatch; one file per instruction family: MmaSync.cpp
// (mma.sync, tf32), Wgmma.cpp (sm_90a), Mfma.cpp, Wmma.cpp, Simt.cpp) and
// DotStaging.cpp (operand staging, TMA and cp.async prefetch plans).
//
// The distributor's data sits in base structs by concern (LayoutTable, the
// LayoutAssignmentResult, PromotionState, StagingState, EmissionState,
// BarrierState, WgmmaState), inherited privately: the pass reaches it
// through a few accessors, the dot lowering holds the parts it uses by
// reference (DotEmitters.h).
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_CONVERSION_PALLASTOGPU_DISTRIBUTE_H
#define PALLASC_PASSES_CONVERSION_PALLASTOGPU_DISTRIBUTE_H

#include "passes/Conversion/PallasToGPU/Layout.h"
#include "passes/Conversion/PallasToGPU/PallasToGPU.h"
#include "target/GpuTarget.h"

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

  Type elementType() const { return baseType.getElementType(); }
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
  Value smemBase;            ///< memref<?xi8, workgroup> (dynamic)
  int64_t workspaceOffset = 0;
  int64_t workspaceBytes = 0; ///< grows as the distributor needs
  /// The chip: its entry of the GPU target table (target/GpuTarget.h).
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

class Distributor;
namespace detail {
class DotLowering;
} // namespace detail

/// The emitters of the op families, by op (or, for whole dialects, by
/// dialect): each family's file registers its ops with a populate function
/// (as Triton's populate...Patterns), and the distributor dispatches each op
/// of the kernel body to its emitter; ops without one are scalar code,
/// cloned as they are. A new op's GPU lowering is one emitter in its
/// family's file and one line in its populate function.
class EmitterRegistry {
public:
  using Emitter = LogicalResult (Distributor::*)(Operation *);
  template <typename... Ops> void add(Emitter e) {
    (byOp.insert({TypeID::get<Ops>(), e}), ...);
  }
  template <typename... Dialects> void addDialect(Emitter e) {
    (byDialect.insert({TypeID::get<Dialects>(), e}), ...);
  }
  /// The emitter of `op`, or null.
  Emitter lookup(Operation *op) const;

private:
  DenseMap<TypeID, Emitter> byOp, byDialect;
};

void populateMemoryEmitters(EmitterRegistry &r);      // Memory.cpp
void populateElementwiseEmitters(EmitterRegistry &r); // EmitElementwise.cpp
void populateReduceEmitters(EmitterRegistry &r);      // EmitReduce.cpp
void populateDotEmitters(EmitterRegistry &r);         // Dot.cpp
void populateControlFlowEmitters(EmitterRegistry &r); // EmitControlFlow.cpp
void populateTensorEmitters(EmitterRegistry &r);      // EmitTensorOps.cpp

/// The distributor's data, by concern: base structs Distributor inherits
/// (their names are the distributor's own).

/// The layouts of a kernel, interned (Distributor::intern): a layout id
/// indexes `layouts`.
struct LayoutTable {
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

/// The layout assignment's result (LayoutAssignment.cpp, at prepare; read
/// by the emitters): the layout of every tensor value and what the analysis
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
/// (DotStaging.cpp: early tiles, TMA, cp.async stages, loop rings) and the
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
  /// wgmma operands a TMA copies (128-byte swizzled panels, see DotStaging.cpp),
  /// prefetched `stages` steps ahead along the sequential grid axis, one
  /// mbarrier per (stage, 64-wide k chunk).
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
  /// DotStaging.cpp). The loop -> its plan.
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

/// Memory-ordering barriers for kernel-visible memory (Memory.cpp): the
/// accesses since the last barrier.
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
/// accessors below.
class Distributor : private LayoutTable,
                    private LayoutAssignmentResult,
                    private PromotionState,
                    private StagingState,
                    private EmissionState,
                    private BarrierState,
                    private WgmmaState {
public:
  Distributor(KernelContext &kc, func::FuncOp kernel);

  /// Argument bindings of the kernel function: scalars (program ids, grid
  /// sizes) and memrefs (views).
  void bindScalar(Value old, Value value) { scalars.map(old, value); }
  void bindView(Value old, View view) { views[old] = std::move(view); }

  /// Analyzes layouts and emits the body at `builder`'s insertion point.
  LogicalResult run(OpBuilder &builder);

  /// run() in two steps, for a caller that wraps the body in loops carrying
  /// the scratch buffers kept in registers: prepare() analyzes; then
  /// initialPromotedState() (emitted at `builder`), setPromotedState() with
  /// the loop-carried values, emit(), and promotedState() to yield.
  LogicalResult prepare();
  LogicalResult emit(OpBuilder &builder);
  SmallVector<Value> initialPromotedState(OpBuilder &builder);
  void setPromotedState(ValueRange state);
  SmallVector<Value> promotedState();
  SmallVector<Type> promotedStateTypes();
  /// Marks a kernel argument as a scratch buffer (candidate for living in
  /// registers).
  void markScratch(Value arg) { scratchArgs.push_back(arg); }

  /// Shapes or element types the lowering rejects, checked before anything
  /// is emitted.
  LogicalResult checkSupported();

  /// compiler_params.gpu.num_stages (0: absent), set before prepare().
  void setNumStages(int64_t n) { numStages = n; }
  /// Marks a kernel memref argument as memory the kernel may write (an
  /// input aliased to an output).
  void markWritable(Value arg) { writableArgs.insert(arg); }
  /// The shared memory of the scratch buffers not kept in registers (after
  /// prepare()).
  int64_t scratchBytes() const { return scratchSharedBytes; }
  /// Whether a dot left wgmma groups in flight across the steps of the
  /// sequential axis (after emit()): the end of its loop waits for them.
  bool pipelinesWgmma() const { return wgmmaPipelined; }

  /// The parts of the state the dot lowering (DotEmitters.h) reads or
  /// writes, each by concern.
  const LayoutAssignmentResult &analysis() const { return *this; }
  const EmissionState &emission() const { return *this; }
  StagingState &staging() { return *this; }
  WgmmaState &wgmmaGroups() { return *this; }

  //===--------------------------------------------------------------------===//
  // Internals, shared by the implementation files.
  //===--------------------------------------------------------------------===//

  /// The kernel context and the builder emission goes through.
  KernelContext &context() const { return kc; }
  OpBuilder &builder() { return b; }

  // Layouts (LayoutTable).
  int intern(const Layout &layout);
  const Layout &layout(int id) const { return layouts[id]; }
  int defaultLayout(RankedTensorType type);

  // Analysis (its result: LayoutAssignmentResult, PromotionState).
  /// The view a streamed dot operand `v` is read from: `x` is the loaded
  /// tensor (v itself, or the input of the transpose `v` is, whose
  /// permutation goes to `perm`); null when it is not a view's load.
  const View *streamedSource(Value v, SmallVector<int64_t> &perm, Value &x);
  /// The layouts such an operand is copied with: the loaded tensor's
  /// default layout (`sourceId`) and that layout seen through the
  /// transpose, in `v`'s shape (returned).
  int streamedLayouts(Value v, Value x, ArrayRef<int64_t> perm,
                      int &sourceId);
  bool isReadOnly(Value memref);

  void findPromotable();
  Promoted *promotedOf(Value memref);
  /// Moves reads of read-only memory and pure ops down to their first use
  /// (within their block), so blocks are not held in registers across
  /// unrelated work.
  void sinkProducers(Block &block);
  bool isMovable(Operation *op);
  /// Registers per access group for `view` in layout `id`.
  int64_t groupWidth(const View &view, int id);
  LogicalResult analyze();
  /// A remark on each op of the kernel body per tensor result: the layout
  /// the analysis gave it (pallas-to-gpu's print-layouts, for tests).
  void printLayouts();
  bool analyzeBlock(Block &block);
  bool assign(Value v, int id);
  int chooseElementwise(Operation *op);
  int demandedLayout(OpOperand &use);
  bool isScratch(Value memref);

  // Emission (its state: EmissionState).
  LogicalResult emitBlock(Block &block);
  /// Dispatches `op` to its family's emitter (EmitterRegistry).
  LogicalResult emitOp(Operation *op);
  static const EmitterRegistry &emitters();
  /// Scalar code: cloned with the scalar mapping (tensors: an error).
  LogicalResult emitScalarOp(Operation *op);
  LogicalResult emitNothing(Operation *op);
  LogicalResult emitConstant(Operation *op);
  LogicalResult emitPrintf(Operation *op);
  LogicalResult emitCall(Operation *op);
  void setDist(Value v, Dist d);
  /// `v` (a tensor) in layout `id`.
  FailureOr<SmallVector<Value>> get(Value v, int id);
  FailureOr<SmallVector<Value>> materialize(Value v, int id);
  /// The layout `v` has (flexible values: `fallback`).
  int layoutOrDefault(Value v);

  // Coordinates.
  Value idx(int64_t v);
  Value i32(int64_t v);
  Value threadCoord(int id, int64_t dim);
  SmallVector<Value> coords(int id, int64_t reg);
  /// i1: this thread is the first holder of its elements (replicated
  /// copies are not written twice); null when the layout is not replicated.
  Value primary(int id);
  bool isReplicated(int id);

  // Conversions through shared memory.
  FailureOr<SmallVector<Value>> convert(const Dist &from, int to,
                                        Type elementType);
  /// A view of the workspace at `byteOffset` (relative to the workspace
  /// start) holding `shape` elements of `type` (rows padded when `pad`).
  View workspace(ArrayRef<int64_t> shape, Type type, int64_t byteOffset,
                 bool pad, int64_t &bytes);
  void barrier();

  // Memory (Memory.cpp).
  FailureOr<SmallVector<Value>> load(const View &view, int id,
                                     ArrayRef<int64_t> regSubset = {});
  /// Stores `regs` (all of the layout's registers; with `subset`, only
  /// those are stored and read).
  LogicalResult store(const View &view, int id, ArrayRef<Value> regs,
                      ArrayRef<Value> mask = {},
                      ArrayRef<int64_t> subset = {});
  /// Registers per `cp.async` copying `src` (global memory, layout `srcId`)
  /// into `dst` (shared memory, `dstId`: the same registers seen in dst's
  /// coordinates); 0 when cp.async cannot be used (no sm_80, bounds
  /// checks, widths other than 4/8/16 bytes).
  int64_t asyncCopyWidth(const View &src, int srcId, const View &dst,
                         int dstId);
  /// Issues those copies (nvgpu.device_async_copy); the caller commits and
  /// waits (nvvm.cp.async.commit.group / wait.group) and synchronizes.
  LogicalResult copyAsync(const View &src, int srcId, const View &dst,
                          int dstId, int64_t width);
  /// Stores `regs` (a dot's accumulator layout `id`) to `view` (global
  /// memory) through shared memory in 16-byte stores (Epilogue.cpp); false
  /// (nothing emitted) when the layout or the view does not call for it.
  /// `at` is the kernel op storing.
  FailureOr<bool> storeEpilogue(const View &view, int id,
                                ArrayRef<Value> regs, Operation *at);
  View subview(const View &view, ArrayRef<OpFoldResult> offsets,
               ArrayRef<int64_t> offsetDivs, ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides,
               const llvm::SmallBitVector &dropped);
  /// The view `sv` takes of `view` (its source's view): offsets mapped to
  /// the distributed scalars, with their known divisibility.
  View subview(const View &view, memref::SubViewOp sv);
  SmallVector<Value> baseIndices(const View &view, ArrayRef<Value> coords);
  Value inBounds(const View &view, ArrayRef<Value> baseIdx);
  Value uninitialized(Type type);
  int64_t divisibility(Value oldValue);
  LogicalResult emitMemrefOp(Operation *op);

  // Memory-ordering barriers for kernel-visible memory (BarrierState).
  void beforeAccess(const View &view, int layout, bool write);
  /// The kernel argument (or other root) a memref value is a view of.
  Value rootMemref(Value memref);
  /// The memref a snapshot alloc is copied from.
  Value rootOfSnapshot(Value alloc);
  void forgetAccesses(); ///< after control flow: everything unknown

  // Op families (Emit*.cpp).
  LogicalResult emitElementwise(Operation *op);
  LogicalResult emitReduce(Operation *op);
  LogicalResult emitFor(Operation *op);
  LogicalResult emitIf(Operation *op);
  bool isSelectable(scf::IfOp ifOp);
  LogicalResult emitWhile(Operation *op);
  LogicalResult emitGenerate(Operation *op);
  LogicalResult emitExtract(Operation *op);
  LogicalResult emitInsert(Operation *op);
  LogicalResult emitExtractSlice(Operation *op);
  LogicalResult emitInsertSlice(Operation *op);
  /// transpose / collapse_shape / expand_shape: the same registers under
  /// the relabeled layout the analysis chose.
  LogicalResult emitRelabel(Operation *op);
  SmallVector<Value> combine(Block &body, ArrayRef<Value> in,
                             ArrayRef<Value> acc);
  Value shuffleXor(Value v, int64_t mask);

  // Dot (DotLayout.cpp, Dot.cpp and DotEmitters.h, Wgmma.cpp,
  // DotStaging.cpp; the staging plans: StagingState).
  int dotLayout(Operation *op);
  LogicalResult emitDot(Operation *op);
  /// A dot operand in shared memory, stored along its contiguous
  /// dimension with padded rows.
  View tileView(RankedTensorType type, int id, int64_t absOffset,
                int64_t &bytes, bool pad = true);
  LogicalResult storeTile(const View &tile, int id, ArrayRef<Value> regs,
                          ArrayRef<int64_t> subset = {});
  /// The core-matrix tile (CoreTile) of `type`, contiguous along `cdim`, at
  /// byte `absOffset` of dynamic shared memory.
  CoreTile coreTile(RankedTensorType type, int64_t cdim, int64_t absOffset,
                    int64_t &bytes);
  /// Layout `id` of a [R, C] value seen as its [O/8, Cc/8, 8, 8] core tile
  /// (the same registers).
  int coreLayout(int id, int64_t cdim);
  /// Before a non-wgmma read of `regs`: `wgmma.wait_group 0` when they are
  /// the accumulators of a group still in flight.
  void retireWgmma(ArrayRef<Value> regs);
  void planEarlyStaging();
  LogicalResult stageEarly(Value def);
  /// Plans the TMA copies of wgmma operands (TmaPlan, at prepare).
  void planTma();
  /// Plans the cp.async stages of mma.sync operands (StagePlan, at prepare).
  void planStages();
  /// The prefetch schedule of both: at the first step of the sequential
  /// loop, `issue` steps 0 .. stages-1, at every later step s the step
  /// s+stages-1, each only when below the trip count (one issue site, in a
  /// loop); `after` runs after each (issued or not).
  LogicalResult prefetchSteps(int64_t stages,
                              function_ref<LogicalResult(Value)> issue,
                              function_ref<void()> after);
  /// Plans the rings (at prepare, after planStages).
  void planLoopStages();
  /// Emitted before the loop `forOp` (prologue: iterations 0 ..
  /// stages-2) and at the start of its new body `iv` (wait, barrier, the
  /// issue of iteration iv + stages-1, this iteration's tiles).
  LogicalResult loopStagesPrologue(Operation *forOp, Value lb, Value ub,
                                   Value step);
  LogicalResult loopStagesBody(Operation *forOp, Value lb, Value ub,
                               Value step, Value iv);
  /// Issues the copies of iteration `iv` (a value of the induction
  /// variable) into ring slot `slot` (index) and commits one group.
  LogicalResult issueLoopStage(Operation *forOp, const LoopStagePlan &plan,
                               Value iv, Value slot);
  /// The tile of `operand` in ring slot `slot` (index), set as its staged
  /// view / core tile.
  void bindLoopStage(const LoopStagePlan &plan, Value slot);
  /// Initializes the plans' mbarriers in the prologue.
  void initTmaBarriers();
  /// A shared-memory view of `baseShape` at byte `absOffset` of dynamic
  /// shared memory (last dim padded by 16 bytes with `pad`).
  View sharedView(ArrayRef<int64_t> baseShape, Type type, int64_t absOffset,
                  bool pad, int64_t &bytes);

private:
  KernelContext &kc;
  func::FuncOp kernel;
  OpBuilder b;
};

/// A power-of-two divisor of an affine expression's value (0 for none
/// known beyond 1 is returned as 1).
int64_t affineDivisor(AffineExpr expr, ArrayRef<int64_t> dimDivisors);

} // namespace mlir::pallas::gpu

#endif // PALLASC_PASSES_CONVERSION_PALLASTOGPU_DISTRIBUTE_H
