//===- CallOp.cpp - pallas.call ---------------------------------*- C++ -*-===//
//
// pallas.call: its aliases, its verifier (the grid mapping against the
// call's operands and results, the rules pallas_call checks) and its
// verification against the kernel it calls (the kernel's signature against
// the block shapes and dtypes of the call's specs).
//
//===----------------------------------------------------------------------===//

#include "dialects/Pallas/IR/PallasOps.h"
#include "dialects/Pallas/IR/GridMapping.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"


using namespace mlir;
using namespace mlir::pallas;

SmallVector<std::pair<int64_t, int64_t>> CallOp::getAliasPairs() {
  SmallVector<std::pair<int64_t, int64_t>> pairs;
  ArrayRef<int64_t> flat = getInputOutputAliases();
  for (size_t i = 0; i + 1 < flat.size(); i += 2)
    pairs.push_back({flat[i], flat[i + 1]});
  return pairs;
}

static std::string describeShape(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

LogicalResult CallOp::verify() {
  ArrayRef<int64_t> grid = getGrid();
  int64_t numDynamic = 0;
  for (auto [i, g] : llvm::enumerate(grid)) {
    if (g == -1)
      ++numDynamic;
    else if (g < 0)
      return emitOpError() << "grid[" << i << "] = " << g
                           << ": a grid bound must be non-negative or -1 "
                              "(dynamic)";
  }
  if (numDynamic != static_cast<int64_t>(getDynamicGridBounds().size()))
    return emitOpError() << "grid has " << numDynamic
                         << " dynamic bounds but "
                         << getDynamicGridBounds().size()
                         << " bound operands are given";
  if (auto names = getGridNames())
    if (names->size() != grid.size())
      return emitOpError() << "grid_names has " << names->size()
                           << " entries but the grid has rank "
                           << grid.size();

  int64_t numInputs = getInputs().size();
  int64_t nsp = getNumScalarPrefetch();
  if (nsp < 0 || nsp > numInputs)
    return emitOpError() << "num_scalar_prefetch = " << nsp
                         << " is out of range for " << numInputs
                         << " inputs";
  if (static_cast<int64_t>(getInSpecs().size()) != numInputs - nsp)
    return emitOpError() << "has " << getInSpecs().size()
                         << " in_specs but " << numInputs - nsp
                         << " non-prefetch inputs";
  if (getOutSpecs().size() != getOutputs().size())
    return emitOpError() << "has " << getOutSpecs().size()
                         << " out_specs but " << getOutputs().size()
                         << " outputs";

  for (int64_t i = 0; i < nsp; ++i) {
    auto t = dyn_cast<RankedTensorType>(getInputs()[i].getType());
    if (!t || !t.hasStaticShape() || !t.getElementType().isSignlessInteger())
      return emitOpError() << "scalar-prefetch input " << i
                           << " must be a statically shaped integer tensor, "
                              "got "
                           << getInputs()[i].getType();
  }

  auto checkOperand = [&](Type type, BlockSpecAttr spec, StringRef what,
                          int64_t index) -> LogicalResult {
    if (isa<HiType>(type))
      return success(); // Checked after pallas-hi-to-lo.
    auto t = dyn_cast<RankedTensorType>(type);
    if (!t || (!t.hasStaticShape() && !getSymbolic()))
      return emitOpError() << what << " " << index
                           << " must be a statically shaped tensor, got "
                           << type
                           << (t ? " (dynamic dimensions need the `symbolic` "
                                   "attribute)"
                                 : "");
    if (spec.isWholeArray())
      return success();
    if (spec.getRank() != static_cast<unsigned>(t.getRank()))
      return emitOpError() << what << " " << index << " has rank "
                           << t.getRank() << " but its block spec has "
                           << spec.getRank() << " dimensions";
    if (AffineMap map = spec.getIndexMap())
      if (map.getNumDims() != grid.size())
        return emitOpError() << what << " " << index << ": index map " << AffineMapAttr::get(map)
                             << " takes " << map.getNumDims()
                             << " grid indices but the grid has rank "
                             << grid.size();
    return success();
  };
  for (auto [i, v] : llvm::enumerate(getBlockedInputs()))
    if (failed(checkOperand(v.getType(), cast<BlockSpecAttr>(getInSpecs()[i]),
                            "input", i + nsp)))
      return failure();
  for (auto [i, v] : llvm::enumerate(getOutputs()))
    if (failed(checkOperand(v.getType(),
                            cast<BlockSpecAttr>(getOutSpecs()[i]), "output",
                            i)))
      return failure();

  int64_t numDynamicSizes = 0;
  for (Type t : getOutputs().getTypes())
    if (auto r = dyn_cast<RankedTensorType>(t))
      numDynamicSizes += r.getNumDynamicDims();
  if (numDynamicSizes != static_cast<int64_t>(getDynamicSizes().size()))
    return emitOpError() << "results have " << numDynamicSizes
                         << " dynamic dimensions but "
                         << getDynamicSizes().size()
                         << " dynamic sizes are given";
  if (failed(verifySymbolic()))
    return failure();

  for (auto [i, t] : llvm::enumerate(getScratch()))
    if (!isa<RefType>(cast<TypeAttr>(t).getValue()))
      return emitOpError() << "scratch[" << i << "] must be a !pallas.ref";

  // Aliases (pallas_call's checks and the abstract-eval rule).
  if (getInputOutputAliases().size() % 2)
    return emitOpError("input_output_aliases must hold (input, output) pairs");
  llvm::SmallSet<int64_t, 4> aliasedOutputs, aliasedInputs;
  for (auto [in, out] : getAliasPairs()) {
    if (in < 0 || in >= numInputs)
      return emitOpError() << "input_output_aliases contains the mapping '"
                           << in << ":" << out << "' with input index " << in
                           << " outside the range [0, " << numInputs << ")";
    if (out < 0 || out >= static_cast<int64_t>(getOutputs().size()))
      return emitOpError() << "input_output_aliases contains the mapping '"
                           << in << ":" << out << "' with output index "
                           << out << " outside the range [0, "
                           << getOutputs().size() << ")";
    Type inType = getInputs()[in].getType();
    Type outType = getOutputs()[out].getType();
    if (inType != outType)
      return emitOpError() << "input_output_aliases contains the mapping '"
                           << in << ":" << out << "' referring to input "
                           << in << " of type " << describeShape(inType)
                           << " and to output " << out
                           << " of a different type "
                           << describeShape(outType);
    if (!aliasedOutputs.insert(out).second)
      return emitOpError() << "output " << out
                           << " is aliased to more than one input";
    if (!aliasedInputs.insert(in).second)
      return emitOpError() << "input " << in
                           << " is aliased to more than one output";
  }
  for (int64_t p : getPinnedInputs()) {
    if (p < 0 || p >= numInputs)
      return emitOpError() << "pinned input " << p << " is out of range";
    if (!aliasedInputs.contains(p))
      return emitOpError() << "input pinned buffers without "
                              "input_output_aliases: input "
                           << p;
  }

  // vmapped_dims, and dimension_semantics at the one rank rule (one entry
  // per kernel-visible axis): the rules of GridMapping.h.
  if (failed(verifyGridAxes([&] { return emitOpError(); }, grid.size(),
                            getVmappedDims(), getCompilerParamsAttr())))
    return failure();

  if (auto cost = getCostEstimateAttr())
    if (cost.getFlops() < 0 || cost.getBytesAccessed() < 0 ||
        cost.getTranscendentals() < 0)
      return emitOpError("cost estimate entries must be non-negative");
  return success();
}

/// The `symbolic` attribute's form: `symbols` a dictionary of
/// `{min, max, multiple_of}` integer dictionaries, `grid` one string per
/// axis, `inputs`/`outputs` one array of strings per operand with one string
/// per dimension. The expressions themselves are parsed by their readers
/// (src/Spec/SymExpr.h); the importer wrote them from a validated spec.
LogicalResult CallOp::verifySymbolic() {
  DictionaryAttr sym = getSymbolicAttr();
  if (!sym)
    return success();
  auto symbols = sym.getAs<DictionaryAttr>("symbols");
  if (!symbols || symbols.empty())
    return emitOpError("symbolic.symbols must be a non-empty dictionary");
  for (NamedAttribute s : symbols) {
    auto c = dyn_cast<DictionaryAttr>(s.getValue());
    if (!c)
      return emitOpError() << "symbolic.symbols." << s.getName().getValue()
                           << " must be a dictionary";
    for (NamedAttribute k : c)
      if (!isa<IntegerAttr>(k.getValue()) ||
          !llvm::is_contained({"min", "max", "multiple_of"},
                              k.getName().getValue()))
        return emitOpError() << "symbolic.symbols." << s.getName().getValue()
                             << "." << k.getName().getValue()
                             << ": expected an integer min, max or "
                                "multiple_of";
  }
  auto isStrings = [](Attribute a, size_t n) {
    auto arr = dyn_cast_or_null<ArrayAttr>(a);
    return arr && arr.size() == n &&
           llvm::all_of(arr, [](Attribute e) { return isa<StringAttr>(e); });
  };
  if (!isStrings(sym.get("grid"), getGrid().size()))
    return emitOpError() << "symbolic.grid must hold one string per grid "
                            "axis ("
                         << getGrid().size() << ")";
  auto checkOperands = [&](StringRef key, TypeRange types) -> LogicalResult {
    auto arr = sym.getAs<ArrayAttr>(key);
    if (!arr || arr.size() != types.size())
      return emitOpError() << "symbolic." << key << " must hold one entry per "
                           << key.drop_back() << " (" << types.size() << ")";
    for (auto [i, t] : llvm::enumerate(types)) {
      auto r = dyn_cast<RankedTensorType>(t);
      if (r && !isStrings(arr[i], r.getRank()))
        return emitOpError() << "symbolic." << key << "[" << i
                             << "] must hold one string per dimension ("
                             << r.getRank() << ")";
    }
    return success();
  };
  return failure(failed(checkOperands("inputs", getInputs().getTypes())) ||
                 failed(checkOperands("outputs", getOutputs().getTypes())));
}

LogicalResult CallOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  Operation *sym = symbolTable.lookupNearestSymbolFrom(*this, getKernelAttr());
  auto kernel = dyn_cast_or_null<KernelOp>(sym);
  if (!kernel)
    return emitOpError() << "'" << getKernel()
                         << "' does not name a pallas.kernel";
  if (failed(verifyAgainstKernel(kernel)))
    return failure();
  // Index functions.
  auto checkIndexFunc = [&](BlockSpecAttr spec, StringRef what,
                            int64_t index, int64_t rank) -> LogicalResult {
    if (!spec.getIndexFunc())
      return success();
    auto func = symbolTable.lookupNearestSymbolFrom<func::FuncOp>(
        *this, spec.getIndexFunc());
    if (!func)
      return emitOpError() << what << " " << index << ": index map "
                           << spec.getIndexFunc()
                           << " does not name a func.func";
    FunctionType type = func.getFunctionType();
    size_t gridRank = getGrid().size();
    size_t expectedArgs = gridRank + getNumScalarPrefetch();
    if (type.getNumInputs() != expectedArgs)
      return emitOpError() << what << " " << index << ": index map "
                           << spec.getIndexFunc() << " takes "
                           << type.getNumInputs() << " arguments but "
                           << expectedArgs << " are passed (" << gridRank
                           << " grid indices + " << getNumScalarPrefetch()
                           << " scalar-prefetch refs)";
    for (size_t i = 0; i < gridRank; ++i)
      if (!type.getInput(i).isSignlessInteger(32) &&
          !type.getInput(i).isIndex())
        return emitOpError() << what << " " << index << ": index map "
                             << spec.getIndexFunc() << " argument " << i
                             << " must be i32 or index";
    for (int64_t i = 0, e = getNumScalarPrefetch(); i < e; ++i)
      if (type.getInput(gridRank + i) != kernel.getArgumentTypes()[i])
        return emitOpError() << what << " " << index << ": index map "
                             << spec.getIndexFunc() << " argument "
                             << gridRank + i << " must be "
                             << kernel.getArgumentTypes()[i]
                             << " (scalar-prefetch ref " << i << ")";
    if (static_cast<int64_t>(type.getNumResults()) != rank)
      return emitOpError() << what << " " << index << ": index map "
                           << spec.getIndexFunc() << " returns "
                           << type.getNumResults()
                           << " indices but the array has rank " << rank;
    for (Type r : type.getResults())
      if (!r.isSignlessInteger(32) && !r.isIndex())
        return emitOpError() << what << " " << index << ": index map "
                             << spec.getIndexFunc()
                             << " must return i32 or index values";
    return success();
  };
  int64_t nsp = getNumScalarPrefetch();
  for (auto [i, v] : llvm::enumerate(getBlockedInputs()))
    if (auto t = dyn_cast<RankedTensorType>(v.getType()))
      if (failed(checkIndexFunc(cast<BlockSpecAttr>(getInSpecs()[i]), "input",
                                i + nsp, t.getRank())))
        return failure();
  for (auto [i, v] : llvm::enumerate(getOutputs()))
    if (auto t = dyn_cast<RankedTensorType>(v.getType()))
      if (failed(checkIndexFunc(cast<BlockSpecAttr>(getOutSpecs()[i]),
                                "output", i, t.getRank())))
        return failure();
  return success();
}

