//===- BuildTest.cpp - pallasc build: the list and the workers -*- C++ -*-===//
//
// The build list parser resolves paths against the list's directory and
// reports each bad entry by its JSON path; runBuild on several threads
// writes, for every job, the bytes runCompile writes for it alone, and a
// failing job fails the build without stopping the others.
//
//===----------------------------------------------------------------------===//

#include "src/Driver/Build.h"
#include "src/Driver/BuildList.h"
#include "src/Driver/Diagnostics.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

using namespace pallasc;

namespace {

/// Every regular file under `dir`, by path relative to it.
std::map<std::string, std::string> treeOf(const std::string &dir) {
  std::map<std::string, std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(dir, ec), end;
       it != end && !ec; it.increment(ec)) {
    if (llvm::sys::fs::is_directory(it->path()))
      continue;
    auto buffer = llvm::MemoryBuffer::getFile(it->path());
    REQUIRE(buffer);
    files[it->path().substr(dir.size())] = (*buffer)->getBuffer().str();
  }
  REQUIRE(!ec);
  return files;
}

std::string tempDir() {
  llvm::SmallString<128> dir;
  REQUIRE(!llvm::sys::fs::createUniqueDirectory("pallasc-build-test", dir));
  return std::string(dir);
}

} // namespace

TEST_CASE("build list: paths, optional keys", "[build]") {
  std::vector<BuildListEntry> entries;
  std::vector<spec::SpecError> errors;
  REQUIRE(parseBuildList(
      R"([{"kernel": "k.mlir", "spec": "/abs/s.json", "targets": ["tpu"]},
          {"kernel": "a/k.mlir", "spec": "s.json", "name": "n",
           "out_dir": "out", "emit": [], "flags": ["-O3", "--jvp"],
           "transforms": [{"vmap": {"in_axes": [1, null], "axis_size": 8}},
                          {"vmap": {"in_axes": [0, 0], "axis_size": "2*b"}},
                          {"dce": {"used_outputs": [true, false]}},
                          {"discharge_state": {}}, {"hi_to_lo": {}}]}])",
      "lists", entries, errors));
  REQUIRE(errors.empty());
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].path == "[0]");
  CHECK(entries[0].kernel == "lists/k.mlir");
  CHECK(entries[0].spec == "/abs/s.json");
  CHECK(entries[0].hasTargets);
  CHECK(entries[0].targets == std::vector<std::string>{"tpu"});
  CHECK(!entries[0].hasEmit);
  CHECK(entries[0].outDir.empty());
  CHECK(entries[1].kernel == "lists/a/k.mlir");
  CHECK(!entries[1].hasTargets);
  CHECK(entries[1].hasEmit);
  CHECK(entries[1].emit.empty());
  CHECK(entries[1].name == "n");
  CHECK(entries[1].outDir == "lists/out");
  CHECK(entries[1].flags == std::vector<std::string>{"-O3", "--jvp"});
  CHECK(entries[1].transformFlags ==
        std::vector<std::string>{"--vmap=1,none:8", "--vmap=0,0:2*b",
                                 "--used-outputs=1,0",
                                 "--discharge-state", "--hi-to-lo"});
  CHECK(entries[0].transformFlags.empty());
}

TEST_CASE("build list: errors by JSON path, bounded", "[build]") {
  std::vector<BuildListEntry> entries;
  std::vector<spec::SpecError> errors;
  // 100 bad entries: the errors stop after the first 20 or so.
  std::string text = "[";
  for (int i = 0; i < 100; ++i)
    text += std::string(i ? "," : "") + R"({"kernel": 1, "spec": "s"})";
  text += "]";
  CHECK(!parseBuildList(text, "", entries, errors));
  CHECK(errors.size() >= 20);
  CHECK(errors.size() < 30);
  CHECK(errors[0].path == "[0].kernel");
  CHECK(errors[1].path == "[1].kernel");
  CHECK(entries.empty());

  errors.clear();
  CHECK(!parseBuildList("[{\"kernel\": \"k\",\n \"spec\": }]", "", entries,
                        errors));
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].line == 2);
  CHECK(errors[0].column == 10);
}

TEST_CASE("thread count", "[build]") {
  CHECK(buildThreadCount(1, 10) == 1);
  CHECK(buildThreadCount(4, 2) == 2);
  CHECK(buildThreadCount(1000, 1000) == kMaxBuildThreads);
  CHECK(buildThreadCount(0, 1000) >= 1);
  CHECK(buildThreadCount(3, 0) == 1);
}

TEST_CASE("runBuild on threads writes what runCompile writes", "[build]") {
  setupLogging(Verbosity::Quiet);
  // Not ptxas: the PTX alone (set before any thread starts).
  const char *oldPtxas = std::getenv("PTXAS");
  std::string savedPtxas = oldPtxas ? oldPtxas : "";
  setenv("PTXAS", "none", 1);
  std::string examples = PALLASC_EXAMPLES_DIR;
  std::string root = tempDir();
  // 3 examples x 2 targets, each job into a directory of its own.
  std::vector<BuildJob> jobs;
  for (const char *example : {"add", "softmax", "matmul"})
    for (const std::vector<std::string> &targets :
         {std::vector<std::string>{"cpu"},
          std::vector<std::string>{"cuda:sm_80"}}) {
      BuildJob job;
      job.entry = example;
      job.options.kernelPath = examples + "/" + example + "/kernel.mlir";
      job.options.specPath = examples + "/" + example + "/spec.json";
      job.options.targets = targets;
      job.options.emit = {"mlir"};
      job.options.outputDir = root + "/batch/" + std::to_string(jobs.size());
      job.label = buildJobLabel(job.options);
      jobs.push_back(job);
    }
  REQUIRE(checkBuildOutputs(jobs) == kExitSuccess);
  for (BuildJob job : jobs) {
    job.options.outputDir.replace(root.size(), 6, "/alone");
    REQUIRE(runCompile(job.options) == kExitSuccess);
  }
  BuildSettings settings;
  settings.threads = 4;
  settings.verbosity = Verbosity::Quiet;
  REQUIRE(runBuild(jobs, settings) == kExitSuccess);
  auto alone = treeOf(root + "/alone"), batch = treeOf(root + "/batch");
  // Per job the manifest, the IR and the artifact; cuda also its GPU IR.
  CHECK(alone.size() == 6 * 3 + 3);
  CHECK(alone == batch);

  // A job that fails (a kernel that does not exist) fails the build; the
  // others are still written.
  jobs[3].options.kernelPath = root + "/missing.mlir";
  llvm::sys::fs::remove_directories(root + "/batch");
  CHECK(runBuild(jobs, settings) == kExitUserError);
  auto partial = treeOf(root + "/batch");
  for (auto &[path, bytes] : alone) {
    bool ofFailed = llvm::StringRef(path).starts_with("/3/");
    CHECK(partial.count(path) == (ofFailed ? 0u : 1u));
  }
  llvm::sys::fs::remove_directories(root);
  if (oldPtxas)
    setenv("PTXAS", savedPtxas.c_str(), 1);
  else
    unsetenv("PTXAS");
}
