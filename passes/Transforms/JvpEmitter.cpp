//===- JvpEmitter.cpp - forward-mode differentiation engine -----*- C++ -*-===//
//
// The op walk, the tangent maps, constants, ref accesses and scf control
// flow of pallas-jvp. The per-op rules of arith, math, tensor and the pallas
// block ops are in JvpRules.cpp.
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/JvpEmitter.h"

#include "dialects/Pallas/IR/PallasOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/ADT/bit.h"

#define DEBUG_TYPE "pallas-jvp"

using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::jvp;

bool jvp::isFloatLike(Type type) {
  return isa<FloatType>(getElementTypeOrSelf(type));
}

//===----------------------------------------------------------------------===//
// Value maps and constants
//===----------------------------------------------------------------------===//

Value Emitter::tangent(Value old) const {
  if (!isFloatLike(old.getType()))
    return {};
  return tangents.lookup(old);
}

Value Emitter::tangentOrZero(Value old) {
  if (Value t = tangent(old))
    return t;
  return zeros(old.getType());
}

void Emitter::setTangent(Value old, Value t) {
  if (t)
    tangents[old] = t;
  else
    tangents.erase(old);
}

Value Emitter::constant(Type type, double value) {
  auto key = std::make_pair(type, llvm::bit_cast<uint64_t>(value));
  if (Value cached = constants.lookup(key))
    return cached;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(constantBlock);
  Type element = getElementTypeOrSelf(type);
  TypedAttr scalar;
  if (auto ft = dyn_cast<FloatType>(element))
    scalar = b.getFloatAttr(ft, value);
  else
    scalar = b.getIntegerAttr(element, static_cast<int64_t>(value));
  TypedAttr attr = scalar;
  if (auto shaped = dyn_cast<ShapedType>(type))
    attr = DenseElementsAttr::get(shaped, ArrayRef<Attribute>(scalar));
  Value c = arith::ConstantOp::create(b, currentLoc, attr);
  constants[key] = c;
  return c;
}

Value Emitter::addf(Value a, Value c) {
  return arith::AddFOp::create(b, currentLoc, a, c);
}
Value Emitter::subf(Value a, Value c) {
  return arith::SubFOp::create(b, currentLoc, a, c);
}
Value Emitter::mulf(Value a, Value c) {
  return arith::MulFOp::create(b, currentLoc, a, c);
}
Value Emitter::divf(Value a, Value c) {
  return arith::DivFOp::create(b, currentLoc, a, c);
}
Value Emitter::negf(Value a) { return arith::NegFOp::create(b, currentLoc, a); }
Value Emitter::select(Value cond, Value a, Value c) {
  return arith::SelectOp::create(b, currentLoc, cond, a, c);
}
Value Emitter::cmpf(arith::CmpFPredicate predicate, Value a, Value c) {
  return arith::CmpFOp::create(b, currentLoc, predicate, a, c);
}

Value Emitter::add(Value a, Value c) {
  if (!a)
    return c;
  if (!c)
    return a;
  return addf(a, c);
}

Value Emitter::sub(Value a, Value c) {
  if (!c)
    return a;
  if (!a)
    return negf(c);
  return subf(a, c);
}

Value Emitter::neg(Value a) { return a ? negf(a) : Value(); }

Value Emitter::scale(Value t, Value x) { return t ? mulf(t, x) : Value(); }

//===----------------------------------------------------------------------===//
// The walk
//===----------------------------------------------------------------------===//

LogicalResult Emitter::noRule(Operation *op) {
  return op->emitError() << "pallas-jvp: no differentiation rule for '"
                         << op->getName() << "'";
}

LogicalResult Emitter::emitOps(Block &block) {
  for (Operation &op : block) {
    if (op.hasTrait<OpTrait::IsTerminator>())
      continue;
    if (failed(emitOp(&op)))
      return failure();
  }
  return success();
}

