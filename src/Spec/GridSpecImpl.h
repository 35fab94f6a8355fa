//===- GridSpecImpl.h - The grid spec parser's shared parts -----*- C++ -*-===//
//
// Private to src/Spec: what the files of the grid spec parser (GridSpec.h's
// parseGridSpec) share: the limits, the text helpers of the messages, the
// index map syntax check and the Validator, which walks the JSON DOM into a
// GridSpec. The files, one concern each:
//
//   GridSpec.cpp           the entry point: the nesting pre-scan, the JSON DOM
//                          builder that reports duplicate keys, and the
//                          dtype and memory space names of GridSpec.h
//   SpecText.cpp           text helpers: sanitizing and quoting user text,
//                          JSON paths, "did you mean" suggestions, value
//                          descriptions; isIdentifier and lineColumn
//   IndexMapSyntax.cpp     the syntax check of an affine index map
//   Validator.cpp          the Validator's core: key checks, the value
//                          readers, the walk over the sections, symbols,
//                          grid and grid_names
//   SymExpr.cpp            dimension expressions over the symbols (public:
//                          SymExpr.h)
//   ValidateArrays.cpp     inputs, outputs, scalar prefetch and block specs
//   ValidateParams.cpp     scratch shapes, aliases, cost estimate, compiler
//                          params and metadata
//   ValidateTransforms.cpp transforms
//
// nlohmann/json throws: this header is included only by PallascSpec's files,
// which are built with exceptions; nothing thrown in them escapes
// parseGridSpec.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_SPEC_GRIDSPECIMPL_H
#define PALLASC_SRC_SPEC_GRIDSPECIMPL_H

#include "src/Spec/GridSpec.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pallasc::spec::detail {

using json = nlohmann::json;

//===----------------------------------------------------------------------===//
// Limits
//===----------------------------------------------------------------------===//

constexpr const char *kSchemaId = "pallasc.gridspec/v1";
/// Deepest `[`/`{` nesting accepted (a valid spec needs 5).
constexpr int kMaxNestingDepth = 64;
/// Errors reported before giving up (one more says so).
constexpr size_t kMaxErrors = 50;
constexpr size_t kMaxRank = 16;
constexpr size_t kMaxGridRank = 16;
constexpr size_t kMaxOperands = 4096; // inputs, outputs, scratch_shapes
constexpr size_t kMaxHiParts = 16;    // parts of a hi input
constexpr size_t kMaxTransforms = 256;
constexpr size_t kMaxSymbols = 64;

//===----------------------------------------------------------------------===//
// Text helpers (SpecText.cpp)
//===----------------------------------------------------------------------===//

/// Makes user-provided text safe and short for a message: non-printable and
/// non-ASCII bytes become \xNN, and the result is cut at `maxLen` bytes.
std::string sanitize(const std::string &s, size_t maxLen = 64);
/// `s` sanitized, in single quotes.
std::string quote(const std::string &s);
/// The JSON path of `key` of the object at `path` ("a.b"; "b" at the top).
std::string joinPath(const std::string &path, const std::string &key);
/// The JSON path of element `i` of the array at `path` ("a[3]").
std::string indexPath(const std::string &path, size_t i);

bool isAsciiAlpha(char c);
bool isAsciiDigit(char c);

/// Optimal-string-alignment distance (adjacent swaps cost 1).
size_t editDistance(const std::string &a, const std::string &b);
/// The candidate closest to `word` when it is close enough to be a likely
/// typo, else empty.
std::string closest(const std::string &word,
                    const std::vector<std::string> &candidates);
/// "'a', 'b' or 'c'".
std::string listOf(const std::vector<std::string> &words);
/// "1 entry", "3 entries".
std::string countOf(size_t n, const char *singular, const char *plural);
/// "[2,3]".
std::string formatShape(const std::vector<int64_t> &shape);
/// Human description of a JSON value, for "got ..." parts of messages.
std::string describe(const json &v);

/// Checked products in int64.
inline bool mulOverflows(int64_t a, int64_t b, int64_t &out) {
  return __builtin_mul_overflow(a, b, &out);
}

//===----------------------------------------------------------------------===//
// Index map syntax (IndexMapSyntax.cpp)
//===----------------------------------------------------------------------===//

/// Light syntactic check of "(d0, d1) -> (e0, e1)"; on success fills the
/// number of dims and results, else returns a message.
std::optional<std::string> checkAffineMap(const std::string &s, size_t &numDims,
                                          size_t &numResults);

//===----------------------------------------------------------------------===//
// Validator (Validator.cpp, Validate*.cpp)
//===----------------------------------------------------------------------===//

/// What the validator learnt about one of `inputs`/`outputs`, for the checks
/// that relate several keys.
struct ArrayInfo {
  bool shapeOk = false;
  bool dtypeOk = false;
};

class Validator {
public:
  explicit Validator(std::vector<SpecError> &errors) : errors(errors) {}

  bool failed() const { return numErrors > 0; }

  void error(const std::string &path, const std::string &message, int line = 0,
             int column = 0) {
    if (numErrors < kMaxErrors)
      errors.push_back({path, message, line, column});
    else if (numErrors == kMaxErrors)
      errors.push_back({"", "too many errors; stopping after " +
                                std::to_string(kMaxErrors)});
    ++numErrors;
  }

