//===- SpecToIRTest.cpp - Tests of the grid spec import ---------*- C++ -*-===//
//
// importGridSpec on a valid spec (the func.func @main and its pallas.call) and
// on every error it reports itself: unknown kernel symbol, index maps that do
// not parse, have symbols or the wrong arity, divide by zero, @func maps that
// name no func.func, @main already defined, zero-size blocked dims and
// unsupported dtypes. Specs are parsed by parseGridSpec and then changed in
// the C++ model, so that the importer's own checks are reached even where
// the JSON parser would catch the problem first. Each error test checks the
// JSON path and the key part of the message, and that the module is left as
// it was.
//
//===----------------------------------------------------------------------===//

#include "src/InitAll.h"
#include "src/Spec/GridSpec.h"
#include "src/Spec/SpecToIR.h"
#include "src/Launch/ElementType.h"
#include "test/TestUtils.h"

#include "dialects/Pallas/IR/PallasOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

#include <memory>
#include <sstream>

using namespace pallasc;
using namespace pallasc::spec;
using Catch::Contains;

namespace {

using Context = pallasc::test::DiagnosticContext;

const char *kKernel = R"mlir(
func.func @row_map(%i: i32) -> (i32, i32) {
  %c0 = arith.constant 0 : i32
  return %i, %c0 : i32, i32
}
pallas.kernel @copy_kernel(%x: !pallas.ref<8x128xf32>, %o: !pallas.ref<8x128xf32>) {
  %v = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  pallas.store %o[], %v : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
pallas.kernel @other_kernel(%o: !pallas.ref<8x128xf32>) {
}
)mlir";

const char *kSpec = R"json({
  "schema": "pallasc.gridspec/v1",
  "kernel": "copy_kernel",
  "name": "copy",
  "grid": [4],
  "grid_names": ["i"],
  "inputs": [{"shape": [32, 128], "dtype": "f32"}],
  "outputs": [{"shape": [32, 128], "dtype": "f32"}],
  "in_specs": [{"block_shape": [8, 128], "index_map": "(i) -> (i, 0)"}],
  "out_specs": [{"block_shape": [8, 128], "index_map": "(i) -> (i, 0)"}]
})json";

mlir::OwningOpRef<mlir::ModuleOp> parseKernel(Context &ctx,
                                              const char *text = kKernel) {
  auto module = mlir::parseSourceString<mlir::ModuleOp>(text, &ctx.context);
  INFO("diagnostics:\n" << ctx.diagnostics);
  REQUIRE(module);
  return module;
}

GridSpec parseSpec(const char *text = kSpec) {
  std::vector<SpecError> errors;
  std::optional<GridSpec> spec = parseGridSpec(text, errors);
  REQUIRE(spec);
  return *spec;
}

std::string print(mlir::ModuleOp module) {
  std::string s;
  llvm::raw_string_ostream os(s);
  module.print(os);
  return s;
}

std::string dumpErrors(const std::vector<SpecError> &errors) {
  std::ostringstream os;
  for (const SpecError &e : errors)
    os << "  [" << e.path << "] " << e.message << "\n";
  return os.str();
}

/// Imports `spec` into `kernel`, requires failure with exactly one error and
/// a module left as it was, and returns the error.
SpecError importFails(const GridSpec &spec, const char *kernel = kKernel) {
  Context ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module = parseKernel(ctx, kernel);
  std::string before = print(*module);
  std::vector<SpecError> errors;
  bool ok = importGridSpec(*module, spec, mlir::UnknownLoc::get(&ctx.context),
                           errors);
  INFO("errors:\n" << dumpErrors(errors));
  CHECK_FALSE(ok);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].line == 0);
  CHECK(errors[0].column == 0);
  CHECK(print(*module) == before);
  CHECK(ctx.diagnostics.empty());
  return errors[0];
}

} // namespace

//===----------------------------------------------------------------------===//
// A valid import
//===----------------------------------------------------------------------===//

