//===- pallasc.cpp - The pallasc command line -------------------*- C++ -*-===//
//
// A thin CLI11 front end: it fills DriverOptions and calls the driver. This
// file is the only one built with exceptions (CLI11 throws); every exception
// is caught here.
//
//===----------------------------------------------------------------------===//

#include "src/Driver/Build.h"
#include "src/Driver/BuildList.h"
#include "src/Driver/Cache.h"
#include "src/Driver/RemoteStore.h"
#include "src/Driver/CpuTarget.h"
#include "src/Driver/Diagnostics.h"
#include "src/Driver/Driver.h"
#include "src/Driver/OutputFiles.h"
#include "src/Driver/Run.h"
#include "src/Driver/TargetRegistry.h"
#include "src/Driver/Timing.h"
#include "src/Driver/GpuRun.h"
#include "src/Spec/GridSpec.h"
#include "src/Support/Temporaries.h"
#include "src/Target/CudaArtifacts.h"
#include "src/Target/RocmArtifacts.h"
#include "src/Support/CompileStage.h"
#include "src/Version.h"

#include "passes/Pipelines/CudaPipeline.h"
#include "passes/Pipelines/RocmPipeline.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Allocator.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/StringSaver.h"

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <charconv>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string_view>

using namespace pallasc;

namespace {

/// The first line a tool prints for `--version` (`ptxas --version`'s last
/// line: "Build cuda_13.0.r13.0/compiler.36424714_0" is the one before),
/// or empty when it cannot run.
std::string toolVersionLine(const std::string &tool, const char *match) {
  std::string error;
  ScratchDir *temp = toolTempDir(error);
  if (!temp || tool.empty())
    return "";
  llvm::SmallString<128> log;
  if (temp->createFile("version", ".log", log))
    return "";
  llvm::StringRef args[] = {tool, "--version"};
  int rc = temp->runTool(tool, args, log, 10, error);
  auto buf = llvm::MemoryBuffer::getFile(log);
  llvm::sys::fs::remove(log);
  if (rc != 0 || !buf)
    return "";
  llvm::SmallVector<llvm::StringRef> lines;
  (*buf)->getBuffer().split(lines, '\n');
  for (llvm::StringRef line : lines)
    if (line.contains(match))
      return line.trim().str();
  return "";
}

/// `--version`: this build, its LLVM/MLIR, the toolkits it finds (the same
/// search a compile makes) and the targets it compiles for (every kind of
/// the driver's target registry, its GPU chips from the GPU target table).
std::string versionText() {
  std::string out = std::string("pallasc ") + PALLASC_VERSION_STRING + "\n";
  out += std::string("LLVM/MLIR ") + LLVM_VERSION_STRING + "\n";
  std::string ptxas = findPtxas();
  std::string ptxasVersion = toolVersionLine(ptxas, "release");
  out += "ptxas: " +
         (ptxas.empty() ? std::string("not found ($PTXAS, $CUDA_HOME/bin, "
                                      "/usr/local/cuda/bin, PATH): PTX is "
                                      "not validated, no --emit=cubin")
                        : ptxas + (ptxasVersion.empty()
                                       ? ""
                                       : " (" + ptxasVersion + ")")) +
         "\n";
  // "<what>: <root><dir>", or where it was looked for and what is lost.
  auto found = [&](const char *what, const std::string &root,
                   const char *dir, const char *missing) {
    out += std::string(what) + ": " +
           (root.empty() ? std::string("not found (") + missing
                         : root + dir) +
           "\n";
  };
  found("CUDA libdevice", mlir::pallas::defaultCudaToolkitPath(),
        "/nvvm/libdevice",
        "$CUDA_HOME, /usr/local/cuda): no math on cuda targets");
  found("ROCm device libraries", mlir::pallas::defaultRocmDeviceLibsRoot(),
        "/amdgcn/bitcode",
        "$ROCM_PATH, /opt/rocm, /usr/lib/x86_64-linux-gnu): no math on rocm "
        "targets");
  std::string lld = findLdLld();
  out += "ld.lld: " +
         (lld.empty() ? std::string("not found ($PALLASC_LD_LLD, the LLVM "
                                    "installation, PATH): no rocm targets")
                      : lld) +
         "\n";
  out += "targets: " + validTargetNames();
  return out;
}

/// The end of `--help`: the targets (as --version lists them) and the
/// environment.
std::string helpFooter() {
  return "\nTargets (--target): " + validTargetNames() +
         "\n"
         "\nEnvironment:\n"
         "  PTXAS                  ptxas to validate PTX with (none: do not "
         "validate)\n"
         "  CUDA_HOME              CUDA toolkit root (libdevice, "
         "bin/ptxas); default /usr/local/cuda\n"
         "  ROCM_PATH              ROCm root holding amdgcn/bitcode (ocml, "
         "ockl); default /opt/rocm, then /usr/lib/x86_64-linux-gnu\n"
         "  PALLASC_LD_LLD         ld.lld to link AMD code objects with\n"
         "  PALLASC_EXPLICIT_TOOLS=1  the four above only, no default or PATH "
         "lookup; each must be set (a path or none) for its targets\n"
         "  PALLASC_CACHE_DIR      compile cache directory (--cache-dir)\n"
         "  PALLASC_CACHE_MAX_SIZE bound of the cache (--cache-max-size)\n"
         "  PALLASC_CACHE_TIMEOUT  seconds each request to a remote cache "
         "may take (default 10)\n"
         "  PALLASC_CRASH_DIAGNOSTICS=1  a backtrace after an internal "
         "error\n"
         "  PALLASC_FIFO_TIMEOUT   seconds to wait for input on a FIFO\n"
         "  PALLASC_PTXAS_TIMEOUT  seconds each ptxas may run (default "
         "120)\n"
         "  PALLASC_VERIFY_EACH=1  as --verify-each\n"
         "  TMPDIR                 where tool temporaries go (default "
         "/tmp)\n"
         "\npallasc --version lists what this build finds; docs/cli.md "
         "has the details.";
}

/// --verify-each, on the compile and `pallasc build` (one process-wide
/// choice, see setVerifyEachPass; `pallasc run` always verifies each pass).
bool verifyEachFlag = false;

void addVerifyEachFlag(CLI::App *cmd) {
  cmd->add_flag("--verify-each", verifyEachFlag,
                "Run MLIR's verifier after every pass of the GPU and TPU "
                "lowerings (default: once at the end of each pipeline; for "
                "finding the pass that breaks the IR)");
}

/// --cache-dir, --no-cache and --cache-max-size on `cmd`.
void addCacheOptions(CLI::App *cmd, CacheSettings &cache) {
  cmd->add_option("--cache-dir", cache.directory,
                  "Compile cache directory, or the URL of an HTTP cache "
                  "server (http://HOST:PORT/PREFIX: Bazel's HTTP cache "
                  "protocol; default: $PALLASC_CACHE_DIR; none when unset)");
  cmd->add_flag("--no-cache", cache.disabled,
                "Do not use the compile cache, even with PALLASC_CACHE_DIR");
  cmd->add_option("--cache-max-size", cache.maxSize,
                  "Bound of the cache's size, e.g. 500M or 2G (default: "
                  "$PALLASC_CACHE_MAX_SIZE, else 1G); least recently used "
                  "entries are evicted past it")
      ->check([](const std::string &text) {
        uint64_t bytes;
        return parseByteSize(text, bytes)
                   ? std::string()
                   : "expected a size in bytes, optionally with a K, M or G "
                     "suffix (e.g. 500M), got '" +
                         text + "'";
      });
}

/// pallasc cache --stats | --clear.
int runCacheCommand(CacheSettings settings, bool stats, bool clear) {
  if (!resolveCacheSettings(settings))
    return kExitUsageError;
  if (settings.directory.empty()) {
    logError("error: no cache directory: give --cache-dir DIR or set "
             "PALLASC_CACHE_DIR");
    return kExitUsageError;
  }
  if (RemoteStore::isUrl(settings.directory)) {
    logError("error: " + settings.directory +
             " is a remote cache: --stats and --clear work on a cache "
             "directory; a remote store's entries are managed by its server");
    return kExitUsageError;
  }
  if (clear && failed(CompileCache::clear(settings)))
    return kExitUserError;
  if (stats) {
    CacheStats s = CompileCache::stats(settings);
    std::cout << "cache directory: " << settings.directory << "\n"
              << "entries: " << s.entries << "\n"
              << "size: " << formatByteSize(s.bytes) << " (bound "
              << formatByteSize(s.maxBytes) << ")\n"
              << "hits: " << s.hits << "\n"
              << "misses: " << s.misses << "\n"
              << "stores: " << s.stores << "\n"
              << "corrupt entries removed: " << s.corrupt << "\n"
              << "entries evicted: " << s.evicted << "\n";
  }
  return kExitSuccess;
}

/// Parses "AXES:SIZE" (e.g. "0,none:4") into a vmap transform.
spec::Transform parseVmapFlag(const std::string &text) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos)
    throw CLI::ValidationError("--vmap", "expected IN_AXES:AXIS_SIZE, e.g. "
                                         "0,none:4, got '" + text + "'");
  spec::Transform t;
  t.kind = spec::Transform::Kind::Vmap;
  t.path = "--vmap";
  std::stringstream axes(text.substr(0, colon));
  std::string axis;
  while (std::getline(axes, axis, ',')) {
    if (axis == "none" || axis == "null") {
      t.inAxes.push_back(std::nullopt);
      continue;
    }
    long long v = 0;
    try {
      size_t used = 0;
      v = std::stoll(axis, &used);
      if (used != axis.size())
        throw std::invalid_argument(axis);
    } catch (const std::exception &) {
      throw CLI::ValidationError("--vmap", "bad input axis '" + axis +
                                               "' (expected an integer or "
                                               "none)");
    }
    if (v < 0)
      throw CLI::ValidationError(
          "--vmap", "input axis " + axis +
                        " is negative: give the axis counted from the front "
                        "(0 = leading) on the command line");
    t.inAxes.push_back(v);
  }
  std::string size = text.substr(colon + 1);
  // A symbolic axis size: a linear expression over the spec's symbols
  // (checked against them once the spec is read).
  if (!size.empty() && !llvm::all_of(size, [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
      })) {
    spec::DimExprError error;
    t.axisExpr = spec::parseDimExpr(size, /*allowDivision=*/false, error);
    if (!t.axisExpr)
      throw CLI::ValidationError("--vmap", "bad axis size '" + size +
                                               "': " + error.message);
    if (t.axisExpr->isConstant())
      throw CLI::ValidationError("--vmap", "bad axis size '" + size +
                                               "' (expected a positive "
                                               "integer or a symbol "
                                               "expression)");
    return t;
  }
  try {
    size_t used = 0;
    t.axisSize = std::stoll(size, &used);
    if (used != size.size() || t.axisSize < 1)
      throw std::invalid_argument(size);
  } catch (const std::exception &) {
    throw CLI::ValidationError("--vmap", "bad axis size in '" + text +
                                             "' (expected a positive integer "
                                             "or a symbol expression)");
  }
  return t;
}

