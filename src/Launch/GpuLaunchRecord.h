//===- GpuLaunchRecord.h - A GPU kernel's launch record in plain C++ -*- C++ -*-===//
//
// pallas-to-gpu attaches a launch record (`pallas.gpu.launch`) to the
// gpu.func it produces; the manifest publishes it as a target's `launch`
// object (docs/cuda.md, docs/rocm.md). This is the same record as plain
// data, free of MLIR, for everything that launches the kernel: `pallasc run
// --target cuda|rocm` (src/Driver/GpuRun.h fills it from the attribute with
// src/Target/GpuLaunchRecordReader.h), the emulator, and generated launchers
// (which embed it).
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_LAUNCH_GPULAUNCHRECORD_H
#define PALLASC_SRC_LAUNCH_GPULAUNCHRECORD_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace pallasc::launch {

/// The alignment pallasc's GPU kernels assume of every pointer operand (the
/// manifest's `pointer_alignment`): their vector accesses assume it.
constexpr int64_t kGpuPointerAlignment = 16;

/// The most dimensions a tensor map has (CUtensorMap: 5).
constexpr int kMaxTensorMapRank = 5;

/// A `kind: "tensor_map"` parameter: a CUtensorMap over input `input` (or
/// output `input` when `isOutput`: a TMA store's destination), a row-major
/// array of 16-bit elements (bf16 or f16) of `rank` (2 to 5) dimensions
/// `globalShape` (outermost first: rows, columns for 2), copied in boxes of
/// `boxShape`, 128-byte swizzle, zeros out of bounds (docs/cuda.md, "Kernel
/// ABI").
struct GpuTensorMap {
  size_t input = 0;
  bool isOutput = false;
  bool bf16 = false;
  int rank = 2;
  int64_t globalShape[kMaxTensorMapRank] = {};
  int64_t boxShape[kMaxTensorMapRank] = {};
};

/// One kernel parameter, in launch order.
struct GpuKernelParam {
  enum class Kind {
    /// The device address of an operand: `inputs[index]` or
    /// `outputs[index]`.
    Pointer,
    /// The size of pallas grid axis `axis` (a dynamic bound), as i32.
    GridBound,
    /// The device address of an encoded CUtensorMap (`tensorMap`).
    TensorMap,
    /// The value of the symbolic call's symbol `index` (its symbols sorted
    /// by name), as i32.
    Symbol,
  };
  Kind kind = Kind::Pointer;
  /// Pointer: whether the operand is an output.
  bool isOutput = false;
  /// Pointer: the input or output index; Symbol: the symbol's.
  size_t index = 0;
  /// GridBound: the pallas grid axis.
  int64_t axis = 0;
  /// TensorMap: what to encode.
  GpuTensorMap tensorMap;
};

/// The launch of one GPU kernel.
struct GpuLaunchRecord {
  /// The kernel's symbol (`.entry` name).
  std::string entry;
  /// The pallas grid axes folded into the launch's x, y and z, innermost
  /// first: blocks along x = the product of the sizes of gridAxes[0].
  std::vector<int64_t> gridAxes[3];
  /// Threads per block (x, y, z).
  int64_t block[3] = {1, 1, 1};
  /// Threads per warp (32) or wavefront (64 on CDNA).
  int64_t warpSize = 32;
  /// Dynamic shared memory (LDS) per block.
  int64_t dynamicSharedBytes = 0;
  std::vector<GpuKernelParam> params;
  /// Bytes every Pointer parameter's address must be a multiple of (the
  /// manifest's `pointer_alignment`; a power of two).
  int64_t pointerAlignment = kGpuPointerAlignment;
};

} // namespace pallasc::launch

#endif // PALLASC_SRC_LAUNCH_GPULAUNCHRECORD_H
