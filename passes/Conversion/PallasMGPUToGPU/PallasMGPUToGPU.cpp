//===- PallasMGPUToGPU.cpp - pallas_mgpu to gpu/nvvm (sm_90a) ---*- C++ -*-===//
//
// pallas-mgpu-to-gpu (PallasMGPUToGPU.td): a Mosaic GPU kernel to one
// gpu.func of NVVM ops for cuda:sm_90a, per warpgroup as Mosaic GPU's
// warpgroup semantics run it. The machine-level recipes are those of the
// pallas_call lowering's TMA and wgmma path (PallasToGPU/Dot/Wgmma.cpp):
// 128-byte-swizzled panels of 64 two-byte columns, one mbarrier per copy
// group, matrix descriptors with a 1024-byte stride, wgmma as inline PTX.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/Passes.h"

#include "chips/GpuTarget.h"
#include "dialects/Pallas/IR/GpuLaunchAttrs.h"
#include "dialects/Pallas/IR/PallasOps.h"
#include "dialects/PallasMGPU/IR/MgpuDialect.h"

#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallBitVector.h"

namespace mlir::pallas {
#define GEN_PASS_DEF_PALLASMGPUTOGPU
#include "passes/Conversion/Passes.h.inc"
} // namespace mlir::pallas

using namespace mlir;
using namespace mlir::pallas_mgpu;

namespace {

constexpr int64_t kWarpgroup = 128;
constexpr int64_t kSwizzleBytes = 128;
constexpr int64_t kSwizzlePeriod = 1024;
/// The most blocks a cluster has without a driver opt-in (CUDA's
/// portable cluster size).
constexpr int64_t kMaxClusterBlocks = 8;

int64_t alignTo(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

/// A shared-memory buffer (`alloc_smem`): its byte offset in the aligned
/// dynamic shared memory and its physical layout. The trailing two
/// dimensions [R, C] are stored as C / T panels of R rows of 128 bytes
/// (T = 128 / element bytes), the rows swizzled in groups of 8 (1024
/// bytes); leading dimensions are outermost.
struct SmemBuffer {
  int64_t offset = 0;
  SmallVector<int64_t> shape;
  Type elementType;
  int64_t elemBytes = 2;
  int64_t rows() const { return shape[shape.size() - 2]; }
  int64_t cols() const { return shape.back(); }
  int64_t panelCols() const { return kSwizzleBytes / elemBytes; }
  int64_t matrixBytes() const { return rows() * cols() * elemBytes; }
};

/// A 2-D view of a shared-memory buffer: the address of its origin (a row
/// that is a multiple of 8, the first column of a panel) and its shape in
/// the buffer (`rows` x `cols`); `transposed` when the operand is that
/// tile's transpose (a memref.transpose, as `k_smem.T`).
struct SmemView {
  const SmemBuffer *buffer = nullptr;
  Value base; ///< i32 byte address of the view's [0, 0] panel row
  int64_t rows = 0, cols = 0;
  bool transposed = false;
};

/// A view of a kernel argument in global memory: the argument, the offsets
/// of the view (index values) and its shape (all of the argument's
/// dimensions; size 1 where a dimension was dropped). The view's rows are
/// dimension `rowDim`, its columns the last.
struct GmemView {
  int64_t arg = -1;
  SmallVector<Value> offsets;
  SmallVector<int64_t> sizes;
  int64_t rowDim = 0;
};

/// A register value in the wgmma accumulator layout of an MxN tile: per
/// 64-row block and 8-column group, the 4 elements of thread (w, l): rows
/// 16w + l/4 (+8), columns 8j + 2(l%4) (+1), in that order. With `rows`,
/// a vector of M (the layout with its columns reduced,
/// `#pallas_mgpu.layout<"wgmma", reduced = [1]>`): per 64-row block the
/// thread's two rows 16w + l/4 (+8); the 4 lanes of a quad hold the same.
struct Fragment {
  int64_t m = 0, n = 0;
  bool rows = false;
  SmallVector<Value> regs; ///< [m/64][n/8][4], or [m/64][2] with `rows`
  Value at(int64_t mi, int64_t j, int64_t e) const {
    return regs[(mi * (n / 8) + j) * 4 + e];
  }
  bool sameLayout(const Fragment &o) const {
    return m == o.m && n == o.n && rows == o.rows;
  }
};

struct TensorMapKey {
  int64_t arg;
  SmallVector<int64_t, 2> box;
  bool operator==(const TensorMapKey &o) const {
    return arg == o.arg && box == o.box;
  }
};

class KernelLowering {
public:
  KernelLowering(KernelOp kernel, ModuleOp module)
      : kernel(kernel), module(module), ctx(kernel.getContext()), b(ctx),
        loc(kernel.getLoc()) {}

  LogicalResult run();

private:
  KernelOp kernel;
  ModuleOp module;
  MLIRContext *ctx;
  OpBuilder b;
  Location loc;

  mlir::gpu::GPUModuleOp gpuModule;
  mlir::gpu::GPUFuncOp func;
  int64_t numArgs = 0;
  Value tid, smemAddr, wgIndex, wgTid;
  DenseMap<Value, SmemBuffer> buffers;
  /// Barrier arrays: their byte offset and the thread's phase bits.
  struct Barriers {
    int64_t offset = 0, count = 0, arrivals = 0;
    /// A cluster barrier (collective_axes): the cluster dimension (x, y, z)
    /// whose blocks each arrive on every block's barrier, and its size;
    /// -1 and 1 for a block's own barrier.
    int64_t clusterDim = -1, clusterSize = 1;
    Value phases; ///< memref<i32> (private)
  };
  /// Whether some barrier is arrived on from other blocks of the cluster:
  /// the cluster then synchronizes after the barriers' initialization and
  /// before any block exits (barrier.cluster.arrive / wait).
  bool clusterBarriers = false;
  /// barrier.cluster.arrive.aligned + barrier.cluster.wait.aligned.
  void clusterSync() {
    NVVM::ClusterArriveOp::create(b, loc, b.getUnitAttr());
    NVVM::ClusterWaitOp::create(b, loc, b.getUnitAttr());
  }
  DenseMap<Value, Barriers> barriers;
  SmallVector<std::pair<TensorMapKey, Value>> tensorMaps;
  /// Each tensor map's box in all its array's dimensions (1 in those the
  /// copies' views drop).
  DenseMap<Value, SmallVector<int64_t>> mapBoxes;
  DenseMap<Value, Value> accumulators; ///< acc ref -> memref<Kxf32>
  DenseMap<Value, Fragment> fragments;
  /// Tensors that are one value splat (`arith.constant dense<x>`): the
  /// scalar, until a layout_cast or an element-wise use gives a layout.
  DenseMap<Value, Value> splats;
  /// pallas.iota results (their dimension), until a layout_cast.
  DenseMap<Value, int64_t> iotas;
  /// Stand-ins for an old loop's register arguments and results (lowerFor),
  /// erased with the rewritten ops.
  SmallVector<Operation *> placeholders;
  int64_t sharedBytes = 0;

  int64_t numInputs() {
    return numArgs - static_cast<int64_t>(kernel.getNumOutputs());
  }
  Value i32(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  }
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value toI32(Value v) {
    if (v.getType().isIndex())
      return arith::IndexCastOp::create(b, loc, b.getI32Type(), v);
    return v;
  }
  Value sharedPtr(Value addr) {
    return LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(ctx, 3), addr);
  }
  Value clusterPtr(Value addr) {
    return LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(ctx, 7), addr);
  }
  /// bar.sync on the warpgroup's own named barrier (1 + its index).
  void warpgroupBarrier() {
    Value id = arith::AddIOp::create(b, loc, wgIndex, i32(1));
    NVVM::BarrierOp::create(b, loc, Type(), id, i32(kWarpgroup), nullptr,
                            Value());
  }
  /// The cluster's shape in blocks along x, y and z.
  SmallVector<int32_t> clusterShape() {
    SmallVector<int32_t> c(3, 1);
    for (auto [i, n] : llvm::enumerate(kernel.getCluster()))
      c[i] = static_cast<int32_t>(n);
    return c;
  }
  /// The cluster dimension (0 to 2) of a copy's TMA multicast
  /// (collective_axes naming a cluster axis of more than one block) and
  /// its size; {-1, 1} for a plain copy. Over several such axes: a located
  /// error.
  FailureOr<std::pair<int64_t, int64_t>> multicastDim(CopyGmemToSmemOp op) {
    std::pair<int64_t, int64_t> r = {-1, 1};
    ArrayAttr axes = op.getCollectiveAxesAttr();
    if (!axes)
      return r;
    SmallVector<int32_t> shape = clusterShape();
    for (auto [d, n] : llvm::enumerate(kernel.getClusterNames())) {
      if (d >= 3 || shape[d] == 1 || !llvm::is_contained(axes, n))
        continue;
      if (r.first >= 0)
        return op.emitError()
               << "a TMA multicast over several cluster axes of more than "
                  "one block is not lowered; multicast over one";
      r = {static_cast<int64_t>(d), shape[d]};
    }
    return r;
  }
  /// The i32 of the NVVM special register `X`, `Y` or `Z` for dimension
  /// `d` (x, y, z).
  template <typename X, typename Y, typename Z> Value ofDim(int64_t d) {
    Type t = b.getI32Type();
    if (d == 0)
      return X::create(b, loc, t);
    if (d == 1)
      return Y::create(b, loc, t);
    return Z::create(b, loc, t);
  }
  /// %cluster_ctaid along dimension `d` (x, y, z).
  Value clusterCoord(int64_t d) {
    return ofDim<NVVM::BlockInClusterIdXOp, NVVM::BlockInClusterIdYOp,
                 NVVM::BlockInClusterIdZOp>(d);
  }
  /// The rank in the cluster (x fastest) of the block at this block's
  /// cluster coordinates with dimension `dim`'s replaced by `j`.
  Value clusterRank(int64_t dim, Value j) {
    SmallVector<int32_t> shape = clusterShape();
    Value rank = i32(0);
    int64_t stride = 1;
    for (int64_t d = 0; d < 3; ++d) {
      if (shape[d] > 1) {
        Value c = d == dim ? j : clusterCoord(d);
        rank = arith::AddIOp::create(
            b, loc, rank, arith::MulIOp::create(b, loc, c, i32(stride)));
      }
      stride *= shape[d];
    }
    return rank;
  }
  /// scf.if on thread 0 of the warpgroup.
  template <typename F> void onLeader(F body) {
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        wgTid, i32(0));
    auto ifOp = scf::IfOp::create(b, loc, first, false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    body();
  }

