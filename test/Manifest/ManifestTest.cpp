//===- ManifestTest.cpp - Tests of the pallasc.manifest/v1 writer -*- C++ -*-===//
//
// buildManifest on calls imported from real kernels and specs (the examples
// and a spec that uses every kind of operand and block dimension): the golden
// structure field by field, determinism of the bytes, the `eliminated`
// manifest, and the errors. sha256Hex is checked against published vectors.
//
//===----------------------------------------------------------------------===//

#include "src/InitAll.h"
#include "src/Manifest/Manifest.h"
#include "src/Spec/GridSpec.h"
#include "src/Spec/SpecToIR.h"
#include "src/Version.h"
#include "test/TestUtils.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <sstream>

using namespace pallasc;
using json = nlohmann::json;
using Catch::Contains;

namespace {

std::string readFile(const std::string &path) {
  return pallasc::test::readTestFile(path);
}

std::string example(const std::string &name, const std::string &file) {
  return readFile(std::string(PALLASC_EXAMPLES_DIR) + "/" + name + "/" + file);
}

using Context = pallasc::test::DiagnosticContext;

mlir::OwningOpRef<mlir::ModuleOp> parseKernel(Context &ctx,
                                              const std::string &text) {
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &ctx.context,
                                              "kernel.mlir");
  INFO("diagnostics:\n" << ctx.diagnostics);
  REQUIRE(module);
  return module;
}

/// Parses the kernel and the spec, imports the spec, verifies the module and
/// builds the manifest, as the driver does (without the transforms).
json compile(const std::string &kernelText, const std::string &specText,
             std::vector<std::string> emitted = {}) {
  Context ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module = parseKernel(ctx, kernelText);
  std::vector<spec::SpecError> errors;
  std::optional<spec::GridSpec> spec = spec::parseGridSpec(specText, errors);
  REQUIRE(spec);
  mlir::Location loc =
      mlir::FileLineColLoc::get(&ctx.context, "spec.json", 1, 1);
  REQUIRE(spec::importGridSpec(*module, *spec, loc, errors));
  INFO("diagnostics:\n" << ctx.diagnostics);
  REQUIRE(mlir::succeeded(mlir::verify(*module)));
  ManifestInputs inputs;
  inputs.kernel = {"kernel.mlir", sha256Hex(kernelText)};
  inputs.spec = {"spec.json", sha256Hex(specText)};
  inputs.name = spec->name;
  inputs.emitted = std::move(emitted);
  mlir::FailureOr<json> manifest = buildManifest(*module, inputs);
  REQUIRE(mlir::succeeded(manifest));
  return *manifest;
}

std::set<std::string> keysOf(const json &object) {
  std::set<std::string> keys;
  for (auto it = object.begin(); it != object.end(); ++it)
    keys.insert(it.key());
  return keys;
}

/// Every key of a manifest for a call that was not eliminated.
const std::set<std::string> kCallKeys = {
    "compiler_params", "cost_estimate", "eliminated",
    "emitted",         "grid",          "grid_names",
    "input_output_aliases", "kernel",   "metadata",
    "name",            "num_scalar_prefetch", "operands",
    "pallasc_version", "schema",        "sources",
    "targets",         "transforms",    "vmapped_dims"};

/// A kernel and spec with every kind of operand: a dynamic grid bound, an
/// element-indexed block with padding, a squeezed dimension, a pinned input
/// aliased to an output, a whole-array (`any`) input, a scratch buffer in
/// smem, compiler params, metadata and a cost estimate.
const char *kMixedKernel = R"mlir(
pallas.kernel @mixed_kernel(%x: !pallas.ref<16x128xf32>,
                            %acc_in: !pallas.ref<64x128xf32>,
                            %table: !pallas.ref<8xi32, any>,
                            %acc_out: !pallas.ref<64x128xf32>,
                            %tmp: !pallas.ref<16xi32, smem>) {
}
)mlir";

