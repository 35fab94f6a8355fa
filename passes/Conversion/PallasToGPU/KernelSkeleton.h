//===- KernelSkeleton.h - pallas-to-gpu's steps around the distributor -*- C++ -*-===//
//
// The steps of pallas-to-gpu (PallasToGPU.cpp, the driver) before and after
// the distributor lowers the kernel body, one concern per file:
//   CallInfo.cpp        the recorded pallas.call and the kernel's signature
//   TensorRewrites.cpp  tensor-level rewrites of the kernel before distribution
//   GridRanges.cpp      bounds checks the grid's sizes prove, folded
//   TrueMasks.cpp       masked loads whose mask is proven all true, unmasked
//   LaunchGeometry.cpp  warps per block, the pallas grid folded into CUDA's
//                       x/y/z, grid sizes and indices in the kernel, the loops
//                       of the sequential axes
//   KernelFunction.cpp  the gpu.module and kernel gpu.func (32-bit indices),
//                       the barriers its end drops
//   Prefetch.cpp        the inputs TMA / cp.async may prefetch along the one
//                       sequential axis
//   BlockViews.cpp      aliasing and scratch arguments, the bindings of the
//                       kernel's arguments: grid scalars and block windows
//   LaunchRecord.cpp    the launch record (pallas.gpu.launch) for the manifest
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_CONVERSION_PALLASTOGPU_KERNELSKELETON_H
#define PALLASC_PASSES_CONVERSION_PALLASTOGPU_KERNELSKELETON_H

#include "passes/Conversion/PallasToGPU/Distribute.h"
#include "dialects/Pallas/IR/GridMapping.h"

#include <optional>
#include <string>

namespace mlir::pallas {
class GpuLaunchAttr;
} // namespace mlir::pallas

namespace mlir::pallas::gpu {

//===----------------------------------------------------------------------===//
// CallInfo.cpp
//===----------------------------------------------------------------------===//

/// A shape symbol of a symbolic call (docs/gridspec.md#symbols).
struct SymbolInfo {
  std::string name;
  int64_t min = 1, multipleOf = 1;
  std::optional<int64_t> max;
};

/// A symbolic dimension: sum(coefficient * symbol) + constant, symbols by
/// their index in CallInfo::symbols.
struct LinearSize {
  SmallVector<std::pair<int64_t, int64_t>> terms;
  int64_t constant = 0;
  /// Its largest value over the symbols' ranges; nullopt if unbounded.
  std::optional<int64_t> highest(ArrayRef<SymbolInfo> symbols) const;
  /// A divisor every allowed value has (from the symbols' multiple_of).
  int64_t knownDivisor(ArrayRef<SymbolInfo> symbols) const;
};

/// Everything read from the recorded pallas.call.
struct CallInfo {
  std::string kernel, name;
  /// Grid, vmapped and sequential axes, block specs, aliases, params.
  GridMapping mapping;
  SmallVector<RefType> scratch;
  SmallVector<RankedTensorType> inputs, outputs;
  int64_t numWarps = 4;
  int64_t numStages = 0; ///< 0: not given
  /// A symbolic call's symbols (sorted by name, as the launchers take them)
  /// and, per input and output, per dimension, the expression of each
  /// dynamic one (nullopt where static).
  SmallVector<SymbolInfo> symbols;
  SmallVector<SmallVector<std::optional<LinearSize>>> inputDims, outputDims;

