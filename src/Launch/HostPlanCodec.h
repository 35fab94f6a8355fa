//===- HostPlanCodec.h - A host launch plan as embeddable text ---*- C++ -*-===//
//
// A generated launcher's `--target cpu` entry point runs its call with
// runHostGrid (src/Launch/HostGrid.h). The plan it needs is fixed at compile
// time, so pallasc embeds it in the launcher object as text: integers and
// names separated by spaces, the entry points (kernel, `@func` index-map
// wrappers) as indices into a table of function pointers the entry point
// passes along. The text is versioned ("pallasc-host-plan 1 ...") and
// decoding checks every count and index, so a mismatched or damaged plan is
// an error, never a crash.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_LAUNCH_HOSTPLANCODEC_H
#define PALLASC_SRC_LAUNCH_HOSTPLANCODEC_H

#include "src/Launch/HostGrid.h"

#include <functional>
#include <string>
#include <string_view>

namespace pallasc::launch {

/// Encodes `plan`; `indexOf` gives each entry point's index in the table the
/// decoder will receive (the kernel and every index-map wrapper).
std::string encodeHostCallPlan(const HostCallPlan &plan,
                               const std::function<size_t(PackedFn)> &indexOf);

/// Decodes `text` into `plan`, resolving entry-point indices in `functions`
/// (`numFunctions` of them). False with `error` set on malformed text, an
/// unknown version or an index out of range.
bool decodeHostCallPlan(std::string_view text, const PackedFn *functions,
                        size_t numFunctions, HostCallPlan &plan,
                        std::string &error);

} // namespace pallasc::launch

#endif // PALLASC_SRC_LAUNCH_HOSTPLANCODEC_H
