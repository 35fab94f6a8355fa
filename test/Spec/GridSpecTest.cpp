//===- GridSpecTest.cpp - Tests of the JSON grid spec parser ----*- C++ -*-===//
//
// parseGridSpec on valid specs (field by field, defaults) and on every error
// it reports: each error test checks the exact JSON path and the key part of
// the message.
//
//===----------------------------------------------------------------------===//

#include "src/Spec/GridSpec.h"
#include "src/Launch/ElementType.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <sstream>

using namespace pallasc::spec;
using json = nlohmann::json;
using Catch::Contains;

namespace {

/// The matmul example of docs/gridspec.md.
const char *kMatmulSpec = R"json({
  "schema": "pallasc.gridspec/v1",
  "kernel": "matmul_kernel",
  "name": "matmul",
  "grid": [8, 8, 4],
  "grid_names": ["m", "n", "k"],
  "num_scalar_prefetch": 0,
  "inputs":  [{"shape": [1024, 512], "dtype": "bf16"}, {"shape": [512, 1024], "dtype": "bf16"}],
  "outputs": [{"shape": [1024, 1024], "dtype": "f32"}],
  "in_specs": [
    {"block_shape": [128, 128], "index_map": "(m, n, k) -> (m, k)"},
    {"block_shape": [128, 128], "index_map": "(m, n, k) -> (k, n)"}],
  "out_specs": [{"block_shape": [128, 128], "index_map": "(m, n, k) -> (m, n)"}],
  "scratch_shapes": [{"shape": [128, 128], "dtype": "f32", "memory_space": "vmem"}],
  "input_output_aliases": {},
  "cost_estimate": {"flops": 1073741824, "bytes_accessed": 6291456, "transcendentals": 0},
  "compiler_params": {"gpu": {"num_warps": 4, "num_stages": 3}, "tpu": {"dimension_semantics": ["parallel", "parallel", "arbitrary"], "vmem_limit_bytes": 33554432}},
  "metadata": {"owner": "team-x"},
  "transforms": [{"vmap": {"in_axes": [0, null], "axis_size": 4}}, {"jvp": {}}, {"dce": {"used_outputs": [true]}}]
})json";

/// The smallest valid spec: one output, everything else defaulted.
json minimal() {
  return json::parse(R"({"schema": "pallasc.gridspec/v1", "kernel": "k",
                         "outputs": [{"shape": [8, 128], "dtype": "f32"}]})");
}

/// A spec with one scalar-prefetch input and two array inputs.
json withPrefetch() {
  json j = minimal();
  j["grid"] = {4};
  j["num_scalar_prefetch"] = 1;
  j["inputs"] = json::parse(R"([{"shape": [4], "dtype": "i32"},
                                {"shape": [8, 128], "dtype": "f32"},
                                {"shape": [16], "dtype": "bf16"}])");
  return j;
}

std::string dumpErrors(const std::vector<SpecError> &errors) {
  std::ostringstream os;
  for (const SpecError &e : errors)
    os << "  [" << e.path << "] " << e.line << ":" << e.column << " "
       << e.message << "\n";
  return os.str();
}

std::optional<GridSpec> parseOk(const std::string &text) {
  std::vector<SpecError> errors;
  std::optional<GridSpec> spec = parseGridSpec(text, errors);
  INFO("errors:\n" << dumpErrors(errors));
  REQUIRE(spec);
  REQUIRE(errors.empty());
  return spec;
}

std::vector<SpecError> parseFail(const std::string &text) {
  std::vector<SpecError> errors;
  std::optional<GridSpec> spec = parseGridSpec(text, errors);
  REQUIRE_FALSE(spec);
  REQUIRE_FALSE(errors.empty());
  return errors;
}

/// Parses `text`, requires failure and returns the first error at `path`;
/// its message must contain `part`.
SpecError errorAt(const std::string &text, const std::string &path,
                  const std::string &part) {
  std::vector<SpecError> errors = parseFail(text);
  INFO("input: " << text.substr(0, 400));
  INFO("errors:\n" << dumpErrors(errors));
  auto it = std::find_if(errors.begin(), errors.end(),
                         [&](const SpecError &e) { return e.path == path; });
  REQUIRE(it != errors.end());
  REQUIRE_THAT(it->message, Contains(part));
  return *it;
}

SpecError errorAt(const json &j, const std::string &path,
                  const std::string &part) {
  return errorAt(j.dump(), path, part);
}

SpecError errorAt(const char *text, const std::string &path,
                  const std::string &part) {
  return errorAt(std::string(text), path, part);
}

} // namespace

//===----------------------------------------------------------------------===//
// Valid specs
//===----------------------------------------------------------------------===//

TEST_CASE("matmul spec parses field by field", "[spec]") {
  std::optional<GridSpec> spec = parseOk(kMatmulSpec);
  CHECK(spec->kernel == "matmul_kernel");
  CHECK(spec->name == "matmul");
  CHECK(spec->grid == std::vector<int64_t>{8, 8, 4});
  CHECK(spec->gridNames == std::vector<std::string>{"m", "n", "k"});
  CHECK(spec->numScalarPrefetch == 0);

  REQUIRE(spec->inputs.size() == 2);
  CHECK(spec->inputs[0].shape == std::vector<int64_t>{1024, 512});
  CHECK(spec->inputs[0].dtype == "bf16");
  CHECK_FALSE(spec->inputs[0].linear);
  CHECK(spec->inputs[0].path == "inputs[0]");
  CHECK(spec->inputs[1].shape == std::vector<int64_t>{512, 1024});
  CHECK(spec->inputs[1].path == "inputs[1]");
  REQUIRE(spec->outputs.size() == 1);
  CHECK(spec->outputs[0].shape == std::vector<int64_t>{1024, 1024});
  CHECK(spec->outputs[0].dtype == "f32");
  CHECK(spec->outputs[0].path == "outputs[0]");

  REQUIRE(spec->inSpecs.size() == 2);
  const BlockSpec &in0 = spec->inSpecs[0];
  CHECK(in0.hasBlockShape);
  REQUIRE(in0.blockShape.size() == 2);
  CHECK(in0.blockShape[0].kind == BlockDim::Kind::Blocked);
  CHECK(in0.blockShape[0].size == 128);
  CHECK(in0.blockShape[1].size == 128);
  CHECK(in0.indexMap.kind == IndexMap::Kind::Affine);
  CHECK(in0.indexMap.text == "(m, n, k) -> (m, k)");
  CHECK(in0.memorySpace == MemorySpace::Default);
  CHECK(in0.path == "in_specs[0]");
  CHECK(spec->inSpecs[1].indexMap.text == "(m, n, k) -> (k, n)");
  CHECK(spec->inSpecs[1].path == "in_specs[1]");
  REQUIRE(spec->outSpecs.size() == 1);
  CHECK(spec->outSpecs[0].indexMap.text == "(m, n, k) -> (m, n)");
  CHECK(spec->outSpecs[0].path == "out_specs[0]");

  REQUIRE(spec->scratchShapes.size() == 1);
  CHECK(spec->scratchShapes[0].shape == std::vector<int64_t>{128, 128});
  CHECK(spec->scratchShapes[0].dtype == "f32");
  CHECK(spec->scratchShapes[0].memorySpace == MemorySpace::Vmem);
  CHECK(spec->scratchShapes[0].path == "scratch_shapes[0]");

  CHECK(spec->inputOutputAliases.empty());
  REQUIRE(spec->costEstimate);
  CHECK(spec->costEstimate->flops == 1073741824);
  CHECK(spec->costEstimate->bytesAccessed == 6291456);
  CHECK(spec->costEstimate->transcendentals == 0);

  const CompilerParams &cp = spec->compilerParams;
  CHECK(cp.numWarps == 4);
  CHECK(cp.numStages == 3);
  CHECK(cp.dimensionSemantics ==
        std::vector<std::string>{"parallel", "parallel", "arbitrary"});
  CHECK(cp.vmemLimitBytes == 33554432);
  CHECK_FALSE(cp.hasSideEffects);
  CHECK_FALSE(cp.empty());

  CHECK(spec->metadata ==
        std::map<std::string, std::string>{{"owner", "team-x"}});

  REQUIRE(spec->transforms.size() == 3);
  const Transform &vmap = spec->transforms[0];
  CHECK(vmap.kind == Transform::Kind::Vmap);
  REQUIRE(vmap.inAxes.size() == 2);
  CHECK(vmap.inAxes[0] == 0);
  CHECK_FALSE(vmap.inAxes[1]);
  CHECK(vmap.axisSize == 4);
  CHECK(vmap.path == "transforms[0]");
  CHECK(spec->transforms[1].kind == Transform::Kind::Jvp);
  CHECK(spec->transforms[1].path == "transforms[1]");
  CHECK(spec->transforms[2].kind == Transform::Kind::Dce);
  CHECK(spec->transforms[2].usedOutputs == std::vector<bool>{true});
}

