//===- Layout.cpp - how a block tensor is spread over a CTA ----*- C++ -*-===//

#include "passes/Conversion/PallasToGPU/Analysis/Layout.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>

using namespace mlir::pallas::gpu;

bool mlir::pallas::gpu::isPowerOfTwoShape(llvm::ArrayRef<int64_t> shape) {
  return llvm::all_of(shape,
                      [](int64_t d) { return d > 0 && llvm::isPowerOf2_64(d); });
}

int64_t mlir::pallas::gpu::log2Exact(int64_t v) {
  assert(v > 0 && llvm::isPowerOf2_64(v) && "not a power of two");
  return llvm::Log2_64(v);
}

int64_t Layout::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

int64_t Layout::shift(int64_t d) const {
  int64_t s = 0;
  for (int64_t e = d + 1; e < rank(); ++e)
    s += log2Exact(shape[e]);
  return s;
}

int64_t Layout::coord(uint64_t lin, int64_t d) const {
  return static_cast<int64_t>((lin >> shift(d)) &
                              static_cast<uint64_t>(shape[d] - 1));
}

uint64_t Layout::regLinear(int64_t r) const {
  uint64_t lin = 0;
  for (size_t i = 0; i < regs.size(); ++i)
    if (r & (int64_t(1) << i))
      lin ^= regs[i];
  return lin;
}

bool Layout::sameDistribution(const Layout &o) const {
  return shape == o.shape && regs == o.regs && lanes == o.lanes &&
         warps == o.warps;
}

std::string Layout::str() const {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "<[";
  llvm::interleaveComma(shape, os);
  auto list = [&](const char *name, llvm::ArrayRef<uint64_t> bases) {
    os << " " << name << "=[";
    llvm::interleaveComma(bases, os);
    os << "]";
  };
  os << "]";
  list("regs", regs);
  list("lanes", lanes);
  list("warps", warps);
  os << ">";
  return s;
}

namespace {

/// A GF(2) echelon basis that remembers which inputs make up each row.
struct Echelon {
  struct Row {
    uint64_t vec;
    uint64_t combo; // bit i: input i is part of this row
  };
  llvm::SmallVector<Row> rows;

  /// Reduces `v`; returns the remainder and the inputs used.
  std::pair<uint64_t, uint64_t> reduce(uint64_t v) const {
    uint64_t combo = 0;
    for (const Row &row : rows) {
      uint64_t pivot = uint64_t(1) << llvm::Log2_64(row.vec);
      if (v & pivot) {
        v ^= row.vec;
        combo ^= row.combo;
      }
    }
    return {v, combo};
  }
  /// Adds input number `index`; false when it is dependent.
  bool insert(uint64_t v, unsigned index) {
    auto [rest, combo] = reduce(v);
    if (rest == 0)
      return false;
    Row row{rest, combo ^ (uint64_t(1) << index)};
    // Keep rows sorted by decreasing pivot and fully reduced.
    uint64_t pivot = uint64_t(1) << llvm::Log2_64(row.vec);
    for (Row &r : rows)
      if (r.vec & pivot) {
        r.vec ^= row.vec;
        r.combo ^= row.combo;
      }
    rows.push_back(row);
    llvm::sort(rows, [](const Row &a, const Row &b) { return a.vec > b.vec; });
    return true;
  }
};

} // namespace

Layout mlir::pallas::gpu::blockedLayout(llvm::ArrayRef<int64_t> shape,
                                        int64_t elementBits,
                                        int64_t numWarps,
                                        int64_t laneBits) {
  Layout l;
  l.shape.assign(shape.begin(), shape.end());
  l.family = Layout::Family::Blocked;
  int64_t n = log2Exact(l.numElements());
  int64_t bytes = std::max<int64_t>(1, elementBits / 8);
  int64_t vecBits = 0;
  if (!shape.empty())
    vecBits = std::min<int64_t>(log2Exact(16 / std::min<int64_t>(bytes, 16)),
                                log2Exact(shape.back()));
  for (int64_t i = 0; i < vecBits; ++i)
    l.regs.push_back(uint64_t(1) << i);
  int64_t next = vecBits;
  for (int64_t i = 0; i < laneBits; ++i)
    l.lanes.push_back(next < n ? uint64_t(1) << next++ : 0);
  int64_t warpBits = log2Exact(numWarps);
  int64_t available = std::min<int64_t>(warpBits, n - next);
  int64_t top = n - available;
  for (int64_t i = 0; i < warpBits; ++i)
    l.warps.push_back(i < available ? uint64_t(1) << (top + i) : 0);
  for (int64_t b = next; b < top; ++b)
    l.regs.push_back(uint64_t(1) << b);
  return l;
}

