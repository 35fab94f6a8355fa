// Unit tests of the GPU lowering's linear layouts
// (passes/Conversion/PallasToGPU/Layout.h): the GF(2) algebra (composition
// through projection, slicing and reshaping; the inverse map from elements
// to registers) and the instruction fragment layouts, checked element by
// element against the fragment formulas of the PTX ISA (mma.sync, wgmma)
// and the AMD CDNA3/CDNA4 ISAs (MFMA), written out here independently of the
// bases the layouts are built from.

#include "passes/Conversion/PallasToGPU/Analysis/Layout.h"
#include "chips/GpuTarget.h"
#include "chips/MatrixFragments.h"

#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <vector>

using namespace mlir::pallas::gpu;

namespace {

/// The linear index of the element thread (lane, warp) holds in register
/// `reg`: the XOR of the bases of the set bits (Layout.h's definition).
uint64_t elementOf(const Layout &l, int64_t reg, int64_t lane, int64_t warp) {
  uint64_t lin = l.regLinear(reg);
  for (size_t i = 0; i < l.lanes.size(); ++i)
    if (lane & (int64_t(1) << i))
      lin ^= l.lanes[i];
  for (size_t i = 0; i < l.warps.size(); ++i)
    if (warp & (int64_t(1) << i))
      lin ^= l.warps[i];
  return lin;
}

using K = pallasc::MatrixInstrKind;
using Op = pallasc::MatrixOperand;

/// The fragment table's layouts, by instruction and operand.
Layout mmaC(int64_t m, int64_t n, int64_t wm, int64_t wn) {
  return fragmentLayout({K::MmaSync}, Op::C, m, n, wm, wn);
}
Layout mmaA(int64_t m, int64_t k, int64_t wm, int64_t wn) {
  return fragmentLayout({K::MmaSync, 16}, Op::A, m, k, wm, wn);
}
Layout mmaB(int64_t k, int64_t n, int64_t wm, int64_t wn) {
  return fragmentLayout({K::MmaSync, 16}, Op::B, k, n, wm, wn);
}
Layout tf32A(int64_t m, int64_t k, int64_t wm, int64_t wn) {
  return fragmentLayout({K::MmaSync, 8}, Op::A, m, k, wm, wn);
}
Layout tf32B(int64_t k, int64_t n, int64_t wm, int64_t wn) {
  return fragmentLayout({K::MmaSync, 8}, Op::B, k, n, wm, wn);
}
Layout wgmmaC(int64_t m, int64_t n, int64_t gm, int64_t gn) {
  return fragmentLayout({K::Wgmma}, Op::C, m, n, gm, gn);
}
Layout wgmmaA(int64_t m, int64_t k, int64_t gm, int64_t gn) {
  return fragmentLayout({K::Wgmma}, Op::A, m, k, gm, gn);
}
Layout mfmaC(int64_t m, int64_t n, int64_t wm, int64_t wn) {
  return fragmentLayout({K::Mfma}, Op::C, m, n, wm, wn);
}
Layout mfmaA(int64_t m, int64_t k, int64_t wm, int64_t wn,
             int64_t perLane = 4) {
  return fragmentLayout({K::Mfma, 4 * perLane}, Op::A, m, k, wm, wn);
}
Layout mfmaB(int64_t k, int64_t n, int64_t wm, int64_t wn,
             int64_t perLane = 4) {
  return fragmentLayout({K::Mfma, 4 * perLane}, Op::B, k, n, wm, wn);
}
Layout wmmaC(int64_t m, int64_t n, int64_t wm, int64_t wn, int64_t perLane) {
  return fragmentLayout({K::Wmma, 16, perLane}, Op::C, m, n, wm, wn);
}
Layout wmmaA(int64_t m, int64_t k, int64_t wm, int64_t wn, int64_t perLane) {
  return fragmentLayout({K::Wmma, 16, perLane}, Op::A, m, k, wm, wn);
}
Layout wmmaB(int64_t k, int64_t n, int64_t wm, int64_t wn, int64_t perLane) {
  return fragmentLayout({K::Wmma, 16, perLane}, Op::B, k, n, wm, wn);
}

int64_t numLanes(const Layout &l) { return int64_t(1) << l.lanes.size(); }
int64_t numWarps(const Layout &l) { return int64_t(1) << l.warps.size(); }

/// Calls `f(reg, lane, warp, row, col)` for every register of every thread
/// of a 2-D layout.
void forEachHeld(const Layout &l,
                 const std::function<void(int64_t, int64_t, int64_t, int64_t,
                                          int64_t)> &f) {
  for (int64_t w = 0; w < numWarps(l); ++w)
    for (int64_t lane = 0; lane < numLanes(l); ++lane)
      for (int64_t r = 0; r < l.numRegs(); ++r) {
        uint64_t lin = elementOf(l, r, lane, w);
        f(r, lane, w, l.coord(lin, 0), l.coord(lin, 1));
      }
}

/// How many (register, lane, warp) hold each element.
std::map<uint64_t, int> holders(const Layout &l) {
  std::map<uint64_t, int> count;
  for (int64_t w = 0; w < numWarps(l); ++w)
    for (int64_t lane = 0; lane < numLanes(l); ++lane)
      for (int64_t r = 0; r < l.numRegs(); ++r)
        ++count[elementOf(l, r, lane, w)];
  return count;
}

/// Every element of the block is held exactly `times` times.
bool coversEvenly(const Layout &l, int times) {
  auto count = holders(l);
  if (static_cast<int64_t>(count.size()) != l.numElements())
    return false;
  for (auto [lin, n] : count)
    if (lin >= static_cast<uint64_t>(l.numElements()) || n != times)
      return false;
  return true;
}

} // namespace

