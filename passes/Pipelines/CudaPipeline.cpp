//===- CudaPipeline.cpp - pallas kernels to PTX -----------------*- C++ -*-===//
//
// The NVIDIA route (docs/cuda.md, "Pipeline"): the GPU distribution both
// vendors share (GpuPipeline.h), then nvvm-attach-target{chip features O=3}
// (the PTX ISA version from the GPU target table: +ptx80); in the gpu.module
// pallas-expand-views, lower-affine (where an affine op is left:
// RunIfPresent.cpp), convert-scf-to-cf, convert-gpu-to-nvvm (bare pointers:
// one .param per array), convert-math-to-llvm (where a math op is left),
// pallas-nvgpu-to-nvvm, convert-nvvm-to-llvm (where a PTX-builder op is);
// then pallas-gpu-module-to-ptx (PtxSerialize.cpp), with the toolkit so
// libdevice is linked where it is called.
//
//===----------------------------------------------------------------------===//

#include "passes/Pipelines/CudaPipeline.h"
#include "passes/Pipelines/ToolLookup.h"
#include "passes/Pipelines/GpuPipeline.h"

#include "passes/Conversion/PallasToGPU/PallasToGPU.h"
#include "chips/GpuTarget.h"
#include "passes/Pipelines/Passes.h"
#include "passes/Pipelines/Pipelines.h"
#include "passes/Transforms/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Process.h"

using namespace mlir;

std::string mlir::pallas::defaultCudaToolkitPath() {
  if (explicitToolLookup()) {
    auto home = llvm::sys::Process::GetEnv("CUDA_HOME");
    return home && *home != "none" ? *home : "";
  }
  if (auto home = llvm::sys::Process::GetEnv("CUDA_HOME");
      home && !home->empty())
    return *home;
  if (llvm::sys::fs::is_directory("/usr/local/cuda"))
    return "/usr/local/cuda";
  return "";
}

void mlir::pallas::buildCudaDistributionPipeline(
    OpPassManager &pm, const CudaPipelineOptions &options) {
  GpuDistributionOptions distribution;
  distribution.chip = options.chip;
  distribution.strictFloat = options.strictFloat;
  buildGpuDistributionPipeline(pm, distribution);
}

void mlir::pallas::buildMosaicGpuDistributionPipeline(
    OpPassManager &pm, const CudaPipelineOptions &options) {
  PallasMGPUToGPUOptions toGpu;
  toGpu.chip = options.chip;
  pm.addPass(createPallasMGPUToGPU(toGpu));
}

void mlir::pallas::buildCudaCodegenPipeline(OpPassManager &pm,
                                            const CudaPipelineOptions &options) {
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  if (target.features.empty())
    if (const pallasc::GpuTarget *t = pallasc::lookupGpuChip(options.chip))
      target.features = t->llvmFeatures;
  target.optLevel = options.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(target));

  OpPassManager &device = pm.nest<mlir::gpu::GPUModuleOp>();
  // Only CSE here: the distributed kernel is large and straight-line, the
  // greedy canonicalizer would take most of the compile time for what
  // LLVM's -O3 does anyway.
  device.addPass(createCSEPass());
  // Collapsed views of the arrays (one base pointer per access stream).
  device.addPass(createPallasExpandViews());
  addLowerAffineIfPresent(device);
  device.addPass(createSCFToControlFlowPass());
  ConvertGpuOpsToNVVMOpsOptions toNvvm;
  toNvvm.useBarePtrCallConv = true;
  device.addPass(createConvertGpuOpsToNVVMOps(toNvvm));
  // What libdevice has no function for (math.trunc, ctlz, cttz, ctpop):
  // LLVM intrinsics the NVPTX backend selects. Most kernels have none left.
  device.addPass(createRunIfPresentPass(
      [](Operation *op) {
        return isa_and_nonnull<math::MathDialect>(op->getDialect());
      },
      createConvertMathToLLVMPass()));
  // `.extern .shared .b8 NAME[]` instead of a demoted 1-byte variable.
  device.addPass(createPallasGPUExternSharedMemory());
  // cp.async (emitted as nvgpu.device_async_copy) with 32-bit indices.
  device.addPass(createPallasNVGPUToNVVM());
  // NVVM ops without an LLVM intrinsic, as inline PTX (wgmma, mbarriers,
  // TMA): the pass rewrites only the ops of this interface.
  device.addPass(createRunIfPresentPass(
      [](Operation *op) { return isa<NVVM::BasicPtxBuilderInterface>(op); },
      createConvertNVVMToLLVMPass()));
  if (!options.serialize) {
    // The printed NVVM IR (pallasc-opt, lit), folded: constants and casts
    // the conversions left, without region simplification. A serialized
    // module does without: LLVM's pipeline folds the same and the PTX of
    // every example and lit input is the same, for 4% less compile time
    // (flash attention, sm_80).
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    device.addPass(createCanonicalizerPass(config));
    device.addPass(createCSEPass());
  }
  device.addPass(createReconcileUnrealizedCastsPass());

  if (!options.serialize)
    return;
  pm.addPass(createPallasVerify());
  PallasGpuModuleToPtxOptions ptx;
  ptx.toolkitPath = options.toolkitPath.empty() ? defaultCudaToolkitPath()
                                                : options.toolkitPath;
  pm.addPass(createPallasGpuModuleToPtx(ptx));
}

