//===- EmitContext.h - what the op families' emitters see -------*- C++ -*-===//
//
// The GPU lowering emits a kernel body op by op: the distributor (the
// driver, Distribute.h) dispatches each op to the emitter its family
// registered (EmitterRegistry, as Triton's populate...Patterns), and ops
// without one are scalar code, cloned as they are. The families are
// classes of their own (over EmitterBase; a family of one op may be a
// function), one file each:
//
//   EmitElementwise.cpp   linalg.generic without reductions
//   EmitReduce.cpp        linalg.reduce (registers, lanes, warps)
//   EmitControlFlow.cpp   scf.for / scf.if / scf.while
//   EmitTensorOps.cpp     transposes, reshapes, tensor.generate / extract /
//                         insert / extract_slice / insert_slice
//   EmitMemory.cpp        memref and bufferization ops: views, loads and
//                         stores of blocks and scalars, copies, atomics
//   Dot.cpp               linalg.matmul / batch_matmul (DotEmitters.h: one
//                         file per matrix instruction family)
//
// An emitter sees the distributor only through EmitContext: the emission
// services (values in layouts, thread coordinates, shared-memory
// conversions and tiles, memory accesses and their ordering barriers, the
// staged dot operands) and the state it reads or writes, by concern (the
// layout assignment's result read-only). It cannot reach the analysis, the
// planners or another family's code. A new op's GPU lowering is one emitter
// in its family's file and one line in its populate function.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_CONVERSION_PALLASTOGPU_EMITTERS_EMITCONTEXT_H
#define PALLASC_PASSES_CONVERSION_PALLASTOGPU_EMITTERS_EMITCONTEXT_H

#include "passes/Conversion/PallasToGPU/DistributeState.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/SmallBitVector.h"

namespace mlir::pallas::gpu {

/// The distributor as the op families' emitters see it (implemented by
/// Distributor).
class EmitContext {
public:
  virtual ~EmitContext();

  //===--------------------------------------------------------------------===//
  // The kernel, the builder emission goes through, the state by concern.
  //===--------------------------------------------------------------------===//

  virtual KernelContext &context() const = 0;
  virtual OpBuilder &builder() = 0;
  /// The layout of every value and what the analysis found (read-only).
  virtual const LayoutAssignmentResult &analysis() const = 0;
  /// The registers, scalars and views of the values emitted so far.
  virtual EmissionState &emission() = 0;
  /// The scratch buffers kept in registers and their current registers.
  virtual PromotionState &promotion() = 0;
  /// The staging plans of dot operands and the tiles bound so far.
  virtual StagingState &staging() = 0;
  /// The wgmma groups in flight.
  virtual WgmmaState &wgmmaGroups() = 0;
  /// The accesses since the last barrier.
  virtual BarrierState &barriers() = 0;

  //===--------------------------------------------------------------------===//
  // Layouts and values in layouts.
  //===--------------------------------------------------------------------===//

  /// The id of `layout` in the kernel's layout table (added if new).
  virtual int intern(const Layout &layout) = 0;
  virtual const Layout &layout(int id) const = 0;
  /// The blocked layout of a tensor of `type`.
  virtual int defaultLayout(RankedTensorType type) = 0;
  /// The layout `v` has (values the analysis left flexible: their default).
  virtual int layoutOrDefault(Value v) = 0;
  /// The registers of `v` (a tensor) in layout `id`: its own, a local
  /// selection of them, or a conversion through shared memory placed at its
  /// definition; flexible values are materialized where used.
  virtual FailureOr<SmallVector<Value>> get(Value v, int id) = 0;
  /// `v`, defined by a flexible op (a constant, a fill, an elementwise op, a
  /// relabeling), computed here in layout `id`.
  virtual FailureOr<SmallVector<Value>> materialize(Value v, int id) = 0;
  /// Binds `v` to registers in a layout, defined at the builder's insertion
  /// point (a dot operand staged early is stored to its tile there).
  virtual void setDist(Value v, Dist d) = 0;
  /// Emits the ops of `block` (but its terminator) in order.
  virtual LogicalResult emitBlock(Block &block) = 0;

