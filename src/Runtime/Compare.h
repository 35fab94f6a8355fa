//===- Compare.h - Element-wise comparison of host arrays -------*- C++ -*-===//
//
// How `pallasc run` compares an output with a reference: the CPU result
// (`--target ... --check`) or a golden .npy file (`--expect`). Floats match
// within |got - want| <= atol + rtol * |want| (numpy.isclose, with the
// reference as `want`); NaN matches NaN only (the NaN positions must be the
// same), an infinity the same infinity; integers and booleans match
// exactly.
//
// Free of MLIR and of exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_RUNTIME_COMPARE_H
#define PALLASC_SRC_RUNTIME_COMPARE_H

#include "src/Runtime/Npy.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pallasc::runtime {

/// The outcome of compareArrays.
struct ArrayComparison {
  int64_t elements = 0;
  /// Elements out of tolerance, the NaN and infinity mismatches included.
  int64_t differing = 0;
  /// Of those, the elements that are NaN on one side only.
  int64_t nanMismatches = 0;
  /// Flat (row-major) index of the first differing element; -1: none.
  int64_t firstDiffering = -1;
  /// Largest |got - want| and |got - want| / |want| over the pairs of
  /// finite values (a zero `want` counts for the absolute error only).
  double maxAbsError = 0, maxRelError = 0;

  bool matches() const { return differing == 0; }
};

/// Compares `got` with the reference `want`, element by element. Both have
/// the same number of elements and the same element size; integers are read
/// with `got`'s signedness (the bytes decide whether they match).
ArrayComparison compareArrays(const HostArray &got, const HostArray &want,
                              double rtol, double atol);

/// Element `flat` of `array` as text: floats in their shortest round-trip
/// form ("0.1", "nan", "-inf"), integers in decimal, booleans True/False.
std::string formatElement(const HostArray &array, int64_t flat);

/// The row-major multi-index of flat index `flat` in `shape`: "[2, 5]"
/// ("[]" for a scalar).
std::string formatIndex(const std::vector<int64_t> &shape, int64_t flat);

} // namespace pallasc::runtime

#endif // PALLASC_SRC_RUNTIME_COMPARE_H
