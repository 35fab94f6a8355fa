//===- RunIfPresentTest.cpp - passes/Pipelines/RunIfPresent ---------------===//
//
// createRunIfPresentPass runs the wrapped pass where some op satisfies the
// predicate (lower-affine then rewrites the affine.apply as upstream's pass
// does) and skips it, leaving the IR untouched, where none does (a wrapped
// pass that would fail is then never run).
//
//===----------------------------------------------------------------------===//

#include "passes/Pipelines/Pipelines.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <catch2/catch.hpp>

using namespace mlir;

namespace {

const char *kWithAffine = R"mlir(
func.func @f(%i: index) -> index {
  %0 = affine.apply affine_map<(d0) -> (d0 * 4 + 1)>(%i)
  return %0 : index
}
)mlir";

const char *kWithoutAffine = R"mlir(
func.func @f(%i: index) -> index {
  %c1 = arith.constant 1 : index
  %0 = arith.addi %i, %c1 : index
  return %0 : index
}
)mlir";

/// A pass that always fails: proves whether the wrapper ran it.
struct AlwaysFailPass : PassWrapper<AlwaysFailPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(AlwaysFailPass)
  void runOnOperation() final { signalPassFailure(); }
};

bool isAffine(Operation *op) {
  return isa_and_nonnull<affine::AffineDialect>(op->getDialect());
}

size_t countAffine(ModuleOp m) {
  size_t n = 0;
  m.walk([&](Operation *op) { n += isAffine(op); });
  return n;
}

struct Fixture {
  MLIRContext ctx;
  Fixture() {
    ctx.loadDialect<affine::AffineDialect, arith::ArithDialect,
                    func::FuncDialect>();
  }
  OwningOpRef<ModuleOp> parse(const char *text) {
    OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(text, &ctx);
    REQUIRE(m);
    return m;
  }
  std::string print(ModuleOp m) {
    std::string s;
    llvm::raw_string_ostream os(s);
    m.print(os);
    return s;
  }
};

} // namespace

TEST_CASE("RunIfPresent: runs the pass where an op needs it", "[pipelines]") {
  Fixture f;
  OwningOpRef<ModuleOp> m = f.parse(kWithAffine);
  REQUIRE(countAffine(*m) == 1);
  PassManager pm(&f.ctx);
  pm.addPass(pallas::createRunIfPresentPass(isAffine, createLowerAffinePass()));
  REQUIRE(succeeded(pm.run(*m)));
  CHECK(countAffine(*m) == 0);
  // lower-affine's expansion: a multiply and an add of constants.
  std::string text = f.print(*m);
  CHECK(text.find("arith.muli") != std::string::npos);
  CHECK(text.find("arith.addi") != std::string::npos);

  // The wrapped pass's failure is the wrapper's.
  OwningOpRef<ModuleOp> m2 = f.parse(kWithAffine);
  PassManager failing(&f.ctx);
  failing.addPass(pallas::createRunIfPresentPass(
      isAffine, std::make_unique<AlwaysFailPass>()));
  CHECK(failed(failing.run(*m2)));
}

TEST_CASE("RunIfPresent: skips the pass where no op needs it",
          "[pipelines]") {
  Fixture f;
  OwningOpRef<ModuleOp> m = f.parse(kWithoutAffine);
  std::string before = f.print(*m);
  PassManager pm(&f.ctx);
  pm.addPass(pallas::createRunIfPresentPass(
      isAffine, std::make_unique<AlwaysFailPass>()));
  REQUIRE(succeeded(pm.run(*m)));
  CHECK(f.print(*m) == before);
}
