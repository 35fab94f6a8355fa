//===- HiToLo.cpp - pallas-hi-to-lo: flatten !pallas.hi aggregates -------===//
//
// JAX's _pallas_call_to_lojax. Every `!pallas.hi<name, parts...>`
// operand and result of a pallas.call becomes its parts, in order; the
// kernel's hi arguments (aggregates of refs) become their part refs; the
// wrapper function's hi arguments and results are flattened too, with
// pallas.hi_pack / hi_unpack where values cross (folded away at the end).
// `input_output_aliases` and `pinned_inputs` are remapped per flattened index
// (JAX's _get_index_mapping). An `@func` index map that involves hi
// values is an error, as in JAX.
//
// Block specs: JAX asks the hi type for `lower_block_spec`; pallasc's
// hi types carry no such method, so the rule is fixed: a hi operand's block
// spec applies to each part of the same rank as it is; a part of lower rank r
// gets the spec's first r dimensions and the first r results of its index
// map (e.g. int8 values [N, K] in [64, K] blocks with per-row f32 scales [N]
// in [64] blocks); an `any` spec stays `any` for every part; a part of higher
// rank than the spec is an error.
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/CallUtils.h"
#include "passes/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir::pallas {
#define GEN_PASS_DEF_PALLASHITOLO
#include "passes/Transforms/Passes.h.inc"
} // namespace mlir::pallas

#define DEBUG_TYPE "pallas-hi-to-lo"

using namespace mlir;
using namespace mlir::pallas;

namespace {

/// The lo types of a type: its parts for a hi type, itself otherwise.
SmallVector<Type> loTypes(Type type) {
  if (auto hi = dyn_cast<HiType>(type))
    return SmallVector<Type>(hi.getParts());
  return {type};
}

/// JAX's _get_index_mapping: hi index -> its lo indices.
SmallVector<SmallVector<int64_t>> getIndexMapping(TypeRange types) {
  SmallVector<SmallVector<int64_t>> mapping;
  int64_t counter = 0;
  for (Type t : types) {
    SmallVector<int64_t> lo;
    for (size_t i = 0, e = loTypes(t).size(); i < e; ++i)
      lo.push_back(counter++);
    mapping.push_back(lo);
  }
  return mapping;
}

bool involvesHi(Operation *op) {
  bool found = false;
  op->walk([&](Operation *nested) {
    auto isHi = [](Type t) { return isa<HiType>(t); };
    if (llvm::any_of(nested->getOperandTypes(), isHi) ||
        llvm::any_of(nested->getResultTypes(), isHi))
      found = true;
    for (Region &region : nested->getRegions())
      for (Block &block : region)
        if (llvm::any_of(block.getArgumentTypes(), isHi))
          found = true;
    return found ? WalkResult::interrupt() : WalkResult::advance();
  });
  return found;
}

/// hi_unpack(hi_pack(x...)) -> x..., then unused packs and unpacks go.
void foldPackUnpack(Operation *root) {
  SmallVector<HiUnpackOp> unpacks;
  root->walk([&](HiUnpackOp op) { unpacks.push_back(op); });
  for (HiUnpackOp unpack : unpacks)
    if (auto pack = unpack.getAggregate().getDefiningOp<HiPackOp>()) {
      unpack.replaceAllUsesWith(pack.getParts());
      unpack.erase();
    }
  SmallVector<Operation *> dead;
  root->walk([&](Operation *op) {
    if (isa<HiPackOp, HiUnpackOp>(op) && op->use_empty())
      dead.push_back(op);
  });
  for (Operation *op : llvm::reverse(dead))
    op->erase();
}

/// `values` with each !pallas.hi value replaced by its parts (a
/// hi_unpack at `b`).
SmallVector<Value> unpackHi(OpBuilder &b, Location loc, ValueRange values) {
  SmallVector<Value> out;
  for (Value v : values) {
    if (isa<HiType>(v.getType()))
      llvm::append_range(out, HiUnpackOp::create(b, loc, v).getResults());
    else
      out.push_back(v);
  }
  return out;
}

/// Replaces each !pallas.hi argument of `func` by its parts (arguments
/// inserted after it); `bind` gives the old argument's uses the parts
/// before it is erased.
LogicalResult
splitHiArguments(FunctionOpInterface func,
                 function_ref<void(BlockArgument, HiType, ValueRange)> bind) {
  for (int64_t a = func.getNumArguments() - 1; a >= 0; --a) {
    auto hi = dyn_cast<HiType>(func.getArgumentTypes()[a]);
    if (!hi)
      continue;
    BlockArgument old = func.getArgument(a);
    SmallVector<unsigned> positions(hi.getParts().size(), a + 1);
    SmallVector<DictionaryAttr> attrs(hi.getParts().size());
    SmallVector<Location> locs(hi.getParts().size(), old.getLoc());
    if (failed(func.insertArguments(positions, hi.getParts(), attrs, locs)))
      return failure();
    SmallVector<Value> parts;
    for (unsigned j = 0; j < hi.getParts().size(); ++j)
      parts.push_back(func.getArgument(a + 1 + j));
    bind(old, hi, parts);
    if (failed(func.eraseArgument(a)))
      return failure();
  }
  return success();
}

class Lowerer {
public:
  explicit Lowerer(ModuleOp module) : module(module), symbols(module) {}
  LogicalResult lowerCall(CallOp call);
  LogicalResult lowerWrapper(func::FuncOp func);

private:
  /// The block specs of a hi operand's parts (see the file comment).
  FailureOr<SmallVector<Attribute>> lowerSpec(CallOp call, BlockSpecAttr spec,
                                              HiType hi, StringRef what,
                                              int64_t index);
  FailureOr<FlatSymbolRefAttr>
  prefixIndexFunc(CallOp call, FlatSymbolRefAttr name, unsigned rank);
  LogicalResult lowerKernel(CallOp call, KernelOp kernel,
                            ArrayRef<SmallVector<Attribute>> partSpecs);

