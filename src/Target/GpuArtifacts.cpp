//===- GpuArtifacts.cpp - The GPU targets' shared compile sequence -*- C++ -*-===//

#include "src/Target/GpuArtifacts.h"

#include "src/Driver/Timing.h"
#include "src/Support/CompileStage.h"

#include "dialects/Pallas/IR/PallasOps.h"
#include "chips/GpuTarget.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using json = nlohmann::json;

namespace pallasc {

bool hasPallasCall(ModuleOp module) {
  bool hasCall = false;
  module.walk([&](pallas::CallOp) { hasCall = true; });
  return hasCall;
}

Location kernelLocation(ModuleOp module) {
  Location kernelLoc = module.getLoc();
  module.walk([&](pallas::KernelOp k) { kernelLoc = k.getLoc(); });
  // A Mosaic GPU kernel (pallas_mgpu.kernel).
  for (Operation &op : module.getBody()->getOperations())
    if (op.getName().getStringRef() == "pallas_mgpu.kernel")
      kernelLoc = op.getLoc();
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

FailureOr<DistributedGpuKernel>
distributeGpuKernel(ModuleOp module, Location kernelLoc,
                    const std::string &target, const GpuTarget &chip,
                    const GpuVendorLowering &vendor) {
  if (failed(pallas::refuseCrossDeviceOps(module, target)))
    return failure();
  // Local semaphores (pl.semaphore_signal/wait/read) are TPU scratch: no GPU
  // target lowers them.
  WalkResult semaphores = module.walk([&](Operation *op) {
    if (!isa<pallas::SemaphoreSignalOp, pallas::SemaphoreWaitOp,
             pallas::SemaphoreReadOp>(op))
      return WalkResult::advance();
    op->emitOpError() << "is a TPU local semaphore (pltpu.SemaphoreType."
                         "REGULAR); target "
                      << target
                      << " has no lowering for it (semaphores are TPU-only: "
                         "compile for tpu or cpu)";
    return WalkResult::interrupt();
  });
  if (semaphores.wasInterrupted())
    return failure();
  if (failed(checkRegisterFootprint(module, chip)))
    return failure();
  DistributedGpuKernel out;
  out.module = module.clone();
  {
    Step step("distribution");
    CompileStage stage("the GPU lowering", target);
    PassManager distribute(module.getContext());
    setUpLoweringPipeline(distribute);
    vendor.buildDistribution(distribute);
    if (failed(distribute.run(*out.module)))
      return failure();
    // Verified once here instead of after every pass (setUpLoweringPipeline):
    // what --emit=mlir prints and the codegen pipeline reads.
    if (!verifyEachPass() && failed(verify(*out.module)))
      return failure();
  }
  out.module->walk([&](mlir::gpu::GPUFuncOp f) {
    out.launch =
        f->getAttrOfType<pallas::GpuLaunchAttr>(pallas::kGpuLaunchAttrName);
    out.entry = f.getName().str();
  });
  if (!out.launch)
    return emitError(module.getLoc())
           << "the " << vendor.name << " lowering produced no kernel";
  if (failed(checkSharedMemory(kernelLoc, out.launch, chip)))
    return failure();
  return out;
}

FailureOr<std::string> generateGpuObject(ModuleOp distributed,
                                         const std::string &target,
                                         const GpuVendorLowering &vendor) {
  {
    // The vendor's LLVM lowering, then LLVM's back end (pallas-gpu-module-to-ptx
    // for CUDA, gpu-module-to-binary for ROCm).
    Step step("codegen");
    CompileStage stage(vendor.codegenStage, target);
    // Verified before serialization by its pallas-verify pass.
    PassManager codegen(distributed.getContext());
    setUpLoweringPipeline(codegen);
    vendor.buildCodegen(codegen);
    if (failed(codegen.run(distributed))) {
      if (vendor.codegenFailed)
        vendor.codegenFailed();
      return failure();
    }
  }
  std::string object;
  distributed->walk([&](mlir::gpu::BinaryOp binary) {
    for (Attribute a : binary.getObjectsAttr())
      if (auto obj = dyn_cast<mlir::gpu::ObjectAttr>(a))
        object = obj.getObject().str();
  });
  if (object.empty())
    return emitError(distributed.getLoc())
           << "the " << vendor.name << " lowering produced no "
           << vendor.objectName;
  return object;
}

FailureOr<LoweredGpuKernel>
lowerGpuKernel(ModuleOp module, Location kernelLoc, const std::string &target,
               const GpuTarget &chip, const GpuVendorLowering &vendor,
               bool emitText) {
  FailureOr<DistributedGpuKernel> distributed =
      distributeGpuKernel(module, kernelLoc, target, chip, vendor);
  if (failed(distributed))
    return failure();
  LoweredGpuKernel out;
  out.entry = distributed->entry;
  out.launch = distributed->launch;
  if (emitText) {
    std::string text;
    llvm::raw_string_ostream os(text);
    distributed->module->print(os);
    out.gpuText = std::move(text);
  }
  FailureOr<std::string> object =
      generateGpuObject(*distributed->module, target, vendor);
  if (failed(object))
    return failure();
  out.object = std::move(*object);
  return out;
}

LogicalResult checkSharedMemory(Location loc, pallas::GpuLaunchAttr launch,
                                const GpuTarget &target) {
  int64_t bytes = launch.getDynamicSharedMemoryBytes();
  if (bytes <= target.maxSharedBytesPerBlock)
    return success();
  if (target.isAmd())
    return emitError(loc) << "the kernel needs " << bytes
                          << " bytes of LDS (scratch buffers and the "
                             "lowering's workspace) but "
                          << target.chip << " has "
                          << target.maxSharedBytesPerBlock
                          << " per workgroup; use smaller blocks or scratch "
                             "buffers";
  return emitError(loc) << "the kernel needs " << bytes
                        << " bytes of shared memory (scratch buffers and the "
                           "lowering's workspace) but "
                        << target.chip << " has "
                        << target.maxSharedBytesPerBlock
                        << " per block; use smaller blocks or scratch buffers";
}

LogicalResult checkRegisterFootprint(ModuleOp module,
                                     const GpuTarget &target) {
  pallas::CallOp call;
  module.walk([&](pallas::CallOp c) {
    call = c;
    return WalkResult::interrupt();
  });
  int64_t numWarps = 4; // the lowering's default
  if (call)
    if (pallas::CompilerParamsAttr params = call.getCompilerParamsAttr())
      if (params.getNumWarps())
        numWarps = *params.getNumWarps();
  if (numWarps < 1 || numWarps > target.maxWarpsPerBlock())
    return success(); // the lowering reports the num_warps itself
  const int64_t threads = numWarps * target.lanesPerWarp;
  // The 32-bit registers one thread holds of `type`, or 0 when it is not a
  // value held in registers (a ref lives in memory).
  auto perThreadWords = [&](Type type) -> int64_t {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape())
      return 0;
    int64_t elements = tensor.getNumElements(); // <= 2^32: checked earlier
    int64_t bits = std::max<int64_t>(
        8, tensor.getElementType().getIntOrFloatBitWidth());
    int64_t perThread = (elements + threads - 1) / threads;
    return (perThread * bits + 31) / 32;
  };
  std::optional<InFlightDiagnostic> diag;
  // `type`, of the value `what` #`number` of `op` at `loc`, is not over
  // the limit; else the error.
  auto check = [&](Type type, Location loc, const char *what, unsigned number,
                   Operation *op) {
    int64_t words = perThreadWords(type);
    if (words <= kMaxRegisterWordsPerValue)
      return true;
    std::string value;
    llvm::raw_string_ostream os(value);
    os << what << " #" << number << " of '" << op->getName() << "'";
    diag.emplace(emitError(loc));
    *diag << value << " has type " << type << ": spread over " << numWarps
          << (target.isAmd() ? " wavefronts of " : " warps of ")
          << target.lanesPerWarp << " lanes, each lane holds " << words
          << " 32-bit registers of it on " << target.targetName()
          << ", over the limit of " << kMaxRegisterWordsPerValue
          << " (8 times the 256 registers a lane can have: the rest "
             "would spill to local memory, and the compile time grows with "
             "it); use smaller blocks or more warps "
             "(compiler_params.gpu.num_warps, at most "
          << target.maxWarpsPerBlock() << ")";
    return false;
  };
  module.walk([&](pallas::KernelOp kernel) {
    kernel.walk([&](Operation *op) {
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            if (!check(arg.getType(), arg.getLoc(), "block argument",
                       arg.getArgNumber(), op))
              return WalkResult::interrupt();
      for (OpResult result : op->getResults())
        if (!check(result.getType(), op->getLoc(), "result",
                   result.getResultNumber(), op))
          return WalkResult::interrupt();
      return WalkResult::advance();
    });
  });
  if (!diag)
    return success();
  diag->report();
  return failure();
}

LogicalResult reportSpills(Location loc, llvm::StringRef message,
                           bool spillsAreErrors) {
  if (spillsAreErrors) {
    emitError(loc) << message << " [-Werror=spills]";
    return failure();
  }
  emitWarning(loc) << message << " [-Wspills]";
  return success();
}

json gpuLaunchJson(pallas::GpuLaunchAttr launch, llvm::StringRef arch,
                   llvm::StringRef kind) {
  using pallas::GpuParamKind;
  auto ints = [](ArrayRef<int64_t> v) { return json(v.vec()); };
  json j = json::object();
  j["entry"] = launch.getEntry().str();
  json grid = json::array();
  for (int64_t g : launch.getGrid())
    grid.push_back(g < 0 ? json(nullptr) : json(g));
  j["grid"] = grid;
  j["grid_axes"] = json{{"x", ints(launch.getGridAxesX())},
                        {"y", ints(launch.getGridAxesY())},
                        {"z", ints(launch.getGridAxesZ())}};
  j["block"] = ints(launch.getBlock());
  j["num_warps"] = launch.getNumWarps();
  j["warp_size"] = launch.getWarpSize();
  j["sequential_axes"] = ints(launch.getSequentialAxes());
  j["vmapped_axes"] = ints(launch.getVmappedAxes());
  j["dynamic_shared_memory_bytes"] = launch.getDynamicSharedMemoryBytes();
  j["scratch_shared_memory_bytes"] = launch.getScratchSharedMemoryBytes();
  json params = json::array();
  int64_t index = 0;
  for (pallas::GpuParamAttr a : launch.getParams()) {
    json p = json::object();
    p["index"] = index++;
    p["kind"] = pallas::stringifyGpuParamKind(a.getKind()).str();
    p["operand"] = a.getOperandName();
    if (a.getKind() == GpuParamKind::GridBound)
      p["axis"] = *a.getAxis();
    if (a.getKind() == GpuParamKind::TensorMap) {
      p["dtype"] = a.getDtype().isBF16() ? "bf16" : "f16";
      p["global_shape"] = ints(a.getGlobalShape());
      p["box_shape"] = ints(a.getBoxShape());
      p["swizzle"] = a.getSwizzle().str();
      p["interleave"] = a.getInterleave().str();
      p["l2_promotion"] = a.getL2Promotion().str();
      p["oob_fill"] = a.getOobFill().str();
    }
    params.push_back(p);
  }
  j["params"] = params;
  j["arch"] = arch.str();
  j["kind"] = kind.str();
  j["pointer_alignment"] = launch::kGpuPointerAlignment;
  return j;
}

} // namespace pallasc
