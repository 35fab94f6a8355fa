//===- GpuTarget.cpp - the GPU target table ---------------------*- C++ -*-===//
//
// The table: one entry per chip. To add a chip, add its entry to
// `kTargets` (and, when it brings a new matrix instruction family, a
// lowering for that family in passes/Conversion/PallasToGPU).
//
//===----------------------------------------------------------------------===//

#include "chips/GpuTarget.h"

#include <algorithm>

namespace pallasc {

namespace {

using K = MatrixInstrKind;
using T = MatrixElemType;

// mma.sync.aligned.m16n8k16 (f16/bf16) and m16n8k8 (tf32), f32 accumulators.
constexpr MatrixInstr kMmaSync[] = {
    {K::MmaSync, 16, 8, 16, T::F16, T::F32},
    {K::MmaSync, 16, 8, 16, T::BF16, T::F32},
    {K::MmaSync, 16, 8, 8, T::TF32, T::F32},
};

// sm_90a: wgmma.mma_async m64nNk16 (N = 8..256 in steps of 8) and mma.sync.
constexpr MatrixInstr kHopperArchSpecific[] = {
    {K::Wgmma, 64, 256, 16, T::F16, T::F32, 8},
    {K::Wgmma, 64, 256, 16, T::BF16, T::F32, 8},
    {K::MmaSync, 16, 8, 16, T::F16, T::F32},
    {K::MmaSync, 16, 8, 16, T::BF16, T::F32},
    {K::MmaSync, 16, 8, 8, T::TF32, T::F32},
};

// CDNA2/CDNA3: v_mfma_f32_16x16x16f16 and v_mfma_f32_16x16x16bf16_1k.
constexpr MatrixInstr kMfmaCdna[] = {
    {K::Mfma, 16, 16, 16, T::F16, T::F32},
    {K::Mfma, 16, 16, 16, T::BF16, T::F32},
};

// CDNA4: v_mfma_f32_16x16x32_{f16,bf16} (8 A/B elements per lane) for dots
// whose K is a multiple of 32; CDNA3's 16x16x16 forms for the others.
constexpr MatrixInstr kMfmaCdna4[] = {
    {K::Mfma, 16, 16, 32, T::F16, T::F32},
    {K::Mfma, 16, 16, 32, T::BF16, T::F32},
    {K::Mfma, 16, 16, 16, T::F16, T::F32},
    {K::Mfma, 16, 16, 16, T::BF16, T::F32},
};

// RDNA3 (gfx11): v_wmma_f32_16x16x16_{f16,bf16} on wave32, 16 A/B elements
// per lane; RDNA4 (gfx12): their _gfx12 forms, 8 per lane.
constexpr MatrixInstr kWmmaRdna3[] = {
    {K::Wmma, 16, 16, 16, T::F16, T::F32, 0, 16},
    {K::Wmma, 16, 16, 16, T::BF16, T::F32, 0, 16},
};
constexpr MatrixInstr kWmmaRdna4[] = {
    {K::Wmma, 16, 16, 16, T::F16, T::F32, 0, 8},
    {K::Wmma, 16, 16, 16, T::BF16, T::F32, 0, 8},
};

constexpr int kCodeObjectVersions[] = {4, 5, 6};

constexpr int64_t KiB = 1024;

// `ptx` is the PTX ISA version LLVM 22's NVPTX back end needs for the chip
// (NVPTX.td): 8.0 up to sm_90a (kept there, so artifacts stay the same),
// 8.6 for sm_100/sm_100a, 8.7 for sm_120. CUDA 13's ptxas reads PTX up to
// 9.0 and compiles for sm_75 and newer only.
GpuTarget nvidia(const char *chip, const char *family, int cc,
                 int64_t maxShared, TableSpan<MatrixInstr> instrs,
                 bool cpAsync, bool ldmatrix, bool tma, const char *ptx) {
  GpuTarget t;
  t.chip = chip;
  t.vendor = GpuVendor::Nvidia;
  t.family = family;
  t.computeCapability = cc;
  t.lanesPerWarp = 32;
  t.maxSharedBytesPerBlock = maxShared;
  t.staticSharedBytesLimit = 48 * KiB;
  t.matrixInstrs = instrs;
  t.hasCpAsync = cpAsync;
  t.hasLdmatrix = ldmatrix;
  t.hasTma = tma;
  t.hasPackedF32 = cc >= 100;
  t.llvmFeatures = ptx;
  return t;
}

// `lanes`: 64 on CDNA (wave64 only), 32 on RDNA (compiled as wave32, the
// mode its WMMA instructions are written for).
GpuTarget amd(const char *chip, const char *family, int64_t lds,
              TableSpan<MatrixInstr> instrs, int64_t lanes = 64) {
  GpuTarget t;
  t.chip = chip;
  t.vendor = GpuVendor::Amd;
  t.family = family;
  t.lanesPerWarp = lanes;
  t.maxSharedBytesPerBlock = lds;
  t.staticSharedBytesLimit = lds;
  t.matrixInstrs = instrs;
  t.codeObjectVersions = kCodeObjectVersions;
  t.defaultCodeObjectVersion = 5;
  return t;
}

// The table. Shared memory per block with the opt-in (CUDA programming
// guide, "Technical Specifications per Compute Capability"): 64 KiB on
// sm_75, 163 KiB on sm_80, 99 KiB on sm_86/sm_89/sm_120, 227 KiB on
// sm_90/sm_100. LDS per workgroup: 64 KiB on CDNA2/3 and RDNA3/4, 160 KiB
// on CDNA4. Wavefronts: 64 lanes on CDNA, 32 on RDNA. Not here (refused
// with the list): sm_70 and older (CUDA 13's ptxas has no code generation
// for them), gfx940/gfx941 (no longer processors of LLVM 22).
const GpuTarget kTargets[] = {
    nvidia("sm_75", "Turing", 75, 64 * KiB, {}, false, true, false,
           "+ptx80"),
    nvidia("sm_80", "Ampere", 80, 163 * KiB, kMmaSync, true, true, false,
           "+ptx80"),
    nvidia("sm_86", "Ampere", 86, 99 * KiB, kMmaSync, true, true, false,
           "+ptx80"),
    nvidia("sm_89", "Ada", 89, 99 * KiB, kMmaSync, true, true, false,
           "+ptx80"),
    nvidia("sm_90", "Hopper", 90, 227 * KiB, kMmaSync, true, true, true,
           "+ptx80"),
    nvidia("sm_90a", "Hopper", 90, 227 * KiB, kHopperArchSpecific, true,
           true, true, "+ptx80"),
    // Blackwell: wgmma is sm_90a only (Blackwell's tcgen05 is not lowered);
    // mma.sync, cp.async and TMA remain.
    nvidia("sm_100", "Blackwell", 100, 227 * KiB, kMmaSync, true, true, true,
           "+ptx86"),
    nvidia("sm_100a", "Blackwell", 100, 227 * KiB, kMmaSync, true, true,
           true, "+ptx86"),
    nvidia("sm_120", "Blackwell", 120, 99 * KiB, kMmaSync, true, true, true,
           "+ptx87"),
    amd("gfx90a", "CDNA2", 64 * KiB, kMfmaCdna),
    amd("gfx942", "CDNA3", 64 * KiB, kMfmaCdna),
    // MI355: 16x16x32 MFMA (16x16x16 where K is not a multiple of 32).
    amd("gfx950", "CDNA4", 160 * KiB, kMfmaCdna4),
    // Radeon RX 7900 and RX 7800/7700 (RDNA3), RX 9070 (RDNA4): wave32,
    // WMMA.
    amd("gfx1100", "RDNA3", 64 * KiB, kWmmaRdna3, 32),
    amd("gfx1101", "RDNA3", 64 * KiB, kWmmaRdna3, 32),
    amd("gfx1201", "RDNA4", 64 * KiB, kWmmaRdna4, 32),
};

} // namespace

int64_t GpuTarget::laneBits() const {
  int64_t bits = 0;
  while ((int64_t(1) << (bits + 1)) <= lanesPerWarp)
    ++bits;
  return bits;
}

const char *GpuTarget::vendorPrefix() const {
  return isNvidia() ? "cuda" : "rocm";
}

const char *GpuTarget::vendorName() const {
  return isNvidia() ? "CUDA" : "AMD";
}

std::string GpuTarget::targetName() const {
  return std::string(vendorPrefix()) + ":" + chip;
}

const MatrixInstr *GpuTarget::findMatrixInstr(MatrixInstrKind kind,
                                              MatrixElemType operand) const {
  for (const MatrixInstr &i : matrixInstrs)
    if (i.kind == kind && i.operand == operand)
      return &i;
  return nullptr;
}

bool GpuTarget::hasMatrixInstr(MatrixInstrKind kind) const {
  return std::any_of(matrixInstrs.begin(), matrixInstrs.end(),
                     [&](const MatrixInstr &i) { return i.kind == kind; });
}

bool GpuTarget::supportsCodeObjectVersion(int version) const {
  return std::find(codeObjectVersions.begin(), codeObjectVersions.end(),
                   version) != codeObjectVersions.end();
}

TableSpan<GpuTarget> allGpuTargets() { return kTargets; }

const GpuTarget *lookupGpuChip(std::string_view chip) {
  for (const GpuTarget &t : kTargets)
    if (t.chip == chip)
      return &t;
  return nullptr;
}

bool hasGpuTargetPrefix(std::string_view target) {
  return target.substr(0, 5) == "cuda:" || target.substr(0, 5) == "rocm:";
}

const GpuTarget *lookupGpuTarget(std::string_view target) {
  size_t colon = target.find(':');
  if (colon == std::string_view::npos)
    return nullptr;
  const GpuTarget *t = lookupGpuChip(target.substr(colon + 1));
  return t && target.substr(0, colon) == t->vendorPrefix() ? t : nullptr;
}

std::string validGpuTargetNames(std::optional<GpuVendor> vendor,
                                bool withPrefix) {
  std::string out;
  for (const GpuTarget &t : kTargets) {
    if (vendor && t.vendor != *vendor)
      continue;
    if (!out.empty())
      out += ", ";
    out += withPrefix ? t.targetName() : std::string(t.chip);
  }
  return out;
}

const GpuTarget *parseGpuTarget(std::string_view target, std::string &error) {
  if (const GpuTarget *t = lookupGpuTarget(target))
    return t;
  error = "unknown GPU target '" + std::string(target) + "'; expected one of " +
          validGpuTargetNames();
  return nullptr;
}

const GpuTarget *parseGpuChip(std::string_view chip, std::string &error) {
  if (const GpuTarget *t = lookupGpuChip(chip))
    return t;
  error = "unknown GPU chip '" + std::string(chip) + "'; expected one of " +
          validGpuTargetNames(std::nullopt, /*withPrefix=*/false);
  return nullptr;
}

} // namespace pallasc
