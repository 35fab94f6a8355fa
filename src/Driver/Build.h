//===- Build.h - `pallasc build`: many compiles in one process -*- C++ -*-===//
//
// A batch build runs compile jobs (each the compile one `pallasc` invocation
// makes, with its own MLIRContext, multithreading disabled inside it) on a
// pool of worker threads. Jobs share the process's one-time set-up (LLVM's
// targets, the pass registry, the loaded libraries), the compile cache and
// the tool temporary directory; ptxas and ld.lld run as processes, so they
// run in parallel with each other and with the other jobs' code generation.
//
// Each job writes exactly the bytes the invocation would write, through the
// same staging and atomic commit; no two jobs may write the same file
// (checkBuildOutputs), so what lands on disk is independent of the number
// of threads and of the order the jobs finish in.
//
// What a job logs (errors, warnings) is captured on its thread and printed
// as one block when it ends, under a `FAILED: <job>` line when it failed;
// the other jobs run on. Progress: on a terminal (stdout) a status line
// `[finished/total] <job>` redrawn in place, otherwise one such line per
// finished job.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_DRIVER_BUILD_H
#define PALLASC_SRC_DRIVER_BUILD_H

#include "src/Driver/Driver.h"

#include <string>
#include <vector>

namespace pallasc {

struct BuildListEntry;

/// Reads and checks the build list at `path` (src/Driver/BuildList.h),
/// reporting what is wrong with it (`list.json: error: [2].targets: ...`).
/// Returns an ExitCode.
int readBuildList(const std::string &path,
                  std::vector<BuildListEntry> &entries);

/// One compile of a batch build.
struct BuildJob {
  /// What the progress line and the failure header call the job:
  /// "matmul cuda:sm_90a".
  std::string label;
  /// Where the job was given, for messages: the build list ("" for a
  /// --kernel job) and the entry in it ("[2]", or "--kernel k.mlir").
  std::string file, entry;
  /// "list.json: [2]", "--kernel k.mlir".
  std::string origin() const {
    return file.empty() ? entry : file + ": " + entry;
  }
  DriverOptions options;
};

struct BuildSettings {
  /// Worker threads (1: the jobs run one after another, in order).
  unsigned threads = 1;
  Verbosity verbosity = Verbosity::Normal;
  /// --timing: each job's step tree (printed with the job's lines), then a
  /// table of the jobs' wall times against the build's.
  bool timing = false;
  /// Resolved (resolveCacheSettings); an empty directory: no cache.
  CacheSettings cache;
};

/// The label of a job: its artifact name (--name, else the spec's "name" or
/// "kernel", else the spec file's stem) and its targets.
std::string buildJobLabel(const DriverOptions &options);

/// Fails (kExitUserError, after an error naming both jobs) when two jobs
/// would write the same manifest (same output directory, same name): their
/// outputs would depend on which finished last.
int checkBuildOutputs(const std::vector<BuildJob> &jobs);

/// The worker threads a build uses: `requested`, else (0) the hardware's
/// concurrency; never more than the jobs nor kMaxBuildThreads.
unsigned buildThreadCount(unsigned requested, size_t jobs);
constexpr unsigned kMaxBuildThreads = 128;

/// Runs every job; returns kExitSuccess when all succeeded, kExitUserError
/// when any failed (kExitInternalError when one failed with an internal
/// error).
int runBuild(std::vector<BuildJob> jobs, const BuildSettings &settings);

} // namespace pallasc

#endif // PALLASC_SRC_DRIVER_BUILD_H
