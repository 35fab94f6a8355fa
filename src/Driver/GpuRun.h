//===- GpuRun.h - pallasc run --target cuda|rocm:<arch> ----------*- C++ -*-===//
//
// Runs the kernel over its grid on an NVIDIA GPU (through the launch library,
// src/Launch: the CUDA driver API loaded at run time), or with --emulate on
// CPU threads (src/Runtime/GpuEmulator/GpuEmulator.h; AMD targets run on the emulator
// only), with the same inputs and outputs as the CPU runner; --check
// compares the result with the CPU runner's (Pallas interpret-mode
// semantics).
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_DRIVER_GPURUN_H
#define PALLASC_SRC_DRIVER_GPURUN_H

#include "src/Driver/Run.h"

#include <string>

namespace pallasc {

struct GpuRunOptions {
  /// `cuda:sm_90a`, `rocm:gfx942`, ...
  std::string target;
  /// Run the distributed kernel on CPU threads instead of a GPU.
  bool emulate = false;
  /// Compare every output with the CPU runner's.
  bool check = false;
  /// Tolerances of --check for floats: |gpu - cpu| <= atol + rtol * |cpu|.
  double rtol = 2e-3, atol = 2e-3;
  /// Timed repetitions after the checked launch (0: none): prints the mean
  /// time and, from the cost estimate, TFLOP/s and GB/s.
  int benchReps = 0;
  /// Also time a device-to-device copy of the bytes the kernel accesses.
  bool benchCopy = false;
  int device = 0;
};

/// Runs the kernel with `options` (inputs, outputs, seed, grid bounds) on the
/// GPU or the emulator; returns an ExitCode.
int runOnGpu(const RunOptions &options, const GpuRunOptions &gpu);

} // namespace pallasc

#endif // PALLASC_SRC_DRIVER_GPURUN_H