TEST_CASE("defaults of a minimal spec", "[spec]") {
  std::optional<GridSpec> spec = parseOk(minimal().dump());
  CHECK(spec->kernel == "k");
  CHECK(spec->name == "k");
  CHECK(spec->grid.empty());
  CHECK(spec->gridNames.empty());
  CHECK(spec->numScalarPrefetch == 0);
  CHECK(spec->inputs.empty());
  CHECK(spec->inSpecs.empty());
  REQUIRE(spec->outSpecs.size() == 1);
  const BlockSpec &out = spec->outSpecs[0];
  CHECK_FALSE(out.hasBlockShape);
  REQUIRE(out.blockShape.size() == 2);
  CHECK(out.blockShape[0].kind == BlockDim::Kind::Blocked);
  CHECK(out.blockShape[0].size == 8);
  CHECK(out.blockShape[1].size == 128);
  CHECK(out.indexMap.kind == IndexMap::Kind::Zeros);
  CHECK(out.indexMap.text.empty());
  CHECK(out.memorySpace == MemorySpace::Default);
  CHECK(out.path == "out_specs[0]");
  CHECK(spec->scratchShapes.empty());
  CHECK(spec->inputOutputAliases.empty());
  CHECK_FALSE(spec->costEstimate);
  CHECK(spec->compilerParams.empty());
  CHECK(spec->metadata.empty());
  CHECK(spec->transforms.empty());
}

TEST_CASE("zero outputs, zero-size dims and a rank-0 array are accepted",
          "[spec]") {
  json j = minimal();
  j["outputs"] = json::array();
  j["inputs"] = json::parse(R"([{"shape": [0, 4], "dtype": "f32"},
                                {"shape": [], "dtype": "i32"}])");
  std::optional<GridSpec> spec = parseOk(j.dump());
  CHECK(spec->outputs.empty());
  REQUIRE(spec->inSpecs.size() == 2);
  CHECK(spec->inSpecs[0].blockShape[0].size == 0);
  CHECK(spec->inSpecs[1].blockShape.empty());
}

TEST_CASE("default in_specs skip the scalar-prefetch inputs", "[spec]") {
  std::optional<GridSpec> spec = parseOk(withPrefetch().dump());
  CHECK(spec->numScalarPrefetch == 1);
  REQUIRE(spec->inSpecs.size() == 2);
  CHECK(spec->inSpecs[0].path == "in_specs[0]");
  REQUIRE(spec->inSpecs[0].blockShape.size() == 2);
  CHECK(spec->inSpecs[0].blockShape[1].size == 128);
  REQUIRE(spec->inSpecs[1].blockShape.size() == 1);
  CHECK(spec->inSpecs[1].blockShape[0].size == 16);
}

TEST_CASE("block dims, index maps and memory spaces", "[spec]") {
  json j = withPrefetch();
  j["grid"] = {4, "dynamic"};
  j["in_specs"] = json::parse(R"json([
    {"block_shape": [null, {"element": 32, "padding": [1, 2]}],
     "index_map": "(i, j) -> ((i floordiv 2) mod 4, max(i, j))"},
    {"index_map": "@map_fn", "memory_space": "smem"}])json");
  j["out_specs"] = json::parse(R"([{"memory_space": "any"}])");
  j["scratch_shapes"] = json::parse(R"([{"shape": [2], "dtype": "int32",
                                         "memory_space": "semaphore"}])");
  std::optional<GridSpec> spec = parseOk(j.dump());
  CHECK(spec->grid == std::vector<int64_t>{4, kDynamicGridDim});
  const BlockSpec &a = spec->inSpecs[0];
  REQUIRE(a.blockShape.size() == 2);
  CHECK(a.blockShape[0].kind == BlockDim::Kind::Squeezed);
  CHECK(a.blockShape[0].size == 1);
  CHECK(a.blockShape[1].kind == BlockDim::Kind::Element);
  CHECK(a.blockShape[1].size == 32);
  CHECK(a.blockShape[1].padLow == 1);
  CHECK(a.blockShape[1].padHigh == 2);
  CHECK(a.indexMap.kind == IndexMap::Kind::Affine);
  const BlockSpec &b = spec->inSpecs[1];
  CHECK(b.indexMap.kind == IndexMap::Kind::Func);
  CHECK(b.indexMap.text == "map_fn");
  CHECK(b.memorySpace == MemorySpace::Smem);
  CHECK_FALSE(b.hasBlockShape);
  CHECK(spec->outSpecs[0].memorySpace == MemorySpace::Any);
  CHECK(spec->scratchShapes[0].dtype == "i32");
  CHECK(spec->scratchShapes[0].memorySpace == MemorySpace::Semaphore);
}

TEST_CASE("aliases are sorted by input index; linear inputs aliased",
          "[spec]") {
  json j = minimal();
  j["inputs"] = json::parse(R"([
    {"shape": [8, 128], "dtype": "f32"}, {"shape": [4], "dtype": "i8"},
    {"shape": [4], "dtype": "int8", "linear": true}])");
  j["outputs"] = json::parse(R"([{"shape": [4], "dtype": "i8"},
                                 {"shape": [8, 128], "dtype": "f32"}])");
  j["input_output_aliases"] = {{"2", 0}, {"0", 1}};
  std::optional<GridSpec> spec = parseOk(j.dump());
  CHECK(spec->inputs[2].linear);
  CHECK(spec->inputOutputAliases ==
        std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {2, 0}});
}

TEST_CASE("compiler params and transforms details", "[spec]") {
  json j = minimal();
  j["grid"] = {2};
  j["inputs"] = json::parse(R"([{"shape": [8, 128], "dtype": "f32"},
                                {"shape": [3], "dtype": "f32"}])");
  j["compiler_params"] = json::parse(
      R"({"tpu": {"has_side_effects": true,
                  "dimension_semantics": ["core_parallel"]}})");
  j["transforms"] = json::parse(R"([
    {"vmap": {"in_axes": [-1, null], "axis_size": 1}},
    {"vmap": {"in_axes": [3, -2], "axis_size": 2}},
    {"hi_to_lo": {}}, {"discharge_state": {}}, {"dce": {"used_outputs": [false]}}])");
  std::optional<GridSpec> spec = parseOk(j.dump());
  CHECK(spec->compilerParams.hasSideEffects);
  CHECK_FALSE(spec->compilerParams.numWarps);
  CHECK_FALSE(spec->compilerParams.empty());
  REQUIRE(spec->transforms.size() == 5);
  // -1 on a rank-2 input is axis 2 of the batched rank-3 array.
  CHECK(spec->transforms[0].inAxes[0] == 2);
  // The second vmap sees inputs[0] with rank 3 (batched once already).
  CHECK(spec->transforms[1].inAxes[0] == 3);
  CHECK(spec->transforms[1].inAxes[1] == 0);
  CHECK(spec->transforms[2].kind == Transform::Kind::HiToLo);
  CHECK(spec->transforms[3].kind == Transform::Kind::DischargeState);
  CHECK(spec->transforms[4].usedOutputs == std::vector<bool>{false});
}

TEST_CASE("brackets inside strings do not count as nesting", "[spec]") {
  json j = minimal();
  j["metadata"] = {{"note", std::string(1000, '[') + "\\\"{{{"}};
  std::optional<GridSpec> spec = parseOk(j.dump());
  CHECK(spec->metadata.at("note").size() == 1005);
}