spec::Transform parseUsedOutputs(const std::string &text) {
  spec::Transform t;
  t.kind = spec::Transform::Kind::Dce;
  t.path = "--used-outputs";
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item == "1" || item == "true")
      t.usedOutputs.push_back(true);
    else if (item == "0" || item == "false")
      t.usedOutputs.push_back(false);
    else
      throw CLI::ValidationError("--used-outputs",
                                 "expected a comma-separated list of 0/1, got '" +
                                     text + "'");
  }
  return t;
}

/// Expands `@file` arguments (response files, recursively, GNU quoting;
/// a nested `@file` is relative to the file naming it), as gcc and clang do.
/// An `@file` that names no readable file is an error here, instead of
/// reaching the parser as a stray argument.
bool expandResponseFiles(int argc, char **argv,
                         std::vector<std::string> &args) {
  llvm::BumpPtrAllocator alloc;
  llvm::cl::ExpansionContext expander(alloc, llvm::cl::TokenizeGNUCommandLine);
  expander.setRelativeNames(true);
  llvm::SmallVector<const char *, 32> expanded(argv, argv + argc);
  if (llvm::Error e = expander.expandResponseFiles(expanded)) {
    std::cerr << "pallasc: error: " << llvm::toString(std::move(e)) << "\n";
    return false;
  }
  for (const char *a : llvm::ArrayRef(expanded).drop_front()) {
    if (a[0] == '@' && a[1] != 0) {
      std::cerr << "pallasc: error: cannot read the response file '"
                << (a + 1) << "': no such file\n";
      return false;
    }
  }
  args.assign(expanded.begin(), expanded.end());
  return true;
}

