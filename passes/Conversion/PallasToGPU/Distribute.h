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
// The distributor is the driver and the emission core. It runs the
// analyses before anything is emitted (prepare: sinking of read-only loads,
// the scratch buffers kept in registers, the layout assignment in
// LayoutAssignment.h, the staging plans of dot operands in
// StagingPlanner.h), then emits the body op by op, dispatching
// each op to its family's emitter (EmitContext.h: EmitElementwise.cpp,
// EmitReduce.cpp, EmitControlFlow.cpp, EmitTensorOps.cpp, EmitMemory.cpp,
// EmitWindow.cpp, Dot.cpp and the dot lowering of DotEmitters.h). The
// emitters see it only as an EmitContext; it implements those services:
// Distributor.cpp (values in layouts, thread coordinates, conversions and
// barriers, the scratch buffers' registers), Memory.cpp (views, loads,
// stores, cp.async, the proven ranges of thread-coordinate arithmetic),
// Epilogue.cpp (dot results restaged through shared memory for 16-byte
// stores), Dot.cpp (the views of streamed operands, staged tiles),
// DotStaging.cpp (the prefetch of staged operands) and Wgmma.cpp (wgmma
// groups retired before their registers are read).
//
// Its data sits in base structs by concern (DistributeState.h), inherited
// privately: the pass reaches it through a few accessors, the emitters
// through EmitContext's.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_CONVERSION_PALLASTOGPU_DISTRIBUTE_H
#define PALLASC_PASSES_CONVERSION_PALLASTOGPU_DISTRIBUTE_H

#include "passes/Conversion/PallasToGPU/Emitters/EmitContext.h"
#include "passes/Conversion/PallasToGPU/Analysis/LayoutAssignment.h"
#include "passes/Conversion/PallasToGPU/Analysis/StagingPlanner.h"