TEST_CASE("dtype spellings", "[spec]") {
  CHECK(canonicalDtype("float32") == "f32");
  CHECK(canonicalDtype("f32") == "f32");
  CHECK(canonicalDtype("float16") == "f16");
  CHECK(canonicalDtype("float64") == "f64");
  CHECK(canonicalDtype("bfloat16") == "bf16");
  CHECK(canonicalDtype("int8") == "i8");
  CHECK(canonicalDtype("int16") == "i16");
  CHECK(canonicalDtype("int32") == "i32");
  CHECK(canonicalDtype("int64") == "i64");
  CHECK(canonicalDtype("uint8") == "u8");
  CHECK(canonicalDtype("uint16") == "u16");
  CHECK(canonicalDtype("uint32") == "u32");
  CHECK(canonicalDtype("uint64") == "u64");
  CHECK(canonicalDtype("bool_") == "bool");
  CHECK(canonicalDtype("bool") == "bool");
  CHECK_FALSE(canonicalDtype("float8"));
  CHECK_FALSE(canonicalDtype("F32"));
}

TEST_CASE("the spec's dtypes are the element type table's", "[spec]") {
  // Every entry of src/Launch/ElementType's table is a dtype under its
  // canonical spelling and its NumPy name, with the table's size; nothing
  // else is (an integer width the table lacks, a prefix).
  for (const pallasc::launch::ElementTypeInfo &e :
       pallasc::launch::allElementTypes()) {
    INFO(e.name);
    CHECK(canonicalDtype(e.name) == std::string(e.name));
    CHECK(canonicalDtype(e.numpyName) == std::string(e.name));
    CHECK(dtypeByteWidth(e.name) == static_cast<int64_t>(e.size));
  }
  CHECK_FALSE(canonicalDtype("i3"));
  CHECK_FALSE(canonicalDtype("u128"));
  CHECK(dtypeByteWidth("float32") == 0); // canonical spellings only
  CHECK(dtypeByteWidth("i3") == 0);
}

TEST_CASE("an unknown dtype lists the table's", "[spec]") {
  json j = minimal();
  j["outputs"][0]["dtype"] = "qqqqqqqqqqqq";
  std::vector<SpecError> errors;
  REQUIRE_FALSE(parseGridSpec(j.dump(), errors));
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].message ==
        "unknown dtype 'qqqqqqqqqqqq'; expected one of bool, i8, i16, i32, "
        "i64, u8, u16, u32, u64, f16, bf16, f32, f64, f8e4m3fn, f8e5m2, "
        "f8e4m3fnuz, f8e5m2fnuz, i4, u4, i2, u2 (or a numpy name such as "
        "float32)");
  CHECK_FALSE(canonicalDtype(""));
  CHECK(dtypeByteWidth("bool") == 1);
  CHECK(dtypeByteWidth("bf16") == 2);
  CHECK(dtypeByteWidth("u32") == 4);
  CHECK(dtypeByteWidth("f64") == 8);
  CHECK(dtypeByteWidth("nope") == 0);
  // Sub-byte integers: the numpy names are ml_dtypes'.
  CHECK(canonicalDtype("int4") == "i4");
  CHECK(canonicalDtype("uint4") == "u4");
  CHECK(canonicalDtype("int2") == "i2");
  CHECK(canonicalDtype("uint2") == "u2");
  CHECK(std::string(memorySpaceName(MemorySpace::Vmem)) == "vmem");
  CHECK(std::string(memorySpaceName(MemorySpace::Semaphore)) == "semaphore");
}

//===----------------------------------------------------------------------===//
// Syntax errors
//===----------------------------------------------------------------------===//

TEST_CASE("empty input", "[spec][syntax]") {
  std::vector<SpecError> errors = parseFail("");
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].path.empty());
  CHECK_THAT(errors[0].message, Contains("empty"));
  CHECK(errors[0].line == 1);
  CHECK(errors[0].column == 1);
  errors = parseFail(" \n\t\n");
  CHECK_THAT(errors[0].message, Contains("empty"));
  CHECK(errors[0].line == 3);
}

TEST_CASE("garbage and non-UTF-8 bytes", "[spec][syntax]") {
  std::vector<SpecError> errors =
      parseFail(std::string("\xff\xfe\x00garbage", 10));
  REQUIRE(errors.size() == 1);
  CHECK_THAT(errors[0].message, Contains("invalid JSON"));
  CHECK(errors[0].line == 1);
  CHECK(errors[0].column == 1);
  // Messages never carry raw bytes.
  for (char c : errors[0].message)
    CHECK(static_cast<unsigned char>(c) < 0x80);

  errors = parseFail("{\"schema\": \"pallasc.gridspec/v1\",\n \"kernel\": "
                     "\"k\xc3\x28\"}");
  REQUIRE(errors.size() == 1);
  CHECK_THAT(errors[0].message, Contains("UTF-8"));
  CHECK(errors[0].line == 2);

  errors = parseFail("{\"a\": 1} trailing");
  CHECK_THAT(errors[0].message, Contains("invalid JSON"));
  CHECK(errors[0].column == 12); // the byte that made "tr..." invalid

  errors = parseFail("{\"kernel\": \"k\" // comment\n}");
  CHECK_THAT(errors[0].message, Contains("invalid JSON"));
}

TEST_CASE("truncated JSON reports line and column", "[spec][syntax]") {
  std::string text = "{\n  \"schema\": \"pallasc.gridspec/v1\",\n"
                     "  \"grid\": [1, 2";
  std::vector<SpecError> errors = parseFail(text);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].path.empty());
  CHECK_THAT(errors[0].message, Contains("unexpected end of input"));
  CHECK(errors[0].line == 3);
  CHECK(errors[0].column == 16); // just past the last character

  errors = parseFail("{\"grid\": [1, 2,\n  ]}");
  CHECK(errors[0].line == 2);
  CHECK(errors[0].column == 3);
}

TEST_CASE("top level must be an object", "[spec][syntax]") {
  errorAt("[]", "", "expected a JSON object at the top level, got array");
  errorAt("42", "", "got integer 42");
  errorAt("\"x\"", "", "got string");
  errorAt("null", "", "got null");
}

TEST_CASE("deep nesting is rejected without recursion", "[spec][syntax]") {
  std::vector<SpecError> errors = parseFail(std::string(100000, '['));
  REQUIRE(errors.size() == 1);
  CHECK_THAT(errors[0].message, Contains("nest deeper than the limit of 64"));
  CHECK(errors[0].line == 1);
  CHECK(errors[0].column == 65);

  std::string objects;
  for (int i = 0; i < 100000; ++i)
    objects += "{\"a\":";
  errors = parseFail(objects);
  CHECK_THAT(errors[0].message, Contains("limit of 64"));

  // 64 levels are fine syntactically (the spec is invalid for other reasons).
  errorAt("{\"metadata\": " + std::string(63, '[') + std::string(63, ']') + "}",
          "metadata", "expected an object");
}

//===----------------------------------------------------------------------===//
// Structural errors
//===----------------------------------------------------------------------===//

TEST_CASE("duplicate keys", "[spec]") {
  errorAt(R"({"schema": "pallasc.gridspec/v1", "kernel": "a", "kernel": "b",
              "outputs": []})",
          "kernel", "duplicate key 'kernel'");
  json j = withPrefetch();
  std::string text = j.dump();
  text.insert(text.size() - 1,
              R"(, "in_specs": [{}, {"block_shape": [{"element": 2,
                   "element": 4}]}])");
  errorAt(text, "in_specs[1].block_shape[0].element",
          "duplicate key 'element'");
}