static LogicalResult checkNoRefs(Operation *op) {
  for (Type t : op->getResultTypes())
    if (isa<RefType>(t))
      return op->emitError() << "pallas-jvp: no differentiation rule for '"
                             << op->getName() << "' carrying a ref value";
  return success();
}

LogicalResult Emitter::emitOp(Operation *op) {
  currentLoc = op->getLoc();
  // Structured control flow carries its values through: none may be a ref.
  if (isa<scf::ForOp, scf::IfOp, scf::WhileOp>(op) && failed(checkNoRefs(op)))
    return failure();
  if (auto forOp = dyn_cast<scf::ForOp>(op))
    return emitFor(forOp);
  if (auto ifOp = dyn_cast<scf::IfOp>(op))
    return emitIf(ifOp);
  if (auto whileOp = dyn_cast<scf::WhileOp>(op))
    return emitWhile(whileOp);
  if (isa<CallOp>(op))
    return callRule ? callRule(op, *this) : noRule(op);
  if (isa<LoadOp, StoreOp, SwapOp, AtomicRMWOp, AtomicCASOp>(op))
    return emitRefOp(op);
  if (auto global = dyn_cast<GetGlobalOp>(op))
    return op->emitError()
           << "pallas-jvp: no differentiation rule for '" << op->getName()
           << "': the kernel closes over the ref @" << global.getName()
           << " (JVP needs its refs as call operands; closed-over refs "
              "become aliased operands, which JVP does not support)";
  if (isa<HiPackOp, HiUnpackOp>(op))
    return op->emitError() << "pallas-jvp: no differentiation rule for '"
                           << op->getName()
                           << "': run pallas-hi-to-lo before pallas-jvp";
  if (isa<DmaStartOp, DmaWaitOp>(op))
    return op->emitError() << "pallas-jvp: no differentiation rule for '"
                           << op->getName()
                           << "' (TPU async copies are not differentiated)";
  if (isa<SemaphoreSignalOp, SemaphoreWaitOp, SemaphoreReadOp>(op))
    return op->emitError() << "pallas-jvp: no differentiation rule for '"
                           << op->getName()
                           << "' (TPU semaphores are not differentiated)";
  return emitGeneric(op);
}

LogicalResult Emitter::emitGeneric(Operation *op) {
  if (op->getNumRegions() != 0)
    return noRule(op);
  Dialect *dialect = op->getDialect();
  if (!dialect || !isa<arith::ArithDialect, math::MathDialect,
                       tensor::TensorDialect, PallasDialect>(dialect))
    return noRule(op);
  Operation *newOp = b.clone(*op, mapping);
  // Integer and boolean results (indices, masks, program ids, argmax) have
  // zero tangents: nothing to differentiate.
  if (llvm::none_of(op->getResultTypes(), isFloatLike))
    return success();
  return emitRule(op, newOp);
}

void Emitter::emitLinear(Operation *op, ArrayRef<unsigned> dataOperands) {
  if (llvm::none_of(dataOperands,
                    [&](unsigned i) { return tangent(op->getOperand(i)); }))
    return;
  SmallVector<Value> operands;
  for (Value v : op->getOperands())
    operands.push_back(primal(v));
  for (unsigned i : dataOperands)
    operands[i] = tangentOrZero(op->getOperand(i));
  Operation *t = op->cloneWithoutRegions();
  t->setOperands(operands);
  b.insert(t);
  for (auto [old, res] : llvm::zip(op->getResults(), t->getResults()))
    setTangent(old, isFloatLike(old.getType()) ? res : Value());
}

