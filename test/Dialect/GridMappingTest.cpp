//===- GridMappingTest.cpp - The grid-mapping reader and compiler params -*- C++ -*-===//

#include "dialects/Pallas/IR/GridMapping.h"
#include "dialects/Pallas/IR/GpuCallAttrs.h"
#include "dialects/Pallas/IR/PallasOps.h"
#include "src/InitAll.h"
#include "test/TestUtils.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <catch2/catch.hpp>

#include <memory>
#include <string>

using namespace mlir;
using namespace mlir::pallas;
using Catch::Contains;

namespace {

using Context = pallasc::test::DiagnosticContext;

/// A call over a 3-axis grid whose axis 0 vmap added; `params` goes in
/// as the call's compiler_params (empty: none).
std::string callText(const std::string &params) {
  return R"mlir(
pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @k(%x) {grid = array<i64: 3, 4, 2>, vmapped_dims = array<i64: 0>,
      in_specs = [#pallas.block_spec<[8], (b, i, j) -> (j)>],
      out_specs = [#pallas.block_spec<[8], (b, i, j) -> (b + j)>])mlir" +
         (params.empty() ? "" : ", compiler_params = " + params) +
         R"mlir(} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}
)mlir";
}

CallOp firstCall(ModuleOp module) {
  CallOp call;
  module.walk([&](CallOp c) { call = c; });
  return call;
}

} // namespace

TEST_CASE("grid mapping of a vmapped call", "[dialect]") {
  Context c;
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      callText("#pallas.compiler_params<tpu = <dimension_semantics = "
               "[parallel, arbitrary]>>"),
      &c.context);
  REQUIRE(module);
  GridMapping m = GridMapping::get(firstCall(*module));
  CHECK(m.getRank() == 3);
  CHECK(m.getVmappedAxes() == ArrayRef<int64_t>{0});
  CHECK(m.getVisibleAxes() == ArrayRef<int64_t>{1, 2});
  CHECK(m.isVmapped(0));
  CHECK_FALSE(m.isVmapped(1));
  // The user's entries are per visible axis; vmapped axes are parallel.
  CHECK(m.getAxisSemantics(0, DimensionSemantics::Arbitrary) ==
        DimensionSemantics::Parallel);
  CHECK(m.getAxisSemantics(1, DimensionSemantics::Arbitrary) ==
        DimensionSemantics::Parallel);
  CHECK(m.getAxisSemantics(2, DimensionSemantics::Parallel) ==
        DimensionSemantics::Arbitrary);
  // Axis 2 is arbitrary; axis 1 is ignored by the output's index map (its
  // block is revisited); axis 0 is vmapped, never sequential.
  CHECK(m.getSequentialAxes() == SmallVector<int64_t>{1, 2});
  CHECK(c.diagnostics.empty());
}

TEST_CASE("grid mapping without dimension_semantics", "[dialect]") {
  Context c;
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(callText(""), &c.context);
  REQUIRE(module);
  GridMapping m = GridMapping::get(firstCall(*module));
  CHECK(m.getVisibleSemantics().empty());
  // Each backend's default: Mosaic's arbitrary, the GPU's parallel.
  CHECK(m.getAxisSemantics(1, DimensionSemantics::Arbitrary) ==
        DimensionSemantics::Arbitrary);
  CHECK(m.getAxisSemantics(2, DimensionSemantics::Parallel) ==
        DimensionSemantics::Parallel);
  CHECK(m.getSequentialAxes() == SmallVector<int64_t>{1});
}

TEST_CASE("dimension_semantics at the grid's rank is rejected", "[dialect]") {
  Context c;
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      callText("#pallas.compiler_params<tpu = <dimension_semantics = "
               "[parallel, parallel, arbitrary]>>"),
      &c.context);
  CHECK_FALSE(module);
  CHECK_THAT(c.diagnostics,
             Contains("dimension_semantics has 3 entries but the kernel sees "
                      "2 grid axes (grid rank 3, 1 vmapped)"));
}

