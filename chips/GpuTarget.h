//===- GpuTarget.h - the GPU target table -----------------------*- C++ -*-===//
//
// One entry per GPU chip pallasc compiles for: every chip fact the GPU
// lowering, the pipelines, the artifact writers, the runners and the
// launchers need (vendor, lanes per warp, shared memory, matrix
// instructions, async copies, code generation versions) is read from here,
// never tested on a chip's name. A leaf library in plain C++17 (no LLVM, no
// MLIR), so passes, pipelines, the driver, the runtime, the launch library
// and generated launchers can all link it.
//
// Adding a chip is adding one entry to the table in GpuTarget.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_CHIPS_GPUTARGET_H
#define PALLASC_CHIPS_GPUTARGET_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pallasc {

enum class GpuVendor { Nvidia, Amd };

/// The family of a matrix (tensor core) instruction. Each family has its own
/// lowering (fragment layouts, operand staging).
enum class MatrixInstrKind {
  MmaSync, ///< NVIDIA mma.sync (one warp; operands in registers, ldmatrix)
  Wgmma,   ///< NVIDIA wgmma.mma_async (one warpgroup of 4 warps; operands
           ///< in shared memory)
  Mfma,    ///< AMD v_mfma (one wavefront; operands in registers)
  Wmma,    ///< AMD v_wmma (one wave32 wavefront; operands in registers)
};

/// Element types of matrix instruction operands.
enum class MatrixElemType { F16, BF16, TF32, F32 };

/// One matrix instruction shape the lowering can emit on a chip: `m` x `n`
/// x `k` with `a`/`b` operands of `operand` type accumulating in `acc`.
/// `n` of wgmma is the largest; any multiple of `nStep` up to it is valid.
struct MatrixInstr {
  MatrixInstrKind kind;
  int64_t m, n, k;
  MatrixElemType operand;
  MatrixElemType acc;
  int64_t nStep = 0; ///< wgmma: n is any multiple of nStep up to n
  /// WMMA: the A (B) elements one lane holds, 16 on RDNA3 (a whole row of
  /// A, the two half-waves holding the same) or 8 on RDNA4 (half a row).
  int64_t operandsPerLane = 0;
};

/// A constant array of the table (begin/end for range-for).
template <typename T> struct TableSpan {
  const T *data = nullptr;
  size_t size = 0;
  constexpr TableSpan() = default;
  template <size_t N> constexpr TableSpan(const T (&a)[N]) : data(a), size(N) {}
  const T *begin() const { return data; }
  const T *end() const { return data + size; }
  bool empty() const { return size == 0; }
};

struct GpuTarget {
  /// The chip as `--target` spells it after the vendor prefix: `sm_90a`.
  const char *chip = "";
  GpuVendor vendor;
  /// Marketing family, for messages: "Hopper", "CDNA3".
  const char *family = "";
  /// NVIDIA compute capability as major * 10 + minor (90 for sm_90a);
  /// 0 on AMD.
  int computeCapability = 0;
  /// Threads per warp (NVIDIA) or wavefront (AMD).
  int64_t lanesPerWarp = 32;
  int64_t maxThreadsPerBlock = 1024;
  /// Shared memory (LDS) one block may use, with the opt-in attribute where
  /// the chip has one (cudaFuncAttributeMaxDynamicSharedMemorySize).
  int64_t maxSharedBytesPerBlock = 0;
  /// Shared memory a block may use without opting in (48 KiB on NVIDIA;
  /// equal to the maximum on AMD).
  int64_t staticSharedBytesLimit = 0;
  /// The matrix instructions the lowering may use, in order of preference
  /// within a kind.
  TableSpan<MatrixInstr> matrixInstrs;
  /// cp.async (sm_80+): asynchronous global -> shared copies per thread.
  bool hasCpAsync = false;
  /// ldmatrix (sm_75+): shared -> register fragment loads.
  bool hasLdmatrix = false;
  /// TMA (sm_90+): cp.async.bulk.tensor with tensor maps and mbarriers.
  bool hasTma = false;
  /// f32x2 arithmetic (add/sub/mul/fma.f32x2, sm_100+ with PTX 8.6): LLVM's
  /// SLP vectorizer can pack pairs of f32 operations. Below, an NVIDIA
  /// register packs only lanes narrower than 32 bits.
  bool hasPackedF32 = false;
  /// NVPTX backend features (the PTX ISA version): "+ptx80".
  const char *llvmFeatures = "";
  /// AMDHSA code object versions the chip's runtime loads; empty on NVIDIA.
  TableSpan<int> codeObjectVersions;
  int defaultCodeObjectVersion = 0;

  bool isNvidia() const { return vendor == GpuVendor::Nvidia; }
  bool isAmd() const { return vendor == GpuVendor::Amd; }
  /// log2(lanesPerWarp).
  int64_t laneBits() const;
  /// Warps (wavefronts) one block may have.
  int64_t maxWarpsPerBlock() const { return maxThreadsPerBlock / lanesPerWarp; }
  /// `cuda` or `rocm`.
  const char *vendorPrefix() const;
  /// `CUDA` or `AMD`, for messages.
  const char *vendorName() const;
  /// `cuda:sm_90a`, `rocm:gfx942`.
  std::string targetName() const;
  /// The first instruction of `kind` with `operand` operands, if any.
  const MatrixInstr *findMatrixInstr(MatrixInstrKind kind,
                                     MatrixElemType operand) const;
  bool hasMatrixInstr(MatrixInstrKind kind) const;
  bool supportsCodeObjectVersion(int version) const;
};

/// Every chip, NVIDIA first, in the order of the table.
TableSpan<GpuTarget> allGpuTargets();

/// The entry of a chip name (`sm_80`, `gfx942`), or null.
const GpuTarget *lookupGpuChip(std::string_view chip);

/// The entry of a target name (`cuda:sm_90a`, `rocm:gfx942`), or null.
const GpuTarget *lookupGpuTarget(std::string_view target);

/// True for names with a GPU vendor prefix (`cuda:`, `rocm:`), valid or not.
bool hasGpuTargetPrefix(std::string_view target);

/// Parses a target name (`cuda:<chip>` / `rocm:<chip>`): the entry, or null
/// with `error` set to a message naming `target` and listing every valid
/// name ("unknown GPU target 'cuda:sm_50'; expected one of cuda:sm_75, ...").
const GpuTarget *parseGpuTarget(std::string_view target, std::string &error);

/// Parses a chip name (`sm_80`, `gfx942`), as the passes' `chip` options
/// take it; on failure `error` lists every valid chip.
const GpuTarget *parseGpuChip(std::string_view chip, std::string &error);

/// "cuda:sm_75, cuda:sm_80, ..." (or the chips alone), in table order;
/// restricted to one vendor when given.
std::string validGpuTargetNames(std::optional<GpuVendor> vendor = std::nullopt,
                                bool withPrefix = true);

} // namespace pallasc

#endif // PALLASC_CHIPS_GPUTARGET_H
