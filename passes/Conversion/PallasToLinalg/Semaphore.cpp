//===- Semaphore.cpp - local TPU semaphores on the CPU ----------*- C++ -*-===//
//
// A `semaphore` ref lowers to a memref of i32 counters, as in interpret mode:
// `pallas.semaphore_signal` adds to the counter, `pallas.semaphore_read` loads
// it, `pallas.semaphore_wait` subtracts once the counter reaches its value.
// The CPU walks the grid on one thread, so a wait on a counter below its
// value can never be satisfied: it calls the runtime's
// `pallasc_semaphore_wait_stuck(where, have, want)`, which records the error;
// the grid walk stops after that program and the run fails with the message.
// The counters start at 0: the program at grid point (0, ..., 0), the first
// one the CPU runs, zeroes every semaphore ref the kernel uses.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToLinalg/Lowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::lowering;

namespace {

constexpr const char *kStuckFunc = "pallasc_semaphore_wait_stuck";

/// The index of the semaphore `op` picks, clamped into the ref.
SmallVector<Value> semaphoreIndex(OpBuilder &b, Location loc, Value ref,
                                  const Indexer &indexer) {
  auto type = cast<MemRefType>(ref.getType());
  SmallVector<Value> at;
  for (auto [d, dim] : llvm::enumerate(indexer.dims)) {
    Value ix =
        dim.isDynamic()
            ? Value(arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                               dim.dynStart))
            : Value(arith::ConstantIndexOp::create(b, loc, dim.staticStart));
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value last = arith::ConstantIndexOp::create(
        b, loc, std::max<int64_t>(type.getDimSize(d) - 1, 0));
    ix = arith::MaxSIOp::create(b, loc, ix, zero);
    ix = arith::MinSIOp::create(b, loc, ix, last);
    at.push_back(ix);
  }
  return at;
}

