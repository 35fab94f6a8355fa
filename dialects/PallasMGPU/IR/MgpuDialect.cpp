//===- MgpuDialect.cpp - The pallas_mgpu dialect (Mosaic GPU) -*- C++ -*-===//

#include "dialects/PallasMGPU/IR/MgpuDialect.h"

#include "dialects/Pallas/IR/KernelSyntax.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::pallas_mgpu;

#include "dialects/PallasMGPU/IR/MgpuOpsDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/PallasMGPU/IR/MgpuOpsAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/PallasMGPU/IR/MgpuOpsTypes.cpp.inc"

#define GET_OP_CLASSES
#include "dialects/PallasMGPU/IR/MgpuOps.cpp.inc"

void MgpuDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/PallasMGPU/IR/MgpuOpsAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/PallasMGPU/IR/MgpuOpsTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/PallasMGPU/IR/MgpuOps.cpp.inc"
      >();
}

bool mlir::pallas_mgpu::isSmem(Type type) {
  auto m = dyn_cast<MemRefType>(type);
  return m && isa_and_nonnull<SmemAttr>(m.getMemorySpace());
}

bool mlir::pallas_mgpu::isAcc(Type type) {
  auto m = dyn_cast<MemRefType>(type);
  return m && isa_and_nonnull<AccAttr>(m.getMemorySpace());
}

bool mlir::pallas_mgpu::isGmem(Type type) {
  auto m = dyn_cast<MemRefType>(type);
  return m && !m.getMemorySpace();
}

//===----------------------------------------------------------------------===//
// Attributes and types
//===----------------------------------------------------------------------===//

LogicalResult SmemAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<int64_t> tiling, int64_t swizzle) {
  if (!llvm::is_contained(ArrayRef<int64_t>{0, 16, 32, 64, 128}, swizzle))
    return emitError() << "swizzle " << swizzle
                       << " is not one of 0, 16, 32, 64, 128 (bytes)";
  if (llvm::any_of(tiling, [](int64_t t) { return t <= 0; }))
    return emitError() << "tiling sizes must be positive";
  if (swizzle && tiling.empty())
    return emitError() << "a swizzled buffer needs a tiling";
  return success();
}

static constexpr llvm::StringLiteral kLayouts[] = {
    "wgmma", "wgmma_row", "wgmma_col", "wgmma_transposed", "wg_splat",
    "wg_strided", "tiled"};

LogicalResult LayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef name, ArrayRef<int64_t> reduced) {
  if (!llvm::is_contained(kLayouts, name))
    return emitError() << "unknown register layout '" << name
                       << "' (expected wgmma, wgmma_row, wgmma_col, "
                          "wgmma_transposed, wg_splat, wg_strided or tiled)";
  if (llvm::any_of(reduced, [](int64_t a) { return a < 0; }))
    return emitError() << "reduced axes must be non-negative";
  return success();
}

LogicalResult BarrierType::verify(function_ref<InFlightDiagnostic()> emitError,
                                  int64_t num, int64_t arrivals) {
  if (num <= 0)
    return emitError() << "a barrier array holds at least one barrier, got "
                       << num;
  if (arrivals <= 0)
    return emitError() << "a barrier expects at least one arrival, got "
                       << arrivals;
  return success();
}

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

/// Bytes per element; 0 for an element type that is not a scalar.
static int64_t elementBytes(Type t) {
  if (t.isIntOrFloat())
    return std::max<int64_t>(1, t.getIntOrFloatBitWidth() / 8);
  return t.isIndex() ? 8 : 0;
}

static LogicalResult verifyScalarElements(Operation *op, StringRef what,
                                          MemRefType t) {
  if (!elementBytes(t.getElementType()))
    return op->emitOpError() << what << " " << t
                             << " must hold integers or floats";
  return success();
}

/// The shape in memory order: a transposed view (`memref.transpose`) has
/// its dimensions ordered by decreasing stride.
static SmallVector<int64_t> physicalShape(MemRefType t) {
  SmallVector<int64_t> strides;
  int64_t offset;
  SmallVector<int64_t> shape(t.getShape());
  if (failed(t.getStridesAndOffset(strides, offset)))
    return shape;
  SmallVector<int64_t> order = llvm::to_vector(llvm::seq<int64_t>(0, t.getRank()));
  llvm::stable_sort(order,
                    [&](int64_t a, int64_t b) { return strides[a] > strides[b]; });
  return llvm::map_to_vector(order, [&](int64_t d) { return shape[d]; });
}