TEST_CASE("unknown keys", "[spec]") {
  json j = minimal();
  j["grdi"] = {1};
  errorAt(j, "grdi", "unknown key 'grdi' (did you mean 'grid'?)");

  j = withPrefetch();
  j["in_specs"] = json::parse(R"([{}, {"blok_shape": [16]}])");
  errorAt(j, "in_specs[1].blok_shape",
          "unknown key 'blok_shape' (did you mean 'block_shape'?)");

  j = minimal();
  j["compiler_params"] = {{"gpu", {{"num_warp", 4}}}};
  errorAt(j, "compiler_params.gpu.num_warp", "did you mean 'num_warps'?");

  j = minimal();
  j["zzz"] = 1;
  errorAt(j, "zzz", "expected 'schema', 'kernel'");

  j = minimal();
  j["outputs"][0]["linear"] = true;
  errorAt(j, "outputs[0].linear", "only inputs can be linear");

  j = minimal();
  j["transforms"] = json::parse(R"([{"jvp": {"x": 1}}])");
  errorAt(j, "transforms[0].jvp.x", "takes no keys");

  j = minimal();
  j["cost_estimate"] = json::parse(
      R"({"flops": 1, "bytes_accessed": 1, "transcendentals": 0, "x": 0})");
  errorAt(j, "cost_estimate.x", "unknown key 'x'");
}

TEST_CASE("grid_spec is rejected with an explanation", "[spec]") {
  json j = minimal();
  j["grid_spec"] = json::object();
  errorAt(j, "grid_spec",
          "takes 'grid', 'in_specs', 'out_specs' and "
          "'scratch_shapes' directly");
}

TEST_CASE("schema, kernel and name", "[spec]") {
  json j = minimal();
  j.erase("schema");
  errorAt(j, "", "missing required key 'schema'");
  j = minimal();
  j["schema"] = "pallasc.gridspec/v2";
  errorAt(j, "schema", "unsupported schema 'pallasc.gridspec/v2'");
  j["schema"] = 1;
  errorAt(j, "schema", "got integer 1");
  j = minimal();
  j.erase("kernel");
  errorAt(j, "", "missing required key 'kernel'");
  j = minimal();
  j["kernel"] = "";
  errorAt(j, "kernel", "expected an identifier");
  j["kernel"] = "1abc";
  errorAt(j, "kernel", "got string \"1abc\"");
  j = minimal();
  j["name"] = "has space";
  errorAt(j, "name", "expected an identifier");
  j = minimal();
  j.erase("outputs");
  errorAt(j, "", "missing required key 'outputs'");
}

TEST_CASE("wrong JSON types", "[spec]") {
  json j = minimal();
  j["num_scalar_prefetch"] = "1";
  errorAt(j, "num_scalar_prefetch",
          "expected a non-negative integer, got string");
  j = minimal();
  j["grid"] = {"a"};
  errorAt(j, "grid[0]", "expected a positive integer or \"dynamic\"");
  j["grid"] = {true};
  errorAt(j, "grid[0]", "got boolean true");
  j["grid"] = "dynamic";
  errorAt(j, "grid", "expected an array");
  j = minimal();
  j["outputs"][0]["shape"] = {8, -1};
  errorAt(j, "outputs[0].shape[1]", "expected a non-negative integer, got -1");
  j["outputs"][0]["shape"] = {8, 1.5};
  errorAt(j, "outputs[0].shape[1]", "non-integer number 1.5");
  j["outputs"][0]["shape"] = {8, 2.0};
  errorAt(j, "outputs[0].shape[1]", "got the floating-point number 2.0");
  j["outputs"][0]["shape"] = {8, nullptr};
  errorAt(j, "outputs[0].shape[1]", "got null");
  j["outputs"][0]["shape"] = 8;
  errorAt(j, "outputs[0].shape", "expected an array");
  j = minimal();
  j["outputs"][0]["dtype"] = "float8";
  errorAt(j, "outputs[0].dtype", "unknown dtype 'float8'");
  j["outputs"][0]["dtype"] = "flaot32";
  errorAt(j, "outputs[0].dtype", "did you mean 'float32'?");
  j = minimal();
  j["outputs"][0].erase("dtype");
  errorAt(j, "outputs[0]", "missing required key 'dtype'");
  j = minimal();
  j["outputs"] = {1};
  errorAt(j, "outputs[0]", "got integer 1");
  j = minimal();
  j["inputs"] = json::parse(R"([{"shape": [1], "dtype": "f32", "linear": 1}])");
  errorAt(j, "inputs[0].linear", "expected a boolean, got integer 1");
  j = minimal();
  j["metadata"] = {{"owner", 3}};
  errorAt(j, "metadata.owner", "expected a string, got integer 3");
  j["metadata"] = json::array();
  errorAt(j, "metadata", "expected an object");
}

