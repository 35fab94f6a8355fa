//===- GpuLaunchArgs.h - Launch geometry and kernel arguments ---*- C++ -*-===//
//
// The vendor-neutral half of launching a pallasc GPU kernel from its launch
// record: the grid and block of one launch for given grid sizes, the
// dynamic shared memory and whether it needs the opt-in attribute, and the
// kernel's argument array (what cuLaunchKernel and hipModuleLaunchKernel
// take) in the record's parameter order. Plain C++, no driver calls: the
// same code serves `pallasc run --target cuda|rocm`, the emulator and
// generated launchers.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_LAUNCH_GPULAUNCH_H
#define PALLASC_SRC_LAUNCH_GPULAUNCH_H

#include "src/Launch/GpuLaunchRecord.h"
#include "src/Launch/GpuStatus.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pallasc::launch {

/// Dynamic shared memory a block may use without opting in (NVIDIA: 48 KiB;
/// more needs CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES).
constexpr int64_t kDefaultDynamicSharedLimit = 48 * 1024;
/// The same for AMD workgroups (64 KiB of LDS; gfx950's 160 KiB needs
/// hipFuncAttributeMaxDynamicSharedMemorySize).
constexpr int64_t kAmdDefaultDynamicSharedLimit = 64 * 1024;

/// Whether a kernel using `bytes` of dynamic shared memory must raise its
/// limit (`limit` without opting in) before launching.
inline bool needsSharedMemoryOptIn(int64_t bytes,
                                   int64_t limit = kDefaultDynamicSharedLimit) {
  return bytes > limit;
}

/// A loaded module and its kernel (a CUmodule / CUfunction, or a
/// hipModule_t / hipFunction_t).
struct GpuKernel {
  void *module = nullptr;
  void *function = nullptr;
};

/// One launch: blocks along x, y, z, threads per block, dynamic shared
/// memory per block.
struct GpuLaunchGeometry {
  int64_t grid[3] = {1, 1, 1};
  int64_t block[3] = {1, 1, 1};
  int64_t sharedBytes = 0;
  int64_t numBlocks() const { return grid[0] * grid[1] * grid[2]; }
};

/// The geometry of launching `record` over a pallas grid of `gridSizes`
/// (every axis, dynamic bounds filled in). Fails with InvalidLaunchRecord
/// when the record names an axis `gridSizes` lacks.
GpuStatus computeLaunchGeometry(const GpuLaunchRecord &record,
                                const std::vector<int64_t> &gridSizes,
                                GpuLaunchGeometry &geometry);

/// The values of the record's GridBound and Symbol parameters, in order:
/// the i32 sizes of their grid axes, the symbols' values (`symbols`, a
/// symbolic call's, sorted by name; each checked to fit in i32 by the
/// caller).
GpuStatus gridBoundValues(const GpuLaunchRecord &record,
                          const std::vector<int64_t> &gridSizes,
                          std::vector<int32_t> &values,
                          const std::vector<int64_t> &symbols = {});

/// Checks the address of every operand `record` passes as a Pointer
/// parameter (`inputs` / `outputs`: device addresses, or a batch
/// iteration's slices) against the record's pointerAlignment. Fails with
/// Misaligned naming the first misaligned operand, its address and the
/// alignment: "inputs[1] needs a 16-byte aligned address (the kernel's
/// pointer_alignment), got 4104". (A parameter naming an operand that is
/// not given is left to GpuKernelArgs::pack.)
GpuStatus checkPointerAlignment(const GpuLaunchRecord &record,
                                const std::vector<uint64_t> &inputs,
                                const std::vector<uint64_t> &outputs);

/// The tensor-map parameters of `record`, in parameter order.
std::vector<GpuTensorMap> tensorMapParams(const GpuLaunchRecord &record);

/// The device address of the operand tensor map `map` is over
/// (`inputs[map.input]`, or `outputs[map.input]` for a TMA store's), or an
/// InvalidLaunchRecord failure when the call has no such operand.
GpuStatus tensorMapOperand(const GpuTensorMap &map,
                           const std::vector<uint64_t> &inputs,
                           const std::vector<uint64_t> &outputs,
                           uint64_t &address);

/// A kernel's arguments: the parameter values, and one pointer to each in
/// launch order (`data()` is the `void **kernelParams` of cuLaunchKernel).
/// Not copyable: the pointers point into the object.
class GpuKernelArgs {
public:
  GpuKernelArgs() = default;
  GpuKernelArgs(const GpuKernelArgs &) = delete;
  GpuKernelArgs &operator=(const GpuKernelArgs &) = delete;

