//===- LaunchRecord.cpp - pallas-to-gpu: the launch record -*- C++ -*-===//
//
// The `pallas.gpu.launch` record (#pallas.gpu_launch) pallas-to-gpu puts on
// its gpu.func: the launch geometry and the kernel's parameters in launch
// order, from which the manifest's launch object and the launchers' records
// are written (docs/cuda.md, "The manifest").
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/KernelSkeleton.h"

#include "dialects/Pallas/IR/GpuLaunchAttrs.h"

using namespace mlir;
using namespace mlir::pallas;

GpuLaunchAttr mlir::pallas::gpu::buildLaunchRecord(
    MLIRContext *ctx, const KernelFunction &kf, const CallInfo &info,
    const LaunchGeometry &geometry, ArrayRef<KernelContext::TensorMap> maps,
    int64_t numWarps, int64_t numThreads, int64_t sharedBytes,
    int64_t scratchSharedBytes) {
  int64_t numIn = info.numInputs(), numOut = info.numOutputs();
  auto param = [&](GpuParamKind kind, GpuOperandGroup group, int64_t index) {
    return GpuParamAttr::get(ctx, kind, group, index, std::nullopt, Type(), {},
                             {}, StringAttr(), StringAttr(), StringAttr(),
                             StringAttr());
  };
  SmallVector<GpuParamAttr> params;
  for (int64_t i = 0; i < numIn; ++i)
    params.push_back(param(GpuParamKind::Pointer, GpuOperandGroup::Inputs, i));
  for (int64_t j = 0; j < numOut; ++j)
    params.push_back(param(GpuParamKind::Pointer, GpuOperandGroup::Outputs, j));
  for (auto [k, a] : llvm::enumerate(kf.dynamicAxes))
    params.push_back(GpuParamAttr::get(
        ctx, GpuParamKind::GridBound, GpuOperandGroup::GridBounds, k, a, Type(),
        {}, {}, StringAttr(), StringAttr(), StringAttr(), StringAttr()));
  // A symbolic call's symbols (sorted by name), an i32 each.
  for (size_t s = 0; s < info.symbols.size(); ++s)
    params.push_back(param(GpuParamKind::Symbol, GpuOperandGroup::Symbols,
                           static_cast<int64_t>(s)));
  // Tensor maps: a pointer each to a CUtensorMap in global memory, encoded
  // by the launcher (cuTensorMapEncodeTiled) as the record describes.
  Builder b(ctx);
  for (const KernelContext::TensorMap &m : maps)
    params.push_back(GpuParamAttr::get(
        ctx, GpuParamKind::TensorMap, GpuOperandGroup::Inputs, m.input,
        std::nullopt, m.elementType.isBF16() ? b.getBF16Type() : b.getF16Type(),
        m.globalShape, m.boxShape, b.getStringAttr("128B"),
        b.getStringAttr("none"), b.getStringAttr("128B"),
        b.getStringAttr("zero")));
  return GpuLaunchAttr::get(
      ctx, kf.entry, geometry.cudaGrid, geometry.cudaAxes[0],
      geometry.cudaAxes[1], geometry.cudaAxes[2], {numThreads, 1, 1}, numWarps,
      numThreads / numWarps, geometry.seqAxes, info.mapping.getVmappedAxes(),
      sharedBytes, scratchSharedBytes, params);
}