/// CLI11 takes single-character short options only: gcc's depfile flags
/// (-MD, -MMD, -MP, and -MF/-MT/-MQ with a separate or a joined value)
/// become long options.
void spellDepfileFlags(std::vector<std::string> &args) {
  std::vector<std::string> out;
  for (std::string &a : args) {
    if (a == "-MD" || a == "-MMD" || a == "-MP" || a == "-MF" || a == "-MT" ||
        a == "-MQ") {
      out.push_back("-" + a);
      continue;
    }
    // -Werror=spills, gcc's spelling, is CLI11's --Werror=spills.
    if (a.rfind("-Werror", 0) == 0) {
      out.push_back("-" + a);
      continue;
    }
    if (a.size() > 3 && (a.rfind("-MF", 0) == 0 || a.rfind("-MT", 0) == 0 ||
                         a.rfind("-MQ", 0) == 0)) {
      out.push_back("-" + a.substr(0, 3));
      out.push_back(a.substr(3));
      continue;
    }
    out.push_back(std::move(a));
  }
  args = std::move(out);
}

void warn(const std::string &message) {
  spdlog::warn("pallasc: warning: {}", message);
}

/// Warns about flags that do nothing in this invocation.
void warnIneffectiveFlags(const CLI::App &app, const DriverOptions &options) {
  auto emits = [&](const char *kind) {
    return llvm::is_contained(options.emit, kind);
  };
  // Flags that only one kind of target uses (src/Driver/TargetRegistry).
  for (const TargetKind &kind : targetKinds()) {
    if (hasTargetOf(kind, options.targets))
      continue;
    for (const TargetFlag &f : kind.flags)
      if (f.emitKind ? emits(f.emitKind) : app.count(f.flag) > 0)
        warn(std::string(f.flag) + " does nothing without a --target " +
             kind.spelling);
  }
  if (emits("manifest") && options.emit.size() > 1)
    warn("--emit=manifest (the manifest only) is overridden by the other "
         "--emit kinds given");
}

/// The options of a compile (the main command) on a CLI11 app, and what
/// they mean once parsed. `pallasc build` parses each job's command line
/// with one of these too, so that a job is the compile that command line
/// makes.
struct CompileCommand {
  DriverOptions options;
  std::vector<std::string> emit, werror, mt, mq;
  std::string vmap, usedOutputs;
  int opt = 2;
  bool md = false, mmd = false, verbose = false, quiet = false;
  CLI::Option *kernelOpt = nullptr, *specOpt = nullptr, *outputOpt = nullptr;
  CLI::Option *vmapOpt = nullptr, *jvpOpt = nullptr, *dceOpt = nullptr,
              *dischargeOpt = nullptr, *hiToLoOpt = nullptr;
  CLI::Option *mfOpt = nullptr, *mtOpt = nullptr, *mqOpt = nullptr,
              *mpOpt = nullptr;

  CompileCommand() = default;
  CompileCommand(const CompileCommand &) = delete;
  CompileCommand &operator=(const CompileCommand &) = delete;

