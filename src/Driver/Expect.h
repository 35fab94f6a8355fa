//===- Expect.h - pallasc run --expect: golden output files -----*- C++ -*-===//
//
// `pallasc run ... --expect OUT.npy` compares each output of the run with a
// golden .npy file, for kernel regression tests (docs/testing.md). A golden
// file names its output by position, as --output does:
//
//   --expect FILE        the next output, in order (one per output)
//   --expect J=FILE      output J (0-based), for checking some outputs only
//   --expect-dir DIR     DIR/output<J>.npy for every output J
//
// Every golden file is read, its dtype and shape checked against its output,
// before the kernel is compiled or run; after the run each output is
// compared (src/Runtime/Compare.h: floats within atol + rtol * |golden|,
// NaN positions equal, integers exact).
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_DRIVER_EXPECT_H
#define PALLASC_SRC_DRIVER_EXPECT_H

#include "src/Driver/Driver.h"
#include "src/Launch/HostGrid.h"
#include "src/Runtime/Npy.h"

#include "mlir/Support/LLVM.h"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace pallasc {

class OutputFiles;

/// Default tolerances of --expect (numpy.allclose's).
constexpr double kExpectDefaultRtol = 1e-5;
constexpr double kExpectDefaultAtol = 1e-8;

struct ExpectOptions {
  /// The --expect values, as given: FILE or J=FILE.
  std::vector<std::string> files;
  /// --expect-dir: DIR/output<J>.npy for every output J.
  std::string directory;
  double rtol = kExpectDefaultRtol, atol = kExpectDefaultAtol;

  bool any() const { return !files.empty() || !directory.empty(); }
};

/// Checks the --expect values' form before any work: all FILE or all J=FILE,
/// no output named twice, not with --expect-dir. Returns an empty string or
/// the problem (a usage error of --expect).
std::string checkExpectSyntax(const ExpectOptions &options);

/// One golden file: the output it is for, where it is.
struct ExpectFile {
  size_t output;
  std::string path;
};

/// The golden files as far as the command line says without the call
/// (J=FILE and --expect FILE in order; --expect-dir for `numOutputs`
/// outputs), for protecting them from --output before any work.
std::vector<ExpectFile> expectFilesForCommandLine(const ExpectOptions &options,
                                                  size_t numOutputs);

/// The golden arrays of one run.
class GoldenOutputs {
public:
  /// Matches the golden files to the call's outputs and reads them, each
  /// checked on its header against its output's dtype (an integer may have
  /// the other signedness) and shape. Fails after printing an error.
  llvm::LogicalResult load(const ExpectOptions &options,
                           const std::vector<launch::HostArrayType> &outputs,
                           const std::vector<runtime::DType> &outputDTypes,
                           uint64_t maxBytes);

  /// Compares the run's outputs with the golden arrays: one line each on
  /// stderr (a match unless `quiet`; a mismatch always, as an error naming
  /// the golden file). Returns kExitSuccess or kExitUserError.
  int check(const std::vector<runtime::HostArray> &outputs, bool quiet) const;

  bool empty() const { return golden.empty(); }

private:
  struct Golden {
    ExpectFile file;
    runtime::HostArray array;
  };
  std::vector<Golden> golden;
  double rtol = kExpectDefaultRtol, atol = kExpectDefaultAtol;
};

} // namespace pallasc

#endif // PALLASC_SRC_DRIVER_EXPECT_H
