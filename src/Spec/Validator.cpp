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
    "transforms"};

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
  if (!v.is_string()) {
    error(path, "expected a memory space (" + listOf(names) + "), got " +
                    describe(v));
    return std::nullopt;
  }
  const std::string &s = v.get_ref<const std::string &>();
  for (MemorySpace ms : allMemorySpaces())
    if (s == memorySpaceName(ms))
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

} // namespace pallasc::spec::detail
