//===- Intrinsics.h - What the emulated kernel calls ------------*- C++ -*-===//
//
// The rewritten kernel (HostKernel.h) calls one `pallasc_emu_*` function per
// GPU instruction the host cannot run: thread and block ids, barriers, warp
// shuffles, async copies and div.full.f32 (ThreadIntrinsics.cpp); mma.sync, tf32
// conversion, MFMA, wgmma and ldmatrix with their fragment layouts
// (MatrixIntrinsics.cpp); TMA copies and mbarriers (TmaIntrinsics.cpp).
// Each follows the PTX ISA (or the CDNA ISA) semantics on the block the
// scheduler runs (Scheduler.h).
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_RUNTIME_GPUEMULATOR_INTRINSICS_H
#define PALLASC_SRC_RUNTIME_GPUEMULATOR_INTRINSICS_H

#include "src/Runtime/Float16.h"

#include <cstdint>
#include <initializer_list>
#include <vector>

namespace pallasc::runtime::emulator {

/// One function the JIT resolves for the emulated kernel.
struct EmulatorSymbol {
  const char *name;
  void *address;
};

/// The EmulatorSymbol of the function `fn`, named as it is spelled.
// clang-format off
#define PALLASC_EMU_SYMBOL(fn) EmulatorSymbol{#fn, reinterpret_cast<void *>(&fn)}
// clang-format on

/// Appends `added` to `symbols`.
inline void appendSymbols(std::vector<EmulatorSymbol> &symbols,
                          std::initializer_list<EmulatorSymbol> added) {
  symbols.insert(symbols.end(), added);
}

/// Every `pallasc_emu_*` function, by name.
std::vector<EmulatorSymbol> emulatorSymbols();

/// The parts of emulatorSymbols, one per intrinsics file.
void addThreadIntrinsics(std::vector<EmulatorSymbol> &symbols);
void addMatrixIntrinsics(std::vector<EmulatorSymbol> &symbols);
void addTmaIntrinsics(std::vector<EmulatorSymbol> &symbols);

/// The launch record's description of a CUtensorMap (2 to 5 dimensions,
/// 16-bit elements, 128-byte swizzle, zero fill out of bounds), as the
/// emulated kernel's tensor-map parameters point to it.
struct EmuTensorMap {
  char *base = nullptr; ///< written by TMA stores
  int rank = 2;
  int64_t dims[5] = {}; ///< the array, outermost first
  int64_t box[5] = {};  ///< one copy
  int64_t elemBytes = 2;
  int64_t boxCols() const { return box[rank - 1]; }
  /// Rows of the box: the product of its outer dimensions.
  int64_t boxRows() const {
    int64_t n = 1;
    for (int d = 0; d + 1 < rank; ++d)
      n *= box[d];
    return n;
  }
  /// The byte offset in the array of row `r` (of boxRows()), column `c`
  /// of the box at `coord` (outermost first), or -1 out of bounds.
  int64_t offsetOf(const int64_t *coord, int64_t r, int64_t c) const {
    int64_t off = 0, stride = 1;
    for (int d = rank - 1; d >= 0; --d) {
      int64_t i = d == rank - 1 ? c : r % box[d];
      if (d != rank - 1)
        r /= box[d];
      int64_t g = coord[d] + i;
      if (g < 0 || g >= dims[d])
        return -1;
      off += g * stride;
      stride *= dims[d];
    }
    return off * elemBytes;
  }
};

/// CU_TENSOR_MAP_SWIZZLE_128B (and wgmma's 128B swizzle mode): address bits
/// 4-6 (the 16-byte chunk in a 128-byte row) xor bits 7-9 (the row mod 8).
inline uint64_t swizzle128(uint64_t offset) {
  return offset ^ (((offset >> 7) & 7) << 4);
}

/// A 16-bit float operand's value.
inline float halfToFloat(uint16_t h, bool bf16) {
  return bf16 ? bf16ToFloat(h) : runtime::halfToFloat(h);
}

} // namespace pallasc::runtime::emulator

#endif // PALLASC_SRC_RUNTIME_GPUEMULATOR_INTRINSICS_H
