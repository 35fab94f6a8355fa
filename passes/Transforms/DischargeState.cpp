//===- DischargeState.cpp - pallas-discharge-state ------------*- C++ -*-===//
//
// JAX's _pallas_call_state_discharge_rule. A kernel that closes over
// refs (pallas.get_global of a pallas.ref_global) gets them as arguments
// instead: each such ref becomes a leading input of the call (right after
// the scalar-prefetch operands) and a leading output, aliased to each other,
// with block spec `any`; existing aliases shift by the number of refs. The
// wrapper takes each ref's value as a new argument and returns its updated
// value first; calls in one wrapper thread the value from one to the next.
// Only refs in a neutral memory space (default, any) can be discharged.
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/CallUtils.h"
#include "passes/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir::pallas {
#define GEN_PASS_DEF_PALLASDISCHARGESTATE
#include "passes/Transforms/Passes.h.inc"
} // namespace mlir::pallas

#define DEBUG_TYPE "pallas-discharge-state"

using namespace mlir;
using namespace mlir::pallas;

namespace {

/// JAX's state_discharge.is_neutral_memory_space.
bool isNeutralMemorySpace(MemorySpace ms) {
  return ms == MemorySpace::Default || ms == MemorySpace::Any;
}

/// The refs one kernel closes over, in the module's order of declaration.
SmallVector<RefGlobalOp> closedOverRefs(KernelOp kernel,
                                        ArrayRef<RefGlobalOp> globals) {
  llvm::SmallDenseSet<StringAttr> names;
  kernel.walk(
      [&](GetGlobalOp get) { names.insert(get.getNameAttr().getAttr()); });
  SmallVector<RefGlobalOp> used;
  for (RefGlobalOp g : globals)
    if (names.contains(g.getSymNameAttr()))
      used.push_back(g);
  return used;
}

/// Per wrapper function: the current value of each discharged ref.
struct WrapperState {
  /// Position of the new arguments (right after the bounds and the
  /// scalar-prefetch operands of the wrapper's first discharged call).
  unsigned argPosition = 0;
  llvm::MapVector<Operation *, Value> current; // ref_global -> value
  llvm::MapVector<Operation *, Value> initial;
};

class Discharger {
public:
  explicit Discharger(ModuleOp module) : module(module) {}
  LogicalResult run();

private:
  /// Gives `kernel` its ref arguments; `first` is a call of it (for the
  /// operand counts, which every call of a kernel shares).
  LogicalResult dischargeKernel(KernelOp kernel, ArrayRef<RefGlobalOp> refs,
                                CallOp first);
  LogicalResult dischargeCall(CallOp call, ArrayRef<RefGlobalOp> refs);
  Value currentValue(func::FuncOp func, CallOp call, RefGlobalOp ref);

