//===- GridSpec.cpp - Parse and validate the JSON grid spec -----*- C++ -*-===//
//
// Reads a `pallasc.gridspec/v1` document (docs/gridspec.md) into a GridSpec.
//
// Parsing goes through nlohmann/json's SAX interface with our own DOM builder,
// so that duplicate keys are caught (with their path) and no exception
// escapes; the text is first scanned for its nesting depth, so that hostile
// input cannot exhaust the stack. Validation then walks the DOM and gathers
// as many errors as it can (up to kMaxErrors), each naming the JSON path of
// the offending value.
//
// This file is compiled with exceptions; nothing thrown in it escapes
// parseGridSpec.
//
//===----------------------------------------------------------------------===//

#include "src/Spec/GridSpec.h"
#include "src/Support/InputChecks.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <exception>
#include <initializer_list>
#include <set>

namespace pallasc::spec {

const char *memorySpaceName(MemorySpace ms) {
  switch (ms) {
  case MemorySpace::Default:
    return "default";
  case MemorySpace::Any:
    return "any";
  case MemorySpace::Smem:
    return "smem";
  case MemorySpace::Vmem:
    return "vmem";
  case MemorySpace::Gmem:
    return "gmem";
  case MemorySpace::Hbm:
    return "hbm";
  case MemorySpace::Semaphore:
    return "semaphore";
  }
  return "default";
}

std::optional<std::string> canonicalDtype(const std::string &dtype) {
  static const std::pair<const char *, const char *> kSpellings[] = {
      {"bool", "bool"},     {"bool_", "bool"},  {"i8", "i8"},
      {"int8", "i8"},       {"i16", "i16"},     {"int16", "i16"},
      {"i32", "i32"},       {"int32", "i32"},   {"i64", "i64"},
      {"int64", "i64"},     {"u8", "u8"},       {"uint8", "u8"},
      {"u16", "u16"},       {"uint16", "u16"},  {"u32", "u32"},
      {"uint32", "u32"},    {"u64", "u64"},     {"uint64", "u64"},
      {"f16", "f16"},       {"float16", "f16"}, {"bf16", "bf16"},
      {"bfloat16", "bf16"}, {"f32", "f32"},     {"float32", "f32"},
      {"f64", "f64"},       {"float64", "f64"},
  };
  for (const auto &[spelling, canonical] : kSpellings)
    if (dtype == spelling)
      return std::string(canonical);
  return std::nullopt;
}

int64_t dtypeByteWidth(const std::string &canonicalDtype) {
  const std::string &d = canonicalDtype;
  if (d == "bool" || d == "i8" || d == "u8")
    return 1;
  if (d == "i16" || d == "u16" || d == "f16" || d == "bf16")
    return 2;
  if (d == "i32" || d == "u32" || d == "f32")
    return 4;
  if (d == "i64" || d == "u64" || d == "f64")
    return 8;
  return 0;
}

namespace {

using json = nlohmann::json;

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

//===----------------------------------------------------------------------===//
// Text helpers
//===----------------------------------------------------------------------===//

/// Makes user-provided text safe and short for a message: non-printable and
/// non-ASCII bytes become \xNN, and the result is cut at `maxLen` bytes.
std::string sanitize(const std::string &s, size_t maxLen = 64) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (out.size() >= maxLen) {
      out += "...";
      break;
    }
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c >= 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string quote(const std::string &s) { return "'" + sanitize(s) + "'"; }

std::string joinPath(const std::string &path, const std::string &key) {
  std::string k = sanitize(key);
  return path.empty() ? k : path + "." + k;
}

std::string indexPath(const std::string &path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

bool isAsciiAlpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool isAsciiDigit(char c) { return c >= '0' && c <= '9'; }

/// [A-Za-z_][A-Za-z0-9_$.]*

/// Optimal-string-alignment distance (adjacent swaps cost 1).
size_t editDistance(const std::string &a, const std::string &b) {
  size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i)
    d[i][0] = i;
  for (size_t j = 0; j <= m; ++j)
    d[0][j] = j;
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 1; j <= m; ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] =
          std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

/// The candidate closest to `word` when it is close enough to be a likely
/// typo, else empty.
std::string closest(const std::string &word,
                    const std::vector<std::string> &candidates) {
  if (word.empty() || word.size() > 64)
    return {};
  size_t limit = std::max<size_t>(1, std::min<size_t>(2, word.size() / 4));
  std::string best;
  size_t bestDist = limit + 1;
  for (const std::string &c : candidates) {
    size_t d = editDistance(word, c);
    if (d < bestDist) {
      bestDist = d;
      best = c;
    }
  }
  return best;
}

std::string listOf(const std::vector<std::string> &words) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i)
      out += i + 1 == words.size() ? " or " : ", ";
    out += "'" + words[i] + "'";
  }
  return out;
}

/// "1 entry", "3 entries".
std::string countOf(size_t n, const char *singular, const char *plural) {
  return std::to_string(n) + " " + (n == 1 ? singular : plural);
}

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      out += ",";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

/// Human description of a JSON value, for "got ..." parts of messages.
std::string describe(const json &v) {
  switch (v.type()) {
  case json::value_t::null:
    return "null";
  case json::value_t::boolean:
    return v.get<bool>() ? "boolean true" : "boolean false";
  case json::value_t::string:
    return "string \"" + sanitize(v.get_ref<const std::string &>(), 40) + "\"";
  case json::value_t::number_integer:
    return "integer " + std::to_string(v.get<int64_t>());
  case json::value_t::number_unsigned:
    return "integer " + std::to_string(v.get<uint64_t>());
  case json::value_t::number_float:
    return "number " + v.dump();
  case json::value_t::array:
    return "array";
  case json::value_t::object:
    return "object";
  default:
    return "an unsupported value";
  }
}


/// Checked products in int64.
bool mulOverflows(int64_t a, int64_t b, int64_t &out) {
  return __builtin_mul_overflow(a, b, &out);
}

//===----------------------------------------------------------------------===//
// Nesting-depth pre-scan
//===----------------------------------------------------------------------===//

/// Returns the byte offset of the first `[`/`{` (outside strings) that nests
/// deeper than kMaxNestingDepth, or npos.
size_t findExcessiveNesting(const std::string &text) {
  int depth = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxNestingDepth)
        return i;
    } else if (c == ']' || c == '}') {
      if (depth > 0)
        --depth;
    }
  }
  return std::string::npos;
}

//===----------------------------------------------------------------------===//
// SAX DOM builder: like nlohmann's own, but reports duplicate keys.
//===----------------------------------------------------------------------===//

class DomBuilder {
public:
  json root;
  /// (path, key) of each duplicate key, in document order.
  std::vector<std::pair<std::string, std::string>> duplicateKeys;
  /// Set on a syntax error.
  bool syntaxError = false;
  size_t errorPosition = 0;
  std::string errorWhat;

  bool null() { return insert(json(nullptr)) != nullptr; }
  bool boolean(bool b) { return insert(json(b)) != nullptr; }
  bool number_integer(json::number_integer_t v) {
    return insert(json(v)) != nullptr;
  }
  bool number_unsigned(json::number_unsigned_t v) {
    return insert(json(v)) != nullptr;
  }
  bool number_float(json::number_float_t v, const json::string_t &) {
    return insert(json(v)) != nullptr;
  }
  bool string(json::string_t &s) {
    return insert(json(std::move(s))) != nullptr;
  }
  bool binary(json::binary_t &b) {
    return insert(json::binary(std::move(b))) != nullptr;
  }
  bool start_object(std::size_t) {
    json *p = insert(json::object());
    frames.push_back({p, true, {}});
    return true;
  }
  bool key(json::string_t &k) {
    Frame &top = frames.back();
    if (top.value->contains(k) && duplicateKeys.size() <= kMaxErrors)
      duplicateKeys.emplace_back(joinPath(currentPath(), k), k);
    top.key = std::move(k);
    return true;
  }
  bool end_object() {
    frames.pop_back();
    return true;
  }
  bool start_array(std::size_t) {
    json *p = insert(json::array());
    frames.push_back({p, false, {}});
    return true;
  }
  bool end_array() {
    frames.pop_back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string &,
                   const json::exception &ex) {
    syntaxError = true;
    errorPosition = position;
    errorWhat = ex.what();
    return false;
  }

private:
  struct Frame {
    json *value;
    bool isObject;
    std::string key; // the current key, for objects
  };
  std::vector<Frame> frames;

