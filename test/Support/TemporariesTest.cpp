//===- TemporariesTest.cpp - Scratch directories and orphan cleanup -*- C++ -*-===//

#include "src/Support/Temporaries.h"
#include "test/TestUtils.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace pallasc;

namespace {

std::string freshDir() { return pallasc::test::freshTestDir("pallasc-scratch-test"); }

bool exists(const std::string &p) { return llvm::sys::fs::exists(p); }

/// Sets a directory's mtime `seconds` into the past.
void age(const std::string &p, int seconds) {
  struct timeval t[2];
  gettimeofday(&t[0], nullptr);
  t[0].tv_sec -= seconds;
  t[1] = t[0];
  REQUIRE(utimes(p.c_str(), t) == 0);
}

} // namespace

TEST_CASE("a scratch directory is private, locked and removed with its files",
          "[temporaries]") {
  std::string parent = freshDir();
  std::string path;
  {
    std::error_code ec;
    std::unique_ptr<ScratchDir> dir = ScratchDir::create(parent, "s-", ec);
    REQUIRE(dir);
    path = dir->path();
    CHECK(llvm::StringRef(path).starts_with(parent + "/s-"));
    CHECK(exists(path + "/.lock"));
    llvm::SmallString<128> file;
    REQUIRE_FALSE(dir->writeFile("x", ".ptx", "contents", file));
    CHECK(exists(std::string(file)));
    struct stat st;
    REQUIRE(stat(path.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
    // A live directory is never an orphan, however old.
    age(path, 3600);
    CHECK(removeOrphanScratchDirs(parent, "s-") == 0);
    CHECK(exists(path));
  }
  CHECK_FALSE(exists(path));
  llvm::sys::fs::remove_directories(parent);
}

TEST_CASE("the orphan of a killed process is recognized and removed",
          "[temporaries]") {
  std::string parent = freshDir();
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // As after SIGKILL: no destructor runs.
    std::error_code ec;
    std::unique_ptr<ScratchDir> dir = ScratchDir::create(parent, "s-", ec);
    if (dir) {
      llvm::SmallString<128> file;
      (void)dir->writeFile("left", ".log", "behind", file);
      (void)!write(fds[1], dir->path().data(), dir->path().size());
    }
    _exit(0);
  }
  close(fds[1]);
  char buf[512] = {0};
  ssize_t n = read(fds[0], buf, sizeof(buf) - 1);
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  REQUIRE(n > 0);
  std::string orphan(buf, n);
  REQUIRE(exists(orphan));
  // Too young to be taken for an orphan (its owner may still be locking it).
  CHECK(removeOrphanScratchDirs(parent, "s-") == 0);
  age(orphan, kOrphanAgeSeconds + 1);
  // Another prefix is not ours to clean.
  CHECK(removeOrphanScratchDirs(parent, "other-") == 0);
  CHECK(removeOrphanScratchDirs(parent, "s-") == 1);
  CHECK_FALSE(exists(orphan));
  llvm::sys::fs::remove_directories(parent);
}

TEST_CASE("a tool's exit, crash and time-out are told apart",
          "[temporaries]") {
  std::string parent = freshDir();
  std::error_code ec;
  std::unique_ptr<ScratchDir> dir = ScratchDir::create(parent, "s-", ec);
  REQUIRE(dir);
  llvm::SmallString<128> log;
  REQUIRE_FALSE(dir->createFile("tool", ".log", log));
  auto run = [&](llvm::StringRef script, unsigned seconds,
                 std::string &error) {
    llvm::SmallVector<llvm::StringRef> args = {"/bin/sh", "-c", script};
    return dir->startTool("/bin/sh", args, log).wait(seconds, error);
  };
  std::string error;
  CHECK(run("exit 0", 10, error) == 0);
  CHECK(run("exit 3", 10, error) == 3);
  CHECK(run("kill -SEGV $$", 10, error) == -2);
  CHECK_FALSE(error.empty());
  // Past the limit: killed (not left running for its 300 s), a time-out.
  auto start = std::chrono::steady_clock::now();
  error.clear();
  CHECK(run("exec sleep 300", 1, error) == RunningTool::kTimedOut);
  CHECK(error == "timed out after 1 s");
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
  // Without a limit, wait() waits for the end.
  CHECK(run("sleep 0.2; exit 5", 0, error) == 5);
  dir.reset();
  llvm::sys::fs::remove_directories(parent);
}
