//===- HostGrid.h - Running a compiled kernel's grid on the host -*- C++ -*-===//
//
// Pallas' interpret mode (jax/_src/pallas/hlo_interpreter.py), natively, over
// a kernel compiled for the host (the CPU pipeline's C interface, called
// through packed `void (*)(void **)` entry points):
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
// - int4/uint4/int2/uint2 arrays (inputs, outputs, scratch) are packed as
//   XLA packs them (2 or 4 elements per byte, element 0 in the low bits,
//   rows not padded): their blocks are always copied into dense packed
//   block buffers (a block's rows may start mid-byte), and the kernel takes
//   each such memref as one dimension of bytes
//   (pallas-emulate-packed-integers).
// - `any` operands are passed whole; scratch buffers persist across steps;
//   scalar-prefetch operands are passed whole to the kernel and to `@func`
//   index maps; program ids skip vmapped grid axes.
//
// Plain C++17, no LLVM or MLIR: `pallasc run` (through the JIT) and the
// generated launchers' `--target cpu` entry points (through the functions
// of their library) run the grid with this same code. The whole wrapper
// `@main` (vmap's batch loop, reshapes and broadcasts around the calls) runs
// with runHostProgram: its lowered code calls back into runHostGrid for each
// pallas.call.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_LAUNCH_HOSTGRID_H
#define PALLASC_SRC_LAUNCH_HOSTGRID_H

#include "src/Launch/ElementType.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pallasc::launch {

/// A packed C-interface entry point: `args[i]` points at argument i (a
/// memref argument is a pointer to its descriptor).
using PackedFn = void (*)(void **args);

/// Writes interpret mode's value for memory nobody wrote `count` times at
/// `data`: NaN for floats, the minimum of i8/i32/i64, 0 for i16 (interpret
/// mode's semaphore type), unsigned types and bool.
void fillUninitialized(void *data, int64_t count, ElementType type);

/// A dense row-major array type.
struct HostArrayType {
  ElementType type = ElementType::F32;
  std::vector<int64_t> shape;
  /// Bytes of the array (packed for int4/uint4/int2/uint2: storageBytes);
  /// false when the size overflows or a dimension is negative.
  bool byteSize(uint64_t &bytes) const;
  /// "[4096, 1000] f32"
  std::string describe() const;
};

/// One result of an affine index map as a postfix program over the grid
/// indices: `Const v` and `Dim d` push, the binary operators pop two.
struct AffineProgram {
  enum Op : int64_t { Const, Dim, Add, Mul, FloorDiv, CeilDiv, Mod };
  std::vector<int64_t> code;
  /// Evaluates at grid point `point` with checked 64-bit arithmetic; false
  /// with `error` set on a division by zero, an overflow or bad code.
  bool evaluate(const std::vector<int64_t> &point, int64_t &out,
                std::string &error) const;
};

/// How one operand is cut into blocks.
struct HostBlockMapping {
  enum class Kind { Blocked = 0, Squeezed = 1, Element = 2 };
  /// `any` without a block shape: the kernel sees the whole array.
  bool wholeArray = false;
  /// Per array dimension (1 for squeezed).
  std::vector<int64_t> blockShape;
  std::vector<Kind> kinds;
  std::vector<int64_t> padLow, padHigh;
  /// One program per array dimension for an affine map (none: zeros) ...
  std::vector<AffineProgram> indexMap;
  /// ... or the wrapper of a `@func` map: (grid i32..., prefetch
  /// memrefs..., out memref<R x i64>), the function of the symbol
  /// `indexWrapperName` (resolveEntryPoints).
  PackedFn indexWrapper = nullptr;
  std::string indexWrapperName;
  /// The kernel's ref shape (squeezed dims dropped).
  std::vector<int64_t> kernelShape() const;
};

/// A shape symbol of a symbolic call (docs/gridspec.md#symbols) and its
/// constraints.
struct HostSymbol {
  std::string name;
  int64_t min = 1;
  int64_t max = -1; ///< -1: no maximum
  int64_t multipleOf = 1;
};