  /// Adds the options to `app` (the cache's with `withCache`).
  void add(CLI::App &app, bool withCache = true) {
    // Required unless a subcommand is given (checked in finish()).
    kernelOpt =
        app.add_option("kernel", options.kernelPath, "Kernel IR (.mlir)");
    specOpt = app.add_option("--spec", options.specPath, "Grid spec (.json)");
    outputOpt = app.add_option(
        "-o", options.outputPath,
        "Where the outputs go: a directory (created if needed), or the file "
        "of the one output with its extension (-o kernel.ptx)");
    app.add_option("--output-dir", options.outputDir,
                   "Directory for the outputs (created if needed)")
        ->excludes(outputOpt);
    app.add_option("--name", options.name,
                   "Artifact and kernel name, instead of the spec's 'name'")
        ->check([](const std::string &n) {
          return spec::isIdentifier(n)
                     ? std::string()
                     : "expected an identifier (a letter or _, then letters, "
                       "digits, _, $ or .), got '" +
                           n + "'";
        });
    app.add_option("--target", options.targets,
                   "Code generation target (repeatable)");
    app.add_option("--emit", emit,
                   "What to write: mlir (the final IR, besides the manifest), "
                   "manifest (the manifest only), cubin (with --target "
                   "cuda:<arch>: also <name>.<arch>.cubin, needs ptxas) or "
                   "asm (with --target rocm:<arch>: also the AMDGPU assembly "
                   "<name>.<arch>.s), header (<name>.h, the generated "
                   "launcher's C header) or lib (<name>.a, the launcher "
                   "library; both need --target cpu)")
        ->delimiter(',')
        ->check(CLI::IsMember(
            {"mlir", "manifest", "cubin", "asm", "header", "lib"}));
    app.add_option("--code-object-version", options.rocmCodeObjectVersion,
                   "AMDHSA code object version of --target rocm:<arch> "
                   "(4, 5 or 6; default 5, which ROCm 5.x and 6.x load)")
        ->check(CLI::IsMember({4, 5, 6}));
    vmapOpt = app.add_option("--vmap", vmap,
                             "Append a vmap transform: IN_AXES:SIZE, "
                             "e.g. 0,none:4");
    jvpOpt = app.add_flag("--jvp", "Append a jvp transform");
    dceOpt = app.add_option("--used-outputs", usedOutputs,
                            "Append a dce transform with this used-"
                            "outputs mask, e.g. 1,0");
    dischargeOpt =
        app.add_flag("--discharge-state", "Append a discharge_state transform");
    hiToLoOpt = app.add_flag("--hi-to-lo", "Append a hi_to_lo transform");
    app.add_option("--Werror", werror,
                   "Make a kind of warning an error: spills (a kernel that "
                   "spills registers on a GPU target, from ptxas -v or the "
                   "AMDHSA notes); -Werror=spills as gcc spells it")
        ->check(CLI::IsMember({"spills"}))
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    app.add_flag("--strict-fp", options.strictFloat,
                 "GPU targets: IEEE floating point (no FMA contraction, "
                 "IEEE-rounded f32 division) instead of Pallas' Triton "
                 "semantics");
    app.add_flag("--print-ir-after-all", options.printIRAfterAll,
                 "Print the IR after every pass to stderr");
    addVerifyEachFlag(&app);
    app.add_option("-O", opt, "Optimization level 0-3")
        ->check(CLI::Range(0, 3));
    app.add_flag("--MD", md,
                 "Write a Makefile depfile (at -MF's path, else beside the "
                 "outputs: OUTDIR/NAME.d)");
    app.add_flag("--MMD", mmd, "As -MD (pallasc reads no system files)");
    mfOpt = app.add_option("--MF", options.depfile, "Depfile path");
    mtOpt =
        app.add_option("--MT", mt,
                       "Target of the depfile's rule, instead of the outputs "
                       "(repeatable)");
    mqOpt = app.add_option(
        "--MQ", mq, "As -MT, with the characters special to Make quoted");
    mpOpt = app.add_flag("--MP", options.depPhonyTargets,
                         "Add a phony rule for each input to the depfile");
    app.add_flag("-v,--verbose", verbose,
                 "Verbose output: each step as it starts, each file written");
    app.add_flag("-q,--quiet", quiet, "Only print errors");
    app.add_flag("--timing", options.timing,
                 "Print the time of each step (parse, import, each transform, "
                 "each target's lowering, LLVM code generation, ptxas, "
                 "serialization, writing) and pass to stderr at the end");
    if (withCache)
      addCacheOptions(&app, options.cache);
    // For the tests of the internal-error path; not in --help.
    app.add_option("--debug-internal-error", options.debugInternalError)
        ->check(CLI::IsMember({"fatal", "crash", "abort"}))
        ->group("");
  }

  /// Completes `options` from what `app` parsed; throws CLI11's errors.
  void finish(const CLI::App &app) {
    if (kernelOpt->count() == 0)
      throw CLI::RequiredError("kernel");
    if (specOpt->count() == 0)
      throw CLI::RequiredError("--spec");
    options.writeDepfile = md || mmd;
    for (auto [o, flag] : {std::pair{mfOpt, "-MF"},
                           {mtOpt, "-MT"},
                           {mqOpt, "-MQ"},
                           {mpOpt, "-MP"}})
      if (o->count() && !options.writeDepfile)
        throw CLI::ValidationError(flag, "needs -MD or -MMD");
    // -MT/-MQ targets in command-line order.
    size_t nextMt = 0, nextMq = 0;
    for (CLI::Option *o : app.parse_order()) {
      if (o == mtOpt)
        options.depTargets.push_back(mt[nextMt++]);
      else if (o == mqOpt)
        options.depTargets.push_back(escapeMakePath(mq[nextMq++]));
    }
    // Transforms from flags, in command-line order.
    for (CLI::Option *o : app.parse_order()) {
      if (o == vmapOpt)
        options.extraTransforms.push_back(parseVmapFlag(vmap));
      else if (o == jvpOpt)
        options.extraTransforms.push_back(
            spec::Transform{spec::Transform::Kind::Jvp, {}, 0, {}, "--jvp"});
      else if (o == dceOpt)
        options.extraTransforms.push_back(parseUsedOutputs(usedOutputs));
      else if (o == dischargeOpt)
        options.extraTransforms.push_back(
            spec::Transform{spec::Transform::Kind::DischargeState,
                            {},
                            0,
                            {},
                            "--discharge-state"});
      else if (o == hiToLoOpt)
        options.extraTransforms.push_back(spec::Transform{
            spec::Transform::Kind::HiToLo, {}, 0, {}, "--hi-to-lo"});
    }
    options.emit = emit;
    options.spillsAreErrors = llvm::is_contained(werror, "spills");
    options.optLevel = opt;
    options.verbosity = quiet     ? Verbosity::Quiet
                        : verbose ? Verbosity::Verbose
                                  : Verbosity::Normal;
  }
};

