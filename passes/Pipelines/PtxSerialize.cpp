//===- PtxSerialize.cpp - gpu.module -> PTX with pallasc's LLVM pipeline ---===//
//
// `pallas-gpu-module-to-ptx`: what upstream's gpu-module-to-binary does for an
// `#nvvm.target` with format `isa` (translate to LLVM IR, link libdevice,
// optimize, NVPTX code generation; a gpu.binary holding the PTX), with two
// differences that only cost compile time upstream:
//  - libdevice is linked only into a module that calls one of its functions
//    (`__nv_*`). Upstream loads and links it into every module; linking adds
//    nothing to a module without such calls, but reading the library's
//    bitcode does cost.
//  - LLVM's optimization pipeline is ours: the same `-O<n>` default pipeline
//    upstream builds (mlir::makeOptimizingTransformer), with LICM's promotion
//    of memory to registers skipped in loops of more than
//    kLicmPromotionAccessCap memory accesses. The distributed kernels keep
//    every loop-carried value in SSA registers (scf.for iter_args), so their
//    loops have nothing to promote, while the alias sets the promotion
//    search builds over a large unrolled loop body were the most expensive
//    part of LICM (6% of a matmul compile).
//  - the NVPTX back end runs at -O2 at most (kBackEndOptLevel): at -O3 its
//    IR passes run GVN where -O2 runs EarlyCSE, on IR the optimization
//    pipeline has already run GVN on.
// The PTX of every example is the same as upstream's, and of every lit input
// but three, where the -O2 back end's is a few instructions shorter
// (scripts/compare_artifacts.sh).
//
//===----------------------------------------------------------------------===//

#include "passes/Pipelines/Passes.h"
#include "passes/Pipelines/Pipelines.h"
#include "chips/GpuTarget.h"
#include "passes/Pipelines/ToolLookup.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Target/LLVM/NVVM/Utils.h"

#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/OptimizationLevel.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Target/TargetMachine.h"

#include <algorithm>
#include <string>

using namespace mlir;

namespace mlir::pallas {
#define GEN_PASS_DEF_PALLASGPUMODULETOPTX
#include "passes/Pipelines/Passes.h.inc"
} // namespace mlir::pallas

namespace {

/// LICM promotes no memory to registers in a loop with more memory accesses
/// than this (LLVM's default: 250; its --licm-mssa-max-acc-promotion). The
/// kernels' loops that are smaller than this still get the promotion.
constexpr unsigned kLicmPromotionAccessCap = 32;

/// The highest llvm::CodeGenOptLevel the NVPTX back end runs at (Default).
constexpr int kBackEndOptLevel = 2;

/// Upstream's NVPTX serializer for format `isa`, with libdevice linked only
/// when needed and pallasc's optimization pipeline.
class PtxSerializer : public NVVM::SerializeGPUModuleBase {
public:
  PtxSerializer(gpu::GPUModuleOp module, NVVM::NVVMTargetAttr target,
                const gpu::TargetOptions &options)
      : SerializeGPUModuleBase(*module, target, options) {
    // Upstream falls back to CUDA_ROOT, CUDA_HOME, CUDA_PATH and a default
    // path for an empty toolkit; with explicit tool lookup an empty one
    // means no libdevice at all.
    if (pallas::explicitToolLookup() && options.getToolkitPath().empty()) {
      toolkitPath.clear();
      llvm::erase_if(librariesToLink, [](Attribute lib) {
        auto path = dyn_cast<StringAttr>(lib);
        return path && path.getValue().ends_with("libdevice.10.bc");
      });
    }
  }

protected:
  std::optional<SmallVector<std::unique_ptr<llvm::Module>>>
  loadBitcodeFiles(llvm::Module &module) override {
    bool callsLibdevice = llvm::any_of(module.functions(), [](llvm::Function &f) {
      return f.isDeclaration() && f.getName().starts_with("__nv_");
    });
    if (callsLibdevice)
      return SerializeGPUModuleBase::loadBitcodeFiles(module);
    // The libraries other than libdevice (a target's `link` list) are
    // linked as upstream does.
    SmallVector<Attribute> others;
    for (Attribute lib : librariesToLink) {
      auto path = dyn_cast<StringAttr>(lib);
      if (!path || !path.getValue().ends_with("libdevice.10.bc"))
        others.push_back(lib);
    }
    SmallVector<std::unique_ptr<llvm::Module>> modules;
    if (failed(loadBitcodeFilesFromList(module.getContext(), others, modules)))
      return std::nullopt;
    return std::move(modules);
  }

  LogicalResult optimizeModule(llvm::Module &module, int level) override {
    if (level < 0 || level > 3)
      return getOperation().emitError()
             << "invalid LLVM optimization level " << level
             << " (expected 0 to 3)";
    FailureOr<llvm::TargetMachine *> machine = getOrCreateTargetMachine();
    if (failed(machine))
      return getOperation().emitError()
             << "no LLVM target machine for " << triple;
    // The back end at -O2 (llc's default) whatever the IR level: at -O3
    // NVPTX's IR passes run GVN twice where -O2 runs EarlyCSE, after the O3
    // pipeline below has run GVN already. That was 6% of a flash attention
    // compile (sm_80) for PTX that is the same on every example; on the
    // three lit inputs where it differs, -O2's is shorter.
    (*machine)->setOptLevel(static_cast<llvm::CodeGenOptLevel>(
        std::min(level, kBackEndOptLevel)));
    static const llvm::OptimizationLevel levels[] = {
        llvm::OptimizationLevel::O0, llvm::OptimizationLevel::O1,
        llvm::OptimizationLevel::O2, llvm::OptimizationLevel::O3};

    llvm::PipelineTuningOptions tuning;
    tuning.LoopUnrolling = true;
    tuning.LoopInterleaving = true;
    tuning.LoopVectorization = true;
    tuning.SLPVectorization = slpCanPack(module);
    tuning.LicmMssaNoAccForPromotionCap = kLicmPromotionAccessCap;

    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder builder(*machine, tuning);
    builder.registerModuleAnalyses(mam);
    builder.registerCGSCCAnalyses(cgam);
    builder.registerFunctionAnalyses(fam);
    builder.registerLoopAnalyses(lam);
    builder.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::ModulePassManager mpm;
    mpm.addPass(builder.buildPerModuleDefaultPipeline(levels[level]));
    mpm.run(module, mam);
    return success();
  }