const char *kMixedSpec = R"json({
  "schema": "pallasc.gridspec/v1",
  "kernel": "mixed_kernel",
  "name": "mixed",
  "grid": ["dynamic", 4],
  "grid_names": ["b", "j"],
  "inputs": [
    {"shape": [64, 256], "dtype": "f32"},
    {"shape": [4, 64, 128], "dtype": "f32", "linear": true},
    {"shape": [8], "dtype": "i32"}
  ],
  "outputs": [{"shape": [4, 64, 128], "dtype": "f32"}],
  "in_specs": [
    {"block_shape": [{"element": 16, "padding": [2, 3]}, 128],
     "index_map": "(b, j) -> (b * 16, j floordiv 2)"},
    {"block_shape": [null, 64, 128], "index_map": "(b, j) -> (j, 0, 0)"},
    {"memory_space": "any"}
  ],
  "out_specs": [{"block_shape": [null, 64, 128], "index_map": "(b, j) -> (j, 0, 0)"}],
  "scratch_shapes": [{"shape": [16], "dtype": "i32", "memory_space": "smem"}],
  "input_output_aliases": {"1": 0},
  "cost_estimate": {"flops": 10, "bytes_accessed": 20, "transcendentals": 30},
  "compiler_params": {"gpu": {"num_warps": 8},
                      "tpu": {"vmem_limit_bytes": 1048576, "has_side_effects": true}},
  "metadata": {"owner": "team-x", "ticket": "PAL-1"}
})json";

} // namespace

//===----------------------------------------------------------------------===//
// sha256Hex
//===----------------------------------------------------------------------===//

TEST_CASE("sha256Hex matches the published test vectors", "[manifest]") {
  // FIPS 180-2 appendix B and the empty message.
  CHECK(sha256Hex("") ==
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256Hex("abc") ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256Hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Binary data, including NUL bytes, is hashed as is.
  CHECK(sha256Hex(llvm::StringRef("\0", 1)) ==
        "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d");
}

//===----------------------------------------------------------------------===//
// Golden manifests
//===----------------------------------------------------------------------===//

TEST_CASE("matmul example manifest, field by field", "[manifest]") {
  std::string kernel = example("matmul", "kernel.mlir");
  std::string specText = example("matmul", "spec.json");
  json m = compile(kernel, specText, {"matmul.mlir"});

  CHECK(keysOf(m) == kCallKeys);
  CHECK(m["schema"] == "pallasc.manifest/v1");
  CHECK(m["pallasc_version"] == PALLASC_VERSION_STRING);
  CHECK(m["name"] == "matmul");
  CHECK(m["kernel"] == "matmul_kernel");
  CHECK(m["eliminated"] == false);
  CHECK(m["sources"] ==
        json{{"kernel", {{"file", "kernel.mlir"}, {"sha256", sha256Hex(kernel)}}},
             {"spec", {{"file", "spec.json"}, {"sha256", sha256Hex(specText)}}}});
  CHECK(m["sources"]["kernel"]["sha256"].get<std::string>().size() == 64);
  CHECK(m["sources"]["kernel"]["sha256"] != m["sources"]["spec"]["sha256"]);
  CHECK(m["targets"] == json::array());
  CHECK(m["emitted"] == json{"matmul.mlir"});
  CHECK(m["grid"] == json{8, 8, 4});
  CHECK(m["grid_names"] == json{"m", "n", "k"});
  CHECK(m["vmapped_dims"] == json::array());
  CHECK(m["num_scalar_prefetch"] == 0);
  CHECK(m["input_output_aliases"] == json::object());
  CHECK(m["cost_estimate"] == json{{"flops", 1073741824},
                                   {"bytes_accessed", 6291456},
                                   {"transcendentals", 0}});
  CHECK(m["compiler_params"] ==
        json::parse(R"j({"gpu": {"num_warps": 4, "num_stages": 3},
                        "tpu": {"dimension_semantics":
                                ["parallel", "parallel", "arbitrary"]}})j"));
  CHECK(m["metadata"] == json::object());
  CHECK(m["transforms"] == json::array());

  const json &ops = m["operands"];
  const json want = json::parse(R"j([
    {"index": 0, "name": "inputs[0]", "role": "input", "pinned": false,
     "shape": [1024, 512], "dtype": "bf16", "bytes": 1048576,
     "memory_space": "default", "block_shape": [128, 128],
     "index_map": "(d0, d1, d2) -> (d0, d2)"},
    {"index": 1, "name": "inputs[1]", "role": "input", "pinned": false,
     "shape": [512, 1024], "dtype": "bf16", "bytes": 1048576,
     "memory_space": "default", "block_shape": [128, 128],
     "index_map": "(d0, d1, d2) -> (d2, d1)"},
    {"index": 2, "name": "outputs[0]", "role": "output",
     "shape": [1024, 1024], "dtype": "f32", "bytes": 4194304,
     "memory_space": "default", "block_shape": [128, 128],
     "index_map": "(d0, d1, d2) -> (d0, d1)"},
    {"index": 3, "name": "scratch[0]", "role": "scratch",
     "shape": [128, 128], "dtype": "f32", "bytes": 65536,
     "memory_space": "vmem"}])j");
  REQUIRE(ops.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("operand " << i);
    CHECK(ops[i] == want[i]);
  }
}