/// The layout family of a fragment table entry.
static Layout::Family fragmentFamily(pallasc::MatrixInstrKind kind,
                                     pallasc::MatrixOperand operand) {
  using pallasc::MatrixInstrKind;
  using pallasc::MatrixOperand;
  using F = Layout::Family;
  auto pick = [&](F a, F b, F c) {
    return operand == MatrixOperand::A   ? a
           : operand == MatrixOperand::B ? b
                                         : c;
  };
  switch (kind) {
  case MatrixInstrKind::MmaSync:
    return pick(F::MmaA, F::MmaB, F::MmaC);
  case MatrixInstrKind::Wgmma:
    // wgmma reads B from shared memory only: no register layout of its own.
    return pick(F::WgmmaA, F::Derived, F::WgmmaC);
  case MatrixInstrKind::Mfma:
    return pick(F::MfmaA, F::MfmaB, F::MfmaC);
  case MatrixInstrKind::Wmma:
    return pick(F::WmmaA, F::WmmaB, F::WmmaC);
  }
  llvm_unreachable("unknown matrix instruction kind");
}

Layout mlir::pallas::gpu::fragmentLayout(const pallasc::MatrixFragment &f,
                                         int64_t rows, int64_t cols,
                                         int64_t wm, int64_t wn) {
  using pallasc::FragmentAxis;
  using pallasc::MatrixOperand;
  Layout l;
  l.shape = {rows, cols};
  l.family = fragmentFamily(f.kind, f.operand);
  int64_t colBits = log2Exact(cols);
  auto basis = [&](const pallasc::FragmentBasis &b) -> uint64_t {
    return b.axis == FragmentAxis::Row ? uint64_t(b.step) << colBits
                                       : uint64_t(b.step);
  };
  // The warp grid's share of each dimension: M (rows of A and C) over wm,
  // N (columns of B and C) over wn; K is not split.
  bool rowsAreM = f.operand != MatrixOperand::B;
  bool colsAreN = f.operand != MatrixOperand::A;
  int64_t rowTile = rowsAreM ? rows / wm : rows;
  int64_t colTile = colsAreN ? cols / wn : cols;
  for (const pallasc::FragmentBasis &b : f.regs)
    l.regs.push_back(basis(b));
  for (const pallasc::FragmentRepeat &rep : f.repeats) {
    bool row = rep.axis == FragmentAxis::Row;
    int64_t bound = rep.upTo == pallasc::RepeatUpTo::Extent
                        ? (row ? rows : cols)
                        : (row ? rowTile : colTile);
    for (int64_t x = rep.from; x < bound; x *= 2)
      l.regs.push_back(basis({rep.axis, x}));
  }
  for (const pallasc::FragmentBasis &b : f.lanes)
    l.lanes.push_back(basis(b));
  for (const pallasc::FragmentBasis &b : f.groupWarps)
    l.warps.push_back(basis(b));
  for (int64_t i = 0; (int64_t(1) << i) < wm; ++i)
    l.warps.push_back(rowsAreM ? uint64_t(rowTile << i) << colBits : 0);
  for (int64_t j = 0; (int64_t(1) << j) < wn; ++j)
    l.warps.push_back(colsAreN ? uint64_t(colTile << j) : 0);
  l.warpsM = (int64_t(1) << f.groupWarps.size) * wm;
  l.warpsN = wn;
  return l;
}

