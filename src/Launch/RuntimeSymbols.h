//===- RuntimeSymbols.h - C functions lowered kernels call ----*- C++ -*-===//
//
// The lowered `pallas.debug_print` calls `_mlir_ciface_pallasc_debug_*`
// (text, scalars, tensors as unranked memrefs); non-contiguous memref copies
// call `memrefCopy`. The JIT resolves these names to the definitions here;
// programs linking a `<name>.cpu.o` or a generated `<name>.a` get them from
// the launch runtime (libPallascLaunch, pallasc::launch), which holds them.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_LAUNCH_RUNTIMESYMBOLS_H
#define PALLASC_SRC_LAUNCH_RUNTIMESYMBOLS_H

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace pallasc::runtime {

/// (symbol name, address) of every runtime function.
std::vector<std::pair<const char *, void *>> runtimeSymbols();

/// Takes the error a kernel reported on this thread (a semaphore wait that
/// can never return); false when there is none.
bool takeKernelError(std::string &message);

/// Where debug_print writes (stdout by default).
void setDebugPrintStream(std::FILE *stream);

} // namespace pallasc::runtime

#endif // PALLASC_SRC_LAUNCH_RUNTIMESYMBOLS_H