TEST_CASE("scalar_prefetch example: an index operand and an @func map",
          "[manifest]") {
  json m = compile(example("scalar_prefetch", "kernel.mlir"),
                   example("scalar_prefetch", "spec.json"));
  CHECK(m["name"] == "gather_rows");
  CHECK(m["num_scalar_prefetch"] == 1);
  CHECK(m["emitted"] == json::array());
  CHECK(m["compiler_params"] == json::object());
  const json &ops = m["operands"];
  REQUIRE(ops.size() == 3);
  CHECK(ops[0] == json::parse(R"j({
    "index": 0, "name": "inputs[0]", "role": "index", "pinned": false,
    "shape": [16], "dtype": "i32", "bytes": 64, "memory_space": "smem"})j"));
  CHECK(ops[1]["role"] == "input");
  CHECK(ops[1]["name"] == "inputs[1]");
  CHECK(ops[1]["block_shape"] == json::parse("[null, 512]"));
  CHECK(ops[1]["index_map"] == "@table_index_map");
  CHECK(ops[2]["role"] == "output");
  CHECK(ops[2]["block_shape"] == json::parse("[null, 512]"));
  CHECK(ops[2]["index_map"] == "(d0) -> (d0, 0)");
}

TEST_CASE("every example's manifest has the same top-level keys and "
          "consecutive operand indices",
          "[manifest]") {
  for (const char *name : {"add", "softmax", "layernorm", "matmul",
                           "flash_attention", "scalar_prefetch"}) {
    INFO("example " << name);
    json m = compile(example(name, "kernel.mlir"), example(name, "spec.json"));
    CHECK(keysOf(m) == kCallKeys);
    int64_t i = 0;
    for (const json &op : m["operands"])
      CHECK(op["index"] == i++);
  }
}

TEST_CASE("grid bounds, element and squeezed dims, aliases, pinned inputs, "
          "whole arrays, params and metadata",
          "[manifest]") {
  json m = compile(kMixedKernel, kMixedSpec);
  CHECK(keysOf(m) == kCallKeys);
  CHECK(m["grid"] == json::parse(R"j(["dynamic", 4])j"));
  CHECK(m["grid_names"] == json{"b", "j"});
  CHECK(m["input_output_aliases"] == json{{"1", 0}});
  CHECK(m["cost_estimate"] ==
        json{{"flops", 10}, {"bytes_accessed", 20}, {"transcendentals", 30}});
  CHECK(m["compiler_params"] == json::parse(R"j({
    "gpu": {"num_warps": 8},
    "tpu": {"vmem_limit_bytes": 1048576, "has_side_effects": true}})j"));
  CHECK(m["metadata"] == json{{"owner", "team-x"}, {"ticket", "PAL-1"}});

  // Launch order: the dynamic bound, the three inputs, the output, scratch.
  const json &ops = m["operands"];
  REQUIRE(ops.size() == 6);
  CHECK(ops[0] == json{{"index", 0},
                       {"name", "grid_bounds[0]"},
                       {"role", "grid_bound"},
                       {"dtype", "index"}});
  CHECK(ops[1] == json::parse(R"j({
    "index": 1, "name": "inputs[0]", "role": "input", "pinned": false,
    "shape": [64, 256], "dtype": "f32", "bytes": 65536,
    "memory_space": "default",
    "block_shape": [{"element": 16, "padding": [2, 3]}, 128],
    "index_map": "(d0, d1) -> (d0 * 16, d1 floordiv 2)"})j"));
  CHECK(ops[2] == json::parse(R"j({
    "index": 2, "name": "inputs[1]", "role": "input", "pinned": true,
    "shape": [4, 64, 128], "dtype": "f32", "bytes": 131072,
    "memory_space": "default", "block_shape": [null, 64, 128],
    "index_map": "(d0, d1) -> (d1, 0, 0)"})j"));
  CHECK(ops[3] == json::parse(R"j({
    "index": 3, "name": "inputs[2]", "role": "input", "pinned": false,
    "shape": [8], "dtype": "i32", "bytes": 32,
    "memory_space": "any", "block_shape": null, "index_map": null})j"));
  CHECK(ops[4] == json::parse(R"j({
    "index": 4, "name": "outputs[0]", "role": "output",
    "shape": [4, 64, 128], "dtype": "f32", "bytes": 131072,
    "memory_space": "default", "block_shape": [null, 64, 128],
    "index_map": "(d0, d1) -> (d1, 0, 0)"})j"));
  CHECK(ops[5] == json::parse(R"j({
    "index": 5, "name": "scratch[0]", "role": "scratch",
    "shape": [16], "dtype": "i32", "bytes": 64, "memory_space": "smem"})j"));
}

