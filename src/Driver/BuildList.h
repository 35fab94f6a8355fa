//===- BuildList.h - The job list of `pallasc build` -----------*- C++ -*-===//
//
// `pallasc build LIST.json` reads a JSON array of compile jobs (schema
// schemas/buildlist.schema.json, docs/cli.md):
//
//   [{"kernel": "matmul/kernel.mlir", "spec": "matmul/spec.json",
//     "targets": ["cuda:sm_90a", "tpu"], "name": "matmul_f32",
//     "out_dir": "out/matmul", "emit": ["mlir"],
//     "transforms": [{"vmap": {"in_axes": [0], "axis_size": 4}}],
//     "flags": ["-O3"]}, ...]
//
// Each entry is one compile, the one `pallasc KERNEL --spec SPEC --target
// T... --output-dir OUT_DIR --emit E... --name NAME [--vmap ...] FLAGS...`
// makes ("transforms" are spelled as the transform flags). Paths
// are relative to the list file's directory. nlohmann/json throws: this file
// is built with exceptions and catches them all (the header is
// exception-free).
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_DRIVER_BUILDLIST_H
#define PALLASC_SRC_DRIVER_BUILDLIST_H

#include "src/Spec/GridSpec.h"

#include <optional>
#include <string>
#include <vector>

namespace pallasc {

/// One entry of a build list, its paths resolved against the list's
/// directory.
struct BuildListEntry {
  std::string path; ///< JSON path of the entry, e.g. "[2]"
  std::string kernel, spec;
  /// Empty when the entry has no "targets" (the command line's apply).
  std::vector<std::string> targets;
  bool hasTargets = false;
  std::string name;   ///< "" when absent
  std::string outDir; ///< "" when absent
  std::vector<std::string> emit;
  bool hasEmit = false;
  /// Further command-line flags of the compile, as given ("-O3",
  /// "--vmap=0,none:4", "--strict-fp", ...).
  std::vector<std::string> flags;
  /// "transforms" (the spec's form: [{"vmap": {"in_axes": [0, null],
  /// "axis_size": 4}}, {"jvp": {}}, ...]) as the command-line flags that
  /// append them ("--vmap=0,none:4", "--jvp"), before `flags`.
  std::vector<std::string> transformFlags;
};

/// Most entries a build list may hold.
constexpr size_t kMaxBuildListEntries = 100000;

/// Parses a build list. `baseDir` is the list file's directory ("" for the
/// current one). On failure returns false with at least one error in
/// `errors` (JSON path, or line and column for a syntax error). Never
/// throws.
bool parseBuildList(const std::string &text, const std::string &baseDir,
                    std::vector<BuildListEntry> &entries,
                    std::vector<spec::SpecError> &errors);

/// The "name" of the grid spec in the file at `path` (the artifact name a
/// compile of it writes, unless --name says otherwise), or "" when the file
/// cannot be read or holds no such string. For the check that no two jobs
/// of a build write the same files; the compile itself reports bad specs.
std::string peekSpecName(const std::string &path);

} // namespace pallasc

#endif // PALLASC_SRC_DRIVER_BUILDLIST_H
