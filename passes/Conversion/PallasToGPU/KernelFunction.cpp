//===- KernelFunction.cpp - pallas-to-gpu: the gpu.module and its kernel -*- C++ -*-===//
//
// The gpu.module and the kernel gpu.func pallas-to-gpu fills: the entry
// name, 32-bit index arithmetic where every array allows it, the
// parameters; and, once the body is emitted, the barriers at its end that
// order nothing.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/DistributeUtils.h"
#include "passes/Conversion/PallasToGPU/KernelSkeleton.h"

#include "mlir/Dialect/DLTI/DLTI.h"

#include <cctype>

using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::gpu;

namespace {

/// A CUDA entry name from the artifact name.
std::string entryName(StringRef name) {
  std::string s;
  for (char c : name)
    s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
    s = "_" + s;
  return s;
}

} // namespace

KernelFunction mlir::pallas::gpu::createKernelFunction(OpBuilder &b,
                                                       ModuleOp module,
                                                       Location loc,
                                                       const CallInfo &info,
                                                       int64_t numThreads) {
  MLIRContext *ctx = b.getContext();
  const GridMapping &mapping = info.mapping;
  int64_t rank = mapping.getRank();
  KernelFunction kf;
  module->setAttr(mlir::gpu::GPUDialect::getContainerModuleAttrName(),
                  b.getUnitAttr());
  kf.entry = entryName(info.name);
  b.setInsertionPointToEnd(module.getBody());
  kf.gpuModule =
      mlir::gpu::GPUModuleOp::create(b, loc, kf.entry + "_kernels");
  // 32-bit index arithmetic when every array has fewer than 2^31 elements
  // (as Triton's default offsets): half the registers for addresses.
  // A symbolic operand's count is bounded by its symbols' declared max.
  auto elements = [&](RankedTensorType t,
                      ArrayRef<std::optional<LinearSize>> dims)
      -> std::optional<int64_t> {
    if (t.hasStaticShape())
      return t.getNumElements();
    int64_t n = 1;
    for (int64_t d = 0; d < t.getRank(); ++d) {
      std::optional<int64_t> size = t.isDynamicDim(d)
                                        ? dims[d]->highest(info.symbols)
                                        : t.getDimSize(d);
      if (!size || llvm::MulOverflow(n, std::max<int64_t>(*size, 0), n))
        return std::nullopt;
    }
    return n;
  };
  bool smallArrays = true;
  for (auto [i, t] : llvm::enumerate(info.inputs)) {
    auto n = elements(t, t.hasStaticShape() ? ArrayRef<std::optional<LinearSize>>()
                                            : ArrayRef(info.inputDims[i]));
    smallArrays &= n && *n < (int64_t(1) << 31);
  }
  for (auto [j, t] : llvm::enumerate(info.outputs)) {
    auto n = elements(t, t.hasStaticShape() ? ArrayRef<std::optional<LinearSize>>()
                                            : ArrayRef(info.outputDims[j]));
    smallArrays &= n && *n < (int64_t(1) << 31);
  }
  if (smallArrays)
    kf.gpuModule->setAttr(
        DLTIDialect::kDataLayoutAttrName,
        DataLayoutSpecAttr::get(
            ctx, {DataLayoutEntryAttr::get(IndexType::get(ctx),
                                           b.getI32IntegerAttr(32))}));
  b.setInsertionPointToStart(kf.gpuModule.getBody());
  SmallVector<Type> params;
  // A symbolic operand's argument is a pointer (the bare-pointer calling
  // convention takes static memrefs: its dynamic dims are given as 1); the
  // kernel reinterprets it at the actual sizes (emitOperandMemrefs).
  for (RankedTensorType t :
       llvm::concat<const RankedTensorType>(info.inputs, info.outputs)) {
    SmallVector<int64_t> shape(t.getShape());
    for (int64_t &d : shape)
      if (ShapedType::isDynamic(d))
        d = 1;
    params.push_back(MemRefType::get(shape, t.getElementType()));
  }
  for (int64_t a = 0; a < rank; ++a)
    if (mapping.getGrid()[a] < 0) {
      kf.dynamicAxes.push_back(a);
      params.push_back(b.getI32Type());
    }
  // One i32 per symbol, after the grid bounds (the launcher checks that
  // each value fits).
  kf.firstSymbolArg = params.size();
  for (size_t s = 0; s < info.symbols.size(); ++s)
    params.push_back(b.getI32Type());
  kf.func = mlir::gpu::GPUFuncOp::create(b, loc, kf.entry,
                                         b.getFunctionType(params, {}));
  kf.func->setAttr(mlir::gpu::GPUDialect::getKernelFuncAttrName(),
                   b.getUnitAttr());
  kf.func.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr(
      {static_cast<int32_t>(numThreads), 1, 1}));
  return kf;
}

