//===- GpuLaunchRecordReaderTest.cpp - The #pallas.gpu_launch record ----*- C++
//-*-===//

#include "src/Target/GpuLaunchRecordReader.h"
#include "src/Target/GpuArtifacts.h"

#include "dialects/Pallas/IR/GpuLaunchAttrs.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace mlir;
using mlir::pallas::GpuLaunchAttr;
using pallasc::launch::GpuKernelParam;
using pallasc::launch::GpuLaunchRecord;

namespace {

/// The record of a 2-input TMA matmul as pallas-to-gpu writes it.
const char *kRecord =
    "#pallas.gpu_launch<entry = \"mm\", grid = [2, -1, 1], "
    "grid_axes = [[0], [1], []], block = [128, 1, 1], num_warps = 4, "
    "warp_size = 32, sequential_axes = [2], vmapped_axes = [], "
    "dynamic_shared_memory_bytes = 65536, scratch_shared_memory_bytes = 0, "
    "params = [#pallas.gpu_param<pointer, inputs[0]>, "
    "#pallas.gpu_param<pointer, inputs[1]>, "
    "#pallas.gpu_param<pointer, outputs[0]>, "
    "#pallas.gpu_param<i32, grid_bounds[0], axis = 1>, "
    "#pallas.gpu_param<tensor_map, inputs[1], dtype = bf16, "
    "global_shape = [256, 512], box_shape = [64, 64], swizzle = \"128B\", "
    "interleave = \"none\", l2_promotion = \"128B\", oob_fill = \"zero\">]>";

struct Context {
  Context() { ctx.loadDialect<mlir::pallas::PallasDialect>(); }
  MLIRContext ctx;
};

GpuLaunchAttr parse(MLIRContext &ctx, const std::string &text) {
  return dyn_cast_or_null<GpuLaunchAttr>(parseAttribute(text, &ctx));
}

std::string replaced(std::string text, const std::string &from,
                     const std::string &to) {
  size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

} // namespace

TEST_CASE("gpu launch record: every field", "[target][gpu]") {
  Context c;
  GpuLaunchAttr launch = parse(c.ctx, kRecord);
  REQUIRE(launch);
  GpuLaunchRecord r = pallasc::readGpuLaunchRecord(launch);
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
  CHECK(r.params[3].index == 0);
  const GpuKernelParam &m = r.params[4];
  CHECK(m.kind == GpuKernelParam::Kind::TensorMap);
  CHECK(m.tensorMap.input == 1);
  CHECK(m.tensorMap.bf16);
  CHECK(m.tensorMap.globalShape[0] == 256);
  CHECK(m.tensorMap.globalShape[1] == 512);
  CHECK(m.tensorMap.boxShape[1] == 64);
}

TEST_CASE("gpu launch record: the AMD record's wave64", "[target][gpu]") {
  Context c;
  GpuLaunchAttr launch =
      parse(c.ctx, replaced(kRecord, "warp_size = 32", "warp_size = 64"));
  REQUIRE(launch);
  CHECK(pallasc::readGpuLaunchRecord(launch).warpSize == 64);
}

TEST_CASE("gpu launch record: the printed form parses back", "[target][gpu]") {
  Context c;
  GpuLaunchAttr launch = parse(c.ctx, kRecord);
  REQUIRE(launch);
  std::string text;
  llvm::raw_string_ostream os(text);
  Attribute(launch).print(os);
  CHECK(text == kRecord);
  CHECK(parse(c.ctx, text) == launch);
}

TEST_CASE("gpu launch record: the manifest's launch object",
          "[target][gpu][manifest]") {
  Context c;
  GpuLaunchAttr launch = parse(c.ctx, kRecord);
  REQUIRE(launch);
  // Pinned: the manifest's `launch` object (docs/cuda.md) as it was written
  // from the dictionary record before the record was typed.
  CHECK(pallasc::gpuLaunchJson(launch, "sm_90a", "cuda").dump() ==
        R"({"arch":"sm_90a","block":[128,1,1],)"
        R"("dynamic_shared_memory_bytes":65536,"entry":"mm",)"
        R"("grid":[2,null,1],"grid_axes":{"x":[0],"y":[1],"z":[]},)"
        R"("kind":"cuda","num_warps":4,"params":[)"
        R"({"index":0,"kind":"pointer","operand":"inputs[0]"},)"
        R"({"index":1,"kind":"pointer","operand":"inputs[1]"},)"
        R"({"index":2,"kind":"pointer","operand":"outputs[0]"},)"
        R"({"axis":1,"index":3,"kind":"i32","operand":"grid_bounds[0]"},)"
        R"({"box_shape":[64,64],"dtype":"bf16","global_shape":[256,512],)"
        R"("index":4,"interleave":"none","kind":"tensor_map",)"
        R"("l2_promotion":"128B","oob_fill":"zero","operand":"inputs[1]",)"
        R"("swizzle":"128B"}],"pointer_alignment":16,)"
        R"("scratch_shared_memory_bytes":0,"sequential_axes":[2],)"
        R"("vmapped_axes":[],"warp_size":32})");
}

TEST_CASE("gpu launch record: malformed records are diagnostics",
          "[target][gpu]") {
  Context c;
  std::string message;
  ScopedDiagnosticHandler handler(&c.ctx, [&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  auto fails = [&](const std::string &from, const std::string &to) {
    message.clear();
    CHECK_FALSE(parse(c.ctx, replaced(kRecord, from, to)));
    return message;
  };
  CHECK(fails("block = [128, 1, 1]", "block = [128]") ==
        "the launch record's block must have 3 entries (x, y, z), got 1");
  CHECK(fails("grid_axes = [[0], [1], []]", "grid_axes = [[0], [1]]") ==
        "grid_axes must have 3 entries (x, y, z), got 2");
  CHECK(fails("dynamic_shared_memory_bytes = 65536",
              "dynamic_shared_memory_bytes = -1") ==
        "the launch record's dynamic_shared_memory_bytes must be "
        "non-negative, got -1");
  CHECK(fails("pointer, outputs[0]", "pointer, results[0]") ==
        "unknown GPU parameter operand 'results'; expected 'inputs', "
        "'outputs', 'grid_bounds' or 'symbols'");
  CHECK(fails("pointer, inputs[1]", "pointer, inputs[2]") ==
        "the launch record's parameter inputs[2] is out of order: expected "
        "inputs[1]");
  CHECK(fails("box_shape = [64, 64]", "box_shape = [64]") ==
        "a tensor_map parameter needs a global_shape and a box_shape of 2 "
        "to 5 entries each, as many (outermost first)");
}
