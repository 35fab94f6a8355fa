//===- ValidateTransforms.cpp - The transforms of a spec --------*- C++ -*-===//
//
// The Validator's `transforms` section: vmap (whose batch axes are checked
// against the ranks and sizes the earlier vmaps leave), jvp, dce,
// discharge_state and hi_to_lo.
//
//===----------------------------------------------------------------------===//

#include "src/Spec/GridSpecImpl.h"

#include <algorithm>
#include <climits>

namespace pallasc::spec::detail {

namespace {

const std::vector<std::string> kTransformNames = {
    "vmap", "jvp", "dce", "discharge_state", "hi_to_lo"};

/// The transform a key of "transforms" names.
std::optional<Transform::Kind> transformKind(const std::string &name) {
  if (name == "vmap")
    return Transform::Kind::Vmap;
  if (name == "jvp")
    return Transform::Kind::Jvp;
  if (name == "dce")
    return Transform::Kind::Dce;
  if (name == "discharge_state")
    return Transform::Kind::DischargeState;
  if (name == "hi_to_lo")
    return Transform::Kind::HiToLo;
  return std::nullopt;
}

} // namespace

/// vmap's `axis_size`: a positive integer, or a linear expression over the
/// declared symbols whose smallest value is at least 1 (a constant one is
/// taken as its integer).
void Validator::parseAxisSize(const json &body, const std::string &bpath,
                              Transform &t) {
  const json *s = require(body, bpath, "axis_size");
  if (!s)
    return;
  std::string path = joinPath(bpath, "axis_size");
  if (!s->is_string()) {
    if (auto n = intValue(*s, path, 1,
                          "a positive integer or a symbol expression"))
      t.axisSize = *n;
    return;
  }
  std::string text = s->get<std::string>();
  std::optional<DimExpr> e = dimExprValue(text, path, /*allowDivision=*/false,
                                          "a batch axis size");
  if (!e)
    return;
  if (e->isConstant()) {
    if (e->num.constant < 1) {
      error(path, "axis size " + quote(text) + " is " +
                      std::to_string(e->num.constant) +
                      "; expected a positive integer or a symbol expression");
      return;
    }
    t.axisSize = e->num.constant;
    return;
  }
  if (e->lowest(spec.symbols).value_or(0) < 1) {
    error(path, "axis size " + quote(text) +
                    " may be 0 at the symbols' declared minimums; expected "
                    "an expression that is at least 1");
    return;
  }
  t.axisExpr = std::move(e);
}

/// A vmap or dce after a transform that changes the operand list (jvp, dce,
/// discharge_state, hi_to_lo): the counts and ranks are only known to the
/// passes, which check them, so the axes and mask are taken as written.
void Validator::parseTransformAsWritten(const json &body,
                                        const std::string &bpath,
                                        Transform &t) {
  if (t.kind == Transform::Kind::Vmap) {
    checkKeys(body, bpath, {"in_axes", "axis_size"});
    parseAxisSize(body, bpath, t);
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
    return;
  }
  checkKeys(body, bpath, {"used_outputs"});
  if (const json *u = require(body, bpath, "used_outputs")) {
    std::string upath = joinPath(bpath, "used_outputs");
    if (expectArray(*u, upath, "an array of booleans"))
      for (size_t i = 0; i < u->size(); ++i)
        if (auto b = boolValue((*u)[i], indexPath(upath, i)))
          t.usedOutputs.push_back(*b);
  }
}

const json *Validator::operandArray(const json &body, const std::string &bpath,
                                    const char *key, const std::string &what,
                                    bool known, size_t count, const char *one,
                                    const char *many, std::string &path) {
  const json *v = require(body, bpath, key);
  if (!v)
    return nullptr;
  path = joinPath(bpath, key);
  if (!expectArray(*v, path, what) || !known)
    return nullptr;
  if (v->size() != count) {
    error(path, std::string(key) + " has " +
                    countOf(v->size(), "entry", "entries") +
                    " but the spec has " + countOf(count, one, many));
    return nullptr;
  }
  return v;
}

void Validator::parseTransforms(const json &root) {
  const json *v = find(root, "transforms");
  if (!v || !expectArray(*v, "transforms", "an array of transform objects") ||
      !expectAtMost(*v, "transforms", "transforms", kMaxTransforms))
    return;
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
                        const Transform &t, const ArraySpec &array,
                        const std::string &path) {
    int64_t size = t.axisExpr ? kSymbolicDim : t.axisSize;
    std::vector<int64_t> batched = shape;
    batched.insert(batched.begin() + axis, size);
    int64_t bytes = dtypeByteWidth(array.dtype);
    for (int64_t d : batched)
      if (d != kSymbolicDim && mulOverflows(bytes, d, bytes)) {
        error(path, "batching " + array.path + " (" + formatShape(shape) +
                        " " + array.dtype + ") by axis_size " +
                        (t.axisExpr ? t.axisExpr->str()
                                    : std::to_string(size)) +
                        " gives " +
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
    if (std::optional<Transform::Kind> kind = transformKind(name)) {
      t.kind = *kind;
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

    if (!operandsKnown &&
        (t.kind == Transform::Kind::Vmap || t.kind == Transform::Kind::Dce)) {
      parseTransformAsWritten(body, bpath, t);
    } else if (t.kind == Transform::Kind::Vmap) {
      checkKeys(body, bpath, {"in_axes", "axis_size"});
      parseAxisSize(body, bpath, t);
      std::string apath;
      if (const json *ax = operandArray(
              body, bpath, "in_axes", "an array of integers and nulls",
              inputsKnown, spec.inputs.size(), "input", "inputs", apath)) {
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
                             " (expected [" + std::to_string(-rank - 1) + ", " +
                             std::to_string(rank) + "])");
            continue;
          }
          t.inAxes.push_back(*n < 0 ? *n + rank + 1 : *n);
        }
        if (t.inAxes.size() == ranks.size()) {
          // A symbolic array aliased to an output is batched in place
          // only at axis 0: unbatched it would be broadcast, at another
          // axis transposed, and neither takes symbolic shapes
          // (docs/transforms.md#symbolic-calls).
          for (auto [in, out] : spec.inputOutputAliases) {
            if (in < 0 || static_cast<size_t>(in) >= t.inAxes.size() ||
                static_cast<size_t>(in) >= spec.inputs.size())
              continue;
            const ArraySpec &a = spec.inputs[in];
            bool symbolic = std::find(a.shape.begin(), a.shape.end(),
                                      kSymbolicDim) != a.shape.end();
            std::optional<int64_t> axis = t.inAxes[in];
            if ((!symbolic && !t.axisExpr) || (axis && *axis == 0))
              continue;
            error(indexPath(apath, in),
                  a.path + " (" + formatSymbolicShape(a.shape, a.shapeExprs) +
                      ") is aliased to outputs[" + std::to_string(out) +
                      "] and " +
                      (axis ? "batched at axis " + std::to_string(*axis)
                            : std::string("not batched")) +
                      "; vmap batches " +
                      (symbolic ? std::string("a symbolic array")
                                : "by the symbolic axis_size " +
                                      quote(t.axisExpr->str()) + " an array") +
                      " aliased to an output only at axis 0 (its " +
                      (axis ? "transpose" : "broadcast") +
                      " would need a static shape)");
          }
          for (size_t i = 0; i < ranks.size(); ++i)
            if (t.inAxes[i] && ranks[i] >= 0)
              ++ranks[i];
          // The batched sizes: each batched input, and every output
          // (pallas-vmap batches the outputs at axis 0).
          std::string spath = joinPath(bpath, "axis_size");
          bool ok = t.axisSize >= 1 || t.axisExpr;
          for (size_t i = 0; ok && i < inShapes.size(); ++i)
            if (t.inAxes[i] && inShapeOk[i])
              ok = batchShape(inShapes[i], *t.inAxes[i], t, spec.inputs[i],
                              spath);
          for (size_t i = 0; ok && i < outShapes.size(); ++i)
            if (outShapeOk[i])
              ok = batchShape(outShapes[i], 0, t, spec.outputs[i], spath);
        }
      }
    } else if (t.kind == Transform::Kind::Dce) {
      checkKeys(body, bpath, {"used_outputs"});
      std::string upath;
      if (const json *u = operandArray(
              body, bpath, "used_outputs", "an array of booleans", outputsKnown,
              spec.outputs.size(), "output", "outputs", upath))
        for (size_t i = 0; i < u->size(); ++i)
          if (auto b = boolValue((*u)[i], indexPath(upath, i)))
            t.usedOutputs.push_back(*b);
    } else {
      checkKeys(body, bpath, {});
    }
    if (t.kind != Transform::Kind::Vmap)
      operandsKnown = false;
    spec.transforms.push_back(std::move(t));
  }
}

} // namespace pallasc::spec::detail
