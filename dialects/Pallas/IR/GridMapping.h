//===- GridMapping.h - The one reader of a pallas.call's grid mapping -*- C++ -*-===//
//
// What every consumer of a pallas.call needs of its grid mapping, read in one
// place with one rule per field: the grid (dynamic bounds as -1), which axes
// vmap added (invisible to the kernel) and which the kernel sees, the
// dimension semantics per axis, the block specs and the input/output aliases.
// The GPU lowering (from pallas-gpu-prepare's record of the call, the
// #pallas.gpu_call `pallas.gpu.call`), the TPU lowering and the CPU runtime's
// launch plan (from the pallas.call itself) all read it through GridMapping.
//
// The rules:
//  - `vmapped_dims` are increasing axes of the grid; the kernel sees the
//    others (the visible axes), in order.
//  - `compiler_params.tpu.dimension_semantics`, when given, has one entry per
//    kernel-visible axis (the rule of the spec validator, whose grid is the
//    kernel's: vmap adds axes after it). Vmapped axes are parallel. A visible
//    axis without an entry has the backend's default (the TPU lowering's
//    `arbitrary`, as Mosaic's; the GPU lowering's `parallel`).
//  - `input_output_aliases` are flat (input, output) pairs; input indices
//    count the scalar-prefetch operands.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_DIALECTS_PALLAS_IR_GRIDMAPPING_H
#define PALLASC_DIALECTS_PALLAS_IR_GRIDMAPPING_H

#include "dialects/Pallas/IR/PallasDialect.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/SmallVector.h"

#include <string>
#include <utility>

namespace mlir::pallas {

class CallOp;
class GpuCallAttr;

/// The checks of the grid axes shared by pallas.call's verifier and
/// #pallas.gpu_call's: `vmapped` increasing axes of a grid of rank
/// `gridRank`; `params`' dimension_semantics one per kernel-visible axis.
LogicalResult verifyGridAxes(function_ref<InFlightDiagnostic()> emitError,
                             int64_t gridRank, ArrayRef<int64_t> vmapped,
                             CompilerParamsAttr params);

class GridMapping {
public:
  /// The mapping of a (verified) pallas.call.
  static GridMapping get(CallOp call);
  /// The mapping of a pallas.call recorded by pallas-gpu-prepare (a
  /// #pallas.gpu_call, whose verifier checks the rules above).
  static GridMapping get(GpuCallAttr call);

  /// One bound per axis, -1 for a dynamic one.
  ArrayRef<int64_t> getGrid() const { return grid; }
  int64_t getRank() const { return grid.size(); }
  /// Empty, or one name per axis.
  ArrayRef<std::string> getGridNames() const { return gridNames; }
  /// The axes vmap added, increasing.
  ArrayRef<int64_t> getVmappedAxes() const { return vmapped; }
  /// The axes the kernel sees (program ids), increasing.
  ArrayRef<int64_t> getVisibleAxes() const { return visible; }
  bool isVmapped(int64_t axis) const;
  int64_t getNumScalarPrefetch() const { return numScalarPrefetch; }
  ArrayRef<BlockSpecAttr> getInSpecs() const { return inSpecs; }
  ArrayRef<BlockSpecAttr> getOutSpecs() const { return outSpecs; }
  /// (input index, output index).
  ArrayRef<std::pair<int64_t, int64_t>> getAliases() const { return aliases; }
  /// Null when the call has none.
  CompilerParamsAttr getCompilerParams() const { return params; }

  /// The user's dimension_semantics, one per visible axis; empty if none.
  ArrayRef<DimensionSemantics> getVisibleSemantics() const;
  /// The semantics of grid axis `axis`: parallel for a vmapped axis; for a
  /// visible one the user's entry, or `defaultSemantics` when none is given.
  DimensionSemantics getAxisSemantics(int64_t axis,
                                      DimensionSemantics defaultSemantics) const;
  /// The visible axes that must run in order inside one program: marked
  /// `arbitrary`, or ignored by some blocked output's index map (its block
  /// is revisited across the axis, as an accumulator).
  SmallVector<int64_t> getSequentialAxes() const;

private:
  void finish();

  SmallVector<int64_t> grid, vmapped, visible;
  SmallVector<std::string> gridNames;
  int64_t numScalarPrefetch = 0;
  SmallVector<BlockSpecAttr> inSpecs, outSpecs;
  SmallVector<std::pair<int64_t, int64_t>> aliases;
  CompilerParamsAttr params;
};

} // namespace mlir::pallas

#endif // PALLASC_DIALECTS_PALLAS_IR_GRIDMAPPING_H