  ModuleOp module;
  llvm::MapVector<Operation *, WrapperState> wrappers;
};

LogicalResult Discharger::run() {
  SmallVector<RefGlobalOp> globals(module.getOps<RefGlobalOp>());
  // Calls in program order: a wrapper threads each ref's value from one call
  // to the next.
  SmallVector<CallOp> calls;
  module.walk([&](CallOp call) { calls.push_back(call); });

  // Kernels first: their ref arguments, the get_global ops replaced.
  DenseMap<StringAttr, SmallVector<RefGlobalOp>> kernelRefs;
  for (CallOp call : calls) {
    StringAttr name = call.getKernelAttr().getAttr();
    if (kernelRefs.count(name))
      continue;
    auto kernel = module.lookupSymbol<KernelOp>(name);
    if (!kernel)
      return call.emitOpError()
             << "'" << call.getKernel() << "' does not name a pallas.kernel";
    SmallVector<RefGlobalOp> refs = closedOverRefs(kernel, globals);
    if (!refs.empty() && failed(dischargeKernel(kernel, refs, call)))
      return failure();
    kernelRefs[name] = std::move(refs);
  }
  for (CallOp call : calls) {
    ArrayRef<RefGlobalOp> refs = kernelRefs[call.getKernelAttr().getAttr()];
    if (refs.empty()) {
      recordTransform(call, "discharge_state");
      continue;
    }
    if (failed(dischargeCall(call, refs)))
      return failure();
  }

  // The wrappers return each ref's final value first.
  for (auto &[op, state] : wrappers) {
    auto func = cast<func::FuncOp>(op);
    SmallVector<Value> finals;
    for (auto &[global, value] : state.current)
      finals.push_back(value);
    for (Block &block : func.getBody())
      if (auto ret = dyn_cast<func::ReturnOp>(block.getTerminator())) {
        SmallVector<Value> results(finals);
        llvm::append_range(results, ret.getOperands());
        ret->setOperands(results);
      }
    updateFunctionType(func);
  }

  // Discharged refs no one closes over any more are gone.
  llvm::SmallPtrSet<Operation *, 4> discharged;
  for (auto &[name, refs] : kernelRefs)
    for (RefGlobalOp g : refs)
      discharged.insert(g);
  for (RefGlobalOp g : globals)
    if (discharged.contains(g) && SymbolTable::symbolKnownUseEmpty(g, module))
      g.erase();
  return success();
}

Value Discharger::currentValue(func::FuncOp func, CallOp call,
                               RefGlobalOp ref) {
  WrapperState &state = wrappers[func];
  if (state.initial.empty() && state.current.empty())
    state.argPosition = std::min<unsigned>(
        llvm::count_if(call.getDynamicGridBounds(),
                       [&](Value v) {
                         // A symbolic call's bounds are computed from the
                         // symbols, not arguments.
                         auto arg = dyn_cast<BlockArgument>(v);
                         return arg && arg.getOwner() == &func.front();
                       }) +
            call.getNumScalarPrefetch(),
        func.getNumArguments());
  auto it = state.current.find(ref);
  if (it != state.current.end())
    return it->second;
  // A new wrapper argument, after those added before it.
  unsigned position = state.argPosition + state.initial.size();
  RankedTensorType type = cast<RefType>(ref.getType()).getValueType();
  if (failed(
          func.insertArgument(position, type, DictionaryAttr(), ref.getLoc())))
    return {};
  Value arg = func.getArgument(position);
  state.initial[ref] = arg;
  state.current[ref] = arg;
  return arg;
}

LogicalResult Discharger::dischargeKernel(KernelOp kernel,
                                          ArrayRef<RefGlobalOp> refs,
                                          CallOp first) {
  for (RefGlobalOp ref : refs) {
    MemorySpace ms = cast<RefType>(ref.getType()).getMemorySpace();
    if (isNeutralMemorySpace(ms))
      continue;
    GetGlobalOp use;
    kernel.walk([&](GetGlobalOp get) {
      if (get.getNameAttr().getAttr() == ref.getSymNameAttr() && !use)
        use = get;
    });
    InFlightDiagnostic diag =
        use.emitOpError()
        << "pallas_call does not support closing over Refs in memory space "
        << stringifyMemorySpace(ms) << "; use pl.kernel instead";
    diag.attachNote(ref.getLoc())
        << "ref @" << ref.getSymName() << " declared here";
    return diag;
  }

  // The kernel: ref inputs after the scalar-prefetch refs, ref outputs
  // before the old outputs; JAX ignores the outputs (aliased).
  unsigned nsp = first.getNumScalarPrefetch();
  unsigned numBlocked = first.getBlockedInputs().size();
  SmallVector<unsigned> positions;
  SmallVector<Type> types;
  SmallVector<DictionaryAttr> attrs;
  SmallVector<Location> locs;
  for (unsigned side = 0; side < 2; ++side)
    for (RefGlobalOp ref : refs) {
      positions.push_back(side == 0 ? nsp : nsp + numBlocked);
      types.push_back(
          cast<RefType>(ref.getType()).withMemorySpace(MemorySpace::Any));
      attrs.push_back(DictionaryAttr());
      locs.push_back(ref.getLoc());
    }
  if (failed(kernel.insertArguments(positions, types, attrs, locs)))
    return failure();
  DenseMap<StringAttr, Value> refArgs;
  for (unsigned i = 0; i < refs.size(); ++i)
    refArgs[RefGlobalOp(refs[i]).getSymNameAttr()] =
        kernel.getArgument(nsp + i);
  kernel.walk([&](GetGlobalOp get) {
    Value arg = refArgs.lookup(get.getNameAttr().getAttr());
    get.getResult().replaceAllUsesWith(arg);
    get.erase();
  });
  return success();
}

LogicalResult Discharger::dischargeCall(CallOp call,
                                        ArrayRef<RefGlobalOp> refs) {
  auto func = dyn_cast<func::FuncOp>(call->getParentOp());
  if (!func)
    return call.emitOpError()
           << "pallas-discharge-state: a call whose kernel closes over refs "
              "must be directly in a func.func (it is in '"
           << call->getParentOp()->getName() << "')";
  MLIRContext *ctx = call.getContext();
  Builder b(ctx);
  int64_t nsp = call.getNumScalarPrefetch();
  int64_t k = refs.size();

  SmallVector<Value> inputs(call.getInputs().take_front(nsp));
  for (RefGlobalOp ref : refs) {
    Value v = currentValue(func, call, ref);
    if (!v)
      return failure();
    inputs.push_back(v);
  }
  llvm::append_range(inputs, call.getInputs().drop_front(nsp));

  auto any = BlockSpecAttr::get(ctx, {}, {}, {}, {}, AffineMap(),
                                FlatSymbolRefAttr(), MemorySpace::Any);
  SmallVector<Attribute> inSpecs(k, any), outSpecs(k, any);
  llvm::append_range(inSpecs, call.getInSpecs());
  llvm::append_range(outSpecs, call.getOutSpecs());
  SmallVector<Type> resultTypes;
  for (RefGlobalOp ref : refs)
    resultTypes.push_back(cast<RefType>(ref.getType()).getValueType());
  llvm::append_range(resultTypes, call.getResultTypes());

  // Ref i (input nsp + i) updates output i; the old aliases shift by k.
  auto shiftInput = [&](int64_t in) { return in < nsp ? in : in + k; };
  SmallVector<int64_t> aliases, pinned;
  for (int64_t i = 0; i < k; ++i) {
    aliases.push_back(nsp + i);
    aliases.push_back(i);
  }
  for (auto [in, out] : call.getAliasPairs()) {
    aliases.push_back(shiftInput(in));
    aliases.push_back(out + k);
  }
  for (int64_t p : call.getPinnedInputs())
    pinned.push_back(shiftInput(p));

  // A symbolic call: each ref's entry is its static shape, in front of the
  // call's own inputs (after the scalar-prefetch ones) and outputs.
  SmallVector<Attribute> symInputs, symOutputs;
  if (call.getSymbolicAttr()) {
    SmallVector<Attribute> oldInputs = getSymbolicShapes(call, "inputs");
    symInputs.assign(oldInputs.begin(), oldInputs.begin() + nsp);
    for (RefGlobalOp ref : refs) {
      ArrayAttr entry =
          staticShapeEntry(b, cast<RefType>(ref.getType()).getValueType());
      if (!entry) {
        InFlightDiagnostic diag =
            call.emitOpError()
            << "pallas-discharge-state: ref @" << ref.getSymName()
            << " has a dynamic shape, which a symbolic call cannot describe";
        diag.attachNote(ref.getLoc()) << "ref declared here";
        return diag;
      }
      symInputs.push_back(entry);
      symOutputs.push_back(entry);
    }
    symInputs.append(oldInputs.begin() + nsp, oldInputs.end());
    llvm::append_range(symOutputs, getSymbolicShapes(call, "outputs"));
  }

  OpBuilder builder(call);
  CallOp discharged = cloneCallWith(builder, call, call.getDynamicGridBounds(),
                                    inputs, resultTypes);
  setOperandAttrs(discharged,
                  {inSpecs, outSpecs, aliases, pinned, symInputs, symOutputs},
                  "discharge_state");
  for (auto [i, r] : llvm::enumerate(call.getResults()))
    r.replaceAllUsesWith(discharged.getResult(i + k));
  WrapperState &state = wrappers[func];
  for (auto [i, ref] : llvm::enumerate(refs))
    state.current[ref] = discharged.getResult(i);
  call.erase();
  return success();
}

struct PallasDischargeStatePass
    : public mlir::pallas::impl::PallasDischargeStateBase<
          PallasDischargeStatePass> {
  using PallasDischargeStateBase::PallasDischargeStateBase;
  void runOnOperation() override {
    Discharger discharger(getOperation());
    if (failed(discharger.run()))
      signalPassFailure();
  }
};

} // namespace