namespace mlir::pallas::gpu {

/// The data is private: the pass reaches it through the accessors below,
/// the op families' emitters through EmitContext.
class Distributor final : public EmitContext,
                          private LayoutTable,
                          private LayoutAssignmentResult,
                          private PromotionState,
                          private StagingState,
                          private EmissionState,
                          private BarrierState,
                          private WgmmaState {
public:
  Distributor(KernelContext &kc, func::FuncOp kernel);

  //===--------------------------------------------------------------------===//
  // The pass' interface.
  //===--------------------------------------------------------------------===//

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
  /// A remark on each op of the kernel body per tensor result: the layout
  /// the analysis gave it (pallas-to-gpu's print-layouts, for tests).
  void printLayouts();

  //===--------------------------------------------------------------------===//
  // EmitContext: what the op families' emitters see (EmitContext.h).
  //===--------------------------------------------------------------------===//

  KernelContext &context() const override { return kc; }
  OpBuilder &builder() override { return b; }
  const LayoutAssignmentResult &analysis() const override { return *this; }
  EmissionState &emission() override { return *this; }
  PromotionState &promotion() override { return *this; }
  StagingState &staging() override { return *this; }
  WgmmaState &wgmmaGroups() override { return *this; }
  BarrierState &barriers() override { return *this; }

  int intern(const Layout &layout) override;
  const Layout &layout(int id) const override {
    return LayoutTable::layout(id);
  }
  int defaultLayout(RankedTensorType type) override;
  int layoutOrDefault(Value v) override;
  FailureOr<SmallVector<Value>> get(Value v, int id) override;
  FailureOr<SmallVector<Value>> materialize(Value v, int id) override;
  void setDist(Value v, Dist d) override;
  LogicalResult emitBlock(Block &block) override;

  Value idx(int64_t v) override;
  Value i32(int64_t v) override;
  Value threadCoord(int id, int64_t dim) override;
  SmallVector<Value> coords(int id, int64_t reg) override;
  Value primary(int id) override;
  bool isReplicated(int id) override;

  FailureOr<SmallVector<Value>> convert(const Dist &from, int to,
                                        Type elementType) override;
  View workspace(ArrayRef<int64_t> shape, Type type, int64_t byteOffset,
                 bool pad, int64_t &bytes) override;
  View sharedView(ArrayRef<int64_t> baseShape, Type type, int64_t absOffset,
                  bool pad, int64_t &bytes) override;
  void barrier() override;
  View tileView(RankedTensorType type, int id, int64_t absOffset,
                int64_t &bytes, bool pad = true) override;
  LogicalResult storeTile(const View &tile, int id, ArrayRef<Value> regs,
                          ArrayRef<int64_t> subset = {}) override;
  CoreTile coreTile(RankedTensorType type, int64_t cdim, int64_t absOffset,
                    int64_t &bytes) override;
  int coreLayout(int id, int64_t cdim) override;

  FailureOr<SmallVector<Value>> load(const View &view, int id,
                                     ArrayRef<int64_t> regSubset = {},
                                     StringRef evictionPolicy = {}) override;
  LogicalResult store(const View &view, int id, ArrayRef<Value> regs,
                      ArrayRef<Value> mask = {},
                      ArrayRef<int64_t> subset = {}) override;
  FailureOr<bool> storeEpilogue(const View &view, int id, ArrayRef<Value> regs,
                                Operation *at) override;
  int64_t asyncCopyWidth(const View &src, int srcId, const View &dst,
                         int dstId) override;
  LogicalResult copyAsync(const View &src, int srcId, const View &dst,
                          int dstId, int64_t width) override;
  int64_t groupWidth(const View &view, int id) override;
  View subview(const View &view, ArrayRef<OpFoldResult> offsets,
               ArrayRef<int64_t> offsetDivs, ArrayRef<int64_t> sizes,
               ArrayRef<int64_t> strides,
               const llvm::SmallBitVector &dropped) override;
  View subview(const View &view, memref::SubViewOp sv) override;
  SmallVector<Value> baseIndices(const View &view,
                                 ArrayRef<Value> coords) override;
  Value inBounds(const View &view, ArrayRef<Value> baseIdx) override;
  Value uninitialized(Type type) override;
  void beforeAccess(const View &view, int layout, bool write) override;
  void forgetAccesses() override;
  Value rootOfSnapshot(Value alloc) override;
  Promoted *promotedOf(Value memref) override;

  int dotLayout(Operation *op) override;
  const View *streamedSource(Value v, SmallVector<int64_t> &perm,
                             Value &x) override;
  int streamedLayouts(Value v, Value x, ArrayRef<int64_t> perm,
                      int &sourceId) override;
  LogicalResult prefetchSteps(int64_t stages,
                              function_ref<LogicalResult(Value)> issue,
                              function_ref<void()> after) override;
  LogicalResult loopStagesPrologue(Operation *forOp, Value lb, Value ub,
                                   Value step) override;
  LogicalResult loopStagesBody(Operation *forOp, Value lb, Value ub, Value step,
                               Value iv) override;

private:
  //===--------------------------------------------------------------------===//
  // The analyses, before emission (prepare()).
  //===--------------------------------------------------------------------===//

  bool isReadOnly(Value memref);
  /// Moves reads of read-only memory and pure ops down to their first use
  /// (within their block), so blocks are not held in registers across
  /// unrelated work.
  void sinkProducers(Block &block);
  bool isMovable(Operation *op);
  void findPromotable();

  /// The layout assignment (LayoutAssignment.h) over the distributor's
  /// layout table and result.
  LayoutAssignment layoutAssignment();

  /// The staging plans of dot operands (StagingPlanner.h) over the
  /// distributor's state; made at prepare().
  StagingPlanner stagingPlanner();

  //===--------------------------------------------------------------------===//
  // Emission internals.
  //===--------------------------------------------------------------------===//

  /// Dispatches `op` to its family's emitter (EmitterRegistry); ops without
  /// one are scalar code.
  LogicalResult emitOp(Operation *op);
  static const EmitterRegistry &emitters();

  int64_t divisibility(Value oldValue);
  /// The range [lo, hi] an emitted integer or index value is proven to lie
  /// in, from constants and the thread id's range through the arithmetic
  /// of thread coordinates (Memory.cpp); none when unknown.
  std::optional<std::pair<int64_t, int64_t>> rangeOf(Value newValue,
                                                     int depth = 0);
  /// `cmp` (just emitted) as an i1 constant when the ranges of its operands
  /// decide it, else `cmp` itself: masks proven true from iota ranges and
  /// shapes vanish.
  Value foldByRange(arith::CmpIOp cmp);

  /// Before a non-wgmma read of `regs`: `wgmma.wait_group 0` when they are
  /// the accumulators of a group still in flight (Wgmma.cpp).
  void retireWgmma(ArrayRef<Value> regs);
  /// The shared memory of dot operand stages dead at `at`, which an
  /// epilogue's buffer may overlay (Epilogue.cpp); `tma`: TMA stages.
  struct DeadRegion {
    int64_t offset = 0, bytes = 0;
    bool tma = false;
  };
  DeadRegion deadOperandStages(Operation *at);
  /// Whether the insertion point is at the last step of the sequential
  /// axis (under `pl.when(k == nk - 1)`).
  bool atLastSequentialStep();
  /// Before an epilogue buffer overlays TMA stages: waits for the wgmma
  /// groups that may still read them.
  void retireBeforeOverlay();
  /// The chunk loop of storeEpilogue: `regs` (layout `srcId`) through the
  /// buffer `buf`, read in `readId` and stored to `out`.
  LogicalResult storeEpilogueChunks(const View &buf, const View &out,
                                    int srcId, int readId,
                                    ArrayRef<Value> regs,
                                    ArrayRef<int64_t> chunkRegs);
  /// Stores a dot operand staged early (StagingState::EarlyTile) to its
  /// tile, where it is defined.
  LogicalResult stageEarly(Value def);
  /// Issues the copies of iteration `iv` (a value of the induction
  /// variable) into ring slot `slot` (index) and commits one group.
  LogicalResult issueLoopStage(Operation *forOp, const LoopStagePlan &plan,
                               Value iv, Value slot);
  /// The tile of `operand` in ring slot `slot` (index), set as its staged
  /// view / core tile.
  void bindLoopStage(const LoopStagePlan &plan, Value slot);
  /// Initializes the plans' mbarriers in the prologue.
  void initTmaBarriers();

  KernelContext &kc;
  func::FuncOp kernel;
  OpBuilder b;
};

/// A power-of-two divisor of an affine expression's value (0 for none
/// known beyond 1 is returned as 1).
int64_t affineDivisor(AffineExpr expr, ArrayRef<int64_t> dimDivisors);

} // namespace mlir::pallas::gpu

#endif // PALLASC_PASSES_CONVERSION_PALLASTOGPU_DISTRIBUTE_H
