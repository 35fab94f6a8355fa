//===- Jvp.cpp - pallas-jvp -------------------------------------*- C++ -*-===//
//
// JAX's _pallas_call_jvp_rule: every function holding a pallas.call is
// differentiated in forward mode. Its float arguments get tangent arguments
// and every result a tangent result; each pallas.call becomes one call that
// computes primal and tangent outputs with a differentiated kernel
// @<kernel>_jvp taking (primal inputs, tangent inputs, primal outputs,
// tangent outputs, scratch, tangent scratch).
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/CallUtils.h"
#include "passes/Transforms/JvpEmitter.h"
#include "passes/Transforms/Passes.h"

#include "llvm/ADT/STLExtras.h"

#include <limits>
#include <map>

namespace mlir::pallas {
#define GEN_PASS_DEF_PALLASJVP
#include "passes/Transforms/Passes.h.inc"
} // namespace mlir::pallas

#define DEBUG_TYPE "pallas-jvp"

using namespace mlir;
using namespace mlir::pallas;
using mlir::pallas::jvp::Emitter;
using mlir::pallas::jvp::isFloatLike;

/// True for refs whose elements are floats: they get tangent refs.
static bool isFloatRef(Type type) {
  auto ref = dyn_cast<RefType>(type);
  return ref && isa<FloatType>(ref.getElementType());
}

namespace {

struct PallasJvpPass : public mlir::pallas::impl::PallasJvpBase<PallasJvpPass> {
  using PallasJvpBase::PallasJvpBase;
  void runOnOperation() override;

private:
  LogicalResult differentiateFunc(func::FuncOp func);
  LogicalResult differentiateCall(CallOp call, Emitter &emitter);
  FailureOr<StringAttr> getOrBuildKernel(CallOp call, KernelOp kernel,
                                         ArrayRef<bool> inputHasTangent);

  SymbolTable *symbols = nullptr;
  /// Differentiated kernels, by (kernel, which inputs have tangents).
  std::map<std::pair<std::string, std::string>, StringAttr> kernelCache;
  SmallVector<StringAttr> differentiatedKernels;
};

} // namespace

//===----------------------------------------------------------------------===//
// The kernel
//===----------------------------------------------------------------------===//

FailureOr<StringAttr>
PallasJvpPass::getOrBuildKernel(CallOp call, KernelOp kernel,
                                ArrayRef<bool> inputHasTangent) {
  std::string maskKey;
  for (bool b : inputHasTangent)
    maskKey += b ? '1' : '0';
  auto key = std::make_pair(kernel.getSymName().str(), maskKey);
  if (auto it = kernelCache.find(key); it != kernelCache.end())
    return it->second;

  int64_t numIn = call.getBlockedInputs().size();
  int64_t numOut = call.getOutputs().size();
  ArrayRef<Type> args = kernel.getArgumentTypes();
  Block &oldBody = kernel.getBody().front();

  // (primal in, tangent in, primal out, tangent out, scratch, tangent scratch)
  SmallVector<Type> types;
  SmallVector<int64_t> tangentArgOf(args.size(), -1);
  auto add = [&](int64_t oldIndex, bool tangent) {
    if (tangent)
      tangentArgOf[oldIndex] = types.size();
    types.push_back(args[oldIndex]);
  };
  for (int64_t i = 0; i < numIn; ++i)
    add(i, false);
  for (int64_t i = 0; i < numIn; ++i)
    if (inputHasTangent[i])
      add(i, true);
  for (int64_t i = numIn; i < numIn + numOut; ++i)
    add(i, false);
  // Every output gets a tangent output, integer ones too (written with zeros).
  for (int64_t i = numIn; i < numIn + numOut; ++i)
    add(i, true);
  for (int64_t i = numIn + numOut, e = args.size(); i < e; ++i)
    add(i, false);
  for (int64_t i = numIn + numOut, e = args.size(); i < e; ++i)
    if (isFloatRef(args[i]))
      add(i, true);

  OpBuilder b(kernel);
  b.setInsertionPointAfter(kernel);
  std::string name = (kernel.getSymName() + "_jvp").str();
  auto newKernel =
      KernelOp::create(b, kernel.getLoc(), name, b.getFunctionType(types, {}));
  // The op is in place already; this registers it, renaming on a clash.
  StringAttr newName = symbols->insert(newKernel);
  Block &body = newKernel.getBody().front();

  b.setInsertionPoint(body.getTerminator());
  Emitter emitter(b, &body);
  int64_t next = 0;
  auto primalArg = [&](int64_t i) {
    emitter.mapPrimal(oldBody.getArgument(i), body.getArgument(next++));
  };
  for (int64_t i = 0; i < numIn; ++i)
    primalArg(i);
  next += llvm::count(inputHasTangent, true);
  for (int64_t i = numIn; i < numIn + numOut; ++i)
    primalArg(i);
  next += numOut;
  for (int64_t i = numIn + numOut, e = args.size(); i < e; ++i)
    primalArg(i);
  for (auto [i, t] : llvm::enumerate(tangentArgOf))
    if (t >= 0)
      emitter.setRefTangent(oldBody.getArgument(i), body.getArgument(t));

  if (failed(emitter.emitOps(oldBody)))
    return failure();
  kernelCache[key] = newName;
  differentiatedKernels.push_back(kernel.getSymNameAttr());
  return newName;
}