  /// Packs the arguments of `record`: Pointer parameters from `inputs` /
  /// `outputs` (device addresses), GridBound ones from `gridSizes`, Symbol
  /// ones from `symbols`,
  /// TensorMap ones from `tensorMaps` (the device address of each encoded
  /// map, in the order of tensorMapParams). Fails with InvalidLaunchRecord
  /// when a parameter names an operand, axis or tensor map that is not
  /// given.
  GpuStatus pack(const GpuLaunchRecord &record,
                 const std::vector<uint64_t> &inputs,
                 const std::vector<uint64_t> &outputs,
                 const std::vector<int64_t> &gridSizes,
                 const std::vector<uint64_t> &tensorMaps,
                 const std::vector<int64_t> &symbols = {});

  void **data() { return pointers.data(); }
  size_t size() const { return pointers.size(); }

private:
  /// One 8-byte slot per parameter (pointers, or an i32 in the low bytes).
  std::vector<uint64_t> slots;
  std::vector<void *> pointers;
};

/// vmap's explicit batch loop around one GPU kernel (docs/manifest.md,
/// "Batch loops"): the kernel runs once per iteration b in [0, axisSize),
/// each launch on slice b of the batched operands. Operands are the
/// batched arrays, dense and row-major, batched at axis 0 (or not at all),
/// so iteration b's slice starts b strides past the array: the same
/// arithmetic for device addresses (launchers, `pallasc run --target`) and
/// host addresses (the emulator).
struct GpuBatchLoop {
  int64_t axisSize = 1;
  /// Per input: the bytes from slice b to slice b + 1 (one iteration's
  /// input for an input batched at axis 0, 0 for an unbatched one).
  std::vector<uint64_t> inputStrides;
  /// Per output (stacked along a new leading axis): one iteration's bytes.
  std::vector<uint64_t> outputStrides;
  /// Per dynamic grid bound, in grid order: whether it takes axisSize
  /// values (one per iteration) rather than one for every iteration.
  std::vector<bool> batchedBounds;
  /// The bound values the loop takes: axisSize per batched bound, 1 per
  /// other, in grid order.
  int64_t numBoundValues() const;
};

/// The operands of a batch loop, or of one of its iterations: input and
/// output addresses, and dynamic bound values in grid order.
struct GpuBatchOperands {
  std::vector<uint64_t> inputs, outputs;
  std::vector<int64_t> bounds;
};

/// Iteration `b` of `loop` over `all` (the batched arrays' base addresses
/// and the loop's bound values, numBoundValues() of them): its operand
/// addresses and one value per dynamic bound. Fails with
/// InvalidLaunchRecord when the counts do not match the loop or an address
/// overflows.
GpuStatus gpuBatchIteration(const GpuBatchLoop &loop, int64_t b,
                            const GpuBatchOperands &all,
                            GpuBatchOperands &iteration);

/// The loop as the array of integers a generated launcher embeds:
/// axisSize, one stride per input, one per output, then 0/1 per dynamic
/// bound (batched).
std::vector<int64_t> encodeGpuBatchLoop(const GpuBatchLoop &loop);
/// Decodes `size` integers at `data` for a call of `numInputs` inputs,
/// `numOutputs` outputs and `numDynamicBounds` dynamic grid bounds. Fails
/// with InvalidLaunchRecord on a count that does not match, an axis size
/// below 1, a negative stride or a flag that is not 0 or 1.
GpuStatus decodeGpuBatchLoop(const int64_t *data, int64_t size,
                             int64_t numInputs, int64_t numOutputs,
                             int64_t numDynamicBounds, GpuBatchLoop &loop);

/// The loop's bound values (numBoundValues of them, in grid order) from a
/// generated entry point's bound arguments: per dynamic grid bound, a
/// pointer to its value (unbatched) or to axisSize values, one per
/// iteration (batched). Fails with `error` set: `badArgument` when a
/// batched bound's pointer is null (the caller's mistake), else the count
/// does not match the loop (the entry point's).
bool gatherGpuBatchBounds(const GpuBatchLoop &loop,
                          const int64_t *const *args, int64_t numArgs,
                          std::vector<int64_t> &values, bool &badArgument,
                          std::string &error);

} // namespace pallasc::launch

#endif // PALLASC_SRC_LAUNCH_GPULAUNCH_H
