//===- Run.cpp - pallasc run: compiled CPU execution ------------*- C++ -*-===//

#include "src/Driver/Run.h"

#include "dialects/Pallas/IR/PallasOps.h"

#include "src/Driver/Cache.h"
#include "src/Driver/Frontend.h"
#include "src/Driver/OutputFiles.h"
#include "src/Runtime/GridExecutor.h"
#include "src/Runtime/HostCode.h"
#include "src/Runtime/HostProgram.h"
#include "src/Runtime/CallPlan.h"
#include "src/Runtime/Npy.h"
#include "src/Runtime/RandomInputs.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <ctime>
#include <unistd.h>

using namespace mlir;
using namespace pallasc::runtime;

namespace pallasc {

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

/// CPU time of this process, in milliseconds (the wall clock is noisy on a
/// shared machine).
double cpuMs() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

uint64_t physicalMemory() {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || size <= 0)
    return UINT64_MAX;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(size);
}

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string describeOperands(const std::vector<launch::HostArrayType> &arrays) {
  std::string s;
  for (size_t i = 0; i < arrays.size(); ++i)
    s += (i ? ", " : "") + arrays[i].describe();
  return s.empty() ? "none" : s;
}

} // namespace

std::unique_ptr<JitModule> compileForHost(const DriverOptions &driver,
                                          ModuleOp module,
                                          const JitOptions &jitOptions,
                                          HostJitTimes &times, int &rc) {
  Clock::time_point t0 = Clock::now();
  std::string error;
  std::unique_ptr<JitModule> jit;
  std::unique_ptr<JitObjectCache> objects =
      openJitObjectCache(driver, module, "run cpu -O3");
  times.usedCache = objects != nullptr;
  if (objects)
    jit = JitModule::loadCached(*objects, jitOptions);
  times.lookupMs = msSince(t0);
  times.cached = jit != nullptr;
  if (jit)
    return jit;
  Clock::time_point t1 = Clock::now();
  if (failed(runtime::lowerForHost(module, driver.printIRAfterAll))) {
    rc = kExitUserError;
    return nullptr;
  }
  times.lowerMs = msSince(t1);
  Clock::time_point t2 = Clock::now();
  std::string object;
  jit = JitModule::create(module, error, jitOptions,
                          objects ? &object : nullptr);
  if (!jit) {
    logError("error: " + error);
    rc = kExitInternalError;
    return nullptr;
  }
  times.jitMs = msSince(t2);
  if (objects && !object.empty())
    objects->store(object);
  return jit;
}

LogicalResult claimRunOutputs(const RunOptions &options, OutputFiles &files) {
  files.protectInput(options.driver.kernelPath, "kernel being run");
  files.protectInput(options.driver.specPath, "grid spec being run");
  for (size_t i = 0; i < options.inputs.size(); ++i)
    files.protectInput(options.inputs[i], "--input file " + std::to_string(i));
  // (--output files, when given, are one per output: as many as
  // --expect-dir's golden files.)
  for (const ExpectFile &golden :
       expectFilesForCommandLine(options.expect, options.outputs.size()))
    files.protectInput(golden.path, "--expect file of output " +
                                        std::to_string(golden.output));
  for (const std::string &path : options.outputs)
    if (failed(files.claim(path)))
      return failure();
  return success();
}

int commitRunOutputs(const RunOptions &options, OutputFiles &files,
                     const std::vector<HostArray> &outputs,
                     const GoldenOutputs &golden) {
  for (size_t j = 0; j < outputs.size() && j < options.outputs.size(); ++j)
    if (failed(files.stageAt(options.outputs[j], encodeNpy(outputs[j]))))
      return kExitUserError;
  if (!options.outputs.empty() && failed(files.commit()))
    return kExitUserError;
  return golden.check(outputs,
                      options.driver.verbosity == Verbosity::Quiet);
}

static bool symbolShapesFromInputs(const RunOptions &options,
                                   std::vector<std::vector<int64_t>> &shapes,
                                   std::vector<std::string> &sources,
                                   std::string &error);

