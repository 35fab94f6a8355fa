//===- GpuLaunchRecord.h - Reading pallas-to-gpu's launch record --*- C++ -*-===//
//
// The one reader of the launch record pallas-to-gpu attaches to its
// gpu.func (`pallas.gpu.launch`) for the code that launches the kernel: it
// checks the record and gives it as plain data (src/Launch/GpuLaunchRecord.h)
// to the GPU runner and the emulator.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_TARGET_GPULAUNCHRECORD_H
#define PALLASC_SRC_TARGET_GPULAUNCHRECORD_H

#include "src/Launch/GpuLaunchRecord.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <string>

namespace pallasc {

/// Reads `launch` into `record`; false with `error` set when a field is
/// missing or malformed.
bool readGpuLaunchRecord(mlir::DictionaryAttr launch,
                         launch::GpuLaunchRecord &record, std::string &error);

} // namespace pallasc

#endif // PALLASC_SRC_TARGET_GPULAUNCHRECORD_H
