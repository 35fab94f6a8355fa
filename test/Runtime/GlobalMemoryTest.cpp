//===- GlobalMemoryTest.cpp - The emulator's guarded global memory --------===//

#include "src/Runtime/GpuEmulator/GlobalMemory.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <vector>

using namespace pallasc::runtime;

namespace {
std::vector<unsigned char> pattern(size_t n) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<unsigned char>(i * 7 + 1);
  return v;
}
} // namespace

TEST_CASE("emulated global memory: copies, aligned, guarded", "[emulator]") {
  std::vector<unsigned char> in = pattern(100), out(28, 0);
  EmulatedGlobalMemory global;
  std::string error;
  auto *a = static_cast<unsigned char *>(
      global.add(in.data(), in.size(), "input 0 (u8[100])", error));
  auto *b = static_cast<unsigned char *>(
      global.add(out.data(), out.size(), "output 0 (u8[28])", error));
  REQUIRE(a);
  REQUIRE(b);
  CHECK(reinterpret_cast<uintptr_t>(a) % 256 == 0);
  CHECK(reinterpret_cast<uintptr_t>(b) % 256 == 0);
  CHECK(global.data(0) == a);
  CHECK(global.data(1) == b);
  CHECK(std::memcmp(a, in.data(), in.size()) == 0);
  // Out-of-bounds reads see NaN / -1.
  CHECK(a[100] == 0xFF);
  CHECK(a[-1] == 0xFF);
  CHECK(a[-static_cast<ptrdiff_t>(EmulatedGlobalMemory::kGuardBytes)] == 0xFF);
  // Writing an output's own bytes is fine.
  std::memset(b, 3, 28);
  CHECK(global.check(error));
  CHECK(error.empty());
}

TEST_CASE("emulated global memory: writes outside an array", "[emulator]") {
  std::vector<unsigned char> out(28, 0);
  std::string error;
  // `out` added to `global` as `name`: its copy's address.
  auto addOut = [&](EmulatedGlobalMemory &global, const char *name) {
    auto *b = static_cast<unsigned char *>(
        global.add(out.data(), out.size(), name, error));
    REQUIRE(b);
    return b;
  };
  SECTION("one byte past the end") {
    EmulatedGlobalMemory global;
    unsigned char *b = addOut(global, "output 1 (f32[7])");
    b[28] = 0;
    CHECK_FALSE(global.check(error));
    CHECK(error == "the kernel wrote outside output 1 (f32[7]), which has 28 "
                   "bytes: byte 28 (past its end) changed; an out-of-bounds "
                   "global write is a lowering bug");
  }
  SECTION("a range past the end, in the padding and beyond") {
    EmulatedGlobalMemory global;
    unsigned char *b = addOut(global, "output 0 (f32[7])");
    b[40] = 1;
    b[600] = 2;
    CHECK_FALSE(global.check(error));
    CHECK(error.find("bytes 40 to 600 (past its end)") != std::string::npos);
  }
  SECTION("before the start, and past the end") {
    EmulatedGlobalMemory global;
    unsigned char *b = addOut(global, "output 0 (f32[7])");
    b[-16] = 0;
    b[-5] = 0;
    b[30] = 0;
    CHECK_FALSE(global.check(error));
    CHECK(error.find("bytes -16 to -5 (before its start) and byte 30 (past "
                     "its end) changed") != std::string::npos);
  }
  SECTION("a second array's guard is checked too") {
    EmulatedGlobalMemory global;
    std::vector<unsigned char> in = pattern(16);
    REQUIRE(global.add(in.data(), in.size(), "input 0", error));
    unsigned char *b = addOut(global, "output 0");
    b[-1] = 9;
    CHECK_FALSE(global.check(error));
    CHECK(error.find("outside output 0,") != std::string::npos);
  }
}

TEST_CASE("emulated global memory: arrays are copies", "[emulator]") {
  // A kernel may write its input refs; the caller's arrays (the CPU
  // reference's inputs) stay as given.
  std::vector<unsigned char> in = pattern(64);
  std::vector<unsigned char> before = in;
  EmulatedGlobalMemory global;
  std::string error;
  auto *a = static_cast<unsigned char *>(
      global.add(in.data(), in.size(), "input 2 ([16] i32)", error));
  REQUIRE(a);
  CHECK(a != in.data());
  std::memset(a, 0, 64);
  CHECK(in == before);
  CHECK(global.check(error));
}

TEST_CASE("emulated global memory: empty arrays", "[emulator]") {
  EmulatedGlobalMemory global;
  std::string error;
  auto *a = static_cast<unsigned char *>(
      global.add(nullptr, 0, "input 0 (f32[0])", error));
  REQUIRE(a);
  CHECK(a[0] == 0xFF);
  CHECK(global.check(error));
  a[0] = 0;
  CHECK_FALSE(global.check(error));
  CHECK(error.find("byte 0 (past its end)") != std::string::npos);
}