  json *insert(json &&v) {
    if (frames.empty()) {
      root = std::move(v);
      return &root;
    }
    Frame &top = frames.back();
    if (top.isObject) {
      json &slot = (*top.value)[top.key];
      slot = std::move(v);
      return &slot;
    }
    top.value->push_back(std::move(v));
    return &top.value->back();
  }

  /// Path of the innermost open container.
  std::string currentPath() const {
    std::string path;
    for (size_t i = 1; i < frames.size(); ++i) {
      const Frame &parent = frames[i - 1];
      path = parent.isObject ? joinPath(path, parent.key)
                             : indexPath(path, parent.value->size() - 1);
    }
    return path;
  }
};

/// Turns nlohmann's "[json.exception.parse_error.101] parse error at line 1,
/// column 2: syntax error ..." into "syntax error ...".
std::string syntaxMessage(const std::string &what) {
  std::string msg = what;
  if (size_t close = msg.find("] ");
      msg.rfind("[json.exception", 0) == 0 && close != std::string::npos)
    msg = msg.substr(close + 2);
  if (msg.rfind("parse error", 0) == 0) {
    if (size_t colon = msg.find(": "); colon != std::string::npos)
      msg = msg.substr(colon + 2);
  }
  return sanitize(msg, 200);
}

//===----------------------------------------------------------------------===//
// Index map syntax
//===----------------------------------------------------------------------===//

/// Splits the text between parentheses at top-level commas; an empty (or
/// all-blank) text has no pieces.
std::vector<std::string> splitTopLevel(const std::string &s) {
  std::vector<std::string> pieces;
  auto trim = [](const std::string &t) {
    size_t b = t.find_first_not_of(" \t\r\n");
    if (b == std::string::npos)
      return std::string();
    size_t e = t.find_last_not_of(" \t\r\n");
    return t.substr(b, e - b + 1);
  };
  if (trim(s).empty())
    return pieces;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '(')
      ++depth;
    else if (s[i] == ')')
      --depth;
    else if (s[i] == ',' && depth == 0) {
      pieces.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  pieces.push_back(trim(s.substr(start)));
  return pieces;
}

/// Index of the ')' matching the '(' at `open`, or npos.
size_t matchingParen(const std::string &s, size_t open) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    if (s[i] == '(')
      ++depth;
    else if (s[i] == ')' && --depth == 0)
      return i;
  }
  return std::string::npos;
}

/// Light syntactic check of "(d0, d1) -> (e0, e1)"; on success fills the
/// number of dims and results, else returns a message.
std::optional<std::string> checkAffineMap(const std::string &s, size_t &numDims,
                                          size_t &numResults) {
  auto skipBlank = [&](size_t i) {
    while (i < s.size() &&
           (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
      ++i;
    return i;
  };
  size_t i = skipBlank(0);
  if (i >= s.size() || s[i] != '(')
    return std::string("expected '@name' or an affine map "
                       "'(i, j, ...) -> (expr, ...)'");
  if (s.find("->") == std::string::npos)
    return std::string("expected '->' in the affine map");
  size_t close = matchingParen(s, i);
  if (close == std::string::npos)
    return std::string("unbalanced parentheses in the dimension list");
  std::vector<std::string> dims = splitTopLevel(s.substr(i + 1, close - i - 1));
  for (const std::string &d : dims)
    if (!isIdentifier(d))
      return "expected an identifier for each grid index, got '" + sanitize(d) +
             "'";
  i = skipBlank(close + 1);
  if (s.compare(i, 2, "->") != 0)
    return std::string("expected '->' after the dimension list");
  i = skipBlank(i + 2);
  if (i >= s.size() || s[i] != '(')
    return std::string("expected a parenthesized result list after '->'");
  close = matchingParen(s, i);
  if (close == std::string::npos)
    return std::string("unbalanced parentheses in the result list");
  if (skipBlank(close + 1) != s.size())
    return std::string("unexpected text after the result list");
  std::vector<std::string> results =
      splitTopLevel(s.substr(i + 1, close - i - 1));
  for (const std::string &r : results)
    if (r.empty())
      return std::string("empty expression in the result list");
  numDims = dims.size();
  numResults = results.size();
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Validator
//===----------------------------------------------------------------------===//

const std::vector<std::string> kTopLevelKeys = {
    "schema",        "kernel",          "name",
    "grid",          "grid_names",      "num_scalar_prefetch",
    "inputs",        "outputs",         "in_specs",
    "out_specs",     "scratch_shapes",  "input_output_aliases",
    "cost_estimate", "compiler_params", "metadata",
    "transforms"};

const std::vector<std::pair<std::string, MemorySpace>> kMemorySpaces = {
    {"default", MemorySpace::Default},    {"any", MemorySpace::Any},
    {"smem", MemorySpace::Smem},          {"vmem", MemorySpace::Vmem},
    {"gmem", MemorySpace::Gmem},          {"hbm", MemorySpace::Hbm},
    {"semaphore", MemorySpace::Semaphore}};

const std::vector<std::string> kDimensionSemantics = {
    "parallel", "arbitrary", "core_parallel", "subcore_parallel"};

const std::vector<std::string> kTransformNames = {
    "vmap", "jvp", "dce", "discharge_state", "hi_to_lo"};

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
  bool shapeValue(const json &v, const std::string &path,
                  std::vector<int64_t> &shape);
  void checkByteSize(const std::vector<int64_t> &shape,
                     const std::string &dtype, const std::string &path);

  // Sections.
  void parseGrid(const json &root);
  void parseGridNames(const json &root);
  void parseArrays(const json &root, const char *key, bool isInput,
                   std::vector<ArraySpec> &out, std::vector<ArrayInfo> &info,
                   bool &known);
  void parseScalarPrefetch(const json &root);
  void parseBlockSpecs(const json &root, bool isInput);
  void parseBlockSpec(const json &v, BlockSpec &bs, const ArraySpec *array,
                      const std::string &arrayPath);
  bool parseBlockDim(const json &v, const std::string &path, BlockDim &dim);
  void parseIndexMap(const json &v, const std::string &path, IndexMap &map,
                     const ArraySpec *array, const std::string &arrayPath);
  void parseScratch(const json &root);
  void parseAliases(const json &root);
  void parseCostEstimate(const json &root);
  void parseCompilerParams(const json &root);
  void parseMetadata(const json &root);
  void parseTransforms(const json &root);
};

void Validator::checkKeys(const json &obj, const std::string &path,
                          const std::vector<std::string> &allowed) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    const std::string &key = it.key();
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end())
      continue;
    if (numErrors > kMaxErrors)
      return; // nothing more would be reported: skip the suggestions
    if (path.empty() && key == "grid_spec") {
      error("grid_spec",
            "'grid_spec' is not supported: this format takes 'grid', "
            "'in_specs', 'out_specs' and 'scratch_shapes' directly at the top "
            "level (pallas_call's grid_spec argument is an alternative "
            "spelling of those four)");
      continue;
    }
    std::string msg = "unknown key " + quote(key);
    if (std::string best = closest(key, allowed); !best.empty())
      msg += " (did you mean '" + best + "'?)";
    else if (allowed.empty())
      msg += "; this object takes no keys";
    else
      msg += "; expected " + listOf(allowed);
    error(joinPath(path, key), msg);
  }
}