  int64_t numInputs() const { return inputs.size(); }
  int64_t numOutputs() const { return outputs.size(); }
};

/// Reads pallas-gpu-prepare's record of the call (`pallas.gpu.call`, a
/// #pallas.gpu_call, and a symbolic call's `pallas.gpu.symbolic`); a
/// missing record or one of another kind is a diagnostic on the module.
LogicalResult readCall(ModuleOp module, CallInfo &info);

/// Checks that the lowered `kernel` takes what the call implies (its
/// program-id and num-programs arguments, operands, scratch) and sets
/// `visibleAxes` to its grid axes; diagnostics on the kernel.
LogicalResult checkKernelSignature(func::FuncOp kernel, const CallInfo &info,
                                   int64_t &visibleAxes);

//===----------------------------------------------------------------------===//
// TensorRewrites.cpp
//===----------------------------------------------------------------------===//

/// Tensor-level rewrites of the lowered kernel before distribution: dots of
/// extended operands take the narrow operands, f32 exp becomes exp2.
LogicalResult rewriteKernelTensors(func::FuncOp kernel);

//===----------------------------------------------------------------------===//
// GridRanges.cpp
//===----------------------------------------------------------------------===//

/// Replaces each scf.if of `kernel` whose condition the integer ranges of
/// a static grid prove constant (program id a in [0, grid[a]), num_programs
/// a = grid[a]) by the branch it takes: the dynamic slices of a loop whose
/// trip count follows a program id (causal attention's K/V loop) become
/// plain views, as those of constant-trip loops do.
void foldGridBoundedChecks(func::FuncOp kernel, const CallInfo &info,
                           int64_t visibleAxes);

//===----------------------------------------------------------------------===//
// TrueMasks.cpp
//===----------------------------------------------------------------------===//

/// Replaces each elementwise select of a value against a constant (a
/// masked load's `other`) whose mask integer intervals prove all true (JAX's
/// `jnp.arange(64) < 64` over a full head dimension) by the value: the
/// load is then a dot operand the staging planner can stream.
void foldTrueMaskSelects(func::FuncOp kernel);

//===----------------------------------------------------------------------===//
// LaunchGeometry.cpp
//===----------------------------------------------------------------------===//

/// Fails with a diagnostic on `kernel` unless `numWarps` warps fit a block
/// of `target`.
LogicalResult checkNumWarps(func::FuncOp kernel,
                            const pallasc::GpuTarget &target,
                            int64_t numWarps);

/// How the pallas grid is launched.
struct LaunchGeometry {
  /// Pallas axes run in order inside a block.
  SmallVector<int64_t> seqAxes;
  /// The pallas axes folded into CUDA x, y and z, innermost first.
  SmallVector<SmallVector<int64_t>> cudaAxes;
  /// Blocks along x, y, z (-1: depends on a dynamic bound).
  SmallVector<int64_t> cudaGrid;
};

/// The launch of `mapping`'s grid (Pallas' Triton rule: more than 3 launched
/// axes, or one over CUDA's y/z limit, fold into x); a diagnostic on
/// `module` when it does not fit CUDA's limits.
FailureOr<LaunchGeometry> computeLaunchGeometry(ModuleOp module,
                                                const GridMapping &mapping);

/// The grid as index values in the kernel: every axis's size, and the index
/// of each launched axis (sequential axes get theirs from their loops).
struct GridValues {
  SmallVector<Value> gridSize, gridIdx;
  /// The first op after the kernel's prologue (the distributor hoists
  /// there).
  Operation *firstAfterPrologue = nullptr;
};

/// Emits the grid values at `b` in the kernel `body`, whose dynamic grid
/// bounds are the i32 arguments from `firstBoundArg` on.
GridValues emitGridValues(OpBuilder &b, Location loc,
                          const GridMapping &mapping,
                          const LaunchGeometry &geometry, Block &body,
                          int64_t firstBoundArg);

/// Opens one loop per sequential axis at `b` (carrying the scratch buffers
/// the distributor keeps in registers) and leaves `b` in the innermost;
/// sets the axes' entries of `grid.gridIdx`.
SmallVector<scf::ForOp> openSequentialLoops(OpBuilder &b, Location loc,
                                            Distributor &dist,
                                            ArrayRef<int64_t> seqAxes,
                                            GridValues &grid);

/// Ends the loops of openSequentialLoops with the distributor's state.
void closeSequentialLoops(OpBuilder &b, Location loc, Distributor &dist,
                          ArrayRef<scf::ForOp> loops);

//===----------------------------------------------------------------------===//
// KernelFunction.cpp
//===----------------------------------------------------------------------===//

/// The gpu.module and its kernel function.
struct KernelFunction {
  std::string entry;
  mlir::gpu::GPUModuleOp gpuModule;
  mlir::gpu::GPUFuncOp func;
  /// The pallas axes whose bounds are i32 arguments, in order.
  SmallVector<int64_t> dynamicAxes;
  /// The argument of the first symbol (one i32 each, after the bounds).
  int64_t firstSymbolArg = 0;
  /// Per input then output: the memref the kernel accesses (the argument,
  /// or for a symbolic operand its reinterpretation at the actual sizes),
  /// and per dimension the dynamic size (index, null where static) with
  /// its known divisor.
  SmallVector<Value> operands;
  SmallVector<SmallVector<Value>> dynSizes;
  SmallVector<SmallVector<int64_t>> dynSizeDivisor;
};

/// Creates the gpu.module (32-bit index arithmetic when every array has
/// fewer than 2^31 elements) and the kernel function of `numThreads`
/// threads at the end of `module`: one memref per input and output, then
/// one i32 per dynamic grid bound.
KernelFunction createKernelFunction(OpBuilder &b, ModuleOp module,
                                    Location loc, const CallInfo &info,
                                    int64_t numThreads);

/// Emits, at `b`, the memrefs of the kernel's operands (`kf.operands`): a
/// symbolic operand's argument (its dynamic dims given as 1) reinterpreted
/// at the sizes its shape expressions take for the symbol arguments.
void emitOperandMemrefs(OpBuilder &b, Location loc, const CallInfo &info,
                        KernelFunction &kf);

/// Drops the barriers at the end of the kernel `body` that order nothing.
void dropTrailingBarriers(Block &body);

//===----------------------------------------------------------------------===//
// Prefetch.cpp
//===----------------------------------------------------------------------===//

/// With one sequential axis on a chip with TMA or cp.async: marks the
/// kernel context for prefetching along it (parameters appended to `func`)
/// and records the inputs whose blocks a tensor map can describe.
void selectPrefetchSources(KernelContext &kc, mlir::gpu::GPUFuncOp func,
                           func::FuncOp kernel, const CallInfo &info,
                           const DenseMap<int64_t, int64_t> &aliasOf,
                           int64_t visibleAxes, size_t numSequentialAxes,
                           Location loc);

//===----------------------------------------------------------------------===//
// BlockViews.cpp
//===----------------------------------------------------------------------===//

/// Marks the kernel arguments of aliased operands writable and the scratch
/// arguments as scratch; returns the aliases (input -> output).
DenseMap<int64_t, int64_t> markAliasesAndScratch(Distributor &dist,
                                                 func::FuncOp kernel,
                                                 const CallInfo &info,
                                                 int64_t visibleAxes);

/// Binds the kernel's arguments to the gpu.func's: grid indices and sizes,
/// and each operand's block window from its index map. Lives until the
/// distributor has emitted: TMA sources compute their block at another
/// step of the sequential axis through it.
class BlockViews {
public:
  BlockViews(OpBuilder &b, Location loc, ModuleOp module, func::FuncOp kernel,
             const CallInfo &info, const KernelFunction &kf,
             ArrayRef<int64_t> seqAxes, GridValues &grid);