LogicalResult CallOp::verifyAgainstKernel(KernelOp kernel) {
  ArrayRef<Type> args = kernel.getArgumentTypes();
  int64_t nsp = getNumScalarPrefetch();
  int64_t numBlocked = getBlockedInputs().size();
  int64_t numOutputs = getOutputs().size();
  int64_t numScratch = getScratch().size();
  int64_t expected = nsp + numBlocked + numOutputs + numScratch;
  if (static_cast<int64_t>(args.size()) != expected) {
    InFlightDiagnostic diag =
        emitOpError() << "kernel @" << kernel.getSymName() << " takes "
                      << args.size() << " refs but the call passes "
                      << expected << " (" << nsp << " scalar-prefetch + "
                      << numBlocked << " inputs + " << numOutputs
                      << " outputs + " << numScratch << " scratch)";
    diag.attachNote(kernel.getLoc()) << "kernel defined here";
    return diag;
  }
  auto mismatch = [&](int64_t argIndex, StringRef role, int64_t roleIndex,
                      Type expectedType) {
    InFlightDiagnostic diag =
        emitOpError() << "kernel @" << kernel.getSymName() << " argument #"
                      << argIndex << " (" << role << " " << roleIndex
                      << ") has type " << args[argIndex]
                      << " but the call's spec gives " << expectedType;
    diag.attachNote(kernel.getArgument(argIndex).getLoc())
        << "kernel argument declared here";
    return diag;
  };
  for (int64_t i = 0; i < nsp; ++i) {
    auto t = cast<RankedTensorType>(getInputs()[i].getType());
    Type want = RefType::get(getContext(), t.getShape(), t.getElementType(),
                             MemorySpace::Smem);
    if (args[i] != want)
      return mismatch(i, "scalar prefetch", i, want);
  }
  auto blockRef = [&](Type operandType, BlockSpecAttr spec) -> Type {
    if (isa<HiType>(operandType))
      return {};
    auto t = cast<RankedTensorType>(operandType);
    return RefType::get(getContext(), spec.getKernelShape(t.getShape()),
                        t.getElementType(), spec.getMemorySpace());
  };
  // Kernel argument `arg` of blocked operand `role` `roleIndex` (of
  // `operandType`, block spec `spec`): a !pallas.hi aggregate for a hi
  // operand, else the block's ref.
  auto checkBlocked = [&](int64_t arg, Type operandType, Attribute spec,
                          StringRef role, int64_t roleIndex) -> LogicalResult {
    Type want = blockRef(operandType, cast<BlockSpecAttr>(spec));
    if (want && args[arg] != want)
      return mismatch(arg, role, roleIndex, want);
    if (!want && !isa<HiType>(args[arg]))
      return emitOpError() << "kernel argument #" << arg
                           << " must be a !pallas.hi aggregate for hi " << role
                           << " " << roleIndex;
    return success();
  };
  for (int64_t i = 0; i < numBlocked; ++i)
    if (failed(checkBlocked(nsp + i, getBlockedInputs()[i].getType(),
                            getInSpecs()[i], "input", nsp + i)))
      return failure();
  for (int64_t i = 0; i < numOutputs; ++i)
    if (failed(checkBlocked(nsp + numBlocked + i, getOutputs()[i].getType(),
                            getOutSpecs()[i], "output", i)))
      return failure();
  for (int64_t i = 0; i < numScratch; ++i) {
    int64_t arg = nsp + numBlocked + numOutputs + i;
    Type want = cast<TypeAttr>(getScratch()[i]).getValue();
    if (args[arg] != want)
      return mismatch(arg, "scratch", i, want);
  }
  // program_id / num_programs axes must exist in the kernel's grid (the
  // grid without the vmapped dims).
  int64_t kernelRank = getGrid().size() - getVmappedDims().size();
  WalkResult walk = kernel.walk([&](Operation *op) {
    std::optional<int64_t> axis;
    if (auto pid = dyn_cast<ProgramIdOp>(op))
      axis = pid.getAxis();
    else if (auto np = dyn_cast<NumProgramsOp>(op))
      axis = np.getAxis();
    if (auto sv = dyn_cast<SymbolValueOp>(op)) {
      DictionaryAttr sym = getSymbolicAttr();
      auto symbols =
          sym ? sym.getAs<DictionaryAttr>("symbols") : DictionaryAttr();
      if (symbols && symbols.get(sv.getSymbol()))
        return WalkResult::advance();
      std::string declared;
      if (symbols)
        for (NamedAttribute s : symbols)
          declared += (declared.empty() ? "" : ", ") +
                      s.getName().getValue().str();
      InFlightDiagnostic diag =
          op->emitOpError() << "reads symbol '" << sv.getSymbol() << "', "
                            << (symbols ? "which this call does not declare "
                                          "(its symbols: " +
                                              declared + ")"
                                        : std::string("but this call has no "
                                                      "symbolic shapes"));
      diag.attachNote(getLoc()) << "called from here";
      return WalkResult::interrupt();
    }
    if (axis && *axis >= kernelRank) {
      InFlightDiagnostic diag =
          op->emitOpError() << "axis " << *axis
                            << " is out of range: the grid of this call has "
                            << kernelRank << " axes";
      diag.attachNote(getLoc()) << "called from here";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}