/// The shape must be static and its trailing dimensions in memory order
/// divisible by the tiling; a swizzle spans the innermost tile.
static LogicalResult verifySmem(Operation *op, StringRef what, MemRefType t) {
  auto space = cast<SmemAttr>(t.getMemorySpace());
  if (!t.hasStaticShape())
    return op->emitOpError() << what << " must have a static shape";
  if (failed(verifyScalarElements(op, what, t)))
    return failure();
  ArrayRef<int64_t> tiling = space.getTiling();
  if (tiling.size() > static_cast<size_t>(t.getRank()))
    return op->emitOpError()
           << what << " has a tiling of rank " << tiling.size()
           << " for a buffer of rank " << t.getRank();
  SmallVector<int64_t> physical = physicalShape(t);
  ArrayRef<int64_t> trailing = ArrayRef(physical).take_back(tiling.size());
  for (auto [d, tile] : llvm::zip(trailing, tiling))
    if (d % tile)
      return op->emitOpError()
             << what << " of shape " << t << " is not divisible by its tiling ["
             << llvm::make_range(tiling.begin(), tiling.end()) << "]";
  if (int64_t swizzle = space.getSwizzle()) {
    int64_t inner = tiling.back() * elementBytes(t.getElementType());
    if (inner != swizzle)
      return op->emitOpError()
             << what << ": a " << swizzle << "-byte swizzle needs an innermost "
             << "tile of " << swizzle << " bytes, got " << inner;
  }
  return success();
}

/// TMA (cp.async.bulk.tensor) addresses boxes of rank 1-5, at most 256
/// elements per dimension, whose innermost extent is a multiple of 16 bytes
/// and is contiguous in memory.
static LogicalResult verifyTmaBox(Operation *op, MemRefType gmem,
                                  MemRefType smem) {
  if (gmem.getShape() != smem.getShape() ||
      gmem.getElementType() != smem.getElementType())
    return op->emitOpError() << "copies " << gmem << " and " << smem
                             << ": the shapes and element types must match";
  if (failed(verifyScalarElements(op, "the global-memory side", gmem)))
    return failure();
  if (gmem.getRank() < 1 || gmem.getRank() > 5)
    return op->emitOpError() << "a TMA box has rank 1 to 5, got "
                             << gmem.getRank();
  for (auto [i, d] : llvm::enumerate(gmem.getShape()))
    if (d > 256 || d <= 0)
      return op->emitOpError() << "TMA box dimension " << i << " is " << d
                               << "; TMA addresses 1 to 256 elements per "
                                  "dimension";
  int64_t innerBytes =
      gmem.getShape().back() * elementBytes(gmem.getElementType());
  if (innerBytes % 16)
    return op->emitOpError() << "the innermost TMA box extent is "
                             << innerBytes
                             << " bytes; TMA needs a multiple of 16 bytes";
  for (MemRefType t : {gmem, smem}) {
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(t.getStridesAndOffset(strides, offset)) || strides.back() != 1)
      return op->emitOpError() << t << " is not contiguous in its innermost "
                               << "dimension, which TMA requires";
  }
  auto space = cast<SmemAttr>(smem.getMemorySpace());
  if (int64_t swizzle = space.getSwizzle())
    if (innerBytes % swizzle && innerBytes > swizzle)
      return op->emitOpError() << "the innermost TMA box extent (" << innerBytes
                               << " bytes) does not fit the " << swizzle
                               << "-byte swizzle";
  return failure(failed(verifySmem(op, "the shared-memory side", smem)));
}

static KernelOp enclosingKernel(Operation *op) {
  return op->getParentOfType<KernelOp>();
}

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

ParseResult KernelOp::parse(OpAsmParser &parser, OperationState &result) {
  llvm::SMLoc loc = parser.getCurrentLocation();
  if (pallas::parseKernelSyntax<KernelOp>(parser, result))
    return failure();
  if (result.regions.front()->empty())
    return parser.emitError(loc, "a pallas_mgpu.kernel needs a body");
  return success();
}

void KernelOp::print(OpAsmPrinter &p) { pallas::printKernelSyntax(*this, p); }

LogicalResult KernelOp::verify() {
  if (getBody().empty())
    return emitOpError("a pallas_mgpu.kernel needs a body");
  if (!getResultTypes().empty())
    return emitOpError("a kernel returns nothing; it writes its output refs");
  for (auto [i, type] : llvm::enumerate(getArgumentTypes()))
    if (!isGmem(type) || !cast<MemRefType>(type).hasStaticShape())
      return emitOpError() << "argument #" << i << " has type " << type
                           << "; kernel arguments are statically shaped "
                              "memrefs in global memory";
  int64_t numOutputs = getNumOutputsAttr().getInt();
  if (numOutputs < 0 ||
      numOutputs > static_cast<int64_t>(getArgumentTypes().size()))
    return emitOpError() << "num_outputs " << numOutputs
                         << " exceeds the " << getArgumentTypes().size()
                         << " arguments";
  if (getGrid().size() != getGridNames().size() && !getGridNames().empty())
    return emitOpError("grid_names must name every grid axis");
  if (getCluster().size() != getClusterNames().size() &&
      !getClusterNames().empty())
    return emitOpError("cluster_names must name every cluster axis");
  for (int64_t g : llvm::concat<const int64_t>(getGrid(), getCluster()))
    if (g <= 0)
      return emitOpError("grid and cluster sizes must be positive");
  if (getNumThreadsAttr().getInt() < 1)
    return emitOpError("num_threads must be positive");
  if (getBody().front().getNumArguments() != getArgumentTypes().size())
    return emitOpError("entry block arguments do not match the signature");
  return success();
}

