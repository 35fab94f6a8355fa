//===- Validator.cpp - The grid spec Validator's core -----------*- C++ -*-===//
//
// The Validator's key checks and value readers (integers, booleans,
// identifiers, dtypes, memory spaces, shapes), its walk over the sections of
// a spec, and the first sections: schema, kernel, name, grid and grid_names.
// The other sections are read in ValidateArrays.cpp, ValidateParams.cpp and
// ValidateTransforms.cpp.
//
//===----------------------------------------------------------------------===//

#include "src/Spec/GridSpecImpl.h"
#include "src/Launch/ElementType.h"

#include <algorithm>
#include <climits>
#include <cmath>

namespace pallasc::spec::detail {

namespace {

const std::vector<std::string> kTopLevelKeys = {
    "schema",        "kernel",          "name",
    "grid",          "grid_names",      "num_scalar_prefetch",
    "inputs",        "outputs",         "in_specs",
    "out_specs",     "scratch_shapes",  "input_output_aliases",
    "cost_estimate", "compiler_params", "metadata",
    "transforms",    "symbols"};

} // namespace

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
  const std::string *text = expectString(v, path, "an identifier string");
  if (text && isIdentifier(*text))
    return *text;
  if (text)
    error(path, "expected an identifier ([A-Za-z_][A-Za-z0-9_$.]*), got " +
                    describe(v));
  return std::nullopt;
}

std::optional<std::string> Validator::dtypeValue(const json &v,
                                                 const std::string &path) {
  const std::string *text = expectString(v, path, "a dtype string");
  if (!text)
    return std::nullopt;
  const std::string &s = *text;
  if (auto canonical = canonicalDtype(s))
    return canonical;
  // The element type table's spellings: the canonical ones, then NumPy's.
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const launch::ElementTypeInfo &e : launch::allElementTypes())
      names.push_back(e.name);
    for (const launch::ElementTypeInfo &e : launch::allElementTypes())
      names.push_back(e.numpyName);
    return names;
  }();
  std::string msg = "unknown dtype " + quote(s);
  if (std::string best = closest(s, kNames); !best.empty()) {
    msg += " (did you mean '" + best + "'?)";
  } else {
    const char *sep = "; expected one of ";
    for (const launch::ElementTypeInfo &e : launch::allElementTypes()) {
      msg += sep;
      msg += e.name;
      sep = ", ";
    }
    msg += " (or a numpy name such as " +
           std::string(
               launch::elementTypeInfo(launch::ElementType::F32).numpyName) +
           ")";
  }
  error(path, msg);
  return std::nullopt;
}

std::optional<MemorySpace>
Validator::memorySpaceValue(const json &v, const std::string &path) {
  std::vector<std::string> names;
  for (MemorySpace ms : allMemorySpaces())
    names.push_back(memorySpaceName(ms));
  const std::string *text =
      expectString(v, path, "a memory space (" + listOf(names) + ")");
  if (!text)
    return std::nullopt;
  const std::string &s = *text;
  for (MemorySpace ms : allMemorySpaces())
    if (s == memorySpaceName(ms))
      return ms;
  error(path,
        "unknown memory space " + quote(s) + "; expected " + listOf(names));
  return std::nullopt;
}