  /// Binds every argument of the kernel in `dist` to `body`'s (grid
  /// scalars first, then operand views).
  LogicalResult bind(Distributor &dist, KernelContext &kc, Block &body,
                     int64_t visibleAxes,
                     const DenseMap<int64_t, int64_t> &aliasOf);

private:
  View wholeView(int64_t operand);
  FailureOr<View> blockView(int64_t operand, BlockSpecAttr spec,
                            StringRef what);
  Value cst(int64_t v);

  OpBuilder &b;
  Location loc;
  ModuleOp module;
  func::FuncOp kernel;
  const CallInfo &info;
  const KernelFunction &kf;
  ArrayRef<int64_t> seqAxes;
  GridValues &grid;
  SmallVector<Value> gridI32;
  SmallVector<Value> prefetchParams;
};

//===----------------------------------------------------------------------===//
// LaunchRecord.cpp
//===----------------------------------------------------------------------===//

/// The launch record of the kernel (docs/cuda.md, "The manifest"):
/// `numWarps` warps of `numThreads` threads in all, the tensor maps `maps`
/// the distributor made, `sharedBytes` of dynamic shared memory of which
/// `scratchSharedBytes` hold scratch buffers.
GpuLaunchAttr buildLaunchRecord(MLIRContext *ctx, const KernelFunction &kf,
                                const CallInfo &info,
                                const LaunchGeometry &geometry,
                                ArrayRef<KernelContext::TensorMap> maps,
                                int64_t numWarps, int64_t numThreads,
                                int64_t sharedBytes,
                                int64_t scratchSharedBytes);

} // namespace mlir::pallas::gpu

#endif // PALLASC_PASSES_CONVERSION_PALLASTOGPU_KERNELSKELETON_H
