//===- MatrixFragments.cpp - matrix-instruction fragment layouts -*- C++ -*-===//
//
// The table of fragment layouts (MatrixFragments.h). Sources: PTX ISA,
// "Matrix Fragments for mma.m16n8k16 / mma.m16n8k8" and "Register
// Fragments and Shared Memory Matrix Layouts" (wgmma); AMD CDNA3/CDNA4
// ISA, "Dependency and Layout of MFMA Operands"; RDNA3/RDNA4 ISA, "Wave
// Matrix Multiply Accumulate" operand layouts.
//
//===----------------------------------------------------------------------===//

#include "chips/MatrixFragments.h"

namespace pallasc {

namespace {

using K = MatrixInstrKind;
using Op = MatrixOperand;
constexpr FragmentAxis R = FragmentAxis::Row;
constexpr FragmentAxis C = FragmentAxis::Col;
constexpr RepeatUpTo Extent = RepeatUpTo::Extent;
constexpr RepeatUpTo WarpTile = RepeatUpTo::WarpTile;

// mma.sync m16n8k16 (f16/bf16), g = lane / 4, t = lane % 4. The accumulator
// serves m16n8k8 (tf32) too.
constexpr FragmentBasis kMmaCRegs[] = {{C, 1}, {R, 8}};
constexpr FragmentRepeat kMmaCRepeats[] = {{C, 8, WarpTile},
                                           {R, 16, WarpTile}};
constexpr FragmentBasis kMmaLanesColsFirst[] = {
    {C, 2}, {C, 4}, {R, 1}, {R, 2}, {R, 4}};
constexpr FragmentBasis kMmaARegs[] = {{C, 1}, {R, 8}, {C, 8}};
constexpr FragmentRepeat kMmaARepeats[] = {{C, 16, Extent},
                                           {R, 16, WarpTile}};
constexpr FragmentBasis kMmaBRegs[] = {{R, 1}, {R, 8}};
constexpr FragmentRepeat kMmaBRepeats[] = {{R, 16, Extent},
                                           {C, 8, WarpTile}};
constexpr FragmentBasis kMmaBLanes[] = {{R, 2}, {R, 4}, {C, 1}, {C, 2},
                                        {C, 4}};

// mma.sync m16n8k8 (tf32).
constexpr FragmentBasis kTf32ARegs[] = {{R, 8}, {C, 4}};
constexpr FragmentRepeat kTf32ARepeats[] = {{C, 8, Extent},
                                            {R, 16, WarpTile}};
constexpr FragmentBasis kTf32ALanes[] = {{C, 1}, {C, 2}, {R, 1}, {R, 2},
                                         {R, 4}};
constexpr FragmentBasis kTf32BRegs[] = {{R, 4}};
constexpr FragmentRepeat kTf32BRepeats[] = {{R, 8, Extent},
                                            {C, 8, WarpTile}};
constexpr FragmentBasis kTf32BLanes[] = {{R, 1}, {R, 2}, {C, 1}, {C, 2},
                                         {C, 4}};

// wgmma.mma_async m64nNk16: warp w of a warpgroup holds rows 16 w .. +15
// of each 64-row slab in mma.sync's m16n8 (A: m16k16) order.
constexpr FragmentBasis kWgmmaRegs[] = {{C, 1}, {R, 8}};
constexpr FragmentRepeat kWgmmaCRepeats[] = {{C, 8, WarpTile},
                                             {R, 64, WarpTile}};
constexpr FragmentRepeat kWgmmaARepeats[] = {{C, 8, Extent},
                                             {R, 64, WarpTile}};
constexpr FragmentBasis kWarpgroupRows[] = {{R, 16}, {R, 32}};

// v_mfma_f32_16x16x{16,32} (wave64), p = k / 4 elements per lane.
constexpr FragmentBasis kMfmaCRegs[] = {{R, 1}, {R, 2}};
constexpr FragmentRepeat kMfmaCRepeats[] = {{C, 16, WarpTile},
                                            {R, 16, WarpTile}};
constexpr FragmentBasis kMfmaCLanes[] = {{C, 1}, {C, 2}, {C, 4},
                                         {C, 8}, {R, 4}, {R, 8}};
constexpr FragmentBasis kMfma16ARegs[] = {{C, 1}, {C, 2}};
constexpr FragmentRepeat kMfma16ARepeats[] = {{C, 16, Extent},
                                              {R, 16, WarpTile}};
constexpr FragmentBasis kMfma16ALanes[] = {{R, 1}, {R, 2}, {R, 4},
                                           {R, 8}, {C, 4}, {C, 8}};
constexpr FragmentBasis kMfma16BRegs[] = {{R, 1}, {R, 2}};
constexpr FragmentRepeat kMfma16BRepeats[] = {{R, 16, Extent},
                                              {C, 16, WarpTile}};
constexpr FragmentBasis kMfma16BLanes[] = {{C, 1}, {C, 2}, {C, 4},
                                           {C, 8}, {R, 4}, {R, 8}};
constexpr FragmentBasis kMfma32ARegs[] = {{C, 1}, {C, 2}, {C, 4}};
constexpr FragmentRepeat kMfma32ARepeats[] = {{C, 32, Extent},
                                              {R, 16, WarpTile}};
constexpr FragmentBasis kMfma32ALanes[] = {{R, 1}, {R, 2}, {R, 4},
                                           {R, 8}, {C, 8}, {C, 16}};
constexpr FragmentBasis kMfma32BRegs[] = {{R, 1}, {R, 2}, {R, 4}};
constexpr FragmentRepeat kMfma32BRepeats[] = {{R, 32, Extent},
                                              {C, 16, WarpTile}};
constexpr FragmentBasis kMfma32BLanes[] = {{C, 1}, {C, 2}, {C, 4},
                                           {C, 8}, {R, 8}, {R, 16}};

// v_wmma_f32_16x16x16 (wave32): RDNA3 holds 16 A/B elements per lane (the
// two half-waves alike), RDNA4 8.
constexpr FragmentRepeat kWmmaCRepeats[] = {{C, 16, WarpTile},
                                            {R, 16, WarpTile}};
constexpr FragmentRepeat kWmmaARepeats[] = {{C, 16, Extent},
                                            {R, 16, WarpTile}};
constexpr FragmentRepeat kWmmaBRepeats[] = {{R, 16, Extent},
                                            {C, 16, WarpTile}};
constexpr FragmentBasis kRdna3CRegs[] = {{R, 2}, {R, 4}, {R, 8}};
constexpr FragmentBasis kRdna3CLanes[] = {{C, 1}, {C, 2}, {C, 4}, {C, 8},
                                          {R, 1}};
constexpr FragmentBasis kRdna3ARegs[] = {{C, 1}, {C, 2}, {C, 4}, {C, 8}};
constexpr FragmentBasis kRdna3ALanes[] = {{R, 1}, {R, 2}, {R, 4}, {R, 8},
                                          {C, 0}};
constexpr FragmentBasis kRdna3BRegs[] = {{R, 1}, {R, 2}, {R, 4}, {R, 8}};
constexpr FragmentBasis kRdna3BLanes[] = {{C, 1}, {C, 2}, {C, 4}, {C, 8},
                                          {R, 0}};
constexpr FragmentBasis kRdna4CRegs[] = {{R, 1}, {R, 2}, {R, 4}};
constexpr FragmentBasis kRdna4CLanes[] = {{C, 1}, {C, 2}, {C, 4}, {C, 8},
                                          {R, 8}};
constexpr FragmentBasis kRdna4ARegs[] = {{C, 1}, {C, 2}, {C, 4}};
constexpr FragmentBasis kRdna4ALanes[] = {{R, 1}, {R, 2}, {R, 4}, {R, 8},
                                          {C, 8}};
constexpr FragmentBasis kRdna4BRegs[] = {{R, 1}, {R, 2}, {R, 4}};
constexpr FragmentBasis kRdna4BLanes[] = {{C, 1}, {C, 2}, {C, 4}, {C, 8},
                                          {R, 8}};

constexpr TableSpan<FragmentBasis> kNone;

const MatrixFragment kFragments[] = {
    {K::MmaSync, Op::C, 0, 0,
     "g = lane / 4, t = lane % 4: c0, c1 = C[g][2t + {0, 1}]; "
     "c2, c3 = C[g + 8][2t + {0, 1}]",
     kMmaCRegs, kMmaCRepeats, kMmaLanesColsFirst, kNone},
    {K::MmaSync, Op::A, 16, 0,
     "a0, a1 = A[g][2t + {0, 1}]; a2, a3 = A[g + 8][2t + {0, 1}]; "
     "a4, a5 = A[g][2t + 8 + {0, 1}]; a6, a7 = A[g + 8][2t + 8 + {0, 1}]",
     kMmaARegs, kMmaARepeats, kMmaLanesColsFirst, kNone},
    {K::MmaSync, Op::B, 16, 0,
     "b0, b1 = B[2t + {0, 1}][g]; b2, b3 = B[2t + 8 + {0, 1}][g]",
     kMmaBRegs, kMmaBRepeats, kMmaBLanes, kNone},
    {K::MmaSync, Op::A, 8, 0,
     "tf32: a0..a3 = A[g][t], A[g + 8][t], A[g][t + 4], A[g + 8][t + 4]",
     kTf32ARegs, kTf32ARepeats, kTf32ALanes, kNone},
    {K::MmaSync, Op::B, 8, 0, "tf32: b0, b1 = B[t][g], B[t + 4][g]",
     kTf32BRegs, kTf32BRepeats, kTf32BLanes, kNone},
    {K::Wgmma, Op::C, 0, 0,
     "warp w of the warpgroup: d(4i + {0, 1}) = D[16w + g][8i + 2t + {0, 1}]; "
     "d(4i + {2, 3}) = D[16w + g + 8][8i + 2t + {0, 1}]",
     kWgmmaRegs, kWgmmaCRepeats, kMmaLanesColsFirst, kWarpgroupRows},
    {K::Wgmma, Op::A, 0, 0,
     "A from registers, warp w of the warpgroup: mma.sync's m16k16 A "
     "fragment at rows 16w + g (+ 8)",
     kWgmmaRegs, kWgmmaARepeats, kMmaLanesColsFirst, kWarpgroupRows},
    {K::Mfma, Op::C, 0, 0, "lane l: c(j) = C[4 (l / 16) + j][l % 16], j < 4",
     kMfmaCRegs, kMfmaCRepeats, kMfmaCLanes, kNone},
    {K::Mfma, Op::A, 16, 0, "a(j) = A[l % 16][4 (l / 16) + j], j < 4",
     kMfma16ARegs, kMfma16ARepeats, kMfma16ALanes, kNone},
    {K::Mfma, Op::B, 16, 0, "b(j) = B[4 (l / 16) + j][l % 16], j < 4",
     kMfma16BRegs, kMfma16BRepeats, kMfma16BLanes, kNone},
    {K::Mfma, Op::A, 32, 0, "CDNA4: a(j) = A[l % 16][8 (l / 16) + j], j < 8",
     kMfma32ARegs, kMfma32ARepeats, kMfma32ALanes, kNone},
    {K::Mfma, Op::B, 32, 0, "CDNA4: b(j) = B[8 (l / 16) + j][l % 16], j < 8",
     kMfma32BRegs, kMfma32BRepeats, kMfma32BLanes, kNone},
    {K::Wmma, Op::C, 0, 16, "RDNA3: c(j) = C[2j + l / 16][l % 16], j < 8",
     kRdna3CRegs, kWmmaCRepeats, kRdna3CLanes, kNone},
    {K::Wmma, Op::A, 0, 16,
     "RDNA3: a(j) = A[l % 16][j], j < 16 (lanes l and l + 16 alike)",
     kRdna3ARegs, kWmmaARepeats, kRdna3ALanes, kNone},
    {K::Wmma, Op::B, 0, 16,
     "RDNA3: b(j) = B[j][l % 16], j < 16 (lanes l and l + 16 alike)",
     kRdna3BRegs, kWmmaBRepeats, kRdna3BLanes, kNone},
    {K::Wmma, Op::C, 0, 8, "RDNA4: c(j) = C[8 (l / 16) + j][l % 16], j < 8",
     kRdna4CRegs, kWmmaCRepeats, kRdna4CLanes, kNone},
    {K::Wmma, Op::A, 0, 8, "RDNA4: a(j) = A[l % 16][8 (l / 16) + j], j < 8",
     kRdna4ARegs, kWmmaARepeats, kRdna4ALanes, kNone},
    {K::Wmma, Op::B, 0, 8, "RDNA4: b(j) = B[8 (l / 16) + j][l % 16], j < 8",
     kRdna4BRegs, kWmmaBRepeats, kRdna4BLanes, kNone},
};

} // namespace

TableSpan<MatrixFragment> allMatrixFragments() { return kFragments; }

const MatrixFragment *findMatrixFragment(MatrixInstrKind kind,
                                         MatrixOperand operand, int64_t k,
                                         int64_t operandsPerLane) {
  for (const MatrixFragment &f : kFragments)
    if (f.kind == kind && f.operand == operand && (f.k == 0 || f.k == k) &&
        (f.operandsPerLane == 0 || f.operandsPerLane == operandsPerLane))
      return &f;
  return nullptr;
}

const MatrixFragment *findMatrixFragment(const MatrixInstr &instr,
                                         MatrixOperand operand) {
  return findMatrixFragment(instr.kind, operand, instr.k,
                            instr.operandsPerLane);
}

} // namespace pallasc