std::optional<int64_t> Validator::intValue(const json &v,
                                           const std::string &path, int64_t min,
                                           const std::string &expected) {
  int64_t value = 0;
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) {
      error(path, "expected " + expected + ", got " + std::to_string(u) +
                      ", which is outside the int64 range");
      return std::nullopt;
    }
    value = static_cast<int64_t>(u);
  } else if (v.is_number_integer()) {
    value = v.get<int64_t>();
  } else if (v.is_number_float()) {
    double d = v.get<double>();
    if (std::isfinite(d) && std::floor(d) == d && std::fabs(d) >= 0x1p63)
      error(path, "expected " + expected + ", got " + v.dump() +
                      ", which is outside the int64 range");
    else if (std::floor(d) == d)
      error(path, "expected " + expected + ", got the floating-point number " +
                      v.dump() +
                      " (write integers without a fraction or exponent)");
    else
      error(path, "expected " + expected + ", got the non-integer number " +
                      v.dump());
    return std::nullopt;
  } else {
    error(path, "expected " + expected + ", got " + describe(v));
    return std::nullopt;
  }
  if (value < min) {
    error(path, "expected " + expected + ", got " + std::to_string(value));
    return std::nullopt;
  }
  return value;
}

std::optional<bool> Validator::boolValue(const json &v,
                                         const std::string &path) {
  if (v.is_boolean())
    return v.get<bool>();
  error(path, "expected a boolean, got " + describe(v));
  return std::nullopt;
}

std::optional<std::string> Validator::identifier(const json &v,
                                                 const std::string &path) {
  if (!v.is_string()) {
    error(path, "expected an identifier string, got " + describe(v));
    return std::nullopt;
  }
  const std::string &s = v.get_ref<const std::string &>();
  if (!isIdentifier(s)) {
    error(path, "expected an identifier ([A-Za-z_][A-Za-z0-9_$.]*), got " +
                    describe(v));
    return std::nullopt;
  }
  return s;
}

std::optional<std::string> Validator::dtypeValue(const json &v,
                                                 const std::string &path) {
  if (!v.is_string()) {
    error(path, "expected a dtype string, got " + describe(v));
    return std::nullopt;
  }
  const std::string &s = v.get_ref<const std::string &>();
  if (auto canonical = canonicalDtype(s))
    return canonical;
  static const std::vector<std::string> kNames = {
      "bool",   "i8",      "i16",      "i32",     "i64",    "u8",     "u16",
      "u32",    "u64",     "f16",      "bf16",    "f32",    "f64",    "bool_",
      "int8",   "int16",   "int32",    "int64",   "uint8",  "uint16", "uint32",
      "uint64", "float16", "bfloat16", "float32", "float64"};
  std::string msg = "unknown dtype " + quote(s);
  if (std::string best = closest(s, kNames); !best.empty())
    msg += " (did you mean '" + best + "'?)";
  else
    msg += "; expected one of bool, i8, i16, i32, i64, u8, u16, u32, u64, "
           "f16, bf16, f32, f64 (or a numpy name such as float32)";
  error(path, msg);
  return std::nullopt;
}

std::optional<MemorySpace>
Validator::memorySpaceValue(const json &v, const std::string &path) {
  std::vector<std::string> names;
  for (const auto &[name, ms] : kMemorySpaces)
    names.push_back(name);
  if (!v.is_string()) {
    error(path, "expected a memory space (" + listOf(names) + "), got " +
                    describe(v));
    return std::nullopt;
  }
  const std::string &s = v.get_ref<const std::string &>();
  for (const auto &[name, ms] : kMemorySpaces)
    if (s == name)
      return ms;
  error(path,
        "unknown memory space " + quote(s) + "; expected " + listOf(names));
  return std::nullopt;
}

bool Validator::shapeValue(const json &v, const std::string &path,
                           std::vector<int64_t> &shape) {
  if (!expectArray(v, path, "an array of non-negative integers"))
    return false;
  if (v.size() > kMaxRank) {
    error(path, "shape has " + std::to_string(v.size()) +
                    " dimensions, which exceeds the limit of " +
                    std::to_string(kMaxRank));
    return false;
  }
  bool ok = true;
  shape.clear();
  for (size_t i = 0; i < v.size(); ++i) {
    auto d = intValue(v[i], indexPath(path, i), 0, "a non-negative integer");
    if (!d)
      ok = false;
    else
      shape.push_back(*d);
  }
  if (!ok)
    return false;
  int64_t product = 1;
  for (int64_t d : shape)
    if (mulOverflows(product, d, product)) {
      error(path, "the number of elements of shape " + formatShape(shape) +
                      " overflows int64");
      return false;
    }
  return true;
}

void Validator::checkByteSize(const std::vector<int64_t> &shape,
                              const std::string &dtype,
                              const std::string &path) {
  int64_t bytes = dtypeByteWidth(dtype);
  for (int64_t d : shape)
    if (mulOverflows(bytes, d, bytes)) {
      error(path, "the size in bytes of " + formatShape(shape) + " " + dtype +
                      " overflows int64");
      return;
    }
}

//===----------------------------------------------------------------------===//
// Sections
//===----------------------------------------------------------------------===//

std::optional<GridSpec> Validator::run(const json &root) {
  if (!root.is_object()) {
    error("", "expected a JSON object at the top level, got " + describe(root));
    return std::nullopt;
  }
  checkKeys(root, "", kTopLevelKeys);

  if (const json *v = find(root, "schema")) {
    if (!v->is_string())
      error("schema", std::string("expected the string \"") + kSchemaId +
                          "\", got " + describe(*v));
    else if (v->get_ref<const std::string &>() != kSchemaId)
      error("schema", "unsupported schema " +
                          quote(v->get_ref<const std::string &>()) +
                          "; expected '" + kSchemaId + "'");
  } else {
    error("", std::string("missing required key 'schema' (expected \"") +
                  kSchemaId + "\")");
  }

  if (const json *v = require(root, "", "kernel"))
    if (auto id = identifier(*v, "kernel"))
      spec.kernel = *id;
  if (const json *v = find(root, "name")) {
    if (auto id = identifier(*v, "name"))
      spec.name = *id;
  } else {
    spec.name = spec.kernel;
  }

  parseGrid(root);
  parseGridNames(root);
  if (find(root, "inputs")) {
    parseArrays(root, "inputs", /*isInput=*/true, spec.inputs, inputInfo,
                inputsKnown);
  } else {
    inputsKnown = true; // default: no inputs
  }
  if (require(root, "", "outputs"))
    parseArrays(root, "outputs", /*isInput=*/false, spec.outputs, outputInfo,
                outputsKnown);
  parseScalarPrefetch(root);
  parseBlockSpecs(root, /*isInput=*/true);
  parseBlockSpecs(root, /*isInput=*/false);
  parseScratch(root);
  parseAliases(root);
  parseCostEstimate(root);
  parseCompilerParams(root);
  parseMetadata(root);
  parseTransforms(root);

  if (failed())
    return std::nullopt;
  return std::move(spec);
}