Layout mlir::pallas::gpu::fragmentLayout(FragmentSelect instr,
                                         pallasc::MatrixOperand operand,
                                         int64_t rows, int64_t cols,
                                         int64_t wm, int64_t wn) {
  const pallasc::MatrixFragment *f = pallasc::findMatrixFragment(
      instr.kind, operand, instr.k, instr.operandsPerLane);
  if (!f)
    llvm::report_fatal_error("no fragment layout for this matrix instruction");
  return fragmentLayout(*f, rows, cols, wm, wn);
}

Layout mlir::pallas::gpu::projectLayout(const Layout &layout,
                                        llvm::ArrayRef<int64_t> dims,
                                        llvm::ArrayRef<int64_t> newShape) {
  Layout out;
  out.shape.assign(newShape.begin(), newShape.end());
  auto project = [&](uint64_t lin) {
    uint64_t v = 0;
    for (auto [j, d] : llvm::enumerate(dims)) {
      if (d < 0)
        continue;
      assert(newShape[j] == layout.shape[d] && "projected dimension resized");
      v |= static_cast<uint64_t>(layout.coord(lin, d)) << out.shift(j);
    }
    return v;
  };
  Echelon span;
  for (uint64_t b : layout.regs) {
    uint64_t p = project(b);
    if (p != 0 && span.insert(p, out.regs.size()))
      out.regs.push_back(p);
  }
  for (uint64_t b : layout.lanes)
    out.lanes.push_back(project(b));
  for (uint64_t b : layout.warps)
    out.warps.push_back(project(b));
  return out;
}

Layout mlir::pallas::gpu::sliceLayout(const Layout &layout,
                                      llvm::ArrayRef<int64_t> dims) {
  llvm::SmallVector<int64_t> kept, shape;
  for (int64_t d = 0; d < layout.rank(); ++d)
    if (!llvm::is_contained(dims, d)) {
      kept.push_back(d);
      shape.push_back(layout.shape[d]);
    }
  return projectLayout(layout, kept, shape);
}

Layout mlir::pallas::gpu::reshapeLayout(const Layout &layout,
                                        llvm::ArrayRef<int64_t> newShape) {
  Layout out = layout;
  out.shape.assign(newShape.begin(), newShape.end());
  out.family = Layout::Family::Derived;
  assert(out.numElements() == layout.numElements() && "reshape resizes");
  return out;
}

std::optional<int64_t> mlir::pallas::gpu::registerOf(const Layout &layout,
                                                     uint64_t lin) {
  Echelon span;
  for (auto [i, b] : llvm::enumerate(layout.regs))
    span.insert(b, i);
  auto [rest, combo] = span.reduce(lin);
  if (rest != 0)
    return std::nullopt;
  return static_cast<int64_t>(combo);
}

bool mlir::pallas::gpu::providesLocally(const Layout &have,
                                        const Layout &want) {
  if (have.shape != want.shape || have.lanes != want.lanes ||
      have.warps != want.warps)
    return false;
  Echelon span;
  for (auto [i, b] : llvm::enumerate(have.regs))
    span.insert(b, i);
  return llvm::all_of(want.regs,
                      [&](uint64_t b) { return span.reduce(b).first == 0; });
}

llvm::SmallVector<int64_t> mlir::pallas::gpu::registerMap(const Layout &have,
                                                          const Layout &want) {
  Echelon span;
  for (auto [i, b] : llvm::enumerate(have.regs))
    span.insert(b, i);
  llvm::SmallVector<int64_t> map;
  for (int64_t r = 0; r < want.numRegs(); ++r) {
    auto [rest, combo] = span.reduce(want.regLinear(r));
    assert(rest == 0 && "register not held locally");
    (void)rest;
    map.push_back(static_cast<int64_t>(combo));
  }
  return map;
}

uint64_t mlir::pallas::gpu::projectLinear(const Layout &layout, uint64_t lin,
                                          llvm::ArrayRef<int64_t> dims,
                                          llvm::ArrayRef<int64_t> newShape) {
  uint64_t v = 0;
  int64_t shift = 0;
  for (int64_t j = static_cast<int64_t>(dims.size()) - 1; j >= 0; --j) {
    if (dims[j] >= 0)
      v |= static_cast<uint64_t>(layout.coord(lin, dims[j])) << shift;
    shift += log2Exact(newShape[j]);
  }
  return v;
}
