//===- TargetRegistry.h - The driver's table of target kinds ----*- C++ -*-===//
//
// One entry per kind of `--target` (tpu, cuda:<chip>, rocm:<chip>, cpu):
// which spellings it takes, how it compiles (the artifacts, manifest
// entries and launcher images it adds), what of the toolchain its outputs
// depend on (the compile cache's key) and which output extensions it
// writes (the hint of `-o FILE.ext`), whether `pallasc run --target` runs
// its targets, and which compile flags only it uses (warned about without
// one of its targets). The driver and tools/pallasc walk this table instead
// of testing target kinds, so a new kind is one entry in TargetRegistry.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_DRIVER_TARGETREGISTRY_H
#define PALLASC_SRC_DRIVER_TARGETREGISTRY_H

#include "src/Driver/Frontend.h"
#include "src/Manifest/Manifest.h"
#include "src/Target/CudaArtifacts.h"
#include "src/Target/RocmArtifacts.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/FunctionExtras.h"

#include <string>
#include <vector>

namespace pallasc {

class CompileCache;
struct Toolchain;

/// What a target kind's compile reads.
struct TargetCompileRequest {
  mlir::ModuleOp module; ///< after the call-level transforms; not modified
  std::string name;      ///< the artifacts' name
  const DriverOptions &options;
  bool emitMlir;    ///< --emit=mlir: also the kind's intermediate IR
  bool strictFloat; ///< --strict-fp or compiler_params.gpu.strict_fp
  bool wantLibrary; ///< --emit=lib: fill the launcher images
};

/// What the target kinds' compiles give, each kind's after the previous
/// kind's (in table order).
struct TargetOutputs {
  std::vector<CompiledFile> files;
  std::vector<ManifestArtifact> artifacts;
  std::vector<std::string> emitted; ///< the files written for --emit
  /// What a generated launcher embeds (src/Driver/LauncherGen.h).
  std::vector<CudaArtifacts::Image> cudaImages;
  std::vector<RocmArtifacts::Image> rocmImages;
};

/// The second half of a kind's compile: collects what the first half
/// started (ptxas processes) into `out`. Destroyed uncalled, it abandons
/// the compile.
using FinishTargetCompile =
    llvm::unique_function<mlir::LogicalResult(TargetOutputs &out)>;

/// One output extension a kind writes, and what to add to a compilation to
/// get it.
struct TargetOutputExtension {
  const char *extension; ///< ".ptx"
  const char *howToWrite; ///< "add --target cuda:<arch>"
};

/// A compile flag that only one kind's targets use: tools/pallasc warns
/// about it when no target of that kind is asked for.
struct TargetFlag {
  /// As the warning spells it: "--emit=cubin", "--code-object-version".
  const char *flag;
  /// The --emit kind the flag is ("cubin"); null for an option, which is
  /// given when the command line counts `flag`.
  const char *emitKind;
};

/// Whether and how `pallasc run --target` runs a kind's targets.
struct TargetRun {
  /// `pallasc run --target` takes the kind's targets.
  bool runnable = false;
  /// Null when pallasc run launches on the device (or, with --emulate, on
  /// CPU threads); otherwise it runs with --emulate only, and this ends
  /// "pallasc run cannot launch on ...": "AMD GPUs (no HIP runtime
  /// support)".
  const char *emulateOnly = nullptr;
};

struct TargetKind {
  /// "cuda": the kind's name, as in messages and compile stages.
  const char *name;
  /// Whether `target` (a --target value) is of this kind.
  bool (*matches)(const std::string &target);
  /// Starts the compile of every target of this kind in `request.options`
  /// (the driver calls it only when there is one); its diagnostics go to
  /// the module's context. The returned function finishes it, after every
  /// kind has started.
  mlir::FailureOr<FinishTargetCompile> (*start)(
      const TargetCompileRequest &request);
  /// Adds what the outputs of `targets` (of this kind) depend on besides
  /// pallasc and the inputs to `toolchain` (tools, libraries, host triple);
  /// null when nothing.
  void (*addToolchain)(CompileCache &cache, Toolchain &toolchain);
  /// The extensions of the kind's outputs.
  std::vector<TargetOutputExtension> outputs;
  /// Whether generated launchers (src/Driver/LauncherGen.h) have an entry
  /// point for this kind.
  bool hasLauncher;
  /// With --emit=header alone (no images were built): adds the image of
  /// `target` that the header's entry point names (its architecture only)
  /// when `out` has none; null for a kind whose launcher embeds no image.
  void (*addHeaderImage)(const std::string &target, TargetOutputs &out);
  /// The kind's targets as messages spell them: "cuda:<arch>", "tpu".
  const char *spelling;
  /// Every valid target of the kind, for messages: "cuda:sm_75, ...".
  std::string (*validNames)();
  /// What `pallasc run --target` does with the kind's targets.
  TargetRun run;
  /// The compile flags that only this kind's targets use.
  std::vector<TargetFlag> flags;
};

/// Every target kind, in the order their artifacts are listed.
const std::vector<TargetKind> &targetKinds();

/// The kind of `target`; null when no kind takes it.
const TargetKind *findTargetKind(const std::string &target);

/// Whether `targets` holds one of `kind`'s.
bool hasTargetOf(const TargetKind &kind,
                 const std::vector<std::string> &targets);

/// Every valid target of every kind, in table order: "tpu, cuda:sm_75, ...,
/// cpu" (what `pallasc --help` and `--version` list).
std::string validTargetNames();

/// The kind `pallasc run --target <target>` runs; null with `error` set to
/// a message that lists the targets it takes.
const TargetKind *findRunTargetKind(const std::string &target,
                                    std::string &error);

/// The spellings of the kinds `pallasc run --target` takes, joined by " or "
/// ("cuda:<arch> or rocm:<arch>"); with `onDevice`, only those it launches
/// on a device.
std::string runTargetSpellings(bool onDevice = false);

} // namespace pallasc

#endif // PALLASC_SRC_DRIVER_TARGETREGISTRY_H