bool Validator::shapeValue(const json &v, const std::string &path,
                           std::vector<int64_t> &shape,
                           std::vector<DimExpr> *exprs) {
  if (!expectArray(v, path,
                   exprs ? "an array of non-negative integers and symbol "
                           "expressions"
                         : "an array of non-negative integers"))
    return false;
  if (v.size() > kMaxRank) {
    error(path, "shape has " + std::to_string(v.size()) +
                    " dimensions, which exceeds the limit of " +
                    std::to_string(kMaxRank));
    return false;
  }
  bool ok = true, symbolic = false;
  shape.clear();
  std::vector<DimExpr> dims;
  for (size_t i = 0; i < v.size(); ++i) {
    std::string dpath = indexPath(path, i);
    if (v[i].is_string()) {
      const std::string &text = v[i].get_ref<const std::string &>();
      if (!exprs || spec.symbols.empty()) {
        error(dpath, "expected a non-negative integer, got " + describe(v[i]) +
                         (exprs ? " (a symbol expression needs the symbols "
                                  "declared in the top-level \"symbols\" "
                                  "object)"
                                : " (only the shapes of inputs and outputs "
                                  "may use symbols)"));
        ok = false;
        continue;
      }
      auto e = dimExprValue(text, dpath, /*allowDivision=*/false,
                            "an array dimension");
      if (!e) {
        ok = false;
        continue;
      }
      if (e->isConstant()) {
        shape.push_back(e->num.constant);
        dims.push_back(*e);
      } else {
        shape.push_back(kSymbolicDim);
        dims.push_back(*e);
        symbolic = true;
      }
      continue;
    }
    auto d = intValue(v[i], dpath, 0,
                      exprs && !spec.symbols.empty()
                          ? "a non-negative integer or a symbol expression"
                          : "a non-negative integer");
    if (!d) {
      ok = false;
    } else {
      shape.push_back(*d);
      dims.push_back(DimExpr::constant(*d));
    }
  }
  if (!ok)
    return false;
  if (symbolic)
    *exprs = std::move(dims);
  // The element count at the largest sizes the symbols allow (unbounded
  // symbols are checked at run time, when their values are known).
  int64_t product = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t d = shape[i];
    if (d == kSymbolicDim) {
      auto hi = (*exprs)[i].highest(spec.symbols);
      if (!hi)
        continue;
      d = *hi;
    }
    if (mulOverflows(product, d, product)) {
      error(path, "the number of elements of shape " +
                      (symbolic ? formatSymbolicShape(shape, *exprs)
                                : formatShape(shape)) +
                      " overflows int64" +
                      (symbolic ? " at the symbols' largest values" : ""));
      return false;
    }
  }
  return true;
}