TEST_CASE("layout bit fields: row-major coordinates", "[layout]") {
  Layout l;
  l.shape = {4, 8, 2};
  CHECK(l.numElements() == 64);
  CHECK(l.shift(2) == 0);
  CHECK(l.shift(1) == 1);
  CHECK(l.shift(0) == 4);
  // Element [3, 5, 1] is 3*16 + 5*2 + 1 = 59.
  CHECK(l.coord(59, 0) == 3);
  CHECK(l.coord(59, 1) == 5);
  CHECK(l.coord(59, 2) == 1);
  CHECK(isPowerOfTwoShape({4, 8, 1}));
  CHECK(isPowerOfTwoShape({}));
  CHECK_FALSE(isPowerOfTwoShape({4, 6}));
  CHECK_FALSE(isPowerOfTwoShape({0}));
}

TEST_CASE("blocked layout: 16-byte vectors, lanes, then warps",
          "[layout]") {
  // f32 [64, 64] over 4 warps of 32 lanes: 4 contiguous elements per
  // thread, 32 lanes along the next 128 elements (2 rows), warps along
  // the outermost bits.
  Layout l = blockedLayout({64, 64}, 32, 4, 5);
  REQUIRE(l.rank() == 2);
  CHECK(coversEvenly(l, 1));
  CHECK(l.numRegs() == 64 * 64 / 128);
  // Registers 0..3 of a thread are 4 consecutive columns.
  for (int64_t r = 0; r < 4; ++r)
    CHECK(elementOf(l, r, 0, 0) == static_cast<uint64_t>(r));
  // Lane l starts at element 4 l: consecutive lanes, consecutive vectors.
  for (int64_t lane = 0; lane < 32; ++lane)
    CHECK(elementOf(l, 0, lane, 0) == static_cast<uint64_t>(4 * lane));
  // Warp w owns rows 16 w .. 16 w + 15.
  for (int64_t w = 0; w < 4; ++w)
    forEachHeld(l, [&](int64_t, int64_t, int64_t warp, int64_t row, int64_t) {
      if (warp == w)
        CHECK(row / 16 == w);
    });

  // 8 x bf16 per vector; a block smaller than the CTA is replicated
  // (zero bases), every element held by the same number of threads.
  Layout small = blockedLayout({8, 8}, 16, 4, 5);
  CHECK(small.regs.size() == 3);
  CHECK(coversEvenly(small, 4 * 32 * 8 / 64));
  // Wave64 (laneBits 6).
  Layout wave = blockedLayout({16, 64}, 32, 2, 6);
  CHECK(wave.lanes.size() == 6);
  CHECK(coversEvenly(wave, 1));
}

