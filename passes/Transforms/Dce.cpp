//===- Dce.cpp - pallas-dce: dead outputs, dead calls, dead kernel work ---===//
//
// JAX's _pallas_call_dce_rule, and more. `used-outputs` (one 0/1 per
// result of the wrapper function, i.e. per output of the call the driver
// imports) drops the unused results; then, walking the wrapper backwards:
//
// - a call none of whose outputs is used is eliminated when its kernel
//   closes over no ref (pallas.get_global: a live ref input in JAX) and
//   its compiler params do not mark it side-effecting (JAX's rule);
//   the wrapper then carries `pallas.eliminated` and the manifest says so;
// - otherwise (beyond JAX, which keeps every output of a live call) the
//   unused outputs that are not aliased and that the kernel only stores to
//   are dropped from the call and the kernel, with the stores; the kernel's
//   dead work is erased (dead loads and pure ops: loads have MemRead effects,
//   so upstream dead-code rules apply); inputs and scratch the kernel no
//   longer touches are dropped too.
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/CallUtils.h"
#include "passes/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"

namespace mlir::pallas {
#define GEN_PASS_DEF_PALLASDCE
#include "passes/Transforms/Passes.h.inc"
} // namespace mlir::pallas

#define DEBUG_TYPE "pallas-dce"

using namespace mlir;
using namespace mlir::pallas;

/// Unit attribute on a wrapper whose call was eliminated (the manifest
/// writer's kEliminatedAttrName), and the transforms applied up to then.
static constexpr const char *kEliminatedAttrName = "pallas.eliminated";
static constexpr const char *kTransformsAttrName = "pallas.transforms";