  //===--------------------------------------------------------------------===//
  // Constants and thread coordinates.
  //===--------------------------------------------------------------------===//

  virtual Value idx(int64_t v) = 0;
  virtual Value i32(int64_t v) = 0;
  /// This thread's coordinate along `dim` in layout `id` (emitted once, in
  /// the prologue).
  virtual Value threadCoord(int id, int64_t dim) = 0;
  /// The coordinates of register `reg` of layout `id` in this thread.
  virtual SmallVector<Value> coords(int id, int64_t reg) = 0;
  /// i1: this thread is the first holder of its elements (replicated
  /// copies are not written twice); null when the layout is not replicated.
  virtual Value primary(int id) = 0;
  virtual bool isReplicated(int id) = 0;

  //===--------------------------------------------------------------------===//
  // Shared memory.
  //===--------------------------------------------------------------------===//

  /// `from` in layout `to`, through the workspace.
  virtual FailureOr<SmallVector<Value>> convert(const Dist &from, int to,
                                                Type elementType) = 0;
  /// A view of the workspace at `byteOffset` (relative to the workspace
  /// start) holding `shape` elements of `type` (rows padded when `pad`).
  virtual View workspace(ArrayRef<int64_t> shape, Type type, int64_t byteOffset,
                         bool pad, int64_t &bytes) = 0;
  /// A shared-memory view of `baseShape` at byte `absOffset` of dynamic
  /// shared memory (last dim padded by 16 bytes with `pad`).
  virtual View sharedView(ArrayRef<int64_t> baseShape, Type type,
                          int64_t absOffset, bool pad, int64_t &bytes) = 0;
  /// A block-wide barrier; the accesses before it are ordered.
  virtual void barrier() = 0;
  /// A dot operand in shared memory, stored along its contiguous
  /// dimension with padded rows.
  virtual View tileView(RankedTensorType type, int id, int64_t absOffset,
                        int64_t &bytes, bool pad = true) = 0;
  virtual LogicalResult storeTile(const View &tile, int id,
                                  ArrayRef<Value> regs,
                                  ArrayRef<int64_t> subset = {}) = 0;
  /// The core-matrix tile (StagingState::CoreTile) of `type`, contiguous
  /// along `cdim`, at byte `absOffset` of dynamic shared memory.
  virtual StagingState::CoreTile coreTile(RankedTensorType type, int64_t cdim,
                                          int64_t absOffset,
                                          int64_t &bytes) = 0;
  /// Layout `id` of a [R, C] value seen as its [O/8, Cc/8, 8, 8] core tile
  /// (the same registers).
  virtual int coreLayout(int id, int64_t cdim) = 0;

  //===--------------------------------------------------------------------===//
  // Memory: views, accesses and their ordering.
  //===--------------------------------------------------------------------===//

