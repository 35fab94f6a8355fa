//===- Float16.h - f16 / bf16 bit conversions -----------------*- C++ -*-===//
//
// Round-to-nearest-even conversions between float and the 16-bit float
// formats, for random inputs and for tests' references.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_RUNTIME_FLOAT16_H
#define PALLASC_SRC_RUNTIME_FLOAT16_H

#include <cstdint>
#include <cstring>

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

} // namespace pallasc::runtime

#endif // PALLASC_SRC_RUNTIME_FLOAT16_H
