//===- Compare.cpp - Element-wise comparison of host arrays -----*- C++ -*-===//

#include "src/Runtime/Compare.h"

#include "src/Runtime/Float16.h"
#include "src/Support/FloatRepr.h"

#include <charconv>
#include <cmath>
#include <cstring>

namespace pallasc::runtime {

namespace {

/// A float element, widened to double.
double floatAt(const HostArray &a, int64_t i) {
  const uint8_t *p = a.data();
  switch (a.dtype) {
  case DType::F16:
    return halfToFloat(reinterpret_cast<const uint16_t *>(p)[i]);
  case DType::BF16:
    return bf16ToFloat(reinterpret_cast<const uint16_t *>(p)[i]);
  case DType::F32:
    return reinterpret_cast<const float *>(p)[i];
  case DType::F64:
    return reinterpret_cast<const double *>(p)[i];
  default: {
    launch::Float8Format format;
    launch::float8Format(a.dtype, format);
    return float8ToFloat(format, p[i]);
  }
  }
}

/// An integer or boolean element, read as `as` (same size as the array's
/// type): sign-extended for signed types, zero-extended otherwise.
struct IntValue {
  bool isUnsigned;
  uint64_t bits; // the value, as uint64 or as int64's two's complement

  double toDouble() const {
    return isUnsigned ? static_cast<double>(bits)
                      : static_cast<double>(static_cast<int64_t>(bits));
  }
};

IntValue intAt(const HostArray &a, int64_t i, DType as) {
  size_t size = dtypeSize(as);
  uint64_t bits = 0;
  std::memcpy(&bits, a.data() + i * size, size); // little-endian host
  bool isUnsigned = !isSigned(as);
  if (!isUnsigned && size < 8 && (bits >> (8 * size - 1)) & 1)
    bits |= ~uint64_t(0) << (8 * size);
  return {isUnsigned, bits};
}

/// |a - b| of two integers of one type, exactly where it fits a double.
double intDistance(IntValue a, IntValue b) {
  if (a.isUnsigned)
    return a.bits > b.bits ? static_cast<double>(a.bits - b.bits)
                           : static_cast<double>(b.bits - a.bits);
  int64_t x = static_cast<int64_t>(a.bits), y = static_cast<int64_t>(b.bits);
  // The difference as an unsigned magnitude cannot overflow.
  uint64_t d = x > y ? uint64_t(x) - uint64_t(y) : uint64_t(y) - uint64_t(x);
  return static_cast<double>(d);
}

} // namespace

ArrayComparison compareArrays(const HostArray &got, const HostArray &want,
                              double rtol, double atol) {
  ArrayComparison result;
  int64_t n = want.numElements();
  result.elements = n;
  bool floats = isFloat(want.dtype);
  for (int64_t i = 0; i < n; ++i) {
    bool ok;
    if (!floats) {
      IntValue g = intAt(got, i, got.dtype), w = intAt(want, i, got.dtype);
      ok = g.bits == w.bits;
      if (got.dtype != DType::Bool) {
        double d = intDistance(g, w);
        result.maxAbsError = std::max(result.maxAbsError, d);
        if (w.bits != 0)
          result.maxRelError =
              std::max(result.maxRelError, d / std::fabs(w.toDouble()));
      }
    } else {
      double g = floatAt(got, i), w = floatAt(want, i);
      if (std::isnan(w) || std::isnan(g)) {
        ok = std::isnan(w) && std::isnan(g);
        result.nanMismatches += !ok;
      } else if (std::isinf(w) || std::isinf(g)) {
        ok = g == w;
      } else {
        double d = std::fabs(g - w);
        result.maxAbsError = std::max(result.maxAbsError, d);
        if (w != 0)
          result.maxRelError = std::max(result.maxRelError, d / std::fabs(w));
        ok = d <= atol + rtol * std::fabs(w);
      }
    }
    if (!ok) {
      if (result.firstDiffering < 0)
        result.firstDiffering = i;
      ++result.differing;
    }
  }
  return result;
}

std::string formatElement(const HostArray &array, int64_t flat) {
  switch (array.dtype) {
  case DType::F16:
  case DType::BF16:
  case DType::F32:
  case DType::F8E4M3FN:
  case DType::F8E5M2:
  case DType::F8E4M3FNUZ:
  case DType::F8E5M2FNUZ:
    return pallasc::pythonFloatRepr(static_cast<float>(floatAt(array, flat)));
  case DType::F64:
    return pallasc::pythonFloatRepr(floatAt(array, flat));
  case DType::Bool:
    return array.data()[flat] ? "True" : "False";
  default: {
    IntValue v = intAt(array, flat, array.dtype);
    return v.isUnsigned ? std::to_string(v.bits)
                        : std::to_string(static_cast<int64_t>(v.bits));
  }
  }
}

std::string formatIndex(const std::vector<int64_t> &shape, int64_t flat) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    int64_t extent = shape[d] > 0 ? shape[d] : 1;
    index[d] = flat % extent;
    flat /= extent;
  }
  std::string s = "[";
  for (size_t d = 0; d < index.size(); ++d)
    s += (d ? ", " : "") + std::to_string(index[d]);
  return s + "]";
}

} // namespace pallasc::runtime
