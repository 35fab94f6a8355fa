//===- LauncherTest.cpp - The runtime of generated launchers ------*- C++ -*-===//
//
// pallasc_launcher_cpu_run over a plan encoded here and a fake kernel (a C++
// function with the packed calling convention): success, and every error
// path's status and message.

#include "src/Launch/Launcher.h"
#include "src/Launch/GpuLaunchArgs.h"
#include "src/Launch/HostPlanCodec.h"
#include "test/Launch/LauncherTestSupport.h"

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

TEST_CASE("the cpu entry point runs vmap's batch loop", "[launcher]") {
  // 3 iterations of the [8] f32 call: input batched (32 bytes a slice),
  // output stacked, the bound batched (2, 1, 2 blocks of 4).
  std::string plan = encode(doublePlan(8));
  GpuBatchLoop loop;
  loop.axisSize = 3;
  loop.inputStrides = {8 * sizeof(float)};
  loop.outputStrides = {8 * sizeof(float)};
  loop.batchedBounds = {true};
  std::vector<int64_t> encoded = encodeGpuBatchLoop(loop);
  std::vector<float> in(24), out(24, 0);
  for (int i = 0; i < 24; ++i)
    in[i] = static_cast<float>(i) - 3.5f;
  int64_t values[] = {2, 1, 2};
  const int64_t *bounds[] = {values};
  auto runBatch = [&](void *inPtr, const int64_t *const *boundArgs,
                      const std::vector<int64_t> &l) {
    void *operands[] = {inPtr, out.data()};
    return pallasc_launcher_cpu_run_batch(
        "double_cpu", plan.data(), static_cast<int64_t>(plan.size()), kTable,
        1, operands, 2, boundArgs, 1, l.data(),
        static_cast<int64_t>(l.size()));
  };
  REQUIRE(runBatch(in.data(), bounds, encoded) == kLauncherOk);
  CHECK(std::string(pallasc_last_error()).empty());
  for (int b = 0; b < 3; ++b)
    for (int i = 0; i < 8; ++i) {
      INFO("iteration " << b << ", element " << i);
      float got = out[b * 8 + i];
      // Past iteration 1's bound (one block) nothing is written (NaN).
      if (b == 1 && i >= 4)
        CHECK(std::isnan(got));
      else
        CHECK(got == 2 * in[b * 8 + i]);
    }

  // A bound out of range in iteration 2; a null input; a null batched
  // bound; a loop that does not fit the plan.
  int64_t bad[] = {2, 1, -1};
  const int64_t *badBounds[] = {bad};
  CHECK(runBatch(in.data(), badBounds, encoded) == kLauncherInvalidArgument);
  CHECK(std::string(pallasc_last_error()) ==
        "double_cpu: batch iteration 2 of 3: dynamic grid bound 0 is -1; "
        "bounds must be in [0, 2^31)");
  CHECK(runBatch(nullptr, bounds, encoded) == kLauncherInvalidArgument);
  CHECK(std::string(pallasc_last_error()) ==
        "double_cpu: batch iteration 0 of 3: input 0 ([8] f32) is a null "
        "pointer");
  const int64_t *nullBounds[] = {nullptr};
  CHECK(runBatch(in.data(), nullBounds, encoded) == kLauncherInvalidArgument);
  CHECK(std::string(pallasc_last_error()) ==
        "double_cpu: batched grid bound 0 (3 values, one per batch "
        "iteration) is a null pointer");
  CHECK(runBatch(in.data(), bounds, {0, 32, 32, 1}) == kLauncherInvalidPlan);
  CHECK(std::string(pallasc_last_error()) ==
        "double_cpu: the embedded batch loop has axis size 0");
}

namespace {
/// doublePlan over a symbol n (multiple_of 2, max 100): shapes [n], grid
/// cdiv(n, 4).
HostCallPlan symbolicDoublePlan() {
  HostCallPlan p = doublePlan(0);
  HostSymbol n;
  n.name = "n";
  n.max = 100;
  n.multipleOf = 2;
  pallasc::test::makeSymbolicRows(p, n, 4);
  return p;
}
} // namespace

