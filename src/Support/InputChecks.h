//===- InputChecks.h - Checks made on raw input before parsing -*- C++ -*-===//
//
// Cheap, linear scans that keep hostile input away from recursive parsers:
// binary bytes (NUL, invalid UTF-8), nesting deeper than the parsers'
// stacks allow, and affine expressions longer than MLIR's affine parser
// (which recurses once per operator) and its simplifier (quadratic in the
// length of a sum) can take.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_SUPPORT_INPUTCHECKS_H
#define PALLASC_SRC_SUPPORT_INPUTCHECKS_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace pallasc {

/// Deepest bracket nesting ({, [, (, <) accepted in a kernel file.
constexpr unsigned kMaxKernelNesting = 256;

/// Deepest parenthesis nesting of a grid spec's index map.
constexpr unsigned kMaxIndexMapNesting = 64;

/// Most operators (`+ - * floordiv ceildiv mod`, a unary minus included) one
/// expression may hold: the tokens between two that cannot be part of an
/// affine expression (`, ; : = [ ] { } < >` and `->`). Every affine
/// expression MLIR parses (an `affine_map<...>` or `affine_set<...>`, the
/// subscripts of an affine op, an index map) is such a run.
constexpr unsigned kMaxAffineOperators = 256;

/// Largest block (block_shape times the dtype's size) a spec may ask for, and
/// the largest value (a constant, a loaded block) a kernel may hold: 4 GiB.
/// No target keeps more than a few hundred MiB per program on chip, and the
/// host path (--target cpu, pallasc run) would allocate it per program;
/// checked before any work, so that a few bytes of input cannot ask for
/// gigabytes (docs/limits.md).
constexpr int64_t kMaxBlockBytes = int64_t(4) << 30;

/// Returns true if `text` is UTF-8 without NUL bytes, its bracket nesting
/// (outside string literals and `//` comments) stays within
/// kMaxKernelNesting and no expression holds more than
/// kMaxAffineOperators operators. Otherwise sets `message` to
/// "LINE:COL: <what is wrong>" (a predicate: "is nested deeper than 256
/// levels") and returns false.
bool checkInputText(llvm::StringRef text, std::string &message);

/// Returns true if the index map `text` (e.g. "(i, j) -> (i, j floordiv 2)")
/// nests parentheses at most kMaxIndexMapNesting deep and no expression of it
/// holds more than kMaxAffineOperators operators. Otherwise sets `message`
/// to what is wrong, ending with "at character N" (1-based), and returns
/// false.
bool checkIndexMapText(llvm::StringRef text, std::string &message);

} // namespace pallasc

#endif // PALLASC_SRC_SUPPORT_INPUTCHECKS_H