  LogicalResult checkKernel();
  LogicalResult createFunction();
  LogicalResult allocate();
  FailureOr<SmemView> smemView(Value v, Operation *user);
  FailureOr<GmemView> gmemView(Value v, Operation *user);
  /// The two sides of a TMA copy `op` (either direction): a shared-memory
  /// tile, not transposed, of at most 256 rows (a box) and an array view.
  LogicalResult tmaViews(Operation *op, Value smem, Value gmem,
                         FailureOr<SmemView> &smemSide,
                         FailureOr<GmemView> &gmemSide);
  Value barrierPtr(Value barriers, Value index);
  LogicalResult lower(Operation *op);
  /// The tensor-map parameter of argument `arg` in boxes of `boxRows` x
  /// `boxCols`, added on first use (one per argument and box, loads and
  /// stores alike).
  Value tensorMap(int64_t arg, int64_t boxRows, int64_t boxCols);
  LogicalResult setBox(Value map, const GmemView &view, int64_t rows,
                       int64_t cols, Operation *op);
  SmallVector<Value> boxCoordinates(const GmemView &view, int64_t colOffset);
  LogicalResult lowerCopyIn(CopyGmemToSmemOp op);
  LogicalResult lowerCopyOut(CopySmemToGmemOp op);
  LogicalResult lowerWgmma(WgmmaOp op);
  LogicalResult lowerStore(StoreOp op);
  LogicalResult lowerTensorOp(Operation *op);
  LogicalResult lowerRegisterOp(Operation *op);
  LogicalResult lowerFor(scf::ForOp op);
  LogicalResult lowerYield(scf::YieldOp op);
  /// The byte address of element (r, c) of `view`, swizzled.
  Value elementAddress(const SmemView &view, Value r, Value c);
  /// This thread's first row and column in the wgmma accumulator layout:
  /// row 16 warp + lane / 4, column 2 (lane % 4) of each 64 x 8 tile.
  std::pair<Value, Value> fragmentOrigin();
};

LogicalResult KernelLowering::checkKernel() {
  if (kernel.getGrid().size() > 3)
    return kernel.emitError() << "a grid of rank " << kernel.getGrid().size()
                              << " is not lowered; at most 3";
  if (kernel.getCluster().size() > 3)
    return kernel.emitError() << "a cluster of rank "
                              << kernel.getCluster().size()
                              << " is not lowered; at most 3";
  // The portable cluster size (larger ones need a driver opt-in).
  int64_t blocks = 1;
  for (int64_t n : kernel.getCluster())
    blocks *= n;
  if (blocks > kMaxClusterBlocks)
    return kernel.emitError()
           << "a cluster of " << blocks << " blocks is not lowered; at most "
           << kMaxClusterBlocks << " (the portable cluster size)";
  if (kernel.getNumThreads() * kWarpgroup > 1024)
    return kernel.emitError()
           << kernel.getNumThreads()
           << " warpgroups make more than 1024 threads per block";
  return success();
}

LogicalResult KernelLowering::createFunction() {
  module->setAttr(mlir::gpu::GPUDialect::getContainerModuleAttrName(),
                  b.getUnitAttr());
  b.setInsertionPointToEnd(module.getBody());
  std::string entry = kernel.getSymName().str();
  gpuModule = mlir::gpu::GPUModuleOp::create(b, loc, entry + "_kernels");
  gpuModule->setAttr(
      DLTIDialect::kDataLayoutAttrName,
      DataLayoutSpecAttr::get(
          ctx, {DataLayoutEntryAttr::get(IndexType::get(ctx),
                                         b.getI32IntegerAttr(32))}));
  b.setInsertionPointToStart(gpuModule.getBody());
  Block &kbody = kernel.getBody().front();
  SmallVector<Type> params;
  for (BlockArgument a : kbody.getArguments()) {
    auto t = cast<MemRefType>(a.getType());
    if (t.getNumElements() >= (int64_t(1) << 31))
      return kernel.emitError() << "argument #" << a.getArgNumber()
                                << " has 2^31 elements or more";
    params.push_back(MemRefType::get(t.getShape(), t.getElementType()));
  }
  numArgs = params.size();
  func = mlir::gpu::GPUFuncOp::create(b, loc, entry,
                                      b.getFunctionType(params, {}));
  func->setAttr(mlir::gpu::GPUDialect::getKernelFuncAttrName(),
                b.getUnitAttr());
  // The exact block size (`.reqntid`, not `.maxntid`): with it ptxas knows
  // the register count at entry that setmaxnreg moves from.
  func->setAttr("nvvm.reqntid",
                b.getDenseI32ArrayAttr(
                    {static_cast<int32_t>(kernel.getNumThreads() * kWarpgroup),
                     1, 1}));
  // A cluster of more than one block: its shape is compiled into the
  // kernel (`.reqnctapercluster` and `.explicitcluster`), so a plain
  // cuLaunchKernel of grid x cluster blocks launches it in clusters.
  SmallVector<int32_t> cluster = clusterShape();
  if (llvm::any_of(cluster, [](int32_t n) { return n > 1; }))
    func->setAttr(NVVM::NVVMDialect::getClusterDimAttrName(),
                  b.getDenseI32ArrayAttr(cluster));
  // setmaxnreg moves registers between warpgroups from a count at entry
  // that ptxas must know: all the block's threads share the register file
  // (65536 registers, allocated in units of 8).
  bool moves = false;
  kernel.walk([&](SetMaxRegistersOp) { moves = true; });
  if (moves)
    func->setAttr("nvvm.maxnreg",
                  b.getI32IntegerAttr(std::min<int64_t>(
                      255, 65536 / (kernel.getNumThreads() * kWarpgroup) /
                               8 * 8)));
  // The body moves into the function.
  Block &body = func.getBody().front();
  for (auto [from, to] :
       llvm::zip(kbody.getArguments(), body.getArguments()))
    from.replaceAllUsesWith(to);
  body.getOperations().splice(body.begin(), kbody.getOperations());
  b.setInsertionPointToStart(&body);
  tid = arith::IndexCastOp::create(
      b, loc, b.getI32Type(),
      mlir::gpu::ThreadIdOp::create(b, loc, mlir::gpu::Dimension::x));
  wgIndex = arith::ShRUIOp::create(b, loc, tid, i32(7));
  wgTid = arith::AndIOp::create(b, loc, tid, i32(kWarpgroup - 1));
  auto space = mlir::gpu::AddressSpaceAttr::get(
      ctx, mlir::gpu::GPUDialect::getWorkgroupAddressSpace());
  Value dyn = mlir::gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), nullptr, space));
  Value raw = arith::IndexCastOp::create(
      b, loc, b.getI32Type(),
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, dyn));
  // The swizzle pattern repeats every 1024 bytes: the buffers start on it.
  smemAddr = arith::AndIOp::create(
      b, loc, arith::AddIOp::create(b, loc, raw, i32(kSwizzlePeriod - 1)),
      i32(~(kSwizzlePeriod - 1)));
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToEnd(&body);
    mlir::gpu::ReturnOp::create(b, loc);
  }
  return success();
}