void Validator::parseGrid(const json &root) {
  const json *v = find(root, "grid");
  if (!v) {
    gridRankKnown = true; // default []: a single program
    return;
  }
  if (!expectArray(*v, "grid", "an array of positive integers or \"dynamic\""))
    return;
  if (v->size() > kMaxGridRank) {
    error("grid", "grid has rank " + std::to_string(v->size()) +
                      ", which exceeds the limit of " +
                      std::to_string(kMaxGridRank));
    return;
  }
  gridRankKnown = true;
  bool ok = true;
  for (size_t i = 0; i < v->size(); ++i) {
    const json &d = (*v)[i];
    std::string path = indexPath("grid", i);
    if (d.is_string()) {
      if (d.get_ref<const std::string &>() == "dynamic") {
        spec.grid.push_back(kDynamicGridDim);
      } else {
        error(path,
              "expected a positive integer or \"dynamic\", got " + describe(d));
        spec.grid.push_back(1); // keeps the rank for the checks that follow
        ok = false;
      }
      continue;
    }
    if (auto n = intValue(d, path, 1, "a positive integer or \"dynamic\"")) {
      spec.grid.push_back(*n);
    } else {
      spec.grid.push_back(1); // keeps the rank for the checks that follow
      ok = false;
    }
  }
  if (!ok)
    return;
  int64_t product = 1;
  for (int64_t d : spec.grid)
    if (d != kDynamicGridDim && mulOverflows(product, d, product)) {
      error("grid", "the number of programs of the grid overflows int64");
      return;
    }
}

void Validator::parseGridNames(const json &root) {
  const json *v = find(root, "grid_names");
  if (!v || !expectArray(*v, "grid_names", "an array of identifiers"))
    return;
  if (gridRankKnown && v->size() != spec.grid.size()) {
    error("grid_names",
          "grid_names has " + countOf(v->size(), "entry", "entries") +
              " but the grid has rank " + std::to_string(spec.grid.size()));
    return;
  }
  if (v->size() > kMaxGridRank)
    return; // the grid was rejected already
  for (size_t i = 0; i < v->size(); ++i) {
    std::string path = indexPath("grid_names", i);
    auto id = identifier((*v)[i], path);
    if (!id)
      continue;
    auto prev = std::find(spec.gridNames.begin(), spec.gridNames.end(), *id);
    if (prev != spec.gridNames.end())
      error(path, "duplicate grid name " + quote(*id) + " (also grid_names[" +
                      std::to_string(prev - spec.gridNames.begin()) + "])");
    spec.gridNames.push_back(*id);
  }
}

void Validator::parseArrays(const json &root, const char *key, bool isInput,
                            std::vector<ArraySpec> &out,
                            std::vector<ArrayInfo> &info, bool &known) {
  const json &v = root.at(key);
  std::string base = key;
  if (!expectArray(v, base, "an array of {\"shape\", \"dtype\"} objects"))
    return;
  if (v.size() > kMaxOperands) {
    error(base, base + " has " + countOf(v.size(), "entry", "entries") +
                    ", which exceeds the limit of " +
                    std::to_string(kMaxOperands));
    return;
  }
  known = true;
  static const std::vector<std::string> kInputKeys = {"shape", "dtype",
                                                      "linear"};
  static const std::vector<std::string> kOutputKeys = {"shape", "dtype"};
  static const std::vector<std::string> kHiKeys = {"hi", "parts"};
  static const std::vector<std::string> kPartKeys = {"shape", "dtype"};
  out.resize(v.size());
  info.resize(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    std::string path = indexPath(base, i);
    ArraySpec &a = out[i];
    a.path = path;
    const json &e = v[i];
    if (!expectObject(e, path, "an object with \"shape\" and \"dtype\""))
      continue;
    if (isInput && e.contains("hi")) {
      // A hi aggregate: {"hi": name, "parts": [{"shape", "dtype"}, ...]}.
      checkKeys(e, path, kHiKeys);
      if (auto name = identifier(e.at("hi"), joinPath(path, "hi")))
        a.hiName = *name;
      const json *p = require(e, path, "parts");
      std::string ppath = joinPath(path, "parts");
      if (!p || !expectArray(*p, ppath, "an array of {\"shape\", \"dtype\"} "
                                        "objects"))
        continue;
      if (p->empty() || p->size() > kMaxHiParts) {
        error(ppath, "a hi aggregate has " +
                         countOf(p->size(), "part", "parts") +
                         "; expected 1 to " + std::to_string(kMaxHiParts));
        continue;
      }
      bool ok = true;
      for (size_t j = 0; j < p->size(); ++j) {
        ArraySpec &part = a.parts.emplace_back();
        part.path = indexPath(ppath, j);
        const json &pe = (*p)[j];
        if (!expectObject(pe, part.path,
                          "an object with \"shape\" and \"dtype\"")) {
          ok = false;
          continue;
        }
        checkKeys(pe, part.path, kPartKeys);
        bool shapeOk = false, dtypeOk = false;
        if (const json *s = require(pe, part.path, "shape"))
          shapeOk = shapeValue(*s, joinPath(part.path, "shape"), part.shape);
        if (const json *d = require(pe, part.path, "dtype"))
          if (auto dt = dtypeValue(*d, joinPath(part.path, "dtype"))) {
            part.dtype = *dt;
            dtypeOk = true;
          }
        if (shapeOk && dtypeOk)
          checkByteSize(part.shape, part.dtype, part.path);
        ok &= shapeOk && dtypeOk;
      }
      if (!ok)
        continue;
      const ArraySpec *widest = &a.parts.front();
      for (const ArraySpec &part : a.parts)
        if (part.shape.size() > widest->shape.size())
          widest = &part;
      a.shape = widest->shape;
      a.dtype = widest->dtype;
      info[i].shapeOk = info[i].dtypeOk = true;
      continue;
    }
    if (!isInput && e.contains("hi")) {
      error(joinPath(path, "hi"),
            "unknown key 'hi' (only inputs can be hi aggregates)");
      continue;
    }
    if (!isInput && e.contains("linear")) {
      error(joinPath(path, "linear"),
            "unknown key 'linear' (only inputs can be linear)");
      checkKeys(e, path, {"shape", "dtype", "linear"});
    } else {
      checkKeys(e, path, isInput ? kInputKeys : kOutputKeys);
    }
    if (const json *s = require(e, path, "shape"))
      info[i].shapeOk = shapeValue(*s, joinPath(path, "shape"), a.shape);
    if (const json *d = require(e, path, "dtype"))
      if (auto dt = dtypeValue(*d, joinPath(path, "dtype"))) {
        a.dtype = *dt;
        info[i].dtypeOk = true;
      }
    if (isInput)
      if (const json *l = find(e, "linear"))
        if (auto b = boolValue(*l, joinPath(path, "linear")))
          a.linear = *b;
    if (info[i].shapeOk && info[i].dtypeOk)
      checkByteSize(a.shape, a.dtype, path);
  }
}

void Validator::parseScalarPrefetch(const json &root) {
  const json *v = find(root, "num_scalar_prefetch");
  if (!v) {
    prefetchKnown = true;
    return;
  }
  auto n = intValue(*v, "num_scalar_prefetch", 0, "a non-negative integer");
  if (!n)
    return;
  if (inputsKnown &&
      static_cast<uint64_t>(*n) > static_cast<uint64_t>(spec.inputs.size())) {
    error("num_scalar_prefetch",
          "num_scalar_prefetch is " + std::to_string(*n) +
              " but the spec has only " +
              countOf(spec.inputs.size(), "input", "inputs"));
    return;
  }
  spec.numScalarPrefetch = *n;
  prefetchKnown = inputsKnown;
  if (!inputsKnown)
    return;
  for (int64_t i = 0; i < *n; ++i) {
    const ArraySpec &a = spec.inputs[i];
    if (a.isHi()) {
      error(joinPath(a.path, "hi"),
            a.path + " is a scalar-prefetch operand (num_scalar_prefetch is " +
                std::to_string(*n) + ") and cannot be a hi aggregate");
      continue;
    }
    if (!inputInfo[i].dtypeOk)
      continue;
    bool isInt = a.dtype[0] == 'i' || a.dtype[0] == 'u';
    if (!isInt)
      error(joinPath(a.path, "dtype"),
            a.path + " is a scalar-prefetch operand (num_scalar_prefetch is " +
                std::to_string(*n) + ") and must have an integer dtype, got " +
                a.dtype);
  }
}

