//===- TPUSerializeTest.cpp - Tests of the Mosaic serializer -----*- C++ -*-===//
//
// The tpu_custom_call backend config text (CustomCallBackendConfig.to_json,
// byte for byte, for each optional field), the mosaic-serde renaming with
// the version attribute and the tpu.matmul downgrade below version 13, the
// supported version range, and the bytecode header (format version 0).
//
//===----------------------------------------------------------------------===//

#include "src/InitAll.h"
#include "src/Target/TPUSerialize.h"
#include "test/TestUtils.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

#include <memory>
#include <string>

using namespace pallasc;
using Catch::Contains;

namespace {

/// Every pallasc dialect, unregistered ops allowed (the serialized
/// modules' foreign ops), diagnostics recorded.
struct Context : pallasc::test::DiagnosticContext {
  Context() : DiagnosticContext(/*allowUnregistered=*/true) {}
};

std::string print(mlir::ModuleOp module) {
  std::string s;
  llvm::raw_string_ostream os(s);
  module->print(os);
  return s;
}

const char *kMatmulModule = R"mlir(
func.func @k(%a: vector<8x128xf32>, %b: vector<128x128xf32>) -> vector<8x128xf32> {
  %z = arith.constant dense<0.0> : vector<8x128xf32>
  %d = tpu.matmul %a, %b, %z {dimension_numbers = #tpu.dot_dimension_numbers<[1], [0], [0], [1], [0, 0, 1, 1], [], []>, transpose_lhs_hint = false} : vector<8x128xf32>, vector<128x128xf32>, vector<8x128xf32> -> vector<8x128xf32>
  return %d : vector<8x128xf32>
}
)mlir";

/// `src` (default: the matmul module) parsed in `ctx` and serialized at
/// Mosaic `version`: the module, or null where serializing failed.
mlir::OwningOpRef<mlir::ModuleOp>
serialized(Context &ctx, int version, const std::string &src = kMatmulModule) {
  auto module = ctx.parse(src);
  REQUIRE(module);
  if (mlir::failed(tpu::serializeForMosaic(*module, version)))
    return nullptr;
  return module;
}

/// The matmul module serialized at Mosaic `version`, printed.
std::string serializedText(int version) {
  Context ctx;
  auto module = serialized(ctx, version);
  REQUIRE(module);
  return print(*module);
}

} // namespace

TEST_CASE("backend config: the fields pallas_call always sets", "[tpu]") {
  tpu::BackendConfig config;
  CHECK(tpu::backendConfigJson("abc", config) ==
        R"({"custom_call_config": {"body": "YWJj", "serialization_format": 1, )"
        R"("needs_layout_passes": true}})");
}

TEST_CASE("backend config: cost estimate, VMEM limit, flags", "[tpu]") {
  tpu::BackendConfig config;
  config.costEstimate = tpu::BackendConfig::Cost{10, 2, 300, 0};
  config.vmemLimitBytes = 1 << 25;
  config.hasCommunication = true;
  tpu::BackendConfig::Flag b{"XLA_TPU_FLAG_A", tpu::BackendConfig::Flag::Kind::Bool,
                             true, 0, 0};
  tpu::BackendConfig::Flag i{"XLA_TPU_FLAG_B", tpu::BackendConfig::Flag::Kind::Int,
                             false, 7, 0};
  tpu::BackendConfig::Flag d{"XLA_TPU_FLAG_C",
                             tpu::BackendConfig::Flag::Kind::Double, false, 0,
                             0.5};
  config.flags = {b, i, d};
  CHECK(tpu::backendConfigJson("", config) ==
        "{\"custom_call_config\": {\"body\": \"\", \"has_communication\": true, "
        "\"cost_estimate\": {\n\"bytes_accessed\":300,\n\"flops\":10,\n"
        "\"remote_bytes_transferred\":0,\n\"transcendentals\":2\n}, "
        "\"serialization_format\": 1, \"needs_layout_passes\": true}, "
        "\"scoped_memory_configs\": [{\"memory_space\":1, \"offset\": 0, "
        "\"size\": 33554432}], \"flag_configs\": ["
        "{\"flag_type\": \"XLA_TPU_FLAG_A\", \"value\": {\"boolean_value\": true}},"
        "{\"flag_type\": \"XLA_TPU_FLAG_B\", \"value\": {\"integer_value\": 7}},"
        "{\"flag_type\": \"XLA_TPU_FLAG_C\", \"value\": {\"double_value\": 0.5}}]}");
}

TEST_CASE("serialize: stable names, version 11 drops transpose_lhs_hint",
          "[tpu]") {
  std::string text = serializedText(11);
  CHECK_THAT(text, Contains("stable_mosaic.version = 11 : i64"));
  CHECK_THAT(text, Contains("\"stable_mosaic.func.func\"()"));
  CHECK_THAT(text, Contains("\"stable_mosaic.arith.constant\"()"));
  CHECK_THAT(text, Contains("\"stable_mosaic.tpu.matmul\"("));
  CHECK_THAT(text, Contains("\"stable_mosaic.func.return\"("));
  CHECK_THAT(text, !Contains("transpose_lhs_hint"));
  // Properties became attributes (the default-valued ones too).
  CHECK_THAT(text, Contains("transpose_lhs = false, transpose_rhs = false"));
  CHECK_THAT(text, Contains("sym_name = \"k\""));
}

TEST_CASE("serialize: version 13 keeps transpose_lhs_hint", "[tpu]") {
  std::string text = serializedText(13);
  CHECK_THAT(text, Contains("stable_mosaic.version = 13 : i64"));
  CHECK_THAT(text, Contains("transpose_lhs_hint = false"));
}

TEST_CASE("serialize: a set transpose_lhs_hint cannot go below 13", "[tpu]") {
  Context ctx;
  std::string src = kMatmulModule;
  src.replace(src.find("transpose_lhs_hint = false"),
              sizeof("transpose_lhs_hint = false") - 1,
              "transpose_lhs_hint = true");
  CHECK_FALSE(serialized(ctx, 12, src));
  CHECK_THAT(ctx.diagnostics, Contains("cannot be written at Mosaic version 12"));
}

TEST_CASE("serialize: versions outside 11-15 are refused", "[tpu]") {
  Context ctx;
  CHECK_FALSE(serialized(ctx, 16));
  CHECK_THAT(ctx.diagnostics, Contains("Mosaic IR version 16 is not supported"));
}

TEST_CASE("bytecode: MLIR bytecode format version 0", "[tpu]") {
  Context ctx;
  auto module = serialized(ctx, 11);
  REQUIRE(module);
  mlir::FailureOr<std::string> bytes = tpu::writeMosaicBytecode(*module);
  REQUIRE(mlir::succeeded(bytes));
  // Magic "ML\xefR", then the version as a prefix varint: 0 is 0x01.
  REQUIRE(bytes->size() > 5);
  CHECK(bytes->substr(0, 5) == std::string("ML\xef" "R\x01", 5));
  // It parses back.
  auto again = mlir::parseSourceString<mlir::ModuleOp>(*bytes, &ctx.context);
  REQUIRE(again);
  CHECK_THAT(print(*again), Contains("\"stable_mosaic.tpu.matmul\"("));
}