//===----------------------------------------------------------------------===//
// Axes and hints
//===----------------------------------------------------------------------===//

LogicalResult AxisIndexOp::verify() {
  KernelOp k = enclosingKernel(*this);
  if (!k)
    return emitOpError("must be inside a pallas_mgpu.kernel");
  StringRef axis = getAxis();
  auto named = [&](ArrayAttr names) {
    return llvm::any_of(names, [&](Attribute a) {
      return cast<StringAttr>(a).getValue() == axis;
    });
  };
  if (named(k.getGridNames()) || named(k.getClusterNames()) ||
      (k.getThreadName() && *k.getThreadName() == axis))
    return success();
  return emitOpError() << "axis '" << axis
                       << "' is not a grid, cluster or thread axis of @"
                       << k.getSymName();
}

LogicalResult SetMaxRegistersOp::verify() {
  if (getAction() != "increase" && getAction() != "decrease")
    return emitOpError() << "action must be 'increase' or 'decrease', got '"
                         << getAction() << "'";
  int64_t n = getCountAttr().getInt();
  if (n < 24 || n > 256 || n % 8)
    return emitOpError() << "register count " << n
                         << " must be a multiple of 8 in [24, 256] "
                            "(setmaxnreg)";
  return success();
}

//===----------------------------------------------------------------------===//
// Allocations
//===----------------------------------------------------------------------===//

LogicalResult AllocSmemOp::verify() {
  return verifySmem(*this, "the buffer", getResult().getType());
}

LogicalResult AllocAccOp::verify() {
  MemRefType t = getResult().getType();
  if (Value init = getInit()) {
    auto it = cast<RankedTensorType>(init.getType());
    if (it.getShape() != t.getShape() ||
        it.getElementType() != t.getElementType())
      return emitOpError() << "initial value " << it
                           << " does not match the accumulator " << t;
  }
  Type e = t.getElementType();
  if (t.getRank() != 2 || !t.hasStaticShape())
    return emitOpError() << "an accumulator is a static 2-D array, got " << t;
  if (!e.isF32() && !e.isF16() && !e.isSignlessInteger(32))
    return emitOpError() << "an accumulator holds f32, f16 or i32, got " << e;
  if (t.getDimSize(0) % 64)
    return emitOpError() << "accumulator rows (" << t.getDimSize(0)
                         << ") must be a multiple of 64 (one warpgroup)";
  if (t.getDimSize(1) % 8 || t.getDimSize(1) > 256)
    return emitOpError() << "accumulator columns (" << t.getDimSize(1)
                         << ") must be a multiple of 8, at most 256";
  return success();
}

//===----------------------------------------------------------------------===//
// Barriers
//===----------------------------------------------------------------------===//

LogicalResult AllocBarriersOp::verify() {
  std::optional<ArrayAttr> axes = getCollectiveAxes();
  if (!axes)
    return success();
  KernelOp k = enclosingKernel(*this);
  if (!k)
    return emitOpError("must be inside a pallas_mgpu.kernel");
  if (axes->size() != 1)
    return emitOpError() << "cluster barriers over " << axes->size()
                         << " axes are not supported; collective_axes names "
                            "one cluster axis";
  StringRef axis = cast<StringAttr>((*axes)[0]).getValue();
  if (!llvm::any_of(k.getClusterNames(), [&](Attribute a) {
        return cast<StringAttr>(a).getValue() == axis;
      }))
    return emitOpError() << "collective axis '" << axis
                         << "' is not a cluster axis of @" << k.getSymName();
  return success();
}

LogicalResult BarrierWaitOp::verify() {
  // Something must arrive: a barrier_arrive or a TMA copy completing on
  // the same barriers.
  for (Operation *user : getBarriers().getUsers())
    if (isa<BarrierArriveOp, CopyGmemToSmemOp>(user))
      return success();
  return emitOpError()
         << "waits on barriers that nothing arrives on (no barrier_arrive "
            "and no copy_gmem_to_smem completes on them)";
}

//===----------------------------------------------------------------------===//
// Copies
//===----------------------------------------------------------------------===//

