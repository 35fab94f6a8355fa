//===- CudaRun.h - pallasc run --target cuda:<arch> ------------*- C++ -*-===//
//
// Runs the kernel over its grid on an NVIDIA GPU (CUDA driver API, see
// CudaDriver.h), or with --emulate on CPU threads (CudaEmulator.h), with the
// same inputs and outputs as the CPU runner; --check compares the result
// with the CPU runner's (Pallas interpret-mode semantics).
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_RUNTIME_CUDARUN_H
#define PALLASC_SRC_RUNTIME_CUDARUN_H

#include "src/Driver/Run.h"

namespace pallasc {

struct CudaRunOptions {
  /// `cuda:sm_90a` etc.
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
int runOnCuda(const RunOptions &options, const CudaRunOptions &cuda);

} // namespace pallasc

#endif // PALLASC_SRC_RUNTIME_CUDARUN_H
