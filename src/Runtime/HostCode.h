//===- HostCode.h - Host code for lowered kernels: JIT and objects -*- C++ -*-===//
//
// After the CPU pipeline (passes/Pipelines, buildCpuPipeline) a module is in
// the LLVM dialect. It is then either JIT-compiled for this machine (the
// `pallasc run` path) or written as a relocatable object (`--target cpu`).
// Both optimize the LLVM IR at -O3.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_RUNTIME_HOSTCODE_H
#define PALLASC_SRC_RUNTIME_HOSTCODE_H

#include "mlir/IR/BuiltinOps.h"

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace mlir {
class ExecutionEngine;
} // namespace mlir
namespace llvm {
class Module;
} // namespace llvm

namespace pallasc::runtime {

/// Runs the CPU pipeline on `module` in place (pallas kernels and index maps
/// to the LLVM dialect). Diagnostics go through the module's context.
mlir::LogicalResult lowerForHost(mlir::ModuleOp module,
                                 bool printIRAfterAll = false);

/// A JIT-compiled, lowered module.
class JitModule {
public:
  using PackedFn = void (*)(void **);
  ~JitModule();

  /// Compiles `lowered` for this machine, with the runtime's functions
  /// (debug printing, memrefCopy) and `extraSymbols` (name, address)
  /// resolvable.
  static std::unique_ptr<JitModule>
  create(mlir::ModuleOp lowered, std::string &error,
         const std::vector<std::pair<const char *, void *>> &extraSymbols =
             {});

  /// The packed-argument entry of `func`'s C interface
  /// (`_mlir_ciface_<func>`): `args[i]` points at argument `i` (memrefs are
  /// passed as pointers to descriptors).
  PackedFn lookupCInterface(const std::string &func, std::string &error);

private:
  JitModule() = default;
  std::unique_ptr<mlir::ExecutionEngine> engine;
};

/// Translates `lowered` to LLVM IR and writes a relocatable object for the
/// host triple (generic CPU, position independent) into `object`. When
/// given, `augment` edits the translated LLVM module before it is optimized
/// (generated launchers add their entry points); it fails with `error` set.
bool emitHostObject(
    mlir::ModuleOp lowered, std::string &object, std::string &error,
    const std::function<bool(llvm::Module &, std::string &)> &augment = {});

/// The host's target triple, e.g. "x86_64-pc-linux-gnu".
std::string hostTriple();

} // namespace pallasc::runtime

#endif // PALLASC_SRC_RUNTIME_HOSTCODE_H