TEST_CASE("the spec's memory spaces and dimension semantics are the dialect's",
          "[spec][ir]") {
  // The grid spec parser (plain C++) and the dialect's enums each spell
  // these; the importer converts one into the other by name.
  const auto &spaces = pallasc::spec::allMemorySpaces();
  REQUIRE(spaces.size() ==
          mlir::pallas::getMaxEnumValForMemorySpace() + 1);
  for (size_t i = 0; i < spaces.size(); ++i) {
    INFO(pallasc::spec::memorySpaceName(spaces[i]));
    CHECK(static_cast<size_t>(spaces[i]) == i);
    CHECK(mlir::pallas::stringifyMemorySpace(
              static_cast<mlir::pallas::MemorySpace>(i))
              .str() == pallasc::spec::memorySpaceName(spaces[i]));
  }
  const auto &semantics = pallasc::spec::dimensionSemanticsNames();
  REQUIRE(semantics.size() ==
          mlir::pallas::getMaxEnumValForDimensionSemantics() + 1);
  for (size_t i = 0; i < semantics.size(); ++i)
    CHECK(mlir::pallas::stringifyDimensionSemantics(
              static_cast<mlir::pallas::DimensionSemantics>(i))
              .str() == semantics[i]);
}

TEST_CASE("import adds func.func @main with one pallas.call", "[spec][ir]") {
  Context ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module = parseKernel(ctx);
  GridSpec spec = parseSpec();
  std::vector<SpecError> errors;
  mlir::Location loc =
      mlir::FileLineColLoc::get(&ctx.context, "spec.json", 1, 1);
  REQUIRE(importGridSpec(*module, spec, loc, errors));
  CHECK(errors.empty());
  INFO("diagnostics:\n" << ctx.diagnostics);
  REQUIRE(mlir::succeeded(mlir::verify(*module)));

  auto main = module->lookupSymbol<mlir::func::FuncOp>(kCallWrapperName);
  REQUIRE(main);
  CHECK(main.getLoc() == loc);
  mlir::FunctionType type = main.getFunctionType();
  REQUIRE(type.getNumInputs() == 1);
  REQUIRE(type.getNumResults() == 1);
  auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(type.getInput(0));
  REQUIRE(tensor);
  CHECK(tensor.getShape() == llvm::ArrayRef<int64_t>{32, 128});
  CHECK(tensor.getElementType().isF32());

  llvm::SmallVector<mlir::pallas::CallOp> calls;
  module->walk([&](mlir::pallas::CallOp call) { calls.push_back(call); });
  REQUIRE(calls.size() == 1);
  mlir::pallas::CallOp call = calls.front();
  CHECK(call.getKernel() == "copy_kernel");
  CHECK(call.getGrid() == llvm::ArrayRef<int64_t>{4});
  CHECK(call.getName() == llvm::StringRef("copy"));
  REQUIRE(call.getInSpecs().size() == 1);
  auto in0 = mlir::cast<mlir::pallas::BlockSpecAttr>(call.getInSpecs()[0]);
  CHECK(in0.getSizes() == llvm::ArrayRef<int64_t>{8, 128});
  REQUIRE(in0.getIndexMap());
  CHECK(in0.getIndexMap().getNumDims() == 1);
  CHECK(in0.getIndexMap().getNumResults() == 2);
}

