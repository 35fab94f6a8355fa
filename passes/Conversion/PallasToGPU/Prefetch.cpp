//===- Prefetch.cpp - pallas-to-gpu: inputs prefetched by TMA or cp.async -*- C++ -*-===//
//
// With one sequential axis on a chip with TMA or cp.async, the distributor
// may prefetch operand blocks of later steps of that axis (DotStaging.cpp
// plans it). Here: which inputs a tensor map can describe, and how the
// kernel takes the extra parameters (the tensor maps) that needs.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/KernelSkeleton.h"

using namespace mlir;
using namespace mlir::pallas;

void mlir::pallas::gpu::selectPrefetchSources(
    KernelContext &kc, mlir::gpu::GPUFuncOp func, func::FuncOp kernel,
    const CallInfo &info, const DenseMap<int64_t, int64_t> &aliasOf,
    int64_t visibleAxes, size_t numSequentialAxes, Location loc) {
  const pallasc::GpuTarget *target = kc.target;
  const GridMapping &mapping = info.mapping;
  int64_t nsp = mapping.getNumScalarPrefetch();
  int64_t numIn = info.numInputs();
  // Operands prefetched along the one sequential axis: by TMA (wgmma
  // operands) or cp.async stages.
  if (!(target->hasTma || target->hasCpAsync) || numSequentialAxes != 1)
    return;
  kc.oneSequentialAxis = true;
  kc.addParam = [func, loc](Type type) mutable -> Value {
    unsigned n = func.getNumArguments();
    (void)func.insertArgument(n, type, DictionaryAttr(), loc);
    return func.getArgument(n);
  };
  // The inputs whose blocks a tensor map can describe: 2-D, static, 16-bit,
  // plain blocked specs whose blocks tile the array exactly (no edge
  // checks), rows a multiple of 16 bytes, not aliased to an output.
  for (int64_t i = nsp; i < numIn; ++i) {
    RankedTensorType t = info.inputs[i];
    BlockSpecAttr spec = mapping.getInSpecs()[i - nsp];
    // A symbolic input has no tensor map (its extent is known at launch
    // only): it is read as its blocks' loads.
    if (aliasOf.count(i) || t.getRank() != 2 || !t.hasStaticShape() ||
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
