//===- SymExpr.cpp - Dimension expressions over shape symbols ---*- C++ -*-===//
//
// A recursive-descent parser of JAX's dimension-expression syntax that keeps
// the linear subset (SymExpr.h), and the arithmetic on the result: canonical
// text, evaluation, and ranges over the symbols' declared bounds.
//
//===----------------------------------------------------------------------===//

#include "src/Spec/SymExpr.h"

#include <algorithm>

namespace pallasc::spec {

namespace {

bool addOv(int64_t a, int64_t b, int64_t &out) {
  return __builtin_add_overflow(a, b, &out);
}
bool mulOv(int64_t a, int64_t b, int64_t &out) {
  return __builtin_mul_overflow(a, b, &out);
}

/// Floor and ceiling of a / b for b > 0.
int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}
int64_t ceilDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && a > 0) ? q + 1 : q;
}

std::string magnitude(int64_t v) {
  // |v| as text, INT64_MIN included.
  uint64_t u = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  return std::to_string(u);
}

std::string linearStr(const LinearExpr &e) {
  std::string out;
  for (const auto &[name, c] : e.terms) {
    if (out.empty())
      out += c < 0 ? "-" : "";
    else
      out += c < 0 ? " - " : " + ";
    if (c != 1 && c != -1)
      out += magnitude(c) + "*";
    out += name;
  }
  if (out.empty())
    return std::to_string(e.constant);
  if (e.constant != 0)
    out += (e.constant < 0 ? " - " : " + ") + magnitude(e.constant);
  return out;
}

class Parser {
public:
  Parser(const std::string &text, DimExprError &error)
      : text(text), error(error) {}

  std::optional<DimExpr> parse() {
    skipSpace();
    if (pos == text.size())
      return fail(pos, "expected an expression, got an empty string");
    auto e = parseSum();
    if (!e)
      return std::nullopt;
    skipSpace();
    if (pos != text.size())
      return fail(pos, "unexpected '" + std::string(1, text[pos]) +
                           "' after a complete expression");
    return e;
  }

private:
  const std::string &text;
  DimExprError &error;
  size_t pos = 0;
  int depth = 0;