void Validator::parseBlockSpecs(const json &root, bool isInput) {
  const char *key = isInput ? "in_specs" : "out_specs";
  std::string base = key;
  const std::vector<ArraySpec> &arrays = isInput ? spec.inputs : spec.outputs;
  const std::vector<ArrayInfo> &info = isInput ? inputInfo : outputInfo;
  bool arraysKnown = isInput ? inputsKnown && prefetchKnown : outputsKnown;
  size_t offset = isInput ? static_cast<size_t>(spec.numScalarPrefetch) : 0;
  std::vector<BlockSpec> &out = isInput ? spec.inSpecs : spec.outSpecs;

  const json *v = find(root, key);
  if (!v) {
    if (!arraysKnown)
      return;
    for (size_t i = offset; i < arrays.size(); ++i) {
      BlockSpec bs;
      bs.path = indexPath(base, i - offset);
      for (int64_t d : arrays[i].shape)
        bs.blockShape.push_back({BlockDim::Kind::Blocked, d, 0, 0});
      out.push_back(std::move(bs));
    }
    return;
  }
  if (!expectArray(*v, base, "an array of block spec objects"))
    return;
  if (v->size() > kMaxOperands) {
    error(base, base + " has " + countOf(v->size(), "entry", "entries") +
                    ", which exceeds the limit of " +
                    std::to_string(kMaxOperands));
    return;
  }
  if (arraysKnown && v->size() != arrays.size() - offset) {
    std::string expected =
        isInput ? "one per non-prefetch input: " +
                      std::to_string(arrays.size() - offset) + " (" +
                      std::to_string(arrays.size()) + " inputs, " +
                      std::to_string(offset) + " scalar-prefetch)"
                : "one per output: " + std::to_string(arrays.size());
    error(base, base + " has " + countOf(v->size(), "entry", "entries") +
                    ", expected " + expected);
  }
  out.resize(v->size());
  for (size_t i = 0; i < v->size(); ++i) {
    out[i].path = indexPath(base, i);
    size_t ai = i + offset;
    const ArraySpec *array = nullptr;
    std::string arrayPath;
    if (arraysKnown && ai < arrays.size() && info[ai].shapeOk) {
      array = &arrays[ai];
      arrayPath = arrays[ai].path;
    }
    parseBlockSpec((*v)[i], out[i], array, arrayPath);
  }
}

void Validator::parseBlockSpec(const json &v, BlockSpec &bs,
                               const ArraySpec *array,
                               const std::string &arrayPath) {
  const std::string &path = bs.path;
  if (!expectObject(v, path, "a block spec object"))
    return;
  checkKeys(v, path, {"block_shape", "index_map", "memory_space"});
  if (const json *m = find(v, "memory_space"))
    if (auto ms = memorySpaceValue(*m, joinPath(path, "memory_space")))
      bs.memorySpace = *ms;

  if (const json *b = find(v, "block_shape")) {
    bs.hasBlockShape = true;
    std::string bpath = joinPath(path, "block_shape");
    if (bs.memorySpace == MemorySpace::Any)
      error(bpath, "a block_shape cannot be given with memory_space 'any' "
                   "(the kernel sees the whole array)");
    if (!expectArray(*b, bpath,
                     "an array of positive integers, nulls and "
                     "{\"element\": n} objects")) {
    } else if (b->size() > kMaxRank) {
      error(bpath, "block_shape has " + countOf(b->size(), "entry", "entries") +
                       ", which exceeds the limit of " +
                       std::to_string(kMaxRank));
    } else {
      bool ok = true;
      for (size_t i = 0; i < b->size(); ++i) {
        BlockDim dim;
        if (parseBlockDim((*b)[i], indexPath(bpath, i), dim))
          bs.blockShape.push_back(dim);
        else
          ok = false;
      }
      if (array && b->size() != array->shape.size())
        error(bpath, bpath + " has " + countOf(b->size(), "entry", "entries") +
                         " but " + arrayPath + " has rank " +
                         std::to_string(array->shape.size()));
      if (ok) {
        int64_t product = 1;
        for (const BlockDim &d : bs.blockShape)
          if (mulOverflows(product, d.size, product)) {
            error(bpath, "the number of elements of the block overflows "
                         "int64");
            ok = false;
            break;
          }
        if (ok && array && !array->dtype.empty()) {
          int64_t elements = product;
          if (mulOverflows(product, dtypeByteWidth(array->dtype), product))
            error(bpath, "the size in bytes of the block overflows int64");
          else if (product > kMaxBlockBytes) {
            std::vector<int64_t> dims;
            for (const BlockDim &d : bs.blockShape)
              dims.push_back(d.size);
            error(bpath, "the block " + formatShape(dims) + " " +
                             array->dtype + " of " + arrayPath + " needs " +
                             std::to_string(product) + " bytes (" +
                             std::to_string(elements) +
                             " elements), over the limit of " +
                             std::to_string(kMaxBlockBytes) +
                             " bytes (4 GiB) for one block");
          }
        }
      }
    }
  } else if (array) {
    for (int64_t d : array->shape)
      bs.blockShape.push_back({BlockDim::Kind::Blocked, d, 0, 0});
  }

  if (const json *m = find(v, "index_map"))
    parseIndexMap(*m, joinPath(path, "index_map"), bs.indexMap, array,
                  arrayPath);
}

bool Validator::parseBlockDim(const json &v, const std::string &path,
                              BlockDim &dim) {
  if (v.is_null()) {
    dim = {BlockDim::Kind::Squeezed, 1, 0, 0};
    return true;
  }
  if (v.is_number()) {
    auto n = intValue(v, path, 1, "a positive block size");
    if (!n)
      return false;
    dim = {BlockDim::Kind::Blocked, *n, 0, 0};
    return true;
  }
  if (!v.is_object()) {
    error(path, "expected a positive integer (blocked), null (squeezed) or "
                "{\"element\": n, \"padding\": [lo, hi]}, got " +
                    describe(v));
    return false;
  }
  checkKeys(v, path, {"element", "padding"});
  dim.kind = BlockDim::Kind::Element;
  bool ok = true;
  if (const json *e = require(v, path, "element")) {
    if (auto n =
            intValue(*e, joinPath(path, "element"), 1, "a positive block size"))
      dim.size = *n;
    else
      ok = false;
  } else {
    ok = false;
  }
  if (const json *p = find(v, "padding")) {
    std::string ppath = joinPath(path, "padding");
    if (!p->is_array() || p->size() != 2) {
      error(ppath,
            "expected [lo, hi] (two non-negative integers), got " +
                (p->is_array()
                     ? "an array of " + countOf(p->size(), "entry", "entries")
                     : describe(*p)));
      ok = false;
    } else {
      auto lo =
          intValue((*p)[0], indexPath(ppath, 0), 0, "a non-negative padding");
      auto hi =
          intValue((*p)[1], indexPath(ppath, 1), 0, "a non-negative padding");
      if (lo && hi) {
        dim.padLow = *lo;
        dim.padHigh = *hi;
        int64_t total;
        if (ok && (__builtin_add_overflow(dim.size, *lo, &total) ||
                   __builtin_add_overflow(total, *hi, &total))) {
          error(ppath, "the padded block size overflows int64");
          ok = false;
        }
      } else {
        ok = false;
      }
    }
  }
  return ok;
}