void Emitter::forgetNested(Operation *op) {
  op->walk([&](Operation *nested) {
    for (Region &region : nested->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          tangents.erase(arg);
    if (nested != op)
      for (Value res : nested->getResults())
        tangents.erase(res);
  });
}

//===----------------------------------------------------------------------===//
// Ref accesses
//===----------------------------------------------------------------------===//

/// Index of the stored value of store/swap/atomic_rmw: after the ref and the
/// dynamic starts.
static unsigned valueOperandIndex(ValueRange dynStarts) {
  return 1 + dynStarts.size();
}

LogicalResult Emitter::emitRefOp(Operation *op) {
  Value ref = op->getOperand(0);
  Value tRef = refTangent(ref);
  bool floatRef = isa<FloatType>(cast<RefType>(ref.getType()).getElementType());

  // The tangent access: the same op on the tangent ref, with `value` (an
  // operand index) replaced by its tangent.
  auto emitTangentAccess = [&](std::optional<unsigned> valueIndex) {
    SmallVector<Value> operands;
    for (Value v : op->getOperands())
      operands.push_back(primal(v));
    operands[0] = tRef;
    if (valueIndex)
      operands[*valueIndex] = tangentOrZero(op->getOperand(*valueIndex));
    Operation *t = op->cloneWithoutRegions();
    t->setOperands(operands);
    b.insert(t);
    return t;
  };
  auto lostTangent = [&](Value value) -> LogicalResult {
    if (!tangent(value))
      return success();
    return op->emitError()
           << "pallas-jvp: '" << op->getName()
           << "' writes a value with a nonzero tangent into a ref that has "
              "no tangent (an input whose tangent is zero)";
  };

  if (auto atomic = dyn_cast<AtomicRMWOp>(op))
    if (floatRef && atomic.getKind() != AtomicKind::Add)
      return op->emitError()
             << "pallas-jvp: no differentiation rule for '" << op->getName()
             << "' with kind '" << stringifyAtomicKind(atomic.getKind())
             << "' on a floating-point ref (only 'add' is differentiable)";
  if (isa<AtomicCASOp>(op) && floatRef)
    return op->emitError() << "pallas-jvp: no differentiation rule for '"
                           << op->getName() << "' on a floating-point ref";

  b.clone(*op, mapping);
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<LoadOp>([&](LoadOp load) {
        if (!tRef)
          return success();
        // A masked load reads `other` where the mask is off: its tangent
        // reads the tangent of `other` there (JAX's load JVP).
        std::optional<unsigned> otherIndex;
        if (load.getOther())
          otherIndex = op->getNumOperands() - 1;
        Operation *t = emitTangentAccess(otherIndex);
        setTangent(load.getResult(), t->getResult(0));
        return success();
      })
      .Case<StoreOp, SwapOp, AtomicRMWOp>([&](auto write) {
        // The written value's tangent written to the tangent ref (an atomic
        // add on an integer ref has none); swap and atomic_rmw read the old
        // tangent back.
        if (isa<AtomicRMWOp>(write) && !floatRef)
          return success();
        unsigned vi = valueOperandIndex(write.getDynStarts());
        if (!tRef)
          return lostTangent(write.getValue());
        Operation *t = emitTangentAccess(vi);
        if (!isa<StoreOp>(write))
          setTangent(op->getResult(0), t->getResult(0));
        return success();
      })
      .Default([](Operation *) { return success(); });
}

//===----------------------------------------------------------------------===//
// scf control flow
//===----------------------------------------------------------------------===//

/// Creates an op like `op` (same name and attributes) with new operands,
/// result types and `numRegions` empty regions.
static Operation *createLike(OpBuilder &b, Operation *op, ValueRange operands,
                             TypeRange resultTypes) {
  OperationState state(op->getLoc(), op->getName());
  state.addOperands(operands);
  state.addTypes(resultTypes);
  state.addAttributes(op->getAttrs());
  for (unsigned i = 0, e = op->getNumRegions(); i < e; ++i)
    state.addRegion();
  return b.create(state);
}

static Block *addBlock(Region &region, TypeRange argTypes, Location loc) {
  Block *block = new Block();
  region.push_back(block);
  for (Type t : argTypes)
    block->addArgument(t, loc);
  return block;
}

void Emitter::mapCarried(ValueRange olds, ValueRange news,
                         ArrayRef<bool> active) {
  unsigned n = olds.size();
  for (unsigned i = 0, k = 0; i < n; ++i) {
    mapPrimal(olds[i], news[i]);
    setTangent(olds[i], active[i] ? news[n + k++] : Value());
  }
}

void Emitter::appendCarried(ValueRange inits, ArrayRef<bool> active,
                            SmallVectorImpl<Value> &operands,
                            SmallVectorImpl<Type> &types) {
  for (Value v : inits) {
    operands.push_back(primal(v));
    types.push_back(v.getType());
  }
  for (unsigned i = 0; i < inits.size(); ++i)
    if (active[i]) {
      operands.push_back(tangentOrZero(inits[i]));
      types.push_back(inits[i].getType());
    }
}

void Emitter::emitYield(scf::YieldOp old, ArrayRef<bool> active) {
  currentLoc = old.getLoc();
  SmallVector<Value> yields;
  for (Value v : old.getOperands())
    yields.push_back(primal(v));
  for (unsigned i = 0; i < old.getNumOperands(); ++i)
    if (active[i])
      yields.push_back(tangentOrZero(old.getOperand(i)));
  scf::YieldOp::create(b, old.getLoc(), yields);
}

FailureOr<bool> Emitter::emitLoopBody(Block &from, Block *to,
                                      scf::YieldOp yield,
                                      MutableArrayRef<bool> active) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(to);
  if (failed(emitOps(from)))
    return failure();
  bool grow = false;
  for (unsigned i = 0; i < active.size(); ++i)
    if (!active[i] && tangent(yield.getOperand(i))) {
      active[i] = true;
      grow = true;
    }
  if (!grow)
    emitYield(yield, active);
  return grow;
}