  std::nullopt_t fail(size_t at, const std::string &message) {
    if (error.message.empty())
      error = {at, message};
    return std::nullopt;
  }
  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t'))
      ++pos;
  }
  bool eat(const char *tok) {
    skipSpace();
    size_t n = std::char_traits<char>::length(tok);
    if (text.compare(pos, n, tok) != 0)
      return false;
    // '/' alone is not '//'.
    if (n == 1 && tok[0] == '/' && text.compare(pos, 2, "//") == 0)
      return false;
    pos += n;
    return true;
  }

  std::optional<DimExpr> overflow(size_t at) {
    return fail(at, "the expression overflows int64");
  }

  // Linear combination a + sign * b.
  // `a` by value, moved in by the caller: a long sum adds each term in
  // place (linear time).
  std::optional<DimExpr> combine(DimExpr a, const DimExpr &b, int64_t sign,
                                 size_t at) {
    if (!a.isLinear() || !b.isLinear())
      return fail(at, "a division can only be a whole grid entry (such as "
                      "cdiv(n, 128) or n // 8), not part of a sum");
    DimExpr &r = a;
    int64_t c;
    if (mulOv(b.num.constant, sign, c) ||
        addOv(r.num.constant, c, r.num.constant))
      return overflow(at);
    for (const auto &[name, coef] : b.num.terms) {
      int64_t &dst = r.num.terms[name];
      if (mulOv(coef, sign, c) || addOv(dst, c, dst))
        return overflow(at);
      if (dst == 0)
        r.num.terms.erase(name);
    }
    return std::move(a);
  }

  std::optional<DimExpr> scale(const DimExpr &a, int64_t k, size_t at) {
    if (!a.isLinear())
      return fail(at, "a division can only be a whole grid entry (such as "
                      "cdiv(n, 128) or n // 8), not part of a product");
    DimExpr r;
    if (k == 0)
      return r;
    if (mulOv(a.num.constant, k, r.num.constant))
      return overflow(at);
    for (const auto &[name, coef] : a.num.terms)
      if (mulOv(coef, k, r.num.terms[name]))
        return overflow(at);
    return r;
  }

  std::optional<DimExpr> divide(const DimExpr &a, const DimExpr &b,
                                DimExpr::Round round, size_t at) {
    if (!b.isConstant())
      return fail(at, "division by " + b.str() +
                          ", which is not a constant: only divisions by a "
                          "positive integer are decidable");
    int64_t d = b.num.constant;
    if (d <= 0)
      return fail(at, "division by " + std::to_string(d) +
                          "; expected a positive divisor");
    if (!a.isLinear())
      return fail(at, "a division of a division is not supported; expected "
                      "a linear expression divided by a positive integer");
    if (d == 1)
      return a;
    if (a.isConstant())
      return DimExpr::constant(round == DimExpr::Round::Ceil
                                   ? ceilDiv(a.num.constant, d)
                                   : floorDiv(a.num.constant, d));
    bool exact = a.num.constant % d == 0;
    for (const auto &[name, coef] : a.num.terms)
      exact = exact && coef % d == 0;
    if (exact) { // (8*n + 16) // 8 is n + 2
      DimExpr r;
      r.num.constant = a.num.constant / d;
      for (const auto &[name, coef] : a.num.terms)
        r.num.terms[name] = coef / d;
      return r;
    }
    DimExpr r = a;
    r.divisor = d;
    r.round = round;
    return r;
  }

  std::optional<DimExpr> parseSum() {
    auto lhs = parseProduct();
    while (lhs) {
      size_t at = (skipSpace(), pos);
      int sign = eat("+") ? 1 : eat("-") ? -1 : 0;
      if (!sign)
        break;
      auto rhs = parseProduct();
      if (!rhs)
        return std::nullopt;
      lhs = combine(std::move(*lhs), *rhs, sign, at);
    }
    return lhs;
  }

  std::optional<DimExpr> parseProduct() {
    auto lhs = parseUnary();
    while (lhs) {
      size_t at = (skipSpace(), pos);
      if (eat("*")) {
        auto rhs = parseUnary();
        if (!rhs)
          return std::nullopt;
        if (!lhs->isConstant() && !rhs->isConstant())
          return fail(at, "the product " + lhs->str() + " * " + rhs->str() +
                              " is not linear; expected a linear expression "
                              "(a product of a symbol and an integer)");
        if (lhs->isConstant())
          lhs = scale(*rhs, lhs->num.constant, at);
        else
          lhs = scale(*lhs, rhs->num.constant, at);
      } else if (eat("//")) {
        auto rhs = parseUnary();
        if (!rhs)
          return std::nullopt;
        lhs = divide(*lhs, *rhs, DimExpr::Round::Floor, at);
      } else if (eat("%")) {
        return fail(at, "'%' (mod) is not supported in a dimension "
                        "expression; expected + - * // or cdiv()");
      } else if (eat("/")) {
        return fail(at, "'/' is not a dimension operator; use '//' (floor "
                        "division) or cdiv(a, b) (ceiling division)");
      } else {
        break;
      }
    }
    return lhs;
  }

  std::optional<DimExpr> parseUnary() {
    size_t at = (skipSpace(), pos);
    // Signs nest as parentheses do: bounded, so that no input overflows
    // the stack.
    bool minus = false;
    int signs = 0;
    while (true) {
      if (eat("-"))
        minus = !minus;
      else if (!eat("+"))
        break;
      if (++signs > 64)
        return fail(at, "the expression nests deeper than 64");
    }
    auto e = parseAtom();
    if (!e || !minus)
      return e;
    return scale(*e, -1, at);
  }

  std::optional<DimExpr> parseAtom() {
    skipSpace();
    size_t at = pos;
    if (pos == text.size())
      return fail(at, "expected a symbol, an integer or '(', got the end of "
                      "the expression");
    char c = text[pos];
    if (c == '(') {
      if (++depth > 64)
        return fail(at, "the expression nests deeper than 64");
      ++pos;
      auto e = parseSum();
      if (!e)
        return std::nullopt;
      if (!eat(")"))
        return fail(pos, "expected ')'");
      --depth;
      return e;
    }
    if (c >= '0' && c <= '9') {
      int64_t v = 0;
      while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
        if (mulOv(v, 10, v) || addOv(v, text[pos] - '0', v))
          return fail(at, "the integer overflows int64");
        ++pos;
      }
      return DimExpr::constant(v);
    }
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_') {
      while (pos < text.size() &&
             ((text[pos] >= 'A' && text[pos] <= 'Z') ||
              (text[pos] >= 'a' && text[pos] <= 'z') ||
              (text[pos] >= '0' && text[pos] <= '9') || text[pos] == '_'))
        ++pos;
      std::string name = text.substr(at, pos - at);
      skipSpace();
      if (pos < text.size() && text[pos] == '(')
        return parseCall(name, at);
      DimExpr e;
      e.num.terms[name] = 1;
      return e;
    }
    return fail(at, "expected a symbol, an integer or '(', got '" +
                        std::string(1, c) + "'");
  }

  std::optional<DimExpr> parseCall(const std::string &name, size_t at) {
    DimExpr::Round round;
    if (name == "cdiv")
      round = DimExpr::Round::Ceil;
    else if (name == "floordiv")
      round = DimExpr::Round::Floor;
    else if (name == "mod" || name == "max" || name == "min" ||
             name == "non_negative")
      return fail(at, "'" + name +
                          "' is not supported in a dimension expression; "
                          "expected cdiv(a, b) or floordiv(a, b)");
    else
      return fail(at, "unknown function '" + name +
                          "'; expected cdiv(a, b) or floordiv(a, b)");
    if (++depth > 64)
      return fail(at, "the expression nests deeper than 64");
    eat("(");
    auto a = parseSum();
    if (!a)
      return std::nullopt;
    if (!eat(","))
      return fail(pos, "expected ',' between the two arguments of " + name);
    auto b = parseSum();
    if (!b)
      return std::nullopt;
    if (!eat(")"))
      return fail(pos, "expected ')' after the two arguments of " + name);
    --depth;
    return divide(*a, *b, round, at);
  }
};

} // namespace

