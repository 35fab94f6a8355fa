//===- ValidateArrays.cpp - Arrays and block specs --------------*- C++ -*-===//
//
// The Validator's sections that describe the kernel's operands: `inputs`
// (hi aggregates included) and `outputs`, `num_scalar_prefetch`, and the
// block specs of `in_specs` and `out_specs` (block shapes, index maps,
// memory spaces).
//
//===----------------------------------------------------------------------===//

#include "src/Spec/GridSpecImpl.h"
#include "src/Support/InputChecks.h"

namespace pallasc::spec::detail {

void Validator::parseArrays(const json &root, const char *key, bool isInput,
                            std::vector<ArraySpec> &out,
                            std::vector<ArrayInfo> &info, bool &known) {
  const json &v = root.at(key);
  std::string base = key;
  if (!expectArray(v, base, "an array of {\"shape\", \"dtype\"} objects") ||
      !expectAtMost(v, base, base, kMaxOperands))
    return;
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
      info[i].shapeOk =
          shapeValue(*s, joinPath(path, "shape"), a.shape, &a.shapeExprs);
    if (const json *d = require(e, path, "dtype"))
      if (auto dt = dtypeValue(*d, joinPath(path, "dtype"))) {
        a.dtype = *dt;
        info[i].dtypeOk = true;
      }
    if (isInput)
      if (const json *l = find(e, "linear"))
        if (auto b = boolValue(*l, joinPath(path, "linear")))
          a.linear = *b;
    if (info[i].shapeOk && info[i].dtypeOk && !a.isSymbolic())
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
      if (arrays[i].isSymbolic())
        error(arrays[i].path,
              arrays[i].path + " has the symbolic shape " +
                  formatSymbolicShape(arrays[i].shape, arrays[i].shapeExprs) +
                  " but " + base +
                  " is absent, so its block would be the "
                  "whole array; block shapes are static: give " +
                  base + " with a block_shape for it");
      for (int64_t d : arrays[i].shape)
        bs.blockShape.push_back({BlockDim::Kind::Blocked, d, 0, 0});
      out.push_back(std::move(bs));
    }
    return;
  }
  if (!expectArray(*v, base, "an array of block spec objects") ||
      !expectAtMost(*v, base, base, kMaxOperands))
    return;
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
  checkKeys(v, path,
            {"block_shape", "index_map", "memory_space", "buffer_count"});
  if (const json *m = find(v, "memory_space"))
    if (auto ms = memorySpaceValue(*m, joinPath(path, "memory_space")))
      bs.memorySpace = *ms;
  if (const json *c = find(v, "buffer_count")) {
    std::string cpath = joinPath(path, "buffer_count");
    if (auto n = intValue(*c, cpath, 1, "a positive buffer count")) {
      bs.bufferCount = *n;
      if (bs.memorySpace == MemorySpace::Any && !find(v, "block_shape"))
        error(cpath, "a block spec in memory_space 'any' is not pipelined "
                     "(the kernel sees the whole array): it takes no "
                     "buffer_count");
    }
  }

  if (const json *b = find(v, "block_shape")) {
    bs.hasBlockShape = true;
    std::string bpath = joinPath(path, "block_shape");
    if (bs.memorySpace == MemorySpace::Any)
      error(bpath, "a block_shape cannot be given with memory_space 'any' "
                   "(the kernel sees the whole array)");
    if (!expectArray(*b, bpath,
                     "an array of positive integers, nulls and "
                     "{\"element\": n} objects")) {
    } else if (!expectAtMost(*b, bpath, "block_shape", kMaxRank)) {
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
      else if (ok && array && array->isSymbolic())
        checkSymbolicBlock(bs, *array, bpath);
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
    if (array->isSymbolic() && bs.memorySpace != MemorySpace::Any)
      error(path, path +
                      " has no block_shape, so its block would be the "
                      "whole of " +
                      arrayPath + ", whose shape " +
                      formatSymbolicShape(array->shape, array->shapeExprs) +
                      " is symbolic; block shapes are static: give a "
                      "block_shape (or memory_space 'any')");
    for (int64_t d : array->shape)
      bs.blockShape.push_back({BlockDim::Kind::Blocked, d, 0, 0});
  }

  if (const json *m = find(v, "index_map"))
    parseIndexMap(*m, joinPath(path, "index_map"), bs.indexMap, array,
                  arrayPath);
}

void Validator::checkSymbolicBlock(const BlockSpec &bs, const ArraySpec &array,
                                   const std::string &bpath) {
  for (size_t i = 0; i < bs.blockShape.size(); ++i) {
    if (array.shape[i] != kSymbolicDim)
      continue;
    const BlockDim &d = bs.blockShape[i];
    const DimExpr &e = array.shapeExprs[i];
    std::string dim = "dimension " + std::to_string(i) + " of " + array.path +
                      " (" + quote(e.str()) + ")";
    std::string path = indexPath(bpath, i);
    // A blocked dimension may run past the array's edge (reads there are
    // unspecified, writes dropped), but not at every size it may take.
    if (auto hi = e.highest(spec.symbols);
        hi && d.kind == BlockDim::Kind::Blocked && d.size > *hi) {
      error(path, "block size " + std::to_string(d.size) + " is larger than " +
                      dim +
                      " at every size the "
                      "symbols allow (at most " +
                      std::to_string(*hi) + "); expected a block of at most " +
                      std::to_string(*hi));
      continue;
    }
    // An element window must lie within the array (its padding aside) at
    // every size, the smallest included.
    if (auto lo = e.lowest(spec.symbols);
        lo && d.kind == BlockDim::Kind::Element && d.size > *lo)
      error(path, "element window " + std::to_string(d.size) +
                      " is larger than " + dim + " at its declared minimum (" +
                      std::to_string(*lo) + "); expected a window of at most " +
                      std::to_string(*lo) + " or a larger 'min'");
  }
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
  const std::string *text =
      expectString(v, path, "a string ('@func' or '(i, j) -> (i, j)')");
  if (!text)
    return;
  const std::string &s = *text;
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

} // namespace pallasc::spec::detail
