//===- LaunchRecord.cpp - pallas-to-gpu: the launch record -*- C++ -*-===//
//
// The `pallas.gpu.launch` dictionary pallas-to-gpu puts on its gpu.func:
// the launch geometry and the kernel's parameters in launch order, from
// which the manifest's launch object and the launchers' records are written
// (docs/cuda.md, "The manifest").
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/KernelSkeleton.h"

using namespace mlir;
using namespace mlir::pallas;

DictionaryAttr mlir::pallas::gpu::buildLaunchRecord(
    MLIRContext *ctx, const KernelFunction &kf, const CallInfo &info,
    const LaunchGeometry &geometry, ArrayRef<KernelContext::TensorMap> maps,
    int64_t numWarps, int64_t numThreads, int64_t sharedBytes,
    int64_t scratchSharedBytes) {
  Builder b(ctx);
  int64_t numIn = info.numInputs(), numOut = info.numOutputs();
  auto ints = [&](ArrayRef<int64_t> v) {
    SmallVector<Attribute> a;
    for (int64_t x : v)
      a.push_back(b.getI64IntegerAttr(x));
    return b.getArrayAttr(a);
  };
  SmallVector<Attribute> axes;
  for (auto &ax : geometry.cudaAxes)
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
  for (auto [k, a] : llvm::enumerate(kf.dynamicAxes))
    paramAttrs.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("kind", b.getStringAttr("i32")),
         b.getNamedAttr("operand",
                        b.getStringAttr("grid_bounds[" + std::to_string(k) +
                                        "]")),
         b.getNamedAttr("axis", b.getI64IntegerAttr(a))}));
  // Tensor maps: a pointer each to a CUtensorMap in global memory, encoded
  // by the launcher (cuTensorMapEncodeTiled) as the record describes.
  for (const KernelContext::TensorMap &m : maps)
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
  return b.getDictionaryAttr(
      {b.getNamedAttr("entry", b.getStringAttr(kf.entry)),
       b.getNamedAttr("grid", ints(geometry.cudaGrid)),
       b.getNamedAttr("grid_axes", b.getArrayAttr(axes)),
       b.getNamedAttr("block", ints({numThreads, 1, 1})),
       b.getNamedAttr("num_warps", b.getI64IntegerAttr(numWarps)),
       b.getNamedAttr("warp_size", b.getI64IntegerAttr(numThreads /
                                                        numWarps)),
       b.getNamedAttr("sequential_axes", ints(geometry.seqAxes)),
       b.getNamedAttr("vmapped_axes", ints(info.mapping.getVmappedAxes())),
       b.getNamedAttr("dynamic_shared_memory_bytes",
                      b.getI64IntegerAttr(sharedBytes)),
       b.getNamedAttr("scratch_shared_memory_bytes",
                      b.getI64IntegerAttr(scratchSharedBytes)),
       b.getNamedAttr("params", b.getArrayAttr(paramAttrs))});
}
