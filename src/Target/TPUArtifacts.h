//===- TPUArtifacts.h - --target tpu: Mosaic module + backend config -*- C++ -*-===//
//
// The TPU target of the driver: lowers a copy of the compiled module with
// pallas-to-tpu, serializes it as Mosaic does and returns the files to write
// (<name>.tpu.mlirbc, <name>.tpu.json, and with --emit=mlir the readable
// <name>.tpu.mlir) with their manifest entries. The driver stages them.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_TARGET_TPUARTIFACTS_H
#define PALLASC_SRC_TARGET_TPUARTIFACTS_H

#include "src/Manifest/Manifest.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace pallasc {

/// The .tpu.mlirbc and the .tpu.json, their manifest entries, and the
/// .tpu.mlir --emit writes.
struct TpuArtifacts : TargetArtifacts {};

/// True for the `--target` values this produces (`tpu`).
bool isTpuTarget(llvm::StringRef target);

/// Builds the TPU artifacts of `module` (after the call-level transforms;
/// not modified) for the artifact name `name`. `emitText` adds the
/// pre-serialization Mosaic module as text. Diagnostics go to the module's
/// context.
mlir::FailureOr<TpuArtifacts> emitTpuArtifacts(mlir::ModuleOp module,
                                               const std::string &name,
                                               bool emitText);

} // namespace pallasc

#endif // PALLASC_SRC_TARGET_TPUARTIFACTS_H
