//===- Expect.cpp - pallasc run --expect: golden output files ---*- C++ -*-===//

#include "src/Driver/Expect.h"

#include "src/Driver/Console.h"
#include "src/Driver/Diagnostics.h"
#include "src/Launch/ElementType.h"
#include "src/Runtime/Compare.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <charconv>
#include <cstdio>
#include <set>

using namespace pallasc::runtime;

namespace pallasc {

namespace {

/// An --expect value split into its output index and path; the index is
/// empty for the plain FILE form. J=FILE is recognized by its leading
/// decimal digits and '=' (a file whose name looks like that is given as
/// ./NAME).
struct ExpectValue {
  std::optional<size_t> output;
  std::string path;
  bool indexTooLarge = false;
};

ExpectValue splitExpectValue(const std::string &value) {
  size_t digits = 0;
  while (digits < value.size() && value[digits] >= '0' && value[digits] <= '9')
    ++digits;
  if (digits == 0 || digits == value.size() || value[digits] != '=')
    return {std::nullopt, value};
  ExpectValue v;
  v.path = value.substr(digits + 1);
  size_t index = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + digits, index);
  (void)ptr;
  v.indexTooLarge = ec != std::errc();
  v.output = index;
  return v;
}

/// printf into a string (numbers as the C library prints them).
std::string formatString(const char *format, double a, double b) {
  char buf[128];
  std::snprintf(buf, sizeof(buf), format, a, b);
  return buf;
}

} // namespace

std::string checkExpectSyntax(const ExpectOptions &options) {
  if (!options.files.empty() && !options.directory.empty())
    return "it excludes --expect-dir: give one golden file per output, or "
           "the directory holding output<J>.npy";
  size_t indexed = 0;
  std::set<size_t> seen;
  for (const std::string &value : options.files) {
    ExpectValue v = splitExpectValue(value);
    if (v.path.empty())
      return "'" + value + "': the golden file's path is empty";
    if (v.path == "-")
      return "'" + value + "': a golden file is a file (standard input is "
             "for --input)";
    if (!v.output)
      continue;
    ++indexed;
    if (v.indexTooLarge)
      return "'" + value + "': the output index is out of range";
    if (!seen.insert(*v.output).second)
      return "'" + value + "': output " + std::to_string(*v.output) +
             " has two golden files";
  }
  if (indexed != 0 && indexed != options.files.size())
    return "give every golden file as FILE (one per output, in order) or "
           "every one as J=FILE (output J), not both";
  return "";
}

std::vector<ExpectFile> expectFilesForCommandLine(const ExpectOptions &options,
                                                  size_t numOutputs) {
  std::vector<ExpectFile> files;
  if (!options.directory.empty()) {
    for (size_t j = 0; j < numOutputs; ++j) {
      llvm::SmallString<256> path(options.directory);
      llvm::sys::path::append(path, "output" + std::to_string(j) + ".npy");
      files.push_back({j, std::string(path)});
    }
    return files;
  }
  for (size_t i = 0; i < options.files.size(); ++i) {
    ExpectValue v = splitExpectValue(options.files[i]);
    files.push_back({v.output.value_or(i), v.path});
  }
  return files;
}

