//===- CudaPipeline.h - pallas kernels to PTX -------------------*- C++ -*-===//
//
// The NVIDIA pipeline (docs/cuda.md): pallas-gpu-prepare, pallas-to-linalg,
// pallas-to-gpu, then upstream's gpu -> nvvm -> PTX. Registered as
// `pallas-to-cuda-pipeline` so lit tests run what `pallasc --target cuda:*`
// runs.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_PIPELINES_CUDAPIPELINE_H
#define PALLASC_PASSES_PIPELINES_CUDAPIPELINE_H

#include <string>

namespace mlir {
class DialectRegistry;
class OpPassManager;
} // namespace mlir

namespace mlir::pallas {

struct CudaPipelineOptions {
  /// A CUDA chip of the GPU target table (chips/GpuTarget.h): sm_80, ...
  std::string chip = "sm_80";
  /// PTX ISA features for the NVPTX backend; empty: the chip's, from the
  /// GPU target table (sm_90 needs PTX 8.0).
  std::string features;
  /// LLVM optimization level for the device code.
  unsigned optLevel = 3;
  /// CUDA toolkit root (libdevice is linked from <toolkit>/nvvm/libdevice);
  /// empty: CUDA_HOME, else /usr/local/cuda when it exists.
  std::string toolkitPath;
  /// Strict IEEE floating point, see GpuDistributionOptions (GpuPipeline.h);
  /// without it f32 division is div.full.f32.
  bool strictFloat = false;
  /// Stop before serializing (the module then holds the NVVM/LLVM dialect
  /// gpu.module instead of a gpu.binary with PTX).
  bool serialize = true;
};

/// The toolkit directory used when none is given ("" when there is none).
std::string defaultCudaToolkitPath();

void buildCudaPipeline(OpPassManager &pm, const CudaPipelineOptions &options);

/// The two halves of buildCudaPipeline: up to the distributed gpu.module
/// (which carries the launch record; the GPU distribution of GpuPipeline.h
/// with NVIDIA's choices), then NVVM, LLVM and serialization.
void buildCudaDistributionPipeline(OpPassManager &pm,
                                   const CudaPipelineOptions &options);
void buildCudaCodegenPipeline(OpPassManager &pm,
                              const CudaPipelineOptions &options);

/// The distribution of a Mosaic GPU kernel (`pallas_mgpu.kernel`):
/// pallas-mgpu-to-gpu for the chip (sm_90a only), which leaves the same
/// gpu.module with its launch record; buildCudaCodegenPipeline follows.
void buildMosaicGpuDistributionPipeline(OpPassManager &pm,
                                        const CudaPipelineOptions &options);

/// Interfaces and translations the pipeline needs (conversion-to-LLVM
/// interfaces of the dialects in kernels, NVVM target, LLVM IR
/// translations).
void registerCudaPipelineDialects(DialectRegistry &registry);

/// Registers `pallas-to-cuda-pipeline` (once per process, as
/// registerPallasPipelines).
void registerCudaPipeline();

} // namespace mlir::pallas

#endif // PALLASC_PASSES_PIPELINES_CUDAPIPELINE_H
