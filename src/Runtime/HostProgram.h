//===- HostProgram.h - Run the whole wrapper @main on the host --*- C++ -*-===//
//
// The grid executor runs one pallas.call. The call-level transforms can leave
// more than that in the wrapper `@main`: vmap's per-batch loop (`scf.for`
// slicing the batched operands), `pallas.reshape` / `broadcast_in_dim` /
// `transpose` on whole arrays around the call (vmap's axis_size 1, its
// broadcast of unbatched aliased inputs, its move of batch axes to 0),
// several calls. Then `@main` itself is compiled for the host with the
// kernels:
//
// - each `pallas.call` becomes a call to the runtime's launcher
//   (`__pallasc_launch(call number, pointers)`), which runs that call's grid
//   with the grid executor on buffers the compiled code owns: every input is
//   copied into a fresh buffer first (so the kernel may write it), an aliased
//   output is its input's buffer, the other outputs are fresh buffers;
// - `@main` takes its arrays as memrefs and writes its results into
//   caller-owned memrefs (destination passing), so the CPU pipeline lowers
//   the rest (loops, slices, reshapes) like any other function.
//
// When `@main` is just one call on its arguments (the spec's call, or vmap
// that only rewrote the call) the executor runs it directly instead, without
// the copies.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_RUNTIME_HOSTPROGRAM_H
#define PALLASC_SRC_RUNTIME_HOSTPROGRAM_H

#include "src/Runtime/GridExecutor.h"
#include "src/Runtime/HostCode.h"
#include "src/Runtime/CallPlan.h"
#include "src/Launch/GpuLaunchArgs.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <utility>
#include <vector>

namespace pallasc::runtime {

/// Whether `module`'s `@main` is one pallas.call on its arguments, in order,
/// returning the call's results in order: what planLaunch and the grid
/// executor run directly.
bool isDirectCall(mlir::ModuleOp module);

/// `@main` as vmap's explicit batch loop (docs/transforms.md, "Explicit
/// loop") around one pallas.call on its arguments: what the GPU launchers
/// and `pallasc run --target cuda|rocm` run, one launch per iteration.
struct BatchLoopProgram {
  /// One iteration's call (its index-map wrappers added to the module).
  launch::HostCallPlan call;
  int64_t axisSize = 1;
  /// Per call input: the batch axis of @main's input (0), or -1.
  std::vector<int64_t> inAxes;
  /// Per dynamic grid bound of the call: 0 when @main takes it batched
  /// (tensor<axisSize x index>), else -1.
  std::vector<int64_t> boundAxes;
  /// @main's arrays: the batched inputs and the stacked outputs.
  std::vector<launch::HostArrayType> inputs, outputs;
  /// Bound values @main takes, per dynamic bound in grid order (axisSize
  /// for a batched one).
  int64_t numBoundValues() const;
  /// The loop in the launch library's terms.
  launch::GpuBatchLoop gpuLoop() const;
};

/// Whether `module`'s `@main` has the shape of vmap's explicit batch loop
/// (an scf.for around the module's only pallas.call).
bool isBatchLoop(mlir::ModuleOp module);

/// Reads vmap's batch loop in `@main`. Fails with a message saying what the
/// GPU runners cannot run: a wrapper that is not one batch loop around one
/// call on @main's arguments in order, an input batched at an axis other
/// than 0 (its slices are not contiguous) or an unbatched input aliased to
/// an output.
bool planBatchLoop(mlir::ModuleOp module, BatchLoopProgram &program,
                   std::string &error);

/// Plans every pallas.call of `@main` (adding their index-map wrappers) and
/// rewrites `@main` for the host:
///   func.func @main(bounds: index | memref<N x index>..., inputs: memref...,
///                   results: memref...)
/// Fails with a message for a `@main` the runtime cannot run.
bool prepareHostProgram(mlir::ModuleOp module, launch::HostProgramPlan &program,
                        std::string &error);

/// The launcher the lowered `@main` calls: (symbol, address) for the JIT.
std::pair<const char *, void *> launcherSymbol();

/// Runs the JIT-compiled `@main` of `program`: `boundValues` are its bound
/// values in argument order, `inputs` its arrays (checked against
/// `program.inputs`). On success `outputs` holds one array per result, with
/// `outputDTypes`' dtypes. `options.maxBytes` bounds what each launch holds;
/// `options.gridWalkMs` receives the sum over the launches.
bool runHostProgram(const launch::HostProgramPlan &program, JitModule &jit,
                    std::vector<HostArray> &inputs,
                    const std::vector<int64_t> &boundValues,
                    const std::vector<DType> &outputDTypes,
                    std::vector<HostArray> &outputs,
                    const ExecuteOptions &options, std::string &error);

} // namespace pallasc::runtime

#endif // PALLASC_SRC_RUNTIME_HOSTPROGRAM_H