LogicalResult Emitter::emitFor(scf::ForOp op) {
  Location loc = op.getLoc();
  unsigned n = op.getNumRegionIterArgs();
  auto yield = cast<scf::YieldOp>(op.getBody()->getTerminator());
  // Carried tangents: those of nonzero inits, grown to a fixed point with
  // those the body makes nonzero.
  SmallVector<bool> active(n);
  for (unsigned i = 0; i < n; ++i)
    active[i] = static_cast<bool>(tangent(op.getInitArgs()[i]));
  while (true) {
    currentLoc = loc;
    SmallVector<Value> operands = {primal(op.getLowerBound()),
                                   primal(op.getUpperBound()),
                                   primal(op.getStep())};
    SmallVector<Type> types;
    appendCarried(op.getInitArgs(), active, operands, types);
    Operation *newOp = createLike(b, op, operands, types);
    SmallVector<Type> argTypes = {op.getInductionVar().getType()};
    argTypes.append(types);
    Block *body = addBlock(newOp->getRegion(0), argTypes, loc);
    mapPrimal(op.getInductionVar(), body->getArgument(0));
    mapCarried(op.getRegionIterArgs(), body->getArguments().drop_front(),
               active);
    FailureOr<bool> grow = emitLoopBody(*op.getBody(), body, yield, active);
    if (failed(grow))
      return failure();
    if (*grow) {
      forgetNested(op);
      newOp->erase();
      continue;
    }
    mapCarried(op->getResults(), newOp->getResults(), active);
    return success();
  }
}