TEST_CASE("a bool array counts one byte per element", "[manifest]") {
  const char *kernel = R"mlir(
pallas.kernel @k(%m: !pallas.ref<8x128xi1>, %o: !pallas.ref<8x128xi1>) {
}
)mlir";
  const char *specText = R"json({"schema": "pallasc.gridspec/v1", "kernel": "k",
    "inputs": [{"shape": [8, 128], "dtype": "bool"}],
    "outputs": [{"shape": [8, 128], "dtype": "bool"}]})json";
  json m = compile(kernel, specText);
  CHECK(m["name"] == "k"); // defaults to the kernel
  CHECK(m["grid"] == json::array());
  CHECK(m["grid_names"] == json::array());
  CHECK(m["cost_estimate"] == nullptr);
  REQUIRE(m["operands"].size() == 2);
  CHECK(m["operands"][0]["dtype"] == "bool");
  CHECK(m["operands"][0]["bytes"] == 1024);
  // Absent block_shape and index_map: the whole array, at block index 0.
  CHECK(m["operands"][0]["block_shape"] == json{8, 128});
  CHECK(m["operands"][0]["index_map"] == "() -> (0, 0)");
}

//===----------------------------------------------------------------------===//
// Text and determinism
//===----------------------------------------------------------------------===//

TEST_CASE("two independent builds give the same bytes", "[manifest]") {
  std::string a = manifestToString(compile(kMixedKernel, kMixedSpec));
  std::string b = manifestToString(compile(kMixedKernel, kMixedSpec));
  CHECK(a == b);
  std::string kernel = example("flash_attention", "kernel.mlir");
  std::string specText = example("flash_attention", "spec.json");
  CHECK(manifestToString(compile(kernel, specText)) ==
        manifestToString(compile(kernel, specText)));
}

TEST_CASE("manifest text: sorted keys, 2-space indent, trailing newline",
          "[manifest]") {
  std::string text = manifestToString(compile(kMixedKernel, kMixedSpec));
  REQUIRE(!text.empty());
  CHECK(text.back() == '\n');
  CHECK(text.compare(0, 5, "{\n  \"") == 0);
  CHECK(text.find('\t') == std::string::npos);
  CHECK(text.find("/work") == std::string::npos);
  // Keys come out sorted at every level: re-read the text into objects that
  // keep the text's order and look at each one.
  nlohmann::ordered_json reread = nlohmann::ordered_json::parse(text);
  int objects = 0;
  std::function<void(const nlohmann::ordered_json &)> checkSorted =
      [&](const nlohmann::ordered_json &j) {
        if (j.is_object()) {
          ++objects;
          std::vector<std::string> keys;
          for (auto it = j.begin(); it != j.end(); ++it)
            keys.push_back(it.key());
          INFO("keys of " << j.dump());
          CHECK(std::is_sorted(keys.begin(), keys.end()));
        }
        if (j.is_structured())
          for (const auto &child : j)
            checkSorted(child);
      };
  checkSorted(reread);
  CHECK(objects > 10);
  // And the text is exactly what a 2-space dump of those objects gives.
  CHECK(reread.dump(2) + "\n" == text);
}