void Validator::parseIndexMap(const json &v, const std::string &path,
                              IndexMap &map, const ArraySpec *array,
                              const std::string &arrayPath) {
  if (!v.is_string()) {
    error(path, "expected a string ('@func' or '(i, j) -> (i, j)'), got " +
                    describe(v));
    return;
  }
  const std::string &s = v.get_ref<const std::string &>();
  if (!s.empty() && s[0] == '@') {
    std::string name = s.substr(1);
    if (!isIdentifier(name)) {
      error(path, "expected '@' followed by a function name "
                  "([A-Za-z_][A-Za-z0-9_$.]*), got " +
                      describe(v));
      return;
    }
    map.kind = IndexMap::Kind::Func;
    map.text = name;
    return;
  }
  size_t numDims = 0, numResults = 0;
  if (auto err = checkAffineMap(s, numDims, numResults)) {
    error(path, "invalid index_map " + quote(s) + ": " + *err);
    return;
  }
  map.kind = IndexMap::Kind::Affine;
  map.text = s;
  if (gridRankKnown && numDims != spec.grid.size())
    error(path, "index_map " + quote(s) + " takes " +
                    countOf(numDims, "grid index", "grid indices") +
                    " but the grid has rank " +
                    std::to_string(spec.grid.size()));
  if (array && numResults != array->shape.size())
    error(path, "index_map " + quote(s) + " returns " +
                    countOf(numResults, "index", "indices") + " but " +
                    arrayPath + " has rank " +
                    std::to_string(array->shape.size()));
}

void Validator::parseScratch(const json &root) {
  const json *v = find(root, "scratch_shapes");
  if (!v || !expectArray(*v, "scratch_shapes",
                         "an array of {\"shape\", \"dtype\"} objects"))
    return;
  if (v->size() > kMaxOperands) {
    error("scratch_shapes",
          "scratch_shapes has " + countOf(v->size(), "entry", "entries") +
              ", which exceeds the limit of " + std::to_string(kMaxOperands));
    return;
  }
  spec.scratchShapes.resize(v->size());
  for (size_t i = 0; i < v->size(); ++i) {
    std::string path = indexPath("scratch_shapes", i);
    ScratchSpec &s = spec.scratchShapes[i];
    s.path = path;
    const json &e = (*v)[i];
    if (!expectObject(e, path, "an object with \"shape\" and \"dtype\""))
      continue;
    checkKeys(e, path, {"shape", "dtype", "memory_space"});
    bool shapeOk = false, dtypeOk = false;
    if (const json *sh = require(e, path, "shape"))
      shapeOk = shapeValue(*sh, joinPath(path, "shape"), s.shape);
    if (const json *d = require(e, path, "dtype"))
      if (auto dt = dtypeValue(*d, joinPath(path, "dtype"))) {
        s.dtype = *dt;
        dtypeOk = true;
      }
    if (const json *m = find(e, "memory_space"))
      if (auto ms = memorySpaceValue(*m, joinPath(path, "memory_space")))
        s.memorySpace = *ms;
    if (shapeOk && dtypeOk)
      checkByteSize(s.shape, s.dtype, path);
  }
}

void Validator::parseAliases(const json &root) {
  const json *v = find(root, "input_output_aliases");
  std::map<int64_t, int64_t> byInput, byOutput; // in->out, out->in
  bool aliasesOk = true;
  if (v && !expectObject(*v, "input_output_aliases",
                         "an object mapping input indices (as decimal "
                         "strings) to output indices"))
    aliasesOk = false;
  if (v && v->is_object()) {
    size_t nIn = spec.inputs.size(), nOut = spec.outputs.size();
    for (auto it = v->begin(); it != v->end(); ++it) {
      const std::string &key = it.key();
      std::string path = joinPath("input_output_aliases", key);
      // "0" or an optional '-' then digits without a leading zero.
      size_t digits = key.size() - (key.rfind('-', 0) == 0 ? 1 : 0);
      bool decimal = digits > 0 && key != "-0" &&
                     std::all_of(key.end() - digits, key.end(), isAsciiDigit) &&
                     (digits == 1 || key[key.size() - digits] != '0');
      if (!decimal) {
        error(path,
              "expected a decimal input index as the key, got " + quote(key));
        aliasesOk = false;
        continue;
      }
      auto out = intValue(it.value(), path, INT64_MIN, "an output index");
      if (!out) {
        aliasesOk = false;
        continue;
      }
      std::string mapping = "'" + key + ":" + std::to_string(*out) + "'";
      // More than 18 digits cannot be a valid index (and may not fit).
      int64_t in = digits > 18 ? -1 : std::stoll(key);
      bool inRange = digits <= 18 && in >= 0 && static_cast<uint64_t>(in) < nIn;
      if (inputsKnown && !inRange) {
        error(path, "input_output_aliases contains the mapping " + mapping +
                        " with input index " + key + " outside the range [0, " +
                        std::to_string(nIn) + ")");
        aliasesOk = false;
        continue;
      }
      if (outputsKnown && (*out < 0 || static_cast<uint64_t>(*out) >= nOut)) {
        error(path, "input_output_aliases contains the mapping " + mapping +
                        " with output index " + std::to_string(*out) +
                        " outside the range [0, " + std::to_string(nOut) + ")");
        aliasesOk = false;
        continue;
      }
      if (!inputsKnown || !outputsKnown) {
        aliasesOk = false;
        continue;
      }
      const ArraySpec &a = spec.inputs[in];
      const ArraySpec &b = spec.outputs[*out];
      const ArrayInfo &ai = inputInfo[in], &bi = outputInfo[*out];
      if (a.isHi()) {
        error(path, "input_output_aliases contains the mapping " + mapping +
                        " but " + a.path +
                        " is a hi aggregate, which the grid spec cannot "
                        "alias (outputs are lo arrays)");
        aliasesOk = false;
        continue;
      }
      if (ai.shapeOk && ai.dtypeOk && bi.shapeOk && bi.dtypeOk &&
          (a.shape != b.shape || a.dtype != b.dtype)) {
        error(path, "input_output_aliases contains the mapping " + mapping +
                        " referring to " + a.path + " with shape " +
                        formatShape(a.shape) + " " + a.dtype + " and to " +
                        b.path + " with a different shape/dtype " +
                        formatShape(b.shape) + " " + b.dtype);
        aliasesOk = false;
      }
      if (auto prev = byOutput.find(*out); prev != byOutput.end()) {
        error(path, "input_output_aliases maps both inputs[" +
                        std::to_string(prev->second) + "] and inputs[" +
                        std::to_string(in) + "] to outputs[" +
                        std::to_string(*out) + "]");
        aliasesOk = false;
        continue;
      }
      byOutput[*out] = in;
      byInput[in] = *out;
    }
  }
  for (const auto &[in, out] : byInput)
    spec.inputOutputAliases.emplace_back(in, out);
  if (!aliasesOk || !inputsKnown)
    return;
  for (size_t i = 0; i < spec.inputs.size(); ++i)
    if (spec.inputs[i].linear && !byInput.count(static_cast<int64_t>(i)))
      error(joinPath(spec.inputs[i].path, "linear"),
            "input pinned buffers without input_output_aliases: " +
                spec.inputs[i].path +
                " (a linear input must be aliased to an output)");
}

void Validator::parseCostEstimate(const json &root) {
  const json *v = find(root, "cost_estimate");
  if (!v || !expectObject(*v, "cost_estimate"))
    return;
  checkKeys(*v, "cost_estimate",
            {"flops", "bytes_accessed", "transcendentals"});
  CostEstimate ce;
  bool ok = true;
  auto field = [&](const char *key, int64_t &out) {
    const json *f = require(*v, "cost_estimate", key);
    std::optional<int64_t> n;
    if (f)
      n = intValue(*f, joinPath("cost_estimate", key), 0,
                   "a non-negative integer");
    if (n)
      out = *n;
    else
      ok = false;
  };
  field("flops", ce.flops);
  field("bytes_accessed", ce.bytesAccessed);
  field("transcendentals", ce.transcendentals);
  if (ok)
    spec.costEstimate = ce;
}

