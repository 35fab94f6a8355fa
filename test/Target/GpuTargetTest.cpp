//===- GpuTargetTest.cpp - the GPU target table ---------------------------===//

#include "chips/GpuTarget.h"

#include <catch2/catch.hpp>

#include <set>

using namespace pallasc;

TEST_CASE("GPU target names parse to their table entries", "[gputarget]") {
  std::string error;
  const GpuTarget *t = parseGpuTarget("cuda:sm_90a", error);
  REQUIRE(t);
  CHECK(std::string(t->chip) == "sm_90a");
  CHECK(t->isNvidia());
  CHECK(t->computeCapability == 90);
  CHECK(t->targetName() == "cuda:sm_90a");
  t = parseGpuTarget("rocm:gfx942", error);
  REQUIRE(t);
  CHECK(t->isAmd());
  CHECK(t->lanesPerWarp == 64);
  CHECK(t->laneBits() == 6);
  CHECK(t->maxWarpsPerBlock() == 16);
  CHECK(lookupGpuChip("sm_80") == lookupGpuTarget("cuda:sm_80"));
}

TEST_CASE("A wrong GPU target name lists every valid one", "[gputarget]") {
  // Every entry of the table, in its order (the lit tests of the messages
  // that carry this list check its shape only, so that a chip added to the
  // table is one entry there).
  std::string targets, chips;
  for (const GpuTarget &t : allGpuTargets()) {
    targets += (targets.empty() ? "" : ", ") + t.targetName();
    chips += (chips.empty() ? "" : ", ") + std::string(t.chip);
  }
  CHECK(targets.find("cuda:sm_75, cuda:sm_80, ") == 0);
  CHECK(targets.find("rocm:gfx90a, rocm:gfx942") != std::string::npos);
  std::string error;
  CHECK(!parseGpuTarget("cuda:sm_50", error));
  CHECK(error == "unknown GPU target 'cuda:sm_50'; expected one of " + targets);
  // CUDA 13's ptxas compiles nothing older than sm_75; RDNA2 has no WMMA.
  CHECK(!lookupGpuTarget("cuda:sm_70"));
  CHECK(!lookupGpuTarget("rocm:gfx1030"));
  CHECK(!lookupGpuTarget("rocm:gfx940"));
  // The vendor prefix must match the chip.
  CHECK(!parseGpuTarget("rocm:sm_80", error));
  CHECK(!parseGpuTarget("cuda:gfx942", error));
  CHECK(!parseGpuTarget("sm_80", error));
  CHECK(!parseGpuChip("gfx1030", error));
  CHECK(error == "unknown GPU chip 'gfx1030'; expected one of " + chips);
  CHECK(hasGpuTargetPrefix("rocm:gfx1030"));
  CHECK(!hasGpuTargetPrefix("tpu"));
}

TEST_CASE("Every GPU target entry is consistent", "[gputarget]") {
  std::set<std::string> names;
  for (const GpuTarget &t : allGpuTargets()) {
    INFO(t.targetName());
    CHECK(names.insert(t.targetName()).second);
    CHECK((t.lanesPerWarp == 32 || t.lanesPerWarp == 64));
    CHECK(t.maxThreadsPerBlock % t.lanesPerWarp == 0);
    CHECK(t.staticSharedBytesLimit <= t.maxSharedBytesPerBlock);
    CHECK(t.staticSharedBytesLimit > 0);
    CHECK(!std::string(t.family).empty());
    for (const MatrixInstr &i : t.matrixInstrs) {
      CHECK(i.m > 0);
      CHECK(i.n > 0);
      CHECK(i.k > 0);
      CHECK(i.acc == MatrixElemType::F32);
      CHECK((i.nStep == 0 || i.n % i.nStep == 0));
      // Each family belongs to one vendor.
      CHECK((i.kind == MatrixInstrKind::Mfma ||
             i.kind == MatrixInstrKind::Wmma) == t.isAmd());
      // WMMA says how many A/B elements a lane holds; the others do not.
      CHECK((i.kind == MatrixInstrKind::Wmma) == (i.operandsPerLane != 0));
      // WMMA is wave32's, MFMA wave64's.
      if (i.kind == MatrixInstrKind::Wmma)
        CHECK(t.lanesPerWarp == 32);
      if (i.kind == MatrixInstrKind::Mfma)
        CHECK(t.lanesPerWarp == 64);
    }
    if (t.isNvidia()) {
      CHECK(t.computeCapability >= 75);
      CHECK(std::string(t.llvmFeatures).rfind("+ptx", 0) == 0);
      CHECK(t.codeObjectVersions.empty());
      CHECK(t.staticSharedBytesLimit == 48 * 1024);
    } else {
      CHECK(t.computeCapability == 0);
      CHECK(t.supportsCodeObjectVersion(t.defaultCodeObjectVersion));
      CHECK(!t.hasCpAsync);
      CHECK(!t.hasTma);
    }
    // TMA feeds wgmma; wgmma needs it.
    if (t.hasMatrixInstr(MatrixInstrKind::Wgmma))
      CHECK(t.hasTma);
  }
}