TEST_CASE("mma.sync m16n8k16 fragments follow the PTX ISA", "[layout]") {
  // PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type":
  // groupID = lane >> 2, threadID_in_group = lane % 4.
  SECTION("C (f32 accumulator, 16x8)") {
    Layout c = mmaC(16, 8, 1, 1);
    REQUIRE(c.numRegs() == 4);
    forEachHeld(c, [](int64_t i, int64_t lane, int64_t, int64_t row,
                      int64_t col) {
      int64_t g = lane >> 2, t = lane % 4;
      CHECK(row == (i < 2 ? g : g + 8));
      CHECK(col == t * 2 + (i & 1));
    });
    CHECK(coversEvenly(c, 1));
  }
  SECTION("A (f16, 16x16, row)") {
    Layout a = mmaA(16, 16, 1, 1);
    REQUIRE(a.numRegs() == 8);
    forEachHeld(a, [](int64_t i, int64_t lane, int64_t, int64_t row,
                      int64_t col) {
      int64_t g = lane >> 2, t = lane % 4;
      bool lowRow = i == 0 || i == 1 || i == 4 || i == 5;
      CHECK(row == (lowRow ? g : g + 8));
      CHECK(col == (i < 4 ? t * 2 + (i & 1) : t * 2 + (i & 1) + 8));
    });
    CHECK(coversEvenly(a, 1));
  }
  SECTION("B (f16, 16x8, col)") {
    Layout b = mmaB(16, 8, 1, 1);
    REQUIRE(b.numRegs() == 4);
    forEachHeld(b, [](int64_t i, int64_t lane, int64_t, int64_t row,
                      int64_t col) {
      int64_t g = lane >> 2, t = lane % 4;
      CHECK(row == (i < 2 ? t * 2 + (i & 1) : t * 2 + (i & 1) + 8));
      CHECK(col == g);
    });
    CHECK(coversEvenly(b, 1));
  }
  SECTION("tiles repeated per warp, warps tiling the result") {
    // [128, 64] over 2 x 2 warps: warp (wm, wn) owns the 64 x 32 tile at
    // (64 wm, 32 wn); within it the m16n8 fragment repeats.
    Layout c = mmaC(128, 64, 2, 2);
    CHECK(coversEvenly(c, 1));
    forEachHeld(c, [](int64_t i, int64_t lane, int64_t w, int64_t row,
                      int64_t col) {
      int64_t wm = w & 1, wn = w >> 1;
      CHECK(row / 64 == wm);
      CHECK(col / 32 == wn);
      int64_t g = lane >> 2, t = lane % 4;
      CHECK(row % 16 == ((i & 2) ? g + 8 : g));
      CHECK(col % 8 == t * 2 + (i & 1));
    });
    // A is replicated across the warps along N, B across those along M.
    CHECK(coversEvenly(mmaA(128, 32, 2, 2), 2));
    CHECK(coversEvenly(mmaB(32, 64, 2, 2), 2));
  }
}

TEST_CASE("mma.sync m16n8k8 tf32 fragments follow the PTX ISA",
          "[layout]") {
  // PTX ISA, "Matrix Fragments for mma.m16n8k8" (.tf32): a0..a3 at
  // (g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4); b0, b1 at (t, g),
  // (t + 4, g).
  Layout a = tf32A(16, 8, 1, 1);
  REQUIRE(a.numRegs() == 4);
  forEachHeld(a, [](int64_t i, int64_t lane, int64_t, int64_t row,
                    int64_t col) {
    int64_t g = lane >> 2, t = lane % 4;
    CHECK(row == g + 8 * (i & 1));
    CHECK(col == t + 4 * (i >> 1));
  });
  CHECK(coversEvenly(a, 1));
  Layout b = tf32B(8, 8, 1, 1);
  REQUIRE(b.numRegs() == 2);
  forEachHeld(b, [](int64_t i, int64_t lane, int64_t, int64_t row,
                    int64_t col) {
    int64_t g = lane >> 2, t = lane % 4;
    CHECK(row == t + 4 * i);
    CHECK(col == g);
  });
  CHECK(coversEvenly(b, 1));
}