std::optional<DimExpr> Validator::dimExprValue(const std::string &text,
                                               const std::string &path,
                                               bool allowDivision,
                                               const char *what) {
  DimExprError err;
  auto e = parseDimExpr(text, allowDivision, err);
  if (!e) {
    error(path, "invalid dimension expression " + quote(text) + " (" + what +
                    "): " + sanitize(err.message, 400) +
                    (err.offset > 0 ? " (at character " +
                                          std::to_string(err.offset + 1) + ")"
                                    : ""));
    return std::nullopt;
  }
  std::vector<std::string> declared;
  for (const SymbolSpec &sym : spec.symbols)
    declared.push_back(sym.name);
  bool ok = true;
  for (const std::string &name : e->symbols()) {
    if (std::find(declared.begin(), declared.end(), name) != declared.end())
      continue;
    std::string msg = "unknown symbol " + quote(name);
    if (text != name)
      msg += " in " + quote(text);
    if (declared.empty())
      msg += "; declare it in the top-level \"symbols\" object (the spec "
             "declares none)";
    else if (std::string best = closest(name, declared); !best.empty())
      msg += " (did you mean '" + best + "'?)";
    else
      msg += "; the declared symbols are " + listOf(declared);
    error(path, msg);
    ok = false;
  }
  if (!ok)
    return std::nullopt;
  auto lo = e->lowest(spec.symbols);
  if (!lo) {
    error(path, quote(text) +
                    " may be negative: its smallest value over the "
                    "symbols' declared ranges is unbounded or past "
                    "int64 (declare a 'max' for the symbols with a "
                    "negative coefficient); expected " +
                    std::string(what) + " that is never negative");
    return std::nullopt;
  }
  if (*lo < 0) {
    std::string at;
    for (const std::string &name : e->symbols())
      for (const SymbolSpec &sym : spec.symbols)
        if (sym.name == name) {
          auto it = e->num.terms.find(name);
          int64_t v = it->second > 0 ? sym.lowest() : *sym.highest();
          at += (at.empty() ? "" : ", ") + name + " = " + std::to_string(v);
        }
    error(path, quote(text) + " is " + std::to_string(*lo) + " at " + at +
                    "; expected " + std::string(what) +
                    " that is never negative (declare a larger 'min' or a "
                    "smaller 'max')");
    return std::nullopt;
  }
  return e;
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

  parseSymbols(root);
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

/// Why `name` cannot be the C parameter a generated launcher takes for a
/// symbol (docs/integration.md: `int64_t n` after the operands), or "":
/// a C or C++ keyword, a type name the header uses, or the name of another
/// parameter of the entry point (in<i>, out<i>, grid_<axis>, stream).
static std::string cParameterClash(const std::string &name) {
  static const char *const kKeywords[] = {
      // C11 and C23
      "auto", "break", "case", "char", "const", "continue", "default", "do",
      "double", "else", "enum", "extern", "float", "for", "goto", "if",
      "inline", "int", "long", "register", "restrict", "return", "short",
      "signed", "sizeof", "static", "struct", "switch", "typedef", "union",
      "unsigned", "void", "volatile", "while", "bool", "true", "false",
      "nullptr", "alignas", "alignof", "constexpr", "static_assert",
      "thread_local", "typeof", "typeof_unqual",
      // C++ (the header is usable from C++)
      "and", "and_eq", "asm", "bitand", "bitor", "catch", "char8_t",
      "char16_t", "char32_t", "class", "compl", "concept", "consteval",
      "constinit", "const_cast", "co_await", "co_return", "co_yield",
      "decltype", "delete", "dynamic_cast", "explicit", "export", "friend",
      "mutable", "namespace", "new", "noexcept", "not", "not_eq", "operator",
      "or", "or_eq", "private", "protected", "public", "reinterpret_cast",
      "requires", "static_cast", "template", "this", "throw", "try",
      "typeid", "typename", "using", "virtual", "wchar_t", "xor", "xor_eq"};
  for (const char *k : kKeywords)
    if (name == k)
      return "it is a C or C++ keyword";
  auto startsWith = [&](const char *p) { return name.rfind(p, 0) == 0; };
  bool endsT = name.size() >= 2 && name.compare(name.size() - 2, 2, "_t") == 0;
  if (startsWith("_") || startsWith("pallasc_") || startsWith("PALLASC_") ||
      endsT)
    return "names that start with '_', 'pallasc_' or 'PALLASC_' or end in "
           "'_t' are reserved (the header's and the C library's)";
  // in<digits>, out<digits>.
  auto numbered = [&](const std::string &prefix) {
    if (!startsWith(prefix.c_str()) || name.size() == prefix.size())
      return false;
    return std::all_of(name.begin() + prefix.size(), name.end(),
                       [](char c) { return c >= '0' && c <= '9'; });
  };
  if (numbered("in") || numbered("out"))
    return "the entry point names its operands in0, in1, ..., out0, ...";
  if (startsWith("grid_"))
    return "the entry point names its dynamic grid bounds grid_<axis>";
  if (name == "stream")
    return "the GPU entry points take the stream as `stream`";
  return "";
}

void Validator::parseSymbols(const json &root) {
  const json *v = find(root, "symbols");
  if (!v || !expectObject(*v, "symbols",
                          "an object mapping symbol names to their "
                          "constraints ({\"min\", \"max\", "
                          "\"multiple_of\"}, each optional)"))
    return;
  if (!expectAtMost(*v, "symbols", "symbols", kMaxSymbols))
    return;
  for (auto it = v->begin(); it != v->end(); ++it) {
    const std::string &name = it.key();
    std::string path = joinPath("symbols", name);
    bool nameOk = !name.empty() && !isAsciiDigit(name[0]);
    for (char c : name)
      nameOk = nameOk && (isAsciiAlpha(c) || isAsciiDigit(c) || c == '_');
    if (!nameOk) {
      error(path, "invalid symbol name " + quote(name) +
                      "; expected [A-Za-z_][A-Za-z0-9_]*");
      continue;
    }
    if (name == "cdiv" || name == "floordiv" || name == "mod" ||
        name == "max" || name == "min" || name == "non_negative") {
      error(path, "symbol name " + quote(name) +
                      " is reserved (a function of dimension expressions)");
      continue;
    }
    if (std::string clash = cParameterClash(name); !clash.empty()) {
      error(path, "symbol name " + quote(name) + " cannot name the generated "
                      "entry point's parameter for it (`int64_t " + name +
                      "`): " + clash + "; rename the symbol");
      continue;
    }
    SymbolSpec sym;
    sym.name = name;
    sym.path = path;
    const json &c = it.value();
    if (!expectObject(c, path,
                      "an object with optional \"min\", \"max\" and "
                      "\"multiple_of\""))
      continue;
    checkKeys(c, path, {"min", "max", "multiple_of"});
    bool ok = true;
    if (const json *m = find(c, "min")) {
      if (auto n = intValue(*m, joinPath(path, "min"), 1,
                            "a positive integer (symbols are >= 1, as in "
                            "JAX)"))
        sym.min = *n;
      else
        ok = false;
    }
    if (const json *m = find(c, "max")) {
      if (auto n = intValue(*m, joinPath(path, "max"), 1, "a positive integer"))
        sym.max = *n;
      else
        ok = false;
    }
    if (const json *m = find(c, "multiple_of")) {
      if (auto n = intValue(*m, joinPath(path, "multiple_of"), 1,
                            "a positive integer"))
        sym.multipleOf = *n;
      else
        ok = false;
    }
    if (ok && sym.max && *sym.max < sym.min) {
      error(joinPath(path, "max"),
            "symbol " + quote(name) + " has max " + std::to_string(*sym.max) +
                " below its min " + std::to_string(sym.min));
      ok = false;
    }
    if (ok && sym.max && *sym.highest() < sym.lowest()) {
      error(path, "symbol " + quote(name) + " has no value: no multiple of " +
                      std::to_string(sym.multipleOf) + " lies in [" +
                      std::to_string(sym.min) + ", " +
                      std::to_string(*sym.max) + "]");
      ok = false;
    }
    if (ok)
      spec.symbols.push_back(sym);
    else
      spec.symbols.push_back({name, 1, std::nullopt, 1, path}); // known name
  }
}

void Validator::parseGrid(const json &root) {
  const json *v = find(root, "grid");
  if (!v) {
    gridRankKnown = true; // default []: a single program
    return;
  }
  if (!expectArray(*v, "grid",
                   "an array of positive integers, \"dynamic\" or symbol "
                   "expressions"))
    return;
  if (v->size() > kMaxGridRank) {
    error("grid", "grid has rank " + std::to_string(v->size()) +
                      ", which exceeds the limit of " +
                      std::to_string(kMaxGridRank));
    return;
  }
  gridRankKnown = true;
  bool ok = true;
  std::vector<DimExpr> exprs;
  bool symbolic = false;
  for (size_t i = 0; i < v->size(); ++i) {
    const json &d = (*v)[i];
    std::string path = indexPath("grid", i);
    exprs.push_back(DimExpr::constant(1));
    if (d.is_string()) {
      const std::string &text = d.get_ref<const std::string &>();
      if (text == "dynamic") {
        spec.grid.push_back(kDynamicGridDim);
        continue;
      }
      std::optional<DimExpr> e;
      if (spec.symbols.empty()) {
        error(path, "expected a positive integer or \"dynamic\", got " +
                        describe(d) +
                        " (a symbol expression needs the symbols declared "
                        "in the top-level \"symbols\" object)");
      } else {
        e = dimExprValue(text, path, /*allowDivision=*/true, "a grid entry");
      }
      if (e && e->isConstant() && e->num.constant < 1) {
        error(path, quote(text) + " is " + std::to_string(e->num.constant) +
                        "; expected a positive grid size");
        e.reset();
      }
      if (!e) {
        spec.grid.push_back(1); // keeps the rank for the checks that follow
        ok = false;
      } else if (e->isConstant()) {
        spec.grid.push_back(e->num.constant);
        exprs.back() = *e;
      } else {
        spec.grid.push_back(kSymbolicGridDim);
        exprs.back() = *e;
        symbolic = true;
      }
      continue;
    }
    if (auto n = intValue(d, path, 1, "a positive integer or \"dynamic\"")) {
      spec.grid.push_back(*n);
      exprs.back() = DimExpr::constant(*n);
    } else {
      spec.grid.push_back(1); // keeps the rank for the checks that follow
      ok = false;
    }
  }
  if (!ok)
    return;
  if (symbolic)
    spec.gridExprs = std::move(exprs);
  int64_t product = 1;
  for (int64_t d : spec.grid)
    if (d >= 0 && mulOverflows(product, d, product)) {
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

} // namespace pallasc::spec::detail