  ModuleOp module;
  SymbolTable symbols;
  DenseMap<std::pair<Operation *, unsigned>, FlatSymbolRefAttr> prefixFuncs;
  llvm::SmallPtrSet<Operation *, 4> loweredKernels;
  DenseMap<Operation *, SmallVector<Type>> originalKernelTypes;
};

FailureOr<FlatSymbolRefAttr>
Lowerer::prefixIndexFunc(CallOp call, FlatSymbolRefAttr name, unsigned rank) {
  auto func = symbols.lookup<func::FuncOp>(name.getAttr());
  if (!func)
    return call.emitOpError()
           << "index map " << name << " does not name a func.func";
  auto key = std::make_pair(func.getOperation(), rank);
  if (auto it = prefixFuncs.find(key); it != prefixFuncs.end())
    return it->second;
  OpBuilder b(func);
  b.setInsertionPointAfter(func);
  auto copy = cast<func::FuncOp>(b.clone(*func));
  copy.setSymName((func.getSymName() + "_part" + Twine(rank)).str());
  symbols.insert(copy);
  copy.walk([&](func::ReturnOp ret) {
    ret->setOperands(ret.getOperands().take_front(rank));
  });
  copy.setType(
      FunctionType::get(call.getContext(), copy.getArgumentTypes(),
                        copy.getFunctionType().getResults().take_front(rank)));
  auto ref = FlatSymbolRefAttr::get(copy.getSymNameAttr());
  prefixFuncs[key] = ref;
  return ref;
}

FailureOr<SmallVector<Attribute>> Lowerer::lowerSpec(CallOp call,
                                                     BlockSpecAttr spec,
                                                     HiType hi, StringRef what,
                                                     int64_t index) {
  MLIRContext *ctx = call.getContext();
  SmallVector<Attribute> specs;
  for (auto [j, part] : llvm::enumerate(hi.getParts())) {
    auto tensor = dyn_cast<RankedTensorType>(part);
    if (!tensor)
      return call.emitOpError() << what << " " << index << ": part " << j
                                << " of " << hi << " is not a ranked tensor";
    if (spec.isWholeArray()) {
      specs.push_back(spec);
      continue;
    }
    unsigned rank = tensor.getRank();
    if (rank == spec.getRank()) {
      specs.push_back(spec);
      continue;
    }
    if (rank > spec.getRank())
      return call.emitOpError()
             << "cannot lower block spec " << spec << " on " << hi << " ("
             << what << " " << index << "): part " << j << " has rank " << rank
             << ", more than the spec's " << spec.getRank();
    AffineMap map = spec.getIndexMap();
    if (map)
      map = map.getSliceMap(0, rank);
    FlatSymbolRefAttr func = spec.getIndexFunc();
    if (func) {
      FailureOr<FlatSymbolRefAttr> prefix = prefixIndexFunc(call, func, rank);
      if (failed(prefix))
        return failure();
      func = *prefix;
    }
    specs.push_back(BlockSpecAttr::get(
        ctx, spec.getSizes().take_front(rank), spec.getKinds().take_front(rank),
        spec.getPadLow().take_front(rank), spec.getPadHigh().take_front(rank),
        map, func, spec.getMemorySpace(), spec.getBufferCount()));
  }
  return specs;
}

LogicalResult Lowerer::lowerKernel(CallOp call, KernelOp kernel,
                                   ArrayRef<SmallVector<Attribute>> partSpecs) {
  // partSpecs: per kernel argument, the specs of its parts (empty for lo
  // arguments); checked against the kernel's part refs.
  // The kernel's signature before any call lowered it.
  auto [it, inserted] = originalKernelTypes.try_emplace(kernel.getOperation());
  if (inserted)
    it->second.assign(kernel.getArgumentTypes().begin(),
                      kernel.getArgumentTypes().end());
  ArrayRef<Type> argTypes = it->second;
  MLIRContext *ctx = call.getContext();
  int64_t nsp = call.getNumScalarPrefetch();
  SmallVector<Type> operandTypes(call.getInputs().getTypes());
  llvm::append_range(operandTypes, call.getResultTypes());
  for (unsigned a = 0; a < partSpecs.size(); ++a) {
    auto hiArg = dyn_cast<HiType>(argTypes[nsp + a]);
    auto hiOperand = dyn_cast<HiType>(operandTypes[nsp + a]);
    if (!hiOperand && !hiArg)
      continue;
    if (!hiOperand || !hiArg ||
        hiArg.getParts().size() != hiOperand.getParts().size())
      return call.emitOpError()
             << "kernel @" << kernel.getSymName() << " argument #" << nsp + a
             << " has type " << argTypes[nsp + a] << " but the call passes "
             << operandTypes[nsp + a];
    for (auto [j, part] : llvm::enumerate(hiOperand.getParts())) {
      auto tensor = cast<RankedTensorType>(part);
      auto spec = cast<BlockSpecAttr>(partSpecs[a][j]);
      Type want = RefType::get(ctx, spec.getKernelShape(tensor.getShape()),
                               tensor.getElementType(), spec.getMemorySpace());
      if (hiArg.getParts()[j] != want)
        return call.emitOpError()
               << "kernel @" << kernel.getSymName() << " argument #" << nsp + a
               << " part " << j << " has type " << hiArg.getParts()[j]
               << " but the lowered block spec " << spec << " gives " << want;
    }
  }
  if (loweredKernels.contains(kernel))
    return success();
  loweredKernels.insert(kernel);

  // Each hi argument becomes its parts; hi_unpack of it becomes the parts,
  // any other use gets a hi_pack of them.
  Block &entry = kernel.getBody().front();
  auto bind = [&](BlockArgument old, HiType hi, ValueRange parts) {
    for (OpOperand &use : llvm::make_early_inc_range(old.getUses()))
      if (auto unpack = dyn_cast<HiUnpackOp>(use.getOwner())) {
        unpack.replaceAllUsesWith(parts);
        unpack.erase();
      }
    if (!old.use_empty()) {
      OpBuilder b = OpBuilder::atBlockBegin(&entry);
      auto pack = HiPackOp::create(b, old.getLoc(), hi, parts);
      old.replaceAllUsesWith(pack.getResult());
    }
  };
  if (failed(splitHiArguments(kernel, bind)))
    return failure();
  foldPackUnpack(kernel);
  return success();
}

LogicalResult Lowerer::lowerCall(CallOp call) {
  // JAX checks every block mapping's index map first.
  for (ArrayAttr specs : {call.getInSpecs(), call.getOutSpecs()})
    for (Attribute attr : specs) {
      FlatSymbolRefAttr name = cast<BlockSpecAttr>(attr).getIndexFunc();
      if (!name)
        continue;
      auto func = symbols.lookup<func::FuncOp>(name.getAttr());
      if (func && involvesHi(func)) {
        InFlightDiagnostic diag = call.emitOpError()
                                  << "pallas_call does not support hijax for "
                                     "index_map";
        diag.attachNote(func.getLoc()) << "index map " << name << " here";
        return diag;
      }
    }

  bool hiCall = llvm::any_of(call.getInputs().getTypes(),
                             [](Type t) { return isa<HiType>(t); }) ||
                llvm::any_of(call.getResultTypes(),
                             [](Type t) { return isa<HiType>(t); });
  KernelOp kernel = lookupKernel(call);
  if (!kernel)
    return call.emitOpError()
           << "'" << call.getKernel() << "' does not name a pallas.kernel";
  bool hiKernel = llvm::any_of(kernel.getArgumentTypes(),
                               [](Type t) { return isa<HiType>(t); });
  if (!hiCall && !hiKernel) {
    foldPackUnpack(kernel);
    recordTransform(call, "hi_to_lo");
    return success();
  }

  // Part specs per blocked input and output.
  int64_t nsp = call.getNumScalarPrefetch();
  SmallVector<SmallVector<Attribute>> partSpecs;
  SmallVector<Attribute> inSpecs, outSpecs;
  auto lowerOperand = [&](Type type, Attribute attr, StringRef what,
                          int64_t index,
                          SmallVectorImpl<Attribute> &out) -> LogicalResult {
    auto spec = cast<BlockSpecAttr>(attr);
    auto hi = dyn_cast<HiType>(type);
    if (!hi) {
      partSpecs.emplace_back();
      out.push_back(spec);
      return success();
    }
    FailureOr<SmallVector<Attribute>> specs =
        lowerSpec(call, spec, hi, what, index);
    if (failed(specs))
      return failure();
    partSpecs.push_back(*specs);
    llvm::append_range(out, *specs);
    return success();
  };
  for (auto [i, v] : llvm::enumerate(call.getBlockedInputs()))
    if (failed(lowerOperand(v.getType(), call.getInSpecs()[i], "input", nsp + i,
                            inSpecs)))
      return failure();
  for (auto [i, v] : llvm::enumerate(call.getResults()))
    if (failed(lowerOperand(v.getType(), call.getOutSpecs()[i], "output", i,
                            outSpecs)))
      return failure();
  if (failed(lowerKernel(call, kernel, partSpecs)))
    return failure();

  // Aliases and pinned inputs per flattened index.
  auto inputMap = getIndexMapping(call.getInputs().getTypes());
  auto outputMap = getIndexMapping(call.getResultTypes());
  SmallVector<int64_t> aliases, pinned;
  for (auto [in, out] : call.getAliasPairs())
    for (auto [loIn, loOut] : llvm::zip(inputMap[in], outputMap[out])) {
      aliases.push_back(loIn);
      aliases.push_back(loOut);
    }
  for (int64_t p : call.getPinnedInputs())
    llvm::append_range(pinned, inputMap[p]);

  OpBuilder b(call);
  SmallVector<Value> inputs = unpackHi(b, call.getLoc(), call.getInputs());
  SmallVector<Type> resultTypes;
  for (Type t : call.getResultTypes())
    llvm::append_range(resultTypes, loTypes(t));
  // A symbolic call's shape entries per flattened operand: a lo operand
  // keeps its expressions, a hi one's parts are static (a hi input of the
  // spec has static parts) and their entries are their sizes.
  SmallVector<Attribute> symInputs, symOutputs;
  if (call.getSymbolicAttr()) {
    auto flatten = [&](TypeRange types, ArrayRef<Attribute> entries,
                       StringRef what,
                       SmallVectorImpl<Attribute> &out) -> LogicalResult {
      for (auto [i, t] : llvm::enumerate(types)) {
        auto hi = dyn_cast<HiType>(t);
        if (!hi) {
          out.push_back(entries[i]);
          continue;
        }
        for (auto [j, part] : llvm::enumerate(hi.getParts())) {
          ArrayAttr entry = staticShapeEntry(b, part);
          if (!entry)
            return call.emitOpError()
                   << "pallas-hi-to-lo: " << what << " " << i << ": part " << j
                   << " of " << t
                   << " has a dynamic shape, which a symbolic call cannot "
                      "describe (hi parts must have static shapes)";
          out.push_back(entry);
        }
      }
      return success();
    };
    if (failed(flatten(call.getInputs().getTypes(),
                       getSymbolicShapes(call, "inputs"), "input",
                       symInputs)) ||
        failed(flatten(call.getResultTypes(),
                       getSymbolicShapes(call, "outputs"), "output",
                       symOutputs)))
      return failure();
  }
  CallOp lowered =
      cloneCallWith(b, call, call.getDynamicGridBounds(), inputs, resultTypes);
  setOperandAttrs(lowered,
                  {inSpecs, outSpecs, aliases, pinned, symInputs, symOutputs},
                  "hi_to_lo");
  b.setInsertionPointAfter(lowered);
  for (auto [i, r] : llvm::enumerate(call.getResults())) {
    ValueRange parts =
        lowered.getResults().slice(outputMap[i].front(), outputMap[i].size());
    if (isa<HiType>(r.getType()))
      r.replaceAllUsesWith(
          HiPackOp::create(b, call.getLoc(), r.getType(), parts).getResult());
    else
      r.replaceAllUsesWith(parts.front());
  }
  call.erase();
  return success();
}

LogicalResult Lowerer::lowerWrapper(func::FuncOp func) {
  Block &entry = func.front();
  auto bind = [&](BlockArgument old, HiType hi, ValueRange parts) {
    OpBuilder b = OpBuilder::atBlockBegin(&entry);
    auto pack = HiPackOp::create(b, old.getLoc(), hi, parts);
    old.replaceAllUsesWith(pack.getResult());
  };
  if (failed(splitHiArguments(func, bind)))
    return failure();
  for (Block &block : func.getBody()) {
    auto ret = dyn_cast<func::ReturnOp>(block.getTerminator());
    if (!ret)
      continue;
    OpBuilder b(ret);
    ret->setOperands(unpackHi(b, ret.getLoc(), ret.getOperands()));
  }
  foldPackUnpack(func);
  updateFunctionType(func);
  return success();
}

struct PallasHiToLoPass
    : public mlir::pallas::impl::PallasHiToLoBase<PallasHiToLoPass> {
  using PallasHiToLoBase::PallasHiToLoBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    Lowerer lowerer(module);
    SmallVector<CallOp> calls;
    module.walk([&](CallOp call) { calls.push_back(call); });
    for (CallOp call : calls)
      if (failed(lowerer.lowerCall(call)))
        return signalPassFailure();
    for (func::FuncOp func : getCallWrappers(module))
      if (failed(lowerer.lowerWrapper(func)))
        return signalPassFailure();
  }
};

} // namespace
