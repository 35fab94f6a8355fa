//===- CudaLaunch.h - reading a CUDA launch record ---------------*- C++ -*-===//
//
// The parts of the launch record pallas-to-gpu attaches to its gpu.func
// (pallas.gpu.launch) that both launchers read: the GPU runner and the
// emulator.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_RUNTIME_CUDALAUNCH_H
#define PALLASC_SRC_RUNTIME_CUDALAUNCH_H

#include "mlir/IR/BuiltinAttributes.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pallasc::runtime {

/// A `kind: "tensor_map"` parameter: a CUtensorMap over input `input`, a
/// 2-D array of 16-bit elements (bf16 or f16), copied in boxes of
/// `boxShape` (128-byte swizzle, zeros out of bounds; docs/cuda.md).
struct TensorMapParam {
  size_t input = 0;
  bool bf16 = false;
  int64_t globalShape[2] = {0, 0};
  int64_t boxShape[2] = {0, 0};
};

/// The tensor-map parameters of `launch`, in parameter order; false with
/// `error` set when one is malformed or names an input past `numInputs`.
bool readTensorMapParams(mlir::DictionaryAttr launch, size_t numInputs,
                         std::vector<TensorMapParam> &maps,
                         std::string &error);

} // namespace pallasc::runtime

#endif // PALLASC_SRC_RUNTIME_CUDALAUNCH_H