  /// Loads `view` in layout `id` (with `regSubset`, only those registers).
  /// `evictionPolicy` (a pallas.load's cache hint, "evict_first" or
  /// "evict_last") makes the NVIDIA targets' global loads hinted loads
  /// (Memory.cpp, NVGPUToNVVM.cpp).
  virtual FailureOr<SmallVector<Value>>
  load(const View &view, int id, ArrayRef<int64_t> regSubset = {},
       StringRef evictionPolicy = {}) = 0;
  /// Stores `regs` (all of the layout's registers; with `subset`, only
  /// those are stored and read).
  virtual LogicalResult store(const View &view, int id, ArrayRef<Value> regs,
                              ArrayRef<Value> mask = {},
                              ArrayRef<int64_t> subset = {}) = 0;
  /// Stores `regs` (a dot's accumulator layout `id`) to `view` (global
  /// memory) through shared memory in 16-byte stores (Epilogue.cpp); false
  /// (nothing emitted) when the layout or the view does not call for it.
  /// `at` is the kernel op storing.
  virtual FailureOr<bool> storeEpilogue(const View &view, int id,
                                        ArrayRef<Value> regs,
                                        Operation *at) = 0;
  /// Registers per `cp.async` copying `src` (global memory, layout `srcId`)
  /// into `dst` (shared memory, `dstId`: the same registers seen in dst's
  /// coordinates); 0 when cp.async cannot be used (no sm_80, bounds
  /// checks, widths other than 4/8/16 bytes).
  virtual int64_t asyncCopyWidth(const View &src, int srcId, const View &dst,
                                 int dstId) = 0;
  /// Issues those copies (nvgpu.device_async_copy); the caller commits and
  /// waits (nvvm.cp.async.commit.group / wait.group) and synchronizes.
  virtual LogicalResult copyAsync(const View &src, int srcId, const View &dst,
                                  int dstId, int64_t width) = 0;
  /// Registers per access group for `view` in layout `id`.
  virtual int64_t groupWidth(const View &view, int id) = 0;
  virtual View subview(const View &view, ArrayRef<OpFoldResult> offsets,
                       ArrayRef<int64_t> offsetDivs, ArrayRef<int64_t> sizes,
                       ArrayRef<int64_t> strides,
                       const llvm::SmallBitVector &dropped) = 0;
  /// The view `sv` takes of `view` (its source's view): offsets mapped to
  /// the distributed scalars, with their known divisibility.
  virtual View subview(const View &view, memref::SubViewOp sv) = 0;
  virtual SmallVector<Value> baseIndices(const View &view,
                                         ArrayRef<Value> coords) = 0;
  /// i1: `baseIdx` lies inside the view's base where it is checked; null
  /// when nothing is.
  virtual Value inBounds(const View &view, ArrayRef<Value> baseIdx) = 0;
  /// Interpret mode's value of memory nobody wrote, of `type`.
  virtual Value uninitialized(Type type) = 0;
  /// A barrier before this access when it may race with an earlier one.
  virtual void beforeAccess(const View &view, int layout, bool write) = 0;
  /// After control flow: every earlier access unknown.
  virtual void forgetAccesses() = 0;
  /// The memref a snapshot alloc is copied from.
  virtual Value rootOfSnapshot(Value alloc) = 0;
  /// The scratch buffer kept in registers that `memref` is, or null.
  virtual PromotionState::Promoted *promotedOf(Value memref) = 0;

  //===--------------------------------------------------------------------===//
  // Dots and the staging of their operands.
  //===--------------------------------------------------------------------===//