/// Flags a build job's "flags" may not hold: the build list's keys and the
/// build's own options decide them.
const char *forbiddenJobFlag(const std::string &flag) {
  static const std::pair<const char *, const char *> forbidden[] = {
      {"--spec", "the entry's \"spec\" names the grid spec"},
      {"--target", "the entry's \"targets\" name the targets"},
      {"--emit", "the entry's \"emit\" says what to write"},
      {"--name", "the entry's \"name\" names the artifacts"},
      {"--output-dir", "the entry's \"out_dir\" says where outputs go"},
      {"-o", "the entry's \"out_dir\" says where outputs go"},
      {"-v", "-v applies to the whole build"},
      {"--verbose", "-v applies to the whole build"},
      {"-q", "-q applies to the whole build"},
      {"--quiet", "-q applies to the whole build"},
      {"--timing", "--timing applies to the whole build (pallasc build "
                   "--timing)"},
      {"--print-ir-after-all", "the IR of parallel jobs would interleave"},
      {"--cache-dir", "the cache options apply to the whole build"},
      {"--no-cache", "the cache options apply to the whole build"},
      {"--cache-max-size", "the cache options apply to the whole build"},
      {"-h", "not a compile flag"},
      {"--help", "not a compile flag"},
      {"--version", "not a compile flag"},
  };
  for (auto [name, why] : forbidden) {
    std::string n = name;
    if (flag == n || flag.rfind(n + "=", 0) == 0)
      return why;
  }
  // -oDIR, joined.
  if (flag.size() > 2 && flag.rfind("-o", 0) == 0)
    return "the entry's \"out_dir\" says where outputs go";
  return nullptr;
}

/// Parses one build job's command line (as `pallasc` would be given it)
/// into `options`; on an error reports it (`FILE: error: WHERE: ...`) and
/// returns false.
bool parseJobCommandLine(std::vector<std::string> args, const std::string &file,
                         const std::string &where, DriverOptions &options) {
  spellDepfileFlags(args);
  std::vector<char *> argv;
  for (std::string &a : args)
    argv.push_back(a.data());
  CLI::App app{"pallasc"};
  CompileCommand compile;
  compile.add(app, /*withCache=*/false);
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
    compile.finish(app);
  } catch (const CLI::ParseError &e) {
    logError((file.empty() ? "" : file + ": ") + "error: " + where + ": " +
             e.what());
    return false;
  }
  options = std::move(compile.options);
  return true;
}

/// The command line of a compile job, as a separate invocation would be
/// given it.
std::vector<std::string>
jobArguments(const std::string &kernel, const std::string &spec,
             const std::vector<std::string> &targets,
             const std::string &outputDir, const std::vector<std::string> &emit,
             const std::string &name, const std::vector<std::string> &flags) {
  // The kernel first (a relative path starting with '-' as "./-...", so
  // that it is not taken for an option).
  std::vector<std::string> args = {
      "pallasc", kernel.rfind("-", 0) == 0 ? "./" + kernel : kernel,
      "--spec=" + spec, "--output-dir=" + outputDir};
  for (const std::string &t : targets)
    args.push_back("--target=" + t);
  for (const std::string &e : emit)
    args.push_back("--emit=" + e);
  if (!name.empty())
    args.push_back("--name=" + name);
  llvm::append_range(args, flags);
  return args;
}

/// pallasc build: its options, and the jobs they make.
struct BuildCommand {
  CLI::App *cmd = nullptr;
  std::string list;
  std::vector<std::string> kernels, specs, targets, emit;
  std::string outputDir = ".";
  unsigned jobs = 0;
  bool verbose = false, quiet = false, timing = false;
  CacheSettings cache;

  CLI::App *add(CLI::App &app) {
    cmd = app.add_subcommand(
        "build", "Compile many kernels for many targets in one process, on "
                 "worker threads, from a build list (JSON) and/or --kernel/"
                 "--spec pairs");
    cmd->add_option("list", list,
                    "Build list (.json): an array of {\"kernel\", \"spec\", "
                    "\"targets\", \"name\", \"out_dir\", \"emit\", "
                    "\"flags\"}, paths relative to the list's directory "
                    "(docs/cli.md)");
    cmd->add_option("--kernel", kernels,
                    "Kernel IR (.mlir) of a job, paired with the --spec in "
                    "the same position (repeatable)");
    cmd->add_option("--spec", specs,
                    "Grid spec (.json) of the --kernel in the same position "
                    "(repeatable)");
    cmd->add_option("--target", targets,
                    "Target of the --kernel jobs and of the list entries "
                    "without \"targets\" (repeatable)");
    cmd->add_option("--emit", emit,
                    "--emit of the --kernel jobs and of the list entries "
                    "without \"emit\"")
        ->delimiter(',')
        ->check(CLI::IsMember(
            {"mlir", "manifest", "cubin", "asm", "header", "lib"}));
    cmd->add_option("-o,--output-dir", outputDir,
                    "Output directory of the --kernel jobs and of the list "
                    "entries without \"out_dir\" (default: .)");
    cmd->add_option("-j,--jobs", jobs,
                    "Worker threads (default: the number of CPUs; 1: one "
                    "job after another, in order)")
        ->check(CLI::Range(1u, 1u << 20));
    cmd->add_flag("-v,--verbose", verbose,
                  "Each step of each job as it starts");
    cmd->add_flag("-q,--quiet", quiet, "Only print errors (no progress lines)");
    cmd->add_flag("--timing", timing,
                  "Each job's step tree (as a compile's --timing) with its "
                  "lines, then the wall time of every job against the "
                  "build's");
    addVerifyEachFlag(cmd);
    addCacheOptions(cmd, cache);
    return cmd;
  }