llvm::LogicalResult
GoldenOutputs::load(const ExpectOptions &options,
                    const std::vector<launch::HostArrayType> &outputs,
                    const std::vector<DType> &outputDTypes,
                    uint64_t maxBytes) {
  rtol = options.rtol;
  atol = options.atol;
  std::string count = std::to_string(outputs.size()) + " output" +
                      (outputs.size() == 1 ? "" : "s");
  std::vector<ExpectFile> files =
      expectFilesForCommandLine(options, outputs.size());
  bool indexed = !options.files.empty() &&
                 splitExpectValue(options.files.front()).output.has_value();
  if (options.directory.empty() && !indexed &&
      files.size() != outputs.size()) {
    std::string described;
    for (size_t j = 0; j < outputs.size(); ++j)
      described += (j ? ", " : "") + outputs[j].describe();
    logError("error: the call has " + count + " (" + described + ") but " +
             std::to_string(files.size()) +
             " --expect files were given; give one per output, in order, or "
             "name the output checked: --expect J=FILE");
    return llvm::failure();
  }
  uint64_t used = 0;
  for (const ExpectFile &file : files) {
    if (file.output >= outputs.size()) {
      logError("error: --expect " + std::to_string(file.output) + "=" +
               file.path + ": the call has " + count +
               (outputs.empty()
                    ? std::string()
                    : " (0 to " + std::to_string(outputs.size() - 1) + ")"));
      return llvm::failure();
    }
    // A missing file is the common mistake (a golden file not generated
    // yet): say so, and how to make it.
    if (!llvm::sys::fs::exists(file.path)) {
      logError(file.path + ": error: the golden file of output " +
               std::to_string(file.output) +
               " does not exist (write it with `pallasc run ... --output " +
               file.path + "` from a run you trust, or from NumPy)");
      return llvm::failure();
    }
    DType wantType = outputDTypes[file.output];
    const std::vector<int64_t> &wantShape = outputs[file.output].shape;
    std::string wanted = HostArray(wantType, wantShape).describe();
    auto check = [&](DType dtype, const std::vector<int64_t> &shape,
                     std::string &message) {
      if (!npyDTypeFits(dtype, wantType)) {
        message = file.path + ": error: the golden file of output " +
                  std::to_string(file.output) + " has dtype " +
                  dtypeName(dtype) + " but the output is " + wanted;
        return false;
      }
      if (shape != wantShape) {
        message = file.path + ": error: the golden file of output " +
                  std::to_string(file.output) + " has shape " +
                  launch::formatShape(shape) + " but the output is " + wanted;
        return false;
      }
      return true;
    };
    Golden g{file, HostArray()};
    std::string error;
    if (!readNpy(file.path, g.array, error, maxBytes - used, check)) {
      logError(error);
      return llvm::failure();
    }
    retagNpy(g.array, wantType);
    used += g.array.byteSize();
    golden.push_back(std::move(g));
  }
  return llvm::success();
}

int GoldenOutputs::check(const std::vector<HostArray> &outputs,
                         bool quiet) const {
  size_t differing = 0;
  for (const Golden &g : golden) {
    const HostArray &got = outputs[g.file.output];
    ArrayComparison c = compareArrays(got, g.array, rtol, atol);
    std::string what = "output " + std::to_string(g.file.output) + " (" +
                       got.describe() + ")";
    std::string errors = formatString("max abs err %.3g, max rel err %.3g",
                                      c.maxAbsError, c.maxRelError);
    if (c.matches()) {
      if (!quiet)
        console::write("expect: " + what + " matches " + g.file.path + " (" +
                       errors + ")\n");
      continue;
    }
    ++differing;
    std::string nan =
        c.nanMismatches
            ? ", " + std::to_string(c.nanMismatches) + " of them NaN on one "
                                                        "side only"
            : "";
    std::string tolerance =
        isFloat(got.dtype)
            ? formatString(" (rtol %g, atol %g)", rtol, atol)
            : " (integers match exactly)";
    logError(g.file.path + ": error: " + what + " differs from the golden " +
             "file: " + std::to_string(c.differing) + " of " +
             std::to_string(c.elements) + " elements differ" + tolerance +
             nan + "; " + errors + "; first at " +
             formatIndex(got.shape, c.firstDiffering) + ": got " +
             formatElement(got, c.firstDiffering) + ", expected " +
             formatElement(g.array, c.firstDiffering));
  }
  if (differing == 0)
    return kExitSuccess;
  logError("error: " + std::to_string(differing) + " of " +
           std::to_string(golden.size()) + " checked output" +
           (golden.size() == 1 ? "" : "s") +
           (differing == 1 ? " differs" : " differ") +
           " from the --expect files");
  return kExitUserError;
}

} // namespace pallasc
