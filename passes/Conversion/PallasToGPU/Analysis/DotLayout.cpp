//===- DotLayout.cpp - the matrix instruction of a dot ----------*- C++ -*-===//
//
// Choosing a dot's instruction is choosing its accumulator layout: wgmma
// (sm_90a), mma.sync (sm_80+, f16/bf16 and tf32), MFMA (CDNA) or WMMA (RDNA) tiles over
// the warps, from the chip's matrix instructions in the GPU target table;
// the SIMT fallback otherwise. Layout assignment (LayoutAssignment.cpp)
// calls this for every dot; the emitters follow the chosen layout.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/Dot/DotUtils.h"
#include "passes/Conversion/PallasToGPU/Analysis/LayoutAssignment.h"

#include "dialects/Pallas/IR/PallasOps.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::gpu;
using namespace mlir::pallas::gpu::detail;

/// Whether a value computed from a dot's result is reduced along the dot's
/// columns somewhere in the kernel (a softmax over the scores): then every
/// dot keeps whole rows inside one warp.
static bool rowsAreReduced(func::FuncOp kernel) {
  bool reduced = false;
  kernel.walk([&](Operation *op) {
    if (!isa<linalg::MatmulOp>(op))
      return;
    SmallVector<Value> work = {op->getResult(0)};
    DenseSet<Value> seen;
    while (!work.empty() && !reduced) {
      Value v = work.pop_back_val();
      if (!seen.insert(v).second)
        continue;
      for (Operation *user : v.getUsers()) {
        if (auto r = dyn_cast<linalg::ReduceOp>(user)) {
          auto t = cast<RankedTensorType>(v.getType());
          if (t.getRank() == 2 && llvm::is_contained(r.getDimensions(), 1))
            reduced = true;
        } else if (isa<linalg::GenericOp>(user) &&
                   cast<linalg::GenericOp>(user).getNumReductionLoops() == 0) {
          for (Value r : user->getResults())
            work.push_back(r);
        }
      }
    }
  });
  return reduced;
}

int LayoutAssignment::dotLayout(Operation *op) {
  DotShape s = dotShape(op);
  // wgmma (sm_90a): warpgroups of 4 warps, 64-row slabs; warpgroups along M
  // first, the rest along N (whole rows per warp when rows are reduced).
  using pallasc::MatrixElemType;
  using pallasc::MatrixInstrKind;
  if (kc.has(MatrixInstrKind::Wgmma) && mmaTypes(s) && kc.numWarps % 4 == 0 &&
      s.k % 16 == 0) {
    if (!result.rowsReduced)
      result.rowsReduced = rowsAreReduced(kernel) ? 1 : 0;
    int64_t groups = kc.numWarps / 4;
    for (int64_t gm = groups; gm >= 1; gm /= 2) {
      int64_t gn = groups / gm;
      if (s.m % (64 * gm) || s.n % (8 * gn) || (*result.rowsReduced && gn != 1))
        continue;
      return intern(fragmentLayout({MatrixInstrKind::Wgmma},
                                   pallasc::MatrixOperand::C, s.m, s.n, gm,
                                   gn));
    }
  }
  // One warp's tile (16 x 8 for mma.sync.m16n8k16, 16 x 16 for MFMA and
  // WMMA), from the chip's f16 instruction of its family.
  bool mfma = kc.has(MatrixInstrKind::Mfma);
  bool wmma = kc.has(MatrixInstrKind::Wmma);
  const pallasc::MatrixInstr *frag = kc.target->findMatrixInstr(
      mfma   ? MatrixInstrKind::Mfma
      : wmma ? MatrixInstrKind::Wmma
             : MatrixInstrKind::MmaSync,
      MatrixElemType::F16);
  // MFMA: the chip's instruction for the dot's operand type and K (gfx950:
  // 16x16x32 where K allows it).
  if (mfma)
    if (const pallasc::MatrixInstr *entry = mfmaEntry(*kc.target, s))
      frag = entry;
  const pallasc::MatrixInstr *tf32Frag = kc.target->findMatrixInstr(
      MatrixInstrKind::MmaSync, MatrixElemType::TF32);
  int64_t tileN = frag ? frag->n : 8;
  bool tf32 = tf32Frag && tf32Types(op, s);
  if (((frag && mmaTypes(s) && s.k % frag->k == 0) ||
       (tf32 && s.k % tf32Frag->k == 0)) &&
      s.m % 16 == 0 && s.n % tileN == 0) {
    if (!result.rowsReduced)
      result.rowsReduced = rowsAreReduced(kernel) ? 1 : 0;
    // Whole rows per warp when rows are reduced; otherwise the squarest
    // warp tiles (operand tiles read from shared memory by fewer warps).
    // When M is too small to give every warp whole rows (a 16-row dot under
    // 4 warps), the warps go along N as Triton's rule has it: the row
    // reductions then cross warps through shared memory, which costs far
    // less than giving up the tensor cores for the SIMT loop.
    auto chooseWm = [&](bool wholeRows) {
      int64_t bestWm = 0;
      for (int64_t wm = 1; wm <= kc.numWarps; wm *= 2) {
        int64_t wn = kc.numWarps / wm;
        if (s.m % (16 * wm) || s.n % (tileN * wn))
          continue;
        if (wholeRows && wn != 1)
          continue;
        auto skew = [&](int64_t m) {
          int64_t a = s.m / m, b = s.n / (kc.numWarps / m);
          return a > b ? a / b : b / a;
        };
        if (!bestWm || skew(wm) < skew(bestWm) ||
            (skew(wm) == skew(bestWm) && wm > bestWm))
          bestWm = wm;
      }
      return bestWm;
    };
    int64_t bestWm = chooseWm(*result.rowsReduced != 0);
    if (!bestWm && *result.rowsReduced)
      bestWm = chooseWm(false);
    if (bestWm && wmma)
      return intern(wmmaInstr(*kc.target)
                        .cLayout(s.m, s.n, bestWm, kc.numWarps / bestWm));
    if (bestWm)
      return intern(fragmentLayout(
          {mfma ? MatrixInstrKind::Mfma : MatrixInstrKind::MmaSync},
          pallasc::MatrixOperand::C, s.m, s.n, bestWm,
          kc.numWarps / bestWm));
  }
  return defaultLayout(cast<RankedTensorType>(op->getResult(0).getType()));
}
