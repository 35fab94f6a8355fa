//===- HostCode.cpp - Host code for lowered kernels: JIT and objects -*- C++ -*-===//

#include "src/Runtime/HostCode.h"

#include "passes/Pipelines/Pipelines.h"
#include "src/Launch/RuntimeSymbols.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/RTDyldObjectLinkingLayer.h"
#include "llvm/ExecutionEngine/SectionMemoryManager.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/SmallVectorMemoryBuffer.h"
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

/// The four analysis managers of a new-pass-manager pipeline, registered
/// with `pb`'s analyses and cross-wired.
struct AnalysisManagers {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  explicit AnalysisManagers(llvm::PassBuilder &pb) {
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
  }
};

/// Moves every top-level loop of every function into a function of its own
/// that the optimizer may not inline back.
void outlineLoops(llvm::Module &module, llvm::TargetMachine *tm) {
  llvm::SmallPtrSet<const llvm::Function *, 16> before;
  for (const llvm::Function &f : module.functions())
    before.insert(&f);
  llvm::PassBuilder pb(tm);
  AnalysisManagers am(pb);
  llvm::ModulePassManager mpm;
  mpm.addPass(llvm::createModuleToFunctionPassAdaptor(llvm::LoopSimplifyPass()));
  mpm.addPass(llvm::LoopExtractorPass());
  mpm.run(module, am.mam);
  for (llvm::Function &f : module.functions())
    if (!before.contains(&f) && !f.isDeclaration())
      f.addFnAttr(llvm::Attribute::NoInline);
}

/// LLVM's -O3 pipeline (as mlir::makeOptimizingTransformer(3, 0, tm) builds
/// it) without CalledValuePropagationPass. That pass only attaches !callees
/// metadata to indirect calls, and a lowered module has none; but its sparse
/// solver revisits a call each time one of its arguments changes state, and
/// visits all of the call's arguments each time: quadratic in the arguments
/// of one call. The C interface wrapper passes 7 values per ref to the kernel
/// (and `run`'s packed wrapper one per ref to the C interface), so a kernel
/// with 1000 operands spent 6.3 s in that pass alone (500: 1.2 s;
/// bench/stress_compile.py).
llvm::Error optimizeO3(llvm::Module &module, llvm::TargetMachine *tm) {
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = true;
  tuning.LoopInterleaving = true;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::PassInstrumentationCallbacks callbacks;
  callbacks.registerShouldRunOptionalPassCallback(
      [](llvm::StringRef pass, llvm::Any) {
        return pass != "CalledValuePropagationPass";
      });
  llvm::PassBuilder pb(tm, tuning, std::nullopt, &callbacks);
  AnalysisManagers am(pb);
  llvm::ModulePassManager mpm;
  mpm.addPass(pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3));
  mpm.run(module, am.mam);
  return llvm::Error::success();
}

/// -O3, with the loops outlined first in a module above kOutlineLoopsAbove.
llvm::Error optimizeForHost(llvm::Module &module, llvm::TargetMachine *tm) {
  if (largestFunction(module) > kOutlineLoopsAbove)
    outlineLoops(module, tm);
  return optimizeO3(module, tm);
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

JitObjectCache::~JitObjectCache() = default;

namespace {
/// "_mlir_ciface_<func>"'s packed-argument wrapper: `void(ptr args)`.
std::string packedName(llvm::StringRef cInterface) {
  return ("_mlir_" + cInterface).str();
}

/// Adds, for each C interface function `_mlir_ciface_F` defined in
/// `module`, the packed wrapper `_mlir__mlir_ciface_F(ptr args)`, which
/// loads argument i through the pointer args[i] and calls it (the entry
/// points of a lowered kernel return nothing; a result is stored through
/// the pointer after the arguments).
void addPackedWrappers(llvm::Module &module) {
  llvm::LLVMContext &ctx = module.getContext();
  llvm::IRBuilder<> b(ctx);
  std::vector<llvm::Function *> interfaces;
  for (llvm::Function &f : module.functions())
    if (!f.isDeclaration() && f.getName().starts_with("_mlir_ciface_"))
      interfaces.push_back(&f);
  for (llvm::Function *f : interfaces) {
    auto *type = llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy()},
                                         /*isVarArg=*/false);
    auto *wrapper = llvm::Function::Create(
        type, llvm::GlobalValue::ExternalLinkage, packedName(f->getName()),
        module);
    b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", wrapper));
    llvm::Value *argv = wrapper->getArg(0);
    auto slot = [&](unsigned i) {
      llvm::Value *p = b.CreateConstGEP1_64(b.getPtrTy(), argv, i);
      return b.CreateLoad(b.getPtrTy(), p);
    };
    std::vector<llvm::Value *> args;
    for (llvm::Argument &a : f->args())
      args.push_back(b.CreateLoad(a.getType(), slot(a.getArgNo())));
    llvm::Value *result = b.CreateCall(f, args);
    if (!result->getType()->isVoidTy())
      b.CreateStore(result, slot(f->arg_size()));
    b.CreateRetVoid();
  }
}