  /// Whether LLVM's SLP vectorizer may find something of `module` to pack
  /// into the chip's registers. Where the chip has f32x2 arithmetic (or is
  /// unknown, to be safe): always. Below, a register packs only lanes
  /// narrower than 32 bits (f16, bf16, i8, i16; i1 lives in predicates), and
  /// SLP's candidates are then scalar narrow computations: a narrow scalar
  /// produced by anything but a conversion or a vector extract, or stored.
  /// Conversions into a vector and extracts out of one (the f16 operands of
  /// mma.sync) are already paired, or matched by the NVPTX back end itself
  /// (cvt.rn.f16x2.f32). Where nothing qualifies the pass only costs time:
  /// its reduction search was 14% of a flash attention compile, for PTX that
  /// is the same without it (every example and lit input, sm_75 to sm_90a).
  bool slpCanPack(llvm::Module &module) const {
    const pallasc::GpuTarget *chipEntry =
        pallasc::lookupGpuChip(target.getChip().str());
    if (!chipEntry || chipEntry->hasPackedF32)
      return true;
    auto narrowScalar = [](llvm::Type *type) {
      if (type->isHalfTy() || type->isBFloatTy())
        return true;
      if (auto *integer = dyn_cast<llvm::IntegerType>(type))
        return integer->getBitWidth() > 1 && integer->getBitWidth() < 32;
      return false;
    };
    for (llvm::Function &f : module)
      for (llvm::Instruction &inst : llvm::instructions(f)) {
        if (auto *store = dyn_cast<llvm::StoreInst>(&inst)) {
          if (narrowScalar(store->getValueOperand()->getType()))
            return true;
          continue;
        }
        if (isa<llvm::CastInst, llvm::ExtractElementInst>(inst))
          continue;
        if (narrowScalar(inst.getType()))
          return true;
      }
    return false;
  }

  FailureOr<SmallVector<char, 0>>
  moduleToObject(llvm::Module &module) override {
    FailureOr<llvm::TargetMachine *> machine = getOrCreateTargetMachine();
    if (failed(machine))
      return getOperation().emitError()
             << "no LLVM target machine for " << triple;
    FailureOr<SmallString<0>> ptx = translateModuleToISA(
        module, **machine, [&] { return getOperation().emitError(); });
    if (failed(ptx))
      return failure();
    return SmallVector<char, 0>(ptx->begin(), ptx->end());
  }
};

struct GpuModuleToPtxPass
    : pallas::impl::PallasGpuModuleToPtxBase<GpuModuleToPtxPass> {
  using PallasGpuModuleToPtxBase::PallasGpuModuleToPtxBase;

  void runOnOperation() final {
    SmallVector<mlir::gpu::GPUModuleOp> modules(
        getOperation().getOps<mlir::gpu::GPUModuleOp>());
    for (mlir::gpu::GPUModuleOp module : modules)
      if (failed(serialize(module)))
        return signalPassFailure();
  }

  LogicalResult serialize(mlir::gpu::GPUModuleOp module) {
    ArrayAttr targets = module.getTargetsAttr();
    if (!targets || targets.empty())
      return module.emitError()
             << "has no target; attach one with nvvm-attach-target";
    gpu::TargetOptions options(toolkitPath, {}, {}, {},
                               gpu::CompilationTarget::Assembly);
    Builder b(module.getContext());
    SmallVector<Attribute> objects;
    for (Attribute attr : targets) {
      auto target = dyn_cast<NVVM::NVVMTargetAttr>(attr);
      if (!target)
        return module.emitError()
               << "target " << attr
               << " is not an #nvvm.target (this pass only writes PTX)";
      PtxSerializer serializer(module, target, options);
      serializer.init();
      std::optional<SmallVector<char, 0>> ptx = serializer.run();
      if (!ptx)
        return module.emitError() << "could not serialize the module to PTX";
      // The properties upstream's NVVM target records for format `isa`.
      DictionaryAttr properties = b.getDictionaryAttr(
          b.getNamedAttr("O", b.getI32IntegerAttr(target.getO())));
      objects.push_back(mlir::gpu::ObjectAttr::get(
          module.getContext(), target, gpu::CompilationTarget::Assembly,
          b.getStringAttr(StringRef(ptx->data(), ptx->size())), properties,
          /*kernels=*/nullptr));
    }
    OpBuilder builder(module);
    builder.setInsertionPointAfter(module);
    mlir::gpu::BinaryOp::create(builder, module.getLoc(), module.getName(),
                                module.getOffloadingHandlerAttr(), objects);
    module->erase();
    return success();
  }
};

} // namespace