LogicalResult Emitter::emitIf(scf::IfOp op) {
  Location loc = op.getLoc();
  bool hasElse = !op.getElseRegion().empty();
  // Emit both branches into a temporary op first: which results carry a
  // tangent is known only once both branches are differentiated.
  Operation *tmp =
      createLike(b, op, {primal(op.getCondition())}, op.getResultTypes());
  auto emitBranch = [&](Region &from, Region &to) -> LogicalResult {
    Block *block = addBlock(to, {}, loc);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(block);
    return emitOps(from.front());
  };
  if (failed(emitBranch(op.getThenRegion(), tmp->getRegion(0))))
    return failure();
  if (hasElse && failed(emitBranch(op.getElseRegion(), tmp->getRegion(1))))
    return failure();

  unsigned n = op.getNumResults();
  SmallVector<bool> active(n, false);
  SmallVector<Type> types(op.getResultTypes());
  for (unsigned i = 0; i < n; ++i) {
    active[i] = tangent(op.thenYield().getOperand(i)) ||
                (hasElse && tangent(op.elseYield().getOperand(i)));
    if (active[i])
      types.push_back(op.getResult(i).getType());
  }
  currentLoc = loc;
  Operation *newOp = createLike(b, op, {primal(op.getCondition())}, types);
  newOp->getRegion(0).takeBody(tmp->getRegion(0));
  newOp->getRegion(1).takeBody(tmp->getRegion(1));
  tmp->erase();
  auto addYield = [&](scf::YieldOp oldYield, Region &region) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(&region.front());
    emitYield(oldYield, active);
  };
  addYield(op.thenYield(), newOp->getRegion(0));
  if (hasElse)
    addYield(op.elseYield(), newOp->getRegion(1));
  mapCarried(op->getResults(), newOp->getResults(), active);
  return success();
}

LogicalResult Emitter::emitWhile(scf::WhileOp op) {
  Location loc = op.getLoc();
  Block &before = op.getBefore().front();
  Block &after = op.getAfter().front();
  auto condition = cast<scf::ConditionOp>(before.getTerminator());
  auto yield = cast<scf::YieldOp>(after.getTerminator());
  unsigned nb = op.getInits().size();
  unsigned na = op.getNumResults();
  // Carried tangents of the `before` arguments, grown to a fixed point;
  // those of the `after` arguments (= results) follow from the condition.
  SmallVector<bool> activeB(nb), activeA(na);
  for (unsigned i = 0; i < nb; ++i)
    activeB[i] = static_cast<bool>(tangent(op.getInits()[i]));
  while (true) {
    currentLoc = loc;
    SmallVector<Value> operands;
    SmallVector<Type> beforeTypes;
    appendCarried(op.getInits(), activeB, operands, beforeTypes);
    Operation *tmp = createLike(b, op, operands, op.getResultTypes());
    Block *newBefore = addBlock(tmp->getRegion(0), beforeTypes, loc);
    mapCarried(before.getArguments(), newBefore->getArguments(), activeB);
    SmallVector<Type> afterTypes(op.getResultTypes());
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToEnd(newBefore);
      if (failed(emitOps(before)))
        return failure();
      currentLoc = condition.getLoc();
      SmallVector<Value> args;
      for (Value v : condition.getArgs())
        args.push_back(primal(v));
      for (unsigned j = 0; j < na; ++j) {
        activeA[j] = static_cast<bool>(tangent(condition.getArgs()[j]));
        if (activeA[j]) {
          args.push_back(tangent(condition.getArgs()[j]));
          afterTypes.push_back(op.getResult(j).getType());
        }
      }
      scf::ConditionOp::create(b, condition.getLoc(),
                               primal(condition.getCondition()), args);
    }
    Block *newAfter = addBlock(tmp->getRegion(1), afterTypes, loc);
    mapCarried(after.getArguments(), newAfter->getArguments(), activeA);
    FailureOr<bool> grow = emitLoopBody(after, newAfter, yield, activeB);
    if (failed(grow))
      return failure();
    if (*grow) {
      forgetNested(op);
      tmp->erase();
      continue;
    }
    currentLoc = loc;
    Operation *newOp = createLike(b, op, operands, afterTypes);
    newOp->getRegion(0).takeBody(tmp->getRegion(0));
    newOp->getRegion(1).takeBody(tmp->getRegion(1));
    tmp->erase();
    mapCarried(op->getResults(), newOp->getResults(), activeA);
    return success();
  }
}