void Validator::parseCompilerParams(const json &root) {
  const json *v = find(root, "compiler_params");
  if (!v || !expectObject(*v, "compiler_params"))
    return;
  checkKeys(*v, "compiler_params", {"gpu", "tpu"});
  CompilerParams &cp = spec.compilerParams;
  if (const json *gpu = find(*v, "gpu");
      gpu && expectObject(*gpu, "compiler_params.gpu")) {
    checkKeys(*gpu, "compiler_params.gpu",
              {"num_warps", "num_stages", "strict_fp"});
    if (const json *w = find(*gpu, "num_warps")) {
      std::string path = "compiler_params.gpu.num_warps";
      if (auto n = intValue(*w, path, 1, "a power of 2 in [1, 32]")) {
        if (*n > 32 || (*n & (*n - 1)) != 0)
          error(path,
                "expected a power of 2 in [1, 32], got " + std::to_string(*n));
        else
          cp.numWarps = *n;
      }
    }
    if (const json *s = find(*gpu, "num_stages"))
      if (auto n = intValue(*s, "compiler_params.gpu.num_stages", 1,
                            "a positive integer"))
        cp.numStages = *n;
    if (const json *f = find(*gpu, "strict_fp"))
      if (auto b = boolValue(*f, "compiler_params.gpu.strict_fp"))
        cp.strictFp = *b;
  }
  if (const json *tpu = find(*v, "tpu");
      tpu && expectObject(*tpu, "compiler_params.tpu")) {
    std::string tpath = "compiler_params.tpu";
    checkKeys(*tpu, tpath,
              {"dimension_semantics", "vmem_limit_bytes", "has_side_effects"});
    if (const json *ds = find(*tpu, "dimension_semantics")) {
      std::string path = tpath + ".dimension_semantics";
      if (expectArray(*ds, path,
                      "an array of " + listOf(kDimensionSemantics))) {
        if (gridRankKnown && ds->size() != spec.grid.size()) {
          error(path, "dimension_semantics has " +
                          countOf(ds->size(), "entry", "entries") +
                          " but the grid has rank " +
                          std::to_string(spec.grid.size()));
        } else if (ds->size() <= kMaxGridRank) {
          for (size_t i = 0; i < ds->size(); ++i) {
            const json &e = (*ds)[i];
            std::string epath = indexPath(path, i);
            if (e.is_string() && std::find(kDimensionSemantics.begin(),
                                           kDimensionSemantics.end(),
                                           e.get_ref<const std::string &>()) !=
                                     kDimensionSemantics.end())
              cp.dimensionSemantics.push_back(e.get<std::string>());
            else
              error(epath, "expected " + listOf(kDimensionSemantics) +
                               ", got " + describe(e));
          }
        }
      }
    }
    if (const json *m = find(*tpu, "vmem_limit_bytes"))
      if (auto n = intValue(*m, tpath + ".vmem_limit_bytes", 1,
                            "a positive integer"))
        cp.vmemLimitBytes = *n;
    if (const json *h = find(*tpu, "has_side_effects"))
      if (auto b = boolValue(*h, tpath + ".has_side_effects"))
        cp.hasSideEffects = *b;
  }
}

void Validator::parseMetadata(const json &root) {
  const json *v = find(root, "metadata");
  if (!v || !expectObject(*v, "metadata", "an object of string values"))
    return;
  for (auto it = v->begin(); it != v->end(); ++it) {
    if (it.value().is_string())
      spec.metadata[it.key()] = it.value().get<std::string>();
    else
      error(joinPath("metadata", it.key()),
            "expected a string, got " + describe(it.value()));
  }
}