/// Shared memory and barriers: every allocation is at the kernel's top
/// level (plgpu.kernel's scratch and the run_scoped of its body).
LogicalResult KernelLowering::allocate() {
  Block &body = func.getBody().front();
  int64_t offset = 0;
  SmallVector<Operation *> allocs;
  WalkResult r = func.walk([&](Operation *op) {
    if (!isa<AllocSmemOp, AllocBarriersOp>(op))
      return WalkResult::advance();
    if (op->getBlock() != &body) {
      op->emitError() << "'" << op->getName()
                      << "' inside a loop or branch is not lowered yet; "
                         "allocate at the kernel's top level";
      return WalkResult::interrupt();
    }
    allocs.push_back(op);
    return WalkResult::advance();
  });
  if (r.wasInterrupted())
    return failure();
  for (Operation *op : allocs) {
    auto alloc = dyn_cast<AllocSmemOp>(op);
    if (!alloc)
      continue;
    auto type = cast<MemRefType>(alloc.getType());
    auto space = cast<SmemAttr>(type.getMemorySpace());
    SmemBuffer buf;
    buf.shape.assign(type.getShape().begin(), type.getShape().end());
    buf.elementType = type.getElementType();
    buf.elemBytes = type.getElementTypeBitWidth() / 8;
    if (type.getRank() < 2 || space.getSwizzle() != kSwizzleBytes ||
        space.getTiling().size() != 2 || space.getTiling()[0] != 8 ||
        space.getTiling()[1] * buf.elemBytes != kSwizzleBytes ||
        buf.elemBytes != 2 || buf.rows() % 8 || buf.cols() % buf.panelCols())
      return alloc.emitError()
             << "shared memory " << type
             << " is not lowered yet: the sm_90a lowering lays out 2-byte "
                "elements with tiling [8, 64] and a 128-byte swizzle";
    buf.offset = alignTo(offset, kSwizzlePeriod);
    offset = buf.offset + type.getNumElements() * buf.elemBytes;
    buffers[alloc.getResult()] = buf;
  }
  // The barriers after the buffers, 8 bytes each; thread 0 initializes
  // them, with a count of `arrivals` warpgroups of 128 threads.
  b.setInsertionPoint(body.getTerminator());
  b.setInsertionPointAfter(smemAddr.getDefiningOp());
  offset = alignTo(offset, 8);
  Value isFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        tid, i32(0));
  bool any = false;
  for (Operation *op : allocs) {
    auto alloc = dyn_cast<AllocBarriersOp>(op);
    if (!alloc)
      continue;
    auto type = cast<BarrierType>(alloc.getType());
    Barriers bars;
    bars.offset = offset;
    bars.count = type.getNum();
    bars.arrivals = type.getArrivals();
    if (std::optional<ArrayAttr> axes = alloc.getCollectiveAxes()) {
      // The verifier: one axis, a cluster axis of the kernel.
      StringRef axis = cast<StringAttr>((*axes)[0]).getValue();
      for (auto [d, a] : llvm::enumerate(kernel.getClusterNames()))
        if (cast<StringAttr>(a).getValue() == axis && d < 3 &&
            clusterShape()[d] > 1) {
          bars.clusterDim = static_cast<int64_t>(d);
          bars.clusterSize = clusterShape()[d];
        }
      clusterBarriers = clusterBarriers || bars.clusterDim >= 0;
    }
    if (bars.count > 32)
      return alloc.emitError() << "more than 32 barriers in one allocation "
                                  "are not lowered (one phase bit each)";
    offset += 8 * bars.count;
    for (int64_t i = 0; i < bars.count; ++i) {
      Value addr = arith::AddIOp::create(b, loc, smemAddr,
                                         i32(bars.offset + 8 * i));
      // As Mosaic GPU's CollectiveBarrierRef: each block along the axis
      // arrives (its 128 threads per warpgroup arrival).
      NVVM::MBarrierInitOp::create(
          b, loc, sharedPtr(addr),
          i32(bars.arrivals * kWarpgroup * bars.clusterSize), isFirst);
    }
    bars.phases = memref::AllocaOp::create(
        b, loc, MemRefType::get({}, b.getI32Type()));
    memref::StoreOp::create(b, loc, i32(0), bars.phases);
    barriers[alloc.getResult()] = bars;
    any = true;
  }
  if (any) {
    NVVM::FenceMbarrierInitOp::create(b, loc);
    NVVM::BarrierOp::create(b, loc);
  }
  // A TMA multicast writes and completes barriers in the other blocks too.
  func.walk([&](CopyGmemToSmemOp copy) {
    if (ArrayAttr axes = copy.getCollectiveAxesAttr())
      for (auto [n, size] :
           llvm::zip(kernel.getClusterNames(), kernel.getCluster()))
        clusterBarriers =
            clusterBarriers || (size > 1 && llvm::is_contained(axes, n));
  });
  if (clusterBarriers) {
    // No block arrives on (or multicasts into) another's barrier before it
    // is initialized, and none exits (its shared memory gone) while another
    // may still arrive on it or copy into it.
    clusterSync();
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPoint(body.getTerminator());
    clusterSync();
  }
  // One period of slack: the base is aligned at run time.
  sharedBytes = offset + kSwizzlePeriod;
  return success();
}

/// Whether `v` (an index or integer) is known to be a multiple of `n`:
/// constants, and products, sums and casts of known multiples.
static bool isMultipleOf(OpFoldResult ofr, int64_t n) {
  if (auto c = getConstantIntValue(ofr))
    return *c % n == 0;
  Value v = cast<Value>(ofr);
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
          arith::ExtUIOp>(def))
    return isMultipleOf(def->getOperand(0), n);
  if (isa<arith::MulIOp>(def)) {
    for (Value o : def->getOperands())
      if (auto c = getConstantIntValue(o); c && *c % n == 0)
        return true;
    return false;
  }
  if (isa<arith::AddIOp, arith::SubIOp>(def))
    return isMultipleOf(def->getOperand(0), n) &&
           isMultipleOf(def->getOperand(1), n);
  return false;
}

/// The value under `v`'s chain of memref.subview ops; `chain` gets the
/// subviews, `v`'s first.
static Value subviewRoot(Value v, SmallVectorImpl<memref::SubViewOp> &chain) {
  while (auto sv = v.getDefiningOp<memref::SubViewOp>()) {
    chain.push_back(sv);
    v = sv.getSource();
  }
  return v;
}

/// Composes a subview chain (as subviewRoot gives it) onto a root of rank
/// `rank`: `addOffset(d, o)` takes each view's offset along root dim `d`,
/// `sizes[d]` its size. Returns the root dims the outermost view keeps, in
/// order, or failure at a strided view.
template <typename AddOffset>
static FailureOr<SmallVector<int64_t>>
composeSubviews(ArrayRef<memref::SubViewOp> chain, int64_t rank,
                SmallVectorImpl<int64_t> &sizes, AddOffset addOffset) {
  SmallVector<int64_t> dims = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  for (memref::SubViewOp sv : llvm::reverse(chain)) {
    llvm::SmallBitVector dropped = sv.getDroppedDims();
    SmallVector<int64_t> next;
    for (auto [k, o] : llvm::enumerate(sv.getMixedOffsets())) {
      int64_t d = dims[k];
      if (!isOneInteger(sv.getMixedStrides()[k]))
        return failure();
      addOffset(d, o);
      sizes[d] = *getConstantIntValue(sv.getMixedSizes()[k]);
      if (!dropped.test(k))
        next.push_back(d);
    }
    dims = next;
  }
  return dims;
}

FailureOr<SmemView> KernelLowering::smemView(Value v, Operation *user) {
  // A transpose of a 2-D view: the same tile, read the other way.
  if (auto tr = v.getDefiningOp<memref::TransposeOp>()) {
    AffineMap perm = tr.getPermutation();
    if (perm.getNumDims() != 2 || perm.isIdentity())
      return user->emitError() << "a shared-memory transpose other than of "
                                  "a 2-D tile is not lowered";
    auto inner = smemView(tr.getIn(), user);
    if (failed(inner))
      return failure();
    inner->transposed = !inner->transposed;
    return inner;
  }
  // The chain of subviews down to the buffer.
  SmallVector<memref::SubViewOp> chain;
  Value cur = subviewRoot(v, chain);
  auto it = buffers.find(cur);
  if (it == buffers.end())
    return user->emitError()
           << "a shared-memory operand that is not a subview of an "
              "alloc_smem (e.g. a transposed view) is not lowered yet";
  const SmemBuffer &buf = it->second;
  int64_t rank = buf.shape.size();
  // Offsets in the buffer's dimensions; sizes of the view there.
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  SmallVector<int64_t> sizes(buf.shape);
  FailureOr<SmallVector<int64_t>> kept =
      composeSubviews(chain, rank, sizes, [&](int64_t d, OpFoldResult o) {
        auto so = getConstantIntValue(offsets[d]);
        auto no = getConstantIntValue(o);
        if (so && no)
          offsets[d] = b.getIndexAttr(*so + *no);
        else
          offsets[d] = arith::AddIOp::create(
                           b, loc,
                           getValueOrCreateConstantIndexOp(b, loc, offsets[d]),
                           getValueOrCreateConstantIndexOp(b, loc, o))
                           .getResult();
      });
  if (failed(kept))
    return user->emitError() << "a strided shared-memory view is not "
                                "lowered";
  SmallVector<int64_t> &dims = *kept;
  if (dims.size() != 2 || dims[0] != rank - 2 || dims[1] != rank - 1)
    return user->emitError() << "a shared-memory view that is not a 2-D "
                                "tile of the buffer's last two dimensions "
                                "is not lowered yet";
  SmemView view;
  view.buffer = &buf;
  if (!isMultipleOf(offsets[rank - 2], 8) ||
      !isMultipleOf(offsets[rank - 1], buf.panelCols()))
    return user->emitError()
           << "a shared-memory view must start on a row that is a multiple "
              "of 8 and a column that is a multiple of "
           << buf.panelCols() << " (a swizzle panel)";
  view.rows = sizes[rank - 2];
  view.cols = sizes[rank - 1];
  // Leading dimensions: row-major, a matrix each; then the panel and the
  // row of the view's origin.
  Value lead = idx(0);
  int64_t stride = buf.matrixBytes();
  for (int64_t d = rank - 3; d >= 0; --d) {
    Value o = getValueOrCreateConstantIndexOp(b, loc, offsets[d]);
    lead = arith::AddIOp::create(
        b, loc, lead, arith::MulIOp::create(b, loc, o, idx(stride)));
    stride *= buf.shape[d];
  }
  Value r0 = getValueOrCreateConstantIndexOp(b, loc, offsets[rank - 2]);
  Value c0 = getValueOrCreateConstantIndexOp(b, loc, offsets[rank - 1]);
  Value panel = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, c0, idx(buf.panelCols())),
      idx(buf.rows() * kSwizzleBytes));
  Value row = arith::MulIOp::create(b, loc, r0, idx(kSwizzleBytes));
  Value bytes = arith::AddIOp::create(
      b, loc, lead, arith::AddIOp::create(b, loc, panel, row));
  view.base = arith::AddIOp::create(
      b, loc, smemAddr,
      arith::AddIOp::create(b, loc, toI32(bytes), i32(buf.offset)));
  return view;
}