void mlir::pallas::buildCudaPipeline(OpPassManager &pm,
                                     const CudaPipelineOptions &options) {
  buildCudaDistributionPipeline(pm, options);
  buildCudaCodegenPipeline(pm, options);
}

void mlir::pallas::registerCudaPipelineDialects(DialectRegistry &registry) {
  registry.insert<mlir::gpu::GPUDialect, NVVM::NVVMDialect, LLVM::LLVMDialect,
                  affine::AffineDialect, nvgpu::NVGPUDialect,
                  cf::ControlFlowDialect, ub::UBDialect,
                  vector::VectorDialect, index::IndexDialect>();
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  vector::registerConvertVectorToLLVMInterface(registry);
  NVVM::registerConvertGpuToNVVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerAllGPUToLLVMIRTranslations(registry);
}

namespace {
struct CudaPipelineCLOptions
    : public PassPipelineOptions<CudaPipelineCLOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("CUDA chip of the GPU target table "
                                          "(sm_75 ... sm_120)"),
                           llvm::cl::init("sm_80")};
  Option<std::string> toolkit{*this, "toolkit",
                              llvm::cl::desc("CUDA toolkit root (libdevice)"),
                              llvm::cl::init("")};
  Option<unsigned> optLevel{*this, "O",
                            llvm::cl::desc("LLVM optimization level (0-3)"),
                            llvm::cl::init(3)};
  Option<bool> serialize{*this, "serialize",
                         llvm::cl::desc("Serialize to PTX (else stop at the "
                                        "NVVM dialect)"),
                         llvm::cl::init(true)};
  Option<bool> strictFp{*this, "strict-fp",
                        llvm::cl::desc("IEEE floating point: no FMA "
                                       "contraction, IEEE-rounded division"),
                        llvm::cl::init(false)};

  mlir::pallas::CudaPipelineOptions toOptions() const {
    mlir::pallas::CudaPipelineOptions options;
    options.chip = chip;
    options.toolkitPath = toolkit;
    options.serialize = serialize;
    options.optLevel = optLevel;
    options.strictFloat = strictFp;
    return options;
  }
};
} // namespace

void mlir::pallas::registerCudaPipeline() {
  PassPipelineRegistration<CudaPipelineCLOptions>(
      "pallas-to-cuda-pipeline",
      "Lower a pallas_call to PTX: prepare, pallas-to-linalg, pallas-to-gpu, "
      "then gpu/nvvm and serialization",
      [](OpPassManager &pm, const CudaPipelineCLOptions &cl) {
        buildCudaPipeline(pm, cl.toOptions());
      });
  PassPipelineRegistration<CudaPipelineCLOptions>(
      "pallas-mgpu-to-cuda-pipeline",
      "Lower a Mosaic GPU kernel (pallas_mgpu) to PTX: pallas-mgpu-to-gpu, "
      "then the gpu/nvvm steps and serialization of pallas-to-cuda-pipeline",
      [](OpPassManager &pm, const CudaPipelineCLOptions &cl) {
        CudaPipelineOptions options = cl.toOptions();
        buildMosaicGpuDistributionPipeline(pm, options);
        buildCudaCodegenPipeline(pm, options);
      });
}
