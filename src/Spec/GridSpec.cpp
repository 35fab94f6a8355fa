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
// This file holds the entry point, parseGridSpec, with the JSON reading
// (nesting pre-scan, DOM builder); the Validator and the helpers it shares
// with this file are declared in GridSpecImpl.h, which lists the files that
// implement them. They are all compiled with exceptions; nothing thrown in
// them escapes parseGridSpec.
//
//===----------------------------------------------------------------------===//

#include "src/Spec/GridSpec.h"
#include "src/Spec/GridSpecImpl.h"
#include "src/Launch/ElementType.h"

#include <algorithm>
#include <exception>

namespace pallasc::spec {

const std::vector<MemorySpace> &allMemorySpaces() {
  static const std::vector<MemorySpace> all = {
      MemorySpace::Default, MemorySpace::Any,  MemorySpace::Smem,
      MemorySpace::Vmem,    MemorySpace::Gmem, MemorySpace::Hbm,
      MemorySpace::Semaphore};
  return all;
}

const std::vector<std::string> &dimensionSemanticsNames() {
  static const std::vector<std::string> names = {
      "parallel", "arbitrary", "core_parallel", "subcore_parallel"};
  return names;
}

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
  launch::ElementType type;
  if (!launch::parseElementTypeOrAlias(dtype, type))
    return std::nullopt;
  return std::string(launch::elementTypeName(type));
}

int64_t dtypeByteWidth(const std::string &canonicalDtype) {
  launch::ElementType type;
  if (!launch::parseElementType(canonicalDtype, type))
    return 0;
  return static_cast<int64_t>(launch::elementSize(type));
}

using namespace detail;