/// A dimension expression over the symbols: (sum(coefficients[s] *
/// symbol s) + constant), divided by `divisor` rounding down or up.
struct HostDimExpr {
  std::vector<int64_t> coefficients; ///< one per symbol
  int64_t constant = 0;
  int64_t divisor = 1;
  bool ceil = false;
  /// With checked 64-bit arithmetic; false when a step overflows.
  bool evaluate(const std::vector<int64_t> &values, int64_t &out) const;
  /// "cdiv(n, 8)", "2*n + 1", "4096" over the symbols' names.
  std::string str(const std::vector<HostSymbol> &symbols) const;
};

/// What a call whose shapes are expressions over symbols adds to its plan:
/// the values come at launch (instantiateSymbols).
struct HostSymbolic {
  std::vector<HostSymbol> symbols;
  /// Per grid axis: whether it is an expression, and which.
  std::vector<bool> gridIsExpr;
  std::vector<HostDimExpr> grid;
  /// Per input / output, one expression per dimension (a constant for a
  /// static one).
  std::vector<std::vector<HostDimExpr>> inputs, outputs;
  bool empty() const { return symbols.empty(); }
};

/// One pallas.call, ready to run on the host once its entry points are
/// resolved (resolveEntryPoints).
struct HostCallPlan {
  /// The kernel's symbol ...
  std::string kernelName;
  /// ... and its packed entry point: (program id i32 per kernel-visible
  /// axis, grid size i32 per such axis, then a memref per ref: prefetch,
  /// inputs, outputs, scratch, then, for a symbolic call, one i64 per
  /// symbol sorted by name: `kernelSymbolValues`).
  PackedFn kernel = nullptr;
  /// -1 for a dynamic bound.
  std::vector<int64_t> grid;
  /// Per grid axis, its name or "".
  std::vector<std::string> gridNames;
  std::vector<int64_t> vmappedDims;
  int64_t numScalarPrefetch = 0;
  /// Every input (scalar-prefetch ones first), every output.
  std::vector<HostArrayType> inputs, outputs;
  /// One per non-prefetch input / per output.
  std::vector<HostBlockMapping> inMappings, outMappings;
  std::vector<HostArrayType> scratch;
  /// (input index, output index).
  std::vector<std::pair<int64_t, int64_t>> aliases;
  /// Per kernel ref argument: whether the kernel may write it.
  std::vector<bool> kernelWrites;
  /// The call was eliminated by pallas-dce: there is nothing to run.
  bool eliminated = false;
  /// Non-empty for a symbolic call: `grid` holds -1 at its expression axes
  /// and the arrays' shapes are placeholders (0) at symbolic dimensions,
  /// until instantiateSymbols.
  HostSymbolic symbolic;
  /// Set by instantiateSymbols from a symbolic plan: the symbols' values
  /// sorted by the symbols' names, the kernel's trailing arguments
  /// (pallas.symbol_value, docs/dialect.md#symbolic-shapes).
  std::vector<int64_t> kernelSymbolValues;
  /// The dynamic bounds a launch passes ("dynamic" grid entries; not the
  /// expressions).
  int64_t numDynamicBounds() const;
};

/// `plan` at the symbols' `values` (one per symbol, in order): checks each
/// value against its constraints ("n = 100 is not a multiple of 8") and
/// that every size and grid bound it gives fits (dimensions >= 0, bounds in
/// [0, 2^31), byte sizes in 64 bits), then makes the plan static: array
/// shapes and grid bounds evaluated, `symbolic` cleared. False with `error`
/// set otherwise. A static plan with no values is returned unchanged.
bool instantiateSymbols(HostCallPlan &plan, const std::vector<int64_t> &values,
                        std::string &error);

/// From a symbol name to its packed C-interface entry point; null with
/// `error` set when missing.
using EntryPointLookup =
    std::function<PackedFn(const std::string &symbol, std::string &error)>;