FailureOr<GmemView> KernelLowering::gmemView(Value v, Operation *user) {
  SmallVector<memref::SubViewOp> chain;
  Value cur = subviewRoot(v, chain);
  auto arg = dyn_cast<BlockArgument>(cur);
  if (!arg || arg.getOwner() != &func.getBody().front())
    return user->emitError() << "a global-memory operand that is not a "
                                "subview of a kernel argument is not lowered";
  GmemView view;
  view.arg = arg.getArgNumber();
  auto type = cast<MemRefType>(arg.getType());
  int64_t rank = type.getRank();
  view.offsets.assign(rank, idx(0));
  view.sizes.assign(type.getShape().begin(), type.getShape().end());
  FailureOr<SmallVector<int64_t>> kept = composeSubviews(
      chain, rank, view.sizes, [&](int64_t d, OpFoldResult o) {
        view.offsets[d] = arith::AddIOp::create(
            b, loc, view.offsets[d],
            getValueOrCreateConstantIndexOp(b, loc, o));
      });
  if (failed(kept))
    return user->emitError() << "a strided global-memory view is not "
                                "lowered";
  SmallVector<int64_t> &dims = *kept;
  // Two dimensions kept, the last one the columns; the others of size 1
  // (e.g. attention's [batch, seq, heads, head_dim] at one batch and head).
  bool unitElsewhere = llvm::all_of(llvm::seq<int64_t>(0, rank), [&](int64_t d) {
    return llvm::is_contained(dims, d) || view.sizes[d] == 1;
  });
  if (dims.size() != 2 || dims[1] != rank - 1 || !unitElsewhere)
    return user->emitError() << "a global-memory view that is not a 2-D "
                                "tile of the array's last dimension and "
                                "another (the others of size 1) is not "
                                "lowered yet";
  if (rank > 5)
    return user->emitError() << "a TMA copy of an array of rank " << rank
                              << " is not lowered; at most 5";
  view.rowDim = dims[0];
  return view;
}

Value KernelLowering::barrierPtr(Value bars, Value index) {
  const Barriers &info = barriers.lookup(bars);
  Value off = arith::MulIOp::create(b, loc, toI32(index), i32(8));
  return sharedPtr(arith::AddIOp::create(
      b, loc, smemAddr, arith::AddIOp::create(b, loc, off, i32(info.offset))));
}

Value KernelLowering::elementAddress(const SmemView &view, Value r, Value c) {
  const SmemBuffer &buf = *view.buffer;
  int64_t t = buf.panelCols();
  // Within the view: panel c / T, row r, byte (c % T) * e; the swizzle XORs
  // the 16-byte chunk with the row within its group of 8.
  Value panel = arith::DivUIOp::create(b, loc, c, i32(t));
  Value within = arith::RemUIOp::create(b, loc, c, i32(t));
  Value chunkBytes = arith::MulIOp::create(b, loc, within, i32(buf.elemBytes));
  Value swz = arith::ShLIOp::create(
      b, loc, arith::AndIOp::create(b, loc, r, i32(7)), i32(4));
  Value col = arith::XOrIOp::create(b, loc, chunkBytes, swz);
  Value off = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, panel, i32(buf.rows() * kSwizzleBytes)),
      arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, r, i32(kSwizzleBytes)), col));
  return arith::AddIOp::create(b, loc, view.base, off);
}

Value KernelLowering::tensorMap(int64_t arg, int64_t boxRows,
                                int64_t boxCols) {
  TensorMapKey key{arg, {boxRows, boxCols}};
  for (auto &[k, v] : tensorMaps)
    if (k == key)
      return v;
  unsigned n = func.getNumArguments();
  (void)func.insertArgument(n, LLVM::LLVMPointerType::get(ctx),
                            DictionaryAttr(), loc);
  Value map = func.getArgument(n);
  tensorMaps.push_back({key, map});
  return map;
}

/// A transposed view is read only by wgmma (as its `b`).
static LogicalResult notTransposed(const SmemView &view, Operation *op) {
  if (view.transposed)
    return op->emitError() << "a transposed shared-memory view is lowered "
                              "only as wgmma's `b` operand";
  return success();
}

/// The box of `map` in all of `view`'s array dimensions: `rows` x `cols`
/// in its row and column dimensions, 1 in the others; every copy through
/// one map has the same.
LogicalResult KernelLowering::setBox(Value map, const GmemView &view,
                                     int64_t rows, int64_t cols,
                                     Operation *op) {
  SmallVector<int64_t> box(view.sizes.size(), 1);
  box[view.rowDim] = rows;
  box.back() = cols;
  SmallVector<int64_t> &known = mapBoxes[map];
  if (known.empty())
    known = box;
  else if (known != box)
    return op->emitError() << "TMA copies of one array in boxes of the same "
                              "shape along different dimensions are not "
                              "lowered";
  return success();
}

/// A TMA copy's coordinates, innermost first: the view's offsets, the
/// columns' plus `colOffset`.
SmallVector<Value> KernelLowering::boxCoordinates(const GmemView &view,
                                                  int64_t colOffset) {
  SmallVector<Value> c;
  for (int64_t d = static_cast<int64_t>(view.offsets.size()) - 1; d >= 0;
       --d) {
    Value v = toI32(view.offsets[d]);
    if (d + 1 == static_cast<int64_t>(view.offsets.size()) && colOffset)
      v = arith::AddIOp::create(b, loc, v, i32(colOffset));
    c.push_back(v);
  }
  return c;
}

LogicalResult KernelLowering::tmaViews(Operation *op, Value smem, Value gmem,
                                       FailureOr<SmemView> &smemSide,
                                       FailureOr<GmemView> &gmemSide) {
  smemSide = smemView(smem, op);
  if (failed(smemSide) || failed(notTransposed(*smemSide, op)))
    return failure();
  gmemSide = gmemView(gmem, op);
  if (failed(gmemSide))
    return failure();
  if (smemSide->rows > 256)
    return op->emitError() << "a TMA box of " << smemSide->rows
                           << " rows is not lowered; at most 256";
  return success();
}

LogicalResult KernelLowering::lowerCopyIn(CopyGmemToSmemOp op) {
  // A multicast over a cluster axis of one block is a plain copy.
  auto multicast = multicastDim(op);
  if (failed(multicast))
    return failure();
  int64_t mcDim = multicast->first, mcSize = multicast->second;
  FailureOr<SmemView> dst = failure();
  FailureOr<GmemView> src = failure();
  if (failed(tmaViews(op, op.getDst(), op.getSrc(), dst, src)))
    return failure();
  const SmemBuffer &buf = *dst->buffer;
  // A multicast, as Mosaic GPU's: block i of the n along the axis loads
  // rows [i R/n, (i + 1) R/n) of the tile into the same place of every
  // block's shared memory (multicast::cluster with their mask), each
  // barrier completing those bytes; every block expects the whole tile.
  int64_t boxRows = dst->rows / mcSize;
  if (dst->rows % mcSize || boxRows % 8)
    return op.emitError() << "a TMA multicast of " << dst->rows
                          << " rows over " << mcSize
                          << " blocks is not lowered: each block's slice must "
                             "be a multiple of 8 rows (the 128-byte swizzle's "
                             "period)";
  // One tensor map per (argument, box): boxes of one panel.
  Value map = tensorMap(src->arg, boxRows, buf.panelCols());
  if (failed(setBox(map, *src, boxRows, buf.panelCols(), op)))
    return failure();
  int64_t bytes = dst->rows * dst->cols * buf.elemBytes;
  if (bytes % kWarpgroup)
    return op.emitError() << "a TMA copy of " << bytes
                          << " bytes is not a multiple of 128";
  // Every thread arrives with its share of the bytes (the barrier counts
  // 128 arrivals per warpgroup); the leader issues the boxes.
  Value bar = barrierPtr(op.getBarriers(), op.getIndex());
  NVVM::MBarrierArriveExpectTxOp::create(
      b, loc, Type(), bar, i32(bytes / kWarpgroup),
      NVVM::MemScopeKindAttr::get(ctx, NVVM::MemScopeKind::CTA), nullptr,
      Value());
  onLeader([&] {
    GmemView slice = *src;
    Value sliceBytes = i32(0), mask;
    if (mcDim >= 0) {
      Value i = clusterCoord(mcDim);
      Value firstRow = arith::MulIOp::create(b, loc, i, i32(boxRows));
      slice.offsets[slice.rowDim] = arith::AddIOp::create(
          b, loc, toI32(slice.offsets[slice.rowDim]), firstRow);
      sliceBytes = arith::MulIOp::create(b, loc, firstRow, i32(kSwizzleBytes));
      mask = i32(0);
      for (int64_t j = 0; j < mcSize; ++j)
        mask = arith::OrIOp::create(
            b, loc, mask,
            arith::ShLIOp::create(b, loc, i32(1), clusterRank(mcDim, i32(j))));
      mask = arith::TruncIOp::create(b, loc, b.getI16Type(), mask);
    }
    for (int64_t p = 0; p < dst->cols / buf.panelCols(); ++p) {
      Value d = arith::AddIOp::create(
          b, loc, dst->base, i32(p * buf.rows() * kSwizzleBytes));
      if (mcDim >= 0)
        d = arith::AddIOp::create(b, loc, d, sliceBytes);
      NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
          b, loc, clusterPtr(d), map,
          boxCoordinates(slice, p * buf.panelCols()),
          barrierPtr(op.getBarriers(), op.getIndex()), ValueRange{}, mask,
          Value(), NVVM::TMALoadMode::TILE, false, nullptr, Value());
    }
  });
  return success();
}

