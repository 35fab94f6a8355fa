//===- Timing.cpp - Compile steps: --timing and -v -------------*- C++ -*-===//

#include "src/Driver/Timing.h"

#include "mlir/Pass/PassManager.h"

#include <spdlog/spdlog.h>

#include <atomic>

namespace pallasc {

namespace {
thread_local StepTimer *currentTimer = nullptr;
thread_local Step *currentStep = nullptr;
std::atomic<bool> verifyEach{false};
} // namespace

StepTimer::StepTimer(bool timing, std::string label)
    : enabled(timing), jobLabel(std::move(label)),
      stream(std::make_unique<llvm::raw_string_ostream>(text)) {
  manager.setEnabled(timing);
  manager.setOutput(mlir::createOutputStrategy(
      mlir::DefaultTimingManager::OutputFormat::Text, *stream));
  root = manager.getRootScope();
}

StepTimer::~StepTimer() {
  // Report nothing on destruction (the manager would print to `stream`).
  root.stop();
  manager.clear();
  manager.setEnabled(false);
}

std::string StepTimer::report() {
  if (!enabled)
    return "";
  root.stop();
  manager.print();
  stream->flush();
  std::string out;
  out.swap(text);
  return out;
}

StepTimerScope::StepTimerScope(StepTimer &timer, Step *parent)
    : previousTimer(currentTimer), previousStep(currentStep) {
  currentTimer = &timer;
  currentStep = parent;
}

StepTimerScope::~StepTimerScope() {
  currentTimer = previousTimer;
  currentStep = previousStep;
}

Step::Step(llvm::StringRef name) : parent(currentStep) {
  bool verbose = spdlog::should_log(spdlog::level::debug);
  bool timed = currentTimer && currentTimer->enabled;
  if (verbose || timed)
    path = parent ? parent->path + " / " + name.str() : name.str();
  if (timed)
    scope = parent ? parent->scope.nest(name) : currentTimer->root.nest(name);
  if (verbose) {
    if (currentTimer && !currentTimer->jobLabel.empty())
      spdlog::debug("> {} / {}", currentTimer->jobLabel, path);
    else
      spdlog::debug("> {}", path);
  }
  currentStep = this;
}

Step::~Step() {
  scope.stop();
  currentStep = parent;
}

Step *Step::current() { return currentStep; }

void timePasses(mlir::PassManager &pm) {
  if (!currentTimer || !currentTimer->enabled)
    return;
  if (currentStep)
    pm.enableTiming(currentStep->scope);
  else
    pm.enableTiming(currentTimer->root);
}

void setVerifyEachPass(bool on) { verifyEach.store(on); }

bool verifyEachPass() { return verifyEach.load(); }

void setUpLoweringPipeline(mlir::PassManager &pm) {
  timePasses(pm);
  pm.enableVerifier(verifyEachPass());
}

} // namespace pallasc