TEST_CASE("dimension expressions evaluate and print", "[launcher]") {
  std::vector<HostSymbol> symbols(2);
  symbols[0].name = "n";
  symbols[1].name = "m";
  HostDimExpr e;
  e.coefficients = {2, -1};
  e.constant = -3;
  e.divisor = 4;
  int64_t v = 0;
  REQUIRE(e.evaluate({3, 8}, v));
  CHECK(v == -2); // floor((6 - 8 - 3) / 4) = floor(-5 / 4)
  CHECK(e.str(symbols) == "(2*n - m - 3) // 4");
  e.ceil = true;
  REQUIRE(e.evaluate({5, 0}, v));
  CHECK(v == 2); // cdiv(7, 4)
  CHECK(e.str(symbols) == "cdiv(2*n - m - 3, 4)");
  HostDimExpr big;
  big.coefficients = {INT64_MAX, 0};
  CHECK_FALSE(big.evaluate({2, 0}, v));
}

TEST_CASE("a symbolic plan round-trips and instantiates", "[launcher]") {
  HostCallPlan p = symbolicDoublePlan();
  CHECK(p.numDynamicBounds() == 0);
  std::string text = encode(p);
  CHECK(text.find(" symbols 1 n 1 100 2 ") != std::string::npos);
  HostCallPlan q;
  std::string error;
  REQUIRE(decodeHostCallPlan(text, kTable, 1, q, error));
  CHECK(encode(q) == text);

  HostCallPlan at = q;
  REQUIRE(instantiateSymbols(at, {10}, error));
  CHECK(at.grid == std::vector<int64_t>{3});
  CHECK(at.inputs[0].shape == std::vector<int64_t>{10});
  CHECK(at.symbolic.empty());
  // The static plan written at that size.
  HostCallPlan s = doublePlan(10);
  s.grid = {3};
  CHECK(encode(at) == encode(s));

  HostCallPlan bad = q;
  CHECK_FALSE(instantiateSymbols(bad, {9}, error));
  CHECK(error == "n = 9 is not a multiple of 2");
  bad = q;
  CHECK_FALSE(instantiateSymbols(bad, {0}, error));
  CHECK(error == "n = 0 is less than its minimum 1");
  bad = q;
  CHECK_FALSE(instantiateSymbols(bad, {102}, error));
  CHECK(error == "n = 102 is greater than its maximum 100");
  bad = q;
  CHECK_FALSE(instantiateSymbols(bad, {}, error));
  CHECK(error == "the call takes 1 symbol values, got 0");

  std::string damaged = text;
  damaged.replace(damaged.find(" symbols 1 n 1 100 2 "), 21,
                  " symbols 1 n 1 100 0 ");
  CHECK_FALSE(decodeHostCallPlan(damaged, kTable, 1, q, error));
  CHECK(error == "malformed launch plan: multiple_of must be positive");
}

TEST_CASE("the cpu entry point of a symbolic plan takes the symbol last",
          "[launcher]") {
  std::string plan = encode(symbolicDoublePlan());
  std::vector<float> in(10), out(10, 0);
  for (int i = 0; i < 10; ++i)
    in[i] = static_cast<float>(i) + 0.5f;
  SECTION("n = 10: 3 steps, the edge's writes dropped") {
    CHECK(run(plan, {in.data(), out.data()}, {10}) == kLauncherOk);
    for (int i = 0; i < 10; ++i)
      CHECK(out[i] == 2 * in[i]);
  }
  SECTION("n = 6 runs on the first 6 elements only") {
    out.assign(10, -1.0f);
    CHECK(run(plan, {in.data(), out.data()}, {6}) == kLauncherOk);
    CHECK(out[5] == 2 * in[5]);
    CHECK(out[6] == -1.0f);
  }
  SECTION("a constraint violation runs nothing") {
    out.assign(10, -1.0f);
    CHECK(run(plan, {in.data(), out.data()}, {7}) == kLauncherInvalidArgument);
    CHECK(std::string(pallasc_last_error()) ==
          "double_cpu: n = 7 is not a multiple of 2");
    CHECK(out[0] == -1.0f);
  }
  SECTION("a missing symbol value") {
    CHECK(run(plan, {in.data(), out.data()}, {}) == kLauncherInvalidPlan);
  }
}

