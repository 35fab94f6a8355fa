//===- RandomInputs.cpp - pallasc run --random-inputs -------------*- C++ -*-===//

#include "src/Runtime/RandomInputs.h"

#include "src/Runtime/Float16.h"

#include <cstring>

namespace pallasc::runtime {

namespace {

/// SplitMix64: a small, portable generator (the same inputs everywhere).
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /// Uniform in [-1, 1).
  double uniform() { return (next() >> 11) * 0x1.0p-52 - 1.0; }
};

} // namespace

void fillRandomInput(HostArray &a, uint64_t seed, size_t index) {
  SplitMix64 rng{seed * 0x100000001b3ull + index};
  int64_t n = a.numElements();
  uint8_t *p = a.data();
  for (int64_t i = 0; i < n; ++i) {
    switch (a.dtype) {
    case DType::F16:
      reinterpret_cast<uint16_t *>(p)[i] =
          floatToHalf(static_cast<float>(rng.uniform()));
      break;
    case DType::BF16:
      reinterpret_cast<uint16_t *>(p)[i] =
          floatToBF16(static_cast<float>(rng.uniform()));
      break;
    case DType::F32:
      reinterpret_cast<float *>(p)[i] = static_cast<float>(rng.uniform());
      break;
    case DType::F64:
      reinterpret_cast<double *>(p)[i] = rng.uniform();
      break;
    case DType::Bool:
      p[i] = rng.next() & 1;
      break;
    case DType::F8E4M3FN:
    case DType::F8E5M2:
    case DType::F8E4M3FNUZ:
    case DType::F8E5M2FNUZ: {
      launch::Float8Format format;
      launch::float8Format(a.dtype, format);
      p[i] = nearestFloat8(format, static_cast<float>(rng.uniform()));
      break;
    }
    default: {
      uint64_t v = rng.next() % 16;
      size_t w = dtypeSize(a.dtype);
      std::memcpy(p + i * w, &v, w); // little-endian
      break;
    }
    }
  }
}

} // namespace pallasc::runtime
