//===- Driver.cpp - pallasc compile driver --------------------*- C++ -*-===//

#include "src/Driver/Driver.h"

#include "src/Driver/CpuTarget.h"
#include "src/Driver/Diagnostics.h"
#include "src/Driver/Frontend.h"
#include "src/Driver/OutputFiles.h"
#include "src/InitAll.h"
#include "src/Manifest/Manifest.h"
#include "src/Spec/SpecToIR.h"
#include "src/Support/InputChecks.h"
#include "src/Target/CudaArtifacts.h"
#include "src/Target/RocmArtifacts.h"
#include "src/Target/TPUArtifacts.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <spdlog/spdlog.h>

using namespace mlir;

namespace pallasc {

/// Inputs larger than this are rejected before parsing.
constexpr uint64_t kMaxKernelBytes = 64ull << 20;
constexpr uint64_t kMaxSpecBytes = 16ull << 20;
/// Operations a kernel file may hold (docs/limits.md says why this many).
constexpr int64_t kMaxKernelOps = 100000;

std::string transformToPassPipeline(const spec::Transform &t) {
  auto joinInts = [](const auto &values, auto toInt) {
    std::string s;
    for (const auto &v : values)
      s += (s.empty() ? "" : ",") + std::to_string(toInt(v));
    return s;
  };
  switch (t.kind) {
  case spec::Transform::Kind::Vmap:
    return "pallas-vmap{axis-size=" + std::to_string(t.axisSize) +
           " in-axes=" +
           joinInts(t.inAxes,
                    [](const std::optional<int64_t> &a) {
                      return a ? *a : int64_t(-1);
                    }) +
           "}";
  case spec::Transform::Kind::Jvp:
    return "pallas-jvp";
  case spec::Transform::Kind::Dce:
    return "pallas-dce{used-outputs=" +
           joinInts(t.usedOutputs, [](bool b) { return b ? 1 : 0; }) + "}";
  case spec::Transform::Kind::DischargeState:
    return "pallas-discharge-state";
  case spec::Transform::Kind::HiToLo:
    return "pallas-hi-to-lo";
  }
  return "";
}

namespace {

/// Reads a whole input file, with a size cap; reports through the logger.
std::unique_ptr<llvm::MemoryBuffer> readInput(const std::string &path,
                                              uint64_t cap,
                                              const char *what) {
  std::string error;
  auto buffer = mlir::openInputFile(path, &error);
  if (!buffer) {
    logError(path + ": error: cannot read " + what + ": " + error);
    return nullptr;
  }
  if (buffer->getBufferSize() > cap) {
    logError(path + ": error: the " + what + " is " +
             std::to_string(buffer->getBufferSize()) +
             " bytes, over the limit of " + std::to_string(cap) + " bytes");
    return nullptr;
  }
  return buffer;
}

/// Rejects binary input and pathological nesting before the parser sees it,
/// pointing at the offending byte.
LogicalResult checkText(const std::string &path, llvm::StringRef text,
                        const char *what) {
  std::string message;
  if (checkInputText(text, message))
    return success();
  logError(path + ":" + message.substr(0, message.find(": ")) +
           ": error: the " + what + " is " +
           message.substr(message.find(": ") + 2));
  return failure();
}

/// Rejects a parsed kernel file with more than kMaxKernelOps operations
/// (the module itself not counted), at the first operation past the cap, in
/// textual order.
LogicalResult checkKernelSize(ModuleOp module) {
  int64_t count = 0;
  WalkResult result = module->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op == module.getOperation() || ++count <= kMaxKernelOps)
      return WalkResult::advance();
    op->emitError() << "the kernel has more than " << kMaxKernelOps
                    << " operations, the limit; this is operation " << count;
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

std::string baseName(const std::string &path) {
  return llvm::sys::path::filename(path).str();
}

/// Runs the spec's transforms (then the command line's) and the cleanup
/// passes on `module`.
LogicalResult runTransformPasses(MLIRContext &context,
                                 const DriverOptions &options, ModuleOp module,
                                 const spec::GridSpec &spec) {
  registerAllPasses();
  PassManager pm(&context);
  pm.enableVerifier(true);
  if (options.printIRAfterAll)
    pm.enableIRPrinting(
        /*shouldPrintBeforePass=*/[](Pass *, Operation *) { return false; },
        /*shouldPrintAfterPass=*/[](Pass *, Operation *) { return true; },
        /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false);
  for (const spec::Transform &t : spec.transforms) {
    std::string element = transformToPassPipeline(t);
    std::string error;
    llvm::raw_string_ostream errs(error);
    if (failed(parsePassPipeline(element, pm, errs))) {
      logError(options.specPath + ": error: " + t.path +
               ": transform '" + element.substr(0, element.find('{')) +
               "' is not available: " + error);
      return failure();
    }
  }
  if (options.optLevel > 0) {
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
  return pm.run(module);
}

/// The compilation of one kernel + spec.
class Compilation {
public:
  explicit Compilation(const DriverOptions &options)
      : options(options), context(makeDriverRegistry()) {
    configureDriverContext(context);
  }

  int run();

private:
  const DriverOptions &options;
  MLIRContext context;
};

int Compilation::run() {
  DiagnosticRouter router(&context);

  FrontendResult fe;
  if (int rc = runFrontend(options, context, router, fe))
    return rc;
  if (int rc = checkTargets(options))
    return rc;

  // Outputs, all staged in temporary files and renamed at the end.
  OutputFiles outputs(options.outputDir);
  outputs.protectInput(options.kernelPath, "kernel");
  outputs.protectInput(options.specPath, "grid spec");
  if (failed(outputs.prepare()))
    return kExitUserError;
  std::vector<CompiledFile> files;
  if (int rc = emitArtifacts(options, fe, files))
    return rc;
  for (const CompiledFile &f : files)
    if (failed(outputs.stage(f.name, f.contents)))
      return kExitUserError;

  if (!options.depfile.empty()) {
    std::string rule;
    for (const std::string &f : outputs.stagedPaths())
      rule += escapeMakePath(f) + " ";
    rule += ": " + escapeMakePath(options.kernelPath) + " " +
            escapeMakePath(options.specPath) + "\n";
    if (failed(outputs.stageAt(options.depfile, rule)))
      return kExitUserError;
  }
  if (failed(outputs.commit()))
    return kExitUserError;
  for (const std::string &f : outputs.stagedPaths())
    spdlog::debug("wrote {}", f);
  return kExitSuccess;
}

} // namespace

const std::vector<std::string> &everyTarget() {
  // One spelling per code generation target of this build. A new target
  // adds its line here (the pipeline fuzzer compiles every input for each).
  static const std::vector<std::string> targets = {
      "cpu",
      "cuda:sm_80",
      // wgmma, TMA and mbarriers are sm_90a's alone.
      "cuda:sm_90a",
      "rocm:gfx942",
      "tpu",
  };
  return targets;
}

int checkTargets(const DriverOptions &options) {
  for (const std::string &target : options.targets) {
    if (isTpuTarget(target) || isCpuTarget(target) || isCudaTarget(target) ||
        isRocmTarget(target))
      continue;
    logError("error: no code generation target is available in this build "
             "(asked for '" +
             target + "'); use --emit=mlir or --emit=manifest");
    return kExitUsageError;
  }
  return kExitSuccess;
}

int emitArtifacts(const DriverOptions &options, const FrontendResult &fe,
                  std::vector<CompiledFile> &files) {
  ModuleOp module = *fe.module;
  const spec::GridSpec *spec = &fe.spec;
  ManifestInputs manifestInputs;
  manifestInputs.kernel = {baseName(options.kernelPath),
                           sha256Hex(fe.kernelText)};
  manifestInputs.spec = {baseName(options.specPath), sha256Hex(fe.specText)};
  manifestInputs.name = spec->name;

  bool emitMlir = llvm::is_contained(options.emit, "mlir");
  if (emitMlir) {
    std::string text;
    llvm::raw_string_ostream os(text);
    OpPrintingFlags flags;
    module->print(os, flags);
    std::string file = spec->name + ".mlir";
    files.push_back({file, std::move(text)});
    manifestInputs.emitted.push_back(file);
  }

  // --target tpu: <name>.tpu.mlirbc + <name>.tpu.json (src/Target).
  if (llvm::any_of(options.targets, isTpuTarget)) {
    FailureOr<TpuArtifacts> tpu =
        emitTpuArtifacts(module, spec->name, emitMlir);
    if (failed(tpu))
      return kExitUserError;
    for (TpuArtifacts::File &f : tpu->files)
      files.push_back({f.name, std::move(f.contents)});
    llvm::append_range(manifestInputs.artifacts, tpu->manifestEntries);
    llvm::append_range(manifestInputs.emitted, tpu->emitted);
  }

  // --target cuda:<arch>: <name>.<arch>.ptx per arch (src/Target).
  if (llvm::any_of(options.targets, isCudaTarget)) {
    FailureOr<CudaArtifacts> cuda =
        emitCudaArtifacts(module, spec->name, options.targets, emitMlir,
                          llvm::is_contained(options.emit, "cubin"));
    if (failed(cuda))
      return kExitUserError;
    for (CudaArtifacts::File &f : cuda->files)
      files.push_back({f.name, std::move(f.contents)});
    llvm::append_range(manifestInputs.artifacts, cuda->manifestEntries);
    llvm::append_range(manifestInputs.emitted, cuda->emitted);
  }

  // --target rocm:<arch>: <name>.<arch>.hsaco per arch (src/Target).
  if (llvm::any_of(options.targets, isRocmTarget)) {
    FailureOr<RocmArtifacts> rocm = emitRocmArtifacts(
        module, spec->name, options.targets, emitMlir,
        llvm::is_contained(options.emit, "asm"),
        options.rocmCodeObjectVersion);
    if (failed(rocm))
      return kExitUserError;
    for (RocmArtifacts::File &f : rocm->files)
      files.push_back({f.name, std::move(f.contents)});
    llvm::append_range(manifestInputs.artifacts, rocm->manifestEntries);
    llvm::append_range(manifestInputs.emitted, rocm->emitted);
  }

  // --target cpu: <name>.cpu.o, the lowering `pallasc run` executes.
  if (llvm::any_of(options.targets, isCpuTarget)) {
    std::string file, object;
    ManifestArtifact entry;
    if (failed(emitCpuArtifact(module, spec->name, file, object, entry)))
      return kExitUserError;
    if (!file.empty()) {
      files.push_back({file, std::move(object)});
      manifestInputs.artifacts.push_back(std::move(entry));
    }
  }

  FailureOr<nlohmann::json> manifest = buildManifest(module, manifestInputs);
  if (failed(manifest))
    return kExitInternalError;
  files.push_back({spec->name + ".manifest.json", manifestToString(*manifest)});
  return kExitSuccess;
}

int compileToMemory(const DriverOptions &options, llvm::StringRef kernelText,
                    std::string specText, std::vector<CompiledFile> &files) {
  MLIRContext context(makeDriverRegistry());
  configureDriverContext(context);
  DiagnosticRouter router(&context);
  FrontendResult fe;
  if (int rc = runFrontendOnText(options, kernelText, std::move(specText),
                                 context, router, fe))
    return rc;
  if (int rc = checkTargets(options))
    return rc;
  return emitArtifacts(options, fe, files);
}

DialectRegistry makeDriverRegistry() {
  DialectRegistry registry;
  registerAllDialects(registry);
  return registry;
}

void configureDriverContext(MLIRContext &context) {
  context.disableMultithreading();
  // The located message says what is wrong; the generic op dump after it
  // would only bury it.
  context.printOpOnDiagnostic(false);
  context.loadAllAvailableDialects();
}

static int runFrontendOnBuffers(const DriverOptions &options,
                                std::unique_ptr<llvm::MemoryBuffer> kernelBuffer,
                                std::string specText, MLIRContext &context,
                                DiagnosticRouter &router,
                                FrontendResult &result) {
  std::string kernelText = kernelBuffer->getBuffer().str();
  if (failed(checkText(options.kernelPath, kernelText, "kernel")))
    return kExitUserError;

  router.addFileWithoutSnippets(options.specPath);
  // Kernel IR: parsed and verified by MLIR; diagnostics carry file:line:col.
  router.sourceMgr().AddNewSourceBuffer(std::move(kernelBuffer), llvm::SMLoc());
  ParserConfig config(&context);
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(router.sourceMgr(), config);
  if (!module || failed(checkKernelSize(*module)))
    return kExitUserError;

  // Grid spec: JSON with JSON-path diagnostics.
  std::vector<spec::SpecError> specErrors;
  std::optional<spec::GridSpec> spec =
      spec::parseGridSpec(specText, specErrors);
  if (!spec) {
    reportSpecErrors(options.specPath, specErrors);
    return kExitUserError;
  }
  for (const spec::Transform &t : options.extraTransforms)
    spec->transforms.push_back(t);

  Location specLoc = FileLineColLoc::get(&context, options.specPath, 1, 1);
  if (!spec::importGridSpec(*module, *spec, specLoc, specErrors)) {
    reportSpecErrors(options.specPath, specErrors);
    return kExitUserError;
  }
  if (failed(mlir::verify(*module)))
    return kExitUserError;
  spdlog::debug("{}: imported kernel @{} with a grid of rank {}",
                options.specPath, spec->kernel, spec->grid.size());

  if (failed(runTransformPasses(context, options, *module, *spec)))
    return kExitUserError;
  result.module = std::move(module);
  result.spec = std::move(*spec);
  result.kernelText = std::move(kernelText);
  result.specText = std::move(specText);
  return kExitSuccess;
}

int runFrontend(const DriverOptions &options, MLIRContext &context,
                DiagnosticRouter &router, FrontendResult &result) {
  auto kernelBuffer =
      readInput(options.kernelPath, kMaxKernelBytes, "kernel");
  if (!kernelBuffer)
    return kExitUserError;
  auto specBuffer = readInput(options.specPath, kMaxSpecBytes, "grid spec");
  if (!specBuffer)
    return kExitUserError;
  return runFrontendOnBuffers(options, std::move(kernelBuffer),
                              specBuffer->getBuffer().str(), context, router,
                              result);
}

int runFrontendOnText(const DriverOptions &options, llvm::StringRef kernelText,
                      std::string specText, MLIRContext &context,
                      DiagnosticRouter &router, FrontendResult &result) {
  return runFrontendOnBuffers(
      options,
      llvm::MemoryBuffer::getMemBufferCopy(kernelText, options.kernelPath),
      std::move(specText), context, router, result);
}

int runCompile(const DriverOptions &options) {
  Compilation compilation(options);
  return compilation.run();
}

} // namespace pallasc
