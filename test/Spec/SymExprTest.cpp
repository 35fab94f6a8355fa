//===- SymExprTest.cpp - Tests of the dimension expressions -----*- C++ -*-===//
//
// parseDimExpr on JAX-style dimension expressions: the linear forms it
// normalizes to, their canonical text (which parses back to the same
// expression), evaluation against a direct computation, ranges over the
// symbols' constraints, and every form it refuses with its reason.
//
//===----------------------------------------------------------------------===//

#include "src/Spec/SymExpr.h"

#include <catch2/catch.hpp>

#include <climits>

using namespace pallasc::spec;
using Catch::Contains;

namespace {

DimExpr ok(const std::string &text, bool allowDivision = true) {
  DimExprError err;
  auto e = parseDimExpr(text, allowDivision, err);
  INFO(text << ": " << err.message);
  REQUIRE(e);
  // The canonical text parses back to the same expression.
  DimExprError err2;
  auto again = parseDimExpr(e->str(), allowDivision, err2);
  INFO(e->str() << ": " << err2.message);
  REQUIRE(again);
  REQUIRE(*again == *e);
  return *e;
}

DimExprError bad(const std::string &text, bool allowDivision = true) {
  DimExprError err;
  auto e = parseDimExpr(text, allowDivision, err);
  INFO(text);
  REQUIRE_FALSE(e);
  REQUIRE_FALSE(err.message.empty());
  return err;
}

int64_t eval(const DimExpr &e, std::map<std::string, int64_t> values) {
  auto v = e.evaluate(values);
  REQUIRE(v);
  return *v;
}

} // namespace

TEST_CASE("dimension expressions normalize to linear forms", "[symexpr]") {
  CHECK(ok("n").str() == "n");
  CHECK(ok("2*n").str() == "2*n");
  CHECK(ok("n*2").str() == "2*n");
  CHECK(ok("n + 8").str() == "n + 8");
  CHECK(ok(" 8+n ").str() == "n + 8");
  CHECK(ok("n - 1").str() == "n - 1");
  CHECK(ok("-n + 2*m").str() == "2*m - n");
  CHECK(ok("2*(n + 3) - n").str() == "n + 6");
  CHECK(ok("n - n + 4").str() == "4");
  CHECK(ok("n - n + 4").isConstant());
  CHECK(ok("batch_size*4").str() == "4*batch_size");
  CHECK(ok("128").num.constant == 128);
  CHECK(ok("n").symbols() == std::vector<std::string>{"n"});
  CHECK(ok("m + n + m").symbols() == std::vector<std::string>{"m", "n"});
  CHECK(ok("n") == ok("(n)"));
  CHECK(ok("n + m") == ok("m + n"));
  CHECK(ok("n") != ok("m"));
}

TEST_CASE("grid expressions divide by a positive constant", "[symexpr]") {
  CHECK(ok("cdiv(n, 128)").str() == "cdiv(n, 128)");
  CHECK(ok("n // 8").str() == "n // 8");
  CHECK(ok("floordiv(n, 8)") == ok("n // 8"));
  CHECK(ok("(n + 7) // 8").str() == "(n + 7) // 8");
  CHECK(ok("cdiv(2*n + 1, 4)").str() == "cdiv(2*n + 1, 4)");
  CHECK(ok("cdiv(n, 8)") != ok("n // 8"));
  // Exact divisions become linear.
  CHECK(ok("(8*n + 16) // 8").str() == "n + 2");
  CHECK(ok("cdiv(4*n, 4)").isLinear());
  CHECK(ok("n // 1").str() == "n");
  CHECK(ok("cdiv(100, 8)").num.constant == 13);
  CHECK(ok("100 // 8").num.constant == 12);
}

