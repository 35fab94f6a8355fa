//===- OutputFilesTest.cpp - All-or-nothing commits of outputs -*- C++ -*-===//

#include "src/Driver/OutputFiles.h"
#include "test/TestUtils.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <catch2/catch.hpp>

#include <fstream>

using namespace pallasc;

namespace {

std::string freshDir() { return pallasc::test::freshTestDir("pallasc-outputs-test"); }

std::string contentsOf(const std::string &path) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  return buf ? (*buf)->getBuffer().str() : "<missing>";
}

void put(const std::string &path, const std::string &text) {
  std::ofstream(path) << text;
}

/// The entries of `dir` other than the ones named.
size_t entries(const std::string &dir) {
  size_t n = 0;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    ++n;
  return n;
}

/// Prepares `files` and stages each (name, contents) of `outputs`.
void stageAll(
    OutputFiles &files,
    std::initializer_list<std::pair<const char *, const char *>> outputs) {
  REQUIRE(succeeded(files.prepare()));
  for (const auto &[name, contents] : outputs)
    REQUIRE(succeeded(files.stage(name, contents)));
}

} // namespace

TEST_CASE("outputs are committed together and the staging directory goes",
          "[outputs]") {
  std::string dir = freshDir();
  put(dir + "/a.txt", "old a");
  {
    OutputFiles files(dir);
    stageAll(files, {{"a.txt", "new a"}, {"b.txt", "new b"}});
    // Staged, not yet visible: the old file and one staging directory.
    CHECK(contentsOf(dir + "/a.txt") == "old a");
    CHECK(entries(dir) == 2);
    REQUIRE(succeeded(files.commit()));
  }
  CHECK(contentsOf(dir + "/a.txt") == "new a");
  CHECK(contentsOf(dir + "/b.txt") == "new b");
  CHECK(entries(dir) == 2);
  llvm::sys::fs::remove_directories(dir);
}

TEST_CASE("a failed rename puts back the outputs already renamed",
          "[outputs]") {
  std::string dir = freshDir();
  put(dir + "/a.txt", "old a");
  {
    OutputFiles files(dir);
    stageAll(files,
             {{"a.txt", "new a"}, {"c.txt", "new c"}, {"b.txt", "new b"}});
    // b.txt becomes a non-empty directory after staging: its rename fails.
    REQUIRE_FALSE(llvm::sys::fs::create_directories(dir + "/b.txt/inside"));
    CHECK(failed(files.commit()));
  }
  // a.txt has its old contents back, c.txt (new) is gone again, nothing is
  // staged any more.
  CHECK(contentsOf(dir + "/a.txt") == "old a");
  CHECK_FALSE(llvm::sys::fs::exists(dir + "/c.txt"));
  CHECK(entries(dir) == 2); // a.txt, b.txt/
  llvm::sys::fs::remove_directories(dir);
}

TEST_CASE("paths are claimed before any work", "[outputs]") {
  std::string dir = freshDir();
  put(dir + "/in.txt", "input");
  OutputFiles files(dir);
  files.protectInput(dir + "/in.txt", "kernel");
  CHECK(failed(files.claim("")));
  CHECK(failed(files.claim(dir)));
  CHECK(failed(files.claim(dir + "/in.txt")));
  CHECK(failed(files.claim(dir + "/missing/out.txt")));
  CHECK(succeeded(files.claim(dir + "/out.txt")));
  CHECK(failed(files.claim(dir + "/./out.txt")));
  // A claimed path is then staged without a second claim; an artifact at a
  // claimed path is refused.
  CHECK(succeeded(files.stageAt(dir + "/out.txt", "x")));
  CHECK(failed(files.stage("out.txt", "y")));
  CHECK(contentsOf(dir + "/in.txt") == "input");
  llvm::sys::fs::remove_directories(dir);
}
