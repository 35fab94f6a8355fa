//===- GpuLaunchArgsTest.cpp - Launch geometry, kernel arguments *- C++ -*-===//

#include "src/Launch/GpuLaunchArgs.h"

#include <catch2/catch.hpp>

#include <cstring>

using namespace pallasc::launch;

namespace {

GpuKernelParam pointer(bool isOutput, size_t index) {
  GpuKernelParam p;
  p.kind = GpuKernelParam::Kind::Pointer;
  p.isOutput = isOutput;
  p.index = index;
  return p;
}

GpuKernelParam gridBound(int64_t axis) {
  GpuKernelParam p;
  p.kind = GpuKernelParam::Kind::GridBound;
  p.axis = axis;
  return p;
}

GpuKernelParam tensorMap(size_t input) {
  GpuKernelParam p;
  p.kind = GpuKernelParam::Kind::TensorMap;
  p.index = input;
  p.tensorMap.input = input;
  return p;
}

/// A record like pallas-to-gpu's for a 4-axis grid: axes 0 and 1 folded
/// into x (0 innermost), axis 3 on y, axis 2 sequential (in no launch dim).
GpuLaunchRecord fourAxisRecord() {
  GpuLaunchRecord r;
  r.entry = "k";
  r.gridAxes[0] = {0, 1};
  r.gridAxes[1] = {3};
  r.block[0] = 128;
  r.dynamicSharedBytes = 1024;
  r.params = {pointer(false, 0), pointer(false, 1), pointer(true, 0),
              gridBound(1), tensorMap(1)};
  return r;
}

uint64_t slot64(void *p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

int32_t slot32(void *p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

} // namespace

TEST_CASE("launch geometry: pallas grid axes fold into x, y, z",
          "[launch]") {
  GpuLaunchRecord r = fourAxisRecord();
  GpuLaunchGeometry g;
  REQUIRE(computeLaunchGeometry(r, {3, 5, 7, 11}, g));
  CHECK(g.grid[0] == 15);
  CHECK(g.grid[1] == 11);
  CHECK(g.grid[2] == 1);
  CHECK(g.block[0] == 128);
  CHECK(g.block[1] == 1);
  CHECK(g.block[2] == 1);
  CHECK(g.sharedBytes == 1024);
  CHECK(g.numBlocks() == 165);

  // A dynamic bound of 0 makes an empty launch.
  REQUIRE(computeLaunchGeometry(r, {3, 0, 7, 11}, g));
  CHECK(g.numBlocks() == 0);
}

TEST_CASE("launch geometry: a record naming a missing grid axis",
          "[launch]") {
  GpuLaunchRecord r = fourAxisRecord();
  GpuLaunchGeometry g;
  GpuStatus s = computeLaunchGeometry(r, {3, 5}, g);
  CHECK(s.error == GpuError::InvalidLaunchRecord);
  CHECK(s.message == "the launch record names grid axis 3 of a grid of rank 2");
  CHECK(std::string(gpuErrorName(s.error)) == "InvalidLaunchRecord");
}

TEST_CASE("launch: dynamic shared memory past 48 KiB needs the opt-in",
          "[launch]") {
  CHECK_FALSE(needsSharedMemoryOptIn(0));
  CHECK_FALSE(needsSharedMemoryOptIn(48 * 1024));
  CHECK(needsSharedMemoryOptIn(48 * 1024 + 1));
  CHECK(needsSharedMemoryOptIn(227 * 1024));
}

TEST_CASE("launch: grid-bound values and tensor-map parameters", "[launch]") {
  GpuLaunchRecord r = fourAxisRecord();
  std::vector<int32_t> values;
  REQUIRE(gridBoundValues(r, {3, 5, 7, 11}, values));
  CHECK(values == std::vector<int32_t>{5});
  std::vector<GpuTensorMap> maps = tensorMapParams(r);
  REQUIRE(maps.size() == 1);
  CHECK(maps[0].input == 1);
  CHECK(gridBoundValues(r, {3}, values).error ==
        GpuError::InvalidLaunchRecord);
}

TEST_CASE("launch: kernel arguments in the record's parameter order",
          "[launch]") {
  GpuLaunchRecord r = fourAxisRecord();
  GpuKernelArgs args;
  REQUIRE(args.pack(r, {0x1000, 0x2000}, {0x3000}, {3, 5, 7, 11}, {0x4000}));
  REQUIRE(args.size() == 5);
  CHECK(slot64(args.data()[0]) == 0x1000);
  CHECK(slot64(args.data()[1]) == 0x2000);
  CHECK(slot64(args.data()[2]) == 0x3000);
  CHECK(slot32(args.data()[3]) == 5);
  CHECK(slot64(args.data()[4]) == 0x4000);
  // Repacking replaces the values.
  REQUIRE(args.pack(r, {0x10, 0x20}, {0x30}, {3, 9, 7, 11}, {0x40}));
  CHECK(slot64(args.data()[0]) == 0x10);
  CHECK(slot32(args.data()[3]) == 9);
}

TEST_CASE("launch: a symbolic call's symbol parameters", "[launch]") {
  // A symbolic call (issue 36): the grid bound, then each symbol as i32.
  GpuLaunchRecord r;
  r.entry = "k";
  r.gridAxes[0] = {0};
  GpuKernelParam sym;
  sym.kind = GpuKernelParam::Kind::Symbol;
  sym.index = 0;
  r.params = {pointer(false, 0), pointer(true, 0), gridBound(0), sym};
  std::vector<int32_t> values;
  REQUIRE(gridBoundValues(r, {125}, values, {1000}));
  CHECK(values == std::vector<int32_t>{125, 1000});
  GpuKernelArgs args;
  REQUIRE(args.pack(r, {0x1000}, {0x2000}, {125}, {}, {1000}));
  REQUIRE(args.size() == 4);
  CHECK(slot32(args.data()[2]) == 125);
  CHECK(slot32(args.data()[3]) == 1000);
  GpuStatus s = args.pack(r, {0x1000}, {0x2000}, {125}, {});
  CHECK(s.error == GpuError::InvalidLaunchRecord);
  CHECK(s.message == "the launch record passes symbols[0] but 0 symbol "
                     "values are given");
  CHECK(gridBoundValues(r, {125}, values).message == s.message);
}

TEST_CASE("launch: kernel arguments that the operands do not provide",
          "[launch]") {
  GpuLaunchRecord r = fourAxisRecord();
  GpuKernelArgs args;
  GpuStatus s = args.pack(r, {0x1000, 0x2000}, {}, {3, 5, 7, 11}, {0x4000});
  CHECK(s.error == GpuError::InvalidLaunchRecord);
  CHECK(s.message ==
        "the launch record passes outputs[0] but the call has 0 outputs");
  s = args.pack(r, {0x1000}, {0x3000}, {3, 5, 7, 11}, {0x4000});
  CHECK(s.message ==
        "the launch record passes inputs[1] but the call has 1 inputs");
  s = args.pack(r, {0x1000, 0x2000}, {0x3000}, {3, 5, 7, 11}, {});
  CHECK(s.error == GpuError::InvalidLaunchRecord);
  CHECK(s.message == "the launch record has more tensor-map parameters than "
                     "the 0 tensor maps given");
  s = args.pack(r, {0x1000, 0x2000}, {0x3000}, {3}, {0x4000});
  CHECK(s.message == "the launch record names grid axis 1 of a grid of rank 1");
}

TEST_CASE("launch: iterations of a batch loop", "[launch]") {
  // Two inputs (batched at 0 with 64-byte slices, unbatched), one output of
  // 32-byte slices, a batched bound and an unbatched one, 3 iterations.
  GpuBatchLoop loop;
  loop.axisSize = 3;
  loop.inputStrides = {64, 0};
  loop.outputStrides = {32};
  loop.batchedBounds = {true, false};
  REQUIRE(loop.numBoundValues() == 4);
  GpuBatchOperands it;
  const GpuBatchOperands all = {{0x1000, 0x8000}, {0x20000}, {5, 6, 7, 9}};
  for (int64_t b = 0; b < 3; ++b) {
    REQUIRE(gpuBatchIteration(loop, b, all, it));
    CHECK(it.inputs ==
          std::vector<uint64_t>{0x1000 + 64 * uint64_t(b), 0x8000});
    CHECK(it.outputs == std::vector<uint64_t>{0x20000 + 32 * uint64_t(b)});
    CHECK(it.bounds == std::vector<int64_t>{5 + b, 9});
  }
  // A direct call: one iteration, strides 0.
  GpuBatchLoop one;
  one.inputStrides = {0};
  one.outputStrides = {0};
  one.batchedBounds = {false};
  REQUIRE(gpuBatchIteration(one, 0, {{0x10}, {0x20}, {3}}, it));
  CHECK(it.inputs == std::vector<uint64_t>{0x10});
  CHECK(it.outputs == std::vector<uint64_t>{0x20});
  CHECK(it.bounds == std::vector<int64_t>{3});
}

TEST_CASE("launch: a batch loop's malformed iterations", "[launch]") {
  GpuBatchLoop loop;
  loop.axisSize = 2;
  loop.inputStrides = {8};
  loop.outputStrides = {UINT64_MAX / 2 + 1};
  GpuBatchOperands it;
  GpuStatus s = gpuBatchIteration(loop, 2, {{0}, {0}, {}}, it);
  CHECK(s.error == GpuError::InvalidLaunchRecord);
  CHECK(s.message == "the batch loop has no iteration 2 of 2");
  s = gpuBatchIteration(loop, 0, {{0, 0}, {0}, {}}, it);
  CHECK(s.message == "the batch loop takes 1 inputs, 1 outputs and 0 bound "
                     "values; the launch passes 2, 1 and 0");
  s = gpuBatchIteration(loop, 1, {{0}, {UINT64_MAX / 2 + 1}, {}}, it);
  CHECK(s.message == "the batch loop slice 1 overflows the address space");
}
