//===- CallPlan.h - What the CPU runtime reads from a pallas.call -*- C++ -*-===//
//
// The grid executor needs the final pallas.call's grid mapping in plain C++
// (the call is erased by the lowering). planLaunch reads it, and prepares the
// module for the CPU pipeline: each `@func` index map gets a wrapper that
// writes its results, widened to i64, into a memref, so the runtime calls
// every index map the same way.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_RUNTIME_CALLPLAN_H
#define PALLASC_SRC_RUNTIME_CALLPLAN_H

#include "src/Launch/HostGrid.h"
#include "src/Runtime/Npy.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir::pallas {
class CallOp;
} // namespace mlir::pallas

namespace pallasc::runtime {

/// Reads the plan from `module` (after the call-level transforms) and adds
/// the index-map wrappers. Fails with a message for calls the CPU runtime
/// cannot run. A Mosaic GPU kernel (`pallas_mgpu.kernel`) is planned as
/// whole operands over its mesh's grid, for the GPU launchers and the
/// emulator (it has no host entry point).
bool planLaunch(mlir::ModuleOp module, launch::HostCallPlan &plan,
                std::string &error);

/// Reads the plan of one `call` of `module` (its affine index maps
/// compiled, its entry points named but not resolved) and adds the wrappers
/// of its `@func` index maps, named `<wrapperPrefix>in_<i>` / `out_<i>`.
bool planCall(mlir::ModuleOp module, mlir::pallas::CallOp call,
              const std::string &wrapperPrefix, launch::HostCallPlan &plan,
              std::string &error);

/// Reads a statically shaped tensor type of a supported dtype into `out`;
/// otherwise fails with a message starting with `what`. `allowDynamic`: a
/// symbolic call's `?` dimensions are accepted (as 0 until
/// launch::instantiateSymbols).
bool arrayTypeOf(mlir::Type type, const std::string &what,
                 launch::HostArrayType &out, std::string &error,
                 bool allowDynamic = false);

/// Reads a symbolic call's `symbolic` attribute into `plan.symbolic`: the
/// symbols in the order of `@main`'s symbol arguments, the grid and
/// operand shape expressions over them.
bool planSymbols(mlir::pallas::CallOp call, launch::HostCallPlan &plan,
                 std::string &error);

/// Maps an MLIR element type and the spec's dtype spelling to a DType.
std::optional<DType> dtypeOf(mlir::Type elementType);

} // namespace pallasc::runtime

#endif // PALLASC_SRC_RUNTIME_CALLPLAN_H
