//===- GridMapping.cpp - The one reader of a pallas.call's grid mapping ---===//

#include "dialects/Pallas/IR/GridMapping.h"
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

FailureOr<GridMapping>
GridMapping::get(DictionaryAttr attrs,
                 function_ref<InFlightDiagnostic()> emitError) {
  GridMapping m;
  // An entry of the expected kind, or a diagnostic naming what is wrong.
  auto entry = [&](StringRef name, bool required, StringRef expected,
                   auto isExpected) -> FailureOr<Attribute> {
    Attribute a = attrs.get(name);
    if (!a) {
      if (!required)
        return Attribute();
      return emitError() << "the recorded pallas.call has no '" << name
                         << "' (expected " << expected << ")";
    }
    if (!isExpected(a))
      return emitError() << "the recorded pallas.call's '" << name
                         << "' must be " << expected << ", got " << a;
    return a;
  };
  auto isI64Array = [](Attribute a) { return isa<DenseI64ArrayAttr>(a); };
  auto isSpecArray = [](Attribute a) {
    auto array = dyn_cast<ArrayAttr>(a);
    return array && llvm::all_of(array, llvm::IsaPred<BlockSpecAttr>);
  };
  FailureOr<Attribute> grid =
      entry("grid", true, "an array<i64: ...>", isI64Array);
  FailureOr<Attribute> vmapped =
      entry("vmapped_dims", false, "an array<i64: ...>", isI64Array);
  FailureOr<Attribute> aliases =
      entry("input_output_aliases", false, "an array<i64: ...>", isI64Array);
  FailureOr<Attribute> names =
      entry("grid_names", false, "an array of strings", [](Attribute a) {
        auto array = dyn_cast<ArrayAttr>(a);
        return array && llvm::all_of(array, llvm::IsaPred<StringAttr>);
      });
  FailureOr<Attribute> nsp =
      entry("num_scalar_prefetch", false, "an integer",
            [](Attribute a) { return isa<IntegerAttr>(a); });
  FailureOr<Attribute> inSpecs =
      entry("in_specs", true, "an array of #pallas.block_spec", isSpecArray);
  FailureOr<Attribute> outSpecs =
      entry("out_specs", true, "an array of #pallas.block_spec", isSpecArray);
  FailureOr<Attribute> params =
      entry("compiler_params", false, "a #pallas.compiler_params",
            [](Attribute a) { return isa<CompilerParamsAttr>(a); });
  if (failed(grid) || failed(vmapped) || failed(aliases) || failed(names) ||
      failed(nsp) || failed(inSpecs) || failed(outSpecs) || failed(params))
    return failure();

  ArrayRef<int64_t> g = cast<DenseI64ArrayAttr>(*grid).asArrayRef();
  m.grid.assign(g.begin(), g.end());
  if (*vmapped) {
    ArrayRef<int64_t> v = cast<DenseI64ArrayAttr>(*vmapped).asArrayRef();
    m.vmapped.assign(v.begin(), v.end());
  }
  if (*names) {
    for (Attribute a : cast<ArrayAttr>(*names))
      m.gridNames.push_back(cast<StringAttr>(a).str());
    if (m.gridNames.size() != m.grid.size())
      return emitError() << "the recorded pallas.call's grid_names has "
                         << m.gridNames.size()
                         << " entries but the grid has rank " << m.grid.size();
  }
  if (*nsp) {
    m.numScalarPrefetch = cast<IntegerAttr>(*nsp).getInt();
    if (m.numScalarPrefetch < 0)
      return emitError() << "the recorded pallas.call's num_scalar_prefetch "
                            "must be non-negative, got "
                         << m.numScalarPrefetch;
  }
  for (Attribute a : cast<ArrayAttr>(*inSpecs))
    m.inSpecs.push_back(cast<BlockSpecAttr>(a));
  for (Attribute a : cast<ArrayAttr>(*outSpecs))
    m.outSpecs.push_back(cast<BlockSpecAttr>(a));
  for (auto [what, specs] :
       {std::pair{"in_specs", ArrayRef(m.inSpecs)},
        std::pair{"out_specs", ArrayRef(m.outSpecs)}})
    for (auto [i, spec] : llvm::enumerate(specs))
      if (AffineMap map = spec.getIndexMap();
          map && map.getNumDims() != m.grid.size())
        return emitError() << "the recorded pallas.call's " << what << "["
                           << i << "] index map takes " << map.getNumDims()
                           << " grid indices but the grid has rank "
                           << m.grid.size();
  if (*aliases) {
    ArrayRef<int64_t> flat = cast<DenseI64ArrayAttr>(*aliases).asArrayRef();
    if (flat.size() % 2)
      return emitError() << "the recorded pallas.call's input_output_aliases "
                            "must hold (input, output) pairs";
    for (size_t i = 0; i + 1 < flat.size(); i += 2)
      m.aliases.push_back({flat[i], flat[i + 1]});
  }
  if (*params)
    m.params = cast<CompilerParamsAttr>(*params);
  if (failed(verifyGridAxes(emitError, m.getRank(), m.vmapped, m.params)))
    return failure();
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
