//===- GpuLaunchRecordTest.cpp - Reading the pallas.gpu.launch record -*- C++ -*-===//

#include "src/Target/GpuLaunchRecord.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/MLIRContext.h"

#include <catch2/catch.hpp>

using namespace mlir;
using pallasc::launch::GpuKernelParam;
using pallasc::launch::GpuLaunchRecord;

namespace {

/// The record of a 2-input TMA matmul as pallas-to-gpu writes it.
const char *kRecord =
    "{entry = \"mm\", grid = [2, 2, 1], grid_axes = [[0], [1], []], "
    "block = [128, 1, 1], num_warps = 4, warp_size = 32, "
    "sequential_axes = [2], vmapped_axes = [], "
    "dynamic_shared_memory_bytes = 65536, scratch_shared_memory_bytes = 0, "
    "params = [{kind = \"pointer\", operand = \"inputs[0]\"}, "
    "{kind = \"pointer\", operand = \"inputs[1]\"}, "
    "{kind = \"pointer\", operand = \"outputs[0]\"}, "
    "{kind = \"i32\", operand = \"grid_bounds[0]\", axis = 1}, "
    "{kind = \"tensor_map\", operand = \"inputs[1]\", dtype = \"bf16\", "
    "global_shape = [256, 512], box_shape = [64, 64], swizzle = \"128B\", "
    "interleave = \"none\", l2_promotion = \"128B\", oob_fill = \"zero\"}]}";

DictionaryAttr parse(MLIRContext &ctx, const std::string &text) {
  return cast<DictionaryAttr>(parseAttribute(text, &ctx));
}

std::string replaced(std::string text, const std::string &from,
                     const std::string &to) {
  size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

} // namespace

TEST_CASE("gpu launch record: every field", "[target][gpu]") {
  MLIRContext ctx;
  GpuLaunchRecord r;
  std::string error;
  REQUIRE(pallasc::readGpuLaunchRecord(parse(ctx, kRecord), r, error));
  CHECK(r.entry == "mm");
  CHECK(r.gridAxes[0] == std::vector<int64_t>{0});
  CHECK(r.gridAxes[1] == std::vector<int64_t>{1});
  CHECK(r.gridAxes[2].empty());
  CHECK(r.block[0] == 128);
  CHECK(r.block[1] == 1);
  CHECK(r.warpSize == 32);
  CHECK(r.dynamicSharedBytes == 65536);
  REQUIRE(r.params.size() == 5);
  CHECK(r.params[0].kind == GpuKernelParam::Kind::Pointer);
  CHECK_FALSE(r.params[1].isOutput);
  CHECK(r.params[1].index == 1);
  CHECK(r.params[2].isOutput);
  CHECK(r.params[2].index == 0);
  CHECK(r.params[3].kind == GpuKernelParam::Kind::GridBound);
  CHECK(r.params[3].axis == 1);
  const GpuKernelParam &m = r.params[4];
  CHECK(m.kind == GpuKernelParam::Kind::TensorMap);
  CHECK(m.tensorMap.input == 1);
  CHECK(m.tensorMap.bf16);
  CHECK(m.tensorMap.globalShape[0] == 256);
  CHECK(m.tensorMap.globalShape[1] == 512);
  CHECK(m.tensorMap.boxShape[1] == 64);
}

TEST_CASE("gpu launch record: the AMD record's wave64", "[target][gpu]") {
  MLIRContext ctx;
  GpuLaunchRecord r;
  std::string error;
  REQUIRE(pallasc::readGpuLaunchRecord(
      parse(ctx, replaced(kRecord, "warp_size = 32", "warp_size = 64")), r,
      error));
  CHECK(r.warpSize == 64);
}

TEST_CASE("gpu launch record: malformed records", "[target][gpu]") {
  MLIRContext ctx;
  GpuLaunchRecord r;
  std::string error;
  auto fails = [&](const std::string &from, const std::string &to) {
    error.clear();
    CHECK_FALSE(pallasc::readGpuLaunchRecord(
        parse(ctx, replaced(kRecord, from, to)), r, error));
    return error;
  };
  CHECK(fails("block = [128, 1, 1]", "block = [128]") ==
        "the launch record's block is missing or malformed");
  CHECK(fails("entry = \"mm\", ", "") ==
        "the launch record's entry is missing or malformed");
  CHECK(fails("grid_axes = [[0], [1], []]", "grid_axes = [[0], [\"x\"], []]") ==
        "the launch record's grid_axes is missing or malformed");
  CHECK(fails("dynamic_shared_memory_bytes = 65536",
              "dynamic_shared_memory_bytes = \"big\"") ==
        "the launch record's dynamic_shared_memory_bytes is missing or "
        "malformed");
  CHECK(fails("operand = \"outputs[0]\"", "operand = \"results[0]\"") ==
        "the launch record's params is missing or malformed");
  CHECK(fails("kind = \"i32\"", "kind = \"i64\"") ==
        "the launch record's params is missing or malformed");
  CHECK(fails("box_shape = [64, 64]", "box_shape = [64]") ==
        "a tensor-map parameter of the launch record is malformed");
  CHECK_FALSE(pallasc::readGpuLaunchRecord(DictionaryAttr(), r, error));
}
