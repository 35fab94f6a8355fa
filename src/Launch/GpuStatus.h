//===- GpuStatus.h - What a GPU launch step reports -------------*- C++ -*-===//
//
// Every step of the launch library (loading the driver, opening a device,
// loading a kernel, copies, tensor maps, the launch) returns a GpuStatus: a
// code a program can branch on, the driver's own result code when a driver
// call failed, and a readable message. Nothing in the library prints, exits
// or throws.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_LAUNCH_GPUSTATUS_H
#define PALLASC_SRC_LAUNCH_GPUSTATUS_H

#include <string>

namespace pallasc::launch {

enum class GpuError {
  None = 0,
  /// The driver library (libcuda.so.1) cannot be loaded.
  DriverNotFound,
  /// The driver lacks an entry point the library needs.
  DriverTooOld,
  /// The machine has no device (or the driver cannot initialize).
  NoDevice,
  /// No device has the requested ordinal.
  InvalidDevice,
  /// The device or its context cannot be set up.
  DeviceSetup,
  /// The driver rejects the code object (PTX, cubin).
  LoadFailed,
  /// The code object has no kernel of the requested name.
  KernelNotFound,
  /// The kernel needs more dynamic shared memory than the device allows.
  SharedMemoryTooLarge,
  /// A device allocation failed.
  OutOfMemory,
  /// A copy between host and device (or on the device) failed.
  CopyFailed,
  /// cuTensorMapEncodeTiled rejected a tensor map.
  TensorMapFailed,
  /// An operand's address is not aligned as the kernel or TMA requires.
  Misaligned,
  /// The launch record does not describe a launch of the given operands.
  InvalidLaunchRecord,
  /// The driver refused the launch.
  LaunchFailed,
  /// The kernel failed while running (reported when waiting for it).
  KernelFailed,
  /// Another driver call failed (event creation, timing).
  DriverCallFailed,
};

/// The outcome of one step. Converts to true on success.
struct GpuStatus {
  GpuError error = GpuError::None;
  /// The driver's result (CUresult) when a driver call failed, else 0.
  int driverResult = 0;
  std::string message;

  bool ok() const { return error == GpuError::None; }
  explicit operator bool() const { return ok(); }

  static GpuStatus success() { return GpuStatus(); }
  static GpuStatus failure(GpuError error, std::string message,
                           int driverResult = 0) {
    GpuStatus s;
    s.error = error;
    s.driverResult = driverResult;
    s.message = std::move(message);
    return s;
  }
};

/// The enumerator's name without the namespace ("LaunchFailed"), for logs
/// and tests.
const char *gpuErrorName(GpuError error);

} // namespace pallasc::launch

#endif // PALLASC_SRC_LAUNCH_GPUSTATUS_H