TEST_CASE("import accepts an @func index map naming a func.func",
          "[spec][ir]") {
  Context ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module = parseKernel(ctx);
  GridSpec spec = parseSpec();
  spec.inSpecs[0].indexMap = IndexMap{IndexMap::Kind::Func, "row_map"};
  std::vector<SpecError> errors;
  REQUIRE(importGridSpec(*module, spec, mlir::UnknownLoc::get(&ctx.context),
                         errors));
  REQUIRE(mlir::succeeded(mlir::verify(*module)));
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST_CASE("an unknown kernel symbol lists the kernels defined", "[spec][ir]") {
  GridSpec spec = parseSpec();
  spec.kernel = "copy";
  SpecError e = importFails(spec);
  CHECK(e.path == "kernel");
  CHECK(e.message == "no pallas.kernel named 'copy' in the kernel module "
                     "(kernels defined: copy_kernel, other_kernel)");
}

TEST_CASE("a kernel symbol naming a func.func is not a kernel", "[spec][ir]") {
  GridSpec spec = parseSpec();
  spec.kernel = "row_map";
  SpecError e = importFails(spec);
  CHECK(e.path == "kernel");
  CHECK_THAT(e.message, Contains("no pallas.kernel named 'row_map'"));
}

TEST_CASE("an unknown kernel symbol in a module without kernels",
          "[spec][ir]") {
  GridSpec spec = parseSpec();
  SpecError e = importFails(spec, "func.func @f() {\n  return\n}\n");
  CHECK(e.path == "kernel");
  CHECK(e.message == "no pallas.kernel named 'copy_kernel' in the kernel "
                     "module (it defines none)");
}

TEST_CASE("a module that already defines @main", "[spec][ir]") {
  std::string kernel = std::string(kKernel) + "func.func @main() {\n"
                                              "  return\n}\n";
  GridSpec spec = parseSpec();
  SpecError e = importFails(spec, kernel.c_str());
  CHECK(e.path.empty());
  CHECK_THAT(e.message,
             Contains("the kernel module already defines a symbol @main"));
}

TEST_CASE("index maps that do not parse, or do not fit the grid and the "
          "array",
          "[spec][ir]") {
  // The operand whose map is `map` (out_specs[0] or in_specs[0]), and what
  // the error says: the whole message (`exact`) or parts of it.
  struct Case {
    bool output;
    const char *map;
    bool exact;
    std::vector<std::string> message;
  };
  const Case cases[] = {
      {true,
       "(i) -> (i +, 0)",
       false,
       {"cannot parse index map \"(i) -> (i +, 0)\": missing right operand "
        "of binary operator at character 12"}},
      {false,
       "(i) -> (i * i, 0)",
       false,
       {"cannot parse index map", "non-affine expression"}},
      {false, "(i) -> (i, 0)> junk", false, {"cannot parse index map"}},
      {false,
       "(i, j) -> (i, j)",
       true,
       {"index map \"(i, j) -> (i, j)\" takes 2 grid indices but the grid "
        "has rank 1"}},
      {true,
       "(i) -> (i)",
       true,
       {"index map \"(i) -> (i)\" returns 1 index but the array has rank 2"}},
      {false,
       "(i)[s] -> (i, s)",
       true,
       {"index map \"(i)[s] -> (i, s)\" has symbols; use only the grid "
        "indices"}},
  };
  for (const Case &c : cases) {
    INFO(c.map);
    GridSpec spec = parseSpec();
    (c.output ? spec.outSpecs : spec.inSpecs)[0].indexMap.text = c.map;
    SpecError e = importFails(spec);
    CHECK(e.path ==
          (c.output ? "out_specs[0].index_map" : "in_specs[0].index_map"));
    for (const std::string &part : c.message) {
      if (c.exact)
        CHECK(e.message == part);
      else
        CHECK_THAT(e.message, Contains(part));
    }
  }
}

TEST_CASE("an index map dividing by the constant 0", "[spec][ir]") {
  for (const char *map : {"(i) -> (i floordiv 0, 0)", "(i) -> (i, i mod 0)",
                          "(i) -> (i ceildiv 0, 0)"}) {
    INFO(map);
    GridSpec spec = parseSpec();
    spec.inSpecs[0].indexMap.text = map;
    SpecError e = importFails(spec);
    CHECK(e.path == "in_specs[0].index_map");
    CHECK(e.message == "index map \"" + std::string(map) +
                           "\" divides by zero");
  }
}

TEST_CASE("an @func index map that names no func.func", "[spec][ir]") {
  SECTION("no such symbol") {
    GridSpec spec = parseSpec();
    spec.inSpecs[0].indexMap = IndexMap{IndexMap::Kind::Func, "missing_map"};
    SpecError e = importFails(spec);
    CHECK(e.path == "in_specs[0].index_map");
    CHECK(e.message == "index map @missing_map does not name a func.func in "
                       "the kernel module");
  }
  SECTION("a symbol that is a kernel") {
    GridSpec spec = parseSpec();
    spec.outSpecs[0].indexMap = IndexMap{IndexMap::Kind::Func, "other_kernel"};
    SpecError e = importFails(spec);
    CHECK(e.path == "out_specs[0].index_map");
    CHECK_THAT(e.message,
               Contains("index map @other_kernel does not name a func.func"));
  }
}

TEST_CASE("a zero-size blocked dimension", "[spec][ir]") {
  SECTION("written in block_shape") {
    GridSpec spec = parseSpec();
    spec.inSpecs[0].blockShape[1].size = 0;
    SpecError e = importFails(spec);
    CHECK(e.path == "in_specs[0].block_shape[1]");
    CHECK(e.message == "block dimension 1 of inputs[0] has size 0; zero-size "
                       "blocks are not supported");
  }
  SECTION("from a whole-array block of a zero-size array") {
    GridSpec spec = parseSpec(R"json({
      "schema": "pallasc.gridspec/v1", "kernel": "copy_kernel",
      "inputs": [{"shape": [0, 128], "dtype": "f32"}],
      "outputs": [{"shape": [8, 128], "dtype": "f32"}]})json");
    REQUIRE_FALSE(spec.inSpecs[0].hasBlockShape);
    SpecError e = importFails(spec);
    CHECK(e.path == "in_specs[0]");
    CHECK_THAT(e.message, Contains("block dimension 0 of inputs[0] has size 0"));
  }
}