TEST_CASE("huge numbers", "[spec]") {
  auto withDim = [](const std::string &dim) {
    return R"({"schema": "pallasc.gridspec/v1", "kernel": "k",
               "outputs": [{"shape": [)" +
           dim + R"(], "dtype": "f32"}]})";
  };
  errorAt(withDim("1e30"), "outputs[0].shape[0]", "outside the int64 range");
  errorAt(withDim("9223372036854775808"), "outputs[0].shape[0]",
          "got 9223372036854775808, which is outside the int64 range");
  errorAt(withDim("99999999999999999999999"), "outputs[0].shape[0]",
          "outside the int64 range");
  errorAt(withDim("-9223372036854775808"), "outputs[0].shape[0]",
          "got -9223372036854775808");
  std::vector<SpecError> errors = parseFail(withDim("1e400"));
  CHECK_THAT(errors[0].message, Contains("invalid JSON"));
  // 2^63 - 1 itself is fine as a value.
  json j = minimal();
  j["cost_estimate"] = {
      {"flops", INT64_MAX}, {"bytes_accessed", 0}, {"transcendentals", 0}};
  CHECK(parseOk(j.dump())->costEstimate->flops == INT64_MAX);
}

TEST_CASE("overflow of shapes, byte sizes, grids and blocks", "[spec]") {
  json j = minimal();
  j["outputs"][0]["shape"] = {int64_t(1) << 32, int64_t(1) << 32};
  errorAt(j, "outputs[0].shape",
          "the number of elements of shape [4294967296,4294967296] overflows "
          "int64");
  j["outputs"][0]["shape"] = {int64_t(1) << 31, int64_t(1) << 31};
  errorAt(j, "outputs[0]",
          "the size in bytes of [2147483648,2147483648] f32 "
          "overflows int64");
  j = minimal();
  j["scratch_shapes"] =
      json::parse(R"([{"shape": [4611686018427387904], "dtype": "f64"}])");
  errorAt(j, "scratch_shapes[0]", "size in bytes");
  j = minimal();
  j["grid"] = {int64_t(1) << 40, "dynamic", int64_t(1) << 40};
  errorAt(j, "grid", "overflows int64");
  j = minimal();
  j["out_specs"] =
      json::parse(R"([{"block_shape": [4294967296, 4294967296]}])");
  errorAt(j, "out_specs[0].block_shape", "overflows int64");
  j["out_specs"] = json::parse(
      R"([{"block_shape": [1, {"element": 9223372036854775807, "padding": [1, 0]}]}])");
  errorAt(j, "out_specs[0].block_shape[1].padding", "overflows int64");
}

TEST_CASE("limits on ranks and counts", "[spec]") {
  json j = minimal();
  j["outputs"][0]["shape"] = std::vector<int>(17, 1);
  errorAt(j, "outputs[0].shape", "exceeds the limit of 16");
  j = minimal();
  j["grid"] = std::vector<int>(17, 1);
  errorAt(j, "grid", "grid has rank 17, which exceeds the limit of 16");
  j = minimal();
  j["inputs"] = json::array();
  for (int i = 0; i < 4097; ++i)
    j["inputs"].push_back({{"shape", {1}}, {"dtype", "f32"}});
  errorAt(j, "inputs", "4097 entries, which exceeds the limit of 4096");
  j = minimal();
  j["out_specs"] =
      json::parse(R"([{"block_shape": [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]}])");
  errorAt(j, "out_specs[0].block_shape", "exceeds the limit of 16");
}

TEST_CASE("errors are gathered but capped", "[spec]") {
  json j = minimal();
  j["outputs"][0]["shape"] = {"a", "b"};
  j["kernel"] = 3;
  std::vector<SpecError> errors = parseFail(j.dump());
  CHECK(errors.size() == 3);

  j = minimal();
  for (int i = 0; i < 200; ++i)
    j["bad" + std::to_string(i)] = i;
  errors = parseFail(j.dump());
  CHECK(errors.size() == 51);
  CHECK_THAT(errors.back().message, Contains("too many errors"));

  // Errors already in the vector are kept.
  errors = {{"x", "earlier"}};
  CHECK_FALSE(parseGridSpec("[]", errors));
  CHECK(errors.size() == 2);
}

//===----------------------------------------------------------------------===//
// Counts
//===----------------------------------------------------------------------===//

TEST_CASE("in_specs and out_specs counts", "[spec]") {
  json j = withPrefetch();
  j["in_specs"] = json::parse(R"([{}, {}, {}])");
  errorAt(j, "in_specs",
          "in_specs has 3 entries, expected one per "
          "non-prefetch input: 2 (3 inputs, 1 scalar-prefetch)");
  j = minimal();
  j["out_specs"] = json::array();
  errorAt(j, "out_specs",
          "out_specs has 0 entries, expected one per output: 1");
  j["out_specs"] = {1};
  errorAt(j, "out_specs[0]", "expected a block spec object, got integer 1");
}

TEST_CASE("grid_names", "[spec]") {
  json j = minimal();
  j["grid"] = {2, 3};
  j["grid_names"] = {"i"};
  errorAt(j, "grid_names", "grid_names has 1 entry but the grid has rank 2");
  j["grid_names"] = {"i", "i"};
  errorAt(j, "grid_names[1]", "duplicate grid name 'i'");
  j["grid_names"] = {"i", "2"};
  errorAt(j, "grid_names[1]", "expected an identifier");
}

TEST_CASE("num_scalar_prefetch", "[spec]") {
  json j = withPrefetch();
  j["num_scalar_prefetch"] = 4;
  errorAt(j, "num_scalar_prefetch",
          "num_scalar_prefetch is 4 but the spec has only 3 inputs");
  j["num_scalar_prefetch"] = -1;
  errorAt(j, "num_scalar_prefetch", "got -1");
  j = withPrefetch();
  j["num_scalar_prefetch"] = 2;
  errorAt(j, "inputs[1].dtype",
          "inputs[1] is a scalar-prefetch operand (num_scalar_prefetch is 2) "
          "and must have an integer dtype, got f32");
}

//===----------------------------------------------------------------------===//
// Block specs and index maps
//===----------------------------------------------------------------------===//

TEST_CASE("block rank must match the array rank", "[spec]") {
  json j = withPrefetch();
  j["in_specs"] = json::parse(R"([{"block_shape": [8, 128, 1]}, {}])");
  errorAt(j, "in_specs[0].block_shape",
          "in_specs[0].block_shape has 3 entries but inputs[1] has rank 2");
  j = minimal();
  j["out_specs"] = json::parse(R"([{"block_shape": [8]}])");
  errorAt(j, "out_specs[0].block_shape",
          "out_specs[0].block_shape has 1 entry but outputs[0] has rank 2");
}

TEST_CASE("block dims", "[spec]") {
  json j = minimal();
  j["out_specs"] = json::parse(R"([{"block_shape": [0, 128]}])");
  errorAt(j, "out_specs[0].block_shape[0]",
          "expected a positive block size, got 0");
  j["out_specs"] = json::parse(R"([{"block_shape": ["8", 128]}])");
  errorAt(j, "out_specs[0].block_shape[0]", "null (squeezed)");
  j["out_specs"] = json::parse(R"([{"block_shape": [{"element": 0}, 128]}])");
  errorAt(j, "out_specs[0].block_shape[0].element", "positive block size");
  j["out_specs"] =
      json::parse(R"([{"block_shape": [{"padding": [0, 0]}, 128]}])");
  errorAt(j, "out_specs[0].block_shape[0]", "missing required key 'element'");
  j["out_specs"] = json::parse(
      R"([{"block_shape": [{"element": 8, "padding": [0, -1]}, 128]}])");
  errorAt(j, "out_specs[0].block_shape[0].padding[1]", "non-negative padding");
  j["out_specs"] = json::parse(
      R"([{"block_shape": [{"element": 8, "padding": [0]}, 128]}])");
  errorAt(j, "out_specs[0].block_shape[0].padding", "an array of 1 entry");
  j["out_specs"] =
      json::parse(R"([{"block_shape": [{"element": 8, "pad": [0, 0]}, 128]}])");
  errorAt(j, "out_specs[0].block_shape[0].pad",
          "unknown key 'pad'; expected 'element' or 'padding'");
}

TEST_CASE("memory spaces", "[spec]") {
  json j = minimal();
  j["out_specs"] =
      json::parse(R"([{"block_shape": [8, 128], "memory_space": "any"}])");
  errorAt(j, "out_specs[0].block_shape",
          "cannot be given with memory_space 'any'");
  j["out_specs"] = json::parse(R"([{"memory_space": "vram"}])");
  errorAt(j, "out_specs[0].memory_space", "unknown memory space 'vram'");
  j = minimal();
  j["scratch_shapes"] =
      json::parse(R"([{"shape": [1], "dtype": "f32", "memory_space": 1}])");
  errorAt(j, "scratch_shapes[0].memory_space", "expected a memory space");
}

TEST_CASE("buffer counts", "[spec]") {
  json j = minimal();
  j["out_specs"] =
      json::parse(R"([{"block_shape": [8, 128], "buffer_count": 3}])");
  std::optional<GridSpec> spec = parseOk(j.dump());
  CHECK(spec->outSpecs[0].bufferCount == 3);
  j["out_specs"] =
      json::parse(R"([{"block_shape": [8, 128], "buffer_count": 0}])");
  errorAt(j, "out_specs[0].buffer_count",
          "expected a positive buffer count, got 0");
  j["out_specs"] =
      json::parse(R"([{"memory_space": "any", "buffer_count": 2}])");
  errorAt(j, "out_specs[0].buffer_count",
          "a block spec in memory_space 'any' is not pipelined (the kernel "
          "sees the whole array): it takes no buffer_count");
}

TEST_CASE("index maps", "[spec]") {
  json j = minimal();
  j["grid"] = {2, 2};
  auto withMap = [&](const json &map) {
    json k = j;
    k["out_specs"] = {{{"index_map", map}}};
    return k;
  };
  errorAt(withMap("(i, j) -> (i)"), "out_specs[0].index_map",
          "returns 1 index but outputs[0] has rank 2");
  errorAt(withMap("(i) -> (i, 0)"), "out_specs[0].index_map",
          "takes 1 grid index but the grid has rank 2");
  errorAt(withMap("i -> i"), "out_specs[0].index_map",
          "expected '@name' or an affine map");
  errorAt(withMap("(i, j) (i, j)"), "out_specs[0].index_map", "expected '->'");
  errorAt(withMap("(i, j -> (i, j)"), "out_specs[0].index_map",
          "unbalanced parentheses");
  errorAt(withMap("(i, j) -> i, j"), "out_specs[0].index_map",
          "expected a parenthesized result list");
  errorAt(withMap("(i, j) -> (i, j) + 1"), "out_specs[0].index_map",
          "unexpected text after the result list");
  errorAt(withMap("(i, j) -> (i, )"), "out_specs[0].index_map",
          "empty expression");
  errorAt(withMap("(i, 2) -> (i, i)"), "out_specs[0].index_map",
          "expected an identifier for each grid index");
  errorAt(withMap("@"), "out_specs[0].index_map",
          "expected '@' followed by a function name");
  errorAt(withMap(3), "out_specs[0].index_map", "expected a string");
  // A func map's arity is checked against the kernel module later.
  json k = withMap("@idx");
  CHECK(parseOk(k.dump())->outSpecs[0].indexMap.text == "idx");
  k = withMap("(i, j) -> (i * 2 + (j floordiv 3), (i, j))");
  CHECK(parseOk(k.dump())->outSpecs[0].indexMap.kind == IndexMap::Kind::Affine);
}

//===----------------------------------------------------------------------===//
// Aliases
//===----------------------------------------------------------------------===//

TEST_CASE("input_output_aliases", "[spec]") {
  json j = withPrefetch();
  j["outputs"] = json::parse(R"([{"shape": [8, 128], "dtype": "bf16"},
                                 {"shape": [16], "dtype": "bf16"}])");
  auto withAliases = [&](const json &aliases) {
    json k = j;
    k["input_output_aliases"] = aliases;
    return k;
  };
  errorAt(withAliases({{"5", 0}}), "input_output_aliases.5",
          "input_output_aliases contains the mapping '5:0' with input index 5 "
          "outside the range [0, 3)");
  errorAt(withAliases({{"-1", 0}}), "input_output_aliases.-1",
          "with input index -1 outside the range [0, 3)");
  errorAt(withAliases({{"2", 2}}), "input_output_aliases.2",
          "the mapping '2:2' with output index 2 outside the range [0, 2)");
  errorAt(withAliases({{"1", 0}}), "input_output_aliases.1",
          "the mapping '1:0' referring to inputs[1] with shape [8,128] f32 "
          "and to outputs[0] with a different shape/dtype [8,128] bf16");
  errorAt(withAliases({{"2", 0}}), "input_output_aliases.2",
          "with shape [16] bf16 and to outputs[0] with a different "
          "shape/dtype [8,128] bf16");
  errorAt(withAliases({{"x", 0}}), "input_output_aliases.x",
          "expected a decimal input index");
  errorAt(withAliases({{"02", 1}}), "input_output_aliases.02",
          "expected a decimal input index");
  errorAt(withAliases({{"2", "1"}}), "input_output_aliases.2",
          "got string \"1\"");
  errorAt(withAliases(json::array()), "input_output_aliases",
          "expected an object");
  errorAt(withAliases({{"99999999999999999999", 0}}),
          "input_output_aliases.99999999999999999999", "outside the range");

  j["inputs"][0] = {{"shape", {16}}, {"dtype", "bf16"}};
  j["num_scalar_prefetch"] = 0;
  j["in_specs"] = json::parse("[{}, {}, {}]");
  errorAt(withAliases({{"0", 1}, {"2", 1}}), "input_output_aliases.2",
          "maps both inputs[0] and inputs[2] to outputs[1]");
  // Aliasing counts the scalar-prefetch inputs too.
  json ok = withPrefetch();
  ok["outputs"] = json::parse(R"([{"shape": [4], "dtype": "i32"}])");
  ok["input_output_aliases"] = {{"0", 0}};
  CHECK(parseOk(ok.dump())->inputOutputAliases ==
        std::vector<std::pair<int64_t, int64_t>>{{0, 0}});
}

TEST_CASE("linear inputs must be aliased", "[spec]") {
  json j = minimal();
  j["inputs"] = json::parse(R"([{"shape": [8, 128], "dtype": "f32"},
                                {"shape": [8, 128], "dtype": "f32", "linear": true}])");
  errorAt(j, "inputs[1].linear",
          "input pinned buffers without input_output_aliases: inputs[1]");
  j["input_output_aliases"] = {{"0", 0}};
  errorAt(j, "inputs[1].linear", "input pinned buffers");
  j["input_output_aliases"] = {{"1", 0}};
  parseOk(j.dump());
}

