//===- Float16.h - f16 / bf16 / fp8 bit conversions -----------*- C++ -*-===//
//
// Round-to-nearest-even conversions between float and the 16-bit and 8-bit
// float formats, for random inputs, comparisons and tests' references.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_RUNTIME_FLOAT16_H
#define PALLASC_SRC_RUNTIME_FLOAT16_H

#include "src/Launch/ElementType.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace pallasc::runtime {

inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline float bf16ToFloat(uint16_t h) { return bitsFloat(uint32_t(h) << 16); }

inline uint16_t floatToBF16(float f) {
  uint32_t u = floatBits(f);
  if ((u & 0x7fffffff) > 0x7f800000) // NaN: keep it quiet
    return static_cast<uint16_t>((u >> 16) | 0x40);
  u += 0x7fff + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}

inline float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0x1f)
    return bitsFloat(sign | 0x7f800000 | (mant << 13));
  if (exp == 0) {
    if (mant == 0)
      return bitsFloat(sign);
    // Subnormal: value = mant * 2^-24.
    float v = static_cast<float>(mant) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  return bitsFloat(sign | ((exp + 112) << 23) | (mant << 13));
}

inline uint16_t floatToHalf(float f) {
  uint32_t u = floatBits(f);
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000);
  uint32_t a = u & 0x7fffffff;
  if (a > 0x7f800000)
    return sign | 0x7e00; // NaN
  if (a >= 0x477ff000)    // rounds to >= 65520: inf
    return sign | 0x7c00;
  if (a < 0x38800000) { // below the smallest normal half (2^-14)
    // Subnormal half: round a * 2^24 to an integer (nearest even).
    float v = bitsFloat(a) * 16777216.0f;
    uint32_t i = static_cast<uint32_t>(v);
    float frac = v - static_cast<float>(i);
    if (frac > 0.5f || (frac == 0.5f && (i & 1)))
      ++i;
    return sign | static_cast<uint16_t>(i);
  }
  uint32_t rounded = a + 0xfff + ((a >> 13) & 1);
  return sign | static_cast<uint16_t>((rounded - 0x38000000) >> 13);
}

/// An fp8 code of `format` as a float (exact: every fp8 value is one).
inline float float8ToFloat(const launch::Float8Format &format, uint8_t code) {
  using NaNs = launch::Float8Format::NaNs;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const int m = static_cast<int>(format.mantissaBits);
  const unsigned magnitude = code & 0x7fu, exponent = magnitude >> m,
                 mantissa = magnitude & ((1u << m) - 1);
  const bool negative = code & 0x80u;
  if ((format.nans == NaNs::NegativeZero && code == 0x80) ||
      (format.nans == NaNs::AllOnes && magnitude == 0x7f))
    return nan;
  if (format.nans == NaNs::Ieee && exponent == (0x7fu >> m)) {
    if (mantissa)
      return nan;
    return negative ? -std::numeric_limits<float>::infinity()
                    : std::numeric_limits<float>::infinity();
  }
  // value = significand * 2^(exponent - bias - m), with exponent 1 and no
  // hidden bit for subnormals.
  float v = exponent == 0
                ? std::ldexp(static_cast<float>(mantissa), 1 - format.bias - m)
                : std::ldexp(static_cast<float>((1u << m) | mantissa),
                             static_cast<int>(exponent) - format.bias - m);
  return negative ? -v : v;
}

/// The fp8 code of `format` nearest to `x`, ties to the even code, for
/// finite values within the format's range (random inputs): larger ones
/// give the largest finite code, NaN the format's NaN.
inline uint8_t nearestFloat8(const launch::Float8Format &format, float x) {
  if (std::isnan(x))
    return format.nans == launch::Float8Format::NaNs::NegativeZero ? 0x80
           : format.nans == launch::Float8Format::NaNs::AllOnes   ? 0x7f
                                                                  : 0x7e;
  const float a = std::fabs(x);
  unsigned best = 0;
  float bestError = std::numeric_limits<float>::infinity();
  for (unsigned code = 0; code < 0x80; ++code) {
    float v = float8ToFloat(format, static_cast<uint8_t>(code));
    if (!std::isfinite(v))
      continue;
    float error = std::fabs(v - a);
    if (error < bestError || (error == bestError && (code & 1) == 0)) {
      best = code;
      bestError = error;
    }
  }
  // No negative zero in the fnuz formats: 0x80 is their NaN.
  if (std::signbit(x) && !(best == 0 &&
                 format.nans == launch::Float8Format::NaNs::NegativeZero))
    best |= 0x80;
  return static_cast<uint8_t>(best);
}

} // namespace pallasc::runtime

#endif // PALLASC_SRC_RUNTIME_FLOAT16_H