TEST_CASE("an unsupported dtype", "[spec][ir]") {
  SECTION("input") {
    GridSpec spec = parseSpec();
    spec.inputs[0].dtype = "c64";
    SpecError e = importFails(spec);
    CHECK(e.path == "inputs[0].dtype");
    CHECK(e.message == "unsupported dtype 'c64'");
  }
  SECTION("scratch") {
    GridSpec spec = parseSpec();
    spec.scratchShapes.push_back(
        ScratchSpec{{16}, "c64", MemorySpace::Vmem, "scratch_shapes[0]"});
    SpecError e = importFails(spec);
    CHECK(e.path == "scratch_shapes[0].dtype");
    CHECK(e.message == "unsupported dtype 'c64'");
  }
}

//===----------------------------------------------------------------------===//
// dtypes
//===----------------------------------------------------------------------===//

TEST_CASE("dtype <-> element type", "[spec][ir]") {
  mlir::MLIRContext ctx;
  for (const char *dtype :
       {"bool", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64"}) {
    INFO(dtype);
    mlir::Type t = dtypeToType(&ctx, dtype);
    REQUIRE(t);
    CHECK(typeToDtype(t) == dtype);
  }
  // Unsigned dtypes become signless integers of the same width.
  CHECK(typeToDtype(dtypeToType(&ctx, "u8")) == "i8");
  CHECK_FALSE(dtypeToType(&ctx, "c64"));
  CHECK_FALSE(dtypeToType(&ctx, "i"));
  // The element type table's dtypes only: no other integer width.
  CHECK_FALSE(dtypeToType(&ctx, "i3"));
  CHECK_FALSE(dtypeToType(&ctx, "u24"));
  for (const pallasc::launch::ElementTypeInfo &e :
       pallasc::launch::allElementTypes()) {
    INFO(e.name);
    mlir::Type t = dtypeToType(&ctx, e.name);
    REQUIRE(t);
    CHECK(t.getIntOrFloatBitWidth() == (e.kind == pallasc::launch::
                                                      ElementTypeInfo::Kind::Bool
                                            ? 1u
                                            : pallasc::launch::elementBits(
                                                  e.type)));
    CHECK(pallasc::launch::isPackedElement(e.type) ==
          (pallasc::launch::elementBits(e.type) < 8));
  }
  // int4/uint4 and int2/uint2 are signless i4 and i2 (packed storage).
  CHECK(typeToDtype(dtypeToType(&ctx, "u4")) == "i4");
  CHECK(typeToDtype(dtypeToType(&ctx, "i2")) == "i2");
  CHECK(pallasc::launch::elementBits(pallasc::launch::ElementType::U4) == 4);
  CHECK(pallasc::launch::elementBits(pallasc::launch::ElementType::I2) == 2);
  CHECK(pallasc::launch::elementBits(pallasc::launch::ElementType::I8) == 8);
  CHECK(pallasc::launch::elementBits(pallasc::launch::ElementType::Bool) == 8);
}