  /// Checks the command line after parsing; throws CLI11's errors.
  void check() const {
    if (list.empty() && kernels.empty())
      throw CLI::ValidationError("build", "give a build list (pallasc build "
                                          "LIST.json) or --kernel K --spec S");
    if (kernels.size() != specs.size())
      throw CLI::ValidationError("--kernel/--spec",
                                 "each --kernel needs a --spec (got " +
                                     std::to_string(kernels.size()) +
                                     " --kernel and " +
                                     std::to_string(specs.size()) + " --spec)");
    for (const std::string &path : kernels)
      if (path == "-")
        throw CLI::ValidationError("--kernel", "standard input (\"-\") cannot "
                                               "be an input of a build job");
    for (const std::string &path : specs)
      if (path == "-")
        throw CLI::ValidationError("--spec", "standard input (\"-\") cannot "
                                             "be an input of a build job");
  }

  /// Makes the jobs and runs them; returns the exit code.
  int run() {
    Verbosity verbosity = quiet     ? Verbosity::Quiet
                          : verbose ? Verbosity::Verbose
                                    : Verbosity::Normal;
    setupLogging(verbosity);
    setInternalErrorBacktraces(verbose);
    if (!resolveCacheSettings(cache))
      return kExitUsageError;
    std::vector<BuildJob> all;
    bool ok = true;
    if (!list.empty()) {
      std::vector<BuildListEntry> entries;
      if (int rc = readBuildList(list, entries))
        return rc;
      for (const BuildListEntry &e : entries) {
        bool flagsOk = true;
        for (size_t i = 0; i < e.flags.size(); ++i)
          if (const char *why = forbiddenJobFlag(e.flags[i])) {
            logError(list + ": error: " + e.path + ".flags[" +
                     std::to_string(i) + "]: '" + e.flags[i] +
                     "' is not allowed in a build job's flags: " + why);
            flagsOk = false;
          }
        // The transforms first, as their flags, then the entry's flags.
        std::vector<std::string> flags = e.transformFlags;
        llvm::append_range(flags, e.flags);
        BuildJob job;
        if (!flagsOk ||
            !parseJobCommandLine(
                jobArguments(e.kernel, e.spec,
                             e.hasTargets ? e.targets : targets,
                             e.outDir.empty() ? outputDir : e.outDir,
                             e.hasEmit ? e.emit : emit, e.name, flags),
                list, e.path + ".flags", job.options)) {
          ok = false;
          continue;
        }
        job.file = list;
        job.entry = e.path;
        all.push_back(std::move(job));
      }
    }
    for (size_t i = 0; i < kernels.size(); ++i) {
      BuildJob job;
      job.entry = "--kernel " + kernels[i];
      if (!parseJobCommandLine(jobArguments(kernels[i], specs[i], targets,
                                            outputDir, emit, "", {}),
                               "", job.entry, job.options))
        return kExitUsageError;
      all.push_back(std::move(job));
    }
    if (!ok)
      return kExitUserError;
    for (BuildJob &job : all)
      job.label = buildJobLabel(job.options);
    if (int rc = checkBuildOutputs(all))
      return rc;
    BuildSettings settings;
    settings.threads = jobs;
    settings.verbosity = verbosity;
    settings.timing = timing;
    settings.cache = cache;
    return runBuild(std::move(all), settings);
  }
};

/// pallasc run: its options, checked after parsing, then the run on the CPU
/// or, with --target, on a GPU or the emulator (src/Driver/Run.h,
/// src/Driver/GpuRun.h); both share the driver's front-end setup
/// (startRun).
struct RunCommand {
  CLI::App *cmd = nullptr;
  RunOptions options;
  GpuRunOptions gpu;
  std::string vmap, usedOutputs;
  uint64_t seed = 0;
  int opt = 2;
  bool verbose = false, quiet = false;
  double rtol = 0, atol = 0;
  CLI::Option *vmapOpt = nullptr, *jvpOpt = nullptr, *dceOpt = nullptr,
              *dischargeOpt = nullptr, *hiToLoOpt = nullptr;

  RunCommand() = default;
  RunCommand(const RunCommand &) = delete;
  RunCommand &operator=(const RunCommand &) = delete;