/// A TMA store, as Mosaic GPU issues it: thread 0 of the warpgroup copies
/// one box (rows x 64 columns) per panel of the swizzled shared-memory tile
/// into the array through its tensor map (the hardware clips the box at
/// the array's bounds); then, with `commit_group`, every thread closes its
/// bulk async group (empty but for the leader's).
LogicalResult KernelLowering::lowerCopyOut(CopySmemToGmemOp op) {
  FailureOr<SmemView> src = failure();
  FailureOr<GmemView> dst = failure();
  if (failed(tmaViews(op, op.getSrc(), op.getDst(), src, dst)))
    return failure();
  const SmemBuffer &buf = *src->buffer;
  Value map = tensorMap(dst->arg, src->rows, buf.panelCols());
  if (failed(setBox(map, *dst, src->rows, buf.panelCols(), op)))
    return failure();
  onLeader([&] {
    for (int64_t p = 0; p < src->cols / buf.panelCols(); ++p) {
      Value s = arith::AddIOp::create(
          b, loc, src->base, i32(p * buf.rows() * kSwizzleBytes));
      NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp::create(
          b, loc, map, sharedPtr(s),
          boxCoordinates(*dst, p * buf.panelCols()), Value(),
          NVVM::TMAStoreMode::TILE, Value());
    }
  });
  if (op.getCommitGroup())
    NVVM::CpAsyncBulkCommitGroupOp::create(b, loc);
  return success();
}

/// wgmma: `a` from shared memory (K-major) or from registers (a value in
/// the accumulator layout, converted to 16 bits: its elements are where
/// wgmma's A fragment wants them); `b` from shared memory, M/N-major (a
/// [K, N] tile) or, transposed (a [N, K] tile read as its transpose),
/// K-major.
LogicalResult KernelLowering::lowerWgmma(WgmmaOp op) {
  auto accType = cast<MemRefType>(op.getAcc().getType());
  int64_t m = accType.getDimSize(0), n = accType.getDimSize(1);
  bool aInRegisters = !isa<MemRefType>(op.getA().getType());
  FailureOr<SmemView> a = failure();
  const Fragment *aFrag = nullptr;
  Type et;
  int64_t k = 0;
  if (aInRegisters) {
    auto it = fragments.find(op.getA());
    if (it == fragments.end())
      return op.emitError() << "wgmma's `a` in registers must be a value in "
                               "the wgmma layout (an accumulator's value, "
                               "converted)";
    aFrag = &it->second;
    et = cast<RankedTensorType>(op.getA().getType()).getElementType();
    k = aFrag->n;
    if (aFrag->m != m)
      return op.emitError() << "wgmma's `a` has " << aFrag->m
                            << " rows, the accumulator " << m;
  } else {
    a = smemView(op.getA(), op);
    if (failed(a))
      return failure();
    if (a->transposed)
      return op.emitError() << "wgmma with a transposed `a` view is not "
                               "lowered yet";
    et = a->buffer->elementType;
    k = a->cols;
  }
  auto bv = smemView(op.getB(), op);
  if (failed(bv))
    return failure();
  if (!accType.getElementType().isF32() || !(et.isF16() || et.isBF16()) ||
      bv->buffer->elementType != et)
    return op.emitError() << "wgmma of " << et << " into "
                          << accType.getElementType()
                          << " is not lowered yet (f16 or bf16 into f32)";
  if (n > 256 || n % 8 || m % 64 || k % 16)
    return op.emitError() << "wgmma shape " << m << "x" << n << "x" << k
                          << " is not lowered";
  // b's K and N in the buffer: rows x cols, or cols x rows transposed.
  int64_t bK = bv->transposed ? bv->cols : bv->rows;
  int64_t bN = bv->transposed ? bv->rows : bv->cols;
  if (bK != k || bN != n)
    return op.emitError() << "wgmma's `b` is " << bK << "x" << bN
                          << "; expected " << k << "x" << n;
  Value acc = accumulators.lookup(op.getAcc());
  Type i64t = b.getI64Type(), f32 = b.getF32Type();
  // Descriptors (128-byte swizzle, stride 1024 bytes between groups of 8
  // rows): K-major (rows of k: A, a transposed B) or M/N-major (B: panels
  // of 64 columns, the leading byte offset one panel).
  auto descriptor = [&](Value base, int64_t bytes, int64_t lbo) {
    Value addr = arith::AddIOp::create(b, loc, base, i32(bytes));
    Value a14 = arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, addr, i32(4)), i32(0x3FFF));
    uint64_t fields = (uint64_t(lbo >> 4) << 16) |
                      (uint64_t(kSwizzlePeriod >> 4) << 32) |
                      (uint64_t(1) << 62);
    return arith::OrIOp::create(
        b, loc, arith::ExtUIOp::create(b, loc, i64t, a14),
        arith::ConstantIntOp::create(b, loc, i64t, fields));
  };
  // Two 16-bit elements in one 32-bit register.
  auto pack = [&](Value x, Value y) -> Value {
    Value v = vector::FromElementsOp::create(
        b, loc, VectorType::get({2}, et), ValueRange{x, y});
    Value i = vector::BitCastOp::create(b, loc,
                                        VectorType::get({1}, b.getI32Type()), v);
    return vector::ExtractOp::create(b, loc, i, 0);
  };
  int64_t bRows = bv->buffer->rows();
  std::string type = et.isBF16() ? "bf16" : "f16";
  int64_t nd = n / 2;
  // `a`'s registers are packed before the fence: ptxas injects a
  // warpgroup.arrive of its own (C7519, serializing the wgmmas) when an
  // instruction defines a wgmma's registers between the fence and it.
  SmallVector<Value> aPacked;
  if (aInRegisters)
    for (int64_t mi = 0; mi < m / 64; ++mi)
      for (int64_t kk = 0; kk < k / 16; ++kk)
        for (int64_t g = 0; g < 2; ++g)
          for (int64_t h = 0; h < 2; ++h)
            aPacked.push_back(pack(aFrag->at(mi, 2 * kk + g, 2 * h),
                                   aFrag->at(mi, 2 * kk + g, 2 * h + 1)));
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  for (int64_t mi = 0; mi < m / 64; ++mi) {
    for (int64_t kk = 0; kk < k / 16; ++kk) {
      int64_t kc = kk * 16;
      SmallVector<Value> operands;
      std::string aText;
      std::string constraints;
      for (int64_t i = 0; i < nd; ++i)
        constraints += "=f,";
      if (aInRegisters) {
        // A's fragment for rows 64mi.., columns kc..kc+15: the accumulator
        // layout's 8-column groups 2kk and 2kk + 1, rows r and r + 8.
        aText = "{";
        for (int64_t g = 0; g < 2; ++g)
          for (int64_t h = 0; h < 2; ++h) {
            operands.push_back(
                aPacked[((mi * (k / 16) + kk) * 2 + g) * 2 + h]);
            aText += (g || h ? ", $" : "$") + std::to_string(nd + 2 * g + h);
            constraints += "r,";
          }
        aText += "}";
      } else {
        int64_t aRows = a->buffer->rows();
        operands.push_back(descriptor(a->base,
                                      mi * 64 * kSwizzleBytes +
                                          kc / 64 * aRows * kSwizzleBytes +
                                          kc % 64 * 2,
                                      kSwizzleBytes));
        aText = "$" + std::to_string(nd);
        constraints += "l,";
      }
      int64_t bIndex = nd + static_cast<int64_t>(operands.size());
      operands.push_back(
          bv->transposed
              ? descriptor(bv->base,
                           kc / 64 * bRows * kSwizzleBytes + kc % 64 * 2,
                           kSwizzleBytes)
              : descriptor(bv->base, kc * kSwizzleBytes,
                           bRows * kSwizzleBytes));
      constraints += "l";
      std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                         "wgmma.mma_async.sync.aligned.m64n" +
                         std::to_string(n) + "k16.f32." + type + "." + type +
                         " {";
      for (int64_t i = 0; i < nd; ++i)
        text += (i ? ", $" : "$") + std::to_string(i);
      // Immediates: scale-d (p), scale-a, scale-b, [trans-a,] trans-b
      // (1: M/N-major).
      text += "}, " + aText + ", $" + std::to_string(bIndex) + ", p, 1, 1, " +
              (aInRegisters ? "" : "0, ") + (bv->transposed ? "0" : "1") +
              ";\n}";
      for (int64_t i = 0; i < nd; ++i) {
        operands.push_back(memref::LoadOp::create(
            b, loc, acc, ValueRange{idx(mi * nd + i)}));
        constraints += "," + std::to_string(i);
      }
      SmallVector<Type> fields(nd, f32);
      Type resType = LLVM::LLVMStructType::getLiteral(ctx, fields);
      Value r = LLVM::InlineAsmOp::create(
                    b, loc, resType, operands, b.getStringAttr(text),
                    b.getStringAttr(constraints), b.getUnitAttr(), nullptr,
                    LLVM::TailCallKindAttr::get(
                        ctx, LLVM::tailcallkind::TailCallKind::None),
                    nullptr, nullptr)
                    .getResult(0);
      for (int64_t i = 0; i < nd; ++i)
        memref::StoreOp::create(
            b, loc,
            LLVM::ExtractValueOp::create(b, loc, r, ArrayRef<int64_t>{i}),
            acc, ValueRange{idx(mi * nd + i)});
    }
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  return success();
}