//===----------------------------------------------------------------------===//
// Cost estimate, compiler params, transforms
//===----------------------------------------------------------------------===//

TEST_CASE("cost_estimate", "[spec]") {
  json j = minimal();
  j["cost_estimate"] = {{"flops", 1}, {"bytes_accessed", 2}};
  errorAt(j, "cost_estimate", "missing required key 'transcendentals'");
  j["cost_estimate"]["transcendentals"] = -3;
  errorAt(j, "cost_estimate.transcendentals",
          "expected a non-negative integer, got -3");
  j["cost_estimate"] = 5;
  errorAt(j, "cost_estimate", "expected an object, got integer 5");
}

TEST_CASE("compiler_params", "[spec]") {
  json j = minimal();
  j["grid"] = {2, 2};
  auto withParams = [&](const char *text) {
    json k = j;
    k["compiler_params"] = json::parse(text);
    return k;
  };
  errorAt(withParams(R"({"gpu": {"num_warps": 3}})"),
          "compiler_params.gpu.num_warps",
          "expected a power of 2 in [1, 32], got 3");
  errorAt(withParams(R"({"gpu": {"num_warps": 64}})"),
          "compiler_params.gpu.num_warps", "got 64");
  errorAt(withParams(R"({"gpu": {"num_warps": 0}})"),
          "compiler_params.gpu.num_warps", "got 0");
  errorAt(withParams(R"({"gpu": {"num_stages": 0}})"),
          "compiler_params.gpu.num_stages", "expected a positive integer");
  errorAt(withParams(R"({"tpu": {"dimension_semantics": ["parallel"]}})"),
          "compiler_params.tpu.dimension_semantics",
          "dimension_semantics has 1 entry but the grid has rank 2");
  errorAt(
      withParams(R"({"tpu": {"dimension_semantics": ["parallel", "serial"]}})"),
      "compiler_params.tpu.dimension_semantics[1]",
      "expected 'parallel', 'arbitrary', 'core_parallel' or "
      "'subcore_parallel', got string \"serial\"");
  errorAt(withParams(R"({"tpu": {"vmem_limit_bytes": 0}})"),
          "compiler_params.tpu.vmem_limit_bytes", "positive integer");
  errorAt(withParams(R"({"tpu": {"has_side_effects": "yes"}})"),
          "compiler_params.tpu.has_side_effects", "expected a boolean");
  errorAt(withParams(R"({"tpu": {"collective_id": -1}})"),
          "compiler_params.tpu.collective_id",
          "expected an integer in [0, 2^31), got -1");
  errorAt(withParams(R"({"tpu": {"collective_id": 2147483648}})"),
          "compiler_params.tpu.collective_id",
          "expected an integer in [0, 2^31), got 2147483648");
  errorAt(withParams(R"({"cuda": {}})"), "compiler_params.cuda",
          "unknown key 'cuda'");
  errorAt(withParams(R"({"gpu": []})"), "compiler_params.gpu",
          "expected an object");
}

TEST_CASE("transforms", "[spec]") {
  json j = minimal();
  j["inputs"] = json::parse(R"([{"shape": [8, 128], "dtype": "f32"},
                                {"shape": [3], "dtype": "f32"}])");
  auto withTransforms = [&](const char *text) {
    json k = j;
    k["transforms"] = json::parse(text);
    return k;
  };
  errorAt(withTransforms(R"([{"vamp": {}}])"), "transforms[0].vamp",
          "unknown transform 'vamp' (did you mean 'vmap'?)");
  errorAt(withTransforms(R"([{"jvp": {}, "dce": {}}])"), "transforms[0]",
          "exactly one key");
  errorAt(withTransforms(R"([{}])"), "transforms[0]", "got 0 keys");
  errorAt(withTransforms(R"(["jvp"])"), "transforms[0]", "got string");
  errorAt(withTransforms(R"([{"jvp": null}])"), "transforms[0].jvp",
          "expected an object, got null");
  errorAt(withTransforms(R"([{"vmap": {"in_axes": [0, 0]}}])"),
          "transforms[0].vmap", "missing required key 'axis_size'");
  errorAt(withTransforms(R"([{"vmap": {"in_axes": [0, 0], "axis_size": 0}}])"),
          "transforms[0].vmap.axis_size", "positive integer");
  errorAt(withTransforms(R"([{"vmap": {"in_axes": [0], "axis_size": 2}}])"),
          "transforms[0].vmap.in_axes",
          "in_axes has 1 entry but the spec has 2 inputs");
  errorAt(withTransforms(R"([{"vmap": {"in_axes": [3, 0], "axis_size": 2}}])"),
          "transforms[0].vmap.in_axes[0]",
          "batch axis 3 is out of range for inputs[0] of rank 2 (expected "
          "[-3, 2])");
  errorAt(withTransforms(R"([{"vmap": {"in_axes": [0, -3], "axis_size": 2}}])"),
          "transforms[0].vmap.in_axes[1]", "batch axis -3 is out of range");
  errorAt(
      withTransforms(R"([{"vmap": {"in_axes": [0, "0"], "axis_size": 2}}])"),
      "transforms[0].vmap.in_axes[1]", "an integer axis or null");
  errorAt(withTransforms(R"([{"dce": {"used_outputs": [true, false]}}])"),
          "transforms[0].dce.used_outputs",
          "used_outputs has 2 entries but the spec has 1 output");
  errorAt(withTransforms(R"([{"dce": {"used_outputs": [1]}}])"),
          "transforms[0].dce.used_outputs[0]", "expected a boolean");
  errorAt(withTransforms(R"([{"dce": {}}])"), "transforms[0].dce",
          "missing required key 'used_outputs'");
  errorAt(withTransforms(R"({"jvp": {}})"), "transforms", "expected an array");
}

