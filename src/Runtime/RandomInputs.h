//===- RandomInputs.h - pallasc run --random-inputs ---------------*- C++ -*-===//
//
// The inputs `pallasc run --random-inputs SEED` generates, the same on every
// machine and for every target (the CPU runner, the GPU runner and the
// emulator), so a seed names one set of inputs: SplitMix64 streams, one per
// input, floats uniform in [-1, 1), integers in [0, 16), bools fair.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_RUNTIME_RANDOMINPUTS_H
#define PALLASC_SRC_RUNTIME_RANDOMINPUTS_H

#include "src/Runtime/Npy.h"

#include <cstddef>
#include <cstdint>

namespace pallasc::runtime {

/// Fills the allocated array `a` with the values of input `index` for
/// `--random-inputs seed`.
void fillRandomInput(HostArray &a, uint64_t seed, size_t index);

} // namespace pallasc::runtime

#endif // PALLASC_SRC_RUNTIME_RANDOMINPUTS_H
