//===- FloatReprTest.cpp - Python's float repr --------------------*- C++ -*-===//
//
// The expected strings are what CPython 3.11's repr() prints for the same
// double (and for a float, the double of its shortest decimal).
//
//===----------------------------------------------------------------------===//

#include "src/Support/FloatRepr.h"

#include <catch2/catch.hpp>

#include <limits>

using pallasc::pythonFloatRepr;

TEST_CASE("pythonFloatRepr writes doubles as Python's repr does", "[support]") {
  struct Case {
    double value;
    const char *repr;
  };
  const Case cases[] = {
      {100.0, "100.0"},
      {1.0, "1.0"},
      {0.1, "0.1"},
      {2.5, "2.5"},
      {-0.0, "-0.0"},
      {1e16, "1e+16"},
      {1e15, "1000000000000000.0"},
      {123456789012345678.0, "1.2345678901234568e+17"},
      {1e-5, "1e-05"},
      {0.0001, "0.0001"},
      {-0.00012, "-0.00012"},
      {1.5e20, "1.5e+20"},
      {1e22, "1e+22"},
      {5e-324, "5e-324"},
      {0.30000000000000004, "0.30000000000000004"},
      {std::numeric_limits<double>::infinity(), "inf"},
      {-std::numeric_limits<double>::infinity(), "-inf"},
      {std::numeric_limits<double>::quiet_NaN(), "nan"},
  };
  for (const Case &c : cases) {
    INFO("value " << c.value);
    CHECK(pythonFloatRepr(c.value) == c.repr);
  }
}

TEST_CASE("pythonFloatRepr keeps a float's shortest digits", "[support]") {
  struct Case {
    float value;
    const char *repr;
  };
  const Case cases[] = {
      {100.0f, "100.0"},          {0.1f, "0.1"},
      {1e16f, "1e+16"},           {1e-5f, "1e-05"},
      {16777216.0f, "16777216.0"}, {3.4028235e38f, "3.4028235e+38"},
      {-1.5f, "-1.5"},
  };
  for (const Case &c : cases) {
    INFO("value " << c.value);
    CHECK(pythonFloatRepr(c.value) == c.repr);
  }
}
