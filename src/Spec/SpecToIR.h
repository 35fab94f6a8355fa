//===- SpecToIR.h - Grid spec -> pallas.call ------------------*- C++ -*-===//
//
// Turns a parsed grid spec into IR: a `func.func @main` in the kernel's module
// whose body is one `pallas.call` carrying the whole grid mapping. After this,
// every transformation is an ordinary pass and the manifest is written from
// the final call (docs/gridspec.md, docs/manifest.md).
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_SPEC_SPECTOIR_H
#define PALLASC_SRC_SPEC_SPECTOIR_H

#include "src/Spec/GridSpec.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Types.h"

#include <optional>
#include <string>
#include <vector>

namespace pallasc::spec {

/// The MLIR element type for a canonical dtype (bool -> i1; unsigned types
/// map to signless integers of the same width).
mlir::Type dtypeToType(mlir::MLIRContext *ctx, const std::string &dtype);

/// The canonical dtype spelling of an element type ("f32", "bf16", "i1" is
/// "bool").
std::string typeToDtype(mlir::Type type);

/// The message for a spec whose kernel `name` is no `opName` op (of type
/// `KernelOp`) of `module`, listing the kernels it defines.
template <typename KernelOp>
std::string noKernelMessage(mlir::ModuleOp module, const char *opName,
                            const std::string &name) {
  std::string found;
  for (auto k : module.getOps<KernelOp>())
    found += (found.empty() ? "" : ", ") + k.getSymName().str();
  return "no " + std::string(opName) + " named '" + name +
         "' in the kernel module" +
         (found.empty() ? std::string(" (it defines none)")
                        : " (kernels defined: " + found + ")");
}

/// Name of the wrapper function that holds the pallas.call.
constexpr const char *kCallWrapperName = "main";

/// Adds `func.func @main` with the `pallas.call` described by `spec` to
/// `module`. `specLoc` is the location given to the created ops. Returns
/// false and appends errors (with JSON paths) when the spec does not fit the
/// module: unknown kernel symbol, index maps that do not parse or have the
/// wrong arity, a symbol `@main` already defined. Checks that need the
/// kernel's signature are left to the pallas.call verifier.
bool importGridSpec(mlir::ModuleOp module, const GridSpec &spec,
                    mlir::Location specLoc, std::vector<SpecError> &errors);

} // namespace pallasc::spec

#endif // PALLASC_SRC_SPEC_SPECTOIR_H
