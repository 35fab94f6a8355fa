//===- Wmma.cpp - RDNA's v_wmma tiles ---------------------------*- C++ -*-===//
//
// Dots on AMD RDNA3 (gfx11) and RDNA4 (gfx12): f16/bf16 x f16/bf16 -> f32
// as `v_wmma_f32_16x16x16_{f16,bf16}` (amdgpu.wmma, lowered by upstream's
// AMDGPUToROCDL to llvm.amdgcn.wmma.f32.16x16x16.{f16,bf16}) on wave32
// wavefronts, one 16 x 16 x 16 tile per instruction. The two generations
// differ in their fragments (chips/MatrixFragments.cpp): on RDNA3 a lane holds a
// whole row of A (column of B), 16 elements, the upper half-wave repeating
// the lower one; on RDNA4 half of it, 8 elements, the upper half-wave
// holding the other half. The chip's entry of the GPU target table says
// which (MatrixInstr::operandsPerLane).
//
// The dot itself (operands from registers, staged in LDS or streamed one k
// chunk at a time; the k loop; the accumulator in the C layout) is the one
// MFMA uses (Mfma.cpp, DotLowering::waveMatrix, given a WaveMatrixInstr):
// only the fragments and the op are WMMA's. Other element types and shapes
// take the SIMT dot (DotLayout.cpp picks the WMMA accumulator only for
// f16/bf16 operands, f32 results and M, N, K multiples of 16).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/Dot/DotEmitters.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"

using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::gpu;
using namespace mlir::pallas::gpu::detail;

WaveMatrixInstr
mlir::pallas::gpu::detail::wmmaInstr(const pallasc::GpuTarget &target) {
  const pallasc::MatrixInstr *entry = target.findMatrixInstr(
      pallasc::MatrixInstrKind::Wmma, pallasc::MatrixElemType::F16);
  // RDNA3 (16 per lane) unless the table says otherwise.
  int64_t perLane = entry && entry->operandsPerLane ? entry->operandsPerLane
                                                    : 16;
  WaveMatrixInstr i;
  i.aRegs = i.bRegs = perLane;
  i.cRegs = 8; // 256 f32 results over 32 lanes, on both generations
  i.fragments = {pallasc::MatrixInstrKind::Wmma, 16, perLane};
  i.create = [](OpBuilder &b, Location loc, Value a, Value bv, Value c) {
    return amdgpu::WMMAOp::create(b, loc, c.getType(), b.getI32IntegerAttr(16),
                                  b.getI32IntegerAttr(16),
                                  b.getI32IntegerAttr(16), a, bv, c)
        .getResult();
  };
  return i;
}

LogicalResult DotLowering::wmma() { return waveMatrix(wmmaInstr(*kc.target)); }
