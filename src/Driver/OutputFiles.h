//===- OutputFiles.h - Atomic, all-or-nothing output files ----*- C++ -*-===//
//
// Every output is first written to a temporary file next to its final path;
// commit() renames them all. If anything fails (or commit() is never reached)
// the temporaries are removed, so a failed run leaves no partial output and
// never replaces an existing good artifact.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_DRIVER_OUTPUTFILES_H
#define PALLASC_SRC_DRIVER_OUTPUTFILES_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

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
  /// Marks `path` as an input of the compilation (`what`: "kernel", "grid
  /// spec"): staging an output at the same file is then an error instead of
  /// replacing the input.
  void protectInput(const std::string &path, std::string what);
  /// Stages `contents` for `directory/name`.
  llvm::LogicalResult stage(const std::string &name, llvm::StringRef contents);
  /// Stages `contents` for a path given as is (e.g. a depfile).
  llvm::LogicalResult stageAt(const std::string &path,
                              llvm::StringRef contents);
  /// Renames every staged file into place.
  llvm::LogicalResult commit();
  /// Final paths of the staged files (outputs only, not stageAt paths).
  const std::vector<std::string> &stagedPaths() const { return finalOutputs; }

private:
  struct Staged {
    std::string temp, final;
  };
  struct Input {
    std::string path, what;
  };
  std::string directory;
  std::vector<Input> inputs;
  std::vector<Staged> staged;
  std::vector<std::string> finalOutputs;
  bool committed = false;
};

/// Escapes a path for a Makefile rule (spaces, '#', '$').
std::string escapeMakePath(llvm::StringRef path);

} // namespace pallasc

#endif // PALLASC_SRC_DRIVER_OUTPUTFILES_H
