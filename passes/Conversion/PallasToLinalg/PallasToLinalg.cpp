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
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <set>

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
  // A packed i4/i2 ref is always a dense block: the host runtime copies its
  // blocks packed (pallas-emulate-packed-integers), since its rows need not
  // start on a byte boundary of the array.
  Type element = ref.getElementType();
  bool packed = element.isInteger() && element.getIntOrFloatBitWidth() < 8 &&
                !element.isInteger(1);
  if (!strided || packed)
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
  SmallVector<std::string> kernelSymbols(KernelOp kernel, ModuleOp module);
  FailureOr<func::FuncOp> convertKernel(KernelOp kernel, int64_t numAxes,
                                        ArrayRef<std::string> symbols);
  LogicalResult lowerSymbolValue(SymbolValueOp op, FuncState &state,
                                 RewriterBase &rewriter);
  LogicalResult convertIndexMap(func::FuncOp func);
  LogicalResult lowerBody(FuncState &state, ModuleOp module);
};

} // namespace

LogicalResult PallasToLinalgPass::checkSupported(ModuleOp module) {
  // The CPU runs one device (the GPU targets refuse these before this pass).
  if (failed(refuseCrossDeviceOps(module, "cpu")))
    return failure();
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

SmallVector<std::string>
PallasToLinalgPass::kernelSymbols(KernelOp kernel, ModuleOp module) {
  SmallVector<std::string> names;
  bool found = false;
  module.walk([&](CallOp call) {
    if (call.getKernel() != kernel.getSymName() || found)
      return;
    found = true;
    if (DictionaryAttr sym = call.getSymbolicAttr())
      if (auto symbols = sym.getAs<DictionaryAttr>("symbols"))
        for (NamedAttribute s : symbols)
          names.push_back(s.getName().getValue().str());
  });
  if (found)
    return names;
  // No call: the symbols recorded by whoever replaced it (pallasc run's
  // host program), else those the kernel reads.
  if (auto recorded = kernel->getAttrOfType<ArrayAttr>(kKernelSymbolsAttrName)) {
    for (Attribute a : recorded)
      if (auto str = dyn_cast<StringAttr>(a))
        names.push_back(str.getValue().str());
    return names;
  }
  std::set<std::string> read;
  kernel.walk([&](SymbolValueOp op) { read.insert(op.getSymbol().str()); });
  names.assign(read.begin(), read.end());
  return names;
}

FailureOr<func::FuncOp>
PallasToLinalgPass::convertKernel(KernelOp kernel, int64_t numAxes,
                                  ArrayRef<std::string> symbols) {
  OpBuilder b(kernel);
  SmallVector<Type> argTypes(2 * numAxes, b.getI32Type());
  for (Type t : kernel.getArgumentTypes())
    argTypes.push_back(memrefTypeOf(cast<RefType>(t), stridedRefs));
  if (symbolArgs)
    argTypes.append(symbols.size(), b.getI64Type());
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
  if (!symbols.empty()) {
    SmallVector<Attribute> names;
    for (const std::string &s : symbols)
      names.push_back(b.getStringAttr(s));
    func->setAttr(kKernelSymbolsAttrName, b.getArrayAttr(names));
  }
  if (symbolArgs)
    for (size_t s = 0; s < symbols.size(); ++s)
      entry.addArgument(b.getI64Type(), kernel.getLoc());
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

LogicalResult PallasToLinalgPass::lowerSymbolValue(SymbolValueOp op,
                                                   FuncState &state,
                                                   RewriterBase &rewriter) {
  if (state.numAxes < 0)
    return op.emitOpError() << "is only meaningful inside a kernel";
  const auto *it = llvm::find(state.symbols, op.getSymbol().str());
  if (it == state.symbols.end()) {
    std::string declared = llvm::join(state.symbols, ", ");
    return op.emitOpError() << "reads symbol '" << op.getSymbol()
                            << "', which the kernel's call does not declare"
                            << (declared.empty() ? std::string(" (it has none)")
                                                 : " (its symbols: " +
                                                       declared + ")");
  }
  // Without `symbol-args` the op stays, marked with its symbol's position
  // among the call's (sorted) symbols: the GPU pipelines bind it to that
  // kernel parameter after pallas-to-gpu (pallas-gpu-bind-symbols).
  if (state.firstSymbolArg < 0) {
    op->setAttr(kSymbolIndexAttrName,
                rewriter.getI64IntegerAttr(it - state.symbols.begin()));
    return success();
  }
  Value arg = state.func.getArgument(
      state.firstSymbolArg + static_cast<int64_t>(it - state.symbols.begin()));
  Location loc = op.getLoc();
  Type type = op.getType();
  Value v = arg;
  if (type.isIndex())
    v = arith::IndexCastOp::create(rewriter, loc, type, arg);
  else if (type != arg.getType())
    v = arith::TruncIOp::create(rewriter, loc, type, arg);
  rewriter.replaceOp(op, v);
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
            .Case<SymbolValueOp>([&](SymbolValueOp sv) {
              return lowerSymbolValue(sv, state, rewriter);
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
  struct KernelInfo {
    KernelOp kernel;
    int64_t numAxes;
    SmallVector<std::string> symbols;
  };
  SmallVector<KernelInfo> kernels;
  for (KernelOp kernel : module.getOps<KernelOp>())
    kernels.push_back({kernel, numKernelAxes(kernel, module),
                       kernelSymbols(kernel, module)});

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
  for (KernelInfo &k : kernels) {
    FailureOr<func::FuncOp> func =
        convertKernel(k.kernel, k.numAxes, k.symbols);
    if (failed(func))
      return signalPassFailure();
    FuncState state{*func, k.numAxes, {}};
    state.symbols = k.symbols;
    if (symbolArgs)
      state.firstSymbolArg =
          static_cast<int64_t>(func->getNumArguments() - k.symbols.size());
    states.push_back(std::move(state));
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