namespace {

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

std::optional<std::pair<std::string, std::string>>
firstSymbolUse(const GridSpec &spec) {
  for (size_t i = 0; i < spec.gridExprs.size(); ++i)
    if (!spec.gridExprs[i].isConstant())
      return std::make_pair(spec.gridExprs[i].symbols().front(),
                            "grid[" + std::to_string(i) + "]");
  for (const std::vector<ArraySpec> *arrays : {&spec.inputs, &spec.outputs})
    for (const ArraySpec &a : *arrays)
      for (size_t d = 0; d < a.shapeExprs.size(); ++d)
        if (!a.shapeExprs[d].isConstant())
          return std::make_pair(a.shapeExprs[d].symbols().front(),
                                a.path + ".shape[" + std::to_string(d) + "]");
  for (const Transform &t : spec.transforms)
    if (t.axisExpr)
      return std::make_pair(t.axisExpr->symbols().front(),
                            t.path + ".vmap.axis_size");
  return std::nullopt;
}

bool inferSymbols(const GridSpec &spec,
                  const std::vector<std::vector<int64_t>> &shapes,
                  const std::vector<std::string> &sources,
                  std::map<std::string, int64_t> &values,
                  std::string &errorSource, std::string &error) {
  // Where each value came from, for the messages.
  std::map<std::string, std::string> origin, originSource;
  auto where = [&](size_t i, size_t d) {
    errorSource = sources[i];
    return spec.inputs[i].path + " dimension " + std::to_string(d);
  };
  for (size_t i = 0; i < spec.inputs.size() && i < shapes.size(); ++i) {
    const ArraySpec &a = spec.inputs[i];
    if (shapes[i].size() != a.shape.size()) {
      errorSource = sources[i];
      error = a.path + " has shape " + detail::formatShape(shapes[i]) +
              " but the spec gives it rank " + std::to_string(a.shape.size()) +
              " (" + formatSymbolicShape(a.shape, a.shapeExprs) + ")";
      return false;
    }
  }
  // Solve the dimensions of one unknown symbol, then check the others,
  // until nothing changes.
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t i = 0; i < spec.inputs.size() && i < shapes.size(); ++i) {
      const ArraySpec &a = spec.inputs[i];
      for (size_t d = 0; d < a.shapeExprs.size(); ++d) {
        const DimExpr &e = a.shapeExprs[d];
        int64_t got = shapes[i][d];
        std::vector<std::string> unknown;
        for (const std::string &s : e.symbols())
          if (!values.count(s))
            unknown.push_back(s);
        if (unknown.size() != 1)
          continue;
        // got = c * s + rest, rest known.
        const std::string &s = unknown.front();
        DimExpr rest = e;
        int64_t c = rest.num.terms[s];
        rest.num.terms.erase(s);
        std::optional<int64_t> r = rest.evaluate(values);
        int64_t diff;
        if (!r || __builtin_sub_overflow(got, *r, &diff) || diff % c != 0) {
          error = where(i, d) + " is " + std::to_string(got) + ", which '" +
                  e.str() + "' gives for no value of " + s +
                  (values.empty() ? "" : " (with the other symbols' values)");
          return false;
        }
        values[s] = diff / c;
        origin[s] = where(i, d);
        originSource[s] = sources[i];
        progress = true;
      }
    }
  }
  for (const SymbolSpec &sym : spec.symbols) {
    auto it = values.find(sym.name);
    if (it == values.end())
      continue;
    std::string why = sym.check(it->second);
    if (!why.empty()) {
      errorSource = originSource[sym.name];
      error = origin[sym.name] + " is " + std::to_string(it->second) + ": " +
              why + " (the constraint " + sym.path + ")";
      return false;
    }
  }
  // Every symbolic dimension agrees with the values.
  for (size_t i = 0; i < spec.inputs.size() && i < shapes.size(); ++i) {
    const ArraySpec &a = spec.inputs[i];
    for (size_t d = 0; d < a.shapeExprs.size(); ++d) {
      const DimExpr &e = a.shapeExprs[d];
      if (e.isConstant())
        continue;
      std::optional<int64_t> want = e.evaluate(values);
      if (want && *want == shapes[i][d])
        continue;
      std::string known;
      for (const std::string &s : e.symbols())
        if (values.count(s))
          known += (known.empty() ? "" : ", ") + s + " = " +
                   std::to_string(values[s]) + " from " + originSource[s] +
                   " " + origin[s];
      error = where(i, d) + " is " + std::to_string(shapes[i][d]) +
              " but the spec's '" + e.str() + "' is " +
              (want ? std::to_string(*want) : std::string("past int64")) +
              " there (" + known + ")";
      return false;
    }
    // And so do the static ones.
    for (size_t d = 0; d < a.shape.size(); ++d)
      if (a.shape[d] != kSymbolicDim && a.shape[d] != shapes[i][d]) {
        error = where(i, d) + " is " + std::to_string(shapes[i][d]) +
                " but the spec gives " + std::to_string(a.shape[d]) + " (" +
                formatSymbolicShape(a.shape, a.shapeExprs) + ")";
        return false;
      }
  }
  for (const SymbolSpec &sym : spec.symbols) {
    bool used = false;
    for (const std::vector<ArraySpec> *arrays : {&spec.inputs, &spec.outputs})
      for (const ArraySpec &a : *arrays)
        for (const DimExpr &e : a.shapeExprs)
          for (const std::string &s : e.symbols())
            used = used || s == sym.name;
    for (const DimExpr &e : spec.gridExprs)
      for (const std::string &s : e.symbols())
        used = used || s == sym.name;
    if (used && !values.count(sym.name)) {
      errorSource.clear();
      error = "symbol '" + sym.name +
              "' is not the size of any input dimension, so its value "
              "cannot be inferred from the inputs' shapes (" +
              sym.path + ")";
      return false;
    }
  }
  return true;
}

bool instantiateSymbols(GridSpec &spec,
                        const std::map<std::string, int64_t> &values,
                        std::string &error) {
  for (std::vector<ArraySpec> *arrays : {&spec.inputs, &spec.outputs})
    for (ArraySpec &a : *arrays) {
      for (size_t d = 0; d < a.shapeExprs.size(); ++d) {
        std::optional<int64_t> v = a.shapeExprs[d].evaluate(values);
        if (!v || *v < 0) {
          error = a.path + ".shape[" + std::to_string(d) + "] '" +
                  a.shapeExprs[d].str() + "' has no size at these values";
          return false;
        }
        a.shape[d] = *v;
      }
      int64_t bytes = dtypeByteWidth(a.dtype);
      for (int64_t d : a.shape)
        if (__builtin_mul_overflow(bytes, d, &bytes)) {
          error = "the size in bytes of " + a.path + " " +
                  detail::formatShape(a.shape) + " " + a.dtype +
                  " overflows int64";
          return false;
        }
      a.shapeExprs.clear();
    }
  for (size_t g = 0; g < spec.gridExprs.size(); ++g) {
    if (spec.grid[g] != kSymbolicGridDim)
      continue;
    std::optional<int64_t> v = spec.gridExprs[g].evaluate(values);
    if (!v || *v < 0) {
      error = "grid[" + std::to_string(g) + "] '" + spec.gridExprs[g].str() +
              "' has no size at these values";
      return false;
    }
    spec.grid[g] = *v;
  }
  spec.gridExprs.clear();
  return true;
}

} // namespace pallasc::spec