TEST_CASE("invalid UTF-8 in a string does not throw", "[manifest]") {
  json m = json::object();
  m["metadata"] = std::string("\xff\xfe", 2);
  std::string text;
  REQUIRE_NOTHROW(text = manifestToString(m));
  CHECK(text.back() == '\n');
}

//===----------------------------------------------------------------------===//
// Eliminated calls and errors
//===----------------------------------------------------------------------===//

TEST_CASE("a call eliminated by DCE gives an eliminated manifest",
          "[manifest]") {
  Context ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module = parseKernel(ctx, R"mlir(
pallas.kernel @k(%o: !pallas.ref<8xf32>) {
}
func.func @main() attributes {pallas.eliminated,
                              pallas.transforms = ["pallas-dce{used-outputs=0}"]} {
  return
}
)mlir");
  ManifestInputs inputs;
  inputs.kernel = {"k.mlir", sha256Hex("kernel")};
  inputs.spec = {"k.json", sha256Hex("spec")};
  inputs.name = "k";
  mlir::FailureOr<json> m = buildManifest(*module, inputs);
  INFO("diagnostics:\n" << ctx.diagnostics);
  REQUIRE(mlir::succeeded(m));
  CHECK(keysOf(*m) ==
        std::set<std::string>{"eliminated", "emitted", "name", "operands",
                              "pallasc_version", "schema", "sources",
                              "targets", "transforms"});
  CHECK((*m)["eliminated"] == true);
  CHECK((*m)["operands"] == json::array());
  CHECK((*m)["transforms"] == json{"pallas-dce{used-outputs=0}"});
  CHECK((*m)["name"] == "k");
  CHECK((*m)["sources"]["kernel"] ==
        json{{"file", "k.mlir"}, {"sha256", sha256Hex("kernel")}});
  CHECK((*m)["sources"]["spec"]["file"] == "k.json");
  CHECK(ctx.diagnostics.empty());
}

TEST_CASE("an eliminated wrapper without transforms lists none",
          "[manifest]") {
  Context ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module = parseKernel(ctx, R"mlir(
func.func @main() attributes {pallas.eliminated} {
  return
}
)mlir");
  mlir::FailureOr<json> m = buildManifest(*module, ManifestInputs{});
  REQUIRE(mlir::succeeded(m));
  CHECK((*m)["eliminated"] == true);
  CHECK((*m)["transforms"] == json::array());
}

TEST_CASE("a module without a call and not eliminated is an error",
          "[manifest]") {
  Context ctx;
  SECTION("no wrapper") {
    mlir::OwningOpRef<mlir::ModuleOp> module = parseKernel(ctx, R"mlir(
pallas.kernel @k(%o: !pallas.ref<8xf32>) {
}
)mlir");
    CHECK(mlir::failed(buildManifest(*module, ManifestInputs{})));
    CHECK_THAT(ctx.diagnostics, Contains("the module holds no pallas.call"));
  }
  SECTION("a wrapper without the eliminated attribute") {
    mlir::OwningOpRef<mlir::ModuleOp> module = parseKernel(ctx, R"mlir(
func.func @main() {
  return
}
)mlir");
    CHECK(mlir::failed(buildManifest(*module, ManifestInputs{})));
    CHECK_THAT(ctx.diagnostics, Contains("the module holds no pallas.call"));
  }
}

TEST_CASE("a module with two calls is an error", "[manifest]") {
  Context ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module = parseKernel(ctx, R"mlir(
pallas.kernel @k(%o: !pallas.ref<8xf32>) {
}
func.func @main() -> (tensor<8xf32>, tensor<8xf32>) {
  %a = pallas.call @k() {grid = array<i64>, in_specs = [],
      out_specs = [#pallas.block_spec<[8], () -> (0)>]} : () -> tensor<8xf32>
  %b = pallas.call @k() {grid = array<i64>, in_specs = [],
      out_specs = [#pallas.block_spec<[8], () -> (0)>]} : () -> tensor<8xf32>
  return %a, %b : tensor<8xf32>, tensor<8xf32>
}
)mlir");
  CHECK(mlir::failed(buildManifest(*module, ManifestInputs{})));
  CHECK_THAT(ctx.diagnostics,
             Contains("the module holds 2 pallas.call ops; a manifest "
                      "describes one"));
}