int startRun(const RunOptions &options, DriverOptions driver,
             RunFrontend &run) {
  driver.symbolShapes = [&](std::vector<std::vector<int64_t>> &shapes,
                            std::vector<std::string> &sources,
                            std::string &error) {
    return symbolShapesFromInputs(options, shapes, sources, error);
  };
  driver.symbolValues = &run.symbolValues;
  if (failed(claimRunOutputs(options, run.files)))
    return kExitUserError;
  run.context = std::make_unique<MLIRContext>(makeDriverRegistry());
  configureDriverContext(*run.context);
  run.router = std::make_unique<DiagnosticRouter>(run.context.get());
  return runFrontend(driver, *run.context, *run.router, run.fe);
}

int checkRunArguments(const RunOptions &options,
                      const std::vector<launch::HostArrayType> &inputs,
                      const std::vector<launch::HostArrayType> &outputs,
                      int64_t numBounds, bool describe) {
  auto described = [&](const std::vector<launch::HostArrayType> &arrays) {
    return describe ? " (" + describeOperands(arrays) + ")" : std::string();
  };
  if (!options.randomSeed && options.inputs.size() != inputs.size()) {
    logError("error: the call takes " + std::to_string(inputs.size()) +
             " inputs" + described(inputs) + " but " +
             std::to_string(options.inputs.size()) +
             " --input files were given");
    return kExitUserError;
  }
  if (!options.outputs.empty() && options.outputs.size() != outputs.size()) {
    logError("error: the call has " + std::to_string(outputs.size()) +
             " outputs" + described(outputs) + " but " +
             std::to_string(options.outputs.size()) +
             " --output files were given");
    return kExitUserError;
  }
  if (static_cast<int64_t>(options.gridBounds.size()) != numBounds) {
    logError("error: the grid has " + std::to_string(numBounds) +
             " dynamic bounds but " +
             std::to_string(options.gridBounds.size()) +
             " --grid-bound values were given");
    return kExitUserError;
  }
  return kExitSuccess;
}

/// A spec with symbols runs at the sizes of its inputs: their .npy headers
/// give the symbols' values (docs/run.md#symbolic-shapes).
static bool symbolShapesFromInputs(const RunOptions &options,
                                   std::vector<std::vector<int64_t>> &shapes,
                                   std::vector<std::string> &sources,
                                   std::string &error) {
  if (options.randomSeed) {
    error = options.driver.specPath +
            ": error: the spec has symbolic shapes, whose sizes "
            "come from the --input files' shapes; --random-inputs "
            "cannot give them";
    return false;
  }
  for (const std::string &path : options.inputs) {
    if (path == "-") {
      error = "error: the spec has symbolic shapes, whose sizes come from "
              "the --input files' shapes; an input on stdin ('-') cannot "
              "give them";
      return false;
    }
    bool header = false;
    HostArray ignored;
    auto peek = [&](DType, const std::vector<int64_t> &shape, std::string &) {
      shapes.push_back(shape);
      header = true;
      return false; // the header is all it needs
    };
    std::string readError;
    if (!readNpy(path, ignored, readError, UINT64_MAX, peek) && !header) {
      error = readError;
      return false;
    }
    sources.push_back(path);
  }
  return true;
}