namespace {

/// True when every use of `ref` (a kernel argument) is a pallas.store into it.
bool isOnlyStoredTo(Value ref) {
  return llvm::all_of(ref.getUses(), [&](OpOperand &use) {
    auto store = dyn_cast<StoreOp>(use.getOwner());
    return store && store.getRef() == ref;
  });
}

/// Erases the pallas.store ops into `ref`.
void eraseStores(Value ref) {
  for (Operation *user : llvm::make_early_inc_range(ref.getUsers()))
    user->erase();
}

/// True when the kernel closes over a ref (a live ref operand of JAX's
/// pallas_call equation: its writes are visible outside the call).
bool closesOverRefs(KernelOp kernel) {
  bool found = false;
  kernel.walk([&](GetGlobalOp) {
    found = true;
    return WalkResult::interrupt();
  });
  return found;
}

class CallDce {
public:
  explicit CallDce(func::FuncOp func) : func(func) {}
  /// Applies the rule to `call`; erases it or replaces it.
  LogicalResult run(CallOp call);

private:
  LogicalResult prune(CallOp call, const llvm::BitVector &deadOutputs);
  func::FuncOp func;
};

LogicalResult CallDce::run(CallOp call) {
  KernelOp kernel = lookupKernel(call);
  if (!kernel)
    return call.emitOpError()
           << "'" << call.getKernel() << "' does not name a pallas.kernel";
  unsigned numOutputs = call.getNumResults();
  bool anyUsed =
      llvm::any_of(call.getResults(), [](Value v) { return !v.use_empty(); });
  bool liveRefs = closesOverRefs(kernel);
  bool sideEffects = hasSideEffects(call);

  if (!anyUsed && !liveRefs && !sideEffects) {
    SmallVector<Attribute> applied(call.getTransforms().begin(),
                                   call.getTransforms().end());
    Builder b(call.getContext());
    applied.push_back(b.getStringAttr("dce"));
    call.erase();
    bool anyCallLeft = false;
    func.walk([&](CallOp) {
      anyCallLeft = true;
      return WalkResult::interrupt();
    });
    // The manifest then describes the eliminated call.
    if (!anyCallLeft) {
      func->setAttr(kEliminatedAttrName, b.getUnitAttr());
      func->setAttr(kTransformsAttrName, b.getArrayAttr(applied));
    }
    return success();
  }

  // JAX keeps a call with side effects (or live refs) whole: only its
  // kernel's dead pure work goes.
  if (liveRefs || sideEffects) {
    eraseDeadOps(kernel.getBody());
    recordTransform(call, "dce");
    return success();
  }
  llvm::BitVector dead(numOutputs);
  llvm::SmallSet<int64_t, 4> aliasedOutputs;
  for (auto [in, out] : call.getAliasPairs())
    aliasedOutputs.insert(out);
  unsigned firstOut =
      call.getNumScalarPrefetch() + call.getBlockedInputs().size();
  for (unsigned i = 0; i < numOutputs; ++i)
    if (call.getResult(i).use_empty() && !aliasedOutputs.contains(i) &&
        isOnlyStoredTo(kernel.getArgument(firstOut + i)))
      dead.set(i);
  return prune(call, dead);
}

LogicalResult CallDce::prune(CallOp call, const llvm::BitVector &deadOutputs) {
  int64_t nsp = call.getNumScalarPrefetch();
  unsigned numInputs = call.getInputs().size();
  unsigned numBlocked = numInputs - nsp;
  unsigned numOutputs = call.getNumResults();
  unsigned numScratch = call.getScratch().size();
  unsigned firstOut = nsp + numBlocked;
  unsigned firstScratch = firstOut + numOutputs;

  // Rewrite a kernel of this call's own (a copy when others share it); if
  // nothing can be dropped in the end, go back to the original.
  KernelOp original = lookupKernel(call);
  KernelOp kernel = getKernelForRewrite(call, "dce");
  if (!kernel)
    return failure();
  for (unsigned i : deadOutputs.set_bits())
    eraseStores(kernel.getArgument(firstOut + i));
  eraseDeadOps(kernel.getBody());

  // Scratch that is only written is dead, and so are its stores.
  llvm::BitVector deadScratch(numScratch);
  for (unsigned i = 0; i < numScratch; ++i) {
    Value ref = kernel.getArgument(firstScratch + i);
    if (isOnlyStoredTo(ref)) {
      deadScratch.set(i);
      eraseStores(ref);
    }
  }
  eraseDeadOps(kernel.getBody());

  // Blocked inputs the kernel no longer reads, unless aliased or pinned
  // (their buffers are the outputs').
  llvm::SmallSet<int64_t, 4> keptInputs;
  for (auto [in, out] : call.getAliasPairs())
    keptInputs.insert(in);
  for (int64_t p : call.getPinnedInputs())
    keptInputs.insert(p);
  llvm::BitVector deadInputs(numInputs);
  for (unsigned i = nsp; i < numInputs; ++i)
    if (!keptInputs.contains(i) && kernel.getArgument(i).use_empty())
      deadInputs.set(i);

  Builder b(call.getContext());
  if (!deadInputs.any() && !deadOutputs.any() && !deadScratch.any()) {
    if (kernel != original) {
      call.setKernelAttr(FlatSymbolRefAttr::get(original.getSymNameAttr()));
      kernel.erase();
      eraseDeadOps(original.getBody());
    }
    recordTransform(call, "dce");
    return success();
  }

  // The kernel's signature.
  llvm::BitVector deadArgs(kernel.getNumArguments());
  for (unsigned i : deadInputs.set_bits())
    deadArgs.set(i);
  for (unsigned i : deadOutputs.set_bits())
    deadArgs.set(firstOut + i);
  for (unsigned i : deadScratch.set_bits())
    deadArgs.set(firstScratch + i);
  if (failed(kernel.eraseArguments(deadArgs)))
    return failure();

  // The call.
  SmallVector<int64_t> newInputIndex(numInputs, -1),
      newOutputIndex(numOutputs, -1);
  SmallVector<Value> inputs;
  SmallVector<Attribute> inSpecs, outSpecs, scratch;
  for (unsigned i = 0; i < numInputs; ++i) {
    if (deadInputs.test(i))
      continue;
    newInputIndex[i] = inputs.size();
    inputs.push_back(call.getInputs()[i]);
    if (i >= nsp)
      inSpecs.push_back(call.getInSpecs()[i - nsp]);
  }
  SmallVector<Type> resultTypes;
  for (unsigned i = 0; i < numOutputs; ++i) {
    if (deadOutputs.test(i))
      continue;
    newOutputIndex[i] = resultTypes.size();
    resultTypes.push_back(call.getResult(i).getType());
    outSpecs.push_back(call.getOutSpecs()[i]);
  }
  for (unsigned i = 0; i < numScratch; ++i)
    if (!deadScratch.test(i))
      scratch.push_back(call.getScratch()[i]);
  SmallVector<int64_t> aliases, pinned;
  for (auto [in, out] : call.getAliasPairs()) {
    aliases.push_back(newInputIndex[in]);
    aliases.push_back(newOutputIndex[out]);
  }
  for (int64_t p : call.getPinnedInputs())
    pinned.push_back(newInputIndex[p]);

  // A symbolic call keeps the shape expressions and dynamic sizes of the
  // operands it keeps.
  SmallVector<Attribute> symInputs, symOutputs;
  SmallVector<Value> sizes;
  SmallVector<Attribute> oldSymInputs = getSymbolicShapes(call, "inputs");
  SmallVector<Attribute> oldSymOutputs = getSymbolicShapes(call, "outputs");
  SmallVector<ValueRange> oldSizes = getDynamicSizesPerOutput(call);
  for (unsigned i = 0; i < numInputs && !oldSymInputs.empty(); ++i)
    if (!deadInputs.test(i))
      symInputs.push_back(oldSymInputs[i]);
  for (unsigned i = 0; i < numOutputs; ++i) {
    if (deadOutputs.test(i))
      continue;
    if (!oldSymOutputs.empty())
      symOutputs.push_back(oldSymOutputs[i]);
    llvm::append_range(sizes, oldSizes[i]);
  }

  OpBuilder builder(call);
  CallOp pruned = cloneCallWith(builder, call, call.getDynamicGridBounds(),
                                inputs, resultTypes, ValueRange(sizes));
  setSymbolicShapes(pruned, symInputs, symOutputs);
  pruned.setKernelAttr(FlatSymbolRefAttr::get(kernel.getSymNameAttr()));
  pruned.setInSpecsAttr(b.getArrayAttr(inSpecs));
  pruned.setOutSpecsAttr(b.getArrayAttr(outSpecs));
  pruned.setScratchAttr(b.getArrayAttr(scratch));
  pruned.setInputOutputAliases(aliases);
  pruned.setPinnedInputs(pinned);
  recordTransform(pruned, "dce");
  for (unsigned i = 0; i < numOutputs; ++i)
    if (newOutputIndex[i] >= 0)
      call.getResult(i).replaceAllUsesWith(pruned.getResult(newOutputIndex[i]));
  call.erase();
  return success();
}

struct PallasDcePass : public mlir::pallas::impl::PallasDceBase<PallasDcePass> {
  using PallasDceBase::PallasDceBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<int64_t> used(usedOutputs.begin(), usedOutputs.end());
    for (auto [i, u] : llvm::enumerate(used))
      if (u != 0 && u != 1) {
        module.emitError() << "pallas-dce: used-outputs[" << i << "] = " << u
                           << ": expected 0 (unused) or 1 (used)";
        return signalPassFailure();
      }
    for (func::FuncOp func : getCallWrappers(module))
      if (failed(runOnWrapper(func, used)))
        return signalPassFailure();
  }

  LogicalResult runOnWrapper(func::FuncOp func, ArrayRef<int64_t> used) {
    if (!used.empty()) {
      if (used.size() != func.getNumResults())
        return func.emitError()
               << "pallas-dce: used-outputs has " << used.size()
               << " entries but @" << func.getSymName() << " returns "
               << func.getNumResults() << " results";
      for (Block &block : func.getBody()) {
        auto ret = dyn_cast<func::ReturnOp>(block.getTerminator());
        if (!ret)
          continue;
        SmallVector<Value> kept;
        for (auto [v, u] : llvm::zip(ret.getOperands(), used))
          if (u)
            kept.push_back(v);
        ret->setOperands(kept);
      }
      updateFunctionType(func);
    }
    // Backwards: a call's outputs are dead once the later ops that used them
    // are gone.
    SmallVector<CallOp> calls;
    func.walk([&](CallOp call) { calls.push_back(call); });
    CallDce dce(func);
    for (CallOp call : llvm::reverse(calls)) {
      eraseDeadOps(func.getBody());
      if (failed(dce.run(call)))
        return failure();
    }
    eraseDeadOps(func.getBody());
    return success();
  }
};

} // namespace
