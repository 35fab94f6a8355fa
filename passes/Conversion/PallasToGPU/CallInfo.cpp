//===- CallInfo.cpp - pallas-to-gpu: the recorded call and the kernel -*- C++ -*-===//
//
// What pallas-to-gpu reads: pallas-gpu-prepare's record of the pallas.call
// (`pallas.gpu.call`, a #pallas.gpu_call) and the signature of the kernel
// pallas-to-linalg lowered.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/KernelSkeleton.h"
#include "dialects/Pallas/IR/GpuCallAttrs.h"

using namespace mlir;
using namespace mlir::pallas;

namespace mlir::pallas::gpu {

/// Reads pallas-gpu-prepare's record of the call (a #pallas.gpu_call,
/// verified when it was built or parsed); a missing record or one of
/// another kind is a diagnostic on the module.
LogicalResult readCall(ModuleOp module, CallInfo &info) {
  Attribute recorded = module->getAttr(kGpuCallAttrName);
  if (!recorded)
    return module.emitError()
           << "no pallas.call was recorded; run pallas-gpu-prepare on a "
              "module holding one";
  auto call = dyn_cast<GpuCallAttr>(recorded);
  if (!call)
    return module.emitError() << "the recorded pallas.call ('"
                              << kGpuCallAttrName
                              << "') must be a #pallas.gpu_call, got "
                              << recorded;
  info.mapping = GridMapping::get(call);
  info.kernel = call.getKernel().getValue().str();
  info.name = call.getCallName().str();
  info.scratch.assign(call.getScratch().begin(), call.getScratch().end());
  info.inputs.assign(call.getInputTypes().begin(), call.getInputTypes().end());
  info.outputs.assign(call.getOutputTypes().begin(),
                      call.getOutputTypes().end());
  if (CompilerParamsAttr params = call.getCompilerParams()) {
    if (params.getNumWarps())
      info.numWarps = *params.getNumWarps();
    if (params.getNumStages())
      info.numStages = *params.getNumStages();
  }
  return success();
}

LogicalResult checkKernelSignature(func::FuncOp kernel, const CallInfo &info,
                                   int64_t &visibleAxes) {
  const GridMapping &mapping = info.mapping;
  int64_t rank = mapping.getRank();
  int64_t numIn = info.numInputs(), numOut = info.numOutputs();
  auto axesAttr = kernel->getAttrOfType<IntegerAttr>(kNumGridAxesAttrName);
  if (!axesAttr)
    return kernel.emitOpError() << "has no integer '" << kNumGridAxesAttrName
                                << "' (pallas-to-linalg records it)";
  visibleAxes = axesAttr.getInt();
  if (visibleAxes != static_cast<int64_t>(mapping.getVisibleAxes().size()))
    return kernel.emitOpError() << "sees " << visibleAxes
                                << " grid axes but the "
                                << "call has " << rank << " with "
                                << mapping.getVmappedAxes().size()
                                << " vmapped";
  int64_t expectedArgs = 2 * visibleAxes + numIn + numOut +
                         static_cast<int64_t>(info.scratch.size());
  if (kernel.getNumArguments() != expectedArgs)
    return kernel.emitOpError() << "has " << kernel.getNumArguments()
                                << " arguments; the call implies "
                                << expectedArgs;
  for (RefType s : info.scratch)
    if (s.getMemorySpace() == MemorySpace::Semaphore)
      return kernel.emitOpError()
             << "uses a semaphore scratch buffer, which the GPU lowering "
                "does not support";
  return success();
}

} // namespace mlir::pallas::gpu
