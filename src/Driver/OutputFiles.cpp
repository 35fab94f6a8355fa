//===- OutputFiles.cpp - Atomic, all-or-nothing output files ---*- C++ -*-===//

#include "src/Driver/OutputFiles.h"

#include "src/Driver/Diagnostics.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = llvm::sys::fs;

namespace pallasc {

OutputFiles::~OutputFiles() {
  // The staging directories go with whatever was not committed.
  stagingDirs.clear();
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

static std::string parentOf(llvm::StringRef path) {
  llvm::StringRef parent = llvm::sys::path::parent_path(path);
  return parent.empty() ? std::string(".") : parent.str();
}

llvm::LogicalResult OutputFiles::claim(const std::string &path) {
  auto fail = [&](const std::string &why) {
    logError((path.empty() ? std::string("error: ") : path + ": error: ") +
             "cannot write the output: " + why);
    return llvm::failure();
  };
  if (path.empty())
    return fail("the output path is empty");
  if (fs::is_directory(path))
    return fail("it is a directory");
  std::string normal = normalizedPath(path);
  for (const Input &input : inputs)
    if (fs::equivalent(path, input.path) ||
        normal == normalizedPath(input.path))
      return fail("it is the " + input.what + " (" + input.path +
                  "); choose another output path");
  if (llvm::is_contained(claimed, normal))
    return fail("it is already written by this run");
  std::string parent = parentOf(path);
  if (!fs::is_directory(parent))
    return fail("the directory " + parent + " does not exist");
  claimed.push_back(normal);
  return llvm::success();
}

ScratchDir *OutputFiles::stagingDirFor(const std::string &path) {
  std::string parent = parentOf(path);
  std::string key = normalizedPath(parent);
  auto it = stagingDirs.find(key);
  if (it != stagingDirs.end())
    return it->second.get();
  std::error_code ec;
  std::unique_ptr<ScratchDir> dir = ScratchDir::create(parent, kStagingPrefix, ec);
  if (!dir) {
    logError(path + ": error: cannot create a temporary output file: " +
             ec.message());
    return nullptr;
  }
  return (stagingDirs[key] = std::move(dir)).get();
}

llvm::LogicalResult OutputFiles::stage(const std::string &name,
                                       llvm::StringRef contents) {
  llvm::SmallString<256> path(directory);
  llvm::sys::path::append(path, name);
  // An artifact claims its path now: a path claimed earlier (a depfile
  // named like the manifest) is an error, not a file written twice.
  if (failed(claim(std::string(path))) ||
      failed(write(std::string(path), contents)))
    return llvm::failure();
  finalOutputs.push_back(std::string(path));
  return llvm::success();
}

llvm::LogicalResult OutputFiles::stageAt(const std::string &path,
                                         llvm::StringRef contents) {
  std::string normal = normalizedPath(path);
  for (const Staged &s : staged)
    if (normalizedPath(s.final) == normal) {
      logError(path + ": error: cannot write the output: it is already "
                      "written by this run");
      return llvm::failure();
    }
  if (!llvm::is_contained(claimed, normal) && failed(claim(path)))
    return llvm::failure();
  return write(path, contents);
}

llvm::LogicalResult OutputFiles::write(const std::string &path,
                                       llvm::StringRef contents) {
  ScratchDir *dir = stagingDirFor(path);
  if (!dir)
    return llvm::failure();
  // "new-NAME" (the directory also holds its `.lock` and, during commit(),
  // "old-NAME" backups).
  std::string temp =
      dir->pathFor("new-" + llvm::sys::path::filename(path).str());
  int fd = open(temp.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666);
  if (fd < 0) {
    logError(path + ": error: cannot create a temporary output file: " +
             std::strerror(errno));
    return llvm::failure();
  }
  staged.push_back({temp, path, ""});
  const char *p = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      int err = n < 0 ? errno : EIO;
      close(fd);
      logError(path + ": error: cannot write the output: " +
               std::strerror(err));
      return llvm::failure();
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (close(fd) != 0) {
    logError(path + ": error: cannot write the output: " +
             std::strerror(errno));
    return llvm::failure();
  }
  return llvm::success();
}

llvm::LogicalResult OutputFiles::commit() {
  // Keep each file about to be replaced as a hard link in the staging
  // directory, so a failed rename can put everything back.
  for (Staged &s : staged) {
    struct stat st;
    if (lstat(s.final.c_str(), &st) != 0)
      continue;
    std::string backup = llvm::sys::path::parent_path(s.temp).str() +
                         "/old-" +
                         llvm::sys::path::filename(s.temp).drop_front(4).str();
    if (linkat(AT_FDCWD, s.final.c_str(), AT_FDCWD, backup.c_str(), 0) == 0)
      s.backup = backup;
  }
  for (size_t i = 0; i < staged.size(); ++i) {
    const Staged &s = staged[i];
    if (std::error_code ec = fs::rename(s.temp, s.final)) {
      // Undo: the previous file back, or no file where there was none.
      bool restored = true;
      for (size_t j = 0; j < i; ++j) {
        const Staged &done = staged[j];
        if (!done.backup.empty())
          restored &= !fs::rename(done.backup, done.final);
        else
          restored &= !fs::remove(done.final);
      }
      logError(s.final + ": error: cannot move the output into place: " +
               ec.message() +
               (i == 0 ? ""
                : restored
                    ? "; the outputs already moved were put back"
                    : "; some outputs already moved could not be put back"));
      return llvm::failure();
    }
  }
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
