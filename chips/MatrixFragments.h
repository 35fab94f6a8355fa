//===- MatrixFragments.h - matrix-instruction fragment layouts --*- C++ -*-===//
//
// Which element of a matrix instruction's operand each lane holds in each
// register, as data: one entry per instruction family x operand x shape,
// beside the instruction table (GpuTarget.h). The GPU lowering reads an
// entry with one generic builder (passes/Conversion/PallasToGPU/Layout.h,
// fragmentLayout), which turns it into a linear layout over a whole block:
//
//   - `regs`: the registers of one instruction tile, in the instruction's
//     fragment order (a0, a1, ... of the ISA);
//   - `repeats`: the tile repetitions, in order: along `axis`, from `from`
//     doubling up to the block's extent or one warp's tile of it;
//   - `lanes`: lane bit i selects `lanes[i]` (a zero step replicates);
//   - `groupWarps` (wgmma): the warps of one warpgroup;
//   - then the warps of the warp grid: along the rows for A and C (M), along
//     the columns for B and C (N), replicated along the dimension an operand
//     does not have.
//
// A basis is `step` along `axis` of the operand's [rows, cols] tile (A is
// [M, K], B is [K, N], C is [M, N]); every dimension is a power of two, so
// a basis is one bit of the row-major element index. Plain C++17, like the
// chip table.
//
// Adding a matrix-instruction shape whose fragments are new is adding its
// entries here; the unit tests (test/PallasToGPU/LayoutTest.cpp) check every
// entry against the ISA's formulas, written out independently.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_CHIPS_MATRIXFRAGMENTS_H
#define PALLASC_CHIPS_MATRIXFRAGMENTS_H

#include "chips/GpuTarget.h"

#include <cstdint>

namespace pallasc {

/// The operand of a matrix instruction a fragment layout distributes:
/// D = A x B + C, with C and D sharing a layout.
enum class MatrixOperand { A, B, C };

/// A dimension of an operand's 2-D tile.
enum class FragmentAxis { Row, Col };

/// A step along one axis: one bit of the tile's row-major element index
/// (step 0: no bit, the lanes it selects hold the same elements).
struct FragmentBasis {
  FragmentAxis axis;
  int64_t step;
};

/// What a tile repetition doubles up to: the block's extent along the axis,
/// or one warp's (warpgroup's) share of it.
enum class RepeatUpTo { Extent, WarpTile };

/// Registers `from`, 2 `from`, ... below the bound, along `axis`.
struct FragmentRepeat {
  FragmentAxis axis;
  int64_t from;
  RepeatUpTo upTo;
};

/// One fragment layout: an instruction family's operand, for the shapes
/// whose K is `k` and whose lanes hold `operandsPerLane` A/B elements
/// (MatrixInstr's fields; 0 matches any).
struct MatrixFragment {
  MatrixInstrKind kind;
  MatrixOperand operand;
  int64_t k;
  int64_t operandsPerLane;
  /// The ISA's per-lane formula, for people (docs/cuda.md, docs/rocm.md).
  const char *formula;
  TableSpan<FragmentBasis> regs;
  TableSpan<FragmentRepeat> repeats;
  TableSpan<FragmentBasis> lanes;
  TableSpan<FragmentBasis> groupWarps;
};

/// Every fragment layout, in table order.
TableSpan<MatrixFragment> allMatrixFragments();

/// The fragment layout of `operand` of the instructions of `kind` with K
/// `k` and `operandsPerLane` (MatrixInstr's 0 where the family has one
/// count), or null.
const MatrixFragment *findMatrixFragment(MatrixInstrKind kind,
                                         MatrixOperand operand, int64_t k,
                                         int64_t operandsPerLane = 0);

/// The same, for a table instruction.
const MatrixFragment *findMatrixFragment(const MatrixInstr &instr,
                                         MatrixOperand operand);

} // namespace pallasc

#endif // PALLASC_CHIPS_MATRIXFRAGMENTS_H