void Validator::parseTransforms(const json &root) {
  const json *v = find(root, "transforms");
  if (!v || !expectArray(*v, "transforms", "an array of transform objects"))
    return;
  if (v->size() > kMaxTransforms) {
    error("transforms",
          "transforms has " + countOf(v->size(), "entry", "entries") +
              ", which exceeds the limit of " + std::to_string(kMaxTransforms));
    return;
  }
  // Ranks of the inputs as each vmap sees them (earlier vmaps add an axis).
  std::vector<int64_t> ranks;
  if (inputsKnown)
    for (size_t i = 0; i < spec.inputs.size(); ++i)
      ranks.push_back(inputInfo[i].shapeOk
                          ? static_cast<int64_t>(spec.inputs[i].shape.size())
                          : -1);
  // The shapes as each vmap sees them (empty where unknown or a hi input),
  // so that a batch axis whose size in bytes leaves int64 is an error here,
  // at the vmap that makes it, not a wrapped count in the manifest.
  std::vector<std::vector<int64_t>> inShapes, outShapes;
  std::vector<bool> inShapeOk, outShapeOk;
  if (inputsKnown)
    for (size_t i = 0; i < spec.inputs.size(); ++i) {
      inShapes.push_back(spec.inputs[i].shape);
      inShapeOk.push_back(inputInfo[i].shapeOk && inputInfo[i].dtypeOk &&
                          !spec.inputs[i].isHi());
    }
  if (outputsKnown)
    for (size_t i = 0; i < spec.outputs.size(); ++i) {
      outShapes.push_back(spec.outputs[i].shape);
      outShapeOk.push_back(outputInfo[i].shapeOk && outputInfo[i].dtypeOk);
    }
  // Adds a batch axis of `size` at `axis` to `shape`; false (with an error
  // at `path`) when the batched array's element or byte count leaves int64.
  auto batchShape = [&](std::vector<int64_t> &shape, int64_t axis,
                        int64_t size, const ArraySpec &array,
                        const std::string &path) {
    std::vector<int64_t> batched = shape;
    batched.insert(batched.begin() + axis, size);
    int64_t bytes = dtypeByteWidth(array.dtype);
    for (int64_t d : batched)
      if (mulOverflows(bytes, d, bytes)) {
        error(path, "batching " + array.path + " (" + formatShape(shape) +
                        " " + array.dtype + ") by axis_size " +
                        std::to_string(size) + " gives " +
                        formatShape(batched) +
                        ", whose size in bytes overflows int64");
        return false;
      }
    shape = std::move(batched);
    return true;
  };

  // True while the operand list is still the spec's own (only vmaps so far).
  bool operandsKnown = true;
  for (size_t ti = 0; ti < v->size(); ++ti) {
    std::string path = indexPath("transforms", ti);
    const json &e = (*v)[ti];
    if (!expectObject(e, path, "an object with one key naming the transform"))
      continue;
    if (e.size() != 1) {
      error(path, "expected an object with exactly one key (" +
                      listOf(kTransformNames) + "), got " +
                      std::to_string(e.size()) + " keys");
      continue;
    }
    const std::string &name = e.begin().key();
    const json &body = e.begin().value();
    std::string bpath = joinPath(path, name);
    Transform t;
    t.path = path;
    if (name == "vmap") {
      t.kind = Transform::Kind::Vmap;
    } else if (name == "jvp") {
      t.kind = Transform::Kind::Jvp;
    } else if (name == "dce") {
      t.kind = Transform::Kind::Dce;
    } else if (name == "discharge_state") {
      t.kind = Transform::Kind::DischargeState;
    } else if (name == "hi_to_lo") {
      t.kind = Transform::Kind::HiToLo;
    } else {
      std::string msg = "unknown transform " + quote(name);
      if (std::string best = closest(name, kTransformNames); !best.empty())
        msg += " (did you mean '" + best + "'?)";
      else
        msg += "; expected " + listOf(kTransformNames);
      error(bpath, msg);
      continue;
    }
    if (!expectObject(body, bpath))
      continue;

    if (t.kind == Transform::Kind::Vmap && !operandsKnown) {
      // After a transform that changes the operand list (jvp, dce,
      // discharge_state, hi_to_lo) the counts and ranks are only known to
      // the passes, which check them: take the axes as written.
      checkKeys(body, bpath, {"in_axes", "axis_size"});
      if (const json *s = require(body, bpath, "axis_size"))
        if (auto n = intValue(*s, joinPath(bpath, "axis_size"), 1,
                              "a positive integer"))
          t.axisSize = *n;
      if (const json *ax = require(body, bpath, "in_axes")) {
        std::string apath = joinPath(bpath, "in_axes");
        if (expectArray(*ax, apath, "an array of integers and nulls"))
          for (size_t i = 0; i < ax->size(); ++i) {
            if ((*ax)[i].is_null()) {
              t.inAxes.push_back(std::nullopt);
              continue;
            }
            if (auto n = intValue((*ax)[i], indexPath(apath, i), 0,
                                  "a non-negative axis or null (negative "
                                  "axes are accepted only before jvp, dce, "
                                  "discharge_state and hi_to_lo, which "
                                  "change the operands)"))
              t.inAxes.push_back(*n);
          }
      }
    } else if (t.kind == Transform::Kind::Dce && !operandsKnown) {
      checkKeys(body, bpath, {"used_outputs"});
      if (const json *u = require(body, bpath, "used_outputs")) {
        std::string upath = joinPath(bpath, "used_outputs");
        if (expectArray(*u, upath, "an array of booleans"))
          for (size_t i = 0; i < u->size(); ++i)
            if (auto b = boolValue((*u)[i], indexPath(upath, i)))
              t.usedOutputs.push_back(*b);
      }
    } else if (t.kind == Transform::Kind::Vmap) {
      checkKeys(body, bpath, {"in_axes", "axis_size"});
      if (const json *s = require(body, bpath, "axis_size"))
        if (auto n = intValue(*s, joinPath(bpath, "axis_size"), 1,
                              "a positive integer"))
          t.axisSize = *n;
      if (const json *ax = require(body, bpath, "in_axes")) {
        std::string apath = joinPath(bpath, "in_axes");
        if (expectArray(*ax, apath, "an array of integers and nulls")) {
          if (inputsKnown && ax->size() != spec.inputs.size()) {
            error(apath, "in_axes has " +
                             countOf(ax->size(), "entry", "entries") +
                             " but the spec has " +
                             countOf(spec.inputs.size(), "input", "inputs"));
          } else if (inputsKnown) {
            for (size_t i = 0; i < ax->size(); ++i) {
              const json &a = (*ax)[i];
              std::string epath = indexPath(apath, i);
              if (a.is_null()) {
                t.inAxes.push_back(std::nullopt);
                continue;
              }
              auto n = intValue(a, epath, INT64_MIN, "an integer axis or null");
              if (!n)
                continue;
              int64_t rank = ranks[i];
              if (rank >= 0 && (*n < -rank - 1 || *n > rank)) {
                error(epath, "batch axis " + std::to_string(*n) +
                                 " is out of range for " + spec.inputs[i].path +
                                 " of rank " + std::to_string(rank) +
                                 " (expected [" + std::to_string(-rank - 1) +
                                 ", " + std::to_string(rank) + "])");
                continue;
              }
              t.inAxes.push_back(*n < 0 ? *n + rank + 1 : *n);
            }
            if (t.inAxes.size() == ranks.size()) {
              for (size_t i = 0; i < ranks.size(); ++i)
                if (t.inAxes[i] && ranks[i] >= 0)
                  ++ranks[i];
              // The batched sizes: each batched input, and every output
              // (pallas-vmap batches the outputs at axis 0).
              std::string spath = joinPath(bpath, "axis_size");
              bool ok = t.axisSize >= 1;
              for (size_t i = 0; ok && i < inShapes.size(); ++i)
                if (t.inAxes[i] && inShapeOk[i])
                  ok = batchShape(inShapes[i], *t.inAxes[i], t.axisSize,
                                  spec.inputs[i], spath);
              for (size_t i = 0; ok && i < outShapes.size(); ++i)
                if (outShapeOk[i])
                  ok = batchShape(outShapes[i], 0, t.axisSize,
                                  spec.outputs[i], spath);
            }
          }
        }
      }
    } else if (t.kind == Transform::Kind::Dce) {
      checkKeys(body, bpath, {"used_outputs"});
      if (const json *u = require(body, bpath, "used_outputs")) {
        std::string upath = joinPath(bpath, "used_outputs");
        if (expectArray(*u, upath, "an array of booleans")) {
          if (outputsKnown && u->size() != spec.outputs.size()) {
            error(upath, "used_outputs has " +
                             countOf(u->size(), "entry", "entries") +
                             " but the spec has " +
                             countOf(spec.outputs.size(), "output", "outputs"));
          } else if (outputsKnown) {
            for (size_t i = 0; i < u->size(); ++i)
              if (auto b = boolValue((*u)[i], indexPath(upath, i)))
                t.usedOutputs.push_back(*b);
          }
        }
      }
    } else {
      checkKeys(body, bpath, {});
    }
    if (t.kind != Transform::Kind::Vmap)
      operandsKnown = false;
    spec.transforms.push_back(std::move(t));
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// Entry point
//===----------------------------------------------------------------------===//

std::optional<GridSpec> parseGridSpec(const std::string &text,
                                      std::vector<SpecError> &errors) {
  try {
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
      int line, column;
      lineColumn(text, text.size(), line, column);
      errors.push_back({"", "invalid JSON: the input is empty", line, column});
      return std::nullopt;
    }
    if (size_t pos = findExcessiveNesting(text); pos != std::string::npos) {
      int line, column;
      lineColumn(text, pos, line, column);
      errors.push_back({"",
                        "invalid JSON: arrays and objects nest deeper than "
                        "the limit of " +
                            std::to_string(kMaxNestingDepth),
                        line, column});
      return std::nullopt;
    }

    DomBuilder builder;
    bool parsed = json::sax_parse(text, &builder, json::input_format_t::json,
                                  /*strict=*/true, /*ignore_comments=*/false);
    if (!parsed || builder.syntaxError) {
      // nlohmann reports the count of bytes read: the offending byte is the
      // last one read (or the end of the input).
      size_t pos = builder.errorPosition > 0 ? builder.errorPosition - 1 : 0;
      int line, column;
      lineColumn(text, pos, line, column);
      errors.push_back(
          {"",
           "invalid JSON: " + (builder.errorWhat.empty()
                                   ? std::string("syntax error")
                                   : syntaxMessage(builder.errorWhat)),
           line, column});
      return std::nullopt;
    }

    Validator validator(errors);
    for (const auto &[path, key] : builder.duplicateKeys)
      validator.error(path, "duplicate key " + quote(key));
    std::optional<GridSpec> spec = validator.run(builder.root);
    if (validator.failed())
      return std::nullopt;
    return spec;
  } catch (const std::bad_alloc &) {
    errors.push_back({"", "out of memory while reading the grid spec"});
  } catch (const std::exception &e) {
    errors.push_back(
        {"", std::string("internal error while reading the grid spec: ") +
                 sanitize(e.what(), 200)});
  } catch (...) {
    errors.push_back({"", "internal error while reading the grid spec"});
  }
  return std::nullopt;
}

bool isIdentifier(const std::string &s) {
  if (s.empty() || !(isAsciiAlpha(s[0]) || s[0] == '_'))
    return false;
  for (char c : s)
    if (!(isAsciiAlpha(c) || isAsciiDigit(c) || c == '_' || c == '$' ||
          c == '.'))
      return false;
  return true;
}

void lineColumn(const std::string &text, size_t offset, int &line,
                int &column) {
  offset = std::min(offset, text.size());
  size_t l = 1, lineStart = 0;
  for (size_t i = 0; i < offset; ++i)
    if (text[i] == '\n') {
      ++l;
      lineStart = i + 1;
    }
  line = static_cast<int>(std::min<size_t>(l, INT_MAX));
  column = static_cast<int>(std::min<size_t>(offset - lineStart + 1, INT_MAX));
}

} // namespace pallasc::spec