std::pair<Value, Value> KernelLowering::fragmentOrigin() {
  Value warp = arith::ShRUIOp::create(b, loc, wgTid, i32(5));
  Value lane = arith::AndIOp::create(b, loc, wgTid, i32(31));
  Value row0 = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, warp, i32(16)),
      arith::ShRUIOp::create(b, loc, lane, i32(2)));
  Value col0 = arith::MulIOp::create(
      b, loc, arith::AndIOp::create(b, loc, lane, i32(3)), i32(2));
  return {row0, col0};
}

LogicalResult KernelLowering::lowerStore(StoreOp op) {
  auto it = fragments.find(op.getValue());
  if (it == fragments.end())
    return op.emitError() << "a store of a value not in the wgmma layout is "
                             "not lowered yet";
  const Fragment &f = it->second;
  auto view = smemView(op.getRef(), op);
  if (failed(view) || failed(notTransposed(*view, op)))
    return failure();
  Type et = view->buffer->elementType;
  if (cast<RankedTensorType>(op.getValue().getType()).getElementType() != et)
    return op.emitError() << "element types differ";
  auto [row0, col0] = fragmentOrigin();
  for (int64_t mi = 0; mi < f.m / 64; ++mi)
    for (int64_t j = 0; j < f.n / 8; ++j)
      for (int64_t h = 0; h < 2; ++h) {
        Value r = arith::AddIOp::create(b, loc, row0, i32(mi * 64 + 8 * h));
        Value c = arith::AddIOp::create(b, loc, col0, i32(8 * j));
        Value v = vector::FromElementsOp::create(
            b, loc, VectorType::get({2}, et),
            ValueRange{f.at(mi, j, 2 * h), f.at(mi, j, 2 * h + 1)});
        LLVM::StoreOp::create(b, loc, v,
                              sharedPtr(elementAddress(*view, r, c)), 4);
      }
  return success();
}

/// Register values, other than element-wise: splat constants, layout_cast,
/// row reductions and broadcasts between the wgmma layout and its rows.
LogicalResult KernelLowering::lowerRegisterOp(Operation *op) {
  if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
    auto dense = dyn_cast<SplatElementsAttr>(cst.getValue());
    if (!dense)
      return op->emitError() << "a register constant that is not a splat is "
                                "not lowered yet";
    splats[cst.getResult()] = arith::ConstantOp::create(
        b, loc, cast<TypedAttr>(dense.getSplatValue<Attribute>()));
    return success();
  }
  if (auto iota = dyn_cast<pallas::IotaOp>(op)) {
    auto type = cast<RankedTensorType>(iota.getType());
    if (type.getRank() != 2 || !type.getElementType().isInteger(32))
      return op->emitError() << "an iota of " << type
                             << " is not lowered yet (2-D i32)";
    iotas[iota.getResult()] = iota.getDimension();
    return success();
  }
  if (auto cast_ = dyn_cast<LayoutCastOp>(op)) {
    auto type = cast<RankedTensorType>(cast_.getType());
    LayoutAttr layout = cast_.getLayout();
    bool isRows = layout.getName() == "wgmma" && type.getRank() == 1 &&
                  layout.getReduced() == ArrayRef<int64_t>{1};
    bool isFull = layout.getName() == "wgmma" && type.getRank() == 2 &&
                  layout.getReduced().empty();
    if ((!isRows && !isFull) || type.getDimSize(0) % 64 ||
        (isFull && type.getDimSize(1) % 8))
      return op->emitError() << "layout " << layout << " of " << type
                             << " is not lowered yet (the wgmma layout of "
                                "64-row blocks, or its rows)";
    Fragment f{type.getDimSize(0), isFull ? type.getDimSize(1) : 0, isRows,
               {}};
    if (auto it = fragments.find(cast_.getValue()); it != fragments.end()) {
      if (!it->second.sameLayout(f))
        return op->emitError() << "a layout_cast between register layouts is "
                                  "not lowered yet";
      Fragment same = it->second; // operator[] may move the entries
      fragments[cast_.getResult()] = same;
      return success();
    }
    // An iota in the wgmma layout: each register its row or column.
    if (auto it = iotas.find(cast_.getValue());
        it != iotas.end() && isFull) {
      auto [row0, col0] = fragmentOrigin();
      for (int64_t mi = 0; mi < f.m / 64; ++mi)
        for (int64_t j = 0; j < f.n / 8; ++j)
          for (int64_t e = 0; e < 4; ++e)
            f.regs.push_back(
                it->second == 0
                    ? arith::AddIOp::create(b, loc, row0,
                                            i32(mi * 64 + 8 * (e / 2)))
                    : arith::AddIOp::create(b, loc, col0,
                                            i32(8 * j + e % 2)));
      fragments[cast_.getResult()] = f;
      return success();
    }
    Value splat = splats.lookup(cast_.getValue());
    if (!splat)
      return op->emitError() << "a layout_cast of a value that is not a "
                                "splat constant is not lowered yet";
    f.regs.assign(isRows ? f.m / 64 * 2 : f.m / 64 * (f.n / 8) * 4, splat);
    fragments[cast_.getResult()] = f;
    return success();
  }
  if (auto red = dyn_cast<pallas::ReduceOp>(op)) {
    auto it = fragments.find(red.getInput());
    bool add = red.getKind() == pallas::ReduceKind::Sum;
    if (it == fragments.end() || it->second.rows ||
        red.getDims() != ArrayRef<int64_t>{1} ||
        !(add || red.getKind() == pallas::ReduceKind::Max) ||
        !red.getType().getElementType().isF32())
      return op->emitError() << "a reduction is lowered only as the sum or "
                                "max of f32 rows of the wgmma layout";
    const Fragment &f = it->second;
    auto combine = [&](Value x, Value y) -> Value {
      if (add)
        return arith::AddFOp::create(b, loc, x, y);
      return arith::MaximumFOp::create(b, loc, x, y);
    };
    // Each thread its columns of the row, then the quad's 4 lanes.
    Fragment out{f.m, 0, true, {}};
    for (int64_t mi = 0; mi < f.m / 64; ++mi)
      for (int64_t h = 0; h < 2; ++h) {
        Value v = f.at(mi, 0, 2 * h);
        for (int64_t j = 0; j < f.n / 8; ++j)
          for (int64_t e = 2 * h; e < 2 * h + 2; ++e)
            if (j || e != 2 * h)
              v = combine(v, f.at(mi, j, e));
        for (int32_t mask : {1, 2})
          v = combine(v, mlir::gpu::ShuffleOp::create(
                             b, loc, v, mask, 32, mlir::gpu::ShuffleMode::XOR)
                             .getShuffleResult());
        out.regs.push_back(v);
      }
    fragments[red.getResult()] = out;
    return success();
  }
  auto bc = cast<pallas::BroadcastInDimOp>(op);
  // A scalar broadcast: a splat.
  if (!isa<RankedTensorType>(bc.getOperand().getType())) {
    splats[bc.getResult()] = bc.getOperand();
    return success();
  }
  auto it = fragments.find(bc.getOperand());
  auto type = cast<RankedTensorType>(bc.getType());
  if (it == fragments.end() || !it->second.rows || type.getRank() != 2 ||
      bc.getDims() != ArrayRef<int64_t>{0} || type.getDimSize(1) % 8)
    return op->emitError() << "a broadcast is lowered only from the rows of "
                              "the wgmma layout along its columns";
  const Fragment &r = it->second;
  Fragment out{r.m, type.getDimSize(1), false, {}};
  for (int64_t mi = 0; mi < r.m / 64; ++mi)
    for (int64_t j = 0; j < out.n / 8; ++j)
      for (int64_t e = 0; e < 4; ++e)
        out.regs.push_back(r.regs[mi * 2 + e / 2]);
  fragments[bc.getResult()] = out;
  return success();
}

/// An scf.for carrying register values: a loop carrying their registers
/// (scalars and other values as they are), the body moved into it.
LogicalResult KernelLowering::lowerFor(scf::ForOp op) {
  // The layouts by value: inserting into `fragments` moves its entries.
  SmallVector<Value> inits;
  SmallVector<std::optional<Fragment>> layouts;
  for (Value init : op.getInitArgs()) {
    if (!isa<RankedTensorType>(init.getType())) {
      inits.push_back(init);
      layouts.push_back(std::nullopt);
      continue;
    }
    auto it = fragments.find(init);
    if (it == fragments.end())
      return op.emitError() << "a loop-carried register value must have a "
                               "register layout before the loop (a "
                               "layout_cast)";
    inits.append(it->second.regs.begin(), it->second.regs.end());
    layouts.push_back(it->second);
  }
  auto loop = scf::ForOp::create(b, loc, op.getLowerBound(),
                                 op.getUpperBound(), op.getStep(), inits);
  Block *body = loop.getBody();
  if (!body->empty())
    body->getTerminator()->erase();
  Block *old = op.getBody();
  old->getArgument(0).replaceAllUsesWith(body->getArgument(0));
  body->getOperations().splice(body->end(), old->getOperations());
  size_t next = 0;
  for (auto [i, layout] : llvm::enumerate(layouts)) {
    Value arg = old->getArgument(1 + i), res = op.getResult(i);
    if (!layout) {
      arg.replaceAllUsesWith(body->getArgument(1 + next));
      res.replaceAllUsesWith(loop.getResult(next));
      ++next;
      continue;
    }
    Fragment a = *layout, r = *layout;
    size_t k = layout->regs.size();
    for (size_t j = 0; j < k; ++j) {
      a.regs[j] = body->getArgument(1 + next + j);
      r.regs[j] = loop.getResult(next + j);
    }
    // The old block goes with the old loop: its users see a stand-in.
    auto standIn = [&](Value v, const Fragment &f) {
      auto cast = UnrealizedConversionCastOp::create(b, loc, v.getType(),
                                                     ValueRange{});
      placeholders.push_back(cast);
      v.replaceAllUsesWith(cast.getResult(0));
      fragments[cast.getResult(0)] = f;
    };
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(body);
      standIn(arg, a);
      b.setInsertionPointAfter(loop);
      standIn(res, r);
    }
    next += k;
  }
  return success();
}