int64_t SymbolSpec::lowest() const {
  int64_t r = ceilDiv(min, multipleOf);
  int64_t v;
  return mulOv(r, multipleOf, v) ? min : v;
}

std::optional<int64_t> SymbolSpec::highest() const {
  if (!max)
    return std::nullopt;
  return floorDiv(*max, multipleOf) * multipleOf;
}

std::string SymbolSpec::check(int64_t value) const {
  std::string v = name + " = " + std::to_string(value);
  if (value < min)
    return v + " is less than its minimum " + std::to_string(min);
  if (max && value > *max)
    return v + " is greater than its maximum " + std::to_string(*max);
  if (value % multipleOf != 0)
    return v + " is not a multiple of " + std::to_string(multipleOf);
  return "";
}

std::vector<std::string> DimExpr::symbols() const {
  std::vector<std::string> out;
  for (const auto &t : num.terms)
    out.push_back(t.first);
  return out;
}

std::string DimExpr::str() const {
  std::string n = linearStr(num);
  if (divisor == 1)
    return n;
  std::string d = std::to_string(divisor);
  if (round == Round::Ceil)
    return "cdiv(" + n + ", " + d + ")";
  bool compound = num.terms.size() + (num.constant != 0) > 1;
  return (compound ? "(" + n + ")" : n) + " // " + d;
}

std::optional<int64_t>
DimExpr::evaluate(const std::map<std::string, int64_t> &values) const {
  int64_t acc = num.constant;
  for (const auto &[name, coef] : num.terms) {
    auto it = values.find(name);
    if (it == values.end())
      return std::nullopt;
    int64_t t;
    if (mulOv(coef, it->second, t) || addOv(acc, t, acc))
      return std::nullopt;
  }
  if (divisor == 1)
    return acc;
  return round == Round::Ceil ? ceilDiv(acc, divisor) : floorDiv(acc, divisor);
}

namespace {

std::optional<int64_t> bound(const DimExpr &e,
                             const std::vector<SymbolSpec> &symbols, bool low) {
  int64_t acc = e.num.constant;
  for (const auto &term : e.num.terms) {
    const std::string &name = term.first;
    int64_t coef = term.second;
    auto s = std::find_if(symbols.begin(), symbols.end(),
                          [&](const SymbolSpec &x) { return x.name == name; });
    if (s == symbols.end())
      return std::nullopt;
    std::optional<int64_t> v = (coef > 0) == low ? s->lowest() : s->highest();
    int64_t t;
    if (!v || mulOv(coef, *v, t) || addOv(acc, t, acc))
      return std::nullopt;
  }
  if (e.divisor == 1)
    return acc;
  return e.round == DimExpr::Round::Ceil ? ceilDiv(acc, e.divisor)
                                         : floorDiv(acc, e.divisor);
}

} // namespace

std::optional<int64_t>
DimExpr::lowest(const std::vector<SymbolSpec> &symbols) const {
  return bound(*this, symbols, /*low=*/true);
}

std::optional<int64_t>
DimExpr::highest(const std::vector<SymbolSpec> &symbols) const {
  return bound(*this, symbols, /*low=*/false);
}

std::optional<DimExpr> parseDimExpr(const std::string &text, bool allowDivision,
                                    DimExprError &error) {
  error = {};
  Parser parser(text, error);
  auto e = parser.parse();
  if (e && !allowDivision && !e->isLinear()) {
    error = {0, e->str() + " is a division; an array dimension must be a "
                           "linear expression over the symbols (such as "
                           "2*n + 8)"};
    return std::nullopt;
  }
  return e;
}

std::string formatSymbolicShape(const std::vector<int64_t> &shape,
                                const std::vector<DimExpr> &exprs) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      out += ",";
    out += i < exprs.size() ? exprs[i].str() : std::to_string(shape[i]);
  }
  return out + "]";
}

} // namespace pallasc::spec
