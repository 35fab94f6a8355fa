//===- Build.cpp - `pallasc build`: many compiles in one process ---------===//

#include "src/Driver/Build.h"

#include "src/Driver/BuildList.h"
#include "src/Driver/Cache.h"
#include "src/Driver/Console.h"
#include "src/Driver/Diagnostics.h"
#include "src/InitAll.h"
#include "src/Support/BoundedRead.h"
#include "src/Support/InputChecks.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Config/Targets.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/thread.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

namespace pallasc {

namespace {

/// The artifact name a compile with `options` writes its files under, or ""
/// when the spec cannot tell (the compile will report why).
std::string artifactName(const DriverOptions &options) {
  if (!options.name.empty())
    return options.name;
  return peekSpecName(options.specPath);
}

/// `dir` absolute and without `.`/`..`, to compare output directories.
std::string normalizedDirectory(const std::string &dir) {
  llvm::SmallString<256> path(dir.empty() ? "." : dir);
  llvm::sys::fs::make_absolute(path);
  llvm::sys::path::remove_dots(path, /*remove_dot_dot=*/true);
  return std::string(path);
}

/// Registers the LLVM targets the jobs generate code for (NVPTX, AMDGPU,
/// the host), once, before any worker starts: each lowering registers its
/// own on first use (MLIR's serializers and the host JIT under separate
/// once-flags), and two threads registering different targets at once would
/// race on LLVM's target registry, a plain linked list.
void initializeCodegenTargets() {
#if LLVM_HAS_NVPTX_TARGET
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();
#endif
#if LLVM_HAS_AMDGPU_TARGET
  LLVMInitializeAMDGPUTargetInfo();
  LLVMInitializeAMDGPUTarget();
  LLVMInitializeAMDGPUTargetMC();
  LLVMInitializeAMDGPUAsmPrinter();
  LLVMInitializeAMDGPUAsmParser();
#endif
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::InitializeNativeTargetAsmParser();
}

/// Worker threads get a stack of their own size, not the platform's default
/// for threads (which can be smaller than the main thread's): parsing and
/// the passes recurse as deep as in a single compile.
constexpr unsigned kWorkerStackBytes = 16u << 20;

/// `pallasc build --timing`'s closing table: the build's wall time, the sum
/// of the jobs' and each job's, slowest first (ties in job order), in the
/// layout of MLIR's timing report.
std::string jobTimeReport(const std::vector<BuildJob> &jobs,
                          const std::vector<double> &seconds,
                          const std::vector<int> &exitCodes, double wall,
                          unsigned threads) {
  double sum = 0;
  for (double s : seconds)
    sum += s;
  std::vector<size_t> order(jobs.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return seconds[a] > seconds[b];
  });
  auto format = [](const char *fmt, auto... args) {
    char buffer[128];
    std::snprintf(buffer, sizeof buffer, fmt, args...);
    return std::string(buffer);
  };
  std::string rule(79, '-');
  rule = "===" + rule.substr(6) + "===\n";
  std::string out = rule;
  out += "                          pallasc build: job times\n";
  out += rule;
  out += format("  Total Wall Time: %.4f seconds, %zu job%s on %u thread%s\n",
                wall, jobs.size(), jobs.size() == 1 ? "" : "s", threads,
                threads == 1 ? "" : "s");
  out += format("  Sum of the jobs: %.4f seconds (%.2fx the wall time)\n\n",
                sum, wall > 0 ? sum / wall : 0.0);
  out += "  ----Wall Time----  ----Job----\n";
  for (size_t i : order) {
    double share = sum > 0 ? 100.0 * seconds[i] / sum : 0.0;
    out += format("  %8.4f (%5.1f%%)  ", seconds[i], share) + jobs[i].label;
    if (exitCodes[i] != kExitSuccess)
      out += " (failed)";
    out += "\n";
  }
  return out;
}

} // namespace

int readBuildList(const std::string &path,
                  std::vector<BuildListEntry> &entries) {
  constexpr uint64_t kMaxListBytes = 16ull << 20;
  std::string text, error;
  std::optional<uint64_t> size;
  switch (readBoundedInput(path, kMaxListBytes, text, size, error)) {
  case ReadResult::Ok:
    break;
  case ReadResult::CannotRead:
    logError(path + ": error: cannot read the build list: " + error);
    return kExitUserError;
  case ReadResult::TooLarge:
    logError(path + ": error: the build list is over the limit of " +
             std::to_string(kMaxListBytes) + " bytes");
    return kExitUserError;
  }
  // Binary input and pathological nesting, before the JSON parser.
  std::string message;
  if (!checkInputText(text, message)) {
    logError(path + ":" + message.substr(0, message.find(": ")) +
             ": error: the build list " +
             message.substr(message.find(": ") + 2));
    return kExitUserError;
  }
  std::vector<spec::SpecError> errors;
  std::string base = llvm::sys::path::parent_path(path).str();
  if (!parseBuildList(text, base, entries, errors)) {
    reportSpecErrors(path, errors);
    return kExitUserError;
  }
  return kExitSuccess;
}

