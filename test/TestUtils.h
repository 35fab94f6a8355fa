//===- TestUtils.h - What several unit tests share --------------*- C++ -*-===//
//
// An MLIRContext with every pallasc dialect that records its diagnostics,
// reading a file the test needs and making a scratch directory (failing the
// test when it cannot).
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_TEST_TESTUTILS_H
#define PALLASC_TEST_TESTUTILS_H

#include "src/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

namespace pallasc::test {

/// A context with every pallasc dialect loaded; each diagnostic is appended
/// to `diagnostics` (one line each) instead of being printed.
struct DiagnosticContext {
  explicit DiagnosticContext(bool allowUnregistered = false)
      : context(makeRegistry()) {
    context.loadAllAvailableDialects();
    context.printOpOnDiagnostic(false);
    context.allowUnregisteredDialects(allowUnregistered);
    handler = std::make_unique<mlir::ScopedDiagnosticHandler>(
        &context, [this](mlir::Diagnostic &diag) {
          diagnostics += diag.str() + "\n";
          return mlir::success();
        });
  }
  static mlir::DialectRegistry makeRegistry() {
    mlir::DialectRegistry registry;
    registerAllDialects(registry);
    return registry;
  }
  mlir::OwningOpRef<mlir::ModuleOp> parse(const std::string &text) {
    return mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  }
  mlir::MLIRContext context;
  std::unique_ptr<mlir::ScopedDiagnosticHandler> handler;
  std::string diagnostics;
};

/// The bytes of `path`; the test fails when it cannot be read.
inline std::string readTestFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  INFO("reading " << path);
  REQUIRE(in.good());
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

/// A new empty directory under the system's temporary directory, named
/// after `prefix`; the test fails when it cannot be made.
inline std::string freshTestDir(const std::string &prefix) {
  llvm::SmallString<128> dir;
  REQUIRE_FALSE(llvm::sys::fs::createUniqueDirectory(prefix, dir));
  return std::string(dir.str());
}

} // namespace pallasc::test

#endif // PALLASC_TEST_TESTUTILS_H
