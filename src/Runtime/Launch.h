//===- Launch.h - What the CPU runtime reads from a pallas.call --*- C++ -*-===//
//
// The grid executor needs the final pallas.call's grid mapping in plain C++
// (the call is erased by the lowering). planLaunch reads it, and prepares the
// module for the CPU pipeline: each `@func` index map gets a wrapper that
// writes its results, widened to i64, into a memref, so the runtime calls
// every index map the same way.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_RUNTIME_LAUNCH_H
#define PALLASC_SRC_RUNTIME_LAUNCH_H

#include "src/Launch/HostGrid.h"
#include "src/Runtime/Npy.h"

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinOps.h"

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir::pallas {
class CallOp;
} // namespace mlir::pallas

namespace pallasc::runtime {

/// An array operand: its dtype and shape.
struct ArrayType {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::string describe() const { return HostArray(dtype, shape).describe(); }
};

/// How one operand is cut into blocks (a #pallas.block_spec).
struct BlockMapping {
  enum class Kind { Blocked = 0, Squeezed = 1, Element = 2 };
  /// `any` without a block shape: the kernel sees the whole array.
  bool wholeArray = false;
  /// Per array dimension (1 for squeezed).
  std::vector<int64_t> blockShape;
  std::vector<Kind> kinds;
  std::vector<int64_t> padLow, padHigh;
  /// Either an affine map over the grid indices...
  mlir::AffineMap indexMap;
  /// ... or the symbol of the generated wrapper of a `@func` map.
  std::string indexWrapper;
  /// The kernel's ref shape (squeezed dims dropped).
  std::vector<int64_t> kernelShape() const;
};

/// The launch described by the final pallas.call.
struct LaunchPlan {
  std::string kernel;
  /// -1 for a dynamic bound.
  std::vector<int64_t> grid;
  std::vector<std::string> gridNames;
  std::vector<int64_t> vmappedDims;
  int64_t numScalarPrefetch = 0;
  /// Every input (scalar-prefetch ones first), every output.
  std::vector<ArrayType> inputs, outputs;
  /// One per non-prefetch input / per output.
  std::vector<BlockMapping> inMappings, outMappings;
  std::vector<ArrayType> scratch;
  /// (input index, output index).
  std::vector<std::pair<int64_t, int64_t>> aliases;
  /// Per kernel ref argument: whether the kernel may write it.
  std::vector<bool> kernelWrites;
  /// The call was eliminated by pallas-dce: there is nothing to run.
  bool eliminated = false;
  int64_t numDynamicBounds() const;
};

/// Reads the plan from `module` (after the call-level transforms) and adds
/// the index-map wrappers. Fails with a message for calls the CPU runtime
/// cannot run.
bool planLaunch(mlir::ModuleOp module, LaunchPlan &plan, std::string &error);

/// Reads the plan of one `call` of `module` and adds the wrappers of its
/// `@func` index maps, named `<wrapperPrefix>in_<i>` / `out_<i>`.
bool planCall(mlir::ModuleOp module, mlir::pallas::CallOp call,
              const std::string &wrapperPrefix, LaunchPlan &plan,
              std::string &error);

/// One result of an affine index map as the launch library evaluates it;
/// false with `error` set for a map that uses symbols.
bool compileAffineExpr(mlir::AffineExpr expr, launch::AffineProgram &program,
                       std::string &error);

/// `plan` in the launch library's terms: the index maps compiled, the
/// kernel and `@func` index-map wrappers resolved by `lookup` (from a symbol
/// name to its packed C-interface entry point; null with `error` set when
/// missing).
bool toHostCallPlan(
    const LaunchPlan &plan,
    const std::function<launch::PackedFn(const std::string &, std::string &)>
        &lookup,
    launch::HostCallPlan &host, std::string &error);

/// The launch library's element type of `dtype`.
launch::ElementType elementTypeOf(DType dtype);

/// Reads a statically shaped tensor type of a supported dtype into `out`;
/// otherwise fails with a message starting with `what`.
bool arrayTypeOf(mlir::Type type, const std::string &what, ArrayType &out,
                 std::string &error);

/// Maps an MLIR element type and the spec's dtype spelling to a DType.
std::optional<DType> dtypeOf(mlir::Type elementType);

} // namespace pallasc::runtime

#endif // PALLASC_SRC_RUNTIME_LAUNCH_H