LogicalResult CopyGmemToSmemOp::verify() {
  return verifyTmaBox(*this, getSrc().getType(), getDst().getType());
}

LogicalResult CopySmemToGmemOp::verify() {
  return verifyTmaBox(*this, getDst().getType(), getSrc().getType());
}

/// The wait ops' `n`: how many groups they leave in flight.
static LogicalResult verifyGroupsLeft(Operation *op, IntegerAttr n) {
  if (n.getInt() < 0)
    return op->emitOpError(
        "the number of groups left in flight is non-negative");
  return success();
}

LogicalResult WaitSmemToGmemOp::verify() {
  return verifyGroupsLeft(*this, getNAttr());
}

//===----------------------------------------------------------------------===//
// wgmma
//===----------------------------------------------------------------------===//

/// A wgmma operand: a 2-D shared-memory tile, swizzled 32, 64 or 128 bytes
/// with the tiling wgmma reads ([8, swizzle / element bytes]).
static LogicalResult verifyWgmmaOperand(Operation *op, StringRef what,
                                        MemRefType t) {
  if (t.getRank() != 2)
    return op->emitOpError() << "wgmma operand " << what
                             << " must be a 2-D tile, got " << t;
  if (failed(verifySmem(op, ("wgmma operand " + what).str(), t)))
    return failure();
  auto space = cast<SmemAttr>(t.getMemorySpace());
  int64_t swizzle = space.getSwizzle();
  int64_t bytes = elementBytes(t.getElementType());
  ArrayRef<int64_t> tiling = space.getTiling();
  if (swizzle < 32 || tiling.size() != 2 || tiling[0] != 8 ||
      tiling[1] * bytes != swizzle)
    return op->emitOpError()
           << "wgmma operand " << what << " " << t
           << " is not in a layout wgmma can read: expected a 32, 64 or "
              "128-byte swizzle with tiling [8, swizzle / element bytes]";
  return success();
}

LogicalResult WgmmaOp::verify() {
  MemRefType acc = getAcc().getType(), b = getB().getType();
  // `a` is a shared-memory tile or a value in registers (the wgmma layout).
  auto a = cast<ShapedType>(getA().getType());
  if (auto am = dyn_cast<MemRefType>(a)) {
    if (failed(verifyWgmmaOperand(*this, "a", am)))
      return failure();
  } else if (a.getRank() != 2) {
    return emitOpError() << "wgmma operand a must be a 2-D tile, got " << a;
  }
  if (failed(verifyWgmmaOperand(*this, "b", b)))
    return failure();
  if (a.getElementType() != b.getElementType())
    return emitOpError() << "operands a and b have different element types ("
                         << a.getElementType() << ", " << b.getElementType()
                         << ")";
  Type e = a.getElementType();
  if (!e.isF16() && !e.isBF16() && !e.isF32() && !e.isSignlessInteger(8) &&
      !isa<Float8E4M3FNType, Float8E5M2Type>(e))
    return emitOpError() << "wgmma takes f16, bf16, f32 (tf32), f8 or i8 "
                            "operands, got "
                         << e;
  if (acc.getRank() != 2 || a.getDimSize(0) != acc.getDimSize(0) ||
      b.getDimSize(1) != acc.getDimSize(1) ||
      a.getDimSize(1) != b.getDimSize(0))
    return emitOpError() << "shapes do not compose: acc " << acc << ", a " << a
                         << ", b " << b << " (expected MxN += MxK @ KxN)";
  return success();
}

LogicalResult WgmmaWaitOp::verify() {
  return verifyGroupsLeft(*this, getNAttr());
}

//===----------------------------------------------------------------------===//
// Register values
//===----------------------------------------------------------------------===//

static LogicalResult verifySameShape(Operation *op, MemRefType ref,
                                     RankedTensorType value) {
  if (ref.getShape() != value.getShape() ||
      ref.getElementType() != value.getElementType())
    return op->emitOpError() << "value type " << value
                             << " does not match the ref " << ref;
  return success();
}

LogicalResult AccReadOp::verify() {
  return verifySameShape(*this, getAcc().getType(), getResult().getType());
}

LogicalResult LoadOp::verify() {
  if (failed(verifySmem(*this, "the ref", getRef().getType())))
    return failure();
  return verifySameShape(*this, getRef().getType(), getResult().getType());
}

LogicalResult StoreOp::verify() {
  if (failed(verifySmem(*this, "the ref", getRef().getType())))
    return failure();
  return verifySameShape(*this, getRef().getType(), getValue().getType());
}

LogicalResult LayoutCastOp::verify() {
  auto rank = getValue().getType().getRank();
  for (int64_t a : getLayout().getReduced())
    if (a >= rank + static_cast<int64_t>(getLayout().getReduced().size()))
      return emitOpError() << "reduced axis " << a << " is out of range";
  return success();
}
