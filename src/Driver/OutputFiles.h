//===- OutputFiles.h - Atomic, all-or-nothing output files ----*- C++ -*-===//
//
// Every output is first written in full into a staging directory of this
// invocation beside its final path (`DIR/.pallasc-stage-XXXXXX/`, a
// ScratchDir: removed on exit and on SIGINT/SIGTERM/SIGHUP, recognized and
// removed by a later run after a SIGKILL); commit() renames them all into
// place, in the order they were staged (the driver stages the manifest
// last). If a rename fails, the renames already done are undone (the
// previous files were kept as hard links), so a failed run leaves no
// partial output and never replaces an existing good artifact; if the
// process is killed during the renames, the artifacts already renamed are
// new while the manifest is still the old one, and the manifest's sha256
// values tell a reader that the commit was cut short (docs/cli.md,
// "Outputs").
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_DRIVER_OUTPUTFILES_H
#define PALLASC_SRC_DRIVER_OUTPUTFILES_H

#include "src/Support/Temporaries.h"

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace pallasc {

class OutputFiles {
public:
  /// Outputs go into `directory` (empty: the working directory, and the
  /// output paths are the bare file names).
  explicit OutputFiles(std::string directory) : directory(std::move(directory)) {}
  ~OutputFiles();

  /// Creates the output directory if needed; fails with a message if it is
  /// not a writable directory.
  llvm::LogicalResult prepare();
  /// Marks `path` as an input (`what`: "kernel", "grid spec", "input 0"):
  /// an output at the same file is then an error instead of replacing it.
  void protectInput(const std::string &path, std::string what);
  /// Checks that `path` can be an output, before any work is done: not
  /// empty, not a directory, not an input, not already an output of this
  /// run, in an existing directory. Fails with a message.
  llvm::LogicalResult claim(const std::string &path);
  /// Stages `contents` for `directory/name` (claiming the path).
  llvm::LogicalResult stage(const std::string &name, llvm::StringRef contents);
  /// Stages `contents` for a path given as is (e.g. a depfile), claimed
  /// before or now.
  llvm::LogicalResult stageAt(const std::string &path,
                              llvm::StringRef contents);
  /// Renames every staged file into place, all or none.
  llvm::LogicalResult commit();
  /// Final paths of the staged files (outputs only, not stageAt paths).
  const std::vector<std::string> &stagedPaths() const { return finalOutputs; }

private:
  struct Staged {
    std::string temp, final, backup; ///< backup: empty if none
  };
  struct Input {
    std::string path, what;
  };
  /// Writes `contents` into the staging directory of `path`.
  llvm::LogicalResult write(const std::string &path, llvm::StringRef contents);
  /// The staging directory beside `path`, made on first use.
  ScratchDir *stagingDirFor(const std::string &path);

  std::string directory;
  std::vector<Input> inputs;
  std::vector<std::string> claimed; ///< normalized final paths
  std::vector<Staged> staged;
  std::vector<std::string> finalOutputs;
  std::map<std::string, std::unique_ptr<ScratchDir>> stagingDirs;
};

/// Escapes a path for a Makefile rule (spaces, '#', '$').
std::string escapeMakePath(llvm::StringRef path);

} // namespace pallasc

#endif // PALLASC_SRC_DRIVER_OUTPUTFILES_H
