//===- Driver.cpp - pallasc compile driver --------------------*- C++ -*-===//

#include "src/Driver/Driver.h"

#include "src/Driver/Cache.h"
#include "src/Driver/Console.h"
#include "src/Driver/CpuTarget.h"
#include "src/Driver/Diagnostics.h"
#include "src/Driver/Frontend.h"
#include "src/Driver/LauncherGen.h"
#include "src/Driver/MosaicGpu.h"
#include "src/Driver/OutputFiles.h"
#include "src/Driver/TargetRegistry.h"
#include "src/Driver/Timing.h"
#include "src/InitAll.h"
#include "src/Manifest/Manifest.h"
#include "src/Spec/SpecToIR.h"
#include "src/Support/BoundedRead.h"
#include "src/Support/CompileStage.h"
#include "src/Support/InputChecks.h"
#include "src/Target/CudaArtifacts.h"
#include "src/Target/RocmArtifacts.h"
#include "chips/GpuTarget.h"
#include "passes/Conversion/PallasMGPUToGPU/TargetSupport.h"
#include "passes/Pipelines/ToolLookup.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <spdlog/spdlog.h>

#include <csignal>
#include <cstdlib>

using namespace mlir;

namespace pallasc {

/// Inputs larger than this are rejected before parsing.
constexpr uint64_t kMaxKernelBytes = 64ull << 20;
constexpr uint64_t kMaxSpecBytes = 16ull << 20;
/// Operations a kernel file may hold (docs/limits.md says why this many).
constexpr int64_t kMaxKernelOps = 100000;

/// `text` without its spaces (a pass option's value ends at a space).
static std::string withoutSpaces(std::string text) {
  text.erase(std::remove(text.begin(), text.end(), ' '), text.end());
  return text;
}

/// `shapes` (the wrapper's inputs, named `sources`) with each vmap's batch
/// axes taken off, the last vmap's first; false with a message naming the
/// input and the vmap when a batch axis is not the axis size.
static bool stripBatchAxes(const std::vector<spec::Transform> &transforms,
                           std::vector<std::vector<int64_t>> &shapes,
                           const std::vector<std::string> &sources,
                           std::string &error) {
  for (auto t = transforms.rbegin(); t != transforms.rend(); ++t) {
    if (t->kind != spec::Transform::Kind::Vmap)
      continue;
    for (size_t i = 0; i < shapes.size() && i < t->inAxes.size(); ++i) {
      if (!t->inAxes[i])
        continue;
      int64_t axis = *t->inAxes[i];
      if (axis >= static_cast<int64_t>(shapes[i].size()) ||
          shapes[i][axis] != t->axisSize) {
        std::string shape;
        for (int64_t d : shapes[i])
          shape += (shape.empty() ? "" : ",") + std::to_string(d);
        error = sources[i] + ": error: inputs[" + std::to_string(i) +
                "] has shape [" + shape + "] but " +
                (t->path.empty() ? std::string("vmap") : t->path) +
                " batches it at axis " + std::to_string(axis) +
                " with axis_size " + std::to_string(t->axisSize);
        return false;
      }
      shapes[i].erase(shapes[i].begin() + axis);
    }
  }
  return true;
}

/// `spec` whose inputs have the batch axes of `transforms`' vmaps, each its
/// axis size (an expression where symbolic), for inferring the symbols
/// from the batched inputs' shapes.
static spec::GridSpec
withBatchAxes(const spec::GridSpec &spec,
              const std::vector<spec::Transform> &transforms) {
  spec::GridSpec batched = spec;
  for (const spec::Transform &t : transforms) {
    if (t.kind != spec::Transform::Kind::Vmap)
      continue;
    for (size_t i = 0; i < batched.inputs.size() && i < t.inAxes.size(); ++i) {
      spec::ArraySpec &a = batched.inputs[i];
      if (!t.inAxes[i] || *t.inAxes[i] > static_cast<int64_t>(a.shape.size()))
        continue;
      if (a.shapeExprs.empty())
        for (int64_t d : a.shape)
          a.shapeExprs.push_back(spec::DimExpr::constant(d));
      int64_t axis = *t.inAxes[i];
      a.shape.insert(a.shape.begin() + axis,
                     t.axisExpr ? spec::kSymbolicDim : t.axisSize);
      a.shapeExprs.insert(a.shapeExprs.begin() + axis,
                          t.axisExpr ? *t.axisExpr
                                     : spec::DimExpr::constant(t.axisSize));
    }
  }
  return batched;
}

/// The symbolic axis sizes of the command line's vmaps (--vmap 0:b) use
/// only the spec's symbols and are at least 1 at their minimums.
static bool checkFlagAxisSizes(const spec::GridSpec &spec,
                               const std::vector<spec::Transform> &extra,
                               std::string &error) {
  for (const spec::Transform &t : extra) {
    if (!t.axisExpr)
      continue;
    std::string declared;
    for (const spec::SymbolSpec &s : spec.symbols)
      declared += (declared.empty() ? "" : ", ") + s.name;
    for (const std::string &name : t.axisExpr->symbols())
      if (llvm::none_of(spec.symbols, [&](const spec::SymbolSpec &s) {
            return s.name == name;
          })) {
        error = t.path + ": unknown symbol '" + name + "' in the axis size '" +
                t.axisExpr->str() + "'; " +
                (declared.empty()
                     ? std::string("the spec declares no symbols")
                     : "the spec declares " + declared);
        return false;
      }
    if (t.axisExpr->lowest(spec.symbols).value_or(0) < 1) {
      error = t.path + ": the axis size '" + t.axisExpr->str() +
              "' may be 0 at the symbols' declared minimums; expected an "
              "expression that is at least 1";
      return false;
    }
  }
  return true;
}

std::string transformToPassPipeline(const spec::Transform &t) {
  auto joinInts = [](const auto &values, auto toInt) {
    std::string s;
    for (const auto &v : values)
      s += (s.empty() ? "" : ",") + std::to_string(toInt(v));
    return s;
  };
  switch (t.kind) {
  case spec::Transform::Kind::Vmap:
    return "pallas-vmap{" +
           (t.axisExpr ? "axis-expr=" + withoutSpaces(t.axisExpr->str())
                       : "axis-size=" + std::to_string(t.axisSize)) +
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

/// Reads a whole input file ("-": stdin), with its size cap enforced while
/// reading (pipes and devices included); reports through the logger.
std::unique_ptr<llvm::MemoryBuffer> readInput(const std::string &path,
                                              uint64_t cap,
                                              const char *what) {
  std::string text, error;
  std::optional<uint64_t> size;
  switch (readBoundedInput(path, cap, text, size, error)) {
  case ReadResult::Ok:
    return llvm::MemoryBuffer::getMemBufferCopy(text, path);
  case ReadResult::CannotRead:
    logError(path + ": error: cannot read " + what + ": " + error);
    return nullptr;
  case ReadResult::TooLarge:
    logError(path + ": error: the " + what + " is " +
             (size ? std::to_string(*size) + " bytes, over the limit of " +
                         std::to_string(cap) + " bytes"
                   : "more than " + std::to_string(cap) +
                         " bytes (read from a pipe or a device), the limit"));
    return nullptr;
  }
  return nullptr;
}

/// Rejects binary input and pathological nesting before the parser sees it,
/// pointing at the offending byte.
LogicalResult checkText(const std::string &path, llvm::StringRef text,
                        const char *what) {
  std::string message;
  if (checkInputText(text, message))
    return success();
  logError(path + ":" + message.substr(0, message.find(": ")) +
           ": error: the " + what + " " +
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

/// While a transform's passes run, names the transform (its JSON path, or
/// the command-line flag) in `current`, so that their errors can say which
/// entry of `transforms` failed.
class TransformPathInstrumentation : public PassInstrumentation {
public:
  TransformPathInstrumentation(llvm::DenseMap<Pass *, std::string> paths,
                               std::string &current)
      : paths(std::move(paths)), current(current) {}
  void runBeforePass(Pass *pass, Operation *) override {
    if (auto it = paths.find(pass); it != paths.end())
      current = it->second;
  }
  void runAfterPass(Pass *pass, Operation *) override {
    if (paths.count(pass))
      current.clear();
  }
  void runAfterPassFailed(Pass *pass, Operation *op) override {
    runAfterPass(pass, op);
  }

private:
  llvm::DenseMap<Pass *, std::string> paths;
  std::string &current;
};

/// Rejects a kernel value (a constant, a loaded block, any tensor, vector or
/// memref result) larger than kMaxBlockBytes, before any pass builds
/// or lowers it: a 334-byte kernel holding `dense<0.0> :
/// tensor<65536x65536xf32>` used to grow to 12 GB before it aborted.
LogicalResult checkValueFootprints(ModuleOp module) {
  WalkResult result = module->walk([&](Operation *op) {
    for (auto [i, r] : llvm::enumerate(op->getResults())) {
      auto shaped = dyn_cast<ShapedType>(r.getType());
      if (!shaped || !shaped.hasStaticShape() ||
          !shaped.getElementType().isIntOrIndexOrFloat())
        continue;
      Type elem = shaped.getElementType();
      int64_t bytes = elem.isIndex() ? 8
                                     : std::max<int64_t>(
                                           1, elem.getIntOrFloatBitWidth() / 8);
      bool overflows = false;
      for (int64_t d : shaped.getShape())
        overflows = overflows || llvm::MulOverflow(bytes, d, bytes);
      if (!overflows && bytes <= kMaxBlockBytes)
        continue;
      InFlightDiagnostic diag = op->emitError();
      diag << "result #" << i << " of '" << op->getName() << "' has type "
           << r.getType() << ", which needs ";
      if (overflows)
        diag << "more than 2^63 bytes";
      else
        diag << bytes << " bytes";
      diag << ", over the limit of " << kMaxBlockBytes
           << " bytes (4 GiB) for one block or constant";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// Runs the spec's transforms (then the command line's) and the cleanup
/// passes on `module`.
LogicalResult runTransformPasses(MLIRContext &context,
                                 const DriverOptions &options, ModuleOp module,
                                 const spec::GridSpec &spec) {
  CompileStage stage("the call-level transforms");
  // The transforms are looked up by name; the cleanup passes below are
  // added directly and need no registry.
  if (!spec.transforms.empty())
    registerAllPasses();
  Step step("transforms");
  PassManager pm(&context);
  timePasses(pm);
  pm.enableVerifier(true);
  if (options.printIRAfterAll)
    pm.enableIRPrinting(
        /*shouldPrintBeforePass=*/[](Pass *, Operation *) { return false; },
        /*shouldPrintAfterPass=*/[](Pass *, Operation *) { return true; },
        /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false);
  llvm::DenseMap<Pass *, std::string> paths;
  for (const spec::Transform &t : spec.transforms) {
    std::string element = transformToPassPipeline(t);
    std::string error;
    llvm::raw_string_ostream errs(error);
    size_t before = pm.size();
    if (failed(parsePassPipeline(element, pm, errs))) {
      logError(options.specPath + ": error: " + t.path +
               ": transform '" + element.substr(0, element.find('{')) +
               "' is not available: " + error);
      return failure();
    }
    size_t index = 0;
    for (Pass &pass : pm.getPasses())
      if (index++ >= before && !t.path.empty())
        paths[&pass] = t.path;
  }
  if (options.optLevel > 0) {
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
  // An error of a transform's pass names the transform first:
  // "spec.json: error: transforms[1]: pallas-vmap: ...".
  std::string current;
  bool reemitting = false;
  pm.addInstrumentation(
      std::make_unique<TransformPathInstrumentation>(std::move(paths),
                                                     current));
  ScopedDiagnosticHandler prefix(&context, [&](Diagnostic &diag) {
    if (current.empty() || reemitting ||
        diag.getSeverity() != DiagnosticSeverity::Error)
      return failure(); // on to the next handler (the router)
    reemitting = true;
    {
      InFlightDiagnostic named = emitError(diag.getLocation())
                                 << current << ": " << diag.str();
      for (Diagnostic &note : diag.getNotes())
        named.attachNote(note.getLocation()) << note.str();
    }
    reemitting = false;
    return success();
  });
  return pm.run(module);
}

/// --debug-internal-error: an internal error of the kind asked for, inside a
/// step for the first target, to test how pallasc reports them.
void raiseDebugInternalError(const DriverOptions &options) {
  CompileStage stage("the --debug-internal-error hook",
                     options.targets.empty() ? "" : options.targets.front());
  if (options.debugInternalError == "fatal")
    llvm::report_fatal_error("a fatal error requested by "
                             "--debug-internal-error\nwith a second line");
  if (options.debugInternalError == "crash")
    std::raise(SIGSEGV);
  if (options.debugInternalError == "abort")
    std::abort();
}

/// The compilation of one kernel + spec, through `cache` when not null.
class Compilation {
public:
  Compilation(const DriverOptions &options, CompileCache *cache)
      : options(options), cache(cache) {}

  int run();

private:
  const DriverOptions &options;
  CompileCache *cache;
};

/// The depfile's path: -MF's, else beside the outputs (gcc's -MD default:
/// the output's name with `.d`).
std::string depfilePath(const DriverOptions &options,
                        const OutputLocation &location,
                        const std::string &name) {
  if (!options.depfile.empty())
    return options.depfile;
  llvm::SmallString<256> path(location.directory);
  if (!location.file.empty())
    llvm::sys::path::append(path, llvm::sys::path::stem(location.file) + ".d");
  else
    llvm::sys::path::append(path, name + ".d");
  return std::string(path);
}

/// The depfile's text: one rule from the outputs (or the -MT/-MQ targets) to
/// the kernel and the spec, and with -MP a phony rule for each of those.
std::string depfileRule(const DriverOptions &options,
                        const std::vector<std::string> &outputs) {
  std::string rule;
  if (!options.depTargets.empty())
    for (const std::string &t : options.depTargets)
      rule += t + " ";
  else
    for (const std::string &f : outputs)
      rule += escapeMakePath(f) + " ";
  std::string kernel = escapeMakePath(options.kernelPath);
  std::string spec = escapeMakePath(options.specPath);
  rule += ": " + kernel + " " + spec + "\n";
  if (options.depPhonyTargets)
    rule += "\n" + kernel + ":\n\n" + spec + ":\n";
  return rule;
}

int Compilation::run() {
  std::unique_ptr<llvm::MemoryBuffer> kernelBuffer;
  std::string specText;
  if (int rc = readFrontendInputs(options, kernelBuffer, specText))
    return rc;
  OutputLocation location = resolveOutputPath(options);

  // A hit writes the stored files exactly as a miss writes the compiled
  // ones (same staging, same depfile, same commit).
  std::string key;
  if (cache) {
    std::optional<CacheEntry> cached;
    {
      Step step("cache lookup");
      key = compileCacheKey(options, kernelBuffer->getBuffer(), specText,
                            gatherToolchain(*cache, options.targets),
                            location.file);
      cached = cache->lookup(key);
    }
    if (cached) {
      if (int rc = checkTargets(options))
        return rc;
      return writeOutputs(options, location, cached->name, cached->files);
    }
  }

  std::optional<MLIRContext> context;
  {
    // The context: every dialect registered, none loaded yet (the parser,
    // the pass managers' dependent dialects and the code that builds IR
    // outside a pass manager load what the compile needs).
    Step step("set up");
    context.emplace(makeDriverRegistry());
    configureDriverContext(*context);
  }
  DiagnosticRouter router(&*context);
  uint64_t warningsBefore = warningsLogged();

  FrontendResult fe;
  if (int rc = runFrontendOnBuffer(options, std::move(kernelBuffer),
                                   std::move(specText), *context, router, fe))
    return rc;
  if (int rc = checkTargets(options))
    return rc;
  if (!options.debugInternalError.empty())
    raiseDebugInternalError(options);
  std::vector<CompiledFile> files;
  if (int rc = emitArtifacts(options, fe, files, location.file))
    return rc;
  // A compile that warned is not stored: its warnings must show again.
  if (cache && warningsLogged() == warningsBefore) {
    Step step("cache store");
    cache->store(key, {fe.spec.name, files});
  }
  return writeOutputs(options, location, fe.spec.name, files);
}

} // namespace

int writeOutputs(const DriverOptions &options, const OutputLocation &location,
                 const std::string &name,
                 const std::vector<CompiledFile> &files) {
  Step step("write outputs");
  // All staged in temporary files and renamed at the end.
  OutputFiles outputs(location.directory);
  outputs.protectInput(options.kernelPath, "kernel being compiled");
  outputs.protectInput(options.specPath, "grid spec being compiled");
  if (failed(outputs.prepare()))
    return kExitUserError;
  std::string depfile = options.writeDepfile
                            ? depfilePath(options, location, name)
                            : std::string();
  if (!depfile.empty() && failed(outputs.claim(depfile)))
    return kExitUserError;
  // The manifest (the last file) is committed last, after the depfile: a
  // reader that sees the new manifest sees every new artifact beside it.
  for (size_t i = 0; i + 1 < files.size(); ++i)
    if (failed(outputs.stage(files[i].name, files[i].contents)))
      return kExitUserError;
  if (!depfile.empty()) {
    std::vector<std::string> finals = outputs.stagedPaths();
    llvm::SmallString<256> manifest(location.directory);
    llvm::sys::path::append(manifest, files.back().name);
    finals.push_back(std::string(manifest));
    if (failed(outputs.stageAt(depfile, depfileRule(options, finals))))
      return kExitUserError;
  }
  if (failed(outputs.stage(files.back().name, files.back().contents)) ||
      failed(outputs.commit()))
    return kExitUserError;
  for (const std::string &f : outputs.stagedPaths())
    spdlog::debug("wrote {}", f);
  return kExitSuccess;
}

namespace {

/// What to add to a compilation that writes no file with extension `ext`,
/// for the error of `-o FILE.ext`.
const char *howToWrite(llvm::StringRef ext) {
  for (const TargetKind &kind : targetKinds())
    for (const TargetOutputExtension &out : kind.outputs)
      if (ext == out.extension)
        return out.howToWrite;
  if (ext == ".h")
    return "add --emit=header";
  if (ext == ".a")
    return "add --emit=lib";
  if (ext == ".mlir")
    return "add --emit=mlir";
  return "";
}

/// The extensions of the files pallasc writes.
bool isOutputExtension(llvm::StringRef ext) {
  return ext == ".json" || *howToWrite(ext);
}

/// Renames the one output whose extension is `file`'s to `file`, in `files`
/// and in what the manifest records (`inputs`; `manifestName` is the
/// manifest's own name). Fails with a usage error on `asGiven` (the -o
/// path) when no output, or more than one, has that extension.
int renameToOutputFile(const std::string &file, const std::string &asGiven,
                       std::string &manifestName,
                       std::vector<CompiledFile> &files,
                       ManifestInputs &inputs) {
  llvm::StringRef ext = llvm::sys::path::extension(file);
  std::vector<std::string> all, matching;
  for (const CompiledFile &f : files)
    all.push_back(f.name);
  all.push_back(manifestName);
  for (const std::string &f : all)
    if (llvm::sys::path::extension(f) == ext)
      matching.push_back(f);
  if (matching.size() != 1) {
    std::string message = asGiven + ": error: -o names a " + ext.str() +
                          " file, but this compilation writes ";
    if (matching.empty())
      message += "no " + ext.str() + " file (it writes " +
                 llvm::join(all, ", ") + "); give -o a directory, or " +
                 howToWrite(ext);
    else
      message += std::to_string(matching.size()) + " (" +
                 llvm::join(matching, ", ") +
                 "); give -o a directory (e.g. -o out/), and --name to "
                 "choose the names in it";
    logError(message);
    return kExitUsageError;
  }
  const std::string old = matching.front();
  if (old == manifestName) {
    manifestName = file;
    return kExitSuccess;
  }
  for (CompiledFile &f : files)
    if (f.name == old)
      f.name = file;
  for (std::string &e : inputs.emitted)
    if (e == old)
      e = file;
  for (ManifestArtifact &a : inputs.artifacts) {
    if (a.file == old)
      a.file = file;
    for (const char *key : {"cubin", "assembly"})
      if (a.launch.contains(key) && a.launch[key].value("file", "") == old)
        a.launch[key]["file"] = file;
  }
  return kExitSuccess;
}

} // namespace

OutputLocation resolveOutputPath(const DriverOptions &options) {
  if (options.outputPath.empty())
    return {options.outputDir, ""};
  llvm::StringRef path = options.outputPath;
  if (path.ends_with("/") || llvm::sys::fs::is_directory(path) ||
      !isOutputExtension(llvm::sys::path::extension(path)))
    return {path.str(), ""};
  llvm::StringRef parent = llvm::sys::path::parent_path(path);
  return {parent.str(), llvm::sys::path::filename(path).str()};
}

namespace {

/// What the GPU lowering reads of a chip to choose its code paths: two
/// chips with the same key take the same paths (they may still differ in
/// limits and in the PTX ISA version LLVM is given).
std::string codePathKey(const GpuTarget &t) {
  std::string key = std::string(t.vendorPrefix()) + "/" +
                    std::to_string(t.lanesPerWarp) + "/" +
                    (t.hasCpAsync ? "cp.async," : "") +
                    (t.hasLdmatrix ? "ldmatrix," : "") +
                    (t.hasTma ? "tma," : "");
  for (const MatrixInstr &i : t.matrixInstrs)
    key += std::to_string(int(i.kind)) + ":" + std::to_string(i.m) + "x" +
           std::to_string(i.n) + "x" + std::to_string(i.k) + ":" +
           std::to_string(int(i.operand)) + ":" + std::to_string(int(i.acc)) +
           ":" + std::to_string(i.nStep) + ":" +
           std::to_string(i.operandsPerLane) + ",";
  return key;
}

} // namespace

const std::vector<std::string> &everyTarget() {
  // cpu, tpu, and the first chip of the GPU target table for each distinct
  // set of code paths (matrix instructions, async copies, TMA, lanes): a new
  // chip with a new instruction family is covered as soon as it is in the
  // table.
  static const std::vector<std::string> targets = [] {
    std::vector<std::string> out = {"cpu"};
    std::vector<std::string> seen;
    for (const GpuTarget &t : allGpuTargets()) {
      std::string key = codePathKey(t);
      if (llvm::is_contained(seen, key))
        continue;
      seen.push_back(key);
      out.push_back(t.targetName());
    }
    out.push_back("tpu");
    return out;
  }();
  return targets;
}

namespace {

/// With PALLASC_EXPLICIT_TOOLS (explicitToolLookup), the variable declaring
/// each tool and library `target` uses must be set, to `none` or to what
/// it names: an executable, or a directory holding the library. An error
/// message naming the first that is not; "" when all are.
std::string undeclaredTool(const std::string &target) {
  struct Declaration {
    const char *variable, *what, *expected, *libraryFile;
  };
  static const Declaration cuda[] = {
      {"PTXAS", "ptxas", "the path of ptxas, or none: PTX is not validated",
       nullptr},
      {"CUDA_HOME", "libdevice",
       "a CUDA toolkit root holding nvvm/libdevice/libdevice.10.bc, or none: "
       "no math functions",
       "nvvm/libdevice/libdevice.10.bc"}};
  static const Declaration rocm[] = {
      {"PALLASC_LD_LLD", "ld.lld", "the path of ld.lld", nullptr},
      {"ROCM_PATH", "the ROCm device libraries",
       "a directory holding amdgcn/bitcode/ocml.bc, or none: no math "
       "functions",
       "amdgcn/bitcode/ocml.bc"}};
  llvm::ArrayRef<Declaration> needed =
      isCudaTarget(target)   ? llvm::ArrayRef<Declaration>(cuda)
      : isRocmTarget(target) ? llvm::ArrayRef<Declaration>(rocm)
                             : llvm::ArrayRef<Declaration>();
  for (const Declaration &d : needed) {
    std::optional<std::string> value = llvm::sys::Process::GetEnv(d.variable);
    std::string problem;
    if (!value || value->empty())
      problem = "is not declared";
    else if (*value == "none")
      continue; // declared absent: the compile says what that rules out
    else if (d.libraryFile) {
      llvm::SmallString<256> file(*value);
      llvm::sys::path::append(file, d.libraryFile);
      if (!llvm::sys::fs::exists(file))
        problem = "is declared as " + *value + ", which has no " +
                  d.libraryFile;
    } else if (!llvm::sys::fs::can_execute(*value)) {
      problem = "is declared as " + *value + ", which is not an executable";
    }
    if (!problem.empty())
      return std::string("PALLASC_EXPLICIT_TOOLS is set and --target ") +
             target + " needs " + d.what + ", which " + problem + ": set " +
             d.variable + " to " + d.expected;
  }
  return "";
}

} // namespace

int checkTargets(const DriverOptions &options) {
  for (const std::string &target : options.targets) {
    if (findTargetKind(target)) {
      if (pallas::explicitToolLookup())
        if (std::string error = undeclaredTool(target); !error.empty()) {
          logError("error: " + error);
          return kExitUserError;
        }
      continue;
    }
    std::string error;
    if (hasGpuTargetPrefix(target) && !parseGpuTarget(target, error)) {
      logError("error: " + error);
      return kExitUsageError;
    }
    logError("error: no code generation target is available in this build "
             "(asked for '" +
             target + "'); use --emit=mlir or --emit=manifest, or one of " +
             validTargetNames());
    return kExitUsageError;
  }
  return kExitSuccess;
}

int emitArtifacts(const DriverOptions &options, const FrontendResult &fe,
                  std::vector<CompiledFile> &files,
                  const std::string &outputFile) {
  ModuleOp module = *fe.module;
  const spec::GridSpec *spec = &fe.spec;
  // IEEE floating point on the GPU targets: --strict-fp, or the kernel's
  // own compiler_params.gpu.strict_fp.
  bool strictFloat = options.strictFloat || spec->compilerParams.strictFp;
  ManifestInputs manifestInputs;
  manifestInputs.kernel = {baseName(options.kernelPath),
                           sha256Hex(fe.kernelText)};
  manifestInputs.spec = {baseName(options.specPath), sha256Hex(fe.specText)};
  manifestInputs.name = spec->name;

  bool emitMlir = llvm::is_contained(options.emit, "mlir");
  if (emitMlir) {
    Step step("print IR");
    std::string text;
    llvm::raw_string_ostream os(text);
    OpPrintingFlags flags;
    module->print(os, flags);
    std::string file = spec->name + ".mlir";
    files.push_back({file, std::move(text)});
    manifestInputs.emitted.push_back(file);
  }

  // Each requested kind of target (src/Driver/TargetRegistry): every kind
  // starts (ptxas runs on each cuda arch's PTX while the other kinds are
  // lowered), then each finishes, its outputs after the previous kind's.
  bool wantHeader = llvm::is_contained(options.emit, "header");
  bool wantLibrary = llvm::is_contained(options.emit, "lib");
  TargetCompileRequest request{module,      spec->name, options,
                               emitMlir,    strictFloat, wantLibrary};
  std::vector<FinishTargetCompile> started;
  for (const TargetKind &kind : targetKinds()) {
    if (!hasTargetOf(kind, options.targets))
      continue;
    FailureOr<FinishTargetCompile> finish = kind.start(request);
    if (failed(finish))
      return kExitUserError;
    started.push_back(std::move(*finish));
  }
  TargetOutputs outputs;
  for (FinishTargetCompile &finish : started) {
    if (failed(finish(outputs)))
      return kExitUserError;
    finish = nullptr;
  }
  for (CompiledFile &f : outputs.files)
    files.push_back(std::move(f));
  llvm::append_range(manifestInputs.artifacts, outputs.artifacts);
  llvm::append_range(manifestInputs.emitted, outputs.emitted);
  std::vector<CudaArtifacts::Image> &cudaImages = outputs.cudaImages;
  std::vector<RocmArtifacts::Image> &rocmImages = outputs.rocmImages;

  // --emit=header / --emit=lib: the generated launcher (src/Driver/LauncherGen).
  if (wantHeader || wantLibrary) {
    bool cpu = llvm::any_of(options.targets, isCpuTarget);
    const char *launcherTarget = cpu ? "cpu" : nullptr;
    for (const TargetKind &kind : targetKinds())
      if (kind.hasLauncher && !launcherTarget &&
          hasTargetOf(kind, options.targets))
        launcherTarget = kind.name;
    if (!launcherTarget) {
      logError("error: --emit=" + std::string(wantLibrary ? "lib" : "header") +
               " generates launchers for --target cpu, cuda:<arch> and "
               "rocm:<arch>; add one of them");
      return kExitUsageError;
    }
    CompileStage stage("the launcher generation", launcherTarget);
    LauncherFiles launcher;
    // The header's GPU entry points need the images' architectures only.
    if (!wantLibrary)
      for (const std::string &t : options.targets)
        if (const TargetKind *kind = findTargetKind(t);
            kind && kind->addHeaderImage)
          kind->addHeaderImage(t, outputs);
    if (failed(emitLaunchers(module, spec->name,
                             manifestInputs.kernel.file + " and " +
                                 manifestInputs.spec.file,
                             wantHeader, wantLibrary, cpu, cudaImages,
                             rocmImages, launcher)))
      return kExitUserError;
    if (wantHeader) {
      files.push_back({spec->name + ".h", std::move(launcher.header)});
      manifestInputs.emitted.push_back(files.back().name);
    }
    if (wantLibrary) {
      files.push_back({spec->name + ".a", std::move(launcher.library)});
      manifestInputs.emitted.push_back(files.back().name);
    }
  }

  Step step("manifest");
  std::string manifestName = spec->name + ".manifest.json";
  if (!outputFile.empty())
    if (int rc = renameToOutputFile(outputFile, options.outputPath,
                                    manifestName, files, manifestInputs))
      return rc;
  manifestInputs.mosaicGpu = mosaicGpuManifestCall(module, *spec);
  FailureOr<nlohmann::json> manifest = buildManifest(module, manifestInputs);
  if (failed(manifest))
    return kExitInternalError;
  files.push_back({manifestName, manifestToString(*manifest)});
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
}

/// The spec's name of a transform ("vmap", "discharge_state", ...).
static std::string transformName(const spec::Transform &t) {
  switch (t.kind) {
  case spec::Transform::Kind::Vmap:
    return "vmap";
  case spec::Transform::Kind::Jvp:
    return "jvp";
  case spec::Transform::Kind::Dce:
    return "dce";
  case spec::Transform::Kind::DischargeState:
    return "discharge_state";
  case spec::Transform::Kind::HiToLo:
    return "hi_to_lo";
  }
  return "unknown";
}

int runFrontendOnBuffer(const DriverOptions &options,
                        std::unique_ptr<llvm::MemoryBuffer> kernelBuffer,
                        std::string specText, MLIRContext &context,
                        DiagnosticRouter &router, FrontendResult &result) {
  std::string kernelText = kernelBuffer->getBuffer().str();
  std::optional<Step> parseStep(std::in_place, "parse kernel");
  if (failed(checkText(options.kernelPath, kernelText, "kernel")))
    return kExitUserError;

  router.addFileWithoutSnippets(options.specPath);
  // Kernel IR: parsed and verified by MLIR; diagnostics carry file:line:col.
  router.sourceMgr().AddNewSourceBuffer(std::move(kernelBuffer), llvm::SMLoc());
  ParserConfig config(&context);
  OwningOpRef<ModuleOp> module;
  {
    CompileStage stage("parsing the kernel");
    module = parseSourceFile<ModuleOp>(router.sourceMgr(), config);
  }
  if (!module || failed(checkKernelSize(*module)) ||
      failed(checkValueFootprints(*module)) ||
      failed(checkMosaicGpuTargets(*module, options)))
    return kExitUserError;
  parseStep.reset();

  // Grid spec: JSON with JSON-path diagnostics.
  std::optional<Step> importStep(std::in_place, "import spec");
  std::vector<spec::SpecError> specErrors;
  std::optional<spec::GridSpec> spec =
      spec::parseGridSpec(specText, specErrors);
  if (!spec) {
    reportSpecErrors(options.specPath, specErrors);
    return kExitUserError;
  }
  // Success: the module, the spec and the text of both inputs.
  auto succeed = [&] {
    result.module = std::move(module);
    result.spec = std::move(*spec);
    result.kernelText = std::move(kernelText);
    result.specText = std::move(specText);
    return kExitSuccess;
  };
  // A Mosaic GPU kernel has no pallas.call to import the spec into: the
  // spec is checked against the kernel, and the kernel is compiled as it is.
  if (pallas_mgpu::hasMosaicGpuOps(*module)) {
    for (const spec::Transform &t : options.extraTransforms)
      spec->transforms.push_back(t);
    if (!options.name.empty())
      spec->name = options.name;
    if (auto use = spec::firstSymbolUse(*spec)) {
      reportSpecErrors(options.specPath,
                       {{use->second, "a Mosaic GPU kernel's spec has static "
                                      "shapes (symbol '" +
                                          use->first + "')"}});
      return kExitUserError;
    }
    if (failed(checkMosaicGpuSpec(*module, *spec, options)))
      return kExitUserError;
    return succeed();
  }
  // Symbolic shapes (docs/gridspec.md#symbols): what cannot take them yet is
  // refused here, before anything is built or written, naming the transform
  // or target and the symbol.
  std::vector<spec::Transform> allTransforms = spec->transforms;
  allTransforms.insert(allTransforms.end(), options.extraTransforms.begin(),
                       options.extraTransforms.end());
  // pallasc run infers the symbols from the spec's inputs, which lead the
  // transformed wrapper's inputs after jvp (then the tangents), dce (it
  // keeps them all) and vmap (with their batch axes); discharge_state and
  // hi_to_lo change them.
  auto notInferred = llvm::find_if(allTransforms, [](const spec::Transform &t) {
    return t.kind != spec::Transform::Kind::Jvp &&
           t.kind != spec::Transform::Kind::Dce &&
           t.kind != spec::Transform::Kind::Vmap;
  });
  std::string flagError;
  if (!checkFlagAxisSizes(*spec, options.extraTransforms, flagError)) {
    logError(options.specPath + ": error: " + flagError);
    return kExitUserError;
  }
  auto use = spec::firstSymbolUse(*spec);
  for (const spec::Transform &t : options.extraTransforms)
    if (!use && t.axisExpr)
      use = std::make_pair(t.axisExpr->symbols().front(), t.path);
  // The symbols' values where `pallasc run` compiles the spec at them.
  std::optional<std::map<std::string, int64_t>> instantiated;
  if (use && options.symbolShapes && notInferred == allTransforms.end()) {
    // pallasc run: the symbols' values come from the inputs' shapes; the
    // spec at those values is a static one.
    std::vector<std::vector<int64_t>> shapes;
    std::vector<std::string> sources;
    std::map<std::string, int64_t> values;
    std::string error;
    if (!options.symbolShapes(shapes, sources, error)) {
      logError(error);
      return kExitUserError;
    }
    // With integer axis sizes each vmap's batch axes come off the inputs;
    // a symbolic one is a dimension of the batched inputs to infer.
    std::optional<spec::GridSpec> batched;
    if (llvm::any_of(allTransforms,
                     [](const spec::Transform &t) { return !!t.axisExpr; }))
      batched = withBatchAxes(*spec, allTransforms);
    else if (!stripBatchAxes(allTransforms, shapes, sources, error)) {
      logError(error);
      return kExitUserError;
    }
    std::string source;
    if (!spec::inferSymbols(batched ? *batched : *spec, shapes, sources,
                            values, source, error)) {
      logError((source.empty() ? options.specPath : source) +
               ": error: " + error);
      return kExitUserError;
    }
    // A declared symbol that no shape, grid entry or axis size uses changes
    // nothing; the wrapper still takes it: its smallest allowed value.
    for (const spec::SymbolSpec &sym : spec->symbols)
      values.emplace(sym.name, sym.lowest());
    for (const auto &[name, value] : values)
      spdlog::debug("{}: symbol {} = {}", options.specPath, name, value);
    // The CPU runs the symbolic call itself at these values; after dce,
    // whose wrapper may be a host program (an input dropped from the call),
    // which runs static shapes only, the spec at these values.
    bool viaDce = llvm::any_of(allTransforms, [](const spec::Transform &t) {
      return t.kind == spec::Transform::Kind::Dce;
    });
    if (options.symbolValues && !viaDce) {
      *options.symbolValues = values;
    } else if (!spec::instantiateSymbols(*spec, values, error)) {
      logError(options.specPath + ": error: " + error);
      return kExitUserError;
    } else {
      spec->symbols.clear(); // a static spec: the call is not symbolic
      instantiated = values;
    }
  } else if (use && !options.symbolShapes && !options.targets.empty() &&
             llvm::all_of(options.targets, [](const std::string &t) {
               return t == "cpu" || t == "tpu" ||
                      StringRef(t).starts_with("cuda:") ||
                      StringRef(t).starts_with("rocm:");
             })) {
    // --target cpu, tpu, cuda:ARCH and rocm:ARCH compile one artifact for
    // every size: the call keeps its symbolic shapes
    // (docs/gridspec.md#symbols), through the transforms too.
  } else if (use) {
    auto [symbol, path] = *use;
    // Which part cannot take symbols: a transform (at its JSON path), else
    // the first target other than cpu.
    auto nonCpu = llvm::find_if(options.targets, [](const std::string &t) {
      return t != "cpu" && t != "tpu" && !StringRef(t).starts_with("cuda:") &&
             !StringRef(t).starts_with("rocm:");
    });
    std::string what;
    if (options.symbolShapes) {
      what = "pallasc run cannot infer symbols through the " +
             transformName(*notInferred) +
             " transform yet (it changes the inputs; jvp, dce and vmap "
             "keep them)";
      path = notInferred->path.empty() ? path : notInferred->path;
    } else if (nonCpu != options.targets.end()) {
      what = "target '" + *nonCpu +
             "' cannot compile a spec with symbolic shapes yet";
    } else {
      what = "pallasc cannot compile a spec with symbolic shapes yet";
    }
    reportSpecErrors(options.specPath,
                     {{path, what + " (symbol '" + symbol +
                                 "'); compile the spec at a static shape"}});
    return kExitUserError;
  }
  for (const spec::Transform &t : options.extraTransforms)
    spec->transforms.push_back(t);
  // A static spec at the inferred values: so are the symbolic axis sizes.
  if (instantiated)
    for (spec::Transform &t : spec->transforms)
      if (t.axisExpr) {
        t.axisSize = t.axisExpr->evaluate(*instantiated).value_or(0);
        t.axisExpr.reset();
      }
  if (!options.name.empty())
    spec->name = options.name;

  Location specLoc = FileLineColLoc::get(&context, options.specPath, 1, 1);
  if (!spec::importGridSpec(*module, *spec, specLoc, specErrors)) {
    reportSpecErrors(options.specPath, specErrors);
    return kExitUserError;
  }
  if (failed(mlir::verify(*module)))
    return kExitUserError;
  spdlog::debug("{}: imported kernel @{} with a grid of rank {}",
                options.specPath, spec->kernel, spec->grid.size());
  importStep.reset();

  if (failed(runTransformPasses(context, options, *module, *spec)))
    return kExitUserError;
  return succeed();
}

int readFrontendInputs(const DriverOptions &options,
                       std::unique_ptr<llvm::MemoryBuffer> &kernelBuffer,
                       std::string &specText) {
  Step step("read inputs");
  kernelBuffer = readInput(options.kernelPath, kMaxKernelBytes, "kernel");
  if (!kernelBuffer)
    return kExitUserError;
  auto specBuffer = readInput(options.specPath, kMaxSpecBytes, "grid spec");
  if (!specBuffer)
    return kExitUserError;
  specText = specBuffer->getBuffer().str();
  return kExitSuccess;
}

int runFrontend(const DriverOptions &options, MLIRContext &context,
                DiagnosticRouter &router, FrontendResult &result) {
  std::unique_ptr<llvm::MemoryBuffer> kernelBuffer;
  std::string specText;
  if (int rc = readFrontendInputs(options, kernelBuffer, specText))
    return rc;
  return runFrontendOnBuffer(options, std::move(kernelBuffer),
                             std::move(specText), context, router, result);
}

int runFrontendOnText(const DriverOptions &options, llvm::StringRef kernelText,
                      std::string specText, MLIRContext &context,
                      DiagnosticRouter &router, FrontendResult &result) {
  return runFrontendOnBuffer(
      options,
      llvm::MemoryBuffer::getMemBufferCopy(kernelText, options.kernelPath),
      std::move(specText), context, router, result);
}

int runCompile(const DriverOptions &options) {
  std::unique_ptr<CompileCache> cache;
  if (cacheable(options))
    cache = CompileCache::open(options.cache);
  return runCompile(options, cache.get(), "");
}

int runCompile(const DriverOptions &options, CompileCache *cache,
               const std::string &label, std::string *timingReport) {
  StepTimer timer(options.timing, label);
  int rc;
  {
    StepTimerScope scope(timer);
    Compilation compilation(options, cacheable(options) ? cache : nullptr);
    rc = compilation.run();
  }
  if (options.timing) {
    if (timingReport)
      *timingReport = timer.report();
    else
      console::write(timer.report());
  }
  return rc;
}

} // namespace pallasc
