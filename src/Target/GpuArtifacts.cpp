//===- GpuArtifacts.cpp - The GPU targets' shared compile sequence -*- C++ -*-===//

#include "src/Target/GpuArtifacts.h"

#include "src/Driver/Timing.h"
#include "src/Support/CompileStage.h"
#include "src/Target/CudaArtifacts.h"

#include "dialects/Pallas/IR/PallasOps.h"
#include "target/GpuTarget.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace pallasc {

bool hasPallasCall(ModuleOp module) {
  bool hasCall = false;
  module.walk([&](pallas::CallOp) { hasCall = true; });
  return hasCall;
}

Location kernelLocation(ModuleOp module) {
  Location kernelLoc = module.getLoc();
  module.walk([&](pallas::KernelOp k) { kernelLoc = k.getLoc(); });
  return kernelLoc;
}

std::vector<VendorTarget>
vendorTargets(const std::vector<std::string> &targets,
              bool (*isVendorTarget)(const std::string &)) {
  std::vector<VendorTarget> out;
  for (const std::string &target : targets) {
    if (!isVendorTarget(target) ||
        llvm::any_of(out, [&](const VendorTarget &t) {
          return t.target == target;
        }))
      continue;
    out.push_back({target, lookupGpuTarget(target)});
  }
  return out;
}

FailureOr<LoweredGpuKernel>
lowerGpuKernel(ModuleOp module, Location kernelLoc, const std::string &target,
               const GpuTarget &chip, const GpuVendorLowering &vendor,
               bool emitText) {
  if (failed(checkRegisterFootprint(module, chip)))
    return failure();
  LoweredGpuKernel out;
  OwningOpRef<ModuleOp> copy(module.clone());
  {
    Step step("distribution");
    CompileStage stage("the GPU lowering", target);
    PassManager distribute(module.getContext());
    setUpLoweringPipeline(distribute);
    vendor.buildDistribution(distribute);
    if (failed(distribute.run(*copy)))
      return failure();
    // Verified once here instead of after every pass (setUpLoweringPipeline):
    // what --emit=mlir prints and the codegen pipeline reads.
    if (!verifyEachPass() && failed(verify(*copy)))
      return failure();
  }
  copy->walk([&](mlir::gpu::GPUFuncOp f) {
    out.launch =
        f->getAttrOfType<pallas::GpuLaunchAttr>(pallas::kGpuLaunchAttrName);
    out.entry = f.getName().str();
  });
  if (!out.launch)
    return emitError(module.getLoc())
           << "the " << vendor.name << " lowering produced no kernel";
  if (failed(checkSharedMemory(kernelLoc, out.launch, chip)))
    return failure();
  if (emitText) {
    std::string text;
    llvm::raw_string_ostream os(text);
    copy->print(os);
    out.gpuText = std::move(text);
  }
  {
    // The vendor's LLVM lowering, then LLVM's back end (GpuModuleToBinary).
    Step step("codegen");
    CompileStage stage(vendor.codegenStage, target);
    // Verified before serialization by its pallas-verify pass.
    PassManager codegen(module.getContext());
    setUpLoweringPipeline(codegen);
    vendor.buildCodegen(codegen);
    if (failed(codegen.run(*copy))) {
      if (vendor.codegenFailed)
        vendor.codegenFailed();
      return failure();
    }
  }
  copy->walk([&](mlir::gpu::BinaryOp binary) {
    for (Attribute a : binary.getObjectsAttr())
      if (auto obj = dyn_cast<mlir::gpu::ObjectAttr>(a))
        out.object = obj.getObject().str();
  });
  if (out.object.empty())
    return emitError(module.getLoc()) << "the " << vendor.name
                                      << " lowering produced no "
                                      << vendor.objectName;
  return out;
}

} // namespace pallasc