TEST_CASE("evaluation agrees with the arithmetic it denotes", "[symexpr]") {
  DimExpr lin = ok("3*n - 2*m + 5");
  DimExpr c = ok("cdiv(n + m, 8)");
  DimExpr f = ok("(n - m) // 8");
  for (int64_t n = 1; n <= 40; ++n)
    for (int64_t m = 1; m <= 40; ++m) {
      CHECK(eval(lin, {{"n", n}, {"m", m}}) == 3 * n - 2 * m + 5);
      CHECK(eval(c, {{"n", n}, {"m", m}}) == (n + m + 7) / 8);
      int64_t d = n - m;
      int64_t floor = d >= 0 ? d / 8 : -((-d + 7) / 8);
      CHECK(eval(f, {{"n", n}, {"m", m}}) == floor);
    }
  // A missing symbol or an overflow gives no value.
  CHECK_FALSE(lin.evaluate({{"n", 1}}));
  CHECK_FALSE(ok("2*n").evaluate({{"n", INT64_MAX}}));
}

TEST_CASE("ranges over the symbols' constraints", "[symexpr]") {
  std::vector<SymbolSpec> syms = {{"n", 3, 100, 8, "symbols.n"},
                                  {"m", 1, std::nullopt, 1, "symbols.m"}};
  CHECK(syms[0].lowest() == 8);
  CHECK(syms[0].highest() == 96);
  CHECK_FALSE(syms[1].highest());
  CHECK(ok("n").lowest(syms) == 8);
  CHECK(ok("n").highest(syms) == 96);
  CHECK(ok("cdiv(n, 128)").lowest(syms) == 1);
  CHECK(ok("n // 16").lowest(syms) == 0);
  CHECK(ok("n - 8").lowest(syms) == 0);
  CHECK(ok("n + m").lowest(syms) == 9);
  CHECK_FALSE(ok("n + m").highest(syms));
  CHECK(ok("n - m").highest(syms) == 95);
  CHECK_FALSE(ok("n - m").lowest(syms)); // m is unbounded above
  CHECK_FALSE(ok("k").lowest(syms));     // undeclared
}

TEST_CASE("symbol constraints name the value that breaks them", "[symexpr]") {
  SymbolSpec n{"n", 8, 4096, 8, "symbols.n"};
  CHECK(n.check(16).empty());
  CHECK(n.check(100) == "n = 100 is not a multiple of 8");
  CHECK(n.check(4) == "n = 4 is less than its minimum 8");
  CHECK(n.check(8192) == "n = 8192 is greater than its maximum 4096");
}

TEST_CASE("refused expressions say why", "[symexpr]") {
  const std::pair<const char *, const char *> refused[] = {
      {"n*m", "is not linear"},
      {"n*(n+1)", "is not linear"},
      {"cdiv(n, m)", "only divisions by a positive integer are decidable"},
      {"n // 0", "division by 0"},
      {"cdiv(n, -4)", "division by -4"},
      {"n // 8 + 1", "not part of a sum"},
      {"2 * cdiv(n, 8)", "not part of a product"},
      {"(n // 2) // 2", "a division of a division"},
      {"n % 8", "'%' (mod) is not supported"},
      {"n / 8", "use '//'"},
      {"max(n, 8)", "'max' is not supported"},
      {"foo(n, 8)", "unknown function 'foo'"},
      {"cdiv(n 8)", "expected ','"},
      {"", "empty string"},
      {"n +", "got the end of the expression"},
      {"(n", "expected ')'"},
      {"n n", "after a complete expression"},
      {"n$", "after a complete expression"},
      {"99999999999999999999", "overflows int64"},
      {"4611686018427387904*n*2", "overflows int64"},
  };
  for (const auto &[text, why] : refused) {
    INFO(text);
    CHECK_THAT(bad(text).message, Contains(why));
  }
  CHECK_THAT(bad("n // 8", /*allowDivision=*/false).message,
             Contains("an array dimension must be a linear expression"));
  CHECK(bad("n + @").offset == 4);
  CHECK_THAT(bad(std::string(100, '(') + "n" + std::string(100, ')')).message,
             Contains("deeper than 64"));
  CHECK_THAT(bad(std::string(100000, '-') + "n").message,
             Contains("deeper than 64"));
  CHECK_THAT(bad(std::string(100000, '(') + "n").message,
             Contains("deeper than 64"));
  CHECK(ok("--n").str() == "n");
  CHECK(ok("-+-n").str() == "n");
  CHECK(ok("-(n - 2) + 2*n").str() == "n + 2");
}
