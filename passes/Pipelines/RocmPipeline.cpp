//===- RocmPipeline.cpp - pallas kernels to AMDGPU ------------*- C++ -*-===//
//
// The AMD route (docs/rocm.md), after our distribution:
// rocdl-attach-target{chip abi O}; in the gpu.module convert-scf-to-cf,
// convert-amdgpu-to-rocdl (MFMA), convert-gpu-to-rocdl (bare pointers: one
// kernel argument per array); gpu-module-to-binary{format=isa} with the
// device-library root so ocml/ockl are linked.
//
//===----------------------------------------------------------------------===//

#include "passes/Pipelines/RocmPipeline.h"
#include "passes/Pipelines/ToolLookup.h"

#include "passes/Pipelines/GpuPipeline.h"
#include "passes/Pipelines/Passes.h"
#include "passes/Pipelines/Pipelines.h"
#include "chips/GpuTarget.h"
#include "passes/Conversion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Target/LLVM/ROCDL/Target.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

using namespace mlir;

std::string mlir::pallas::defaultRocmDeviceLibsRoot() {
  auto has = [](llvm::StringRef root) {
    llvm::SmallString<128> p(root);
    llvm::sys::path::append(p, "amdgcn", "bitcode", "ocml.bc");
    return llvm::sys::fs::exists(p);
  };
  // A ROCM_PATH that is set decides: no fallback when it lacks the bitcode.
  if (auto rocm = llvm::sys::Process::GetEnv("ROCM_PATH"); rocm)
    return has(*rocm) ? *rocm : "";
  if (explicitToolLookup())
    return "";
  for (const char *root : {"/opt/rocm", "/usr/lib/x86_64-linux-gnu"})
    if (has(root))
      return root;
  return "";
}

void mlir::pallas::buildRocmDistributionPipeline(
    OpPassManager &pm, const RocmPipelineOptions &options) {
  GpuDistributionOptions distribution;
  distribution.chip = options.chip;
  distribution.strictFloat = options.strictFloat;
  // Pallas' Triton lowering divides at full precision on AMD GPUs.
  distribution.approxDivision = false;
  buildGpuDistributionPipeline(pm, distribution);
}

void mlir::pallas::buildRocmCodegenPipeline(
    OpPassManager &pm, const RocmPipelineOptions &options) {
  GpuROCDLAttachTargetOptions target;
  target.chip = options.chip;
  target.abiVersion = options.abiVersion;
  target.optLevel = options.optLevel;
  // Wavefront size from the GPU target table (64 on CDNA, 32 on RDNA: the
  // wave64 flag off compiles the kernel for wave32).
  const pallasc::GpuTarget *chip = pallasc::lookupGpuChip(options.chip);
  target.wave64Flag = !chip || chip->lanesPerWarp == 64;
  pm.addPass(createGpuROCDLAttachTarget(target));

  OpPassManager &device = pm.nest<mlir::gpu::GPUModuleOp>();
  device.addPass(createCSEPass());
  device.addPass(createPallasExpandViews());
  addLowerAffineIfPresent(device);
  device.addPass(createSCFToControlFlowPass());
  ConvertAMDGPUToROCDLPassOptions amdgpu;
  amdgpu.chipset = options.chip;
  device.addPass(createConvertAMDGPUToROCDLPass(amdgpu));
  // tanh, tan, atan, atan2, sinh, cosh, asin, acos as ocml calls
  // (convert-gpu-to-rocdl would pick LLVM intrinsics the AMDGPU backend
  // cannot select: "no libcall available for ftanh"). Before, tanh was
  // expanded into exp here, after the point the emulator runs and less
  // accurate near 0 than ocml's.
  PallasMathToOcmlOptions ocml;
  ocml.chipset = options.chip;
  device.addPass(createPallasMathToOcml(ocml));
  ConvertGpuOpsToROCDLOpsOptions toRocdl;
  toRocdl.chipset = options.chip;
  toRocdl.useBarePtrCallConv = true;
  toRocdl.runtime = mlir::gpu::amd::Runtime::HIP;
  device.addPass(createConvertGpuOpsToROCDLOps(toRocdl));
  device.addPass(createCanonicalizerPass());
  device.addPass(createCSEPass());
  device.addPass(createReconcileUnrealizedCastsPass());

  if (!options.serialize)
    return;
  pm.addPass(createPallasVerify());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  binary.toolkitPath = options.deviceLibsRoot.empty()
                           ? defaultRocmDeviceLibsRoot()
                           : options.deviceLibsRoot;
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

void mlir::pallas::buildRocmPipeline(OpPassManager &pm,
                                     const RocmPipelineOptions &options) {
  buildRocmDistributionPipeline(pm, options);
  buildRocmCodegenPipeline(pm, options);
}

void mlir::pallas::registerRocmPipelineDialects(DialectRegistry &registry) {
  registry.insert<amdgpu::AMDGPUDialect, ROCDL::ROCDLDialect>();
  ROCDL::registerROCDLTargetInterfaceExternalModels(registry);
}

namespace {
struct RocmPipelineCLOptions
    : public PassPipelineOptions<RocmPipelineCLOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("AMD chip of the GPU target table "
                                          "(`pallasc --version` lists them)"),
                           llvm::cl::init("gfx90a")};
  Option<std::string> abi{*this, "abi",
                          llvm::cl::desc("Code object version: 400, 500 or "
                                         "600"),
                          llvm::cl::init("500")};
  Option<std::string> deviceLibs{
      *this, "device-libs",
      llvm::cl::desc("Directory holding amdgcn/bitcode (ocml, ockl)"),
      llvm::cl::init("")};
  Option<unsigned> optLevel{*this, "O",
                            llvm::cl::desc("LLVM optimization level (0-3)"),
                            llvm::cl::init(3)};
  Option<bool> serialize{*this, "serialize",
                         llvm::cl::desc("Serialize to AMDGPU assembly (else "
                                        "stop at the ROCDL dialect)"),
                         llvm::cl::init(true)};
  Option<bool> strictFp{*this, "strict-fp",
                        llvm::cl::desc("IEEE floating point: no FMA "
                                       "contraction"),
                        llvm::cl::init(false)};
};
} // namespace

void mlir::pallas::registerRocmPipeline() {
  PassPipelineRegistration<RocmPipelineCLOptions>(
      "pallas-to-rocm-pipeline",
      "Lower a pallas_call to AMDGPU assembly: prepare, pallas-to-linalg, "
      "pallas-to-gpu (wave64 + MFMA or wave32 + WMMA), then amdgpu/gpu -> "
      "rocdl and "
      "serialization",
      [](OpPassManager &pm, const RocmPipelineCLOptions &cl) {
        RocmPipelineOptions options;
        options.chip = cl.chip;
        options.abiVersion = cl.abi;
        options.deviceLibsRoot = cl.deviceLibs;
        options.serialize = cl.serialize;
        options.optLevel = cl.optLevel;
        options.strictFloat = cl.strictFp;
        buildRocmPipeline(pm, options);
      });
}
