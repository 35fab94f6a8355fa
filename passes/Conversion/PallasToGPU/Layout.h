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

#ifndef PALLASC_PASSES_CONVERSION_PALLASTOGPU_LAYOUT_H
#define PALLASC_PASSES_CONVERSION_PALLASTOGPU_LAYOUT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

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

/// Operand and accumulator layouts of `mma.sync.m16n8k16` tiles, with
/// `warpsM` x `warpsN` warps each owning a (M/warpsM) x (N/warpsN) tile of
/// the [M, N] result. A is [M, K], B is [K, N], C is [M, N]. The register
/// order matches the instruction's fragments (a0..a7, b0..b3, c0..c3 for the
/// first tile, then the tile repetitions).
Layout mmaCLayout(int64_t m, int64_t n, int64_t warpsM, int64_t warpsN);
Layout mmaALayout(int64_t m, int64_t k, int64_t warpsM, int64_t warpsN);
Layout mmaBLayout(int64_t k, int64_t n, int64_t warpsM, int64_t warpsN);

/// Operand layouts of `mma.sync.m16n8k8.tf32` tiles (f32 values, rounded to
/// tf32 on their way into the instruction), warps as for mmaALayout. With
/// g = lane / 4 and t = lane % 4, a lane holds a0..a3 = A[g][t], A[g+8][t],
/// A[g][t+4], A[g+8][t+4] and b0, b1 = B[t][g], B[t+4][g] of a tile; the tile
/// repetitions follow (k first). The accumulator is mmaCLayout's.
Layout mmaTf32ALayout(int64_t m, int64_t k, int64_t warpsM, int64_t warpsN);
Layout mmaTf32BLayout(int64_t k, int64_t n, int64_t warpsM, int64_t warpsN);

/// Accumulator and register-A layouts of Hopper's `wgmma.mma_async.m64nNk16`
/// (sm_90a): `gm` x `gn` warpgroups (4 consecutive warps each; warpgroups
/// along M first), each owning an (M/gm) x (N/gn) tile of the [M, N] result
/// as 64-row slabs. Warp w of a warpgroup holds rows 16 (w % 4) .. +15 of
/// every slab in the mma.sync m16n8 C (A: m16k16 A) fragment order, repeated
/// along N (A: along K), then the slabs. The registers of one instruction
/// (n columns n0..n0+nInstr of one slab) are consecutive: d0..d(nInstr/2-1).
Layout wgmmaCLayout(int64_t m, int64_t n, int64_t gm, int64_t gn);
Layout wgmmaALayout(int64_t m, int64_t k, int64_t gm, int64_t gn);

/// Operand and accumulator layouts of AMD's `v_mfma_f32_16x16x16{f16,bf16}`
/// and (`perLane` = 8) CDNA4's `v_mfma_f32_16x16x32_{f16,bf16}` (wave64)
/// tiles, with `warpsM` x `warpsN` wavefronts as for mma.sync; `perLane` is
/// the number of A (B) elements a lane holds, k / 4. Lane l holds
/// A[l % 16][p (l / 16) + j] and B[p (l / 16) + j][l % 16] in its register
/// j = 0..p-1 of a tile (p = perLane), and C[4 (l / 16) + j][l % 16] in its
/// register j = 0..3; the tile repetitions follow (k first for A and B).
Layout mfmaCLayout(int64_t m, int64_t n, int64_t warpsM, int64_t warpsN);
Layout mfmaALayout(int64_t m, int64_t k, int64_t warpsM, int64_t warpsN,
                   int64_t perLane = 4);
Layout mfmaBLayout(int64_t k, int64_t n, int64_t warpsM, int64_t warpsN,
                   int64_t perLane = 4);

/// Operand and accumulator layouts of AMD's `v_wmma_f32_16x16x16_{f16,bf16}`
/// (wave32) tiles, wavefronts as for mma.sync; `perLane` is the number of A
/// (B) elements a lane holds. RDNA3 (16): lane l holds A[l % 16][j] and
/// B[j][l % 16], j = 0..15 (lanes l and l + 16 the same), and C[2 j +
/// l / 16][l % 16] in its register j = 0..7. RDNA4 (8): A[l % 16][8 (l / 16)
/// + j], B[8 (l / 16) + j][l % 16] and C[8 (l / 16) + j][l % 16], j = 0..7.
/// The tile repetitions follow (k first for A and B).
Layout wmmaCLayout(int64_t m, int64_t n, int64_t warpsM, int64_t warpsN,
                   int64_t perLane);
Layout wmmaALayout(int64_t m, int64_t k, int64_t warpsM, int64_t warpsN,
                   int64_t perLane);
Layout wmmaBLayout(int64_t k, int64_t n, int64_t warpsM, int64_t warpsN,
                   int64_t perLane);

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

#endif // PALLASC_PASSES_CONVERSION_PALLASTOGPU_LAYOUT_H
