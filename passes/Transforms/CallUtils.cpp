//===- CallUtils.cpp - helpers shared by the call-level passes ---*- C++
//-*-===//

#include "passes/Transforms/CallUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::pallas;

void mlir::pallas::recordTransform(CallOp call, StringRef name) {
  SmallVector<Attribute> names(call.getTransforms().begin(),
                               call.getTransforms().end());
  Builder b(call.getContext());
  names.push_back(b.getStringAttr(name));
  call.setTransformsAttr(b.getArrayAttr(names));
}

LogicalResult mlir::pallas::refuseSymbolicCalls(ModuleOp module,
                                                StringRef pass) {
  WalkResult r = module.walk([&](CallOp call) {
    DictionaryAttr sym = call.getSymbolicAttr();
    if (!sym)
      return WalkResult::advance();
    std::string names;
    if (auto symbols = sym.getAs<DictionaryAttr>("symbols"))
      for (NamedAttribute s : symbols)
        names += (names.empty() ? "" : ", ") + s.getName().str();
    call.emitOpError() << pass
                       << " does not support symbolic shapes yet (symbols: "
                       << names << "); apply it to a call at static shapes";
    return WalkResult::interrupt();
  });
  return failure(r.wasInterrupted());
}

CallOp mlir::pallas::cloneCallWith(OpBuilder &builder, CallOp call,
                                   ValueRange bounds, ValueRange inputs,
                                   TypeRange results,
                                   std::optional<ValueRange> sizes) {
  // The call's attributes travel as its typed record (the op's properties);
  // only the operand segments change with the operands.
  CallOp::Properties properties = call.getProperties();
  ValueRange dynamicSizes = sizes ? *sizes : call.getDynamicSizes();
  properties.operandSegmentSizes = {static_cast<int32_t>(bounds.size()),
                                    static_cast<int32_t>(inputs.size()),
                                    static_cast<int32_t>(dynamicSizes.size())};
  SmallVector<Value> operands(bounds.begin(), bounds.end());
  operands.append(inputs.begin(), inputs.end());
  operands.append(dynamicSizes.begin(), dynamicSizes.end());
  auto copy =
      CallOp::create(builder, call.getLoc(), results, operands, properties);
  copy->setDiscardableAttrs(call->getDiscardableAttrDictionary());
  return copy;
}

SmallVector<Attribute> mlir::pallas::getSymbolicShapes(CallOp call,
                                                       StringRef key) {
  DictionaryAttr sym = call.getSymbolicAttr();
  if (!sym)
    return {};
  auto arr = sym.getAs<ArrayAttr>(key);
  return arr ? SmallVector<Attribute>(arr.begin(), arr.end())
             : SmallVector<Attribute>();
}

ArrayAttr mlir::pallas::staticShapeEntry(Builder &b, Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  if (!t || !t.hasStaticShape())
    return {};
  SmallVector<Attribute> dims;
  for (int64_t d : t.getShape())
    dims.push_back(b.getStringAttr(std::to_string(d)));
  return b.getArrayAttr(dims);
}

void mlir::pallas::setOperandAttrs(CallOp call, const CallOperandAttrs &attrs,
                                   StringRef transform) {
  Builder b(call.getContext());
  setSymbolicShapes(call, attrs.symInputs, attrs.symOutputs);
  call.setInSpecsAttr(b.getArrayAttr(attrs.inSpecs));
  call.setOutSpecsAttr(b.getArrayAttr(attrs.outSpecs));
  call.setInputOutputAliases(attrs.aliases);
  call.setPinnedInputs(attrs.pinned);
  recordTransform(call, transform);
}

void mlir::pallas::setSymbolicShapes(CallOp call, ArrayRef<Attribute> inputs,
                                     ArrayRef<Attribute> outputs) {
  DictionaryAttr sym = call.getSymbolicAttr();
  if (!sym)
    return;
  Builder b(call.getContext());
  NamedAttrList entries(sym);
  entries.set("inputs", b.getArrayAttr(inputs));
  entries.set("outputs", b.getArrayAttr(outputs));
  call.setSymbolicAttr(entries.getDictionary(call.getContext()));
}

SmallVector<ValueRange> mlir::pallas::getDynamicSizesPerOutput(CallOp call) {
  SmallVector<ValueRange> out;
  ValueRange sizes = call.getDynamicSizes();
  unsigned next = 0;
  for (Type t : call.getResultTypes()) {
    unsigned n = 0;
    if (auto r = dyn_cast<RankedTensorType>(t))
      n = r.getNumDynamicDims();
    unsigned start = std::min<unsigned>(next, sizes.size());
    out.push_back(
        sizes.slice(start, std::min<unsigned>(n, sizes.size() - start)));
    next += n;
  }
  return out;
}

KernelOp mlir::pallas::lookupKernel(CallOp call) {
  return SymbolTable::lookupNearestSymbolFrom<KernelOp>(call,
                                                        call.getKernelAttr());
}

KernelOp mlir::pallas::getKernelForRewrite(CallOp call, StringRef suffix) {
  KernelOp kernel = lookupKernel(call);
  if (!kernel) {
    call.emitOpError() << "'" << call.getKernel()
                       << "' does not name a pallas.kernel";
    return {};
  }
  Operation *symbolTableOp = SymbolTable::getNearestSymbolTable(kernel);
  bool shared = false;
  if (auto uses = SymbolTable::getSymbolUses(kernel, symbolTableOp))
    for (const SymbolTable::SymbolUse &use : *uses)
      if (use.getUser() != call.getOperation())
        shared = true;
  if (!shared)
    return kernel;
  SymbolTable table(symbolTableOp);
  OpBuilder builder(kernel);
  builder.setInsertionPointAfter(kernel);
  auto clone = cast<KernelOp>(builder.clone(*kernel));
  clone.setSymName((kernel.getSymName() + "_" + suffix).str());
  // Inserting renames the clone if its name is taken.
  table.insert(clone);
  call.setKernelAttr(FlatSymbolRefAttr::get(clone.getSymNameAttr()));
  return clone;
}

void mlir::pallas::updateFunctionType(func::FuncOp func) {
  SmallVector<Type> results;
  func.walk([&](func::ReturnOp ret) {
    if (ret->getParentOp() != func.getOperation())
      return WalkResult::advance();
    llvm::append_range(results, ret.getOperandTypes());
    return WalkResult::interrupt();
  });
  func.setType(FunctionType::get(func.getContext(),
                                 func.front().getArgumentTypes(), results));
}

bool mlir::pallas::hasSideEffects(CallOp call) {
  CompilerParamsAttr params = call.getCompilerParamsAttr();
  return params && params.isSideEffecting();
}

bool mlir::pallas::eraseDeadOps(Region &region) {
  bool any = false;
  bool changed = true;
  while (changed) {
    changed = false;
    // Post order allows erasing the visited op; an op whose last user was
    // erased in this round is found in the next one.
    region.walk<WalkOrder::PostOrder>([&](Operation *op) {
      if (op->hasTrait<OpTrait::IsTerminator>() || !isOpTriviallyDead(op))
        return;
      op->erase();
      changed = any = true;
    });
  }
  return any;
}

SmallVector<func::FuncOp> mlir::pallas::getCallWrappers(ModuleOp module) {
  SmallVector<func::FuncOp> wrappers;
  for (auto func : module.getOps<func::FuncOp>()) {
    bool hasCall = false;
    func.walk([&](CallOp) {
      hasCall = true;
      return WalkResult::interrupt();
    });
    if (hasCall)
      wrappers.push_back(func);
  }
  return wrappers;
}