/// `file:line:col` of `loc` (or "?"), as a memref<?xi8> of a private global.
/// An absolute file name keeps only its last component, so the compiled
/// kernel does not depend on where its source was.
Value siteText(OpBuilder &b, Location loc, ModuleOp module) {
  std::string text = "?";
  auto describe = [&](FileLineColLoc fl) {
    StringRef file = fl.getFilename().getValue();
    if (llvm::sys::path::is_absolute(file))
      file = llvm::sys::path::filename(file);
    text.clear();
    llvm::raw_string_ostream os(text);
    os << file << ":" << fl.getLine() << ":" << fl.getColumn();
  };
  if (auto fl = dyn_cast<FileLineColLoc>(loc)) {
    describe(fl);
  } else {
    loc->walk([&](Location inner) {
      if (auto fl = dyn_cast<FileLineColLoc>(inner)) {
        describe(fl);
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
  }
  return textGlobal(b, loc, module, "__pallasc_semaphore_site_", text);
}

func::FuncOp stuckFunc(ModuleOp module) {
  if (auto f = module.lookupSymbol<func::FuncOp>(kStuckFunc))
    return f;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  Type text = MemRefType::get({ShapedType::kDynamic}, b.getI8Type());
  auto f = func::FuncOp::create(
      b, module.getLoc(), kStuckFunc,
      b.getFunctionType({text, b.getI32Type(), b.getI32Type()}, {}));
  f.setPrivate();
  f->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  return f;
}

/// Stores 0 into every element of `ref`.
void zeroFill(OpBuilder &b, Location loc, Value ref) {
  auto type = cast<MemRefType>(ref.getType());
  Value zero = arith::ConstantIntOp::create(b, loc, 0, 32);
  SmallVector<Value> ivs;
  std::function<void(OpBuilder &, unsigned)> loop = [&](OpBuilder &ib,
                                                        unsigned d) {
    if (d == type.getRank()) {
      memref::StoreOp::create(ib, loc, zero, ref, ivs);
      return;
    }
    Value lb = arith::ConstantIndexOp::create(ib, loc, 0);
    Value ub = arith::ConstantIndexOp::create(ib, loc, type.getDimSize(d));
    Value step = arith::ConstantIndexOp::create(ib, loc, 1);
    scf::ForOp::create(ib, loc, lb, ub, step, ValueRange{},
                       [&](OpBuilder &fb, Location, Value iv, ValueRange) {
                         ivs.push_back(iv);
                         loop(fb, d + 1);
                         ivs.pop_back();
                         scf::YieldOp::create(fb, loc);
                       });
  };
  loop(b, 0);
}

} // namespace

LogicalResult lowering::initSemaphores(FuncState &state) {
  llvm::SetVector<Value> refs;
  state.func.walk([&](Operation *op) {
    if (isa<SemaphoreSignalOp, SemaphoreWaitOp, SemaphoreReadOp>(op))
      refs.insert(op->getOperand(0));
  });
  if (refs.empty())
    return success();
  for (Value ref : refs)
    if (!isa<BlockArgument>(ref) ||
        cast<BlockArgument>(ref).getOwner() != &state.func.front())
      return ref.getDefiningOp()->emitOpError()
             << "is a semaphore ref that is not a kernel argument; only "
                "scratch semaphores (pltpu.SemaphoreType.REGULAR) are "
                "supported";
  Block &entry = state.func.front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  Location loc = state.func.getLoc();
  Value first = arith::ConstantIntOp::create(b, loc, 1, 1);
  for (int64_t a = 0; a < state.numAxes; ++a) {
    Value pid = state.func.getArgument(a);
    Value zero = arith::ConstantIntOp::create(b, loc, pid.getType(), 0);
    Value is0 = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, pid,
                                      zero);
    first = arith::AndIOp::create(b, loc, first, is0);
  }
  scf::IfOp::create(b, loc, first, [&](OpBuilder &tb, Location) {
    for (Value ref : refs)
      zeroFill(tb, loc, ref);
    scf::YieldOp::create(tb, loc);
  });
  return success();
}

LogicalResult lowering::lowerSemaphore(Operation *op, ModuleOp module,
                                       RewriterBase &rewriter) {
  Location loc = op->getLoc();
  OpBuilder &b = rewriter;
  Value ref = op->getOperand(0);
  if (failed(checkArgumentRef(op, "kernel argument")))
    return failure();
  Indexer indexer;
  if (auto s = dyn_cast<SemaphoreSignalOp>(op))
    indexer = detail::buildIndexer(
        RefType::get(op->getContext(), cast<MemRefType>(ref.getType()).getShape(),
                     b.getI32Type(), MemorySpace::Semaphore),
        s.getDynStarts(), s.getStaticStarts(), s.getStaticSizes(),
        s.getStaticStrides());
  else if (auto w = dyn_cast<SemaphoreWaitOp>(op))
    indexer = detail::buildIndexer(
        RefType::get(op->getContext(), cast<MemRefType>(ref.getType()).getShape(),
                     b.getI32Type(), MemorySpace::Semaphore),
        w.getDynStarts(), w.getStaticStarts(), w.getStaticSizes(),
        w.getStaticStrides());
  else {
    auto r = cast<SemaphoreReadOp>(op);
    indexer = detail::buildIndexer(
        RefType::get(op->getContext(), cast<MemRefType>(ref.getType()).getShape(),
                     b.getI32Type(), MemorySpace::Semaphore),
        r.getDynStarts(), r.getStaticStarts(), r.getStaticSizes(),
        r.getStaticStrides());
  }
  SmallVector<Value> at = semaphoreIndex(b, loc, ref, indexer);
  Value have = memref::LoadOp::create(b, loc, ref, at);
  if (isa<SemaphoreReadOp>(op)) {
    rewriter.replaceOp(op, have);
    return success();
  }
  if (auto s = dyn_cast<SemaphoreSignalOp>(op)) {
    Value sum = arith::AddIOp::create(b, loc, have, s.getValue());
    memref::StoreOp::create(b, loc, sum, ref, at);
    rewriter.eraseOp(op);
    return success();
  }
  auto w = cast<SemaphoreWaitOp>(op);
  Value want = w.getValue();
  Value ok =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, have, want);
  func::FuncOp stuck = stuckFunc(module);
  scf::IfOp::create(
      b, loc, ok,
      [&](OpBuilder &tb, Location) {
        Value rest = arith::SubIOp::create(tb, loc, have, want);
        memref::StoreOp::create(tb, loc, rest, ref, at);
        scf::YieldOp::create(tb, loc);
      },
      [&](OpBuilder &eb, Location) {
        Value where = siteText(eb, loc, module);
        func::CallOp::create(eb, loc, stuck, ValueRange{where, have, want});
        scf::YieldOp::create(eb, loc);
      });
  rewriter.eraseOp(op);
  return success();
}
