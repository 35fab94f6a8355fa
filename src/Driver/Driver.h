//===- Driver.h - pallasc compile driver ----------------------*- C++ -*-===//
//
// Options -> parse kernel and spec -> pallas.call -> transforms -> outputs.
// The CLI (tools/pallasc) only fills DriverOptions; everything that decides
// what is written lives here, so tests can call it directly.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_DRIVER_DRIVER_H
#define PALLASC_SRC_DRIVER_DRIVER_H

#include "src/Spec/GridSpec.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace pallasc {

/// Exit codes of the pallasc tools.
enum ExitCode : int {
  kExitSuccess = 0,
  kExitUserError = 1,  ///< bad input; a diagnostic was printed
  kExitUsageError = 2, ///< bad command line
  kExitInternalError = 3,
};

enum class Verbosity { Quiet, Normal, Verbose };

/// The compile cache of a command (src/Driver/Cache.h, docs/cache.md): what
/// the command line chose; resolveCacheSettings() fills the rest from the
/// environment.
struct CacheSettings {
  /// --cache-dir; when empty, PALLASC_CACHE_DIR. Empty after resolving: no
  /// cache.
  std::string directory;
  /// --no-cache: no cache, whatever the environment says.
  bool disabled = false;
  /// --cache-max-size (e.g. "500M"); when empty, PALLASC_CACHE_MAX_SIZE,
  /// else 1 GiB.
  std::string maxSize;
  /// The bound in bytes, once resolved.
  uint64_t maxBytes = 0;
};

struct DriverOptions {
  std::string kernelPath;
  std::string specPath;
  /// `pallasc run`: gives the concrete shapes of the spec's inputs (from the
  /// .npy headers) and their names for the messages, or false with an
  /// error. Set, a spec with symbols is instantiated at the values the
  /// shapes give (docs/run.md#symbolic-shapes); unset, it is refused.
  std::function<bool(std::vector<std::vector<int64_t>> &shapes,
                     std::vector<std::string> &sources, std::string &error)>
      symbolShapes;
  /// `pallasc run --target cpu`: set with symbolShapes, the inferred values
  /// are stored here and the spec stays symbolic (the CPU artifact runs
  /// every size; the JIT cache keys on the symbolic module).
  std::map<std::string, int64_t> *symbolValues = nullptr;
  /// `pallasc run --target T`: T (empty: the run is on the CPU).
  std::string runTarget;
  /// `--output-dir DIR`: where the outputs go.
  std::string outputDir = ".";
  /// `-o PATH`: a directory (as outputDir), or a file that names the one
  /// output of its kind (`-o kernel.ptx`); see resolveOutputPath. Empty:
  /// outputDir decides.
  std::string outputPath;
  /// `--name NAME`: replaces the spec's `name` (artifact and entry names).
  std::string name;
  /// What to write besides the manifest: "mlir" (the final IR), "cubin"
  /// (cuda targets), "asm" (rocm targets: the AMDGPU assembly). "manifest"
  /// alone writes only the manifest.
  std::vector<std::string> emit;
  std::vector<std::string> targets;
  /// Transforms given on the command line, appended to the spec's list.
  std::vector<spec::Transform> extraTransforms;
  bool printIRAfterAll = false;
  /// -MD / -MMD: write a Makefile depfile, at `depfile` (-MF) or, when
  /// that is empty, beside the outputs (`OUTDIR/NAME.d`, or the `-o` file
  /// with its extension replaced by `.d`).
  bool writeDepfile = false;
  std::string depfile;
  /// -MT / -MQ: the rule's targets instead of the outputs (-MQ ones already
  /// quoted for Make).
  std::vector<std::string> depTargets;
  /// -MP: a phony rule for each prerequisite.
  bool depPhonyTargets = false;
  int optLevel = 2;
  /// AMDHSA code object version of --target rocm:<arch> (4, 5 or 6).
  int rocmCodeObjectVersion = 5;
  /// --strict-fp: IEEE floating point on the GPU targets (no FMA
  /// contraction, IEEE-rounded f32 division) instead of Pallas' Triton
  /// semantics (docs/cuda.md, "Floating point").
  bool strictFloat = false;
  /// --Werror=spills: a kernel that spills registers on a GPU target is an
  /// error (else a warning).
  bool spillsAreErrors = false;
  Verbosity verbosity = Verbosity::Normal;
  /// --timing: print the time of each step and pass when the compilation
  /// ends (src/Driver/Timing.h).
  bool timing = false;
  /// --cache-dir and friends.
  CacheSettings cache;
  /// Testing the internal-error path (hidden --debug-internal-error): "fatal"
  /// raises an LLVM fatal error, "crash" a SIGSEGV, "abort" calls abort(),
  /// each while compiling the first target, before any output is
  /// prepared.
  std::string debugInternalError;
};

/// Sets up the spdlog logger all pallasc diagnostics go through.
void setupLogging(Verbosity verbosity);

/// Runs one compilation; returns an ExitCode. Never leaves partial outputs.
int runCompile(const DriverOptions &options);

class CompileCache;

/// As runCompile(options), with `cache` (nullptr: none) instead of the one
/// `options.cache` names, and `label` starting its -v step lines: a job of a
/// batch build (src/Driver/Build.h), which shares one cache between its
/// threads. Safe to call from several threads at once. With
/// `options.timing`, the step tree goes to `*timingReport` when it is given
/// (the build prints it with the job's other lines), else to stderr.
int runCompile(const DriverOptions &options, CompileCache *cache,
               const std::string &label,
               std::string *timingReport = nullptr);

/// Where the outputs go: `directory`, and `file`, when `-o` names a single
/// output (`-o out/kernel.ptx` is directory `out`, file `kernel.ptx`).
struct OutputLocation {
  std::string directory;
  std::string file;
};

/// Classifies `options.outputPath` (or takes `options.outputDir`): a path
/// ending in `/`, an existing directory, or a name without one of the
/// extensions pallasc writes (.ptx .cubin .hsaco .s .o .h .a .json .mlir
/// .mlirbc) is a directory; anything else names a file.
OutputLocation resolveOutputPath(const DriverOptions &options);

/// The pass-pipeline element for one transform, e.g.
/// "pallas-vmap{axis-size=4 in-axes=0,-1}".
std::string transformToPassPipeline(const spec::Transform &transform);

} // namespace pallasc

#endif // PALLASC_SRC_DRIVER_DRIVER_H