namespace {

/// An RMSNorm-like spec over `n` rows: grid cdiv(n, 8), blocks of 8 rows.
json symbolic() {
  return json::parse(R"json({
    "schema": "pallasc.gridspec/v1", "kernel": "k",
    "symbols": {"n": {"min": 1, "max": 65536, "multiple_of": 1}},
    "grid": ["cdiv(n, 8)"],
    "inputs": [{"shape": ["n", 4096], "dtype": "f32"},
               {"shape": [4096], "dtype": "f32"}],
    "outputs": [{"shape": ["n", 4096], "dtype": "f32"}],
    "in_specs": [{"block_shape": [8, 4096], "index_map": "(i) -> (i, 0)"},
                 {"block_shape": [4096], "index_map": "(i) -> (0)"}],
    "out_specs": [{"block_shape": [8, 4096], "index_map": "(i) -> (i, 0)"}]
  })json");
}

} // namespace

TEST_CASE("symbols, symbolic shapes and grid expressions", "[gridspec]") {
  auto spec = parseOk(symbolic().dump());
  REQUIRE(spec->symbols.size() == 1);
  CHECK(spec->symbols[0].name == "n");
  CHECK(spec->symbols[0].min == 1);
  CHECK(spec->symbols[0].max == 65536);
  CHECK(spec->symbols[0].path == "symbols.n");
  REQUIRE(spec->grid == std::vector<int64_t>{kSymbolicGridDim});
  REQUIRE(spec->gridExprs.size() == 1);
  CHECK(spec->gridExprs[0].str() == "cdiv(n, 8)");
  CHECK(spec->inputs[0].shape == std::vector<int64_t>{kSymbolicDim, 4096});
  REQUIRE(spec->inputs[0].isSymbolic());
  CHECK(spec->inputs[0].shapeExprs[0].str() == "n");
  CHECK(spec->inputs[0].shapeExprs[1].str() == "4096");
  CHECK_FALSE(spec->inputs[1].isSymbolic());
  CHECK(spec->outputs[0].isSymbolic());
  auto use = firstSymbolUse(*spec);
  REQUIRE(use);
  CHECK(use->first == "n");
  CHECK(use->second == "grid[0]");

  // Expressions, a static grid beside them, and "dynamic" still work.
  json j = symbolic();
  j["symbols"]["m"] = json::object();
  j["grid"] = {"n // 8", 2, "dynamic"};
  j["inputs"][0]["shape"] = {"2*n + 8", "m"};
  j["outputs"][0]["shape"] = {"n", "4096"};
  j["in_specs"][0]["index_map"] = "(i, j, k) -> (i, 0)";
  j["in_specs"][1]["index_map"] = "(i, j, k) -> (0)";
  j["out_specs"][0]["index_map"] = "(i, j, k) -> (i, 0)";
  spec = parseOk(j.dump());
  CHECK(spec->grid ==
        std::vector<int64_t>{kSymbolicGridDim, 2, kDynamicGridDim});
  CHECK(spec->gridExprs[0].str() == "n // 8");
  CHECK(spec->inputs[0].shapeExprs[0].str() == "2*n + 8");
  // A constant expression is a static dimension.
  CHECK(spec->outputs[0].shape == std::vector<int64_t>{kSymbolicDim, 4096});

  // Declared but unused symbols leave the spec static.
  j = minimal();
  j["symbols"] = {{"n", json::object()}};
  spec = parseOk(j.dump());
  CHECK_FALSE(firstSymbolUse(*spec));
  CHECK(spec->gridExprs.empty());
}

TEST_CASE("symbol errors", "[gridspec]") {
  json j = symbolic();
  j["symbols"] = {{"n", {{"min", 0}}}};
  errorAt(j, "symbols.n.min", "symbols are >= 1");
  j["symbols"] = {{"n", {{"min", 8}, {"max", 4}}}};
  errorAt(j, "symbols.n.max", "has max 4 below its min 8");
  j["symbols"] = {{"n", {{"min", 9}, {"max", 15}, {"multiple_of", 16}}}};
  errorAt(j, "symbols.n", "no multiple of 16 lies in [9, 15]");
  j["symbols"] = {{"n", {{"multipel_of", 8}}}};
  errorAt(j, "symbols.n.multipel_of", "did you mean 'multiple_of'?");
  j["symbols"] = {{"2n", json::object()}};
  errorAt(j, "symbols.2n", "invalid symbol name");
  j["symbols"] = {{"cdiv", json::object()}};
  errorAt(j, "symbols.cdiv", "is reserved");
  // The generated entry point takes `int64_t NAME`: names C cannot take,
  // or that another parameter has, are refused.
  j["symbols"] = {{"int", json::object()}};
  errorAt(j, "symbols.int", "symbol name 'int' cannot name the generated "
                            "entry point's parameter for it (`int64_t int`): "
                            "it is a C or C++ keyword; rename the symbol");
  j["symbols"] = {{"class", json::object()}};
  errorAt(j, "symbols.class", "it is a C or C++ keyword");
  j["symbols"] = {{"in0", json::object()}};
  errorAt(j, "symbols.in0", "names its operands in0, in1");
  j["symbols"] = {{"out12", json::object()}};
  errorAt(j, "symbols.out12", "names its operands in0, in1");
  j["symbols"] = {{"grid_i", json::object()}};
  errorAt(j, "symbols.grid_i", "dynamic grid bounds grid_<axis>");
  j["symbols"] = {{"stream", json::object()}};
  errorAt(j, "symbols.stream", "take the stream as `stream`");
  j["symbols"] = {{"int64_t", json::object()}};
  errorAt(j, "symbols.int64_t", "end in '_t' are reserved");
  j["symbols"] = {{"_n", json::object()}};
  errorAt(j, "symbols._n", "start with '_'");
  j["symbols"] = {{"n", 8}};
  errorAt(j, "symbols.n", "expected an object");
  j["symbols"] = json::array();
  errorAt(j, "symbols", "expected an object mapping symbol names");
}

TEST_CASE("symbolic shape and grid errors", "[gridspec]") {
  json j = symbolic();
  j["inputs"][0]["shape"] = {"m", 4096};
  errorAt(j, "inputs[0].shape[0]", "unknown symbol 'm' (did you mean 'n'?)");
  j = symbolic();
  j["inputs"][0]["shape"] = {"rows", 4096};
  errorAt(j, "inputs[0].shape[0]",
          "unknown symbol 'rows'; the declared symbols are 'n'");
  j = symbolic();
  j["inputs"][0]["shape"] = {"2*n + k", 4096};
  errorAt(j, "inputs[0].shape[0]", "unknown symbol 'k' in '2*n + k'");
  j = minimal();
  j["outputs"][0]["shape"] = {"n", 128};
  errorAt(j, "outputs[0].shape[0]",
          "expected a non-negative integer, got string \"n\" (a symbol "
          "expression needs the symbols declared in the top-level "
          "\"symbols\" object)");
  j = symbolic();
  j["inputs"][0]["shape"] = {"n*n", 4096};
  errorAt(j, "inputs[0].shape[0]", "the product n * n is not linear");
  j = symbolic();
  j["inputs"][0]["shape"] = {"n // 2", 4096};
  errorAt(j, "inputs[0].shape[0]",
          "an array dimension must be a linear expression");
  j = symbolic();
  j["inputs"][0]["shape"] = {"n - 8", 4096};
  errorAt(j, "inputs[0].shape[0]",
          "'n - 8' is -7 at n = 1; expected an array dimension that is never "
          "negative");
  j = symbolic();
  j["symbols"]["m"] = json::object();
  j["inputs"][0]["shape"] = {"n - m", 4096};
  errorAt(j, "inputs[0].shape[0]", "'n - m' may be negative");
  j = symbolic();
  j["grid"] = {"cdiv(n, n)"};
  errorAt(j, "grid[0]", "only divisions by a positive integer are decidable");
  j = symbolic();
  j["grid"] = {"8 // 16"};
  errorAt(j, "grid[0]", "'8 // 16' is 0; expected a positive grid size");
  j = symbolic();
  j["grid"] = {"n \x01"};
  errorAt(j, "grid[0]", "unexpected '\\x01' after a complete expression");
  j = symbolic();
  j["grid"] = {"cdiv(n, 8) + 1"};
  errorAt(j, "grid[0]", "not part of a sum");
  j = minimal();
  j["grid"] = {"n"};
  errorAt(j, "grid[0]", "a symbol expression needs the symbols declared");
  j = symbolic();
  j["scratch_shapes"] = json::parse(R"([{"shape": ["n"], "dtype": "f32"}])");
  errorAt(j, "scratch_shapes[0].shape[0]",
          "only the shapes of inputs and outputs may use symbols");
  j = symbolic();
  j["symbols"]["n"] = {{"max", INT64_MAX}};
  j["inputs"][0]["shape"] = {"n", "n", 4096};
  j["in_specs"][0]["block_shape"] = {8, 8, 4096};
  j["in_specs"][0]["index_map"] = "(i) -> (i, 0, 0)";
  errorAt(j, "inputs[0].shape", "overflows int64 at the symbols' largest");
}