bool hasStaticConstructors(const llvm::Module &module) {
  for (const char *name : {"llvm.global_ctors", "llvm.global_dtors"})
    if (const llvm::GlobalVariable *g = module.getNamedGlobal(name))
      if (g->hasInitializer() && !g->getInitializer()->isNullValue())
        return true;
  return false;
}

llvm::Expected<llvm::orc::JITTargetMachineBuilder>
hostMachine(const JitOptions &options) {
  initializeNativeTarget();
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (builder)
    builder->setCodeGenOptLevel(options.codeGenOptLevel);
  return builder;
}

/// An LLJIT for this machine whose main library resolves the runtime's
/// functions, `options.extraSymbols` and the process's symbols; objects are
/// linked by RuntimeDyld into section-managed memory (as
/// mlir::ExecutionEngine does).
llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>>
makeJit(llvm::orc::JITTargetMachineBuilder machine,
        const JitOptions &options) {
  auto jit =
      llvm::orc::LLJITBuilder()
          .setJITTargetMachineBuilder(std::move(machine))
          .setObjectLinkingLayerCreator([](llvm::orc::ExecutionSession &es) {
            return std::make_unique<llvm::orc::RTDyldObjectLinkingLayer>(
                es, [](const llvm::MemoryBuffer &) {
                  return std::make_unique<llvm::SectionMemoryManager>();
                });
          })
          .create();
  if (!jit)
    return jit.takeError();
  llvm::orc::JITDylib &main = (*jit)->getMainJITDylib();
  llvm::orc::MangleAndInterner interner((*jit)->getExecutionSession(),
                                        (*jit)->getDataLayout());
  llvm::orc::SymbolMap map;
  auto add = [&](const char *name, void *address) {
    map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                           llvm::JITSymbolFlags::Exported};
  };
  for (auto [name, address] : runtimeSymbols())
    add(name, address);
  for (auto [name, address] : options.extraSymbols)
    add(name, address);
  if (llvm::Error e = main.define(llvm::orc::absoluteSymbols(std::move(map))))
    return std::move(e);
  auto process =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
          (*jit)->getDataLayout().getGlobalPrefix());
  if (!process)
    return process.takeError();
  main.addGenerator(std::move(*process));
  return jit;
}
} // namespace

std::string jitHostIdentity() {
  std::string s = hostTriple() + " cpu=" + llvm::sys::getHostCPUName().str() +
                  " features=";
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  std::vector<std::string> names;
  for (const auto &f : features)
    names.push_back((f.getValue() ? "+" : "-") + f.getKey().str());
  llvm::sort(names);
  for (const std::string &n : names)
    s += n + ",";
  return s + " llvm=" LLVM_VERSION_STRING;
}

JitModule::~JitModule() {
  if (jit)
    llvm::consumeError(jit->deinitialize(jit->getMainJITDylib()));
}

