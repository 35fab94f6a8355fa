//===- CompareTest.cpp - element-wise comparison of host arrays ------------===//

#include "src/Runtime/Compare.h"

#include "src/Runtime/Float16.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

using namespace pallasc::runtime;

namespace {

template <typename T>
HostArray arrayOf(DType dtype, std::vector<int64_t> shape,
                  std::vector<T> values) {
  HostArray a(dtype, std::move(shape));
  REQUIRE(a.allocate());
  REQUIRE(a.byteSize() == values.size() * sizeof(T));
  std::memcpy(a.data(), values.data(), a.byteSize());
  return a;
}

} // namespace

TEST_CASE("compareArrays: floats within atol + rtol * |want|", "[compare]") {
  HostArray want = arrayOf<float>(DType::F32, {2, 2}, {1, 2, -4, 0});
  HostArray same = arrayOf<float>(DType::F32, {2, 2}, {1, 2, -4, 0});
  ArrayComparison c = compareArrays(same, want, 1e-5, 1e-8);
  CHECK(c.matches());
  CHECK(c.elements == 4);
  CHECK(c.maxAbsError == 0);
  CHECK(c.firstDiffering == -1);

  // -4.0 against -4.004: abs 0.004, rel 0.001.
  HostArray off = arrayOf<float>(DType::F32, {2, 2}, {1, 2, -4.004f, 0});
  c = compareArrays(off, want, 1e-5, 1e-8);
  CHECK_FALSE(c.matches());
  CHECK(c.differing == 1);
  CHECK(c.firstDiffering == 2);
  CHECK(c.maxAbsError == Approx(0.004).epsilon(1e-3));
  CHECK(c.maxRelError == Approx(0.001).epsilon(1e-3));
  CHECK(formatIndex(want.shape, c.firstDiffering) == "[1, 0]");
  CHECK(compareArrays(off, want, 2e-3, 0).matches());
  CHECK(compareArrays(off, want, 0, 5e-3).matches());
  // A zero reference counts for the absolute error only.
  HostArray nearZero = arrayOf<float>(DType::F32, {2, 2}, {1, 2, -4, 1e-9f});
  c = compareArrays(nearZero, want, 1e-5, 1e-8);
  CHECK(c.matches());
  CHECK(c.maxRelError == 0);
}

TEST_CASE("compareArrays: NaN positions and infinities", "[compare]") {
  float nan = std::numeric_limits<float>::quiet_NaN();
  float inf = std::numeric_limits<float>::infinity();
  HostArray want = arrayOf<float>(DType::F32, {4}, {nan, inf, 1, -inf});
  CHECK(compareArrays(want, want, 0, 0).matches());
  HostArray moved = arrayOf<float>(DType::F32, {4}, {0, inf, nan, -inf});
  ArrayComparison c = compareArrays(moved, want, 1e9, 1e9);
  CHECK(c.differing == 2);
  CHECK(c.nanMismatches == 2);
  CHECK(c.firstDiffering == 0);
  HostArray flipped = arrayOf<float>(DType::F32, {4}, {nan, -inf, 1, -inf});
  c = compareArrays(flipped, want, 1e9, 1e9);
  CHECK(c.differing == 1);
  CHECK(c.nanMismatches == 0);
  CHECK(formatElement(flipped, 1) == "-inf");
  CHECK(formatElement(flipped, 0) == "nan");
}

TEST_CASE("compareArrays: integers match exactly, either signedness",
          "[compare]") {
  HostArray want = arrayOf<int8_t>(DType::I8, {3}, {-1, 5, -128});
  HostArray got = arrayOf<int8_t>(DType::I8, {3}, {-1, 6, -128});
  ArrayComparison c = compareArrays(got, want, 1e9, 1e9);
  CHECK(c.differing == 1);
  CHECK(c.firstDiffering == 1);
  CHECK(c.maxAbsError == 1);
  CHECK(formatElement(got, 0) == "-1");
  CHECK(formatElement(got, 2) == "-128");
  // The same bytes as u8 match; values are read with got's signedness.
  HostArray asUnsigned = arrayOf<uint8_t>(DType::U8, {3}, {255, 5, 128});
  CHECK(compareArrays(want, asUnsigned, 0, 0).matches());
  CHECK(formatElement(asUnsigned, 0) == "255");
  // The distance of the extremes of i64 does not overflow.
  HostArray lo = arrayOf<int64_t>(DType::I64, {1},
                                  {std::numeric_limits<int64_t>::min()});
  HostArray hi = arrayOf<int64_t>(DType::I64, {1},
                                  {std::numeric_limits<int64_t>::max()});
  c = compareArrays(lo, hi, 0, 0);
  CHECK(c.differing == 1);
  CHECK(c.maxAbsError == Approx(18446744073709551615.0));
}

TEST_CASE("compareArrays: 16-bit floats and bools", "[compare]") {
  HostArray want = arrayOf<uint16_t>(DType::BF16, {2},
                                     {floatToBF16(1.5f), floatToBF16(-2)});
  HostArray got = arrayOf<uint16_t>(DType::BF16, {2},
                                    {floatToBF16(1.5f), floatToBF16(-2.5f)});
  ArrayComparison c = compareArrays(got, want, 0, 0.1);
  CHECK(c.differing == 1);
  CHECK(c.maxAbsError == 0.5);
  CHECK(formatElement(got, 1) == "-2.5");
  CHECK(formatElement(got, 0) == "1.5");
  HostArray half = arrayOf<uint16_t>(DType::F16, {1}, {floatToHalf(3)});
  CHECK(formatElement(half, 0) == "3.0");

  HostArray b1 = arrayOf<uint8_t>(DType::Bool, {3}, {1, 0, 1});
  HostArray b2 = arrayOf<uint8_t>(DType::Bool, {3}, {1, 1, 1});
  c = compareArrays(b1, b2, 1, 1);
  CHECK(c.differing == 1);
  CHECK(c.firstDiffering == 1);
  CHECK(formatElement(b1, 1) == "False");
  CHECK(formatElement(b2, 1) == "True");
}

TEST_CASE("formatIndex: row-major multi-indices", "[compare]") {
  CHECK(formatIndex({32, 128}, 389) == "[3, 5]");
  CHECK(formatIndex({2, 3, 4}, 23) == "[1, 2, 3]");
  CHECK(formatIndex({}, 0) == "[]");
  CHECK(formatIndex({7}, 6) == "[6]");
}