TEST_CASE("symbolic block and alias errors", "[gridspec]") {
  json j = symbolic();
  j["symbols"]["n"]["max"] = 4;
  errorAt(j, "in_specs[0].block_shape[0]",
          "block size 8 is larger than dimension 0 of inputs[0] ('n') at "
          "every size the symbols allow (at most 4)");
  j = symbolic();
  j["symbols"]["n"]["min"] = 4;
  j["in_specs"][0]["block_shape"] = {json{{"element", 8}}, 4096};
  errorAt(j, "in_specs[0].block_shape[0]",
          "element window 8 is larger than dimension 0 of inputs[0] ('n') "
          "at its declared minimum (4)");
  j = symbolic();
  j["in_specs"][0].erase("block_shape");
  errorAt(j, "in_specs[0]", "block shapes are static: give a block_shape");
  j = symbolic();
  j.erase("in_specs");
  errorAt(j, "inputs[0]", "block shapes are static: give in_specs");
  j = symbolic();
  j["symbols"]["m"] = json::object();
  j["outputs"][0]["shape"] = {"m", 4096};
  j["input_output_aliases"] = {{"0", 0}};
  errorAt(j, "input_output_aliases.0",
          "aliasing them needs n == m (dimension 0), which the symbols do not "
          "guarantee");
  j = symbolic();
  j["outputs"][0]["shape"] = {"n + 8", 4096};
  j["input_output_aliases"] = {{"0", 0}};
  errorAt(j, "input_output_aliases.0", "needs n == n + 8");
  // The same expression aliases.
  j = symbolic();
  j["input_output_aliases"] = {{"0", 0}};
  parseOk(j.dump());
}

TEST_CASE("a vmap's symbolic axis_size", "[gridspec]") {
  json j = symbolic();
  j["symbols"]["b"] = json::parse(R"({"max": 64})");
  auto withAxis = [&](const json &size) {
    json k = j;
    k["transforms"] = json::array(
        {{{"vmap", {{"in_axes", {0, nullptr}}, {"axis_size", size}}}}});
    return k;
  };
  auto spec = parseOk(withAxis("2*b + 1").dump());
  REQUIRE(spec->transforms.size() == 1);
  REQUIRE(spec->transforms[0].axisExpr);
  CHECK(spec->transforms[0].axisExpr->str() == "2*b + 1");
  CHECK(spec->transforms[0].axisSize == 0);
  auto use = firstSymbolUse(*spec);
  REQUIRE(use);
  CHECK(use->first == "n"); // the grid's, before the transform's
  // A constant expression is its integer.
  spec = parseOk(withAxis("4").dump());
  CHECK_FALSE(spec->transforms[0].axisExpr);
  CHECK(spec->transforms[0].axisSize == 4);
  // Only the transform uses b: it is the first use.
  json st = withAxis("b");
  st["symbols"].erase("n");
  st["grid"] = {4};
  st["inputs"][0]["shape"] = {32, 4096};
  st["outputs"][0]["shape"] = {32, 4096};
  spec = parseOk(st.dump());
  use = firstSymbolUse(*spec);
  REQUIRE(use);
  CHECK(use->first == "b");
  CHECK(use->second == "transforms[0].vmap.axis_size");
  // Each refused axis size and a part of its message at the same path.
  const std::pair<json, const char *> refused[] = {
      {"c", "unknown symbol 'c'"},
      {"b*n", "the product b * n is not linear"},
      {"b - 1", "axis size 'b - 1' may be 0 at the symbols' declared minimums"},
      {"0", "axis size '0' is 0"},
      {true, "a positive integer or a symbol expression"}};
  for (const auto &[size, part] : refused)
    errorAt(withAxis(size), "transforms[0].vmap.axis_size", part);
}

TEST_CASE("symbols inferred from input shapes and instantiated", "[gridspec]") {
  json j = symbolic();
  j["symbols"]["n"]["multiple_of"] = 4;
  j["inputs"][1]["shape"] = {"2*n + 8"};
  j["in_specs"][1]["block_shape"] = {8};
  auto spec = parseOk(j.dump());
  std::map<std::string, int64_t> values;
  std::string source, error;
  REQUIRE(inferSymbols(*spec, {{12, 4096}, {32}}, {"x.npy", "w.npy"}, values,
                       source, error));
  CHECK(values == std::map<std::string, int64_t>{{"n", 12}});
  GridSpec s = *spec;
  REQUIRE(instantiateSymbols(s, values, error));
  CHECK(s.grid == std::vector<int64_t>{2});
  CHECK(s.gridExprs.empty());
  CHECK(s.inputs[0].shape == std::vector<int64_t>{12, 4096});
  CHECK(s.inputs[1].shape == std::vector<int64_t>{32});
  CHECK(s.outputs[0].shape == std::vector<int64_t>{12, 4096});
  CHECK_FALSE(firstSymbolUse(s));

  // The second input's dimension comes first when it is solvable alone.
  values.clear();
  REQUIRE(inferSymbols(*spec, {{12, 4096}, {32}}, {"x", "w"}, values, source,
                       error));

  values.clear();
  CHECK_FALSE(inferSymbols(*spec, {{12, 4096}, {34}}, {"x.npy", "w.npy"},
                           values, source, error));
  CHECK(source == "w.npy");
  CHECK(error == "inputs[1] dimension 0 is 34 but the spec's '2*n + 8' is 32 "
                 "there (n = 12 from x.npy inputs[0] dimension 0)");
  values.clear();
  CHECK_FALSE(inferSymbols(*spec, {{10, 4096}, {28}}, {"x.npy", "w.npy"},
                           values, source, error));
  CHECK(source == "x.npy");
  CHECK(error == "inputs[0] dimension 0 is 10: n = 10 is not a multiple of 4 "
                 "(the constraint symbols.n)");
  values.clear();
  CHECK_FALSE(inferSymbols(*spec, {{12, 4096}, {9}}, {"x.npy", "w.npy"}, values,
                           source, error));
  CHECK_THAT(error, Contains("is 9"));
  values.clear();
  CHECK_FALSE(inferSymbols(*spec, {{12, 4096, 1}, {32}}, {"x.npy", "w.npy"},
                           values, source, error));
  CHECK(error == "inputs[0] has shape [12,4096,1] but the spec gives it rank "
                 "2 ([n,4096])");
  values.clear();
  CHECK_FALSE(inferSymbols(*spec, {{12, 4000}, {32}}, {"x.npy", "w.npy"},
                           values, source, error));
  CHECK(error == "inputs[0] dimension 1 is 4000 but the spec gives 4096 "
                 "([n,4096])");
}
