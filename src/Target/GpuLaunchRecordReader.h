//===- GpuLaunchRecordReader.h - Reading pallas-to-gpu's launch record --*- C++ -*-===//
//
// The one reader of the launch record pallas-to-gpu attaches to its
// gpu.func (`pallas.gpu.launch`, a #pallas.gpu_launch) for the code that
// launches the kernel: it gives the verified record as plain data
// (src/Launch/GpuLaunchRecord.h) to the generated launchers, the GPU runner
// and the emulator.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_TARGET_GPULAUNCHRECORDREADER_H
#define PALLASC_SRC_TARGET_GPULAUNCHRECORDREADER_H

#include "src/Launch/GpuLaunchRecord.h"

#include "dialects/Pallas/IR/GpuLaunchAttrs.h"

namespace pallasc {

/// `launch` as plain data. The attribute's verifier has checked everything
/// the record's users rely on, so this cannot fail.
launch::GpuLaunchRecord
readGpuLaunchRecord(mlir::pallas::GpuLaunchAttr launch);

} // namespace pallasc

#endif // PALLASC_SRC_TARGET_GPULAUNCHRECORDREADER_H