/// The yield of a loop lowerFor rewrote: its register values' registers,
/// in the layouts the loop carries.
LogicalResult KernelLowering::lowerYield(scf::YieldOp op) {
  auto loop = dyn_cast<scf::ForOp>(op->getParentOp());
  if (!loop)
    return op.emitError() << "a branch yielding register values is not "
                             "lowered yet";
  SmallVector<Value> values;
  for (Value v : op.getOperands()) {
    if (!isa<RankedTensorType>(v.getType())) {
      values.push_back(v);
      continue;
    }
    auto it = fragments.find(v);
    if (it == fragments.end())
      return op.emitError() << "a yielded register value is not in a "
                               "register layout";
    values.append(it->second.regs.begin(), it->second.regs.end());
  }
  if (values.size() != loop.getNumResults())
    return op.emitError() << "a yielded register value's layout differs "
                             "from the loop's";
  for (auto [v, t] : llvm::zip(values, loop.getResultTypes()))
    if (v.getType() != t)
      return op.emitError() << "a yielded register value's layout differs "
                               "from the loop's";
  scf::YieldOp::create(b, loc, values);
  return success();
}

/// Register values in the wgmma layout: element-wise arith and
/// tensor.extract_slice.
LogicalResult KernelLowering::lowerTensorOp(Operation *op) {
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    auto it = fragments.find(slice.getSource());
    auto type = slice.getResultType();
    if (it == fragments.end() || !slice.hasUnitStride() ||
        type.getRank() != 2 || !slice.getOffsets().empty())
      return op->emitError() << "a slice of a register value is lowered only "
                                "with static offsets on the wgmma layout";
    const Fragment &f = it->second;
    int64_t r0 = slice.getStaticOffsets()[0], c0 = slice.getStaticOffsets()[1];
    int64_t m = type.getDimSize(0), n = type.getDimSize(1);
    if (r0 % 64 || m % 64 || c0 % 8 || n % 8)
      return op->emitError() << "a slice of the wgmma layout must cover "
                                "whole 64-row blocks and 8-column groups";
    Fragment out{m, n, false, {}};
    for (int64_t mi = 0; mi < m / 64; ++mi)
      for (int64_t j = 0; j < n / 8; ++j)
        for (int64_t e = 0; e < 4; ++e)
          out.regs.push_back(f.at(r0 / 64 + mi, c0 / 8 + j, e));
    fragments[slice.getResult()] = out;
    return success();
  }
  if (isa<arith::ConstantOp, LayoutCastOp, pallas::ReduceOp,
          pallas::BroadcastInDimOp, pallas::IotaOp>(op))
    return lowerRegisterOp(op);
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return lowerFor(loop);
  if (auto yield = dyn_cast<scf::YieldOp>(op))
    return lowerYield(yield);
  // Element-wise: one scalar op per register; splat operands take the
  // others' layout.
  bool select = isa<pallas::SelectOp>(op);
  if (op->getNumResults() != 1 || op->getNumRegions() ||
      !(select || OpTrait::hasElementwiseMappableTraits(op)))
    return op->emitError() << "'" << op->getName()
                           << "' on register values is not lowered yet";
  const Fragment *shape = nullptr;
  for (Value o : op->getOperands()) {
    auto it = fragments.find(o);
    if (it != fragments.end()) {
      if (shape && !shape->sameLayout(it->second))
        return op->emitError() << "the operands of '" << op->getName()
                               << "' are in different register layouts";
      shape = &it->second;
    } else if (!splats.count(o) && isa<RankedTensorType>(o.getType())) {
      return op->emitError() << "an operand of '" << op->getName()
                             << "' is not in the wgmma layout";
    }
  }
  if (!shape)
    return op->emitError() << "'" << op->getName()
                           << "' of splat constants only is not lowered yet";
  Fragment out{shape->m, shape->n, shape->rows, {}};
  Type et = cast<RankedTensorType>(op->getResult(0).getType()).getElementType();
  for (size_t i = 0; i < shape->regs.size(); ++i) {
    SmallVector<Value> operands;
    for (Value o : op->getOperands()) {
      auto it = fragments.find(o);
      Value splat = splats.lookup(o);
      operands.push_back(it != fragments.end() ? it->second.regs[i]
                         : splat                ? splat
                                                : o); // a scalar operand
    }
    if (select) {
      out.regs.push_back(arith::SelectOp::create(b, loc, operands[0],
                                                 operands[1], operands[2]));
      continue;
    }
    OperationState state(op->getLoc(), op->getName(), operands, {et},
                         op->getAttrs());
    out.regs.push_back(b.create(state)->getResult(0));
  }
  fragments[op->getResult(0)] = out;
  return success();
}

LogicalResult KernelLowering::lower(Operation *op) {
  b.setInsertionPoint(op);
  loc = op->getLoc();
  if (auto ax = dyn_cast<AxisIndexOp>(op)) {
    StringRef name = ax.getAxis();
    Value v;
    if (kernel.getThreadName() && name == *kernel.getThreadName()) {
      v = wgIndex;
    } else {
      // A grid axis indexes clusters (%clusterid, = %ctaid / the cluster's
      // size along the axis); a cluster axis, the block within its
      // cluster (%cluster_ctaid). Without clusters, %ctaid and 0.
      bool clustered = llvm::any_of(kernel.getCluster(),
                                    [](int64_t n) { return n > 1; });
      Type i32t = b.getI32Type();
      for (auto [i, n] : llvm::enumerate(kernel.getGridNames())) {
        if (cast<StringAttr>(n).getValue() != name)
          continue;
        if (!clustered)
          v = arith::IndexCastOp::create(
              b, loc, i32t,
              mlir::gpu::BlockIdOp::create(
                  b, loc, static_cast<mlir::gpu::Dimension>(i)));
        else
          v = ofDim<NVVM::ClusterIdXOp, NVVM::ClusterIdYOp,
                    NVVM::ClusterIdZOp>(i);
      }
      for (auto [i, n] : llvm::enumerate(kernel.getClusterNames())) {
        if (v || cast<StringAttr>(n).getValue() != name)
          continue;
        if (kernel.getCluster()[i] == 1)
          v = i32(0);
        else
          v = clusterCoord(i);
      }
      if (!v)
        v = i32(0); // an unnamed cluster axis of size 1
    }
    ax.getResult().replaceAllUsesWith(v);
    return success();
  }
  if (auto smr = dyn_cast<SetMaxRegistersOp>(op)) {
    NVVM::SetMaxRegisterOp::create(
        b, loc, b.getI32IntegerAttr(smr.getCount()),
        NVVM::SetMaxRegisterActionAttr::get(
            ctx, smr.getAction() == "increase"
                     ? NVVM::SetMaxRegisterAction::increase
                     : NVVM::SetMaxRegisterAction::decrease));
    return success();
  }
  if (auto arrive = dyn_cast<BarrierArriveOp>(op)) {
    const Barriers &bars = barriers.lookup(arrive.getBarriers());
    if (bars.clusterDim >= 0) {
      // A cluster barrier: this thread arrives on the barrier of every
      // block along the axis (itself included), mapped into the
      // shared::cluster window by its rank (x fastest).
      Value local = barrierPtr(arrive.getBarriers(), arrive.getIndex());
      for (int64_t j = 0; j < bars.clusterSize; ++j) {
        Value rank = clusterRank(bars.clusterDim, i32(j));
        Value remote = NVVM::MapaOp::create(
            b, loc, LLVM::LLVMPointerType::get(ctx, 7), local, rank);
        NVVM::MBarrierArriveOp::create(
            b, loc, Type(), remote, Value(),
            NVVM::MemScopeKindAttr::get(ctx, NVVM::MemScopeKind::CLUSTER));
      }
      return success();
    }
    NVVM::MBarrierArriveOp::create(
        b, loc, Type(), barrierPtr(arrive.getBarriers(), arrive.getIndex()),
        Value(), NVVM::MemScopeKindAttr::get(ctx, NVVM::MemScopeKind::CTA));
    return success();
  }
  if (auto wait = dyn_cast<BarrierWaitOp>(op)) {
    const Barriers &bars = barriers.lookup(wait.getBarriers());
    Value bits = memref::LoadOp::create(b, loc, bars.phases);
    Value bit = arith::ShLIOp::create(b, loc, i32(1), toI32(wait.getIndex()));
    Value parity = arith::ExtUIOp::create(
        b, loc, b.getI32Type(),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                              arith::AndIOp::create(b, loc, bits, bit),
                              i32(0)));
    NVVM::MBarrierTryWaitParityOp::create(
        b, loc, barrierPtr(wait.getBarriers(), wait.getIndex()), parity,
        i32(0x989680));
    memref::StoreOp::create(b, loc, arith::XOrIOp::create(b, loc, bits, bit),
                            bars.phases);
    return success();
  }
  if (auto copy = dyn_cast<CopyGmemToSmemOp>(op))
    return lowerCopyIn(copy);
  if (auto copy = dyn_cast<CopySmemToGmemOp>(op))
    return lowerCopyOut(copy);
  // As Mosaic GPU's commit_shared and await_async_copy: the generic-proxy
  // writes to shared memory made visible to the TMA unit (async proxy),
  // the bulk groups retired, then the warpgroup synchronized.
  if (isa<CommitSmemOp>(op)) {
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
    warpgroupBarrier();
    return success();
  }
  if (auto wait = dyn_cast<WaitSmemToGmemOp>(op)) {
    NVVM::CpAsyncBulkWaitGroupOp::create(
        b, loc, static_cast<uint32_t>(wait.getN()),
        wait.getReadOnly() ? b.getUnitAttr() : nullptr);
    warpgroupBarrier();
    return success();
  }
  if (isa<CommitGroupOp>(op)) {
    NVVM::CpAsyncBulkCommitGroupOp::create(b, loc);
    return success();
  }
  if (auto alloc = dyn_cast<AllocAccOp>(op)) {
    auto type = cast<MemRefType>(alloc.getType());
    // An initial value (pl.run_state's): a value in the wgmma layout, whose
    // registers are the accumulator's, in the same order.
    const Fragment *init = nullptr;
    if (alloc.getInit()) {
      auto it = fragments.find(alloc.getInit());
      if (it == fragments.end() || it->second.m != type.getDimSize(0) ||
          it->second.n != type.getDimSize(1))
        return op->emitError() << "an accumulator's initial value must be a "
                                  "value of its shape in the wgmma layout";
      init = &it->second;
    }
    int64_t regs = type.getNumElements() / kWarpgroup;
    Value acc;
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointAfter(smemAddr.getDefiningOp());
      acc = memref::AllocaOp::create(
          b, loc, MemRefType::get({regs}, type.getElementType()));
    }
    Value zero = arith::ConstantOp::create(
        b, loc, b.getZeroAttr(type.getElementType()));
    for (int64_t i = 0; i < regs; ++i)
      memref::StoreOp::create(b, loc, init ? init->regs[i] : zero, acc,
                              ValueRange{idx(i)});
    accumulators[alloc.getResult()] = acc;
    return success();
  }
  if (auto wgmma = dyn_cast<WgmmaOp>(op))
    return lowerWgmma(wgmma);
  if (auto wait = dyn_cast<WgmmaWaitOp>(op)) {
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, wait.getN());
    return success();
  }
  if (auto read = dyn_cast<AccReadOp>(op)) {
    auto type = cast<MemRefType>(read.getAcc().getType());
    Value acc = accumulators.lookup(read.getAcc());
    Fragment f{type.getDimSize(0), type.getDimSize(1), false, {}};
    for (int64_t i = 0; i < type.getNumElements() / kWarpgroup; ++i)
      f.regs.push_back(memref::LoadOp::create(b, loc, acc, ValueRange{idx(i)}));
    fragments[read.getResult()] = f;
    return success();
  }
  if (auto store = dyn_cast<StoreOp>(op))
    return lowerStore(store);
  if (isa<AllocSmemOp, AllocBarriersOp>(op))
    return success();
  if (isa<LayoutCastOp>(op))
    return lowerRegisterOp(op);
  if (op->getDialect() && isa<MgpuDialect>(op->getDialect()))
    return op->emitError() << "'" << op->getName()
                           << "' is not lowered for cuda:sm_90a yet";
  return lowerTensorOp(op);
}