  CLI::App *add(CLI::App &app) {
    // pallasc run: compiled CPU execution over .npy files (src/Driver/Run.h).
    cmd = app.add_subcommand(
        "run", "Run the kernel over its grid on this machine (compiled, with "
               "Pallas interpret-mode semantics), reading and writing .npy "
               "files");
    cmd->add_option("kernel", options.driver.kernelPath, "Kernel IR (.mlir)")
        ->required();
    cmd->add_option("--spec", options.driver.specPath, "Grid spec (.json)")
        ->required();
    auto *inputOpt = cmd->add_option(
        "--input", options.inputs,
        "Input array (.npy), one per call input in order (repeatable)");
    cmd->add_option("--output", options.outputs,
                    "Output file (.npy), one per call output in order "
                    "(repeatable; none: run without writing)");
    cmd->add_option("--expect", options.expect.files,
                    "Golden file (.npy) the next output must match, in "
                    "order (FILE), or output J's (J=FILE); exit 1 on a "
                    "difference (repeatable; docs/testing.md)");
    cmd->add_option("--expect-dir", options.expect.directory,
                    "Directory of golden files output<J>.npy, one per "
                    "output (as --expect)");
    cmd->add_option("--random-inputs", seed,
                    "Generate the inputs from this seed instead of reading "
                    "them")
        ->excludes(inputOpt);
    cmd->add_option("--grid-bound", options.gridBounds,
                    "Value of the next dynamic grid bound (repeatable)")
        ->check([](const std::string &text) {
          // Checked before CLI11's conversion, which saturates a value past
          // int64 to 2^63-1: the error names the value the user gave.
          int64_t value;
          const char *end = text.data() + text.size();
          auto [ptr, ec] = std::from_chars(text.data(), end, value);
          if (ec == std::errc::result_out_of_range && ptr == end)
            return "'" + text.substr(0, 80) + (text.size() > 80 ? "..." : "") +
                   "' is out of range (a grid bound is in [0, 2^31))";
          return std::string();
        });
    cmd->add_flag("--timing", options.timing,
                  "Print the time of each phase to stderr");
    vmapOpt = cmd->add_option("--vmap", vmap,
                              "Append a vmap transform: "
                              "IN_AXES:SIZE, e.g. 0,none:4");
    jvpOpt = cmd->add_flag("--jvp", "Append a jvp transform");
    dceOpt = cmd->add_option(
        "--used-outputs", usedOutputs,
        "Append a dce transform with this used-outputs mask, e.g. 1,0");
    dischargeOpt = cmd->add_flag("--discharge-state",
                                 "Append a discharge_state transform");
    hiToLoOpt = cmd->add_flag("--hi-to-lo", "Append a hi_to_lo transform");
    cmd->add_flag("--strict-fp", options.driver.strictFloat,
                  "With --target cuda:/rocm:, IEEE floating point (no FMA "
                  "contraction, IEEE-rounded f32 division)");
    cmd->add_flag("--print-ir-after-all", options.driver.printIRAfterAll,
                  "Print the IR after every pass to stderr");
    cmd->add_option("-O", opt, "Optimization level 0-3")
        ->check(CLI::Range(0, 3));
    cmd->add_flag("-v,--verbose", verbose, "Verbose output");
    cmd->add_flag("-q,--quiet", quiet, "Only print errors");
    addGpuOptions();
    addCacheOptions(cmd, options.driver.cache);
    return cmd;
  }

  /// --target and the options only a GPU run uses.
  void addGpuOptions() {
    // pallasc run --target cuda|rocm:<arch>: on the GPU or the emulator
    // (src/Driver/GpuRun.h).
    cmd->add_option("--target", gpu.target,
                    "Run on this target instead of the CPU: cuda:<arch>, "
                    "e.g. cuda:sm_90a, or rocm:<arch> with --emulate")
        ->check([](const std::string &t) {
          std::string error;
          return findRunTargetKind(t, error) ? std::string() : error;
        });
    cmd->add_flag("--check", gpu.check,
                  "With --target: compare every output with the CPU result");
    cmd->add_flag("--emulate", gpu.emulate,
                  "With --target: run the GPU lowering (cuda: or rocm:) on "
                  "CPU threads (no GPU needed)");
    // (CLI11's NonNegativeNumber names DBL_MAX in full.)
    auto nonNegative = [](const std::string &text) {
      char *end = nullptr;
      double v = std::strtod(text.c_str(), &end);
      if (end == text.c_str() || *end || !(v >= 0) || std::isinf(v))
        return "'" + text.substr(0, 80) +
               "' is not a tolerance (a finite number >= 0)";
      return std::string();
    };
    cmd->add_option("--rtol", rtol,
                    "Relative tolerance of --check (default 2e-3) and "
                    "--expect (default 1e-5)")
        ->check(nonNegative);
    cmd->add_option("--atol", atol,
                    "Absolute tolerance of --check (default 2e-3) and "
                    "--expect (default 1e-8)")
        ->check(nonNegative);
    cmd->add_option("--bench", gpu.benchReps,
                    "With --target: time this many launches and print "
                    "TFLOP/s and GB/s");
    cmd->add_flag("--bench-copy", gpu.benchCopy,
                  "With --bench: also time a device-to-device copy of the "
                  "bytes the kernel accesses");
    cmd->add_option("--device", gpu.device, "CUDA device ordinal");
  }

  /// After parsing (throws CLI11's errors): the seed, the --expect syntax
  /// and the transforms in command-line order.
  void check() {
    if (cmd->count("--random-inputs"))
      options.randomSeed = seed;
    std::string expectError = checkExpectSyntax(options.expect);
    if (!expectError.empty())
      throw CLI::ValidationError("--expect", expectError);
    for (CLI::Option *o : cmd->parse_order()) {
      if (o == vmapOpt)
        options.driver.extraTransforms.push_back(parseVmapFlag(vmap));
      else if (o == jvpOpt)
        options.driver.extraTransforms.push_back(
            spec::Transform{spec::Transform::Kind::Jvp, {}, 0, {}, "--jvp"});
      else if (o == dceOpt)
        options.driver.extraTransforms.push_back(parseUsedOutputs(usedOutputs));
      else if (o == dischargeOpt)
        options.driver.extraTransforms.push_back(spec::Transform{
            spec::Transform::Kind::DischargeState, {}, 0, {},
            "--discharge-state"});
      else if (o == hiToLoOpt)
        options.driver.extraTransforms.push_back(spec::Transform{
            spec::Transform::Kind::HiToLo, {}, 0, {}, "--hi-to-lo"});
    }
  }

