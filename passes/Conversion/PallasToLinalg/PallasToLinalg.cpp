//===- PallasToLinalg.cpp - pallas-to-linalg --------------------*- C++ -*-===//
//
// The pass itself: kernels and index maps become func.funcs over memrefs,
// then every pallas op in them is lowered in program order (operands first)
// by the helpers in RefAccess.cpp, BlockOps.cpp and DebugPrint.cpp.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToLinalg/Lowering.h"
#include "dialects/Pallas/IR/GridMapping.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#define DEBUG_TYPE "pallas-to-linalg"

namespace mlir::pallas {
#define GEN_PASS_DEF_PALLASTOLINALG
#include "passes/Conversion/Passes.h.inc"
} // namespace mlir::pallas

using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::lowering;

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

Value lowering::emptyTensor(OpBuilder &b, Location loc,
                            RankedTensorType type) {
  return tensor::EmptyOp::create(b, loc, type.getShape(),
                                 type.getElementType());
}

Value lowering::convertElementType(OpBuilder &b, Location loc, Value value,
                                   Type to) {
  Type from = getElementTypeOf(value.getType());
  if (from == to)
    return value;
  Type resultType = to;
  if (auto t = dyn_cast<RankedTensorType>(value.getType()))
    resultType = t.clone(to);
  auto fromF = dyn_cast<FloatType>(from), toF = dyn_cast<FloatType>(to);
  if (fromF && toF) {
    if (toF.getWidth() > fromF.getWidth() ||
        (toF.getWidth() == fromF.getWidth() && toF.isF32()))
      return arith::ExtFOp::create(b, loc, resultType, value);
    return arith::TruncFOp::create(b, loc, resultType, value);
  }
  if (fromF)
    return arith::FPToSIOp::create(b, loc, resultType, value);
  if (toF)
    return arith::SIToFPOp::create(b, loc, resultType, value);
  if (to.getIntOrFloatBitWidth() > from.getIntOrFloatBitWidth())
    return arith::ExtSIOp::create(b, loc, resultType, value);
  return arith::TruncIOp::create(b, loc, resultType, value);
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {

/// True for ops that write through their ref operand.
bool writesRef(Operation *op) {
  return isa<StoreOp, SwapOp, AtomicRMWOp, AtomicCASOp>(op);
}

/// The ref an op writes, or null.
Value writtenRef(Operation *op) {
  if (writesRef(op))
    return op->getOperand(0);
  if (auto dma = dyn_cast<pallas::DmaStartOp>(op))
    return dma.getDst();
  return Value();
}

/// The memref type a ref lowers to: identity layout, or fully dynamic
/// strides and offset.
MemRefType memrefTypeOf(RefType ref, bool strided) {
  if (!strided)
    return MemRefType::get(ref.getShape(), ref.getElementType());
  SmallVector<int64_t> strides(ref.getRank(), ShapedType::kDynamic);
  auto layout = StridedLayoutAttr::get(ref.getContext(), ShapedType::kDynamic,
                                       strides);
  return MemRefType::get(ref.getShape(), ref.getElementType(), layout);
}

struct PallasToLinalgPass
    : public mlir::pallas::impl::PallasToLinalgBase<PallasToLinalgPass> {
  using PallasToLinalgBase::PallasToLinalgBase;
  void runOnOperation() override;

private:
  LogicalResult checkSupported(ModuleOp module);
  int64_t numKernelAxes(KernelOp kernel, ModuleOp module);
  FailureOr<func::FuncOp> convertKernel(KernelOp kernel, int64_t numAxes);
  LogicalResult convertIndexMap(func::FuncOp func);
  LogicalResult lowerBody(FuncState &state, ModuleOp module);
};

} // namespace

LogicalResult PallasToLinalgPass::checkSupported(ModuleOp module) {
  WalkResult r = module.walk([&](Operation *op) {
    if (isa<GetGlobalOp>(op)) {
      op->emitOpError() << "reads a closed-over ref; run "
                           "pallas-discharge-state before pallas-to-linalg";
      return WalkResult::interrupt();
    }
    if (isa<HiPackOp, HiUnpackOp>(op)) {
      op->emitOpError()
          << "uses a hi type; run pallas-hi-to-lo before pallas-to-linalg";
      return WalkResult::interrupt();
    }
    if (auto kernel = dyn_cast<KernelOp>(op)) {
      for (auto [i, t] : llvm::enumerate(kernel.getArgumentTypes())) {
        auto ref = dyn_cast<RefType>(t);
        if (!ref) {
          kernel.emitOpError()
              << "argument #" << i << " has type " << t
              << "; run pallas-hi-to-lo before pallas-to-linalg";
          return WalkResult::interrupt();
        }
        // Semaphore refs become plain i32 buffers: DMAs copy at once on
        // the CPU (interpret mode) and signal nothing; local semaphores are
        // counters (Semaphore.cpp).
      }
    }
    return WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}

int64_t PallasToLinalgPass::numKernelAxes(KernelOp kernel, ModuleOp module) {
  int64_t axes = -1;
  module.walk([&](CallOp call) {
    if (call.getKernel() == kernel.getSymName())
      axes = static_cast<int64_t>(
          GridMapping::get(call).getVisibleAxes().size());
  });
  if (axes >= 0)
    return axes;
  // No call: the count recorded on the kernel by whoever replaced its calls
  // (pallasc run's host program), else as many axes as the kernel asks for.
  if (auto recorded = kernel->getAttrOfType<IntegerAttr>(kNumGridAxesAttrName))
    return recorded.getInt();
  axes = 0;
  kernel.walk([&](Operation *op) {
    if (auto p = dyn_cast<ProgramIdOp>(op))
      axes = std::max<int64_t>(axes, p.getAxis() + 1);
    else if (auto n = dyn_cast<NumProgramsOp>(op))
      axes = std::max<int64_t>(axes, n.getAxis() + 1);
  });
  return axes;
}

FailureOr<func::FuncOp> PallasToLinalgPass::convertKernel(KernelOp kernel,
                                                          int64_t numAxes) {
  OpBuilder b(kernel);
  SmallVector<Type> argTypes(2 * numAxes, b.getI32Type());
  for (Type t : kernel.getArgumentTypes())
    argTypes.push_back(memrefTypeOf(cast<RefType>(t), stridedRefs));
  auto func = func::FuncOp::create(b, kernel.getLoc(), kernel.getSymName(),
                                   b.getFunctionType(argTypes, {}));
  func->setAttr(kKernelFuncAttrName, b.getUnitAttr());
  func->setAttr(kNumGridAxesAttrName, b.getI64IntegerAttr(numAxes));

  // Move the body over; the ref block arguments become memrefs and the grid
  // arguments are prepended.
  func.getBody().takeBody(kernel.getBody());
  Block &entry = func.getBody().front();
  for (BlockArgument arg : entry.getArguments())
    arg.setType(memrefTypeOf(cast<RefType>(arg.getType()), stridedRefs));
  for (int64_t i = 0; i < 2 * numAxes; ++i)
    entry.insertArgument(static_cast<unsigned>(i), b.getI32Type(),
                         kernel.getLoc());
  Operation *terminator = entry.getTerminator();
  b.setInsertionPoint(terminator);
  func::ReturnOp::create(b, terminator->getLoc());
  terminator->erase();
  kernel.erase();
  return func;
}

LogicalResult PallasToLinalgPass::convertIndexMap(func::FuncOp func) {
  SmallVector<Type> argTypes;
  for (Type t : func.getArgumentTypes()) {
    if (auto ref = dyn_cast<RefType>(t))
      argTypes.push_back(memrefTypeOf(ref, stridedRefs));
    else
      argTypes.push_back(t);
  }
  if (!func.isExternal())
    for (BlockArgument arg : func.getArguments())
      if (auto ref = dyn_cast<RefType>(arg.getType()))
        arg.setType(memrefTypeOf(ref, stridedRefs));
  func.setFunctionType(
      FunctionType::get(func.getContext(), argTypes, func.getResultTypes()));
  func->setAttr(kIndexMapFuncAttrName, UnitAttr::get(func.getContext()));
  return success();
}

LogicalResult PallasToLinalgPass::lowerBody(FuncState &state,
                                            ModuleOp module) {
  // Refs written anywhere in the function.
  state.func.walk([&](Operation *op) {
    if (Value ref = writtenRef(op))
      state.writtenRefs.insert(ref);
  });

  if (failed(initSemaphores(state)))
    return failure();

  SmallVector<Operation *> ops;
  state.func.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<PallasDialect>(op->getDialect()))
      ops.push_back(op);
  });
  IRRewriter rewriter(state.func.getContext());
  for (Operation *op : ops) {
    rewriter.setInsertionPoint(op);
    LogicalResult result =
        llvm::TypeSwitch<Operation *, LogicalResult>(op)
            .Case<ProgramIdOp, NumProgramsOp>([&](auto gridOp) -> LogicalResult {
              int64_t axis = gridOp.getAxis();
              if (state.numAxes < 0)
                return gridOp.emitOpError()
                       << "is only meaningful inside a kernel";
              if (axis >= state.numAxes)
                return gridOp.emitOpError()
                       << "asks for axis " << axis << " but the kernel sees "
                       << state.numAxes << " grid axes";
              int64_t index =
                  isa<ProgramIdOp>(op) ? axis : state.numAxes + axis;
              rewriter.replaceOp(gridOp, state.func.getArgument(index));
              return success();
            })
            .Case<LoadOp, StoreOp, SwapOp, AtomicRMWOp, AtomicCASOp>(
                [&](Operation *access) {
                  return lowerRefAccess(access, state, rewriter);
                })
            .Case<GatherOp>([&](GatherOp gather) {
              return lowerGather(gather, rewriter);
            })
            .Case<pallas::DmaStartOp, pallas::DmaWaitOp>([&](Operation *dma) {
              return lowerDma(dma, state, rewriter);
            })
            .Case<SemaphoreSignalOp, SemaphoreWaitOp, SemaphoreReadOp>(
                [&](Operation *sem) {
                  return lowerSemaphore(sem, module, rewriter);
                })
            .Case<DebugPrintOp>([&](DebugPrintOp print) {
              return lowerDebugPrint(print, module, rewriter);
            })
            .Case<DotOp, ReduceOp, BroadcastInDimOp, IotaOp, ReshapeOp,
                  TransposeOp, SelectOp, CumsumOp, MultipleOfOp,
                  MaxContiguousOp>(
                [&](Operation *blockOp) {
                  return lowerBlockOp(blockOp, rewriter);
                })
            .Default([&](Operation *other) {
              return other->emitOpError()
                     << "has no lowering to linalg";
            });
    if (failed(result))
      return failure();
  }

  // Elementwise arith/math on tensors -> linalg.generic.
  RewritePatternSet patterns(state.func.getContext());
  linalg::populateElementwiseToLinalgConversionPatterns(patterns);
  return applyPatternsGreedily(state.func, std::move(patterns));
}

void PallasToLinalgPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (failed(checkSupported(module)))
    return signalPassFailure();

  // Kernel axis counts come from the calls, which are erased below.
  SmallVector<std::pair<KernelOp, int64_t>> kernels;
  for (KernelOp kernel : module.getOps<KernelOp>())
    kernels.push_back({kernel, numKernelAxes(kernel, module)});

  // The host-side wrapper holding the pallas.call (or marked eliminated by
  // pallas-dce) is not code any backend runs.
  SmallVector<Operation *> toErase;
  for (auto func : module.getOps<func::FuncOp>()) {
    bool hasCall = false;
    func.walk([&](CallOp) { hasCall = true; });
    if (hasCall || func->hasAttr("pallas.eliminated"))
      toErase.push_back(func);
  }
  for (Operation *op : toErase)
    op->erase();

  SmallVector<FuncState> states;
  for (auto [kernel, numAxes] : kernels) {
    FailureOr<func::FuncOp> func = convertKernel(kernel, numAxes);
    if (failed(func))
      return signalPassFailure();
    states.push_back(FuncState{*func, numAxes, {}});
  }
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func->hasAttr(kKernelFuncAttrName))
      continue;
    bool usesPallas =
        llvm::any_of(func.getArgumentTypes(),
                     [](Type t) { return isa<RefType>(t); });
    func.walk([&](Operation *op) {
      if (isa<PallasDialect>(op->getDialect()))
        usesPallas = true;
    });
    if (!usesPallas)
      continue;
    if (failed(convertIndexMap(func)))
      return signalPassFailure();
    states.push_back(FuncState{func, -1, {}});
  }
  for (FuncState &state : states)
    if (failed(lowerBody(state, module)))
      return signalPassFailure();

  // Closed-over refs are gone once discharge-state ran; drop their globals.
  for (auto global : llvm::make_early_inc_range(module.getOps<RefGlobalOp>()))
    global.erase();
}