TEST_CASE("grid mapping from a recorded #pallas.gpu_call", "[dialect]") {
  Context c;
  auto record = [&](const char *text) {
    return dyn_cast_or_null<GpuCallAttr>(parseAttribute(text, &c.context));
  };
  GpuCallAttr call = record(
      "#pallas.gpu_call<kernel = @k, grid = [2, -1], vmapped_dims = [1], "
      "num_scalar_prefetch = 1, input_output_aliases = [1, 0], "
      "in_specs = [#pallas.block_spec<[8], (i, j) -> (i)>], "
      "out_specs = [#pallas.block_spec<[8], (i, j) -> (i)>], "
      "input_types = [tensor<2xi32>, tensor<16xf32>], "
      "output_types = [tensor<16xf32>]>");
  REQUIRE(call);
  CHECK(call.getCallName() == "k");
  GridMapping m = GridMapping::get(call);
  CHECK(m.getGrid() == ArrayRef<int64_t>{2, -1});
  CHECK(m.getVisibleAxes() == ArrayRef<int64_t>{0});
  CHECK(m.getNumScalarPrefetch() == 1);
  REQUIRE(m.getAliases().size() == 1);
  CHECK(m.getAliases()[0] == std::pair<int64_t, int64_t>{1, 0});
  CHECK(m.getInSpecs().size() == 1);
  CHECK_FALSE(m.getCompilerParams());
  CHECK(c.diagnostics.empty());

  // Malformed records: parse errors naming the field or the rule.
  CHECK_FALSE(record("#pallas.gpu_call<kernel = @k, grid = [2], "
                     "in_specs = [], out_specs = [], input_types = [], "
                     "output_types = [], compiler_params = {gpu = "
                     "{num_warps = 4}}>"));
  CHECK_THAT(c.diagnostics,
             Contains("#pallas.gpu_call's 'compiler_params' must be a "
                      "#pallas.compiler_params"));
  CHECK_FALSE(record("#pallas.gpu_call<kernel = @k, in_specs = [], "
                     "out_specs = [], input_types = [], output_types = []>"));
  CHECK_THAT(c.diagnostics, Contains("#pallas.gpu_call needs 'grid'"));
  CHECK_FALSE(record("#pallas.gpu_call<kernel = @k, grid = [2, 4], "
                     "vmapped_dims = [0], in_specs = [], out_specs = [], "
                     "input_types = [], output_types = [], compiler_params = "
                     "#pallas.compiler_params<tpu = <dimension_semantics = "
                     "[parallel, arbitrary]>>>"));
  CHECK_THAT(c.diagnostics,
             Contains("dimension_semantics has 2 entries but the kernel sees "
                      "1 grid axes"));
}

TEST_CASE("compiler params attribute", "[dialect]") {
  Context c;
  auto text = [](Attribute a) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << a;
    return s;
  };
  Attribute a = parseAttribute(
      "#pallas.compiler_params<tpu = <has_side_effects = true>, "
      "gpu = <num_stages = 2, num_warps = 8>>",
      &c.context);
  auto params = dyn_cast_or_null<CompilerParamsAttr>(a);
  REQUIRE(params);
  CHECK(params.getNumWarps() == std::optional<int64_t>(8));
  CHECK(params.getNumStages() == std::optional<int64_t>(2));
  CHECK_FALSE(params.getStrictFp());
  CHECK(params.isSideEffecting());
  CHECK(params.hasGpuPart());
  CHECK(params.hasTpuPart());
  CHECK(text(params) == "#pallas.compiler_params<gpu = <num_warps = 8, "
                        "num_stages = 2>, tpu = <has_side_effects = true>>");
  // dataflow_side_effecting is not side effecting (jax's _has_side_effects).
  auto dataflow = cast<CompilerParamsAttr>(parseAttribute(
      "#pallas.compiler_params<tpu = <has_side_effects = "
      "dataflow_side_effecting>>",
      &c.context));
  CHECK_FALSE(dataflow.isSideEffecting());
  CHECK_FALSE(dataflow.hasGpuPart());
  CHECK(c.diagnostics.empty());

  CHECK_FALSE(parseAttribute("#pallas.compiler_params<gpu = <num_warps = 48>>",
                             &c.context));
  CHECK_THAT(c.diagnostics,
             Contains("compiler_params.gpu.num_warps must be a power of 2 in "
                      "[1, 32], got 48"));
}
