//===- HostPlanCodec.cpp - A host launch plan as embeddable text -*- C++ -*-===//

#include "src/Launch/HostPlanCodec.h"

#include <charconv>

namespace pallasc::launch {

namespace {

constexpr const char *kMagic = "pallasc-host-plan";
constexpr int64_t kVersion = 1;

class Writer {
public:
  void word(std::string_view w) {
    if (!text.empty())
      text += ' ';
    text += w;
  }
  void num(int64_t v) { word(std::to_string(v)); }
  void nums(const std::vector<int64_t> &v) {
    num(static_cast<int64_t>(v.size()));
    for (int64_t x : v)
      num(x);
  }
  void array(const HostArrayType &a) {
    num(static_cast<int64_t>(a.type));
    nums(a.shape);
  }
  std::string text;
};

class Reader {
public:
  explicit Reader(std::string_view text) : rest(text) {}

  bool word(std::string_view &w) {
    while (!rest.empty() && rest.front() == ' ')
      rest.remove_prefix(1);
    size_t end = rest.find(' ');
    w = rest.substr(0, end);
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end);
    return !w.empty() || fail("the plan ends early");
  }
  bool num(int64_t &v) {
    std::string_view w;
    if (!word(w))
      return false;
    auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
    if (ec != std::errc() || end != w.data() + w.size())
      return fail("expected an integer, got '" + std::string(w) + "'");
    return true;
  }
  /// A count: at most the words left (every counted item takes one).
  bool count(size_t &n) {
    int64_t v;
    if (!num(v))
      return false;
    if (v < 0 || static_cast<uint64_t>(v) > rest.size())
      return fail("count " + std::to_string(v) + " is out of range");
    n = static_cast<size_t>(v);
    return true;
  }
  bool nums(std::vector<int64_t> &v) {
    size_t n;
    if (!count(n))
      return false;
    v.resize(n);
    for (int64_t &x : v)
      if (!num(x))
        return false;
    return true;
  }
  bool array(HostArrayType &a) {
    int64_t t;
    if (!num(t))
      return false;
    // Every type of the table: the fp8 and the packed int4/int2 ones too.
    if (t < 0 || t >= static_cast<int64_t>(allElementTypes().size()))
      return fail("element type " + std::to_string(t) + " is unknown");
    a.type = static_cast<ElementType>(t);
    return nums(a.shape);
  }
  bool atEnd() const {
    return rest.find_first_not_of(' ') == std::string_view::npos;
  }
  bool fail(const std::string &message) {
    if (error.empty())
      error = message;
    return false;
  }
  std::string error;

private:
  std::string_view rest;
};

} // namespace

std::string encodeHostCallPlan(const HostCallPlan &plan,
                               const std::function<size_t(PackedFn)> &indexOf) {
  Writer w;
  w.word(kMagic);
  w.num(kVersion);
  w.word(plan.kernelName);
  w.num(static_cast<int64_t>(indexOf(plan.kernel)));
  w.nums(plan.grid);
  w.nums(plan.vmappedDims);
  w.num(plan.numScalarPrefetch);
  for (const std::vector<HostArrayType> *arrays :
       {&plan.inputs, &plan.outputs}) {
    w.num(static_cast<int64_t>(arrays->size()));
    for (const HostArrayType &a : *arrays)
      w.array(a);
  }
  for (const std::vector<HostBlockMapping> *mappings :
       {&plan.inMappings, &plan.outMappings}) {
    w.num(static_cast<int64_t>(mappings->size()));
    for (const HostBlockMapping &m : *mappings) {
      w.num(m.wholeArray);
      w.nums(m.blockShape);
      w.num(static_cast<int64_t>(m.kinds.size()));
      for (HostBlockMapping::Kind k : m.kinds)
        w.num(static_cast<int64_t>(k));
      w.nums(m.padLow);
      w.nums(m.padHigh);
      w.num(static_cast<int64_t>(m.indexMap.size()));
      for (const AffineProgram &p : m.indexMap)
        w.nums(p.code);
      w.num(m.indexWrapper ? static_cast<int64_t>(indexOf(m.indexWrapper))
                           : -1);
    }
  }
  w.num(static_cast<int64_t>(plan.scratch.size()));
  for (const HostArrayType &a : plan.scratch)
    w.array(a);
  w.num(static_cast<int64_t>(plan.aliases.size()));
  for (auto [in, out] : plan.aliases) {
    w.num(in);
    w.num(out);
  }
  w.num(static_cast<int64_t>(plan.kernelWrites.size()));
  for (bool b : plan.kernelWrites)
    w.num(b);
  // A symbolic call's section; a static plan ends above (its text is the
  // same as before symbols existed).
  const HostSymbolic &sym = plan.symbolic;
  if (sym.empty())
    return w.text;
  w.word("symbols");
  w.num(static_cast<int64_t>(sym.symbols.size()));
  for (const HostSymbol &d : sym.symbols) {
    w.word(d.name);
    w.num(d.min);
    w.num(d.max);
    w.num(d.multipleOf);
  }
  auto expr = [&](const HostDimExpr &e) {
    w.nums(e.coefficients);
    w.num(e.constant);
    w.num(e.divisor);
    w.num(e.ceil);
  };
  w.num(static_cast<int64_t>(sym.grid.size()));
  for (size_t i = 0; i < sym.grid.size(); ++i) {
    w.num(sym.gridIsExpr[i]);
    expr(sym.grid[i]);
  }
  for (const auto *arrays : {&sym.inputs, &sym.outputs}) {
    w.num(static_cast<int64_t>(arrays->size()));
    for (const std::vector<HostDimExpr> &dims : *arrays) {
      w.num(static_cast<int64_t>(dims.size()));
      for (const HostDimExpr &e : dims)
        expr(e);
    }
  }
  return w.text;
}

