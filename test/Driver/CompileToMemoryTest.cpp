//===- CompileToMemoryTest.cpp - The in-memory compile is the driver's -*- C++ -*-===//
//
// compileToMemory (what the pipeline fuzzer runs) and runCompile (what
// pallasc runs) share the front half and emitArtifacts: for the same inputs
// and options they must give the same files, byte for byte, and a bad input
// must give exit code 1 and no files.
//
//===----------------------------------------------------------------------===//

#include "src/Driver/Driver.h"
#include "src/Driver/Frontend.h"
#include "passes/Pipelines/RocmPipeline.h"
#include "chips/GpuTarget.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace pallasc;

namespace {

std::string readFile(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  REQUIRE(buffer);
  return (*buffer)->getBuffer().str();
}

/// Every regular file in `dir`, by name.
std::map<std::string, std::string> filesIn(const std::string &dir) {
  std::map<std::string, std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    files[llvm::sys::path::filename(it->path()).str()] = readFile(it->path());
  REQUIRE(!ec);
  return files;
}

/// Sets an environment variable while alive.
struct ScopedEnv {
  ScopedEnv(const char *name, const char *value) : name(name) {
    if (const char *old = std::getenv(name))
      previous = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (previous)
      setenv(name, previous->c_str(), 1);
    else
      unsetenv(name);
  }
  const char *name;
  std::optional<std::string> previous;
};

} // namespace

TEST_CASE("everyTarget covers every code path of the GPU target table",
          "[driver]") {
  const std::vector<std::string> &targets = everyTarget();
  CHECK(targets.front() == "cpu");
  CHECK(targets.back() == "tpu");
  std::vector<const GpuTarget *> gpus;
  for (const std::string &t : targets)
    if (t != "cpu" && t != "tpu") {
      const GpuTarget *gpu = lookupGpuTarget(t);
      REQUIRE(gpu != nullptr);
      gpus.push_back(gpu);
    }
  auto covered = [&](auto pred) {
    return std::any_of(gpus.begin(), gpus.end(),
                       [&](const GpuTarget *g) { return pred(*g); });
  };
  // Every feature and instruction family some chip of the table has is
  // exercised by at least one listed chip, and so is its absence.
  for (const GpuTarget &chip : allGpuTargets()) {
    INFO(chip.targetName());
    for (MatrixInstrKind kind :
         {MatrixInstrKind::MmaSync, MatrixInstrKind::Wgmma,
          MatrixInstrKind::Mfma, MatrixInstrKind::Wmma})
      if (chip.hasMatrixInstr(kind))
        CHECK(covered([&](const GpuTarget &g) {
          return g.vendor == chip.vendor && g.hasMatrixInstr(kind);
        }));
    CHECK(covered([&](const GpuTarget &g) {
      return g.vendor == chip.vendor && g.matrixInstrs.empty() ==
                                            chip.matrixInstrs.empty();
    }));
    CHECK(covered([&](const GpuTarget &g) {
      return g.vendor == chip.vendor && g.hasTma == chip.hasTma &&
             g.hasCpAsync == chip.hasCpAsync &&
             g.lanesPerWarp == chip.lanesPerWarp;
    }));
  }
  // One chip per code path: no two listed chips are interchangeable.
  CHECK(gpus.size() < allGpuTargets().size);
}

TEST_CASE("compileToMemory gives the bytes runCompile writes", "[driver]") {
  ScopedEnv noPtxas("PTXAS", "none");
  std::string example = GENERATE("add", "matmul", "layernorm");
  std::string dir = std::string(PALLASC_EXAMPLES_DIR) + "/" + example;
  DriverOptions options;
  options.kernelPath = dir + "/kernel.mlir";
  options.specPath = dir + "/spec.json";
  options.emit = {"mlir"};
  // The AMD targets link ROCm's device libraries (scripts/setup.sh installs
  // them); without them layernorm's rsqrt cannot be compiled for rocm.
  bool rocmLibs = !mlir::pallas::defaultRocmDeviceLibsRoot().empty();
  for (const std::string &t : everyTarget())
    if (rocmLibs || !llvm::StringRef(t).starts_with("rocm:"))
      options.targets.push_back(t);
  if (!rocmLibs)
    WARN("no ROCm device libraries (rocm-device-libs): rocm targets skipped");

  llvm::SmallString<128> out;
  REQUIRE(!llvm::sys::fs::createUniqueDirectory("pallasc-memtest", out));
  options.outputDir = std::string(out);
  setupLogging(Verbosity::Quiet);
  REQUIRE(runCompile(options) == kExitSuccess);
  std::map<std::string, std::string> written = filesIn(options.outputDir);
  llvm::sys::fs::remove_directories(out);

  std::vector<CompiledFile> files;
  REQUIRE(compileToMemory(options, readFile(options.kernelPath),
                          readFile(options.specPath), files) == kExitSuccess);
  std::map<std::string, std::string> inMemory;
  for (const CompiledFile &f : files)
    inMemory[f.name] = f.contents;
  CHECK(llvm::StringRef(files.back().name).ends_with(".manifest.json"));
  // One file per target at least, plus the .mlir and the manifest.
  CHECK(files.size() >= options.targets.size() + 2);
  CHECK(inMemory.size() == files.size());
  CHECK(inMemory == written);
}

TEST_CASE("compileToMemory fails with exit code 1 and no files on a bad spec",
          "[driver]") {
  std::string dir = std::string(PALLASC_EXAMPLES_DIR) + "/add";
  DriverOptions options;
  options.kernelPath = dir + "/kernel.mlir";
  options.specPath = "bad.json";
  options.targets = {"cpu"};
  setupLogging(Verbosity::Quiet);
  std::vector<CompiledFile> files;
  CHECK(compileToMemory(options, readFile(options.kernelPath), "{\"grid\": 1",
                        files) == kExitUserError);
  CHECK(files.empty());
}
