//===- CallUtils.h - helpers shared by the call-level passes -----*- C++
//-*-===//
//
// Small pieces the call-level transforms (vmap, dce, discharge-state,
// hi-to-lo) share: rebuilding a pallas.call with new operands, giving a call
// its own copy of a kernel before rewriting it, keeping a wrapper function's
// type in sync with its body, and recording the transforms applied.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_TRANSFORMS_CALLUTILS_H
#define PALLASC_PASSES_TRANSFORMS_CALLUTILS_H

#include "dialects/Pallas/IR/PallasOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>

namespace mlir::pallas {

/// Appends `name` (e.g. "vmap") to the call's `transforms` list.
void recordTransform(CallOp call, StringRef name);

/// Fails with an error on the first call of `module` with symbolic shapes
/// (its `symbolic` attribute): `pass` (e.g. "pallas-vmap") does not
/// transform them yet.
LogicalResult refuseSymbolicCalls(ModuleOp module, StringRef pass);

/// Creates, at the builder's insertion point, a copy of `call` with the given
/// operands and result types. Every attribute is kept, discardable ones too
/// (a symbolic call's `symbolic` attribute included: callers that change the
/// operands update it with setSymbolicShapes); callers then change what their
/// rule changes. `sizes` are the dynamic result sizes (one `index` per `?` in
/// `results`); without them the call's own are kept, which is right when the
/// `?` dims of the results are the call's.
CallOp cloneCallWith(OpBuilder &builder, CallOp call, ValueRange bounds,
                     ValueRange inputs, TypeRange results,
                     std::optional<ValueRange> sizes = std::nullopt);

/// A symbolic call's shape expressions of its inputs (`key` "inputs") or
/// outputs ("outputs"): one array of strings per operand; empty for a static
/// call.
SmallVector<Attribute> getSymbolicShapes(CallOp call, StringRef key);

/// The shape entry of a static `type` in a symbolic call (its sizes as
/// strings, e.g. ["8", "128"]); null when `type` has a dynamic dim or is not a
/// ranked tensor.
ArrayAttr staticShapeEntry(Builder &b, Type type);

/// Replaces the `inputs` and `outputs` of a symbolic call's `symbolic`
/// attribute (its symbols and grid expressions are kept); does nothing for a
/// static call.
void setSymbolicShapes(CallOp call, ArrayRef<Attribute> inputs,
                       ArrayRef<Attribute> outputs);

/// The per-operand attributes of a call whose operands a transform
/// rewrote: block specs, aliases and pinned inputs by new index, and a
/// symbolic call's shape entries (empty for a static call).
struct CallOperandAttrs {
  ArrayRef<Attribute> inSpecs, outSpecs;
  ArrayRef<int64_t> aliases, pinned;
  ArrayRef<Attribute> symInputs, symOutputs;
};

/// Sets them on `call` (a copy cloneCallWith made with the new operands)
/// and records `transform` (recordTransform).
void setOperandAttrs(CallOp call, const CallOperandAttrs &attrs,
                     StringRef transform);

/// The call's dynamic result sizes, one range per output (the `?` dims of
/// its type, in order).
SmallVector<ValueRange> getDynamicSizesPerOutput(CallOp call);

/// The kernel `call` runs, ready to be rewritten for this call alone: when
/// other pallas.call ops in the module run the same kernel, the kernel is
/// cloned (named `<kernel>_<suffix>`, uniqued) and `call` retargeted to the
/// clone. Returns null (after a diagnostic) if the symbol is not a kernel.
KernelOp getKernelForRewrite(CallOp call, StringRef suffix);

/// The pallas.kernel `call` names, or null.
KernelOp lookupKernel(CallOp call);

/// Sets the function type of `func` from its entry block arguments and the
/// operands of its (first) func.return.
void updateFunctionType(func::FuncOp func);

/// True when the call's compiler params mark it side-effecting:
/// `tpu = <has_side_effects = true>` (JAX's _has_side_effects:
/// SideEffectType.SIDE_EFFECTING counts, DATAFLOW_SIDE_EFFECTING does not).
bool hasSideEffects(CallOp call);

/// Erases ops of `region` (recursively) that are trivially dead, until none is
/// left. Returns true if anything was erased.
bool eraseDeadOps(Region &region);

/// The func.func ops of `module` whose bodies hold a pallas.call, in order.
SmallVector<func::FuncOp> getCallWrappers(ModuleOp module);

} // namespace mlir::pallas

#endif // PALLASC_PASSES_TRANSFORMS_CALLUTILS_H