  std::optional<GridSpec> run(const json &root);

private:
  std::vector<SpecError> &errors;
  size_t numErrors = 0;

  GridSpec spec;
  bool gridRankKnown = false;
  bool inputsKnown = false, outputsKnown = false;
  std::vector<ArrayInfo> inputInfo, outputInfo;
  bool prefetchKnown = false;

  // Generic helpers.
  static const json *find(const json &obj, const char *key) {
    auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
  }
  bool expectObject(const json &v, const std::string &path,
                    const std::string &what = "an object") {
    if (v.is_object())
      return true;
    error(path, "expected " + what + ", got " + describe(v));
    return false;
  }
  bool expectArray(const json &v, const std::string &path,
                   const std::string &what) {
    if (v.is_array())
      return true;
    error(path, "expected " + what + ", got " + describe(v));
    return false;
  }
  /// The string `v`; else reports "expected `what`, got ..." and returns
  /// null.
  const std::string *expectString(const json &v, const std::string &path,
                                  const std::string &what) {
    if (v.is_string())
      return &v.get_ref<const std::string &>();
    error(path, "expected " + what + ", got " + describe(v));
    return nullptr;
  }
  /// Whether the array or object `v` has at most `limit` entries; else
  /// reports "`name` has N entries, which exceeds the limit of `limit`" at
  /// `path`.
  bool expectAtMost(const json &v, const std::string &path,
                    const std::string &name, size_t limit) {
    if (v.size() <= limit)
      return true;
    error(path, name + " has " + countOf(v.size(), "entry", "entries") +
                    ", which exceeds the limit of " + std::to_string(limit));
    return false;
  }
  /// Reports every key of `obj` not in `allowed`.
  void checkKeys(const json &obj, const std::string &path,
                 const std::vector<std::string> &allowed);
  const json *require(const json &obj, const std::string &path,
                      const char *key) {
    const json *v = find(obj, key);
    if (!v)
      error(path, std::string("missing required key '") + key + "'");
    return v;
  }
  std::optional<int64_t> intValue(const json &v, const std::string &path,
                                  int64_t min, const std::string &expected);
  std::optional<bool> boolValue(const json &v, const std::string &path);
  std::optional<std::string> identifier(const json &v, const std::string &path);
  std::optional<std::string> dtypeValue(const json &v, const std::string &path);
  std::optional<MemorySpace> memorySpaceValue(const json &v,
                                              const std::string &path);
  /// A shape; with `exprs`, dimensions may be symbol expressions (then
  /// `exprs` gets one expression per dimension, else stays empty).
  bool shapeValue(const json &v, const std::string &path,
                  std::vector<int64_t> &shape,
                  std::vector<DimExpr> *exprs = nullptr);
  /// A dimension expression string over the declared symbols: parsed,
  /// every symbol declared, and never negative over their ranges.
  std::optional<DimExpr> dimExprValue(const std::string &text,
                                      const std::string &path,
                                      bool allowDivision, const char *what);
  void checkByteSize(const std::vector<int64_t> &shape,
                     const std::string &dtype, const std::string &path);

  // Sections.
  void parseSymbols(const json &root);
  void parseGrid(const json &root);
  void parseGridNames(const json &root);
  void parseArrays(const json &root, const char *key, bool isInput,
                   std::vector<ArraySpec> &out, std::vector<ArrayInfo> &info,
                   bool &known);
  void parseScalarPrefetch(const json &root);
  void parseBlockSpecs(const json &root, bool isInput);
  void parseBlockSpec(const json &v, BlockSpec &bs, const ArraySpec *array,
                      const std::string &arrayPath);
  /// The block of a symbolic array: each block dimension against the
  /// range of the array dimension it walks.
  void checkSymbolicBlock(const BlockSpec &bs, const ArraySpec &array,
                          const std::string &bpath);
  bool parseBlockDim(const json &v, const std::string &path, BlockDim &dim);
  void parseIndexMap(const json &v, const std::string &path, IndexMap &map,
                     const ArraySpec *array, const std::string &arrayPath);
  void parseScratch(const json &root);
  void parseAliases(const json &root);
  void parseCostEstimate(const json &root);
  void parseCompilerParams(const json &root);
  void parseMetadata(const json &root);
  void parseTransforms(const json &root);
  void parseAxisSize(const json &body, const std::string &bpath,
                     Transform &t);
  void parseTransformAsWritten(const json &body, const std::string &bpath,
                               Transform &t);
  /// The array `key` of the transform `body` at `bpath` (`what` describes
  /// it) when it is there, an array, and, where the operands are `known`,
  /// one entry per operand (`count` of them, `one`/`many` naming them);
  /// else null, with the error. `path` gets the array's path.
  const json *operandArray(const json &body, const std::string &bpath,
                           const char *key, const std::string &what, bool known,
                           size_t count, const char *one, const char *many,
                           std::string &path);
};

} // namespace pallasc::spec::detail

#endif // PALLASC_SRC_SPEC_GRIDSPECIMPL_H
