//===- GridExecutor.h - Run a JIT-compiled kernel over its grid -*- C++ -*-===//
//
// Pallas' interpret mode (jax/_src/pallas/hlo_interpreter.py), natively:
//
// - Every blocked operand lives in a "carry": the array padded with
//   uninitialized values (NaN, integer minimum, 0 for i16, false) up to a
//   whole number of blocks, after any element padding. Index-map results
//   give block starts (block index x block size for blocked dims, element
//   offsets for squeezed/element dims), clamped into the carry as
//   `dynamic_slice` clamps them.
// - The grid is walked row-major (last axis fastest). At each step the
//   kernel gets each operand's block as a strided view into its carry: its
//   reads see what earlier steps wrote there, its writes land there, which
//   is what interpret mode's copy-in/copy-out of every block at every step
//   amounts to, without the copies. An aliased input/output pair shares one
//   carry and gets block buffers instead, copied in before and out after
//   every step (both mappings see the state at the start of the step).
// - Outputs start uninitialized (or as the aliased input); reads past an
//   array's edge see the padding, writes there are dropped when the output
//   is cut out of its carry.
// - `any` operands are passed whole; scratch buffers persist across steps;
//   scalar-prefetch operands are passed whole to the kernel and to `@func`
//   index maps; program ids skip vmapped grid axes.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_RUNTIME_GRIDEXECUTOR_H
#define PALLASC_SRC_RUNTIME_GRIDEXECUTOR_H

#include "src/Runtime/HostCode.h"
#include "src/Runtime/CallPlan.h"
#include "src/Runtime/Npy.h"

#include <string>
#include <vector>

namespace pallasc::runtime {

struct ExecuteOptions {
  /// One value per dynamic grid bound, in grid order.
  std::vector<int64_t> dynamicBounds;
  /// Upper bound on the bytes the run may hold (inputs, outputs, padded
  /// carries, block buffers, scratch), checked before allocating.
  uint64_t maxBytes = UINT64_MAX;
  /// If set, receives the wall time of the grid walk alone (milliseconds),
  /// without allocation and initialization.
  double *gridWalkMs = nullptr;
  /// Per output (may be shorter, or hold null): storage the output is
  /// written into instead of a fresh allocation (the caller's buffer of the
  /// output's dtype and shape). Aliased outputs ignore it.
  std::vector<uint8_t *> outputStorage;
};

/// int4/uint4/int2/uint2 arrays are held one element per byte (as ml_dtypes
/// and their .npy files hold them); the kernel's storage packs them as XLA
/// does (launch::packElements). Each run packs such an array into a buffer
/// of its own before the kernels read it and unpacks what they wrote.
class PackedStorage {
public:
  /// What the kernels get for `array`: its data, or its packed copy.
  uint8_t *input(HostArray &array);
  /// A zeroed packed buffer for an output of `array`'s dtype and shape
  /// (its data for an unpacked dtype), unpacked into it by unpackOutputs.
  uint8_t *output(HostArray &array);
  /// Unpacks each packed buffer `output` returned into its array.
  void unpackOutputs();

private:
  struct Packed {
    HostArray *array;
    std::vector<uint8_t> bytes;
  };
  std::vector<Packed> inputs, outputs;
};

/// Runs the grid. `inputs` are the call's inputs (scalar-prefetch first),
/// already checked against `plan.inputs` (dtypes may differ in signedness);
/// they may be modified (an aliased input becomes its output). On success
/// `outputs` holds one array per call output, with `outputDTypes`' dtypes.
bool executeGrid(const launch::HostCallPlan &plan, JitModule &jit,
                 std::vector<HostArray> &inputs,
                 const std::vector<DType> &outputDTypes,
                 std::vector<HostArray> &outputs, const ExecuteOptions &options,
                 std::string &error);

} // namespace pallasc::runtime

#endif // PALLASC_SRC_RUNTIME_GRIDEXECUTOR_H