  /// The accumulator layout of a dot (DotLayout.cpp: its matrix
  /// instruction).
  virtual int dotLayout(Operation *op) = 0;
  /// The view a streamed dot operand `v` is read from: `x` is the loaded
  /// tensor (v itself, or the input of the transpose `v` is, whose
  /// permutation goes to `perm`); null when it is not a view's load.
  virtual const View *streamedSource(Value v, SmallVector<int64_t> &perm,
                                     Value &x) = 0;
  /// The layouts such an operand is copied with: the loaded tensor's
  /// default layout (`sourceId`) and that layout seen through the
  /// transpose, in `v`'s shape (returned).
  virtual int streamedLayouts(Value v, Value x, ArrayRef<int64_t> perm,
                              int &sourceId) = 0;
  /// The prefetch schedule of staged operands (DotStaging.cpp): at the
  /// first step of the sequential loop, `issue` steps 0 .. stages-1, at
  /// every later step s the step s+stages-1, each only when below the trip
  /// count; `after` runs after each (issued or not).
  virtual LogicalResult prefetchSteps(int64_t stages,
                                      function_ref<LogicalResult(Value)> issue,
                                      function_ref<void()> after) = 0;
  /// Around an scf.for whose dot operands are prefetched into a ring
  /// (StagingPlanner.h, LoopStagePlan): before the new loop (its first
  /// iterations' copies), and at the start of its body `iv`.
  virtual LogicalResult loopStagesPrologue(Operation *forOp, Value lb, Value ub,
                                           Value step) = 0;
  virtual LogicalResult loopStagesBody(Operation *forOp, Value lb, Value ub,
                                       Value step, Value iv) = 0;
};

/// What an op family's emitter class holds: the context and, cached, the
/// state it reads or writes by concern (`class ReduceEmitter : EmitterBase
/// { public: using EmitterBase::EmitterBase; ... }`).
class EmitterBase {
public:
  explicit EmitterBase(EmitContext &cx)
      : cx(cx), analysis(cx.analysis()), emission(cx.emission()),
        promotion(cx.promotion()), barriers(cx.barriers()), kc(cx.context()),
        b(cx.builder()) {}

protected:
  EmitContext &cx;
  const LayoutAssignmentResult &analysis;
  EmissionState &emission;
  PromotionState &promotion;
  BarrierState &barriers;
  KernelContext &kc;
  OpBuilder &b;
};

/// A dot operand streamed from a view (EmitContext::streamedSource) and the
/// layouts it is copied with (EmitContext::streamedLayouts).
struct StreamedLoad {
  /// The view `v` is loaded from; null when it is not a view's load.
  const View *source = nullptr;
  /// The loaded tensor and the transpose `v` is of it (empty: `v` itself).
  Value x;
  SmallVector<int64_t> perm;
  /// x's default layout, and that layout seen in `v`'s shape (when source).
  int sourceId = -1, id = -1;
};
inline StreamedLoad streamedLoad(EmitContext &cx, Value v) {
  StreamedLoad s;
  s.source = cx.streamedSource(v, s.perm, s.x);
  if (s.source)
    s.id = cx.streamedLayouts(v, s.x, s.perm, s.sourceId);
  return s;
}

/// The emitters of the op families, by op (or, for whole dialects, by
/// dialect): each family's file registers its ops with a populate function,
/// and the distributor dispatches each op of the kernel body to its emitter.
class EmitterRegistry {
public:
  using Emitter = LogicalResult (*)(EmitContext &, Operation *);
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

/// An Emitter that lowers an op with a member of a family's emitter class,
/// constructed from the context for the op: `r.add<scf::ForOp>(
/// emitWith<ControlFlowEmitter, &ControlFlowEmitter::emitFor>)`.
template <typename Family, LogicalResult (Family::*Method)(Operation *)>
LogicalResult emitWith(EmitContext &cx, Operation *op) {
  Family family(cx);
  return (family.*Method)(op);
}

/// The cache hint pallas-to-linalg left on a load (`pallas.eviction_policy`,
/// EmitContext::load), or empty.
inline StringRef evictionPolicy(Operation *load) {
  auto a = load->getAttrOfType<StringAttr>("pallas.eviction_policy");
  return a ? a.getValue() : StringRef();
}

/// Loads `view` in layout `id` (after the barrier the access may need) as
/// the registers of `result`.
inline LogicalResult loadAs(EmitContext &cx, Value result, const View &view,
                            int id, StringRef evictionPolicy = {}) {
  cx.beforeAccess(view, id, /*write=*/false);
  auto regs = cx.load(view, id, {}, evictionPolicy);
  if (failed(regs))
    return failure();
  cx.setDist(result, Dist{id, *regs});
  return success();
}

void populateMemoryEmitters(EmitterRegistry &r);      // EmitMemory.cpp
void populateElementwiseEmitters(EmitterRegistry &r); // EmitElementwise.cpp
void populateReduceEmitters(EmitterRegistry &r);      // EmitReduce.cpp
void populateDotEmitters(EmitterRegistry &r);         // Dot.cpp
void populateControlFlowEmitters(EmitterRegistry &r); // EmitControlFlow.cpp
void populateTensorEmitters(EmitterRegistry &r);      // EmitTensorOps.cpp

/// A window reaching past a ref's end (EmitWindow.cpp): the lane-by-lane
/// load (`tensor.generate`) or store (loop nest) of pallas-to-linalg's slow
/// path as one distributed access with vector groups and a checked tail.
/// False, with nothing emitted, when `op` is not one.
FailureOr<bool> emitWindowLoad(EmitContext &cx, tensor::GenerateOp op);
FailureOr<bool> emitWindowStore(EmitContext &cx, scf::ForOp op);

} // namespace mlir::pallas::gpu

#endif // PALLASC_PASSES_CONVERSION_PALLASTOGPU_EMITTERS_EMITCONTEXT_H