void mlir::pallas::gpu::emitOperandMemrefs(OpBuilder &b, Location loc,
                                          const CallInfo &info,
                                          KernelFunction &kf) {
  Block &body = kf.func.getBody().front();
  SmallVector<Value> symbols;
  for (size_t s = 0; s < info.symbols.size(); ++s)
    symbols.push_back(arith::IndexCastUIOp::create(
        b, loc, b.getIndexType(), body.getArgument(kf.firstSymbolArg + s)));
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  int64_t numIn = info.numInputs();
  int64_t numOperands = numIn + info.numOutputs();
  for (int64_t i = 0; i < numOperands; ++i) {
    Value arg = body.getArgument(i);
    RankedTensorType t =
        i < numIn ? info.inputs[i] : info.outputs[i - numIn];
    kf.dynSizes.emplace_back();
    kf.dynSizeDivisor.emplace_back();
    if (t.hasStaticShape()) {
      kf.operands.push_back(arg);
      continue;
    }
    ArrayRef<std::optional<LinearSize>> dims =
        i < numIn ? info.inputDims[i] : info.outputDims[i - numIn];
    int64_t rank = t.getRank();
    SmallVector<OpFoldResult> sizes(rank), strides(rank);
    SmallVector<Value> dyn(rank);
    SmallVector<int64_t> divs(rank, 1);
    for (int64_t d = 0; d < rank; ++d) {
      if (!dims[d]) {
        sizes[d] = b.getIndexAttr(t.getDimSize(d));
        continue;
      }
      Value v;
      auto add = [&](Value x) {
        v = v ? arith::AddIOp::create(b, loc, v, x).getResult() : x;
      };
      for (auto [s, c] : dims[d]->terms)
        add(c == 1 ? symbols[s]
                   : arith::MulIOp::create(b, loc, symbols[s], cst(c))
                         .getResult());
      if (dims[d]->constant || !v)
        add(cst(dims[d]->constant));
      dyn[d] = v;
      divs[d] = dims[d]->knownDivisor(info.symbols);
      sizes[d] = v;
    }
    // Row-major strides: a constant while every later dimension is static
    // (as the identity layout of the result type has them).
    int64_t staticStride = 1;
    Value dynStride;
    for (int64_t d = rank - 1; d >= 0; --d) {
      strides[d] = dynStride ? OpFoldResult(dynStride)
                             : OpFoldResult(b.getIndexAttr(staticStride));
      if (dyn[d]) {
        Value cur = dynStride ? dynStride : cst(staticStride);
        dynStride = arith::MulIOp::create(b, loc, cur, dyn[d]);
      } else if (dynStride) {
        dynStride = arith::MulIOp::create(b, loc, dynStride,
                                          cst(t.getDimSize(d)));
      } else {
        staticStride *= t.getDimSize(d);
      }
    }
    auto type = MemRefType::get(t.getShape(), t.getElementType());
    kf.operands.push_back(memref::ReinterpretCastOp::create(
        b, loc, type, arg, b.getIndexAttr(0), sizes, strides));
    kf.dynSizes.back() = dyn;
    kf.dynSizeDivisor.back() = divs;
  }
}

//===----------------------------------------------------------------------===//
// The end of the kernel
//===----------------------------------------------------------------------===//

/// Whether `memref` is in shared memory (workgroup address space).
static bool isWorkgroupMemref(Value memref) {
  auto t = dyn_cast<MemRefType>(memref.getType());
  return t && mlir::gpu::GPUDialect::hasWorkgroupMemoryAddressSpace(t);
}

/// Whether `op` (and what it holds) touches no shared memory and has no
/// barrier: pure work and accesses of global memory only.
static bool touchesOnlyGlobalMemory(Operation *op) {
  bool ok = true;
  op->walk([&](Operation *inner) {
    if (isa<mlir::gpu::BarrierOp>(inner)) {
      ok = false;
      return WalkResult::interrupt();
    }
    if (inner->hasTrait<OpTrait::IsTerminator>() || isMemoryEffectFree(inner) ||
        isa<scf::ForOp, scf::IfOp, scf::WhileOp>(inner))
      return WalkResult::advance();
    Value memref = mlir::pallas::gpu::detail::accessedMemref(inner);
    if (!memref || isWorkgroupMemref(memref)) {
      ok = false;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return ok;
}

/// Whether `op` (and what it holds) writes no memory but shared memory.
static bool writesOnlySharedMemory(Operation *op) {
  bool ok = true;
  op->walk([&](Operation *inner) {
    if (inner->hasTrait<OpTrait::IsTerminator>() || isMemoryEffectFree(inner) ||
        isa<scf::ForOp, scf::IfOp, scf::WhileOp, mlir::gpu::BarrierOp,
            memref::LoadOp, vector::LoadOp, vector::MaskedLoadOp>(inner))
      return WalkResult::advance();
    if (auto st = dyn_cast<memref::StoreOp>(inner);
        st && isWorkgroupMemref(st.getMemref()))
      return WalkResult::advance();
    if (auto st = dyn_cast<vector::StoreOp>(inner);
        st && isWorkgroupMemref(st.getBase()))
      return WalkResult::advance();
    ok = false;
    return WalkResult::interrupt();
  });
  return ok;
}

/// Barriers at the end of the kernel (the last reduction's, before its
/// slots could be written again) order nothing when no shared memory is
/// touched after them and no other memory was written before them: they
/// are dropped. Only the kernel's own block is looked at (a barrier in a
/// loop orders the next iteration).
void mlir::pallas::gpu::dropTrailingBarriers(Block &body) {
  SmallVector<mlir::gpu::BarrierOp> trailing;
  for (Operation &op : llvm::reverse(body)) {
    if (auto bar = dyn_cast<mlir::gpu::BarrierOp>(op)) {
      trailing.push_back(bar);
      continue;
    }
    if (!touchesOnlyGlobalMemory(&op))
      break;
  }
  for (mlir::gpu::BarrierOp bar : trailing) {
    bool safe = true;
    for (Operation *prev = bar->getPrevNode(); prev && safe;
         prev = prev->getPrevNode())
      safe = writesOnlySharedMemory(prev);
    if (safe)
      bar->erase();
  }
}