//===----------------------------------------------------------------------===//
// The call (JAX's _pallas_call_jvp_rule)
//===----------------------------------------------------------------------===//

LogicalResult PallasJvpPass::differentiateCall(CallOp call, Emitter &emitter) {
  // JAX's checks, in its order. A symbolic call's grid expressions are no
  // dynamic bounds in JAX's sense: they are the symbols' functions, which
  // the tangents share (JAX's shape polymorphism keeps them).
  DictionaryAttr symbolic = call.getSymbolicAttr();
  int64_t numDynamicBounds = 0;
  for (auto [a, g] : llvm::enumerate(call.getGrid()))
    if (g == -1)
      numDynamicBounds +=
          !symbolic || cast<StringAttr>(symbolic.getAs<ArrayAttr>("grid")[a])
                           .getValue()
                           .empty();
  if (numDynamicBounds)
    return call.emitError()
           << "pallas-jvp: interpret with dynamic grid bounds unsupported: "
              "the grid has "
           << numDynamicBounds << " dynamic bound(s); JVP needs a static grid";
  if (call.getNumScalarPrefetch() != 0)
    return call.emitError()
           << "pallas-jvp: JVP of a pallas_call with scalar prefetch is not "
              "supported (num_scalar_prefetch = "
           << call.getNumScalarPrefetch() << ")";
  if (!call.getInputOutputAliases().empty()) {
    InFlightDiagnostic diag = call.emitError()
                              << "pallas-jvp: JVP with aliasing not "
                                 "supported (input_output_aliases:";
    for (auto [in, out] : call.getAliasPairs())
      diag << " " << in << " -> " << out;
    diag << ")";
    return diag;
  }
  for (auto [i, v] : llvm::enumerate(call.getInputs()))
    if (isa<HiType>(v.getType()))
      return call.emitError()
             << "pallas-jvp: input " << i << " has hi type " << v.getType()
             << "; run pallas-hi-to-lo before pallas-jvp";
  for (auto [i, v] : llvm::enumerate(call.getOutputs()))
    if (isa<HiType>(v.getType()))
      return call.emitError()
             << "pallas-jvp: output " << i << " has hi type " << v.getType()
             << "; run pallas-hi-to-lo before pallas-jvp";
  CostEstimateAttr cost = call.getCostEstimateAttr();
  if (cost) {
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max() / 2;
    if (cost.getFlops() > kMax || cost.getBytesAccessed() > kMax ||
        cost.getTranscendentals() > kMax)
      return call.emitError()
             << "pallas-jvp: doubling the cost estimate overflows int64";
    cost = CostEstimateAttr::get(call.getContext(), 2 * cost.getFlops(),
                                 2 * cost.getBytesAccessed(),
                                 2 * cost.getTranscendentals());
  }

  auto kernel = symbols->lookup<KernelOp>(call.getKernel());
  if (!kernel)
    return call.emitError() << "pallas-jvp: '" << call.getKernel()
                            << "' does not name a pallas.kernel";

  // Tangent inputs: float inputs whose tangent is not a symbolic zero (the
  // JAX's nonzero_tangents; integer inputs have zero tangents in JAX).
  SmallVector<bool> hasTangent;
  SmallVector<Value> operands;
  SmallVector<Attribute> inSpecs(call.getInSpecs().getValue());
  for (Value v : call.getInputs())
    operands.push_back(emitter.primal(v));
  for (auto [i, v] : llvm::enumerate(call.getInputs())) {
    Value t = emitter.tangent(v);
    hasTangent.push_back(static_cast<bool>(t));
    if (t) {
      operands.push_back(t);
      inSpecs.push_back(call.getInSpecs()[i]);
    }
  }
  FailureOr<StringAttr> newKernel = getOrBuildKernel(call, kernel, hasTangent);
  if (failed(newKernel))
    return failure();

  Builder &b = emitter.builder();
  SmallVector<Type> resultTypes(call.getResultTypes());
  resultTypes.append(call.getResultTypes().begin(),
                     call.getResultTypes().end());
  SmallVector<Attribute> outSpecs(call.getOutSpecs().getValue());
  outSpecs.append(call.getOutSpecs().begin(), call.getOutSpecs().end());
  SmallVector<Attribute> scratch(call.getScratch().getValue());
  for (Attribute s : call.getScratch())
    if (isFloatRef(cast<TypeAttr>(s).getValue()))
      scratch.push_back(s);
  // A symbolic call: the tangent operands have their primals' shape
  // expressions, the tangent outputs their primals' dynamic sizes.
  SmallVector<Value> bounds, sizes;
  for (Value v : call.getDynamicGridBounds())
    bounds.push_back(emitter.primal(v));
  for (Value v : call.getDynamicSizes())
    sizes.push_back(emitter.primal(v));
  llvm::append_range(sizes, SmallVector<Value>(sizes));
  SmallVector<Attribute> symInputs = getSymbolicShapes(call, "inputs");
  SmallVector<Attribute> symOutputs = getSymbolicShapes(call, "outputs");
  if (symbolic) {
    for (auto [i, t] : llvm::enumerate(hasTangent))
      if (t)
        symInputs.push_back(symInputs[i]);
    llvm::append_range(symOutputs, SmallVector<Attribute>(symOutputs));
  }
  CallOp newCall = cloneCallWith(emitter.builder(), call, bounds, operands,
                                 resultTypes, ValueRange(sizes));
  setSymbolicShapes(newCall, symInputs, symOutputs);
  newCall.setKernelAttr(FlatSymbolRefAttr::get(*newKernel));
  newCall.setInSpecsAttr(b.getArrayAttr(inSpecs));
  newCall.setOutSpecsAttr(b.getArrayAttr(outSpecs));
  newCall.setScratchAttr(b.getArrayAttr(scratch));
  if (cost)
    newCall.setCostEstimateAttr(cost);
  recordTransform(newCall, "jvp");
  unsigned n = call.getNumResults();
  for (unsigned i = 0; i < n; ++i) {
    emitter.mapPrimal(call.getResult(i), newCall->getResult(i));
    // Integer outputs get (zero) tangents too; the wrapper returns them.
    emitter.setTangent(call.getResult(i), newCall->getResult(n + i));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// The function holding the call (@main)
//===----------------------------------------------------------------------===//

LogicalResult PallasJvpPass::differentiateFunc(func::FuncOp func) {
  ModuleOp module = getOperation();
  if (!func.getBody().hasOneBlock())
    return func.emitError()
           << "pallas-jvp: a function holding a pallas.call must have one "
              "block";
  if (!SymbolTable::symbolKnownUseEmpty(func, module))
    return func.emitError()
           << "pallas-jvp: @" << func.getSymName()
           << " holds a pallas.call and is called elsewhere; only a "
              "top-level wrapper can be differentiated";
  FunctionType type = func.getFunctionType();
  unsigned numArgs = type.getNumInputs();
  // A symbolic wrapper's symbol arguments (`pallas.symbol`) stay last, after
  // the tangents, as the entry points take the symbols after the operands.
  unsigned numLeading = numArgs;
  while (numLeading > 0 && func.getArgAttr(numLeading - 1, "pallas.symbol"))
    --numLeading;
  SmallVector<unsigned> newIndex(numArgs);
  SmallVector<Type> argTypes(type.getInputs().take_front(numLeading));
  for (unsigned i = 0; i < numLeading; ++i)
    newIndex[i] = i;
  SmallVector<unsigned> tangentIndex(numArgs, ~0u);
  for (unsigned i = 0; i < numArgs; ++i)
    if (isFloatLike(type.getInput(i))) {
      tangentIndex[i] = argTypes.size();
      argTypes.push_back(type.getInput(i));
    }
  for (unsigned i = numLeading; i < numArgs; ++i) {
    newIndex[i] = argTypes.size();
    argTypes.push_back(type.getInput(i));
  }
  SmallVector<Type> resultTypes(type.getResults());
  resultTypes.append(type.getResults().begin(), type.getResults().end());

  OpBuilder b(func);
  b.setInsertionPointAfter(func);
  auto newFunc = func::FuncOp::create(b, func.getLoc(), func.getSymName(),
                                      b.getFunctionType(argTypes, resultTypes));
  newFunc.setSymVisibilityAttr(func.getSymVisibilityAttr());
  newFunc->setDiscardableAttrs(func->getDiscardableAttrDictionary());
  for (unsigned i = 0; i < numArgs; ++i)
    if (DictionaryAttr d = func.getArgAttrDict(i))
      newFunc.setArgAttrs(newIndex[i], d);
  for (unsigned i = 0, e = type.getNumResults(); i < e; ++i)
    if (DictionaryAttr d = func.getResultAttrDict(i))
      newFunc.setResultAttrs(i, d);
  Block *entry = newFunc.addEntryBlock();
  b.setInsertionPointToEnd(entry);

  Emitter emitter(b, entry);
  emitter.setCallRule([this](Operation *op, Emitter &e) {
    return differentiateCall(cast<CallOp>(op), e);
  });
  Block &oldBody = func.getBody().front();
  for (unsigned i = 0; i < numArgs; ++i) {
    BlockArgument arg = oldBody.getArgument(i);
    emitter.mapPrimal(arg, entry->getArgument(newIndex[i]));
    if (tangentIndex[i] != ~0u)
      emitter.setTangent(arg, entry->getArgument(tangentIndex[i]));
  }
  if (failed(emitter.emitOps(oldBody))) {
    newFunc.erase();
    return failure();
  }
  auto ret = cast<func::ReturnOp>(oldBody.getTerminator());
  SmallVector<Value> results;
  for (Value v : ret.getOperands())
    results.push_back(emitter.primal(v));
  for (Value v : ret.getOperands()) {
    Value t = emitter.rawTangent(v);
    auto shaped = dyn_cast<ShapedType>(v.getType());
    if (!t && shaped && !shaped.hasStaticShape()) {
      newFunc.erase();
      return ret.emitError()
             << "pallas-jvp: result of type " << v.getType()
             << " has a zero tangent of a symbolic shape; return it from a "
                "pallas.call";
    }
    results.push_back(t ? t : emitter.zeros(v.getType()));
  }
  func::ReturnOp::create(b, ret.getLoc(), results);

  symbols->erase(func);
  symbols->insert(newFunc);
  return success();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

void PallasJvpPass::runOnOperation() {
  ModuleOp module = getOperation();
  SymbolTable symbolTable(module);
  symbols = &symbolTable;
  kernelCache.clear();
  differentiatedKernels.clear();

  for (func::FuncOp func : getCallWrappers(module))
    if (failed(differentiateFunc(func)))
      return signalPassFailure();

  // Kernels that only the differentiated calls used are gone with them.
  for (StringAttr name : differentiatedKernels)
    if (auto kernel = symbolTable.lookup<KernelOp>(name))
      if (SymbolTable::symbolKnownUseEmpty(kernel, module))
        symbolTable.erase(kernel);
}