std::string buildJobLabel(const DriverOptions &options) {
  std::string name = artifactName(options);
  if (name.empty())
    name = llvm::sys::path::stem(options.specPath).str();
  std::string label = name;
  for (const std::string &t : options.targets)
    label += " " + t;
  return label;
}

int checkBuildOutputs(const std::vector<BuildJob> &jobs) {
  std::map<std::string, size_t> writers; // manifest path -> job
  for (size_t i = 0; i < jobs.size(); ++i) {
    const DriverOptions &o = jobs[i].options;
    std::string name = artifactName(o);
    if (name.empty())
      continue;
    llvm::SmallString<256> manifest(normalizedDirectory(o.outputDir));
    llvm::sys::path::append(manifest, name + ".manifest.json");
    auto [it, inserted] = writers.emplace(std::string(manifest), i);
    if (inserted)
      continue;
    const BuildJob &first = jobs[it->second];
    logError((jobs[i].file.empty() ? "" : jobs[i].file + ": ") +
             "error: " + jobs[i].entry + ": this job and " +
             (first.file == jobs[i].file ? first.entry : first.origin()) +
             " both write '" + name + "' into the same directory (" +
             o.outputDir +
             "): give one of them another \"name\" or \"out_dir\"");
    return kExitUserError;
  }
  return kExitSuccess;
}

unsigned buildThreadCount(unsigned requested, size_t jobs) {
  unsigned n = requested ? requested : std::thread::hardware_concurrency();
  n = std::max(1u, std::min(n, kMaxBuildThreads));
  return static_cast<unsigned>(std::max<size_t>(1, std::min<size_t>(n, jobs)));
}

int runBuild(std::vector<BuildJob> jobs, const BuildSettings &settings) {
  if (jobs.empty())
    return kExitSuccess;
  // Shared by every job (the cache is safe for concurrent threads and
  // processes); one that cannot be opened was warned about: the jobs run
  // without it.
  std::unique_ptr<CompileCache> cache;
  if (!settings.cache.directory.empty())
    cache = CompileCache::open(settings.cache);
  for (BuildJob &job : jobs) {
    job.options.cache = settings.cache;
    job.options.timing = settings.timing;
  }
  // The process-wide registries are filled once, before any worker starts.
  registerAllPasses();
  initializeCodegenTargets();

  const size_t total = jobs.size();
  const bool progress = settings.verbosity != Verbosity::Quiet;
  const bool statusLine = progress && console::isSmartTerminal();
  std::atomic<size_t> next{0};
  std::mutex doneMutex; // guards `finished` and `worst`, orders the reports
  size_t finished = 0;
  int worst = kExitSuccess;
  using Clock = std::chrono::steady_clock;
  auto seconds = [](Clock::duration d) {
    return std::chrono::duration<double>(d).count();
  };
  const Clock::time_point buildStart = Clock::now();
  std::vector<double> jobSeconds(total, 0.0); // --timing
  std::vector<int> jobExitCodes(total, kExitSuccess);
  auto counter = [&](size_t done) {
    return "[" + std::to_string(done) + "/" + std::to_string(total) + "] ";
  };

  auto work = [&] {
    for (;;) {
      size_t i = next.fetch_add(1);
      if (i >= total)
        return;
      const BuildJob &job = jobs[i];
      if (statusLine) {
        std::lock_guard<std::mutex> lock(doneMutex);
        console::setStatus(counter(finished) + job.label);
      }
      int rc;
      std::string log, timingReport;
      Clock::time_point start = Clock::now();
      {
        console::LogCapture capture;
        rc = runCompile(job.options, cache.get(), job.label, &timingReport);
        log = capture.take();
      }
      jobSeconds[i] = seconds(Clock::now() - start);
      jobExitCodes[i] = rc;
      if (!timingReport.empty())
        log += "timing: " + job.label + "\n" + timingReport;
      std::lock_guard<std::mutex> lock(doneMutex);
      ++finished;
      std::string line = counter(finished) + job.label;
      if (statusLine)
        console::setStatus(line);
      else if (progress)
        console::printLine(line);
      if (rc != kExitSuccess) {
        log = "FAILED: " + job.label + " (" + job.origin() + ")\n" + log;
        worst = rc == kExitInternalError || worst == kExitInternalError
                    ? kExitInternalError
                    : kExitUserError;
      }
      console::write(log);
    }
  };

  unsigned threads = buildThreadCount(settings.threads, total);
  if (threads == 1) {
    work();
  } else {
    std::vector<llvm::thread> workers;
    workers.reserve(threads);
    for (unsigned t = 0; t < threads; ++t)
      workers.emplace_back(std::optional<unsigned>(kWorkerStackBytes), work);
    for (llvm::thread &w : workers)
      w.join();
  }
  if (statusLine)
    console::finishStatus();
  if (settings.timing)
    console::write(jobTimeReport(jobs, jobSeconds, jobExitCodes,
                                 seconds(Clock::now() - buildStart), threads));
  return worst;
}

} // namespace pallasc
