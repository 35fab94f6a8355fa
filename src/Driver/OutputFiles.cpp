//===- OutputFiles.cpp - Atomic, all-or-nothing output files ---*- C++ -*-===//

#include "src/Driver/OutputFiles.h"

#include "src/Driver/Diagnostics.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace fs = llvm::sys::fs;

namespace pallasc {

OutputFiles::~OutputFiles() {
  if (committed)
    return;
  for (const Staged &s : staged)
    fs::remove(s.temp);
}

llvm::LogicalResult OutputFiles::prepare() {
  if (directory.empty())
    return llvm::success(); // the working directory
  if (std::error_code ec = fs::create_directories(directory)) {
    logError(directory + ": error: cannot create the output directory: " +
             ec.message());
    return llvm::failure();
  }
  if (!fs::is_directory(directory)) {
    logError(directory + ": error: the output path is not a directory");
    return llvm::failure();
  }
  return llvm::success();
}

void OutputFiles::protectInput(const std::string &path, std::string what) {
  inputs.push_back({path, std::move(what)});
}

/// `path` made absolute and without `.`/`..` components, for comparing the
/// paths of files that may not exist yet.
static std::string normalizedPath(llvm::StringRef path) {
  llvm::SmallString<256> abs(path);
  if (fs::make_absolute(abs))
    return std::string(path);
  llvm::sys::path::remove_dots(abs, /*remove_dot_dot=*/true);
  return std::string(abs);
}

llvm::LogicalResult OutputFiles::stage(const std::string &name,
                                       llvm::StringRef contents) {
  llvm::SmallString<256> path(directory);
  llvm::sys::path::append(path, name);
  if (failed(stageAt(std::string(path), contents)))
    return llvm::failure();
  finalOutputs.push_back(std::string(path));
  return llvm::success();
}

llvm::LogicalResult OutputFiles::stageAt(const std::string &path,
                                         llvm::StringRef contents) {
  if (fs::is_directory(path)) {
    logError(path + ": error: cannot write the output: it is a directory");
    return llvm::failure();
  }
  for (const Input &input : inputs) {
    if (fs::equivalent(path, input.path) ||
        normalizedPath(path) == normalizedPath(input.path)) {
      logError(path + ": error: cannot write the output: it is the " +
               input.what + " being compiled (" + input.path +
               "); choose another output path");
      return llvm::failure();
    }
  }
  for (const Staged &s : staged) {
    if (normalizedPath(path) == normalizedPath(s.final)) {
      logError(path + ": error: cannot write the output: " + s.final +
               " is already written by this compilation");
      return llvm::failure();
    }
  }
  llvm::SmallString<256> model(llvm::sys::path::parent_path(path));
  llvm::sys::path::append(model, "." + llvm::sys::path::filename(path).str() +
                                     ".tmp-%%%%%%%%");
  int fd = -1;
  llvm::SmallString<256> temp;
  if (std::error_code ec = fs::createUniqueFile(model, fd, temp)) {
    logError(path + ": error: cannot create a temporary output file: " +
             ec.message());
    return llvm::failure();
  }
  staged.push_back({std::string(temp), path});
  llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
  os << contents;
  os.close();
  if (os.has_error()) {
    logError(path + ": error: cannot write the output: " +
             os.error().message());
    os.clear_error();
    return llvm::failure();
  }
  return llvm::success();
}

llvm::LogicalResult OutputFiles::commit() {
  for (const Staged &s : staged) {
    if (std::error_code ec = fs::rename(s.temp, s.final)) {
      logError(s.final + ": error: cannot move the output into place: " +
               ec.message());
      return llvm::failure();
    }
  }
  committed = true;
  return llvm::success();
}

std::string escapeMakePath(llvm::StringRef path) {
  std::string out;
  for (char c : path) {
    if (c == ' ' || c == '#')
      out += '\\';
    if (c == '$')
      out += '$';
    out += c;
  }
  return out;
}

} // namespace pallasc
