//===- SymExpr.h - Dimension expressions over shape symbols -----*- C++ -*-===//
//
// The symbolic dimensions of a grid spec (docs/gridspec.md#symbols): an array
// dimension that is a linear expression over declared symbols ("n", "2*n",
// "n + 8") and a grid entry that may also divide one by a positive constant
// ("cdiv(n, 128)", "n // 8"). The syntax follows JAX's dimension expressions
// (jax/_src/export/shape_poly.py: integers, symbols, + - *, //, floordiv(),
// parentheses); pallasc adds cdiv() (pl.cdiv) and accepts only the linear
// subset, for which the sign and the range of an expression over the symbols'
// declared bounds are decidable.
//
// Free of exceptions and of nlohmann/json: usable from code built with
// -fno-exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_SPEC_SYMEXPR_H
#define PALLASC_SRC_SPEC_SYMEXPR_H

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace pallasc::spec {

/// A symbol of the top-level "symbols" object and its constraints (JAX's
/// symbolic-shape constraints: `n >= min`, `n <= max`, `n % multiple_of == 0`).
struct SymbolSpec {
  std::string name;
  int64_t min = 1;            ///< >= 1 (JAX's dimension variables are >= 1)
  std::optional<int64_t> max; ///< >= min
  int64_t multipleOf = 1;     ///< >= 1
  std::string path;           ///< e.g. "symbols.n"

  /// The smallest and largest values the constraints allow (min and max
  /// rounded to multiple_of); no largest when `max` is absent.
  int64_t lowest() const;
  std::optional<int64_t> highest() const;
  /// Empty if `value` satisfies the constraints, else the reason, e.g.
  /// "n = 100 is not a multiple of 8".
  std::string check(int64_t value) const;
};

/// sum(coefficient * symbol) + constant, symbols sorted by name, no zero
/// coefficients.
struct LinearExpr {
  std::map<std::string, int64_t> terms;
  int64_t constant = 0;
  bool isConstant() const { return terms.empty(); }
  bool operator==(const LinearExpr &o) const {
    return terms == o.terms && constant == o.constant;
  }
  bool operator!=(const LinearExpr &o) const { return !(*this == o); }
};

/// A dimension expression: `num`, or `num` divided by a positive constant
/// rounding down (`//`, floordiv) or up (cdiv).
struct DimExpr {
  enum class Round { Floor, Ceil };
  LinearExpr num;
  int64_t divisor = 1; ///< >= 1; 1: a linear expression
  Round round = Round::Floor;

  static DimExpr constant(int64_t c) {
    DimExpr e;
    e.num.constant = c;
    return e;
  }
  bool isLinear() const { return divisor == 1; }
  bool isConstant() const { return isLinear() && num.isConstant(); }
  /// The symbols it uses, sorted.
  std::vector<std::string> symbols() const;
  /// Canonical text: "n", "2*n + 8", "n - 1", "cdiv(n, 128)", "n // 8",
  /// "(n + 7) // 8". Parsing it gives back an equal expression.
  std::string str() const;
  /// Its value for the symbols' values (every symbol it uses must have one);
  /// nullopt if a step overflows int64.
  std::optional<int64_t>
  evaluate(const std::map<std::string, int64_t> &values) const;
  /// Its smallest and largest values over the symbols' allowed ranges
  /// (`symbols` must declare every symbol it uses); nullopt where unbounded
  /// or past int64.
  std::optional<int64_t> lowest(const std::vector<SymbolSpec> &symbols) const;
  std::optional<int64_t> highest(const std::vector<SymbolSpec> &symbols) const;
  bool operator==(const DimExpr &o) const {
    return num == o.num && divisor == o.divisor &&
           (divisor == 1 || round == o.round);
  }
  bool operator!=(const DimExpr &o) const { return !(*this == o); }
};

/// A syntax or form error of a dimension expression: `offset` is the byte of
/// the text where it is (for a caret), `message` says what was expected.
struct DimExprError {
  size_t offset = 0;
  std::string message;
};

/// Parses a dimension expression. `allowDivision`: whether the result may be
/// a division (grid entries) or must be linear (array dimensions). Rejects a
/// product of two symbols ("non-linear"), a division by a symbol or by a
/// non-positive constant, a division inside a sum or product, `%`/mod,
/// min/max, and int64 overflow, each with its reason. Bounded by the text's
/// size (nesting deeper than 64 is refused).
std::optional<DimExpr> parseDimExpr(const std::string &text, bool allowDivision,
                                    DimExprError &error);

/// "[n,128]" for a shape whose symbolic dimensions are in `exprs` (empty:
/// all static) and static ones in `shape`.
std::string formatSymbolicShape(const std::vector<int64_t> &shape,
                                const std::vector<DimExpr> &exprs);

} // namespace pallasc::spec

#endif // PALLASC_SRC_SPEC_SYMEXPR_H