TEST_CASE("wgmma m64nNk16 accumulator follows the PTX ISA", "[layout]") {
  // PTX ISA, "wgmma .m64nNk16 register fragment D": warp w of the
  // warpgroup holds rows 16 w + g and 16 w + g + 8; register i is at
  // column 8 (i / 4) + 2 t + (i % 2), row + 8 when bit 1 of i is set.
  Layout c = wgmmaC(64, 64, 1, 1);
  REQUIRE(c.numRegs() == 32);
  forEachHeld(c, [](int64_t i, int64_t lane, int64_t w, int64_t row,
                    int64_t col) {
    int64_t g = lane >> 2, t = lane % 4;
    CHECK(row == 16 * w + g + 8 * ((i >> 1) & 1));
    CHECK(col == 8 * (i >> 2) + 2 * t + (i & 1));
  });
  CHECK(coversEvenly(c, 1));
  // Two warpgroups along M: 64-row slabs each.
  Layout c2 = wgmmaC(128, 64, 2, 1);
  CHECK(coversEvenly(c2, 1));
  forEachHeld(c2, [](int64_t, int64_t, int64_t w, int64_t row, int64_t) {
    CHECK(row / 64 == w / 4);
  });
  // The register A operand: the mma.sync A fragment per 16-row slice.
  Layout a = wgmmaA(64, 16, 1, 1);
  forEachHeld(a, [](int64_t i, int64_t lane, int64_t w, int64_t row,
                    int64_t col) {
    int64_t g = lane >> 2, t = lane % 4;
    CHECK(row == 16 * w + g + 8 * ((i >> 1) & 1));
    CHECK(col == 2 * t + (i & 1) + 8 * (i >> 2));
  });
  CHECK(coversEvenly(a, 1));
}

TEST_CASE("MFMA 16x16x16 f16 fragments follow the CDNA3 ISA", "[layout]") {
  // AMD Instinct MI300 ISA, v_mfma_f32_16x16x16_f16 (wave64): lane l,
  // register j: A[l % 16][4 (l / 16) + j], B[4 (l / 16) + j][l % 16],
  // D[4 (l / 16) + j][l % 16].
  Layout c = mfmaC(16, 16, 1, 1);
  REQUIRE(numLanes(c) == 64);
  REQUIRE(c.numRegs() == 4);
  forEachHeld(c, [](int64_t j, int64_t l, int64_t, int64_t row,
                    int64_t col) {
    CHECK(row == 4 * (l / 16) + j);
    CHECK(col == l % 16);
  });
  CHECK(coversEvenly(c, 1));
  Layout a = mfmaA(16, 16, 1, 1);
  forEachHeld(a, [](int64_t j, int64_t l, int64_t, int64_t row,
                    int64_t col) {
    CHECK(row == l % 16);
    CHECK(col == 4 * (l / 16) + j);
  });
  CHECK(coversEvenly(a, 1));
  Layout b = mfmaB(16, 16, 1, 1);
  forEachHeld(b, [](int64_t j, int64_t l, int64_t, int64_t row,
                    int64_t col) {
    CHECK(row == 4 * (l / 16) + j);
    CHECK(col == l % 16);
  });
  CHECK(coversEvenly(b, 1));
  // 2 x 2 wavefronts over [64, 64]: 32 x 32 each.
  Layout big = mfmaC(64, 64, 2, 2);
  CHECK(coversEvenly(big, 1));
  forEachHeld(big, [](int64_t, int64_t, int64_t w, int64_t row,
                      int64_t col) {
    CHECK(row / 32 == (w & 1));
    CHECK(col / 32 == (w >> 1));
  });
}