bool decodeHostCallPlan(std::string_view text, const PackedFn *functions,
                        size_t numFunctions, HostCallPlan &plan,
                        std::string &error) {
  plan = HostCallPlan();
  Reader r(text);
  auto function = [&](int64_t index, PackedFn &fn) {
    if (index < 0 || static_cast<uint64_t>(index) >= numFunctions ||
        !functions[index])
      return r.fail("entry point " + std::to_string(index) +
                    " is not in the table of " + std::to_string(numFunctions));
    fn = functions[index];
    return true;
  };
  auto decode = [&]() -> bool {
    std::string_view magic, name;
    int64_t version, index;
    if (!r.word(magic))
      return false;
    if (magic != kMagic || !r.num(version) || version != kVersion)
      return r.fail("not a version " + std::to_string(kVersion) +
                    " host plan");
    if (!r.word(name) || !r.num(index) || !function(index, plan.kernel))
      return false;
    plan.kernelName = std::string(name);
    if (!r.nums(plan.grid) || !r.nums(plan.vmappedDims) ||
        !r.num(plan.numScalarPrefetch))
      return false;
    for (std::vector<HostArrayType> *arrays : {&plan.inputs, &plan.outputs}) {
      size_t n;
      if (!r.count(n))
        return false;
      arrays->resize(n);
      for (HostArrayType &a : *arrays)
        if (!r.array(a))
          return false;
    }
    for (std::vector<HostBlockMapping> *mappings :
         {&plan.inMappings, &plan.outMappings}) {
      size_t n;
      if (!r.count(n))
        return false;
      mappings->resize(n);
      for (HostBlockMapping &m : *mappings) {
        int64_t whole, wrapper;
        size_t numKinds, numMaps;
        if (!r.num(whole) || !r.nums(m.blockShape) || !r.count(numKinds))
          return false;
        m.wholeArray = whole != 0;
        for (size_t k = 0; k < numKinds; ++k) {
          int64_t kind;
          if (!r.num(kind))
            return false;
          if (kind < 0 || kind > 2)
            return r.fail("block kind " + std::to_string(kind) +
                          " is unknown");
          m.kinds.push_back(static_cast<HostBlockMapping::Kind>(kind));
        }
        if (!r.nums(m.padLow) || !r.nums(m.padHigh) || !r.count(numMaps))
          return false;
        m.indexMap.resize(numMaps);
        for (AffineProgram &p : m.indexMap)
          if (!r.nums(p.code))
            return false;
        if (!r.num(wrapper))
          return false;
        if (wrapper != -1 && !function(wrapper, m.indexWrapper))
          return false;
      }
    }
    size_t n;
    if (!r.count(n))
      return false;
    plan.scratch.resize(n);
    for (HostArrayType &a : plan.scratch)
      if (!r.array(a))
        return false;
    if (!r.count(n))
      return false;
    for (size_t i = 0; i < n; ++i) {
      int64_t in, out;
      if (!r.num(in) || !r.num(out))
        return false;
      plan.aliases.emplace_back(in, out);
    }
    if (!r.count(n))
      return false;
    for (size_t i = 0; i < n; ++i) {
      int64_t b;
      if (!r.num(b))
        return false;
      plan.kernelWrites.push_back(b != 0);
    }
    if (r.atEnd())
      return true;
    std::string_view section;
    if (!r.word(section) || section != "symbols")
      return r.fail("the plan has trailing text");
    HostSymbolic &sym = plan.symbolic;
    if (!r.count(n) || n == 0)
      return r.fail("a symbols section needs symbols");
    sym.symbols.resize(n);
    for (HostSymbol &d : sym.symbols) {
      std::string_view name;
      if (!r.word(name) || !r.num(d.min) || !r.num(d.max) ||
          !r.num(d.multipleOf))
        return false;
      if (d.multipleOf < 1)
        return r.fail("multiple_of must be positive");
      d.name = std::string(name);
    }
    auto expr = [&](HostDimExpr &e) {
      int64_t ceil;
      if (!r.nums(e.coefficients) || !r.num(e.constant) || !r.num(e.divisor) ||
          !r.num(ceil))
        return false;
      if (e.coefficients.size() != sym.symbols.size() || e.divisor < 1)
        return r.fail("malformed dimension expression");
      e.ceil = ceil != 0;
      return true;
    };
    if (!r.count(n) || n != plan.grid.size())
      return r.fail("the symbols section's grid does not match the grid");
    sym.grid.resize(n);
    for (size_t i = 0; i < n; ++i) {
      int64_t isExpr;
      if (!r.num(isExpr) || !expr(sym.grid[i]))
        return false;
      sym.gridIsExpr.push_back(isExpr != 0);
    }
    for (auto [arrays, types] :
         {std::pair{&sym.inputs, &plan.inputs},
          std::pair{&sym.outputs, &plan.outputs}}) {
      if (!r.count(n) || n != types->size())
        return r.fail("the symbols section's operands do not match");
      arrays->resize(n);
      for (size_t k = 0; k < n; ++k) {
        size_t rank;
        if (!r.count(rank) || rank != (*types)[k].shape.size())
          return r.fail("the symbols section's ranks do not match");
        (*arrays)[k].resize(rank);
        for (HostDimExpr &e : (*arrays)[k])
          if (!expr(e))
            return false;
      }
    }
    return r.atEnd() || r.fail("the plan has trailing text");
  };
  if (decode())
    return true;
  error = "malformed launch plan: " + r.error;
  return false;
}

} // namespace pallasc::launch