namespace {

/// Reads (or generates) the inputs, each checked against `want` on its
/// header before its data is read, within `maxBytes` in all; `inputBytes`
/// receives their total size. Returns an ExitCode.
int readCpuInputs(const RunOptions &options,
                  const std::vector<launch::HostArrayType> &wantInputs,
                  uint64_t maxBytes, std::vector<HostArray> &inputs,
                  uint64_t &inputBytes) {
  inputs.clear();
  inputs.resize(wantInputs.size());
  inputBytes = 0;
  std::string error;
  for (size_t i = 0; i < wantInputs.size(); ++i) {
    const launch::HostArrayType &want = wantInputs[i];
    if (options.randomSeed) {
      inputs[i] = HostArray(want.type, want.shape);
      uint64_t bytes = inputs[i].byteSize();
      if (__builtin_add_overflow(inputBytes, bytes, &inputBytes) ||
          inputBytes > maxBytes || !inputs[i].allocate()) {
        logError("error: cannot allocate input " + std::to_string(i) + " (" +
                 want.describe() + ") within the limit of " +
                 std::to_string(maxBytes) + " bytes");
        return kExitUserError;
      }
      fillRandomInput(inputs[i], *options.randomSeed, i);
      continue;
    }
    const std::string &path = options.inputs[i];
    auto check = [&](DType dtype, const std::vector<int64_t> &shape,
                     std::string &message) {
      if (!npyDTypeFits(dtype, want.type)) {
        message = path + ": error: input " + std::to_string(i) + " has dtype " +
                  dtypeName(dtype) + " but the call expects " +
                  dtypeName(want.type) + " (" + want.describe() + ")";
        return false;
      }
      if (shape != want.shape) {
        message = path + ": error: input " + std::to_string(i) +
                  " has shape " + shapeString(shape) +
                  " but the call expects " + shapeString(want.shape) + " (" +
                  want.describe() + ")";
        return false;
      }
      return true;
    };
    if (!readNpy(path, inputs[i], error, maxBytes - inputBytes, check)) {
      logError(error);
      return kExitUserError;
    }
    retagNpy(inputs[i], want.type);
    inputBytes += inputs[i].byteSize();
  }
  return kExitSuccess;
}

/// Output dtypes: an aliased output is its input; integer outputs take the
/// spec's signedness when the spec still describes them.
std::vector<DType>
cpuOutputDTypes(const spec::GridSpec &spec,
                const std::vector<launch::HostArrayType> &wantOutputs,
                const launch::HostCallPlan &plan,
                const std::vector<HostArray> &inputs) {
  std::vector<DType> outputDTypes;
  for (size_t j = 0; j < wantOutputs.size(); ++j) {
    DType d = wantOutputs[j].type;
    if (spec.outputs.size() == wantOutputs.size())
      if (std::optional<DType> s = parseDType(spec.outputs[j].dtype))
        if (npyDTypeFits(*s, d))
          d = *s;
    for (auto [in, out] : plan.aliases)
      if (out == static_cast<int64_t>(j))
        d = inputs[in].dtype;
    outputDTypes.push_back(d);
  }
  return outputDTypes;
}

/// The phases' times of `pallasc run --timing`.
struct CpuRunTimes {
  double frontMs = 0, runMs = 0, runCpuMs = 0, walkMs = 0, writeMs = 0;
};

void printRunTiming(const HostJitTimes &times, const CpuRunTimes &run) {
  // A cached object is linked without lowering or code generation.
  std::string compile =
      times.cached
          ? llvm::formatv("cached object {0:f1} ms", times.lookupMs).str()
          : llvm::formatv("{0}lowering {1:f1} ms, JIT {2:f1} ms",
                          times.usedCache
                              ? llvm::formatv("cache lookup {0:f1} ms, ",
                                              times.lookupMs)
                                    .str()
                              : std::string(),
                          times.lowerMs, times.jitMs)
                .str();
  llvm::errs() << llvm::format(
      "pallasc run: front end %.1f ms, %s, execution %.3f ms (cpu %.3f ms; "
      "grid walk %.3f ms), writing outputs %.1f ms\n",
      run.frontMs, compile.c_str(), run.runMs, run.runCpuMs, run.walkMs,
      run.writeMs);
}

} // namespace

