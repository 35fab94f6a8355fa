//===- Frontend.h - The front half shared by compile and run ---*- C++ -*-===//
//
// Every pallasc command that starts from a kernel and a grid spec runs the
// same steps first: read both files, parse the kernel, import the spec as a
// pallas.call, verify, apply the transforms (spec's, then the command
// line's) and the cleanup passes. `pallasc` (compile) and `pallasc run`
// differ only in what they do with the resulting module.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_DRIVER_FRONTEND_H
#define PALLASC_SRC_DRIVER_FRONTEND_H

#include "src/Driver/Diagnostics.h"
#include "src/Driver/Driver.h"
#include "src/Spec/GridSpec.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>

namespace pallasc {

/// The registry every pallasc context is made from.
mlir::DialectRegistry makeDriverRegistry();

/// Configures a context made from makeDriverRegistry(): single-threaded, no
/// op dumps after diagnostics, every dialect loaded.
void configureDriverContext(mlir::MLIRContext &context);

/// What the front half produces.
struct FrontendResult {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  spec::GridSpec spec; ///< as parsed, with the command line's transforms
  std::string kernelText, specText;
};

/// Runs the front half for `options` (kernel and spec paths, transforms,
/// -O, IR printing). Diagnostics go through `router`. Returns kExitSuccess,
/// or the exit code after a diagnostic was printed.
int runFrontend(const DriverOptions &options, mlir::MLIRContext &context,
                DiagnosticRouter &router, FrontendResult &result);

} // namespace pallasc

#endif // PALLASC_SRC_DRIVER_FRONTEND_H