TEST_CASE("Matrix instruction shapes of the chips", "[gputarget]") {
  const GpuTarget *sm80 = lookupGpuChip("sm_80");
  REQUIRE(sm80);
  const MatrixInstr *mma =
      sm80->findMatrixInstr(MatrixInstrKind::MmaSync, MatrixElemType::BF16);
  REQUIRE(mma);
  CHECK((mma->m == 16 && mma->n == 8 && mma->k == 16));
  const MatrixInstr *tf32 =
      sm80->findMatrixInstr(MatrixInstrKind::MmaSync, MatrixElemType::TF32);
  REQUIRE(tf32);
  CHECK(tf32->k == 8);
  CHECK(!sm80->hasMatrixInstr(MatrixInstrKind::Wgmma));
  CHECK(lookupGpuChip("sm_90a")->hasMatrixInstr(MatrixInstrKind::Wgmma));
  CHECK(!lookupGpuChip("sm_90")->hasMatrixInstr(MatrixInstrKind::Wgmma));
  // Turing: no mma.sync of these shapes (m16n8k16 needs sm_80).
  CHECK(lookupGpuChip("sm_75")->matrixInstrs.empty());
  CHECK(!lookupGpuChip("sm_75")->hasCpAsync);
  // wgmma is sm_90a's alone; Blackwell keeps mma.sync, cp.async and TMA.
  for (const char *chip : {"sm_86", "sm_89", "sm_100", "sm_100a", "sm_120"}) {
    INFO(chip);
    const GpuTarget *t = lookupGpuChip(chip);
    REQUIRE(t);
    CHECK(t->findMatrixInstr(MatrixInstrKind::MmaSync, MatrixElemType::F16));
    CHECK(!t->hasMatrixInstr(MatrixInstrKind::Wgmma));
    CHECK(t->hasCpAsync);
  }
  CHECK(lookupGpuChip("sm_100a")->hasTma);
  CHECK(!lookupGpuChip("sm_89")->hasTma);
  // f32x2 arithmetic (what LLVM's SLP vectorizer can pack f32 pairs into)
  // from Blackwell on.
  for (const char *chip : {"sm_75", "sm_80", "sm_89", "sm_90", "sm_90a"})
    CHECK_FALSE(lookupGpuChip(chip)->hasPackedF32);
  for (const char *chip : {"sm_100", "sm_100a", "sm_120"})
    CHECK(lookupGpuChip(chip)->hasPackedF32);
  CHECK_FALSE(lookupGpuChip("gfx942")->hasPackedF32);
  // The PTX ISA version each chip needs in LLVM 22's NVPTX.
  CHECK(std::string(lookupGpuChip("sm_90a")->llvmFeatures) == "+ptx80");
  CHECK(std::string(lookupGpuChip("sm_100a")->llvmFeatures) == "+ptx86");
  CHECK(std::string(lookupGpuChip("sm_120")->llvmFeatures) == "+ptx87");
  const MatrixInstr *mfma = lookupGpuChip("gfx90a")->findMatrixInstr(
      MatrixInstrKind::Mfma, MatrixElemType::F16);
  REQUIRE(mfma);
  CHECK((mfma->m == 16 && mfma->n == 16 && mfma->k == 16));
  CHECK(lookupGpuChip("sm_80")->maxSharedBytesPerBlock == 166912);
  CHECK(lookupGpuChip("sm_90a")->maxSharedBytesPerBlock == 232448);
  CHECK(lookupGpuChip("gfx942")->maxSharedBytesPerBlock == 65536);
  CHECK(lookupGpuChip("sm_75")->maxSharedBytesPerBlock == 65536);
  CHECK(lookupGpuChip("sm_86")->maxSharedBytesPerBlock == 101376);
  CHECK(lookupGpuChip("sm_120")->maxSharedBytesPerBlock == 101376);
  CHECK(lookupGpuChip("gfx950")->maxSharedBytesPerBlock == 163840);
  // CDNA4: 16x16x32 first (preferred), CDNA3's 16x16x16 after it for the
  // dots whose K is not a multiple of 32; CDNA2/3 have 16x16x16 alone.
  for (MatrixElemType e : {MatrixElemType::F16, MatrixElemType::BF16}) {
    const MatrixInstr *cdna4 =
        lookupGpuChip("gfx950")->findMatrixInstr(MatrixInstrKind::Mfma, e);
    REQUIRE(cdna4);
    CHECK((cdna4->m == 16 && cdna4->n == 16 && cdna4->k == 32));
    int shapes = 0;
    for (const MatrixInstr &i : lookupGpuChip("gfx950")->matrixInstrs)
      if (i.kind == MatrixInstrKind::Mfma && i.operand == e)
        shapes |= i.k == 32 ? 1 : i.k == 16 ? 2 : 4;
    CHECK(shapes == 3);
    for (const char *chip : {"gfx90a", "gfx942"})
      for (const MatrixInstr &i : lookupGpuChip(chip)->matrixInstrs)
        CHECK(i.k == 16);
  }
  // RDNA3/RDNA4: wave32, 64 KiB LDS, WMMA 16x16x16 with 16 (gfx11) or 8
  // (gfx12) A/B elements per lane, no MFMA.
  for (auto [chip, perLane] :
       {std::pair{"gfx1100", 16}, {"gfx1101", 16}, {"gfx1201", 8}}) {
    INFO(chip);
    const GpuTarget *t = lookupGpuChip(chip);
    REQUIRE(t);
    CHECK(t->lanesPerWarp == 32);
    CHECK(t->laneBits() == 5);
    CHECK(t->maxWarpsPerBlock() == 32);
    CHECK(t->maxSharedBytesPerBlock == 65536);
    CHECK(!t->hasMatrixInstr(MatrixInstrKind::Mfma));
    for (MatrixElemType e : {MatrixElemType::F16, MatrixElemType::BF16}) {
      const MatrixInstr *w = t->findMatrixInstr(MatrixInstrKind::Wmma, e);
      REQUIRE(w);
      CHECK((w->m == 16 && w->n == 16 && w->k == 16));
      CHECK(w->operandsPerLane == perLane);
    }
    CHECK(!t->findMatrixInstr(MatrixInstrKind::Wmma, MatrixElemType::TF32));
  }
}
