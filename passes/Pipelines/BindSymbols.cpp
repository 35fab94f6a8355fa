//===- BindSymbols.cpp - pallas-gpu-bind-symbols ----------------*- C++ -*-===//
//
// A symbol's value in a GPU kernel (docs/dialect.md#symbolic-shapes): each
// pallas.symbol_value pallas-to-gpu copied into a kernel gpu.func becomes
// that kernel's `symbols[s]` parameter, as its launch record lists it.
//
//===----------------------------------------------------------------------===//

#include "passes/Pipelines/Passes.h"

#include "dialects/Pallas/IR/GpuLaunchAttrs.h"
#include "dialects/Pallas/IR/PallasOps.h"
#include "passes/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

#define DEBUG_TYPE "pallas-gpu-bind-symbols"

using namespace mlir;

namespace mlir::pallas {
#define GEN_PASS_DEF_PALLASGPUBINDSYMBOLS
#include "passes/Pipelines/Passes.h.inc"
} // namespace mlir::pallas

namespace {

struct BindSymbolsPass
    : pallas::impl::PallasGpuBindSymbolsBase<BindSymbolsPass> {
  void runOnOperation() final;
};

/// Replaces the symbol values of `func` with its parameters.
LogicalResult bindSymbols(gpu::GPUFuncOp func) {
  auto launch =
      func->getAttrOfType<pallas::GpuLaunchAttr>(pallas::kGpuLaunchAttrName);
  // symbols[s] -> the parameter's position.
  DenseMap<int64_t, unsigned> param;
  if (launch)
    for (auto [i, p] : llvm::enumerate(launch.getParams()))
      if (p.getKind() == pallas::GpuParamKind::Symbol &&
          p.getGroup() == pallas::GpuOperandGroup::Symbols)
        param[p.getIndex()] = static_cast<unsigned>(i);
  IRRewriter rewriter(func.getContext());
  WalkResult r = func.walk([&](pallas::SymbolValueOp op) {
    auto index = op->getAttrOfType<IntegerAttr>(pallas::kSymbolIndexAttrName);
    auto it = index ? param.find(index.getInt()) : param.end();
    if (it == param.end() || it->second >= func.getNumArguments() ||
        !func.getArgument(it->second).getType().isInteger(32)) {
      op.emitOpError() << "reads symbol '" << op.getSymbol()
                       << "', which kernel @" << func.getName()
                       << " has no parameter for"
                       << (index ? "" : " (no pallas.symbol_index: run "
                                        "pallas-to-linalg first)");
      return WalkResult::interrupt();
    }
    rewriter.setInsertionPoint(op);
    Value arg = func.getArgument(it->second);
    Type type = op.getType();
    Value v = arg;
    // Symbols are >= 1: the widening is unsigned.
    if (type.isIndex())
      v = arith::IndexCastUIOp::create(rewriter, op.getLoc(), type, arg);
    else if (type != arg.getType())
      v = arith::ExtUIOp::create(rewriter, op.getLoc(), type, arg);
    rewriter.replaceOp(op, v);
    return WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}

void BindSymbolsPass::runOnOperation() {
  ModuleOp module = getOperation();
  bool ok = true;
  module.walk([&](gpu::GPUFuncOp func) {
    if (failed(bindSymbols(func)))
      ok = false;
  });
  // A symbol value left anywhere else has no GPU lowering.
  module.walk([&](pallas::SymbolValueOp op) {
    if (!op->getParentOfType<gpu::GPUFuncOp>() && ok) {
      op.emitOpError() << "reads symbol '" << op.getSymbol()
                       << "' outside a GPU kernel";
      ok = false;
    }
  });
  if (!ok)
    signalPassFailure();
}

} // namespace
