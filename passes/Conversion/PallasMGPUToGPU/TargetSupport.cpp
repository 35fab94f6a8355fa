//===- TargetSupport.cpp - Which targets compile a Mosaic GPU kernel -----===//

#include "passes/Conversion/PallasMGPUToGPU/TargetSupport.h"

#include "chips/GpuTarget.h"
#include "dialects/PallasMGPU/IR/MgpuDialect.h"

#include "llvm/ADT/STLExtras.h"

#include <optional>

using namespace mlir;
using namespace mlir::pallas_mgpu;

namespace {

/// One hardware feature a Mosaic GPU op lowers to, with the PTX instruction
/// that names it in messages and the chips that have it.
struct Feature {
  const char *instruction;
  const char *chips;
  bool (*has)(const pallasc::GpuTarget &);
};

bool isSm90a(const pallasc::GpuTarget &t) {
  return std::string_view(t.chip) == "sm_90a";
}
bool hasTma(const pallasc::GpuTarget &t) { return t.hasTma; }
bool hasSm90(const pallasc::GpuTarget &t) { return t.computeCapability >= 90; }
bool hasSetMaxNReg(const pallasc::GpuTarget &t) {
  // PTX ISA 8.0: setmaxnreg requires sm_90a; 8.6 adds sm_100a and sm_101a.
  std::string_view chip = t.chip;
  return chip == "sm_90a" || chip == "sm_100a";
}

// In the order a refusal names them: the tensor cores first, then the copy
// engine, then what the synchronization needs.
const Feature kWgmma = {"wgmma.mma_async", "sm_90a only", isSm90a};
const Feature kTma = {"TMA's cp.async.bulk.tensor", "sm_90 and newer",
                      hasTma};
const Feature kSetMaxNReg = {"setmaxnreg", "sm_90a and sm_100a",
                             hasSetMaxNReg};
const Feature kTryWait = {"mbarrier.try_wait", "sm_90 and newer", hasSm90};
const Feature kProxyFence = {"fence.proxy.async", "sm_90 and newer",
                             hasSm90};
const Feature kCluster = {"thread block clusters", "sm_90 and newer",
                          hasSm90};
const Feature *const kFeatures[] = {&kWgmma,    &kTma,        &kSetMaxNReg,
                                    &kTryWait,  &kProxyFence, &kCluster};

/// The feature `op` lowers to, if any.
const Feature *featureOf(Operation *op) {
  if (isa<WgmmaOp, WgmmaWaitOp>(op))
    return &kWgmma;
  if (isa<CopyGmemToSmemOp, CopySmemToGmemOp, CommitGroupOp,
          WaitSmemToGmemOp>(op))
    return &kTma;
  if (isa<SetMaxRegistersOp>(op))
    return &kSetMaxNReg;
  if (isa<BarrierWaitOp>(op))
    return &kTryWait;
  if (isa<CommitSmemOp>(op))
    return &kProxyFence;
  if (auto kernel = dyn_cast<KernelOp>(op))
    if (llvm::any_of(kernel.getCluster(), [](int64_t n) { return n > 1; }))
      return &kCluster;
  return nullptr;
}

Operation *firstMosaicGpuOp(ModuleOp module) {
  Operation *found = nullptr;
  module->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op->getDialect() && isa<MgpuDialect>(op->getDialect())) {
      found = op;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return found;
}

} // namespace

bool mlir::pallas_mgpu::hasMosaicGpuOps(ModuleOp module) {
  return firstMosaicGpuOp(module) != nullptr;
}

LogicalResult mlir::pallas_mgpu::checkMosaicGpuTarget(
    ModuleOp module, const std::string &target) {
  Operation *first = firstMosaicGpuOp(module);
  if (!first)
    return success();
  const pallasc::GpuTarget *gpu = pallasc::lookupGpuTarget(target);
  if (!gpu || !gpu->isNvidia()) {
    first->emitError() << "'" << first->getName()
                       << "' is a Mosaic GPU (plgpu.kernel) op: target '"
                       << target
                       << "' cannot run Mosaic GPU kernels, which compile "
                          "for "
                       << kMosaicGpuTarget << " only";
    return failure();
  }
  // Every op that needs a feature the chip lacks, first one per feature.
  llvm::SmallVector<std::pair<const Feature *, Operation *>> missing;
  module->walk<WalkOrder::PreOrder>([&](Operation *op) {
    const Feature *f = featureOf(op);
    if (f && !f->has(*gpu) &&
        !llvm::any_of(missing, [&](auto &m) { return m.first == f; }))
      missing.push_back({f, op});
  });
  if (!missing.empty()) {
    llvm::sort(missing, [](auto &a, auto &b) {
      return llvm::find(kFeatures, a.first) < llvm::find(kFeatures, b.first);
    });
    auto [feature, op] = missing.front();
    InFlightDiagnostic diag = op->emitError();
    diag << "'" << op->getName() << "' needs " << feature->instruction
         << ", which target '" << target << "' (" << gpu->family
         << ") does not have (" << feature->chips << ")";
    if (feature == &kWgmma && gpu->computeCapability == 100)
      diag << "; Blackwell's tensor-core primitives (tcgen05.mma, tensor "
              "memory) are not lowered yet";
    if (missing.size() > 1) {
      diag << "; the kernel also needs ";
      for (size_t i = 1; i < missing.size(); ++i)
        diag << (i > 1 ? ", " : "") << missing[i].first->instruction << " ("
             << missing[i].first->chips << ")";
    }
    diag << "; compile for " << kMosaicGpuTarget;
    return failure();
  }
  if (target != kMosaicGpuTarget) {
    first->emitError() << "'" << first->getName()
                       << "' is a Mosaic GPU (plgpu.kernel) op: the lowering "
                          "of the Mosaic GPU model is built for "
                       << kMosaicGpuTarget << " only, not '" << target << "'";
    return failure();
  }
  return success();
}
