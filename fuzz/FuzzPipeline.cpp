//===- FuzzPipeline.cpp - libFuzzer target: the whole compile --*- C++ -*-===//
//
// A kernel and a grid spec in one input, compiled as the driver does (parse,
// import, the spec's transforms, cleanup) and then for every target of the
// build (everyTarget(): cpu, tpu and one chip per code path of the GPU
// target table: sm_75, sm_80, sm_90, sm_90a, gfx90a), each on its own so that
// one target rejecting a kernel does not hide the others, with the outputs
// kept in memory: nothing is written to disk (ptxas is turned off).
//
// Input format: the kernel text, then a line that is exactly
//   // ----- spec -----
// then the grid spec JSON. Without that line the whole input is the kernel
// and the spec is empty (an error). fuzz/run.sh seeds the corpus from each
// examples/NAME/kernel.mlir + separator + examples/NAME/spec.json.
//
// Contract checked on every input: the compile never crashes or hangs (the
// sanitizers and libFuzzer's -timeout); it succeeds with a manifest as its
// last output, or fails with exit code 1 after printing at least one error.
// PALLASC_FUZZ_VERBOSE=1 prints the diagnostics (to reproduce a finding).
//
//===----------------------------------------------------------------------===//

#include "src/Driver/Driver.h"
#include "src/Driver/Frontend.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringRef.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {

constexpr llvm::StringLiteral kSeparator = "\n// ----- spec -----\n";

/// Counts the errors the driver logs (and drops them unless verbose).
class CountingSink : public spdlog::sinks::base_sink<std::mutex> {
public:
  int errors = 0;

protected:
  void sink_it_(const spdlog::details::log_msg &msg) override {
    if (msg.level >= spdlog::level::err)
      ++errors;
  }
  void flush_() override {}
};

CountingSink *setUp() {
  // ptxas writes temporary files and is not what is being fuzzed.
  setenv("PTXAS", "none", /*overwrite=*/1);
  auto sink = std::make_shared<CountingSink>();
  std::vector<spdlog::sink_ptr> sinks{sink};
  if (const char *v = std::getenv("PALLASC_FUZZ_VERBOSE"); v && *v == '1')
    sinks.push_back(std::make_shared<spdlog::sinks::stderr_sink_mt>());
  auto logger =
      std::make_shared<spdlog::logger>("pallasc", sinks.begin(), sinks.end());
  logger->set_pattern("%v");
  logger->set_level(spdlog::level::warn);
  spdlog::register_logger(logger);
  spdlog::set_default_logger(logger);
  return sink.get();
}

[[noreturn]] void contractBroken(const std::string &what) {
  std::fprintf(stderr, "pallasc-fuzz-pipeline: %s\n", what.c_str());
  std::abort();
}

/// An exit code and the number of errors printed with it must agree.
void checkOutcome(int rc, int errorsBefore, const CountingSink &sink,
                  const std::vector<pallasc::CompiledFile> &files,
                  const std::string &step) {
  if (rc == pallasc::kExitUserError) {
    if (sink.errors == errorsBefore)
      contractBroken(step + ": exit code 1 without an error message");
    return;
  }
  if (rc != pallasc::kExitSuccess)
    contractBroken(step + ": exit code " + std::to_string(rc));
  if (sink.errors != errorsBefore)
    contractBroken(step + ": succeeded after printing an error");
  if (!files.empty() &&
      !llvm::StringRef(files.back().name).ends_with(".manifest.json"))
    contractBroken(step + ": the last output is not the manifest");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static CountingSink *sink = setUp();
  static mlir::DialectRegistry *registry =
      new mlir::DialectRegistry(pallasc::makeDriverRegistry());

  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  auto [kernelText, specText] = input.split(kSeparator);

  pallasc::DriverOptions options;
  options.kernelPath = "fuzz.mlir";
  options.specPath = "fuzz.json";
  options.emit = {"mlir"};

  mlir::MLIRContext context(*registry);
  pallasc::configureDriverContext(context);
  pallasc::DiagnosticRouter router(&context);
  pallasc::FrontendResult fe;
  int errors = sink->errors;
  int rc = pallasc::runFrontendOnText(options, kernelText, specText.str(),
                                      context, router, fe);
  checkOutcome(rc, errors, *sink, {}, "front end");
  if (rc != pallasc::kExitSuccess)
    return 0;

  std::vector<pallasc::CompiledFile> files;
  for (const std::string &target : pallasc::everyTarget()) {
    options.targets = {target};
    files.clear();
    errors = sink->errors;
    rc = pallasc::emitArtifacts(options, fe, files);
    checkOutcome(rc, errors, *sink, files, "--target " + target);
    if (rc == pallasc::kExitSuccess && files.empty())
      contractBroken("--target " + target + ": no manifest");
  }
  return 0;
}
