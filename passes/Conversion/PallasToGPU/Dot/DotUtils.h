//===- DotUtils.h - helpers of the dot lowering -----------------*- C++ -*-===//
//
// Shapes and element types of a dot, casts, and shared-memory pointers,
// shared by the dot files (DotLayout, Dot, DotStaging and the instruction
// families of DotEmitters.h).
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_CONVERSION_PALLASTOGPU_DOT_DOTUTILS_H
#define PALLASC_PASSES_CONVERSION_PALLASTOGPU_DOT_DOTUTILS_H

#include "passes/Conversion/PallasToGPU/Distribute.h"

#include "dialects/Pallas/IR/PallasOps.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::pallas::gpu::detail {

struct DotShape {
  int64_t batch = 0; ///< 0: not batched
  int64_t m, n, k;
  Type a, b, c;
};

inline DotShape dotShape(Operation *op) {
  auto lin = cast<linalg::LinalgOp>(op);
  auto at = cast<RankedTensorType>(lin.getDpsInputs()[0].getType());
  auto bt = cast<RankedTensorType>(lin.getDpsInputs()[1].getType());
  auto ct = cast<RankedTensorType>(op->getResult(0).getType());
  DotShape s;
  int64_t r = ct.getRank();
  if (r == 3)
    s.batch = ct.getDimSize(0);
  s.m = ct.getDimSize(r - 2);
  s.n = ct.getDimSize(r - 1);
  s.k = at.getDimSize(r - 1);
  s.a = at.getElementType();
  s.b = bt.getElementType();
  s.c = ct.getElementType();
  return s;
}

inline bool mmaTypes(const DotShape &s) {
  return s.batch == 0 && s.a == s.b && (s.a.isF16() || s.a.isBF16()) &&
         s.c.isF32();
}

/// f32 x f32 -> f32 at a precision that allows tf32 (default or high).
inline bool tf32Types(Operation *op, const DotShape &s) {
  if (s.batch != 0 || !s.a.isF32() || !s.b.isF32() || !s.c.isF32())
    return false;
  auto p = op->getAttrOfType<DotPrecisionAttr>(kDotPrecisionAttrName);
  return !p || p.getValue() != DotPrecision::Highest;
}


/// The chip's MFMA instruction for a dot: the first entry of the target
/// table with the dot's operand type (f16 or bf16) whose k divides the
/// dot's K (gfx950: 16x16x32, else 16x16x16), or null.
inline const pallasc::MatrixInstr *mfmaEntry(const pallasc::GpuTarget &target,
                                             const DotShape &s) {
  if (!mmaTypes(s))
    return nullptr;
  pallasc::MatrixElemType t = s.a.isBF16() ? pallasc::MatrixElemType::BF16
                                           : pallasc::MatrixElemType::F16;
  for (const pallasc::MatrixInstr &i : target.matrixInstrs)
    if (i.kind == pallasc::MatrixInstrKind::Mfma && i.operand == t &&
        i.k > 0 && s.k % i.k == 0)
      return &i;
  return nullptr;
}

/// A matrix instruction whose operands and accumulator are in one
/// wavefront's registers, 16 x 16 x `k` at a time (AMD's MFMA and WMMA):
/// the operand and accumulator layouts of an [M, K] x [K, N] dot over `wm` x
/// `wn` wavefronts, how many consecutive registers of them one
/// instruction's A, B and C fragments are, and the op. Mfma.cpp
/// (DotLowering::waveMatrix) emits the dot for either, `k` of K per step.
struct WaveMatrixInstr {
  int64_t k = 16;
  int64_t aRegs = 4, bRegs = 4, cRegs = 4;
  /// The instruction's entries of the fragment table.
  FragmentSelect fragments;
  Layout aLayout(int64_t m, int64_t k, int64_t wm, int64_t wn) const {
    return fragmentLayout(fragments, pallasc::MatrixOperand::A, m, k, wm, wn);
  }
  Layout bLayout(int64_t k, int64_t n, int64_t wm, int64_t wn) const {
    return fragmentLayout(fragments, pallasc::MatrixOperand::B, k, n, wm, wn);
  }
  Layout cLayout(int64_t m, int64_t n, int64_t wm, int64_t wn) const {
    return fragmentLayout(fragments, pallasc::MatrixOperand::C, m, n, wm, wn);
  }
  /// `d = a * b + c` on vector<aRegs x T>, vector<bRegs x T> and
  /// vector<cRegs x f32>.
  std::function<Value(OpBuilder &, Location, Value a, Value b, Value c)>
      create;
};

/// v_mfma_f32_16x16x{16,32}_{f16,bf16} (CDNA, wave64; Mfma.cpp): the
/// chip's entry for the dot (mfmaEntry), 16x16x16 when it has none.
WaveMatrixInstr mfmaInstr(const pallasc::GpuTarget &target,
                          const DotShape &s);
/// v_wmma_f32_16x16x16_{f16,bf16} (RDNA3/RDNA4, wave32) as the chip's WMMA
/// entry describes it (Wmma.cpp).
WaveMatrixInstr wmmaInstr(const pallasc::GpuTarget &target);
/// The instruction of a dot whose accumulator layout is of family MfmaC
/// or WmmaC.
inline std::optional<WaveMatrixInstr>
waveMatrixInstr(const Layout &c, const pallasc::GpuTarget &target,
                const DotShape &s) {
  if (c.family == Layout::Family::MfmaC)
    return mfmaInstr(target, s);
  if (c.family == Layout::Family::WmmaC)
    return wmmaInstr(target);
  return std::nullopt;
}

/// The dimension a layout's first register basis walks (where each thread's
/// elements are contiguous); the last one for layouts without registers.
inline int64_t contiguousDim(const Layout &l) {
  int64_t contiguous = l.rank() - 1;
  if (!l.regs.empty())
    for (int64_t d = 0; d < l.rank(); ++d)
      if (l.coord(l.regs[0], d))
        contiguous = d;
  return contiguous;
}

/// An i32 shared-memory address as the pointer the NVVM ops take.
inline Value sharedPtr(OpBuilder &b, Location loc, Value addr) {
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), addr);
}

/// The same address in the shared::cluster window (a CTA's own shared
/// memory has the same address in both), for TMA destinations.
inline Value clusterPtr(OpBuilder &b, Location loc, Value addr) {
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 7), addr);
}

/// Inline assembly `text` with side effects (it stays where it is emitted,
/// between the barriers around it), returning `resType`.
inline Value inlineAsm(OpBuilder &b, Location loc, Type resType,
                       ValueRange operands, StringRef text,
                       StringRef constraints) {
  return LLVM::InlineAsmOp::create(
             b, loc, resType, operands, b.getStringAttr(text),
             b.getStringAttr(constraints), b.getUnitAttr(), nullptr,
             LLVM::TailCallKindAttr::get(
                 b.getContext(), LLVM::tailcallkind::TailCallKind::None),
             nullptr, nullptr)
      .getResult(0);
}

} // namespace mlir::pallas::gpu::detail

#endif // PALLASC_PASSES_CONVERSION_PALLASTOGPU_DOT_DOTUTILS_H
