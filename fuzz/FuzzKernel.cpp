//===- FuzzKernel.cpp - libFuzzer target: kernel IR parse + verify -*- C++ -*-===//
//
// Any byte string given as a kernel must be rejected with a diagnostic or
// parse and verify: never crash or hang. Inputs go through the same
// pre-parse checks as the driver (UTF-8, nesting depth).
//
//===----------------------------------------------------------------------===//

#include "src/InitAll.h"
#include "src/Support/InputChecks.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::DialectRegistry *registry = [] {
    auto *r = new mlir::DialectRegistry();
    pallasc::registerAllDialects(*r);
    return r;
  }();
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  std::string message;
  if (!pallasc::checkInputText(text, message))
    return 0;
  mlir::MLIRContext context(*registry);
  context.disableMultithreading();
  context.printOpOnDiagnostic(false);
  mlir::ScopedDiagnosticHandler quiet(&context,
                                      [](mlir::Diagnostic &) { return mlir::success(); });
  llvm::SourceMgr mgr;
  mgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "fuzz"),
                         llvm::SMLoc());
  mlir::ParserConfig config(&context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(mgr, config);
  (void)module;
  return 0;
}