TEST_CASE("MFMA 16x16x32 fragments follow the CDNA4 ISA", "[layout]") {
  // AMD Instinct MI355 (CDNA4) ISA, v_mfma_f32_16x16x32_{f16,bf16}
  // (wave64): 8 halves of A and B per lane in 4 VGPRs, lanes 16 g .. 16 g +
  // 15 carrying K = 8 g .. 8 g + 7: lane l, element j = 0..7:
  // A[l % 16][8 (l / 16) + j], B[8 (l / 16) + j][l % 16]; the accumulator
  // is the 16x16x16 one (4 f32, D[4 (l / 16) + j][l % 16]).
  Layout a = mfmaA(16, 32, 1, 1, 8);
  REQUIRE(numLanes(a) == 64);
  REQUIRE(a.numRegs() == 8);
  forEachHeld(a, [](int64_t j, int64_t l, int64_t, int64_t row,
                    int64_t col) {
    CHECK(row == l % 16);
    CHECK(col == 8 * (l / 16) + j);
  });
  CHECK(coversEvenly(a, 1));
  Layout b = mfmaB(32, 16, 1, 1, 8);
  REQUIRE(numLanes(b) == 64);
  REQUIRE(b.numRegs() == 8);
  forEachHeld(b, [](int64_t j, int64_t l, int64_t, int64_t row,
                    int64_t col) {
    CHECK(row == 8 * (l / 16) + j);
    CHECK(col == l % 16);
  });
  CHECK(coversEvenly(b, 1));
  // [64, 128] x [128, 64] over 2 x 2 wavefronts: each instruction's 8
  // elements are consecutive registers, k tiles first (32 k per tile), then
  // the 16-row (column) tiles of the wavefront's 32.
  Layout big = mfmaA(64, 128, 2, 2, 8);
  CHECK(coversEvenly(big, 2)); // the 2 wavefronts along N share A
  REQUIRE(big.numRegs() == 8 * 4 * 2);
  forEachHeld(big, [](int64_t r, int64_t l, int64_t w, int64_t row,
                      int64_t col) {
    int64_t j = r % 8, kt = (r / 8) % 4, mt = r / 32;
    CHECK(row == 32 * (w & 1) + 16 * mt + l % 16);
    CHECK(col == 32 * kt + 8 * (l / 16) + j);
  });
  Layout bigB = mfmaB(128, 64, 2, 2, 8);
  CHECK(coversEvenly(bigB, 2));
  forEachHeld(bigB, [](int64_t r, int64_t l, int64_t w, int64_t row,
                       int64_t col) {
    int64_t j = r % 8, kt = (r / 8) % 4, nt = r / 32;
    CHECK(row == 32 * kt + 8 * (l / 16) + j);
    CHECK(col == 32 * (w >> 1) + 16 * nt + l % 16);
  });
}

TEST_CASE("WMMA 16x16x16 fragments follow the RDNA3 and RDNA4 ISAs",
          "[layout]") {
  // RDNA3 ISA, v_wmma_f32_16x16x16_f16 (wave32): lane l holds row l % 16 of
  // A and column l % 16 of B, K = 0..15 in its 16 halves, lanes l and
  // l + 16 the same; D VGPR j: D[2 j + l / 16][l % 16].
  Layout c3 = wmmaC(16, 16, 1, 1, 16);
  REQUIRE(numLanes(c3) == 32);
  REQUIRE(c3.numRegs() == 8);
  forEachHeld(c3, [](int64_t j, int64_t l, int64_t, int64_t row,
                     int64_t col) {
    CHECK(row == 2 * j + l / 16);
    CHECK(col == l % 16);
  });
  CHECK(coversEvenly(c3, 1));
  Layout a3 = wmmaA(16, 16, 1, 1, 16);
  REQUIRE(a3.numRegs() == 16);
  forEachHeld(a3, [](int64_t j, int64_t l, int64_t, int64_t row,
                     int64_t col) {
    CHECK(row == l % 16);
    CHECK(col == j);
  });
  CHECK(coversEvenly(a3, 2));
  Layout b3 = wmmaB(16, 16, 1, 1, 16);
  forEachHeld(b3, [](int64_t j, int64_t l, int64_t, int64_t row,
                     int64_t col) {
    CHECK(row == j);
    CHECK(col == l % 16);
  });
  CHECK(coversEvenly(b3, 2));
  // RDNA4 ISA, v_wmma_f32_16x16x16_f16 (gfx12, wave32): 8 halves per lane,
  // A[l % 16][8 (l / 16) + j], B[8 (l / 16) + j][l % 16]; D VGPR j:
  // D[8 (l / 16) + j][l % 16].
  Layout c4 = wmmaC(16, 16, 1, 1, 8);
  REQUIRE(c4.numRegs() == 8);
  forEachHeld(c4, [](int64_t j, int64_t l, int64_t, int64_t row,
                     int64_t col) {
    CHECK(row == 8 * (l / 16) + j);
    CHECK(col == l % 16);
  });
  CHECK(coversEvenly(c4, 1));
  Layout a4 = wmmaA(16, 16, 1, 1, 8);
  REQUIRE(a4.numRegs() == 8);
  forEachHeld(a4, [](int64_t j, int64_t l, int64_t, int64_t row,
                     int64_t col) {
    CHECK(row == l % 16);
    CHECK(col == 8 * (l / 16) + j);
  });
  CHECK(coversEvenly(a4, 1));
  Layout b4 = wmmaB(16, 16, 1, 1, 8);
  forEachHeld(b4, [](int64_t j, int64_t l, int64_t, int64_t row,
                     int64_t col) {
    CHECK(row == 8 * (l / 16) + j);
    CHECK(col == l % 16);
  });
  CHECK(coversEvenly(b4, 1));
  // 4 x 1 wavefronts over [128, 64] (repetitions along N, then M), and an
  // A operand with K = 64 (repetitions along K first).
  for (int64_t perLane : {16, 8}) {
    Layout big = wmmaC(128, 64, 4, 1, perLane);
    CHECK(coversEvenly(big, 1));
    forEachHeld(big, [](int64_t, int64_t, int64_t w, int64_t row, int64_t) {
      CHECK(row / 32 == w);
    });
    CHECK(coversEvenly(wmmaA(128, 64, 4, 1, perLane),
                       perLane == 16 ? 2 : 1));
    CHECK(coversEvenly(wmmaB(64, 64, 2, 2, perLane),
                       (perLane == 16 ? 2 : 1) * 2));
  }
}

