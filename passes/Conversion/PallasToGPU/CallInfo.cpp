//===- CallInfo.cpp - pallas-to-gpu: the recorded call and the kernel -*- C++ -*-===//
//
// What pallas-to-gpu reads: pallas-gpu-prepare's record of the pallas.call
// (`pallas.gpu.call`) and the signature of the kernel pallas-to-linalg
// lowered.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/KernelSkeleton.h"

using namespace mlir;
using namespace mlir::pallas;

namespace mlir::pallas::gpu {

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
             << "uses a semaphore scratch buffer, which the CUDA lowering "
                "does not support";
  return success();
}

} // namespace mlir::pallas::gpu
