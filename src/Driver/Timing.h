//===- Timing.h - Compile steps: --timing and -v ---------------*- C++ -*-===//
//
// A compilation is a tree of named steps (read inputs, parse kernel, import
// spec, transforms, per target its lowering, LLVM code generation, ptxas,
// manifest, write outputs). Code marks a step with a `Step` object alive
// while it runs; then
//   - with -v, a line `> cuda:sm_90a / codegen` is logged as the step
//     starts (in a batch build prefixed by the job: `> matmul / ...`);
//   - with --timing, the step is timed (MLIR's DefaultTimingManager) and
//     the passes of pass managers given to timePasses() are timed inside it,
//     for an -ftime-report style tree printed when the compilation ends.
//
// The current job and step are per thread, so target code deep in the
// driver only says `Step step("ptxas");` and parallel jobs of a batch build
// keep apart. Without --timing and -v a Step costs a thread-local read.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_DRIVER_TIMING_H
#define PALLASC_SRC_DRIVER_TIMING_H

#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>

namespace mlir {
class PassManager;
} // namespace mlir

namespace pallasc {

void timePasses(mlir::PassManager &pm);

/// The step tree of one compile job.
class StepTimer {
public:
  /// `timing`: collect times (--timing). `label`: what -v lines start with
  /// (a batch build's job name; empty for a single compile).
  StepTimer(bool timing, std::string label);
  ~StepTimer();
  StepTimer(const StepTimer &) = delete;
  StepTimer &operator=(const StepTimer &) = delete;

  bool timing() const { return enabled; }
  const std::string &label() const { return jobLabel; }
  /// Sets the label, before any other thread works on the job.
  void setLabel(std::string label) { jobLabel = std::move(label); }
  /// Stops the clock and renders the report (MLIR's text format: total wall
  /// time, then the tree of steps and passes with their share). Returns ""
  /// without --timing. Call once, after every Step of the job has ended.
  std::string report();

private:
  friend class Step;
  friend class StepTimerScope;
  friend void timePasses(mlir::PassManager &pm);
  bool enabled;
  std::string jobLabel;
  std::string text;
  std::unique_ptr<llvm::raw_string_ostream> stream;
  mlir::DefaultTimingManager manager;
  mlir::TimingScope root;
};

/// Makes `timer` the current job of this thread while alive; Steps nest in
/// its root (or, on another thread of the same job, in `parent`).
class StepTimerScope {
public:
  explicit StepTimerScope(StepTimer &timer, class Step *parent = nullptr);
  ~StepTimerScope();

private:
  StepTimer *previousTimer;
  class Step *previousStep;
};

/// One step of the current job, timed and announced while alive.
class Step {
public:
  explicit Step(llvm::StringRef name);
  ~Step();
  Step(const Step &) = delete;
  Step &operator=(const Step &) = delete;

  /// The innermost step of this thread (nullptr outside any).
  static Step *current();

private:
  friend void timePasses(mlir::PassManager &pm);
  friend class StepTimerScope;
  Step *parent;
  std::string path; ///< "cuda:sm_90a / codegen"
  mlir::TimingScope scope;
};

/// Times `pm`'s passes inside the current step when the job collects times.
void timePasses(mlir::PassManager &pm);

/// Whether the driver's fixed lowering pipelines (the GPU distribution and
/// codegen, the TPU lowering) run MLIR's verifier after every pass: off by
/// default, on with `--verify-each` or PALLASC_VERIFY_EACH=1. Off, the
/// pipelines verify once at their end instead (lowerGpuKernel,
/// pallas-verify before serialization). Process-wide; set before any
/// compile starts.
void setVerifyEachPass(bool on);
bool verifyEachPass();

/// Sets up `pm` as one of those pipelines: timePasses, and the verifier
/// after every pass only when verifyEachPass().
void setUpLoweringPipeline(mlir::PassManager &pm);

} // namespace pallasc

#endif // PALLASC_SRC_DRIVER_TIMING_H