TEST_CASE("inverse: registerOf undoes regLinear", "[layout]") {
  for (const Layout &l :
       {mmaC(64, 64, 2, 2), mmaA(64, 32, 2, 2),
        wgmmaC(128, 128, 2, 1), mfmaB(32, 64, 2, 2),
        blockedLayout({32, 128}, 16, 4, 5)}) {
    INFO(l.str());
    for (int64_t r = 0; r < l.numRegs(); ++r)
      CHECK(registerOf(l, l.regLinear(r)) == r);
    // A lane basis is never in the register span of a non-replicated
    // layout: those elements belong to another thread.
    for (uint64_t lane : l.lanes)
      if (lane != 0)
        CHECK_FALSE(registerOf(l, lane).has_value());
  }
  // The inverse of a non-unit basis: register bases {1, 2^3 ^ 1}.
  Layout l;
  l.shape = {16};
  l.regs = {1, 9};
  CHECK(registerOf(l, 8) == 3); // 8 = 1 ^ 9: registers 0b11
  CHECK(registerOf(l, 9) == 2);
  CHECK_FALSE(registerOf(l, 4).has_value());
}

TEST_CASE("composition: transpose, slice and reshape", "[layout]") {
  Layout c = mmaC(64, 32, 2, 2);
  SECTION("a transpose swaps each held element's coordinates") {
    Layout t = projectLayout(c, {1, 0}, {32, 64});
    REQUIRE(t.numRegs() == c.numRegs());
    for (int64_t w = 0; w < numWarps(c); ++w)
      for (int64_t lane = 0; lane < 32; ++lane)
        for (int64_t r = 0; r < c.numRegs(); ++r) {
          uint64_t x = elementOf(c, r, lane, w), y = elementOf(t, r, lane, w);
          CHECK(t.coord(y, 0) == c.coord(x, 1));
          CHECK(t.coord(y, 1) == c.coord(x, 0));
          CHECK(projectLinear(c, x, {1, 0}, {32, 64}) == y);
        }
    // Transposing twice is the identity.
    CHECK(projectLayout(t, {1, 0}, {64, 32}).sameDistribution(c));
  }
  SECTION("a row reduction's slice keeps the rows each thread held") {
    Layout s = sliceLayout(c, {1});
    REQUIRE(s.rank() == 1);
    CHECK(s.shape[0] == 64);
    // Column bases vanish; row bases stay; the register span is reduced
    // to the independent row bases (i, i + 8, the 16-row repeats).
    CHECK(s.numRegs() == 2 * (64 / 2 / 16));
    for (int64_t w = 0; w < 4; ++w)
      for (int64_t lane = 0; lane < 32; ++lane)
        for (int64_t r = 0; r < c.numRegs(); ++r) {
          uint64_t x = elementOf(c, r, lane, w);
          int64_t row = c.coord(x, 0);
          // Some register of the same thread holds that row in the slice.
          bool found = false;
          for (int64_t q = 0; q < s.numRegs(); ++q)
            found |= elementOf(s, q, lane, w) == static_cast<uint64_t>(row);
          CHECK(found);
        }
    // Each row is held by the 4 lanes of a quad times the 2 warps along N.
    CHECK(coversEvenly(s, 4 * 2));
  }
  SECTION("a broadcast operand repeats the slice along the new dimension") {
    Layout s = sliceLayout(c, {1});
    Layout back = projectLayout(c, {0, -1}, {64, 1});
    for (int64_t w = 0; w < 4; ++w)
      for (int64_t lane = 0; lane < 32; ++lane)
        for (int64_t r = 0; r < back.numRegs(); ++r)
          CHECK(back.coord(elementOf(back, r, lane, w), 0) ==
                static_cast<int64_t>(elementOf(s, r, lane, w)));
  }
  SECTION("a reshape keeps the row-major linear index") {
    Layout r = reshapeLayout(c, {2, 32, 32});
    CHECK(r.family == Layout::Family::Derived);
    for (int64_t w = 0; w < 4; ++w)
      for (int64_t lane = 0; lane < 32; ++lane)
        for (int64_t q = 0; q < c.numRegs(); ++q) {
          uint64_t x = elementOf(c, q, lane, w);
          CHECK(elementOf(r, q, lane, w) == x);
          CHECK(r.coord(x, 0) * 32 + r.coord(x, 1) == c.coord(x, 0));
          CHECK(r.coord(x, 2) == c.coord(x, 1));
        }
  }
}