int runOnCpu(const RunOptions &options) {
  const std::string &specPath = options.driver.specPath;
  Clock::time_point t0 = Clock::now();
  // A symbolic spec is compiled once (its module, hence its JIT cache key,
  // is the same at every size) and runs at the values the inputs give.
  RunFrontend setup;
  if (int rc = startRun(options, options.driver, setup))
    return rc;
  FrontendResult &fe = setup.fe;
  const std::map<std::string, int64_t> &symbolValues = setup.symbolValues;

  // A wrapper that is one call on its arguments runs on the grid executor
  // directly; anything else the transforms left in @main (vmap's batch
  // loop, reshapes, broadcasts, several calls) is compiled with the kernels
  // and launches each call (src/Runtime/HostProgram.h).
  bool hasCall = false;
  fe.module->walk([&](pallas::CallOp) { hasCall = true; });
  bool direct = !hasCall || isDirectCall(*fe.module);
  launch::HostCallPlan plan;
  launch::HostProgramPlan program;
  std::string error;
  if (direct ? !planLaunch(*fe.module, plan, error)
             : !prepareHostProgram(*fe.module, program, error)) {
    logError(specPath + ": error: " + error);
    return kExitUserError;
  }
  if (!plan.symbolic.empty()) {
    std::vector<int64_t> values;
    for (const launch::HostSymbol &s : plan.symbolic.symbols)
      values.push_back(symbolValues.at(s.name));
    if (!launch::instantiateSymbols(plan, values, error)) {
      logError(specPath + ": error: " + error);
      return kExitUserError;
    }
  }
  const std::vector<launch::HostArrayType> &wantInputs =
      direct ? plan.inputs : program.inputs;
  const std::vector<launch::HostArrayType> &wantOutputs =
      direct ? plan.outputs : program.outputs;
  int64_t numBounds =
      direct ? plan.numDynamicBounds() : program.numBoundValues();
  if (plan.eliminated) {
    if (!options.outputs.empty() || options.expect.any()) {
      logError(specPath +
               ": error: the call was eliminated by pallas-dce (none of its "
               "outputs is used), so there is no output to " +
               (options.outputs.empty() ? "compare; drop --expect"
                                        : "write; drop --output"));
      return kExitUserError;
    }
    spdlog::warn("{}: note: the call was eliminated by pallas-dce (none of "
                 "its outputs is used); nothing to run",
                 specPath);
    return kExitSuccess;
  }

  // Check the command line against the call before any heavy work.
  if (int rc = checkRunArguments(options, wantInputs, wantOutputs, numBounds,
                                 /*describe=*/true))
    return rc;
  uint64_t maxBytes = options.maxBytes ? options.maxBytes : physicalMemory();
  std::vector<HostArray> inputs;
  uint64_t inputBytes = 0;
  if (int rc = readCpuInputs(options, wantInputs, maxBytes, inputs,
                             inputBytes))
    return rc;
  std::vector<DType> outputDTypes =
      cpuOutputDTypes(fe.spec, wantOutputs, plan, inputs);
  // The golden files, read and checked before any heavy work.
  GoldenOutputs golden;
  if (options.expect.any() &&
      failed(golden.load(options.expect, wantOutputs, outputDTypes,
                         maxBytes - inputBytes)))
    return kExitUserError;
  CpuRunTimes runTimes;
  runTimes.frontMs = msSince(t0);

  // Compile, or link the object a run of the same module stored.
  JitOptions jitOptions;
  jitOptions.extraSymbols = {launcherSymbol()};
  HostJitTimes times;
  int rc = kExitSuccess;
  std::unique_ptr<JitModule> jit = compileForHost(
      options.driver, *fe.module, jitOptions, times, rc);
  if (!jit)
    return rc;
  // The JIT links lazily; look the kernel up now so linking is not counted
  // as run time.
  Clock::time_point t2 = Clock::now();
  if (!jit->lookupCInterface(direct ? plan.kernelName : "main", error)) {
    logError("error: " + error);
    return kExitInternalError;
  }
  (times.cached ? times.lookupMs : times.jitMs) += msSince(t2);

  // Run.
  ExecuteOptions exec;
  exec.dynamicBounds = options.gridBounds;
  exec.maxBytes = maxBytes;
  exec.gridWalkMs = &runTimes.walkMs;
  std::vector<HostArray> outputs;
  Clock::time_point t3 = Clock::now();
  double cpu3 = cpuMs();
  if (direct ? !executeGrid(plan, *jit, inputs, outputDTypes, outputs, exec,
                            error)
             : !runHostProgram(program, *jit, inputs, options.gridBounds,
                               outputDTypes, outputs, exec, error)) {
    logError(specPath + ": error: " + error);
    return kExitUserError;
  }
  std::fflush(stdout); // debug_print output before our messages
  runTimes.runMs = msSince(t3);
  runTimes.runCpuMs = cpuMs() - cpu3;

  // Outputs: all staged, then renamed together.
  Clock::time_point t4 = Clock::now();
  int outputsRc = commitRunOutputs(options, setup.files, outputs, golden);
  runTimes.writeMs = msSince(t4);
  if (options.timing)
    printRunTiming(times, runTimes);
  return outputsRc;
}

} // namespace pallasc
