//===- Layout.h - how a block tensor is spread over a CTA ------*- C++ -*-===//
//
// A distributed layout of a power-of-two-shaped block over the threads of a
// thread block (CTA), as a linear map over GF(2) in the style of Triton's
// linear layouts: the element a thread holds in register `r` is
//
//   lin(r, lane, warp) = XOR of regs[i]  for the set bits i of r
//                      ^ XOR of lanes[i] for the set bits i of lane
//                      ^ XOR of warps[i] for the set bits i of warp
//
// where `lin` is the element's row-major linear index (all dimensions are
// powers of two, so each dimension owns a bit field of `lin`). A zero lane or
// warp basis means replication (those threads hold the same elements);
// register bases are never zero and stay linearly independent.
//
// Every operation on layouts the lowering needs is a bit manipulation:
// slicing a reduced dimension, broadcasting, transposing (re-packing the bit
// fields), reshaping (nothing: the row-major linear index is unchanged), and
// checking whether one thread's registers already hold what another layout
// asks for.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_CONVERSION_PALLASTOGPU_ANALYSIS_LAYOUT_H
#define PALLASC_PASSES_CONVERSION_PALLASTOGPU_ANALYSIS_LAYOUT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include "chips/MatrixFragments.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::pallas::gpu {

/// True when every dimension of `shape` is a power of two (a rank-0 shape
/// qualifies).
bool isPowerOfTwoShape(llvm::ArrayRef<int64_t> shape);

/// log2 of a power of two.
int64_t log2Exact(int64_t v);

struct Layout {
  /// What the layout was built as; used to re-instantiate a related layout
  /// at another shape (e.g. the MMA accumulator layout of a 128x64 block
  /// whose rows match those of a 128x128 one).
  enum class Family {
    Blocked,
    MmaC,
    MmaA,
    MmaB,
    MfmaC,
    MfmaA,
    MfmaB,
    WmmaC,
    WmmaA,
    WmmaB,
    WgmmaC,
    WgmmaA,
    Derived
  };

  llvm::SmallVector<int64_t, 4> shape;
  llvm::SmallVector<uint64_t> regs, lanes, warps;
  Family family = Family::Derived;
  /// MMA families: warps along M and along N (wgmma: 4 x the warpgroups
  /// along M, and the warpgroups along N).
  int64_t warpsM = 1, warpsN = 1;

  int64_t rank() const { return shape.size(); }
  int64_t numRegs() const { return int64_t(1) << regs.size(); }
  int64_t numElements() const;
  /// Bit offset of dimension `d`'s field in the linear index.
  int64_t shift(int64_t d) const;
  /// Coordinate of `lin` along `d`.
  int64_t coord(uint64_t lin, int64_t d) const;
  /// The linear index of register `r`'s own part.
  uint64_t regLinear(int64_t r) const;
  /// Structural equality of the distribution (family is not compared).
  bool sameDistribution(const Layout &other) const;
  std::string str() const;
};

/// The default coalesced layout of a block: `vec` contiguous elements per
/// thread along the innermost dimension (16 bytes), the 2^laneBits lanes
/// along the next bits, the warps along the outermost bits, registers for
/// the rest.
Layout blockedLayout(llvm::ArrayRef<int64_t> shape, int64_t elementBits,
                     int64_t numWarps, int64_t laneBits);

/// Selects an entry of the fragment table (chips/MatrixFragments.h): the
/// instructions of `kind` whose K is `k` and whose lanes hold
/// `operandsPerLane` A/B elements (0 where the family has one value).
struct FragmentSelect {
  pallasc::MatrixInstrKind kind;
  int64_t k = 0;
  int64_t operandsPerLane = 0;
};

/// The layout of `operand` of a matrix instruction over a [rows, cols]
/// block (A is [M, K], B is [K, N], C is [M, N]), with `warpsM` x `warpsN`
/// warps (wgmma: warpgroups) each owning an (M / warpsM) x (N / warpsN)
/// tile of the result: the fragment table's entry made into a linear layout
/// (the tile's registers in fragment order, then the tile repetitions, the
/// lanes, the warps of a warpgroup and the warp grid). The entry must exist.
Layout fragmentLayout(FragmentSelect instr, pallasc::MatrixOperand operand,
                      int64_t rows, int64_t cols, int64_t warpsM,
                      int64_t warpsN);
Layout fragmentLayout(const pallasc::MatrixFragment &fragment, int64_t rows,
                      int64_t cols, int64_t warpsM, int64_t warpsN);

/// The layout of a value indexed through `dims`: operand dimension `j` is
/// dimension `dims[j]` of `layout` (or, for -1, a size-1 dimension). Used
/// for slices (reductions), broadcast operands and transposes. Register
/// bases that become zero or dependent are dropped.
Layout projectLayout(const Layout &layout, llvm::ArrayRef<int64_t> dims,
                     llvm::ArrayRef<int64_t> newShape);

/// `layout` with dimensions `dims` removed (a reduction's result).
Layout sliceLayout(const Layout &layout, llvm::ArrayRef<int64_t> dims);

/// The same distribution viewed with another row-major shape of the same
/// number of elements.
Layout reshapeLayout(const Layout &layout, llvm::ArrayRef<int64_t> newShape);

/// Whether each thread's registers under `have` already hold every element
/// `want` gives that thread (same thread bases, `want`'s register span inside
/// `have`'s). Then `want`'s register `r` is `have`'s register
/// `registerMap(have, want)[r]`.
bool providesLocally(const Layout &have, const Layout &want);
llvm::SmallVector<int64_t> registerMap(const Layout &have,
                                       const Layout &want);

/// The register of `layout` whose own part is `lin`, if any.
std::optional<int64_t> registerOf(const Layout &layout, uint64_t lin);

/// The linear index, in the projected shape, of element `lin` of `layout`
/// seen through `dims` (as projectLayout).
uint64_t projectLinear(const Layout &layout, uint64_t lin,
                       llvm::ArrayRef<int64_t> dims,
                       llvm::ArrayRef<int64_t> newShape);

} // namespace mlir::pallas::gpu

#endif // PALLASC_PASSES_CONVERSION_PALLASTOGPU_ANALYSIS_LAYOUT_H
