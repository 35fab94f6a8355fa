//===- Run.h - pallasc run: compiled CPU execution -------------*- C++ -*-===//
//
// `pallasc run KERNEL.mlir --spec SPEC.json --input a.npy ... --output o.npy`
// runs the kernel over its grid on this machine, with the semantics of
// Pallas' interpret mode: the kernel is lowered through the CPU pipeline,
// JIT-compiled, and driven by the grid executor (src/Runtime).
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_DRIVER_RUN_H
#define PALLASC_SRC_DRIVER_RUN_H

#include "src/Driver/Driver.h"
#include "src/Driver/Diagnostics.h"
#include "src/Driver/Expect.h"
#include "src/Driver/Frontend.h"
#include "src/Driver/OutputFiles.h"
#include "src/Launch/HostGrid.h"
#include "src/Runtime/HostCode.h"
#include "src/Runtime/Npy.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pallasc {

struct RunOptions {
  /// Kernel, spec, extra transforms, -O, IR printing, verbosity.
  DriverOptions driver;
  /// One .npy per call input (scalar-prefetch operands first).
  std::vector<std::string> inputs;
  /// One .npy per call output; none: run without writing.
  std::vector<std::string> outputs;
  /// Golden files the outputs are compared with (--expect, --expect-dir).
  ExpectOptions expect;
  /// Generate the inputs instead of reading them.
  std::optional<uint64_t> randomSeed;
  /// Values of the dynamic grid bounds, in grid order.
  std::vector<int64_t> gridBounds;
  /// Print the time of each phase to stderr.
  bool timing = false;
  /// Upper bound on the bytes a run may allocate; 0: the machine's memory.
  uint64_t maxBytes = 0;
};

/// Runs the kernel on the CPU; returns an ExitCode. Writes either every
/// output or none.
int runOnCpu(const RunOptions &options);

/// How compileForHost went, for --timing.
struct HostJitTimes {
  bool usedCache = false; ///< there is a JIT object cache
  bool cached = false;    ///< the object came from it
  double lookupMs = 0, lowerMs = 0, jitMs = 0;
};

/// Lowers `module` (the front end's) for the host and JIT-compiles it, at
/// -O3, through the JIT object cache when `driver` has a cache: a hit links
/// the stored object, without lowering or code generation (`module` is
/// then left as it was). Returns null after printing an error, with `rc`
/// the exit code.
std::unique_ptr<runtime::JitModule>
compileForHost(const DriverOptions &driver, mlir::ModuleOp module,
               const runtime::JitOptions &jitOptions, HostJitTimes &times,
               int &rc);

/// Before any work: protects the kernel, the spec, every --input file and
/// every --expect golden file from being overwritten and checks every --output path (not empty, not a
/// directory, not an input, not given twice, in an existing directory).
/// Fails after printing an error.
llvm::LogicalResult claimRunOutputs(const RunOptions &options,
                                    OutputFiles &files);

/// What `pallasc run` and `pallasc run --target` set up before anything
/// that depends on where the kernel runs: the --output files claimed, a
/// context with the driver's registry and diagnostics, the front end's
/// module and spec (declared in the order they are made), and the values of
/// a symbolic spec's symbols.
struct RunFrontend {
  OutputFiles files{"."};
  std::unique_ptr<mlir::MLIRContext> context;
  std::unique_ptr<DiagnosticRouter> router;
  FrontendResult fe;
  /// A spec with symbols is compiled once, symbolic, and runs at the
  /// values its inputs' shapes give (docs/run.md#symbolic-shapes).
  std::map<std::string, int64_t> symbolValues;
};

/// Fills `run`: claims the outputs (claimRunOutputs), makes the context and
/// runs the front end with `driver` (the run's driver options, or a copy of
/// them), whose symbols take their values from the --input files' shapes.
/// Returns kExitSuccess, or the exit code after an error.
int startRun(const RunOptions &options, DriverOptions driver,
             RunFrontend &run);

/// Checks the command line against what the run takes and returns: as many
/// --input files as inputs (unless --random-inputs), none or as many
/// --output files as outputs, one --grid-bound value per dynamic bound. With
/// `describe`, the messages list the operands' types. Returns kExitSuccess,
/// or kExitUserError after an error.
int checkRunArguments(const RunOptions &options,
                      const std::vector<launch::HostArrayType> &inputs,
                      const std::vector<launch::HostArrayType> &outputs,
                      int64_t numBounds, bool describe);

/// Writes `outputs` to the --output files as .npy, all or none (staged, then
/// committed together), then compares them with `golden` (--expect): the
/// outputs are written even when they differ, for comparing them with the
/// golden files. Returns an ExitCode.
int commitRunOutputs(const RunOptions &options, OutputFiles &files,
                     const std::vector<runtime::HostArray> &outputs,
                     const GoldenOutputs &golden);

} // namespace pallasc

#endif // PALLASC_SRC_DRIVER_RUN_H