TEST_CASE("providesLocally and registerMap", "[layout]") {
  Layout c = mmaC(64, 64, 2, 2);
  // A layout whose registers are a subset of c's (first two bases).
  Layout part = c;
  part.regs.assign(c.regs.begin(), c.regs.begin() + 2);
  CHECK(providesLocally(c, part));
  CHECK_FALSE(providesLocally(part, c));
  auto map = registerMap(c, part);
  REQUIRE(map.size() == 4);
  for (int64_t r = 0; r < 4; ++r)
    CHECK(c.regLinear(map[r]) == part.regLinear(r));
  // The same registers in another order.
  Layout swapped = c;
  std::swap(swapped.regs[0], swapped.regs[1]);
  REQUIRE(providesLocally(c, swapped));
  auto perm = registerMap(c, swapped);
  CHECK(perm[1] == 1 << 1);
  CHECK(perm[2] == 1 << 0);
  for (int64_t r = 0; r < swapped.numRegs(); ++r)
    CHECK(c.regLinear(perm[r]) == swapped.regLinear(r));
  // Other thread bases: not local.
  CHECK_FALSE(providesLocally(c, blockedLayout({64, 64}, 32, 4, 5)));
  CHECK_FALSE(providesLocally(c, mmaC(64, 64, 4, 1)));
  CHECK(c.sameDistribution(mmaC(64, 64, 2, 2)));
}

TEST_CASE("every matrix instruction of every chip has its fragment layouts",
          "[layout]") {
  for (const pallasc::GpuTarget &t : pallasc::allGpuTargets())
    for (const pallasc::MatrixInstr &i : t.matrixInstrs) {
      INFO(t.targetName() << " k=" << i.k);
      CHECK(pallasc::findMatrixFragment(i, Op::A));
      CHECK(pallasc::findMatrixFragment(i, Op::C));
      // wgmma reads B from shared memory only.
      if (i.kind != K::Wgmma)
        CHECK(pallasc::findMatrixFragment(i, Op::B));
    }
  // Each entry, over one warp's tile, holds every element of the tile the
  // same number of times (once, but for the replicated RDNA3 operands).
  for (const pallasc::MatrixFragment &f : pallasc::allMatrixFragments()) {
    INFO(f.formula);
    int64_t rows = f.operand == Op::B ? 32 : (f.kind == K::Wgmma ? 64 : 16);
    int64_t cols = f.operand == Op::A ? 32 : 16;
    Layout l = fragmentLayout(f, rows, cols, 1, 1);
    int64_t threads = numLanes(l) * numWarps(l);
    CHECK(coversEvenly(l, static_cast<int>(threads * l.numRegs() /
                                           l.numElements())));
  }
}
