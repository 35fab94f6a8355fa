//===- PallasToGPU.cpp - pallas-to-gpu --------------------------*- C++ -*-===//
//
// The pass driver: the kernel skeleton around the distributor, step by
// step (KernelSkeleton.h lists the files of the steps). Parameters, grid
// indices from the CUDA block index (folded as Pallas' Triton lowering
// folds them), the in-block loop over the axes that must run in order,
// each operand's block window from its index map, scratch in dynamic
// shared memory; then the distributor (Distribute.h) lowers the body, and
// the launch record describes the launch.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/KernelSkeleton.h"

#include "dialects/Pallas/IR/GpuLaunchAttrs.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#define DEBUG_TYPE "pallas-to-gpu"

namespace mlir::pallas {
#define GEN_PASS_DEF_PALLASTOGPU
#include "passes/Conversion/Passes.h.inc"
} // namespace mlir::pallas

using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::gpu;

namespace {

struct PallasToGPUPass
    : public mlir::pallas::impl::PallasToGPUBase<PallasToGPUPass> {
  using PallasToGPUBase::PallasToGPUBase;
  void runOnOperation() override;
};

} // namespace

void PallasToGPUPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  // The call, the kernel, the chip.
  CallInfo info;
  if (failed(readCall(module, info)))
    return signalPassFailure();
  auto kernel = module.lookupSymbol<func::FuncOp>(info.kernel);
  if (!kernel || !kernel->hasAttr(kKernelFuncAttrName)) {
    module.emitError() << "kernel @" << info.kernel
                       << " was not lowered; run pallas-to-linalg first";
    return signalPassFailure();
  }
  std::string chipError;
  const pallasc::GpuTarget *target = pallasc::parseGpuChip(chip, chipError);
  if (!target) {
    module.emitError() << chipError;
    return signalPassFailure();
  }
  int64_t laneBits = target->laneBits();
  int64_t numWarps = numWarpsOverride > 0 ? numWarpsOverride : info.numWarps;
  if (failed(checkNumWarps(kernel, *target, numWarps)) ||
      failed(rewriteKernelTensors(kernel)))
    return signalPassFailure();
  int64_t visibleAxes = 0;
  if (failed(checkKernelSignature(kernel, info, visibleAxes)))
    return signalPassFailure();
  foldGridBoundedChecks(kernel, info, visibleAxes);
  // Unmasked, attention's K load is a dot operand the loop's cp.async ring
  // streams. With wgmma the ring is read through descriptors; with mma.sync
  // streaming K costs spills (JAX's mha on sm_80: 276 -> 336 bytes), so
  // there K keeps its stored tile (docs/cuda.md, "cp.async rings").
  if (target->hasMatrixInstr(pallasc::MatrixInstrKind::Wgmma))
    foldTrueMaskSelects(kernel);
  FailureOr<LaunchGeometry> geometry =
      computeLaunchGeometry(module, info.mapping);
  if (failed(geometry))
    return signalPassFailure();

  // The gpu.module, the kernel function and its prologue: thread id, the
  // dynamic shared memory (where the distributor places scratch buffers not
  // kept in registers and its workspace), the grid.
  OpBuilder b(ctx);
  Location loc = kernel.getLoc();
  int64_t numThreads = numWarps << laneBits;
  KernelFunction kf =
      createKernelFunction(b, module, loc, info, numThreads);
  Block &body = kf.func.getBody().front();
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
  emitOperandMemrefs(b, loc, info, kf);
  GridValues grid =
      emitGridValues(b, loc, info.mapping, *geometry, body,
                     info.numInputs() + info.numOutputs());
  kc.prologueBlock = &body;
  kc.prologueEnd = grid.firstAfterPrologue;
  kc.workspaceOffset = 0;
  kc.printSchedules = printSchedules;

  // The distributor: aliasing and scratch, prefetching, then the loops of
  // the sequential axes and the bindings of the kernel's arguments.
  Distributor dist(kc, kernel);
  DenseMap<int64_t, int64_t> aliasOf =
      markAliasesAndScratch(dist, kernel, info, visibleAxes);
  dist.setNumStages(info.numStages);
  kc.maxSharedBytes = target->maxSharedBytesPerBlock;
  selectPrefetchSources(kc, kf.func, kernel, info, aliasOf, visibleAxes,
                        geometry->seqAxes.size(), loc);
  if (failed(dist.prepare()))
    return signalPassFailure();
  if (printLayouts)
    dist.printLayouts();
  SmallVector<scf::ForOp> loops =
      openSequentialLoops(b, loc, dist, geometry->seqAxes, grid);
  BlockViews views(b, loc, module, kernel, info, kf, geometry->seqAxes,
                   grid);
  if (failed(views.bind(dist, kc, body, visibleAxes, aliasOf)))
    return signalPassFailure();
  if (kc.oneSequentialAxis) {
    kc.seqIv = loops.back().getInductionVar();
    kc.seqCount = grid.gridSize[geometry->seqAxes.front()];
  }
  if (failed(dist.emit(b)))
    return signalPassFailure();
  closeSequentialLoops(b, loc, dist, loops);
  b.setInsertionPointToEnd(&body);
  mlir::gpu::ReturnOp::create(b, loc);
  dropTrailingBarriers(body);

  // The launch, for the manifest.
  kf.func->setAttr(kGpuLaunchAttrName,
                   buildLaunchRecord(ctx, kf, info, *geometry, kc.tensorMaps,
                                     numWarps, numThreads,
                                     kc.workspaceOffset + kc.workspaceBytes,
                                     dist.scratchBytes()));

  // Only the gpu.module remains.
  module->removeAttr(kGpuSymbolicAttrName);
  for (Operation &op :
       llvm::make_early_inc_range(module.getBody()->getOperations()))
    if (&op != kf.gpuModule.getOperation())
      op.erase();
}