namespace {
/// Packed kernel over (program id, grid size, in, out) of int4 blocks as the
/// CPU pipeline takes them (one dimension of packed bytes): out = in + 1,
/// wrapping at 4 bits.
struct MemrefBytes {
  uint8_t *allocated, *aligned;
  int64_t offset, size, stride;
};
int64_t gInt4Elements = 0;
void incrementInt4Kernel(void **args) {
  auto *in = *static_cast<MemrefBytes **>(args[2]);
  auto *out = *static_cast<MemrefBytes **>(args[3]);
  for (int64_t i = 0; i < gInt4Elements; ++i) {
    uint8_t v = (in->aligned[in->offset + i / 2] >> (i % 2 * 4)) & 0xf;
    uint8_t &o = out->aligned[out->offset + i / 2];
    o = static_cast<uint8_t>((o & ~(0xf << (i % 2 * 4))) |
                             (((v + 1) & 0xf) << (i % 2 * 4)));
  }
}
} // namespace

TEST_CASE("int4 elements pack as XLA packs them", "[launcher]") {
  // ml_dtypes holds one element per byte, the value in the low bits.
  std::vector<uint8_t> one = {0x1, 0x2, 0xf, 0x8, 0x7};
  std::vector<uint8_t> packed(3, 0xaa), back(5, 0);
  uint64_t bytes = 0;
  CHECK(storageBytes(ElementType::I4, 5, bytes));
  CHECK(bytes == 3);
  CHECK(storageBytes(ElementType::U2, 5, bytes));
  CHECK(bytes == 2);
  packElements(one.data(), 5, ElementType::I4, packed.data());
  CHECK(packed == std::vector<uint8_t>{0x21, 0x8f, 0x07});
  unpackElements(packed.data(), 5, ElementType::I4, back.data());
  CHECK(back == one);
  std::vector<uint8_t> two = {1, 2, 3, 0, 3};
  packElements(two.data(), 5, ElementType::U2, packed.data());
  CHECK(packed[0] == (1 | 2 << 2 | 3 << 4));
  CHECK(packed[1] == 3);
  // A run that starts mid-byte keeps its neighbours' bits.
  std::vector<uint8_t> dst = {0xff, 0xff};
  copyPackedElements(packed.data(), 1, dst.data(), 1, 2, 2);
  CHECK(dst[0] == (0x3 | 2 << 2 | 3 << 4 | 0xc0));
}

TEST_CASE("the cpu entry point runs int4 blocks that start mid-byte",
          "[launcher]") {
  // [3, 5] int4 in blocks of (1, 5): rows 1 and 2 start at bit 4 of byte 2
  // and at byte 5; the kernel sees each block packed from its own byte 0.
  HostCallPlan p;
  p.kernelName = "increment_kernel";
  p.kernel = &incrementInt4Kernel;
  p.grid = {3};
  p.inputs = {{ElementType::I4, {3, 5}}};
  p.outputs = {{ElementType::I4, {3, 5}}};
  HostBlockMapping m;
  m.blockShape = {1, 5};
  m.kinds = {HostBlockMapping::Kind::Blocked, HostBlockMapping::Kind::Blocked};
  m.padLow = m.padHigh = {0, 0};
  m.indexMap.resize(2);
  m.indexMap[0].code = {AffineProgram::Dim, 0};
  m.indexMap[1].code = {AffineProgram::Const, 0};
  p.inMappings = {m};
  p.outMappings = {m};
  p.kernelWrites = {false, true};
  gInt4Elements = 5;
  std::vector<uint8_t> values(15), in(8), out(8, 0x55), got(15);
  for (int i = 0; i < 15; ++i)
    values[i] = static_cast<uint8_t>((i * 7 + 3) & 0xf);
  packElements(values.data(), 15, ElementType::I4, in.data());
  const PackedFn table[] = {&incrementInt4Kernel};
  std::string plan = encodeHostCallPlan(p, [](PackedFn) { return size_t(0); });
  std::vector<void *> operands = {in.data(), out.data()};
  CHECK(pallasc_launcher_cpu_run("increment_cpu", plan.data(),
                                 static_cast<int64_t>(plan.size()), table, 1,
                                 operands.data(), 2, nullptr, 0) ==
        kLauncherOk);
  CHECK(std::string(pallasc_last_error()) == "");
  unpackElements(out.data(), 15, ElementType::I4, got.data());
  for (int i = 0; i < 15; ++i)
    CHECK(got[i] == ((values[i] + 1) & 0xf));
}