  /// Runs it; returns an ExitCode.
  int execute(CLI::App &app) {
    options.driver.optLevel = opt;
    options.driver.verbosity = quiet     ? Verbosity::Quiet
                               : verbose ? Verbosity::Verbose
                                         : Verbosity::Normal;
    setupLogging(options.driver.verbosity);
    if (!resolveCacheSettings(options.driver.cache))
      return kExitUsageError;
    if (cmd->count("--rtol"))
      gpu.rtol = options.expect.rtol = rtol;
    if (cmd->count("--atol"))
      gpu.atol = options.expect.atol = atol;
    if ((cmd->count("--rtol") || cmd->count("--atol")) && !gpu.check &&
        !options.expect.any())
      warn("--rtol/--atol do nothing without --check or --expect");
    if (cmd->count("--bench-copy") && !gpu.benchReps)
      warn("--bench-copy does nothing without --bench N");
    if (cmd->count("--device") && (gpu.target.empty() || gpu.emulate))
      warn("--device does nothing without a GPU run (--target " +
           runTargetSpellings(/*onDevice=*/true) + ", without --emulate)");
    setInternalErrorBacktraces(verbose);
    if (!gpu.target.empty())
      return runOnGpu(options, gpu);
    if (gpu.check || gpu.emulate || gpu.benchReps)
      return app.exit(
                 CLI::ValidationError("--check/--emulate/--bench",
                                      "need --target " + runTargetSpellings())),
             kExitUsageError;
    return runOnCpu(options);
  }
};

int run(int argc, char **argv) {
  std::vector<std::string> args;
  if (!expandResponseFiles(argc, argv, args))
    return kExitUsageError;
  spellDepfileFlags(args);
  std::vector<char *> argvFixed;
  for (std::string &a : args)
    argvFixed.push_back(a.data());

  CLI::App app{"pallasc: ahead-of-time compiler for Pallas kernels"};
  // CLI11 quotes the offending argument, which a response file can make
  // megabytes long: its message is clipped like every other.
  app.failure_message([](const CLI::App *a, const CLI::Error &e) {
    return clipLongLines(CLI::FailureMessage::simple(a, e), kSnippetWidth);
  });
  app.set_version_flag("--version", versionText,
                       "Print the version, the LLVM/MLIR version, the "
                       "toolkits found and the targets, and exit");
  app.footer(helpFooter);
  CompileCommand compile;
  compile.add(app);

  RunCommand runCommand;
  CLI::App *runCmd = runCommand.add(app);

  // pallasc cache: the compile cache's counters, or emptying it.
  CLI::App *cacheCmd = app.add_subcommand(
      "cache", "Show the compile cache's counters (--stats) or empty it "
               "(--clear)");
  CacheSettings cacheSettings;
  bool cacheStats = false, cacheClear = false;
  cacheCmd->add_flag("--stats", cacheStats,
                     "Print entries, size, hits, misses, stores, corrupt "
                     "entries and evictions");
  cacheCmd->add_flag("--clear", cacheClear,
                     "Remove every entry and zero the counters");
  cacheCmd->add_option("--cache-dir", cacheSettings.directory,
                       "Cache directory (default: $PALLASC_CACHE_DIR)");
  cacheCmd->add_option("--cache-max-size", cacheSettings.maxSize,
                       "The bound --stats shows (default: "
                       "$PALLASC_CACHE_MAX_SIZE, else 1G)");
  // pallasc build: many compiles in one process (src/Driver/Build.h).
  BuildCommand build;
  CLI::App *buildCmd = build.add(app);

  app.require_subcommand(0, 1);

  try {
    app.parse(static_cast<int>(argvFixed.size()), argvFixed.data());
    if (cacheCmd->parsed()) {
      if (!cacheStats && !cacheClear)
        throw CLI::ValidationError("cache", "give --stats or --clear");
    } else if (runCmd->parsed()) {
      runCommand.check();
    } else if (buildCmd->parsed()) {
      build.check();
    } else {
      compile.finish(app);
    }
  } catch (const CLI::Success &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    app.exit(e);
    return kExitUsageError;
  }
  const char *verifyEachEnv = std::getenv("PALLASC_VERIFY_EACH");
  setVerifyEachPass(verifyEachFlag ||
                    (verifyEachEnv && *verifyEachEnv &&
                     std::string_view(verifyEachEnv) != "0"));
  if (cacheCmd->parsed()) {
    setupLogging(Verbosity::Normal);
    return runCacheCommand(cacheSettings, cacheStats, cacheClear);
  }
  if (buildCmd->parsed())
    return build.run();
  if (runCmd->parsed())
    return runCommand.execute(app);
  DriverOptions &options = compile.options;
  setupLogging(options.verbosity);
  setInternalErrorBacktraces(compile.verbose);
  warnIneffectiveFlags(app, options);
  if (!resolveCacheSettings(options.cache))
    return kExitUsageError;
  return runCompile(options);
}

} // namespace

int main(int argc, char **argv) {
  // Instead of llvm::InitLLVM: an LLVM fatal error or a crash is reported as
  // an internal compiler error (exit 3), without LLVM's stack dump.
  installInternalErrorHandlers(argv[0]);
  // Past a file-size limit (ulimit -f), let write() fail with EFBIG so the
  // driver reports it and removes its temporary files, instead of the
  // process dying of SIGXFSZ with a partial file left behind.
  signal(SIGXFSZ, SIG_IGN);
  // SIGINT, SIGTERM, SIGHUP and crashes remove this invocation's scratch
  // directories (staged outputs, tool temporaries) before the process dies.
  installScratchCleanupOnSignals();
  removeOrphanToolTempDirs();
  int rc;
  try {
    rc = run(argc, argv);
  } catch (const std::exception &e) {
    std::cerr << "pallasc: internal error: " << e.what() << "\n";
    rc = kExitInternalError;
  }
  removeToolTempDir();
  return rc;
}
