//===- ToolLookup.h - How the GPU targets find their tools ------*- C++ -*-===//
//
// PALLASC_EXPLICIT_TOOLS=1 (any value but empty or 0): every external tool
// and library of a GPU compile comes from its own variable only (PTXAS,
// CUDA_HOME for libdevice, PALLASC_LD_LLD, ROCM_PATH; `none` declares its
// absence), never from a default location, PATH or another variable. Build
// systems with declared inputs (the Bazel rules, bazel/defs.bzl) set it so
// that a missing declaration fails instead of finding the host's tools.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_PIPELINES_TOOLLOOKUP_H
#define PALLASC_PASSES_PIPELINES_TOOLLOOKUP_H

namespace mlir::pallas {

/// True when PALLASC_EXPLICIT_TOOLS asks for explicit tool lookup.
bool explicitToolLookup();

} // namespace mlir::pallas

#endif // PALLASC_PASSES_PIPELINES_TOOLLOOKUP_H
