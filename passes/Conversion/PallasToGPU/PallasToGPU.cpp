//===- PallasToGPU.cpp - pallas-to-gpu --------------------------*- C++ -*-===//
//
// The kernel skeleton: parameters, grid indices from the CUDA block index
// (folded as Pallas' Triton lowering folds them), the in-block loop over
// the axes that must run in order, each operand's block window from its
// index map, scratch in dynamic shared memory; then the distributor
// (Distribute.h) lowers the body.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/Distribute.h"
#include "dialects/Pallas/IR/GridMapping.h"
#include "passes/Utils/IndexMapExpr.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/MathExtras.h"

#define DEBUG_TYPE "pallas-to-gpu"

namespace mlir::pallas {
#define GEN_PASS_DEF_PALLASTOGPU
#include "passes/Conversion/Passes.h.inc"
} // namespace mlir::pallas

using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::gpu;

namespace {

constexpr int64_t kYZLimit = 65535;

/// A CUDA entry name from the artifact name.
std::string entryName(StringRef name) {
  std::string s;
  for (char c : name)
    s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
    s = "_" + s;
  return s;
}

//===----------------------------------------------------------------------===//
// Tensor-level cleanups before distribution
//===----------------------------------------------------------------------===//

/// The input of a linalg.generic that only extends one float block
/// (f16/bf16 -> f32), or null.
Value extendedFrom(Value v) {
  auto g = v.getDefiningOp<linalg::GenericOp>();
  if (!g || g.getNumDpsInputs() != 1 || g->getNumResults() != 1 ||
      g.getNumReductionLoops() != 0 ||
      !llvm::all_of(g.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return Value();
  Block &body = g.getRegion().front();
  if (body.getOperations().size() != 2)
    return Value();
  auto ext = dyn_cast<arith::ExtFOp>(body.front());
  if (!ext || ext.getIn() != body.getArgument(0))
    return Value();
  return g.getDpsInputs()[0];
}

/// matmul(extf(a), extf(b)) -> matmul(a, b) (linalg.matmul extends its
/// operands to the accumulator type itself), looking through transposes.
struct FoldDotExtension : OpRewritePattern<linalg::MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::MatmulOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<Value> ins(op.getDpsInputs());
    bool changed = false;
    for (Value &in : ins) {
      if (Value src = extendedFrom(in)) {
        in = src;
        changed = true;
        continue;
      }
      auto t = in.getDefiningOp<linalg::TransposeOp>();
      if (!t)
        continue;
      Value src = extendedFrom(t.getInput());
      if (!src)
        continue;
      auto srcType = cast<RankedTensorType>(src.getType());
      auto outType = cast<RankedTensorType>(t->getResult(0).getType());
      Value init = tensor::EmptyOp::create(rewriter, t.getLoc(),
                                           outType.getShape(),
                                           srcType.getElementType());
      in = linalg::TransposeOp::create(rewriter, t.getLoc(), src, init,
                                       t.getPermutation())
               ->getResult(0);
      changed = true;
    }
    if (!changed)
      return failure();
    auto lhsT = cast<RankedTensorType>(ins[0].getType()).getElementType();
    auto rhsT = cast<RankedTensorType>(ins[1].getType()).getElementType();
    if (lhsT != rhsT)
      return failure();
    Attribute precision = op->getAttr(kDotPrecisionAttrName);
    auto folded = rewriter.replaceOpWithNewOp<linalg::MatmulOp>(
        op, op->getResultTypes(), ins, op.getDpsInits());
    if (precision)
      folded->setAttr(kDotPrecisionAttrName, precision);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Index maps
//===----------------------------------------------------------------------===//

/// Inlines the body of a lowered `@func` index map; returns its results.
FailureOr<SmallVector<Value>> inlineIndexMap(OpBuilder &b, func::FuncOp f,
                                             ArrayRef<Value> args) {
  if (!f.getBody().hasOneBlock())
    return f.emitOpError() << "index map has control flow between blocks, "
                              "which the CUDA lowering cannot inline";
  Block &body = f.getBody().front();
  IRMapping m;
  for (auto [arg, v] : llvm::zip(body.getArguments(), args))
    m.map(arg, v);
  for (Operation &op : body.without_terminator())
    b.clone(op, m);
  SmallVector<Value> results;
  for (Value r : body.getTerminator()->getOperands())
    results.push_back(m.lookupOrDefault(r));
  return results;
}

int64_t lowBit(int64_t v) {
  if (v == 0)
    return int64_t(1) << 30;
  uint64_t u = static_cast<uint64_t>(v);
  return static_cast<int64_t>(std::min<uint64_t>(u & (~u + 1), 1u << 30));
}

//===----------------------------------------------------------------------===//
// The pass
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
    Value memref;
    if (auto l = dyn_cast<memref::LoadOp>(inner))
      memref = l.getMemref();
    else if (auto st = dyn_cast<memref::StoreOp>(inner))
      memref = st.getMemref();
    else if (auto l = dyn_cast<vector::LoadOp>(inner))
      memref = l.getBase();
    else if (auto st = dyn_cast<vector::StoreOp>(inner))
      memref = st.getBase();
    else if (auto l = dyn_cast<vector::MaskedLoadOp>(inner))
      memref = l.getBase();
    else if (auto st = dyn_cast<vector::MaskedStoreOp>(inner))
      memref = st.getBase();
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
static void dropTrailingBarriers(Block &body) {
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

struct PallasToGPUPass
    : public mlir::pallas::impl::PallasToGPUBase<PallasToGPUPass> {
  using PallasToGPUBase::PallasToGPUBase;
  void runOnOperation() override;
};

/// Everything read from the recorded pallas.call.
struct CallInfo {
  std::string kernel, name;
  /// Grid, vmapped and sequential axes, block specs, aliases, params.
  GridMapping mapping;
  SmallVector<RefType> scratch;
  SmallVector<RankedTensorType> inputs, outputs;
  int64_t numWarps = 4;
  int64_t numStages = 0; ///< 0: not given
};

/// Reads pallas-gpu-prepare's record of the call; a missing or mistyped
/// entry is a diagnostic on the module.
LogicalResult readCall(ModuleOp module, CallInfo &info) {
  Attribute recorded = module->getAttr(kGpuCallAttrName);
  if (!recorded)
    return module.emitError()
           << "no pallas.call was recorded; run pallas-gpu-prepare on a "
              "module holding one";
  auto dict = dyn_cast<DictionaryAttr>(recorded);
  if (!dict)
    return module.emitError() << "the recorded pallas.call ('"
                              << kGpuCallAttrName
                              << "') must be a dictionary, got " << recorded;
  auto emitError = [&] { return module.emitError(); };
  FailureOr<GridMapping> mapping = GridMapping::get(dict, emitError);
  if (failed(mapping))
    return failure();
  info.mapping = std::move(*mapping);
  Attribute kernelAttr = dict.get("kernel");
  if (!kernelAttr)
    return module.emitError() << "the recorded pallas.call has no 'kernel' "
                                 "(expected a symbol, @name)";
  auto kernel = dyn_cast<FlatSymbolRefAttr>(kernelAttr);
  if (!kernel)
    return module.emitError() << "the recorded pallas.call's 'kernel' must "
                                 "be a symbol (@name), got "
                              << kernelAttr;
  info.kernel = kernel.getValue().str();
  info.name = info.kernel;
  if (Attribute n = dict.get("name")) {
    auto s = dyn_cast<StringAttr>(n);
    if (!s)
      return module.emitError()
             << "the recorded pallas.call's 'name' must be a string, got "
             << n;
    info.name = s.str();
  }
  // An array of TypeAttr (`what` for the diagnostics).
  auto typeList = [&](StringRef what, bool required,
                      SmallVector<Type> &out) -> LogicalResult {
    Attribute a = dict.get(what);
    if (!a && !required)
      return success();
    auto array = dyn_cast_or_null<ArrayAttr>(a);
    if (!array || !llvm::all_of(array, llvm::IsaPred<TypeAttr>)) {
      auto diag = module.emitError() << "the recorded pallas.call's '" << what
                                     << "' must be an array of types";
      if (a)
        diag << ", got " << a;
      return diag;
    }
    for (Attribute t : array)
      out.push_back(cast<TypeAttr>(t).getValue());
    return success();
  };
  SmallVector<Type> scratch, inputs, outputs;
  if (failed(typeList("scratch", false, scratch)) ||
      failed(typeList("input_types", true, inputs)) ||
      failed(typeList("output_types", true, outputs)))
    return failure();
  for (Type t : scratch) {
    auto ref = dyn_cast<RefType>(t);
    if (!ref)
      return module.emitError() << "the recorded pallas.call's scratch "
                                   "entries must be !pallas.ref types, got "
                                << t;
    info.scratch.push_back(ref);
  }
  for (Type type : inputs) {
    auto t = dyn_cast<RankedTensorType>(type);
    if (!t)
      return module.emitError() << "call input of type " << type
                                << " is not a ranked tensor";
    info.inputs.push_back(t);
  }
  for (Type type : outputs) {
    auto t = dyn_cast<RankedTensorType>(type);
    if (!t)
      return module.emitError() << "call output of type " << type
                                << " is not a ranked tensor";
    info.outputs.push_back(t);
  }
  const GridMapping &m = info.mapping;
  int64_t numIn = info.inputs.size();
  if (m.getNumScalarPrefetch() > numIn ||
      static_cast<int64_t>(m.getInSpecs().size()) !=
          numIn - m.getNumScalarPrefetch() ||
      m.getOutSpecs().size() != info.outputs.size())
    return module.emitError()
           << "the recorded pallas.call has " << m.getInSpecs().size()
           << " in_specs and " << m.getOutSpecs().size() << " out_specs for "
           << numIn << " inputs (" << m.getNumScalarPrefetch()
           << " scalar prefetch) and " << info.outputs.size() << " outputs";
  for (auto [in, out] : m.getAliases())
    if (in < 0 || in >= numIn || out < 0 ||
        out >= static_cast<int64_t>(info.outputs.size()))
      return module.emitError()
             << "the recorded pallas.call's input_output_aliases pair (" << in
             << ", " << out << ") is out of range";
  if (CompilerParamsAttr params = m.getCompilerParams()) {
    if (params.getNumWarps())
      info.numWarps = *params.getNumWarps();
    if (params.getNumStages())
      info.numStages = *params.getNumStages();
  }
  return success();
}

} // namespace

void PallasToGPUPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  CallInfo info;
  if (failed(readCall(module, info)))
    return signalPassFailure();
  auto kernel = module.lookupSymbol<func::FuncOp>(info.kernel);
  if (!kernel || !kernel->hasAttr(kKernelFuncAttrName)) {
    module.emitError() << "kernel @" << info.kernel
                       << " was not lowered; run pallas-to-linalg first";
    return signalPassFailure();
  }
  // The chip, from the GPU target table.
  std::string chipError;
  const pallasc::GpuTarget *target = pallasc::parseGpuChip(chip, chipError);
  if (!target) {
    module.emitError() << chipError;
    return signalPassFailure();
  }
  int64_t laneBits = target->laneBits();
  int64_t maxWarps = target->maxWarpsPerBlock();
  int64_t numWarps = numWarpsOverride > 0 ? numWarpsOverride : info.numWarps;
  if (numWarps < 1 || numWarps > maxWarps || !llvm::isPowerOf2_64(numWarps)) {
    kernel.emitError() << "num_warps is " << numWarps << "; the "
                       << target->vendorName()
                       << " lowering needs a power of two in [1, " << maxWarps
                       << "] (" << target->lanesPerWarp << " threads each, at "
                       << "most " << target->maxThreadsPerBlock
                       << " per block)";
    return signalPassFailure();
  }

  {
    RewritePatternSet patterns(ctx);
    patterns.add<FoldDotExtension>(ctx);
    if (failed(applyPatternsGreedily(kernel, std::move(patterns))))
      return signalPassFailure();
  }
  // exp(x) on f32 as 2^(x log2 e): one ex2.approx instead of libdevice's
  // range reduction, as Triton lowers it (relative error ~2^-22).
  kernel.walk([&](math::ExpOp exp) {
    if (!exp.getType().isF32())
      return;
    OpBuilder eb(exp);
    Value log2e = arith::ConstantOp::create(
        eb, exp.getLoc(), eb.getF32FloatAttr(1.4426950408889634f));
    Value scaled = arith::MulFOp::create(eb, exp.getLoc(), exp.getOperand(),
                                         log2e);
    exp.replaceAllUsesWith(
        math::Exp2Op::create(eb, exp.getLoc(), scaled).getResult());
    exp.erase();
  });

  const GridMapping &mapping = info.mapping;
  int64_t rank = mapping.getRank();
  int64_t nsp = mapping.getNumScalarPrefetch();
  int64_t numIn = info.inputs.size(), numOut = info.outputs.size();
  auto axesAttr = kernel->getAttrOfType<IntegerAttr>(kNumGridAxesAttrName);
  if (!axesAttr) {
    kernel.emitOpError() << "has no integer '" << kNumGridAxesAttrName
                         << "' (pallas-to-linalg records it)";
    return signalPassFailure();
  }
  int64_t visibleAxes = axesAttr.getInt();
  if (visibleAxes != static_cast<int64_t>(mapping.getVisibleAxes().size())) {
    kernel.emitOpError() << "sees " << visibleAxes << " grid axes but the "
                         << "call has " << rank << " with "
                         << mapping.getVmappedAxes().size() << " vmapped";
    return signalPassFailure();
  }
  int64_t expectedArgs = 2 * visibleAxes + numIn + numOut +
                         static_cast<int64_t>(info.scratch.size());
  if (kernel.getNumArguments() != expectedArgs) {
    kernel.emitOpError() << "has " << kernel.getNumArguments()
                         << " arguments; the call implies " << expectedArgs;
    return signalPassFailure();
  }
  for (RefType s : info.scratch)
    if (s.getMemorySpace() == MemorySpace::Semaphore) {
      kernel.emitOpError() << "uses a semaphore scratch buffer, which the "
                              "CUDA lowering does not support";
      return signalPassFailure();
    }

  // Launch geometry.
  SmallVector<int64_t> seqAxes = mapping.getSequentialAxes();
  SmallVector<int64_t> launch; // pallas axes, in launch order
  for (int64_t a = 0; a < rank; ++a)
    if (!mapping.isVmapped(a) && !llvm::is_contained(seqAxes, a))
      launch.push_back(a);
  for (int64_t a : llvm::reverse(mapping.getVmappedAxes()))
    launch.push_back(a);
  auto sizeOf = [&](int64_t a) { return mapping.getGrid()[a]; };
  auto overLimit = [&](int64_t a) {
    return sizeOf(a) < 0 || sizeOf(a) > kYZLimit;
  };
  int64_t n = launch.size();
  int64_t numCollapse = std::max<int64_t>(0, n - 2);
  if (numCollapse + 1 < n && overLimit(launch[numCollapse + 1]))
    numCollapse += 2;
  else if (numCollapse < n && overLimit(launch[numCollapse]))
    numCollapse += 1;
  SmallVector<SmallVector<int64_t>> cudaAxes(3);
  if (numCollapse == 0) {
    for (int64_t i = 0; i < n; ++i)
      cudaAxes[i].push_back(launch[i]);
  } else {
    for (int64_t i = 0; i < numCollapse; ++i)
      cudaAxes[0].push_back(launch[i]);
    for (int64_t i = numCollapse; i < n; ++i)
      cudaAxes[i - numCollapse + 1].push_back(launch[i]);
  }
  SmallVector<int64_t> cudaGrid;
  for (auto &axes : cudaAxes) {
    int64_t size = 1;
    for (int64_t a : axes)
      size = (size < 0 || sizeOf(a) < 0) ? -1 : size * sizeOf(a);
    cudaGrid.push_back(size);
  }
  if (cudaGrid[0] > std::numeric_limits<int32_t>::max() ||
      cudaGrid[1] > kYZLimit || cudaGrid[2] > kYZLimit) {
    module.emitError() << "the grid does not fit CUDA's launch limits";
    return signalPassFailure();
  }

  // The gpu.module and the kernel function.
  OpBuilder b(ctx);
  Location loc = kernel.getLoc();
  module->setAttr(mlir::gpu::GPUDialect::getContainerModuleAttrName(),
                  b.getUnitAttr());
  std::string entry = entryName(info.name);
  b.setInsertionPointToEnd(module.getBody());
  auto gpuModule =
      mlir::gpu::GPUModuleOp::create(b, loc, entry + "_kernels");
  // 32-bit index arithmetic when every array has fewer than 2^31 elements
  // (as Triton's default offsets): half the registers for addresses.
  bool smallArrays = llvm::all_of(
      llvm::concat<RankedTensorType>(info.inputs, info.outputs),
      [](RankedTensorType t) {
        return t.getNumElements() < (int64_t(1) << 31);
      });
  if (smallArrays)
    gpuModule->setAttr(
        DLTIDialect::kDataLayoutAttrName,
        DataLayoutSpecAttr::get(
            ctx, {DataLayoutEntryAttr::get(IndexType::get(ctx),
                                           b.getI32IntegerAttr(32))}));
  b.setInsertionPointToStart(gpuModule.getBody());
  SmallVector<Type> params;
  for (RankedTensorType t : llvm::concat<RankedTensorType>(info.inputs,
                                                           info.outputs))
    params.push_back(MemRefType::get(t.getShape(), t.getElementType()));
  SmallVector<int64_t> dynamicAxes;
  for (int64_t a = 0; a < rank; ++a)
    if (mapping.getGrid()[a] < 0) {
      dynamicAxes.push_back(a);
      params.push_back(b.getI32Type());
    }
  auto func = mlir::gpu::GPUFuncOp::create(b, loc, entry,
                                           b.getFunctionType(params, {}));
  func->setAttr(mlir::gpu::GPUDialect::getKernelFuncAttrName(),
                b.getUnitAttr());
  int64_t numThreads = numWarps << laneBits;
  func.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr(
      {static_cast<int32_t>(numThreads), 1, 1}));
  Block &body = func.getBody().front();
  b.setInsertionPointToStart(&body);

  KernelContext kc(loc);
  kc.numWarps = numWarps;
  kc.target = target;
  kc.laneBits = laneBits;
  kc.tid = mlir::gpu::ThreadIdOp::create(b, loc, mlir::gpu::Dimension::x);
  auto space = mlir::gpu::AddressSpaceAttr::get(
      ctx, mlir::gpu::GPUDialect::getWorkgroupAddressSpace());
  kc.smemBase = mlir::gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), nullptr, space));
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  // Grid sizes (index).
  SmallVector<Value> gridSize(rank);
  {
    int64_t next = numIn + numOut;
    for (int64_t a = 0; a < rank; ++a)
      gridSize[a] =
          mapping.getGrid()[a] >= 0
              ? cst(mapping.getGrid()[a]).getResult()
              : arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                           body.getArgument(next++))
                    .getResult();
  }
  // Grid indices of the launched axes.
  SmallVector<Value> gridIdx(rank);
  Operation *firstAfterPrologue = nullptr;
  {
    mlir::gpu::Dimension dims[3] = {mlir::gpu::Dimension::x,
                                    mlir::gpu::Dimension::y,
                                    mlir::gpu::Dimension::z};
    for (int64_t c = 0; c < 3; ++c) {
      if (cudaAxes[c].empty())
        continue;
      Value id = mlir::gpu::BlockIdOp::create(b, loc, dims[c]);
      if (!firstAfterPrologue)
        firstAfterPrologue = id.getDefiningOp();
      for (auto [i, a] : llvm::enumerate(cudaAxes[c])) {
        if (i + 1 == cudaAxes[c].size()) {
          gridIdx[a] = cudaAxes[c].size() == 1
                           ? id
                           : arith::RemUIOp::create(b, loc, id, gridSize[a])
                                 .getResult();
          break;
        }
        gridIdx[a] = arith::RemUIOp::create(b, loc, id, gridSize[a]);
        id = arith::DivUIOp::create(b, loc, id, gridSize[a]);
      }
    }
  }
  if (!firstAfterPrologue)
    firstAfterPrologue = cst(0).getOperation();
  kc.prologueBlock = &body;
  kc.prologueEnd = firstAfterPrologue;

  // Scratch buffers (those not kept in registers) and the workspace live in
  // dynamic shared memory; the distributor places them.
  kc.workspaceOffset = 0;

  Distributor dist(kc, kernel);
  // An input aliased to an output is the output's memory: same base, so
  // accesses through either are ordered, and neither is read-only.
  DenseMap<int64_t, int64_t> aliasOf;
  for (auto [in, out] : mapping.getAliases())
    aliasOf[in] = out;
  for (auto [in, out] : aliasOf) {
    dist.writableArgs.insert(kernel.getArgument(2 * visibleAxes + in));
    dist.writableArgs.insert(
        kernel.getArgument(2 * visibleAxes + numIn + out));
  }
  for (size_t k = 0; k < info.scratch.size(); ++k)
    dist.markScratch(
        kernel.getArgument(2 * visibleAxes + numIn + numOut + k));
  // TMA or cp.async (one sequential axis): the inputs whose blocks a tensor map
  // can describe: 2-D, 16-bit, plain blocked specs whose blocks tile the
  // array exactly (no edge checks), rows a multiple of 16 bytes, not
  // aliased to an output.
  dist.numStages = info.numStages;
  kc.maxSharedBytes = target->maxSharedBytesPerBlock;
  // Operands prefetched along the one sequential axis: by TMA (wgmma
  // operands) or cp.async stages.
  if ((target->hasTma || target->hasCpAsync) && seqAxes.size() == 1) {
    kc.oneSequentialAxis = true;
    kc.addParam = [&, func](Type type) mutable -> Value {
      unsigned n = func.getNumArguments();
      (void)func.insertArgument(n, type, DictionaryAttr(), loc);
      return func.getArgument(n);
    };
    for (int64_t i = nsp; i < numIn; ++i) {
      RankedTensorType t = info.inputs[i];
      BlockSpecAttr spec = mapping.getInSpecs()[i - nsp];
      if (aliasOf.count(i) || t.getRank() != 2 ||
          t.getElementTypeBitWidth() != 16 || spec.isWholeArray() ||
          static_cast<int64_t>(spec.getRank()) != 2 ||
          (t.getDimSize(1) * 2) % 16 ||
          t.getNumElements() >= (int64_t(1) << 31))
        continue;
      bool plain = true;
      for (int64_t d = 0; d < 2; ++d)
        plain &= spec.getKind(d) == BlockDimKind::Blocked &&
                 t.getDimSize(d) % spec.getSizes()[d] == 0;
      if (!plain)
        continue;
      KernelContext::TmaSource src;
      src.input = i;
      src.globalShape.assign(t.getShape().begin(), t.getShape().end());
      src.blockShape.assign(spec.getSizes().begin(), spec.getSizes().end());
      kc.tmaSources[kernel.getArgument(2 * visibleAxes + i)] = src;
    }
  }
  if (failed(dist.prepare()))
    return signalPassFailure();

  // The sequential axes: loops inside the block, carrying the scratch
  // buffers that live in registers.
  SmallVector<Value> state = dist.initialPromotedState(b);
  SmallVector<scf::ForOp> loops;
  for (int64_t a : seqAxes) {
    auto loop =
        scf::ForOp::create(b, loc, cst(0), gridSize[a], cst(1), state);
    gridIdx[a] = loop.getInductionVar();
    // Our own scf.yield (with the carried state) ends the body.
    if (loop.getBody()->mightHaveTerminator())
      loop.getBody()->getTerminator()->erase();
    b.setInsertionPointToEnd(loop.getBody());
    state.assign(loop.getRegionIterArgs().begin(),
                 loop.getRegionIterArgs().end());
    loops.push_back(loop);
  }
  dist.setPromotedState(state);

  // Bindings of the kernel function's arguments.
  {
    int64_t arg = 0;
    for (int64_t a = 0; a < rank; ++a) {
      if (mapping.isVmapped(a))
        continue;
      dist.bindScalar(kernel.getArgument(arg),
                      arith::IndexCastOp::create(b, loc, b.getI32Type(),
                                                 gridIdx[a]));
      dist.bindScalar(kernel.getArgument(visibleAxes + arg),
                      arith::IndexCastOp::create(b, loc, b.getI32Type(),
                                                 gridSize[a]));
      ++arg;
    }
  }
  SmallVector<Value> gridI32;
  for (int64_t a = 0; a < rank; ++a)
    gridI32.push_back(
        arith::IndexCastOp::create(b, loc, b.getI32Type(), gridIdx[a]));
  SmallVector<Value> prefetchParams;
  for (int64_t i = 0; i < nsp; ++i)
    prefetchParams.push_back(body.getArgument(i));

  auto wholeView = [&](Value memref) {
    View v;
    v.base = memref;
    v.baseType = cast<MemRefType>(memref.getType());
    for (int64_t d = 0; d < v.baseType.getRank(); ++d) {
      v.offsets.push_back(cst(0));
      v.offsetDiv.push_back(int64_t(1) << 30);
      v.checkLow.push_back(false);
      v.checkHigh.push_back(false);
      v.dimOf.push_back(d);
      v.strides.push_back(1);
      v.shape.push_back(v.baseType.getDimSize(d));
    }
    return v;
  };
  auto blockView = [&](Value param, BlockSpecAttr spec,
                       StringRef what) -> FailureOr<View> {
    View v = wholeView(param);
    if (spec.isWholeArray())
      return v;
    ArrayRef<int64_t> shape = v.baseType.getShape();
    int64_t r = v.baseType.getRank();
    if (static_cast<int64_t>(spec.getRank()) != r)
      return kernel.emitOpError() << what << " has rank " << r
                                  << " but its block spec rank "
                                  << spec.getRank();
    SmallVector<Value> raw;
    SmallVector<int64_t> rawDiv(r, 1);
    if (spec.getIndexFunc()) {
      auto f = module.lookupSymbol<func::FuncOp>(spec.getIndexFunc());
      if (!f)
        return kernel.emitOpError() << "index map " << spec.getIndexFunc()
                                    << " of " << what << " is missing";
      SmallVector<Value> args(gridI32);
      llvm::append_range(args, prefetchParams);
      auto results = inlineIndexMap(b, f, args);
      if (failed(results))
        return failure();
      for (Value res : *results)
        raw.push_back(res.getType().isIndex()
                          ? res
                          : arith::IndexCastOp::create(b, loc,
                                                       b.getIndexType(), res)
                                .getResult());
    } else if (AffineMap map = spec.getIndexMap()) {
      SmallVector<int64_t> dimDivs(rank, 1);
      for (int64_t a : seqAxes)
        dimDivs[a] = 1;
      for (auto [i, e] : llvm::enumerate(map.getResults())) {
        raw.push_back(expandIndexMapExpr(b, loc, e, gridIdx, b.getIndexType(),
                                         IndexMapArith::FloorOps));
        rawDiv[i] = affineDivisor(e, dimDivs);
      }
    } else {
      for (int64_t d = 0; d < r; ++d) {
        raw.push_back(cst(0));
        rawDiv[d] = int64_t(1) << 30;
      }
    }
    if (static_cast<int64_t>(raw.size()) != r)
      return kernel.emitOpError() << "index map of " << what << " returns "
                                  << raw.size() << " values for rank " << r;
    v.dimOf.clear();
    v.strides.clear();
    v.shape.clear();
    for (int64_t d = 0; d < r; ++d) {
      BlockDimKind kind = spec.getKind(d);
      int64_t bs = kind == BlockDimKind::Squeezed ? 1 : spec.getSizes()[d];
      int64_t lo = kind == BlockDimKind::Element ? spec.getPadLow()[d] : 0;
      int64_t hi = kind == BlockDimKind::Element ? spec.getPadHigh()[d] : 0;
      int64_t total = (lo + shape[d] + hi + bs - 1) / bs * bs;
      Value start = raw[d];
      int64_t div = rawDiv[d];
      if (kind == BlockDimKind::Blocked) {
        start = arith::MulIOp::create(b, loc, start, cst(bs));
        div = std::min<int64_t>(div * lowBit(bs), int64_t(1) << 30);
      }
      start = arith::MaxSIOp::create(b, loc, start, cst(0));
      start = arith::MinSIOp::create(b, loc, start, cst(total - bs));
      div = std::min(div, lowBit(total - bs));
      if (lo) {
        start = arith::SubIOp::create(b, loc, start, cst(lo));
        div = std::min(div, lowBit(lo));
      }
      v.offsets[d] = start;
      v.offsetDiv[d] = div;
      v.checkLow[d] = lo > 0;
      v.checkHigh[d] = total - lo > shape[d];
      if (kind == BlockDimKind::Squeezed)
        continue;
      v.dimOf.push_back(d);
      v.strides.push_back(1);
      v.shape.push_back(bs);
    }
    return v;
  };

  int64_t argBase = 2 * visibleAxes;
  for (int64_t i = 0; i < numIn; ++i) {
    Value param = body.getArgument(i);
    Value old = kernel.getArgument(argBase + i);
    if (auto it = aliasOf.find(i); it != aliasOf.end())
      param = body.getArgument(numIn + it->second);
    if (i < nsp) {
      dist.bindView(old, wholeView(param));
      continue;
    }
    auto v = blockView(param, mapping.getInSpecs()[i - nsp],
                       ("input " + std::to_string(i)));
    if (failed(v))
      return signalPassFailure();
    dist.bindView(old, *v);
    // The same block at another step of the sequential axis (TMA
    // prefetching), computed where the distributor's builder stands.
    if (auto it = kc.tmaSources.find(old); it != kc.tmaSources.end()) {
      int64_t axis = seqAxes.front();
      BlockSpecAttr spec = mapping.getInSpecs()[i - nsp];
      it->second.viewAt = [&, param, spec, axis,
                           i](OpBuilder &at, Value iv) -> FailureOr<View> {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(at.getInsertionBlock(), at.getInsertionPoint());
        Value savedIdx = gridIdx[axis], savedI32 = gridI32[axis];
        gridIdx[axis] = iv;
        gridI32[axis] =
            arith::IndexCastOp::create(b, loc, b.getI32Type(), iv);
        auto view = blockView(param, spec, "input " + std::to_string(i));
        gridIdx[axis] = savedIdx;
        gridI32[axis] = savedI32;
        at.setInsertionPoint(b.getInsertionBlock(), b.getInsertionPoint());
        return view;
      };
    }
  }
  for (int64_t j = 0; j < numOut; ++j) {
    auto v = blockView(body.getArgument(numIn + j), mapping.getOutSpecs()[j],
                       ("output " + std::to_string(j)));
    if (failed(v))
      return signalPassFailure();
    dist.bindView(kernel.getArgument(argBase + numIn + j), *v);
  }

  if (kc.oneSequentialAxis) {
    kc.seqIv = loops.back().getInductionVar();
    kc.seqCount = gridSize[seqAxes.front()];
  }
  if (failed(dist.emit(b)))
    return signalPassFailure();
  state = dist.promotedState();
  for (scf::ForOp loop : llvm::reverse(loops)) {
    b.setInsertionPointToEnd(loop.getBody());
    scf::YieldOp::create(b, loc, state);
    state.assign(loop.getResults().begin(), loop.getResults().end());
    // Pipelined wgmma groups of the sequential axis (the innermost loop)
    // complete before it ends: a next round would refill their stages.
    if (dist.wgmmaPipelined && loop == loops.back()) {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointAfter(loop);
      NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
    }
  }
  b.setInsertionPointToEnd(&body);
  mlir::gpu::ReturnOp::create(b, loc);
  dropTrailingBarriers(body);

  // The launch, for the manifest.
  int64_t smemBytes = kc.workspaceOffset + kc.workspaceBytes;
  auto ints = [&](ArrayRef<int64_t> v) {
    SmallVector<Attribute> a;
    for (int64_t x : v)
      a.push_back(b.getI64IntegerAttr(x));
    return b.getArrayAttr(a);
  };
  SmallVector<Attribute> axes;
  for (auto &ax : cudaAxes)
    axes.push_back(ints(ax));
  SmallVector<Attribute> paramAttrs;
  for (int64_t i = 0; i < numIn; ++i)
    paramAttrs.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("kind", b.getStringAttr("pointer")),
         b.getNamedAttr("operand",
                        b.getStringAttr("inputs[" + std::to_string(i) +
                                        "]"))}));
  for (int64_t j = 0; j < numOut; ++j)
    paramAttrs.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("kind", b.getStringAttr("pointer")),
         b.getNamedAttr("operand",
                        b.getStringAttr("outputs[" + std::to_string(j) +
                                        "]"))}));
  for (auto [k, a] : llvm::enumerate(dynamicAxes))
    paramAttrs.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("kind", b.getStringAttr("i32")),
         b.getNamedAttr("operand",
                        b.getStringAttr("grid_bounds[" + std::to_string(k) +
                                        "]")),
         b.getNamedAttr("axis", b.getI64IntegerAttr(a))}));
  // Tensor maps: a pointer each to a CUtensorMap in global memory, encoded
  // by the launcher (cuTensorMapEncodeTiled) as the record describes.
  for (const KernelContext::TensorMap &m : kc.tensorMaps)
    paramAttrs.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("kind", b.getStringAttr("tensor_map")),
         b.getNamedAttr("operand",
                        b.getStringAttr("inputs[" + std::to_string(m.input) +
                                        "]")),
         b.getNamedAttr("dtype", b.getStringAttr(m.elementType.isBF16()
                                                     ? "bf16"
                                                     : "f16")),
         b.getNamedAttr("global_shape", ints(m.globalShape)),
         b.getNamedAttr("box_shape", ints(m.boxShape)),
         b.getNamedAttr("swizzle", b.getStringAttr("128B")),
         b.getNamedAttr("interleave", b.getStringAttr("none")),
         b.getNamedAttr("l2_promotion", b.getStringAttr("128B")),
         b.getNamedAttr("oob_fill", b.getStringAttr("zero"))}));
  func->setAttr(
      kGpuLaunchAttrName,
      b.getDictionaryAttr(
          {b.getNamedAttr("entry", b.getStringAttr(entry)),
           b.getNamedAttr("grid", ints(cudaGrid)),
           b.getNamedAttr("grid_axes", b.getArrayAttr(axes)),
           b.getNamedAttr("block", ints({numThreads, 1, 1})),
           b.getNamedAttr("num_warps", b.getI64IntegerAttr(numWarps)),
           b.getNamedAttr("warp_size", b.getI64IntegerAttr(numThreads /
                                                            numWarps)),
           b.getNamedAttr("sequential_axes", ints(seqAxes)),
           b.getNamedAttr("vmapped_axes", ints(mapping.getVmappedAxes())),
           b.getNamedAttr("dynamic_shared_memory_bytes",
                          b.getI64IntegerAttr(smemBytes)),
           b.getNamedAttr("scratch_shared_memory_bytes",
                          b.getI64IntegerAttr(dist.scratchSharedBytes)),
           b.getNamedAttr("params", b.getArrayAttr(paramAttrs))}));

  // Only the gpu.module remains.
  for (Operation &op : llvm::make_early_inc_range(module.getBody()->getOperations()))
    if (&op != gpuModule.getOperation())
      op.erase();
}
