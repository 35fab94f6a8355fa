//===- ValidateParams.cpp - Scratch, aliases and params ---------*- C++ -*-===//
//
// The Validator's sections beside the operands: `scratch_shapes`,
// `input_output_aliases`, `cost_estimate`, `compiler_params` (gpu and tpu)
// and `metadata`.
//
//===----------------------------------------------------------------------===//

#include "src/Spec/GridSpecImpl.h"

#include <algorithm>
#include <climits>
#include <map>

namespace pallasc::spec::detail {

void Validator::parseScratch(const json &root) {
  const json *v = find(root, "scratch_shapes");
  if (!v ||
      !expectArray(*v, "scratch_shapes",
                   "an array of {\"shape\", \"dtype\"} objects") ||
      !expectAtMost(*v, "scratch_shapes", "scratch_shapes", kMaxOperands))
    return;
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
          (a.isSymbolic() || b.isSymbolic()) && a.dtype == b.dtype &&
          a.shape.size() == b.shape.size()) {
        // Symbolic shapes alias only where the expressions are the same:
        // aliasing 'n' to 'm' would need n == m, which the spec cannot say.
        auto exprOf = [](const ArraySpec &x, size_t d) {
          return x.isSymbolic() ? x.shapeExprs[d]
                                : DimExpr::constant(x.shape[d]);
        };
        for (size_t d = 0; d < a.shape.size(); ++d) {
          DimExpr ea = exprOf(a, d), eb = exprOf(b, d);
          if (ea == eb)
            continue;
          error(path, "input_output_aliases contains the mapping " + mapping +
                          " referring to " + a.path + " with shape " +
                          formatSymbolicShape(a.shape, a.shapeExprs) +
                          " and to " + b.path + " with shape " +
                          formatSymbolicShape(b.shape, b.shapeExprs) +
                          ": aliasing them needs " + ea.str() + " == " +
                          eb.str() + " (dimension " + std::to_string(d) +
                          "), which the symbols do not guarantee; expected "
                          "the same expression in both shapes");
          aliasesOk = false;
          break;
        }
      } else if (ai.shapeOk && ai.dtypeOk && bi.shapeOk && bi.dtypeOk &&
                 (a.shape != b.shape || a.dtype != b.dtype)) {
        error(path,
              "input_output_aliases contains the mapping " + mapping +
                  " referring to " + a.path + " with shape " +
                  formatSymbolicShape(a.shape, a.shapeExprs) + " " + a.dtype +
                  " and to " + b.path + " with a different shape/dtype " +
                  formatSymbolicShape(b.shape, b.shapeExprs) + " " + b.dtype);
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
              {"dimension_semantics", "vmem_limit_bytes", "has_side_effects",
               "collective_id"});
    if (const json *ds = find(*tpu, "dimension_semantics")) {
      std::string path = tpath + ".dimension_semantics";
      if (expectArray(*ds, path,
                      "an array of " + listOf(dimensionSemanticsNames()))) {
        if (gridRankKnown && ds->size() != spec.grid.size()) {
          error(path, "dimension_semantics has " +
                          countOf(ds->size(), "entry", "entries") +
                          " but the grid has rank " +
                          std::to_string(spec.grid.size()));
        } else if (ds->size() <= kMaxGridRank) {
          for (size_t i = 0; i < ds->size(); ++i) {
            const json &e = (*ds)[i];
            std::string epath = indexPath(path, i);
            if (e.is_string() && std::find(dimensionSemanticsNames().begin(),
                                           dimensionSemanticsNames().end(),
                                           e.get_ref<const std::string &>()) !=
                                     dimensionSemanticsNames().end())
              cp.dimensionSemantics.push_back(e.get<std::string>());
            else
              error(epath, "expected " + listOf(dimensionSemanticsNames()) +
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
    if (const json *c = find(*tpu, "collective_id")) {
      std::string path = tpath + ".collective_id";
      const std::string expected = "an integer in [0, 2^31)";
      if (auto n = intValue(*c, path, 0, expected)) {
        if (*n > INT32_MAX)
          error(path, "expected " + expected + ", got " + std::to_string(*n));
        else
          cp.collectiveId = *n;
      }
    }
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

} // namespace pallasc::spec::detail
