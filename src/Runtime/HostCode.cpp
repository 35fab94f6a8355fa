//===- HostCode.cpp - Host code for lowered kernels: JIT and objects -*- C++ -*-===//

#include "src/Runtime/HostCode.h"

#include "passes/Pipelines/Pipelines.h"
#include "src/Launch/RuntimeSymbols.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Transforms/IPO/LoopExtractor.h"
#include "llvm/Transforms/Utils/LoopSimplify.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"

namespace pallasc::runtime {

namespace {
void initializeNativeTarget() {
  static bool done = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)done;
}

std::string errorText(llvm::Error error) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << error;
  return s;
}

/// A module whose largest function holds more instructions than this before
/// optimization is compiled with its top-level loops outlined. LLVM's
/// register allocator and two-address pass are super-linear in the size of a
/// function (a chain of 2,500 elementwise ops: 17 s of code generation in one
/// function, 4.7 s outlined), and the loops of a lowered kernel (one pass
/// over a block each) share nothing but pointers. The examples' functions
/// stay well below it (flash attention: 1,117), so their objects are
/// unchanged.
constexpr unsigned kOutlineLoopsAbove = 3000;

unsigned largestFunction(const llvm::Module &module) {
  unsigned largest = 0;
  for (const llvm::Function &f : module.functions())
    largest = std::max(largest, f.getInstructionCount());
  return largest;
}

/// Moves every top-level loop of every function into a function of its own
/// that the optimizer may not inline back.
void outlineLoops(llvm::Module &module, llvm::TargetMachine *tm) {
  llvm::SmallPtrSet<const llvm::Function *, 16> before;
  for (const llvm::Function &f : module.functions())
    before.insert(&f);
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm;
  mpm.addPass(llvm::createModuleToFunctionPassAdaptor(llvm::LoopSimplifyPass()));
  mpm.addPass(llvm::LoopExtractorPass());
  mpm.run(module, mam);
  for (llvm::Function &f : module.functions())
    if (!before.contains(&f) && !f.isDeclaration())
      f.addFnAttr(llvm::Attribute::NoInline);
}

/// -O3, with the loops outlined first in a module above kOutlineLoopsAbove.
llvm::Error optimizeForHost(llvm::Module &module, llvm::TargetMachine *tm) {
  if (largestFunction(module) > kOutlineLoopsAbove)
    outlineLoops(module, tm);
  return mlir::makeOptimizingTransformer(3, 0, tm)(&module);
}
} // namespace

std::string hostTriple() { return llvm::sys::getDefaultTargetTriple(); }

mlir::LogicalResult lowerForHost(mlir::ModuleOp module, bool printIRAfterAll) {
  mlir::PassManager pm(module.getContext());
  pm.enableVerifier(true);
  if (printIRAfterAll)
    pm.enableIRPrinting(
        [](mlir::Pass *, mlir::Operation *) { return false; },
        [](mlir::Pass *, mlir::Operation *) { return true; },
        /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false);
  mlir::pallas::buildCpuPipeline(pm);
  return pm.run(module);
}

JitModule::~JitModule() = default;

std::unique_ptr<JitModule> JitModule::create(
    mlir::ModuleOp lowered, std::string &error,
    const std::vector<std::pair<const char *, void *>> &extraSymbols) {
  initializeNativeTarget();
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder) {
    error = "cannot target this machine: " + errorText(builder.takeError());
    return nullptr;
  }
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto tm = builder->createTargetMachine();
  if (!tm) {
    error = "cannot create a target machine for this host: " +
            errorText(tm.takeError());
    return nullptr;
  }
  llvm::TargetMachine *machine = tm->get();
  auto transformer = [machine](llvm::Module *module) {
    return optimizeForHost(*module, machine);
  };
  mlir::ExecutionEngineOptions options;
  options.transformer = transformer;
  options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  options.enableGDBNotificationListener = false;
  options.enablePerfNotificationListener = false;
  auto engine =
      mlir::ExecutionEngine::create(lowered, options, std::move(*tm));
  if (!engine) {
    error = "JIT compilation failed: " + errorText(engine.takeError());
    return nullptr;
  }
  (*engine)->registerSymbols([&](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    for (auto [name, address] : runtimeSymbols())
      map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                             llvm::JITSymbolFlags::Exported};
    for (auto [name, address] : extraSymbols)
      map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                             llvm::JITSymbolFlags::Exported};
    return map;
  });
  (*engine)->initialize();
  std::unique_ptr<JitModule> jit(new JitModule());
  jit->engine = std::move(*engine);
  return jit;
}

JitModule::PackedFn JitModule::lookupCInterface(const std::string &func,
                                                std::string &error) {
  auto fn = engine->lookupPacked("_mlir_ciface_" + func);
  if (!fn) {
    error = "the compiled module has no entry point for @" + func + ": " +
            errorText(fn.takeError());
    return nullptr;
  }
  return *fn;
}

bool emitHostObject(
    mlir::ModuleOp lowered, std::string &object, std::string &error,
    const std::function<bool(llvm::Module &, std::string &)> &augment) {
  initializeNativeTarget();
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module =
      mlir::translateModuleToLLVMIR(lowered, context);
  if (!module) {
    error = "cannot translate the lowered module to LLVM IR";
    return false;
  }
  llvm::Triple triple(hostTriple());
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return false;
  // A generic CPU: the object must run on any machine of this triple.
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, "generic", "", llvm::TargetOptions(), llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!tm) {
    error = "cannot create a target machine for " + triple.str();
    return false;
  }
  mlir::ExecutionEngine::setupTargetTripleAndDataLayout(module.get(),
                                                        tm.get());
  if (augment && !augment(*module, error))
    return false;
  if (llvm::Error e = optimizeForHost(*module, tm.get())) {
    error = "LLVM optimization failed: " + errorText(std::move(e));
    return false;
  }
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager passes;
  if (tm->addPassesToEmitFile(passes, os, nullptr,
                              llvm::CodeGenFileType::ObjectFile)) {
    error = "the target cannot emit object files";
    return false;
  }
  passes.run(*module);
  object.assign(buffer.begin(), buffer.end());
  return true;
}

} // namespace pallasc::runtime