LogicalResult KernelLowering::run() {
  if (failed(checkKernel()) || failed(createFunction()) || failed(allocate()))
    return failure();
  // The ops to rewrite, in order: pallas_mgpu ops and ops on register
  // tensors.
  // In program order (a loop before its body: lowerFor gives the body's
  // register arguments their layouts).
  SmallVector<Operation *> ops;
  func.walk<WalkOrder::PreOrder>([&](Operation *op) {
    bool tensors = llvm::any_of(op->getResultTypes(), llvm::IsaPred<RankedTensorType>) ||
                   llvm::any_of(op->getOperandTypes(), llvm::IsaPred<RankedTensorType>);
    if ((op->getDialect() && isa<MgpuDialect>(op->getDialect())) ||
        (tensors && !isa<StoreOp>(op)))
      ops.push_back(op);
  });
  // The tensor-map parameters in a fixed order (by argument, then box:
  // the inputs' before the outputs'), whatever order the copies come in.
  SmallVector<std::pair<int64_t, SmallVector<int64_t, 2>>> keys;
  for (Operation *op : ops) {
    Value gmem, smem;
    int64_t slices = 1; // a multicast's box: 1/n of the rows
    if (auto copy = dyn_cast<CopyGmemToSmemOp>(op)) {
      gmem = copy.getSrc(), smem = copy.getDst();
      auto mc = multicastDim(copy);
      if (failed(mc))
        return failure();
      slices = mc->second;
    }
    else if (auto copy = dyn_cast<CopySmemToGmemOp>(op))
      gmem = copy.getDst(), smem = copy.getSrc();
    else
      continue;
    SmallVector<memref::SubViewOp> chain;
    auto arg = dyn_cast<BlockArgument>(subviewRoot(gmem, chain));
    auto type = cast<MemRefType>(smem.getType());
    if (!arg || type.getRank() < 2)
      continue; // refused when lowered
    keys.push_back({arg.getArgNumber(),
                    {type.getDimSize(type.getRank() - 2) / slices,
                     kSwizzleBytes * 8 / type.getElementTypeBitWidth()}});
  }
  llvm::sort(keys);
  for (auto &[arg, box] : keys)
    (void)tensorMap(arg, box[0], box[1]);
  for (Operation *op : ops)
    if (failed(lower(op)))
      return failure();
  // Erase what was rewritten and the subviews left dead, users first.
  llvm::SetVector<Operation *> dead(ops.begin(), ops.end());
  dead.insert(placeholders.begin(), placeholders.end());
  func.walk([&](Operation *op) {
    if (isa<memref::SubViewOp, memref::TransposeOp>(op))
      dead.insert(op);
  });
  bool changed = true;
  while (changed) {
    changed = false;
    SmallVector<Operation *> unused;
    for (Operation *op : dead)
      if (op->use_empty())
        unused.push_back(op);
    for (Operation *op : unused) {
      dead.remove(op);
      op->erase();
      changed = true;
    }
  }
  for (Operation *op : dead)
    if (!isa<memref::SubViewOp, memref::TransposeOp,
             UnrealizedConversionCastOp>(op))
      return op->emitError() << "'" << op->getName()
                             << "' is still used after the lowering";
  // The launch record: grid, threads, dynamic shared memory, the operands'
  // pointers then the tensor maps.
  // Blocks along x, y and z: the grid's clusters times the cluster's
  // blocks.
  SmallVector<int64_t> grid(kernel.getGrid().begin(), kernel.getGrid().end());
  grid.resize(3, 1);
  for (auto [i, n] : llvm::enumerate(clusterShape()))
    grid[i] *= n;
  SmallVector<pallas::GpuParamAttr> params;
  auto param = [&](pallas::GpuParamKind kind, pallas::GpuOperandGroup group,
                   int64_t index) {
    return pallas::GpuParamAttr::get(ctx, kind, group, index, std::nullopt,
                                     Type(), {}, {}, StringAttr(),
                                     StringAttr(), StringAttr(),
                                     StringAttr());
  };
  int64_t numIn = numInputs();
  for (int64_t i = 0; i < numArgs; ++i)
    params.push_back(i < numIn ? param(pallas::GpuParamKind::Pointer,
                                       pallas::GpuOperandGroup::Inputs, i)
                               : param(pallas::GpuParamKind::Pointer,
                                       pallas::GpuOperandGroup::Outputs,
                                       i - numIn));
  for (auto &[key, value] : tensorMaps) {
    auto t = cast<MemRefType>(func.getArgument(key.arg).getType());
    bool output = key.arg >= numIn;
    params.push_back(pallas::GpuParamAttr::get(
        ctx, pallas::GpuParamKind::TensorMap,
        output ? pallas::GpuOperandGroup::Outputs
               : pallas::GpuOperandGroup::Inputs,
        output ? key.arg - numIn : key.arg, std::nullopt, t.getElementType(), t.getShape(), mapBoxes.lookup(value),
        b.getStringAttr("128B"), b.getStringAttr("none"),
        b.getStringAttr("128B"), b.getStringAttr("zero")));
  }
  int64_t threads = kernel.getNumThreads() * kWarpgroup;
  SmallVector<int64_t> axes[3];
  int64_t rank = std::max(kernel.getGrid().size(), kernel.getCluster().size());
  for (int64_t i = 0; i < rank; ++i)
    axes[i].push_back(i);
  func->setAttr(pallas::kGpuLaunchAttrName,
                pallas::GpuLaunchAttr::get(
                    ctx, func.getName(), grid, axes[0], axes[1], axes[2],
                    {threads, 1, 1}, threads / 32, 32, {}, {}, sharedBytes,
                    0, params));
  return success();
}

struct PallasMGPUToGPUPass
    : pallas::impl::PallasMGPUToGPUBase<PallasMGPUToGPUPass> {
  using Base::Base;
  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    // The launch record's attributes.
    registry.insert<pallas::PallasDialect>();
  }
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<KernelOp> kernels(module.getOps<KernelOp>());
    if (kernels.empty())
      return;
    if (chip != "sm_90a") {
      kernels.front().emitError()
          << "the Mosaic GPU lowering is built for sm_90a only, not '"
          << chip << "'";
      return signalPassFailure();
    }
    if (kernels.size() > 1) {
      kernels[1].emitError() << "one Mosaic GPU kernel per module";
      return signalPassFailure();
    }
    KernelLowering lowering(kernels.front(), module);
    if (failed(lowering.run()))
      return signalPassFailure();
    // Only the gpu.module remains (as after pallas-to-gpu).
    for (Operation &op :
         llvm::make_early_inc_range(module.getBody()->getOperations()))
      if (!isa<mlir::gpu::GPUModuleOp>(op))
        op.erase();
  }
};

} // namespace