std::unique_ptr<JitModule> JitModule::create(mlir::ModuleOp lowered,
                                             std::string &error,
                                             const JitOptions &options,
                                             std::string *object) {
  if (object)
    object->clear();
  auto machine = hostMachine(options);
  if (!machine) {
    error = "cannot target this machine: " + errorText(machine.takeError());
    return nullptr;
  }
  auto tm = machine->createTargetMachine();
  if (!tm) {
    error = "cannot create a target machine for this host: " +
            errorText(tm.takeError());
    return nullptr;
  }
  auto context = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> module =
      mlir::translateModuleToLLVMIR(lowered, *context);
  if (!module) {
    error = "JIT compilation failed: cannot translate the lowered module to "
            "LLVM IR";
    return nullptr;
  }
  mlir::ExecutionEngine::setupTargetTripleAndDataLayout(module.get(),
                                                        tm->get());
  addPackedWrappers(*module);
  llvm::Error optimized = options.optimize
                              ? options.optimize(*module, **tm)
                              : optimizeForHost(*module, tm->get());
  if (optimized) {
    error = "JIT compilation failed: LLVM optimization failed: " +
            errorText(std::move(optimized));
    return nullptr;
  }
  auto jit = makeJit(*machine, options);
  if (!jit) {
    error = "JIT compilation failed: " + errorText(jit.takeError());
    return nullptr;
  }
  llvm::Error added = llvm::Error::success();
  if (hasStaticConstructors(*module)) {
    // Their initializers run through the IR platform's lowering of
    // llvm.global_ctors, which an object file does not get.
    added = (*jit)->addIRModule(
        llvm::orc::ThreadSafeModule(std::move(module), std::move(context)));
  } else {
    llvm::SmallVector<char, 0> buffer;
    {
      llvm::raw_svector_ostream os(buffer);
      llvm::legacy::PassManager passes;
      llvm::MCContext *mc = nullptr;
      if ((*tm)->addPassesToEmitMC(passes, mc, os)) {
        error = "JIT compilation failed: the target cannot emit machine code";
        return nullptr;
      }
      passes.run(*module);
    }
    if (object)
      object->assign(buffer.begin(), buffer.end());
    added = (*jit)->addObjectFile(
        std::make_unique<llvm::SmallVectorMemoryBuffer>(
            std::move(buffer), "pallasc-jit", /*RequiresNullTerminator=*/false));
  }
  if (added) {
    error = "JIT compilation failed: " + errorText(std::move(added));
    return nullptr;
  }
  if (llvm::Error e = (*jit)->initialize((*jit)->getMainJITDylib())) {
    error = "JIT compilation failed: " + errorText(std::move(e));
    return nullptr;
  }
  std::unique_ptr<JitModule> result(new JitModule());
  result->jit = std::move(*jit);
  return result;
}

std::unique_ptr<JitModule> JitModule::load(llvm::StringRef object,
                                           std::string &error,
                                           const JitOptions &options) {
  auto machine = hostMachine(options);
  if (!machine) {
    error = "cannot target this machine: " + errorText(machine.takeError());
    return nullptr;
  }
  // Checked before ORC sees it: RuntimeDyld trusts its input.
  auto parsed = llvm::object::ObjectFile::createObjectFile(
      llvm::MemoryBufferRef(object, "pallasc-jit"));
  if (!parsed) {
    error = "not an object file: " + errorText(parsed.takeError());
    return nullptr;
  }
  if ((*parsed)->makeTriple().getArch() != machine->getTargetTriple().getArch()) {
    error = "an object file for another architecture";
    return nullptr;
  }
  auto jit = makeJit(*machine, options);
  if (!jit) {
    error = errorText(jit.takeError());
    return nullptr;
  }
  if (llvm::Error e = (*jit)->addObjectFile(
          llvm::MemoryBuffer::getMemBufferCopy(object, "pallasc-jit"))) {
    error = errorText(std::move(e));
    return nullptr;
  }
  if (llvm::Error e = (*jit)->initialize((*jit)->getMainJITDylib())) {
    error = errorText(std::move(e));
    return nullptr;
  }
  std::unique_ptr<JitModule> result(new JitModule());
  result->jit = std::move(*jit);
  return result;
}

std::unique_ptr<JitModule> JitModule::loadCached(JitObjectCache &objects,
                                                 const JitOptions &options) {
  std::optional<std::string> object = objects.load();
  if (!object)
    return nullptr;
  std::string error;
  std::unique_ptr<JitModule> jit = load(*object, error, options);
  if (!jit)
    objects.warn("warning: cannot link the cached JIT object (" + error +
                 "); compiling again");
  return jit;
}

JitModule::PackedFn JitModule::lookupCInterface(const std::string &func,
                                                std::string &error) {
  auto fn = jit->lookup(packedName("_mlir_ciface_" + func));
  if (!fn) {
    error = "the compiled module has no entry point for @" + func + ": " +
            errorText(fn.takeError());
    return nullptr;
  }
  return fn->toPtr<PackedFn>();
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
