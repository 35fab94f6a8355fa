//===- GridMapping.cpp - The one reader of a pallas.call's grid mapping ---===//

#include "dialects/Pallas/IR/GridMapping.h"
#include "dialects/Pallas/IR/GpuCallAttrs.h"
#include "dialects/Pallas/IR/PallasOps.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::pallas;

LogicalResult
mlir::pallas::verifyGridAxes(function_ref<InFlightDiagnostic()> emitError,
                             int64_t gridRank, ArrayRef<int64_t> vmapped,
                             CompilerParamsAttr params) {
  int64_t prev = -1;
  for (int64_t d : vmapped) {
    if (d <= prev || d >= gridRank)
      return emitError() << "vmapped_dims must be increasing grid axes in "
                            "[0, "
                         << gridRank << ")";
    prev = d;
  }
  if (!params)
    return success();
  int64_t visible = gridRank - static_cast<int64_t>(vmapped.size());
  int64_t given = params.getDimensionSemantics().size();
  if (given != 0 && given != visible)
    return emitError() << "compiler_params.tpu.dimension_semantics has "
                       << given << (given == 1 ? " entry" : " entries")
                       << " but the kernel sees " << visible
                       << " grid axes (grid rank " << gridRank << ", "
                       << vmapped.size()
                       << " vmapped); give one per kernel-visible axis";
  return success();
}

void GridMapping::finish() {
  visible.clear();
  for (int64_t a = 0, e = grid.size(); a < e; ++a)
    if (!llvm::is_contained(vmapped, a))
      visible.push_back(a);
}

GridMapping GridMapping::get(CallOp call) {
  GridMapping m;
  m.grid.assign(call.getGrid().begin(), call.getGrid().end());
  if (auto names = call.getGridNames())
    for (Attribute a : *names)
      m.gridNames.push_back(cast<StringAttr>(a).str());
  m.vmapped.assign(call.getVmappedDims().begin(), call.getVmappedDims().end());
  m.numScalarPrefetch = call.getNumScalarPrefetch();
  for (Attribute a : call.getInSpecs())
    m.inSpecs.push_back(cast<BlockSpecAttr>(a));
  for (Attribute a : call.getOutSpecs())
    m.outSpecs.push_back(cast<BlockSpecAttr>(a));
  m.aliases = call.getAliasPairs();
  m.params = call.getCompilerParamsAttr();
  m.finish();
  return m;
}

GridMapping GridMapping::get(GpuCallAttr call) {
  GridMapping m;
  m.grid.assign(call.getGrid().begin(), call.getGrid().end());
  for (StringAttr name : call.getGridNames())
    m.gridNames.push_back(name.str());
  m.vmapped.assign(call.getVmappedDims().begin(), call.getVmappedDims().end());
  m.numScalarPrefetch = call.getNumScalarPrefetch();
  m.inSpecs.assign(call.getInSpecs().begin(), call.getInSpecs().end());
  m.outSpecs.assign(call.getOutSpecs().begin(), call.getOutSpecs().end());
  ArrayRef<int64_t> flat = call.getInputOutputAliases();
  for (size_t i = 0; i + 1 < flat.size(); i += 2)
    m.aliases.push_back({flat[i], flat[i + 1]});
  m.params = call.getCompilerParams();
  m.finish();
  return m;
}

bool GridMapping::isVmapped(int64_t axis) const {
  return llvm::is_contained(vmapped, axis);
}

ArrayRef<DimensionSemantics> GridMapping::getVisibleSemantics() const {
  if (!params)
    return {};
  return params.getDimensionSemantics();
}

DimensionSemantics
GridMapping::getAxisSemantics(int64_t axis,
                              DimensionSemantics defaultSemantics) const {
  if (isVmapped(axis))
    return DimensionSemantics::Parallel;
  ArrayRef<DimensionSemantics> user = getVisibleSemantics();
  if (user.empty())
    return defaultSemantics;
  auto *it = llvm::find(visible, axis);
  return user[it - visible.begin()];
}

SmallVector<int64_t> GridMapping::getSequentialAxes() const {
  int64_t rank = getRank();
  SmallVector<bool> seq(rank, false);
  for (int64_t a : visible)
    seq[a] = getAxisSemantics(a, DimensionSemantics::Parallel) ==
             DimensionSemantics::Arbitrary;
  for (BlockSpecAttr spec : outSpecs) {
    if (spec.isWholeArray() || !spec.getIndexMap())
      continue;
    AffineMap map = spec.getIndexMap();
    for (int64_t a = 0; a < rank; ++a)
      if (!map.isFunctionOfDim(a))
        seq[a] = true;
  }
  SmallVector<int64_t> out;
  for (int64_t a : visible)
    if (seq[a])
      out.push_back(a);
  return out;
}
