//===- Manifest.h - The pallasc.manifest/v1 JSON manifest ------*- C++ -*-===//
//
// The manifest describes how to launch what pallasc wrote: the final
// pallas.call's operands (in launch order, with roles, shapes, dtypes, blocks
// and index maps), grid, aliases, cost estimate, compiler params, metadata,
// the transforms applied, and one entry per target artifact. It is
// deterministic: sorted keys, no timestamps, no absolute paths.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_MANIFEST_MANIFEST_H
#define PALLASC_SRC_MANIFEST_MANIFEST_H

#include "mlir/IR/BuiltinOps.h"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace pallasc {

/// Lowercase hex SHA-256 of `data`.
std::string sha256Hex(llvm::StringRef data);

/// One input file of the compilation.
struct ManifestSource {
  std::string file;   ///< file name as given, without directories
  std::string sha256; ///< of the file's bytes
};

/// One artifact written for a target.
struct ManifestArtifact {
  std::string target; ///< e.g. "cuda:sm_90"
  std::string file;   ///< file name inside the output directory
  std::string sha256;
  nlohmann::json launch = nlohmann::json::object(); ///< target-specific
};

/// What a target's artifact writer (src/Target) gives: the files to write,
/// one manifest entry per written artifact, and the files written for
/// --emit (the manifest's "emitted").
struct TargetArtifacts {
  struct File {
    std::string name; ///< inside the output directory
    std::string contents;
  };
  std::vector<File> files;
  std::vector<ManifestArtifact> manifestEntries;
  std::vector<std::string> emitted;
};

/// The call of a Mosaic GPU kernel (`pallas_mgpu.kernel`, which has no
/// pallas.call): whole operands in global memory, the mesh's grid.
struct ManifestMosaicGpuCall {
  std::string kernel;
  std::vector<int64_t> grid, cluster;
  std::vector<std::string> gridNames, clusterNames;
  int64_t numThreads = 1;
  std::string threadName; ///< "" when the mesh names no thread axis
  /// Ranked tensor types, in launch order.
  std::vector<mlir::Type> inputs, outputs;
  std::map<std::string, std::string> metadata; ///< the spec's
};

struct ManifestInputs {
  ManifestSource kernel, spec;
  std::string name;  ///< artifact name
  std::vector<ManifestArtifact> artifacts;
  std::vector<std::string> emitted; ///< other files written (e.g. the .mlir)
  /// Set for a Mosaic GPU kernel: the call the manifest describes.
  std::optional<ManifestMosaicGpuCall> mosaicGpu;
};

/// The manifest as JSON, from the module's (single) pallas.call (or
/// `inputs.mosaicGpu`), or an `eliminated` manifest when DCE removed the
/// call. Fails (with a diagnostic
/// on the module) if the module holds no call and was not eliminated.
mlir::FailureOr<nlohmann::json> buildManifest(mlir::ModuleOp module,
                                              const ManifestInputs &inputs);

/// The manifest's text: 2-space indented, sorted keys, trailing newline.
std::string manifestToString(const nlohmann::json &manifest);

/// Attribute set on the call's wrapper function when pallas-dce eliminated
/// the call.
constexpr const char *kEliminatedAttrName = "pallas.eliminated";

/// Attribute set on a pallas.call that pallas-vmap's explicit-loop fallback
/// runs once per batch element: {axis_size, in_axes, grid_bound_axes}.
constexpr const char *kBatchLoopAttrName = "pallas.batch_loop";

} // namespace pallasc

#endif // PALLASC_SRC_MANIFEST_MANIFEST_H
