// Unit tests of the choice of a dot's MFMA instruction
// (passes/Conversion/PallasToGPU/DotUtils.h, mfmaEntry / mfmaInstr): the
// k step and the operand fragments follow the chip's entry of the GPU
// target table and the dot's K.

#include "passes/Conversion/PallasToGPU/Dot/DotUtils.h"

#include "chips/GpuTarget.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

#include <catch2/catch.hpp>

using namespace mlir;
using namespace mlir::pallas::gpu;
using namespace mlir::pallas::gpu::detail;

namespace {
DotShape shape(MLIRContext &ctx, int64_t k, Type operand) {
  DotShape s;
  s.m = 128;
  s.n = 128;
  s.k = k;
  s.a = s.b = operand;
  s.c = Float32Type::get(&ctx);
  return s;
}
} // namespace

TEST_CASE("MFMA instruction: 16x16x32 on gfx950 where K allows it",
          "[dot]") {
  MLIRContext ctx;
  Type bf16 = BFloat16Type::get(&ctx), f16 = Float16Type::get(&ctx);
  const pallasc::GpuTarget &gfx950 = *pallasc::lookupGpuChip("gfx950");
  const pallasc::GpuTarget &gfx942 = *pallasc::lookupGpuChip("gfx942");
  for (Type t : {bf16, f16}) {
    // K = 128 on gfx950: 16x16x32, 8 elements per lane, 4 accumulators.
    WaveMatrixInstr i = mfmaInstr(gfx950, shape(ctx, 128, t));
    CHECK(i.k == 32);
    CHECK(i.aRegs == 8);
    CHECK(i.bRegs == 8);
    CHECK(i.cRegs == 4);
    const pallasc::MatrixInstr *e = mfmaEntry(gfx950, shape(ctx, 128, t));
    REQUIRE(e);
    CHECK(e->operand == (t.isBF16() ? pallasc::MatrixElemType::BF16
                                    : pallasc::MatrixElemType::F16));
    // The A fragment of k tile 1 (K = 32..63) of the first 16 rows starts
    // at register 8 and is 8 consecutive registers.
    Layout a = i.aLayout(128, 128, 2, 2);
    CHECK(*registerOf(a, 32) == 8);
    for (int64_t j = 0; j < 8; ++j)
      CHECK(*registerOf(a, 32 + j) == 8 + j);
    Layout b = i.bLayout(128, 128, 2, 2);
    CHECK(*registerOf(b, uint64_t(32) << 7) == 8);
    // K = 48: not a multiple of 32, so CDNA3's 16x16x16.
    WaveMatrixInstr i16 = mfmaInstr(gfx950, shape(ctx, 48, t));
    CHECK(i16.k == 16);
    CHECK(i16.aRegs == 4);
    // gfx942: 16x16x16 at every K.
    CHECK(mfmaInstr(gfx942, shape(ctx, 128, t)).k == 16);
    CHECK(mfmaInstr(gfx942, shape(ctx, 128, t))
              .aLayout(128, 128, 2, 2)
              .sameDistribution(fragmentLayout(
                  {pallasc::MatrixInstrKind::Mfma, 16},
                  pallasc::MatrixOperand::A, 128, 128, 2, 2)));
  }
  // No MFMA of f32 operands, nor for K = 8.
  CHECK(!mfmaEntry(gfx950, shape(ctx, 128, Float32Type::get(&ctx))));
  CHECK(!mfmaEntry(gfx950, shape(ctx, 8, bf16)));
}
