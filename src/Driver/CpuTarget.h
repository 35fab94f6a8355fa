//===- CpuTarget.h - --target cpu: a host object file ----------*- C++ -*-===//
//
// `pallasc ... --target cpu` writes `<name>.cpu.o`: the kernel and its
// `@func` index maps lowered by the same pipeline `pallasc run` uses, as a
// relocatable object for the host triple, with C-interface entry points
// (`_mlir_ciface_<kernel>`). The manifest entry says how to call them.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_DRIVER_CPUTARGET_H
#define PALLASC_SRC_DRIVER_CPUTARGET_H

#include "src/Manifest/Manifest.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace pallasc {

/// True for the `--target` spelling of the host CPU.
inline bool isCpuTarget(const std::string &target) { return target == "cpu"; }

/// Lowers a copy of `module` (after the transforms) and emits the object.
/// On success `file` is `<name>.cpu.o`, `bytes` its contents and `entry`
/// its manifest entry (sha256 filled in). A call eliminated by pallas-dce
/// has no kernel to emit: `file` is left empty.
mlir::LogicalResult emitCpuArtifact(mlir::ModuleOp module,
                                    const std::string &name, std::string &file,
                                    std::string &bytes,
                                    ManifestArtifact &entry);

} // namespace pallasc

#endif // PALLASC_SRC_DRIVER_CPUTARGET_H
