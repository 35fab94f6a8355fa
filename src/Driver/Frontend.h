//===- Frontend.h - The front half shared by compile and run ---*- C++ -*-===//
//
// Every pallasc command that starts from a kernel and a grid spec runs the
// same steps first: read both files, parse the kernel, import the spec as a
// pallas.call, verify, apply the transforms (spec's, then the command
// line's) and the cleanup passes. `pallasc` (compile) and `pallasc run`
// differ only in what they do with the resulting module.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_DRIVER_FRONTEND_H
#define PALLASC_SRC_DRIVER_FRONTEND_H

#include "src/Driver/Diagnostics.h"
#include "src/Driver/Driver.h"
#include "src/Spec/GridSpec.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class MemoryBuffer;
} // namespace llvm

namespace pallasc {

/// The registry every pallasc context is made from.
mlir::DialectRegistry makeDriverRegistry();

/// Configures a context made from makeDriverRegistry(): single-threaded, no
/// op dumps after diagnostics. No dialect is loaded here: the parser loads
/// the kernel's, each pass manager its passes' dependent dialects, and code
/// that builds IR outside a pass manager loads what it builds (loading all
/// of them cost ~4-14 ms a process).
void configureDriverContext(mlir::MLIRContext &context);

/// What the front half produces.
struct FrontendResult {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  spec::GridSpec spec; ///< as parsed, with the command line's transforms
  std::string kernelText, specText;
};

/// Runs the front half for `options` (kernel and spec paths, transforms,
/// -O, IR printing). Diagnostics go through `router`. Returns kExitSuccess,
/// or the exit code after a diagnostic was printed.
int runFrontend(const DriverOptions &options, mlir::MLIRContext &context,
                DiagnosticRouter &router, FrontendResult &result);

/// The first step of runFrontend: reads the kernel and the spec (with their
/// size caps). Returns kExitSuccess, or kExitUserError after an error.
int readFrontendInputs(const DriverOptions &options,
                       std::unique_ptr<llvm::MemoryBuffer> &kernelBuffer,
                       std::string &specText);

/// The rest of runFrontend, on what readFrontendInputs read.
int runFrontendOnBuffer(const DriverOptions &options,
                        std::unique_ptr<llvm::MemoryBuffer> kernelBuffer,
                        std::string specText, mlir::MLIRContext &context,
                        DiagnosticRouter &router, FrontendResult &result);

/// runFrontend on inputs already in memory: `options.kernelPath` and
/// `options.specPath` only name them (in diagnostics and the manifest).
int runFrontendOnText(const DriverOptions &options, llvm::StringRef kernelText,
                      std::string specText, mlir::MLIRContext &context,
                      DiagnosticRouter &router, FrontendResult &result);

/// One spelling of every code generation path this build has: `cpu`, `tpu`
/// and one GPU chip per distinct set of code paths in the GPU target table
/// (`cuda:sm_75`, `cuda:sm_80`, `cuda:sm_90`, `cuda:sm_90a`, `rocm:gfx90a`).
/// The pipeline fuzzer compiles each input for every one of them.
const std::vector<std::string> &everyTarget();

/// kExitSuccess if every `options.targets` entry names a target of this
/// build; otherwise prints an error and returns kExitUsageError.
int checkTargets(const DriverOptions &options);

/// One output of a compilation, in memory.
struct CompiledFile {
  std::string name; ///< inside the output directory
  std::string contents;
};

/// The back half of a compilation, to memory: the --emit=mlir text, each
/// target's artifacts and the manifest (last), for the module and spec of
/// `fe` (not modified). Writes no file; the driver stages these. Returns
/// kExitSuccess, or the exit code after a diagnostic was printed.
/// `outputFile` (from `-o FILE`, see resolveOutputPath) renames the one
/// output with its extension, everywhere the manifest names it; no such
/// output, or several, is a usage error.
int emitArtifacts(const DriverOptions &options, const FrontendResult &fe,
                  std::vector<CompiledFile> &files,
                  const std::string &outputFile = "");

/// Writes `files` (from emitArtifacts, or a cache entry) into `location`,
/// with -MD the depfile (named after `name`, the compilation's name, when
/// -MF does not give its path), all staged and committed together: the
/// inputs are never overwritten and a failure leaves nothing. Returns
/// kExitSuccess or kExitUserError after an error.
int writeOutputs(const DriverOptions &options, const OutputLocation &location,
                 const std::string &name,
                 const std::vector<CompiledFile> &files);

/// A whole compilation of in-memory inputs to in-memory outputs, in a fresh
/// context: runFrontendOnText, checkTargets, emitArtifacts. No file is read
/// or written (except by ptxas, when found: see findPtxas).
int compileToMemory(const DriverOptions &options, llvm::StringRef kernelText,
                    std::string specText, std::vector<CompiledFile> &files);

} // namespace pallasc

#endif // PALLASC_SRC_DRIVER_FRONTEND_H
