//===- HostCode.h - Host code for lowered kernels: JIT and objects -*- C++ -*-===//
//
// After the CPU pipeline (passes/Pipelines, buildCpuPipeline) a module is in
// the LLVM dialect. It is then either JIT-compiled for this machine (the
// `pallasc run` path) or written as a relocatable object (`--target cpu`).
// Both optimize the LLVM IR at -O3. The JIT's object code can be kept
// between processes (JitObjectCache): a later run links it without code
// generation.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_RUNTIME_HOSTCODE_H
#define PALLASC_SRC_RUNTIME_HOSTCODE_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CodeGen.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace llvm {
class Error;
class Module;
class TargetMachine;
namespace orc {
class LLJIT;
} // namespace orc
} // namespace llvm

namespace pallasc::runtime {

/// Runs the CPU pipeline on `module` in place (pallas kernels and index maps
/// to the LLVM dialect). Diagnostics go through the module's context.
mlir::LogicalResult lowerForHost(mlir::ModuleOp module,
                                 bool printIRAfterAll = false);

/// Where the object code of a JIT compilation is kept between processes
/// (the driver backs it with its compile cache, src/Driver/Cache.h). An
/// instance stands for one key: the caller has hashed everything that
/// produces the object.
class JitObjectCache {
public:
  virtual ~JitObjectCache();
  /// The stored object, or nullopt.
  virtual std::optional<std::string> load() = 0;
  /// Keeps `object` (failures are the cache's to report, as warnings).
  virtual void store(llvm::StringRef object) = 0;
  /// Reports a problem that the caller recovers from.
  virtual void warn(llvm::StringRef message) = 0;
};

/// How a lowered module is JIT-compiled.
struct JitOptions {
  /// The LLVM IR optimization; empty: -O3 with the loops of very large
  /// functions outlined, as for --target cpu objects.
  std::function<llvm::Error(llvm::Module &, llvm::TargetMachine &)> optimize;
  /// The code generator's optimization level.
  llvm::CodeGenOptLevel codeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  /// Names resolvable besides the runtime's functions (debug printing,
  /// memrefCopy) and the process's own symbols: (name, address).
  std::vector<std::pair<const char *, void *>> extraSymbols;
};

/// What the object code of a JIT compilation depends on besides its module
/// and options: the host's triple, CPU name and CPU features (the JIT
/// targets this very machine) and the LLVM version.
std::string jitHostIdentity();

/// A JIT-compiled, lowered module: one object file, produced for this
/// machine and linked into the process by ORC.
class JitModule {
public:
  using PackedFn = void (*)(void **);
  ~JitModule();

  /// Compiles `lowered` (in the LLVM dialect) for this machine: translation
  /// to LLVM IR, a packed-argument wrapper per C interface, optimization,
  /// code generation to an object, then linking it. When `object` is given
  /// it receives the object's bytes (empty for a module with static
  /// constructors or destructors, which is linked as IR instead), for
  /// JitModule::load in a later process.
  static std::unique_ptr<JitModule> create(mlir::ModuleOp lowered,
                                           std::string &error,
                                           const JitOptions &options = {},
                                           std::string *object = nullptr);

  /// Links an object that create() produced on this machine (no code
  /// generation). Fails, with `error` set, on bytes that are not such an
  /// object.
  static std::unique_ptr<JitModule> load(llvm::StringRef object,
                                         std::string &error,
                                         const JitOptions &options = {});

  /// The object stored in `objects`, linked; null when there is none or it
  /// does not link (a warning through `objects`: the caller compiles).
  static std::unique_ptr<JitModule> loadCached(JitObjectCache &objects,
                                               const JitOptions &options);

  /// The packed-argument entry of `func`'s C interface
  /// (`_mlir_ciface_<func>`): `args[i]` points at argument `i` (memrefs are
  /// passed as pointers to descriptors).
  PackedFn lookupCInterface(const std::string &func, std::string &error);

private:
  JitModule() = default;
  std::unique_ptr<llvm::orc::LLJIT> jit;
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
