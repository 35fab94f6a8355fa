//===- LauncherTest.cpp - The runtime of generated launchers ------*- C++ -*-===//
//
// pallasc_launcher_cpu_run over a plan encoded here and a fake kernel (a C++
// function with the packed calling convention): success, and every error
// path's status and message.

#include "src/Launch/HostPlanCodec.h"
#include "src/Launch/Launcher.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <vector>

using namespace pallasc::launch;

namespace {

/// Packed kernel over (program id, grid size, in memref, out memref) of
/// [4] f32 blocks: out = in * 2.
struct Memref1 {
  float *allocated, *aligned;
  int64_t offset, size, stride;
};
void doubleKernel(void **args) {
  auto *in = *static_cast<Memref1 **>(args[2]);
  auto *out = *static_cast<Memref1 **>(args[3]);
  for (int64_t i = 0; i < in->size; ++i)
    out->aligned[out->offset + i * out->stride] =
        2 * in->aligned[in->offset + i * in->stride];
}

/// [n] f32 -> [n] f32 in blocks of 4 over a dynamic grid (i) -> (i).
HostCallPlan doublePlan(int64_t n) {
  HostCallPlan p;
  p.kernelName = "double_kernel";
  p.kernel = &doubleKernel;
  p.grid = {-1};
  p.inputs = {{ElementType::F32, {n}}};
  p.outputs = {{ElementType::F32, {n}}};
  HostBlockMapping m;
  m.blockShape = {4};
  m.kinds = {HostBlockMapping::Kind::Blocked};
  m.padLow = m.padHigh = {0};
  m.indexMap.resize(1);
  m.indexMap[0].code = {AffineProgram::Dim, 0};
  p.inMappings = {m};
  p.outMappings = {m};
  p.kernelWrites = {false, true};
  return p;
}

std::string encode(const HostCallPlan &p) {
  return encodeHostCallPlan(p, [](PackedFn) { return size_t(0); });
}

const PackedFn kTable[] = {&doubleKernel};

int run(const std::string &plan, std::vector<void *> operands,
        std::vector<int64_t> bounds, const PackedFn *table = kTable,
        int64_t numFunctions = 1) {
  return pallasc_launcher_cpu_run(
      "double_cpu", plan.data(), static_cast<int64_t>(plan.size()), table,
      numFunctions, operands.data(), static_cast<int64_t>(operands.size()),
      bounds.data(), static_cast<int64_t>(bounds.size()));
}

} // namespace

TEST_CASE("a host plan round-trips through its text", "[launcher]") {
  HostCallPlan p = doublePlan(8);
  p.aliases = {{0, 0}};
  p.scratch = {{ElementType::BF16, {2, 3}}};
  std::string text = encode(p);
  HostCallPlan q;
  std::string error;
  REQUIRE(decodeHostCallPlan(text, kTable, 1, q, error));
  CHECK(encode(q) == text);
  CHECK(q.kernel == &doubleKernel);
  CHECK(q.scratch[0].type == ElementType::BF16);
  CHECK(q.aliases == p.aliases);
}

TEST_CASE("damaged plans are errors", "[launcher]") {
  std::string text = encode(doublePlan(8));
  HostCallPlan q;
  std::string error;
  CHECK_FALSE(decodeHostCallPlan(text.substr(0, text.size() / 2), kTable, 1,
                                 q, error));
  CHECK(error == "malformed launch plan: the plan ends early");
  CHECK_FALSE(decodeHostCallPlan(text + " 7", kTable, 1, q, error));
  CHECK(error == "malformed launch plan: the plan has trailing text");
  CHECK_FALSE(decodeHostCallPlan(text, kTable, 0, q, error));
  CHECK(error ==
        "malformed launch plan: entry point 0 is not in the table of 0");
  std::string v2 = text;
  v2.replace(v2.find(" 1 "), 3, " 2 ");
  CHECK_FALSE(decodeHostCallPlan(v2, kTable, 1, q, error));
  CHECK(error == "malformed launch plan: not a version 1 host plan");
  std::string huge = text;
  huge.replace(huge.find(" -1"), 0, " 99999999999");
  CHECK_FALSE(decodeHostCallPlan(huge, kTable, 1, q, error));
}

TEST_CASE("the cpu entry point runs the grid and reports failures",
          "[launcher]") {
  std::string plan = encode(doublePlan(10));
  std::vector<float> in(10), out(10, 0);
  for (int i = 0; i < 10; ++i)
    in[i] = static_cast<float>(i) + 0.5f;

  SECTION("success: 3 steps of 4 over 10 elements, the edge padded") {
    CHECK(run(plan, {in.data(), out.data()}, {3}) == kLauncherOk);
    CHECK(std::string(pallasc_last_error()).empty());
    for (int i = 0; i < 10; ++i)
      CHECK(out[i] == 2 * in[i]);
  }
  SECTION("a dynamic bound of 1 writes the first block only") {
    CHECK(run(plan, {in.data(), out.data()}, {1}) == kLauncherOk);
    CHECK(out[3] == 2 * in[3]);
    CHECK(std::isnan(out[4]));
  }
  SECTION("a null operand") {
    CHECK(run(plan, {in.data(), nullptr}, {3}) == kLauncherInvalidArgument);
    CHECK(std::string(pallasc_last_error()) ==
          "double_cpu: output 0 ([10] f32) is a null pointer");
  }
  SECTION("a bound out of range") {
    CHECK(run(plan, {in.data(), out.data()}, {int64_t(1) << 31}) ==
          kLauncherInvalidArgument);
    CHECK(std::string(pallasc_last_error()) ==
          "double_cpu: dynamic grid bound 0 is 2147483648; bounds must be in "
          "[0, 2^31)");
  }
  SECTION("an entry point that does not match its plan") {
    CHECK(run(plan, {in.data()}, {3}) == kLauncherInvalidPlan);
    CHECK(std::string(pallasc_last_error()) ==
          "double_cpu: the entry point passes 1 operands and 1 grid bounds; "
          "its plan has 2 and 1");
    CHECK(run("garbage", {in.data(), out.data()}, {3}) ==
          kLauncherInvalidPlan);
    CHECK(std::string(pallasc_last_error()) ==
          "double_cpu: malformed launch plan: not a version 1 host plan");
  }
  SECTION("a failure of the grid walk (an index map dividing by zero)") {
    HostCallPlan p = doublePlan(10);
    p.inMappings[0].indexMap[0].code = {AffineProgram::Dim, 0,
                                        AffineProgram::Const, 0,
                                        AffineProgram::FloorDiv};
    CHECK(run(encode(p), {in.data(), out.data()}, {3}) == kLauncherRunFailed);
    CHECK(std::string(pallasc_last_error()) ==
          "double_cpu: input 0: index map divides by zero");
  }
  SECTION("success clears the last error") {
    run(plan, {in.data(), nullptr}, {3});
    CHECK(run(plan, {in.data(), out.data()}, {3}) == kLauncherOk);
    CHECK(std::string(pallasc_last_error()).empty());
  }
}
