//===- InputChecks.h - Checks made on raw input before parsing -*- C++ -*-===//
//
// Cheap, linear scans that keep hostile input away from recursive parsers:
// binary bytes (NUL, invalid UTF-8) and nesting deeper than the parsers'
// stacks allow.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_SUPPORT_INPUTCHECKS_H
#define PALLASC_SRC_SUPPORT_INPUTCHECKS_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace pallasc {

/// Deepest bracket nesting ({, [, (, <) accepted in a kernel file.
constexpr unsigned kMaxKernelNesting = 256;

/// Returns true if `text` is UTF-8 without NUL bytes and its bracket nesting
/// (outside string literals and `//` comments) stays within
/// kMaxKernelNesting. Otherwise sets `message` to
/// "LINE:COL: <what is wrong>" and returns false.
bool checkInputText(llvm::StringRef text, std::string &message);

} // namespace pallasc

#endif // PALLASC_SRC_SUPPORT_INPUTCHECKS_H