/// Sets `plan.kernel` and each `@func` index map's wrapper from their
/// symbols, looked up in that order (kernel, inputs' maps, outputs' maps).
bool resolveEntryPoints(HostCallPlan &plan, const EntryPointLookup &lookup,
                        std::string &error);

struct HostGridOptions {
  /// One value per dynamic grid bound, in grid order.
  std::vector<int64_t> dynamicBounds;
  /// Upper bound on the bytes the run may allocate (padded carries, block
  /// buffers, scratch, private copies of inputs), checked before allocating.
  uint64_t maxBytes = UINT64_MAX;
  /// If set, receives the wall time of the grid walk alone (milliseconds).
  double *gridWalkMs = nullptr;
};

/// Runs the grid of `plan`. `inputs[i]` holds input i (dense row-major, of
/// `plan.inputs[i]`'s type); `outputs[j]` is the caller's storage for
/// output j, which receives the result. With `inputsWritable` the kernel's
/// writes to an input ref land in the input itself (interpret mode's
/// behaviour when the run owns the inputs); without it such an input is
/// copied first. An aliased output starts as its input's values (copied
/// into the output's storage unless they are the same memory). Fails with
/// `error` set (nothing is left allocated).
bool runHostGrid(const HostCallPlan &plan, const std::vector<void *> &inputs,
                 bool inputsWritable, const std::vector<void *> &outputs,
                 const HostGridOptions &options, std::string &error);

/// One argument of a host program's `@main`.
struct HostProgramArgument {
  enum class Kind {
    Bound,        ///< `index`: a dynamic grid bound
    BatchedBound, ///< `tensor<N x index>`: a bound batched by vmap
    Array,        ///< an input array
  };
  Kind kind = Kind::Array;
  /// Bound values it takes: 1, or N for a batched bound.
  int64_t numBounds = 0;
  HostArrayType array; ///< Array only
};

/// A wrapper `@main` compiled for the host, in destination-passing style:
///   main(bounds: i64 | memref<N x index>..., inputs: memref...,
///        results: memref...)
/// whose pallas.calls were replaced by calls to the launch callback
/// (kHostLaunchCallbackSymbol, below) with their call number.
struct HostProgramPlan {
  /// `@main`'s entry point (resolveEntryPoints).
  PackedFn main = nullptr;
  /// Every pallas.call of `@main`, in order; launch `i` runs `calls[i]`.
  std::vector<HostCallPlan> calls;
  std::vector<HostProgramArgument> arguments;
  /// The Array arguments, in order, and the results.
  std::vector<HostArrayType> inputs, outputs;
  /// Bound values `@main` takes (the batched bounds count N each).
  int64_t numBoundValues() const;
};

/// Sets `program.main` (the symbol "main"), then every call's entry points.
bool resolveEntryPoints(HostProgramPlan &program,
                        const EntryPointLookup &lookup, std::string &error);

/// Runs `program`: `boundValues` are its bound values in argument order,
/// `inputs` its arrays (read only), `outputs` the caller's storage of its
/// results. `options.maxBytes` bounds each launch; `options.gridWalkMs`
/// receives the sum over the launches.
bool runHostProgram(const HostProgramPlan &program,
                    const std::vector<const void *> &inputs,
                    const std::vector<int64_t> &boundValues,
                    const std::vector<void *> &outputs,
                    const HostGridOptions &options, std::string &error);

/// The function a lowered host `@main` calls for each pallas.call:
/// `(int64_t call, memref<? x i64> *pointers)`, `pointers` holding the
/// call's dynamic grid bounds, then the addresses of its input buffers, then
/// those of its output buffers. Generated libraries call it by the name
/// kHostLaunchCallbackSymbol; the JIT resolves the lowering's own name to it.
extern "C" void pallasc_launcher_cpu_launch(int64_t call, void *pointers);
constexpr const char *kHostLaunchCallbackSymbol = "pallasc_launcher_cpu_launch";

} // namespace pallasc::launch

#endif // PALLASC_SRC_LAUNCH_HOSTGRID_H
