//===- HostKernel.cpp - The distributed gpu.func as a host function -*- C++ -*-===//

#include "src/Runtime/GpuEmulator/HostKernel.h"

#include "passes/Pipelines/Pipelines.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/PassManager.h"

#include <cctype>
#include <cstring>
#include <optional>

using namespace mlir;

namespace pallasc::runtime::emulator {
namespace {

func::FuncOp declare(OpBuilder &b, ModuleOp module, StringRef name,
                     TypeRange args, TypeRange results) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(module.getBody());
  auto f = func::FuncOp::create(b, module.getLoc(), name,
                                b.getFunctionType(args, results));
  f.setPrivate();
  return f;
}

Type stripSpace(Type t) {
  auto m = dyn_cast<MemRefType>(t);
  if (!m || !m.getMemorySpace())
    return t;
  return MemRefType::get(m.getShape(), m.getElementType(), m.getLayout());
}

/// Replaces `llvm.extractvalue %r[j]` users of `r` by loads of `buffer[j]`.
LogicalResult replaceExtracts(OpBuilder &b, Value r, Value buffer) {
  for (Operation *user : llvm::make_early_inc_range(r.getUsers())) {
    auto ex = dyn_cast<LLVM::ExtractValueOp>(user);
    if (!ex)
      return user->emitOpError() << "uses an mma/ldmatrix result in a way "
                                    "the emulator does not handle";
    b.setInsertionPoint(ex);
    Value j = arith::ConstantIndexOp::create(b, ex.getLoc(),
                                             ex.getPosition()[0]);
    Value v = memref::LoadOp::create(b, ex.getLoc(), buffer, ValueRange{j});
    ex.getResult().replaceAllUsesWith(v);
    ex.erase();
  }
  return success();
}

/// The wgmma.mma_async inline PTX the CUDA lowering emits:
///   { .reg .pred p; setp.ne.b32 p, S, 0;
///     wgmma.mma_async.sync.aligned.m64nNk16.f32.T.T {$0, ..}, A, $b, p, 1, 1,
///     [trans-a,] trans-b; }
/// with A a descriptor `$a` or four registers `{$a0, $a1, $a2, $a3}`, S
/// (scale-d) 1 with the accumulators tied to the outputs, 0 without them,
/// or an i32 operand `$s` (nonzero: accumulate) with them. Becomes a call
/// of pallasc_emu_wgmma.
LogicalResult rewriteWgmma(OpBuilder &b, ModuleOp module,
                           LLVM::InlineAsmOp asmOp, std::string &error) {
  Location l = asmOp.getLoc();
  StringRef text = asmOp.getAsmString();
  auto bad = [&](const std::string &why) {
    error = "the emulator cannot run this wgmma (" + why + "): " + text.str();
    return failure();
  };
  // scale-d: 1, 0, or the operand $scaleOp.
  int scale = 1, scaleOp = -1;
  {
    StringRef sp = text.substr(text.find("setp.ne.b32 p, "));
    if (!sp.consume_front("setp.ne.b32 p, "))
      return bad("no scale-d predicate");
    if (sp.consume_front("1, 0;"))
      scale = 1;
    else if (sp.consume_front("0, 0;"))
      scale = 0;
    else if (!sp.consume_front("$") || sp.consumeInteger(10, scaleOp) ||
             !sp.consume_front(", 0;"))
      return bad("unexpected scale-d");
  }
  StringRef rest = text.substr(text.find("wgmma.mma_async"));
  if (!rest.consume_front("wgmma.mma_async.sync.aligned.m64n"))
    return bad("not m64nNk16");
  int n = 0;
  if (rest.consumeInteger(10, n) || n % 8 || n < 8 || n > 256 ||
      !rest.consume_front("k16.f32."))
    return bad("not m64nNk16 with f32 accumulators");
  bool bf16;
  if (rest.consume_front("bf16.bf16 "))
    bf16 = true;
  else if (rest.consume_front("f16.f16 "))
    bf16 = false;
  else
    return bad("types other than f16/bf16");
  // Placeholders: outputs first ($0 .. $(n/2-1)), then the operands.
  int nd = n / 2;
  auto placeholder = [&](StringRef &r) -> int {
    r = r.ltrim(" ,{}");
    int v = -1;
    if (!r.consume_front("$") || r.consumeInteger(10, v))
      return -1;
    return v;
  };
  for (int i = 0; i < nd; ++i)
    if (placeholder(rest) != i)
      return bad("unexpected accumulator list");
  if (!rest.consume_front("}, "))
    return bad("unexpected accumulator list");
  bool aRegs = rest.starts_with("{");
  SmallVector<int> aOps;
  for (int j = 0; j < (aRegs ? 4 : 1); ++j)
    aOps.push_back(placeholder(rest) - nd);
  int bOp = placeholder(rest) - nd;
  rest = rest.ltrim(" ,");
  SmallVector<StringRef> imms;
  rest.take_until([](char c) { return c == ';'; }).split(imms, ", ");
  // p, scale-a, scale-b, [trans-a,] trans-b
  if (imms.size() != (aRegs ? 4u : 5u) || imms[0] != "p" || imms[1] != "1" ||
      imms[2] != "1")
    return bad("unexpected immediates");
  bool transA = !aRegs && imms[3] == "1";
  bool transB = imms.back() == "1";
  // Tied accumulator inputs from the constraints.
  SmallVector<StringRef> constraints;
  asmOp.getConstraints().split(constraints, ',');
  ValueRange operands = asmOp.getOperands();
  if (constraints.size() != static_cast<size_t>(nd) + operands.size())
    return bad("unexpected constraints");
  SmallVector<Value> d(nd);
  for (size_t i = 0; i < operands.size(); ++i) {
    int tied;
    if (!constraints[nd + i].getAsInteger(10, tied) && tied >= 0 && tied < nd)
      d[tied] = operands[i];
  }
  for (int op : aOps)
    if (op < 0 || op >= static_cast<int>(operands.size()))
      return bad("unexpected A operand");
  // Tied accumulators unless scale-d is 0 (then none).
  if (bOp < 0 || bOp >= static_cast<int>(operands.size()) ||
      llvm::any_of(d, [&](Value v) { return scale ? !v : bool(v); }))
    return bad("unexpected operands");
  if (scaleOp >= 0 &&
      (scaleOp - nd < 0 || scaleOp - nd >= static_cast<int>(operands.size()) ||
       !operands[scaleOp - nd].getType().isInteger(32)))
    return bad("unexpected scale-d operand");
  b.setInsertionPoint(asmOp);
  Type i32 = b.getI32Type(), i64 = b.getI64Type(), f32 = b.getF32Type();
  auto bufferType = MemRefType::get({128}, f32);
  Value din, dout;
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(
        &asmOp->getParentOfType<func::FuncOp>().getBody().front());
    din = memref::AllocaOp::create(b, l, bufferType);
    dout = memref::AllocaOp::create(b, l, bufferType);
  }
  if (scale)
    for (int i = 0; i < nd; ++i)
      memref::StoreOp::create(
          b, l, d[i], din, ValueRange{arith::ConstantIndexOp::create(b, l, i)});
  int32_t flags = (bf16 ? 1 : 0) | (aRegs ? 2 : 0) | (transA ? 4 : 0) |
                  (transB ? 8 : 0) | (scale && scaleOp < 0 ? 16 : 0) | (n << 8);
  Value flagsV = arith::ConstantIntOp::create(b, l, i32, flags);
  if (scaleOp >= 0) {
    // Bit 4 where the operand is nonzero.
    Value s = operands[scaleOp - nd];
    Value on =
        arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, s,
                              arith::ConstantIntOp::create(b, l, i32, 0));
    flagsV = arith::OrIOp::create(
        b, l, flagsV,
        arith::SelectOp::create(b, l, on,
                                arith::ConstantIntOp::create(b, l, i32, 16),
                                arith::ConstantIntOp::create(b, l, i32, 0)));
  }
  SmallVector<Value> args = {flagsV};
  if (aRegs) {
    args.push_back(arith::ConstantIntOp::create(b, l, i64, 0));
    for (int op : aOps)
      args.push_back(operands[op]);
  } else {
    args.push_back(operands[aOps[0]]);
    for (int j = 0; j < 4; ++j)
      args.push_back(arith::ConstantIntOp::create(b, l, i32, 0));
  }
  args.push_back(operands[bOp]);
  args.push_back(din);
  args.push_back(dout);
  SmallVector<Type> types;
  for (Value a : args)
    types.push_back(a.getType());
  if (types[1] != i64 || types[6] != i64 ||
      llvm::any_of(ArrayRef<Type>(types).slice(2, 4),
                   [&](Type t) { return t != i32; }))
    return bad("unexpected operand types");
  auto f = declare(b, module, "pallasc_emu_wgmma", types, {});
  func::CallOp::create(b, l, f, args);
  if (failed(replaceExtracts(b, asmOp.getResult(0), dout)))
    return bad("unexpected use of its result");
  asmOp.erase();
  return success();
}

/// A pointer operand as an i64 address: an llvm.inttoptr of a 32-bit
/// shared address (zero-extended), or a pointer argument (a tensor map).
Value addressOf(OpBuilder &b, Location l, Value ptr) {
  if (auto cast = ptr.getDefiningOp<LLVM::IntToPtrOp>()) {
    if (cast.getArg().getType().isInteger(64))
      return cast.getArg(); // a shared::cluster address (mapa)
    return arith::ExtUIOp::create(b, l, b.getI64Type(), cast.getArg());
  }
  return LLVM::PtrToIntOp::create(b, l, b.getI64Type(), ptr);
}

/// mapa, barrier.cluster.arrive / wait, mbarrier.init / arrive[.expect_tx]
/// / try_wait.parity, the TMA load and
/// store and the bulk groups become calls of the emulator's functions.
LogicalResult rewriteTmaOp(OpBuilder &b, ModuleOp module, Operation *op,
                           std::string &error) {
  Location l = op->getLoc();
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto call = [&](StringRef name, ArrayRef<Value> args) {
    SmallVector<Type> types;
    for (Value a : args)
      types.push_back(a.getType());
    func::CallOp::create(b, l, declare(b, module, name, types, {}), args);
  };
  // A TMA copy's coordinates (innermost first), padded to 5 with zeros.
  auto coordinates = [&](ValueRange c) {
    SmallVector<Value> v(c.begin(), c.end());
    while (v.size() < 5)
      v.push_back(arith::ConstantIntOp::create(b, l, i32, 0));
    return v;
  };
  if (auto mapa = dyn_cast<NVVM::MapaOp>(op)) {
    // The block's address in the shared::cluster window: an i64 host
    // address in that block's shared memory.
    auto f = declare(b, module, "pallasc_emu_mapa", {i64, i32}, {i64});
    Value remote =
        func::CallOp::create(
            b, l, f, ValueRange{addressOf(b, l, mapa.getA()), mapa.getB()})
            .getResult(0);
    mapa.getRes().replaceAllUsesWith(
        LLVM::IntToPtrOp::create(b, l, mapa.getRes().getType(), remote)
            .getResult());
  } else if (isa<NVVM::ClusterArriveOp>(op)) {
    call("pallasc_emu_cluster_arrive", {});
  } else if (isa<NVVM::ClusterWaitOp>(op)) {
    call("pallasc_emu_cluster_wait", {});
  } else if (auto init = dyn_cast<NVVM::MBarrierInitOp>(op)) {
    // The threads whose predicate holds initialize it.
    Value enabled =
        init.getPredicate()
            ? arith::ExtUIOp::create(b, l, i32, init.getPredicate())
                  .getResult()
            : arith::ConstantIntOp::create(b, l, i32, 1).getResult();
    call("pallasc_emu_mbar_init",
         {addressOf(b, l, init.getAddr()), init.getCount(), enabled});
  } else if (auto arrive = dyn_cast<NVVM::MBarrierArriveOp>(op)) {
    if (arrive.getRes() && !arrive.getRes().use_empty())
      return error = "the emulator runs mbarrier.arrive without a used "
                     "result",
             failure();
    Value count = arrive.getCount()
                      ? arrive.getCount()
                      : arith::ConstantIntOp::create(b, l, i32, 1).getResult();
    call("pallasc_emu_mbar_arrive", {addressOf(b, l, arrive.getAddr()), count});
  } else if (auto arrive = dyn_cast<NVVM::MBarrierArriveExpectTxOp>(op)) {
    if (arrive.getPredicate() || arrive.getNumResults())
      return error = "the emulator runs mbarrier.arrive.expect_tx without a "
                     "predicate or result",
             failure();
    call("pallasc_emu_mbar_arrive_tx",
         {addressOf(b, l, arrive.getAddr()), arrive.getTxcount()});
  } else if (auto wait = dyn_cast<NVVM::MBarrierTryWaitParityOp>(op)) {
    call("pallasc_emu_mbar_wait",
         {addressOf(b, l, wait.getAddr()), wait.getPhase()});
  } else if (auto store =
                 dyn_cast<NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp>(op)) {
    if (store.getCoordinates().size() < 2 ||
        store.getCoordinates().size() > 5 || store.getL2CacheHint() ||
        store.getPredicate() || store.getMode() != NVVM::TMAStoreMode::TILE)
      return error = "the emulator runs tiled TMA stores of 2 to 5 "
                     "dimensions only",
             failure();
    SmallVector<Value> args = {addressOf(b, l, store.getSrcMem()),
                               addressOf(b, l, store.getTmaDescriptor())};
    args.append(coordinates(store.getCoordinates()));
    call("pallasc_emu_tma_store", args);
  } else if (isa<NVVM::CpAsyncBulkCommitGroupOp>(op)) {
    call("pallasc_emu_bulk_commit", {});
  } else if (auto wait = dyn_cast<NVVM::CpAsyncBulkWaitGroupOp>(op)) {
    call("pallasc_emu_bulk_wait",
         {arith::ConstantIntOp::create(b, l, i32,
                                       static_cast<int64_t>(wait.getGroup()))
              .getResult()});
  } else {
    auto tma = cast<NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp>(op);
    if (tma.getCoordinates().size() < 2 || tma.getCoordinates().size() > 5 ||
        !tma.getIm2colOffsets().empty() || tma.getL2CacheHint() ||
        tma.getPredicate())
      return error = "the emulator runs tiled TMA loads of 2 to 5 "
                     "dimensions only",
             failure();
    SmallVector<Value> args = {addressOf(b, l, tma.getDstMem()),
                               addressOf(b, l, tma.getTmaDescriptor()),
                               addressOf(b, l, tma.getMbar())};
    // multicast::cluster: the blocks' mask (i16) as an i32.
    if (Value mask = tma.getMulticastMask())
      args.push_back(arith::ExtUIOp::create(b, l, i32, mask));
    args.append(coordinates(tma.getCoordinates()));
    call(tma.getMulticastMask() ? "pallasc_emu_tma_load_multicast"
                                : "pallasc_emu_tma_load",
         args);
  }
  (void)i64;
  op->erase();
  return success();
}

/// Rewrites the GPU-specific ops of the host kernel `host` into calls of the
/// emulator's intrinsics (Intrinsics.h), one op family per method. Every
/// method is called with the builder before the op and fails with `error`
/// set for a form the emulator does not run.
class HostKernelRewriter {
public:
  HostKernelRewriter(ModuleOp module, func::FuncOp host, Value smem,
                     std::string &error)
      : module(module), b(module.getContext()), entry(host.getBody().front()),
        loc(host.getLoc()), smem(smem), error(error), i32(b.getI32Type()),
        f32(b.getF32Type()), index(b.getIndexType()) {}

  /// The ops `rewrite` handles, in walk order. Only those: rewriting an
  /// mma/ldmatrix also erases the llvm.extractvalue ops that use it, which
  /// must not be visited afterwards.
  static SmallVector<Operation *> collect(func::FuncOp host);
  LogicalResult rewrite(Operation *op);
  /// The kernel's cluster shape (`nvvm.cluster_dim`; 1, 1, 1 without).
  int64_t clusterDim[3] = {1, 1, 1};

private:
  /// A function-entry alloca of `size` elements of `elem`.
  Value buffer(Type elem, int64_t size = 4);
  /// `v` (an i32, a 32-bit vector or scalar) as an i32.
  Value toI32(Value v);
  LogicalResult rewriteGpuOp(Operation *op, Location l);
  LogicalResult rewriteBarrier(NVVM::BarrierOp bar, Location l);
  LogicalResult rewriteClusterId(Operation *op, Location l);
  LogicalResult rewriteShuffle(mlir::gpu::ShuffleOp sh, Location l);
  LogicalResult rewriteTf32(NVVM::ConvertFloatToTF32Op cvt, Location l);
  LogicalResult rewriteMma(NVVM::MmaOp mma, Location l);
  /// Calls `callee` with `operands` (of `types`), then the f32 elements of
  /// the accumulator vector `c` and the buffer `out` the call writes the
  /// results into; replaces `d` with them and erases `op`.
  LogicalResult callOnAccumulators(Operation *op, Value c, Value d,
                                   StringRef callee,
                                   SmallVector<Value> &operands,
                                   SmallVector<Type> &types, Value out,
                                   Location l);
  LogicalResult rewriteMfma(amdgpu::MFMAOp mfma, Location l);
  LogicalResult rewriteWmma(amdgpu::WMMAOp wmma, Location l);
  LogicalResult rewriteCpAsync(nvgpu::DeviceAsyncCopyOp copy, Location l);
  LogicalResult rewriteAsyncGroupOp(Operation *op, Location l);
  LogicalResult rewriteIntrinsic(LLVM::CallIntrinsicOp intr, Location l);
  LogicalResult rewriteSpecialRegister(LLVM::InlineAsmOp asmOp, Location l);
  LogicalResult rewriteLdmatrix(LLVM::InlineAsmOp asmOp, Location l);

  ModuleOp module;
  OpBuilder b;
  Block &entry;
  Location loc;
  Value smem;
  std::string &error;
  Type i32, f32, index;
};

SmallVector<Operation *> HostKernelRewriter::collect(func::FuncOp host) {
  SmallVector<Operation *> ops;
  host.walk([&](Operation *op) {
    if (isa<mlir::gpu::ThreadIdOp, mlir::gpu::BlockIdOp, mlir::gpu::BarrierOp,
            mlir::gpu::ShuffleOp, mlir::gpu::PrintfOp,
            mlir::gpu::DynamicSharedMemoryOp, mlir::gpu::ReturnOp, NVVM::MmaOp,
            NVVM::ConvertFloatToTF32Op,
            amdgpu::MFMAOp, amdgpu::WMMAOp,
            nvgpu::DeviceAsyncCopyOp, NVVM::CpAsyncCommitGroupOp,
            NVVM::CpAsyncWaitGroupOp, NVVM::WgmmaFenceAlignedOp,
            NVVM::WgmmaGroupSyncAlignedOp, NVVM::WgmmaWaitGroupSyncOp,
            NVVM::FenceProxyOp, LLVM::InlineAsmOp, NVVM::MBarrierInitOp,
            NVVM::MBarrierArriveOp, NVVM::BarrierOp, NVVM::SetMaxRegisterOp,
            NVVM::MBarrierArriveExpectTxOp, NVVM::MBarrierTryWaitParityOp,
            NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp,
            NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp,
            NVVM::CpAsyncBulkCommitGroupOp, NVVM::CpAsyncBulkWaitGroupOp,
            NVVM::FenceMbarrierInitOp, LLVM::CallIntrinsicOp,
            NVVM::MapaOp, NVVM::ClusterArriveOp, NVVM::ClusterWaitOp,
            NVVM::ClusterIdXOp, NVVM::ClusterIdYOp, NVVM::ClusterIdZOp,
            NVVM::BlockInClusterIdXOp, NVVM::BlockInClusterIdYOp,
            NVVM::BlockInClusterIdZOp>(op))
      ops.push_back(op);
  });
  return ops;
}

Value HostKernelRewriter::buffer(Type elem, int64_t size) {
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&entry);
  return memref::AllocaOp::create(b, loc, MemRefType::get({size}, elem))
      .getResult();
}

Value HostKernelRewriter::toI32(Value v) {
  if (v.getType().isInteger(32))
    return v;
  if (auto vt = dyn_cast<VectorType>(v.getType())) {
    Value c = vector::BitCastOp::create(
        b, loc, VectorType::get({1}, i32), v);
    return vector::ExtractOp::create(b, loc, c, 0);
  }
  return arith::BitcastOp::create(b, loc, i32, v);
}

LogicalResult HostKernelRewriter::rewrite(Operation *op) {
  b.setInsertionPoint(op);
  Location l = op->getLoc();
  if (isa<mlir::gpu::ThreadIdOp, mlir::gpu::BlockIdOp, mlir::gpu::BarrierOp,
          mlir::gpu::PrintfOp, mlir::gpu::DynamicSharedMemoryOp,
          mlir::gpu::ReturnOp>(op))
    return rewriteGpuOp(op, l);
  if (isa<NVVM::ClusterIdXOp, NVVM::ClusterIdYOp, NVVM::ClusterIdZOp,
          NVVM::BlockInClusterIdXOp, NVVM::BlockInClusterIdYOp,
          NVVM::BlockInClusterIdZOp>(op))
    return rewriteClusterId(op, l);
  if (auto sh = dyn_cast<mlir::gpu::ShuffleOp>(op))
    return rewriteShuffle(sh, l);
  if (auto cvt = dyn_cast<NVVM::ConvertFloatToTF32Op>(op))
    return rewriteTf32(cvt, l);
  if (auto mma = dyn_cast<NVVM::MmaOp>(op))
    return rewriteMma(mma, l);
  if (auto mfma = dyn_cast<amdgpu::MFMAOp>(op))
    return rewriteMfma(mfma, l);
  if (auto wmma = dyn_cast<amdgpu::WMMAOp>(op))
    return rewriteWmma(wmma, l);
  if (auto copy = dyn_cast<nvgpu::DeviceAsyncCopyOp>(op))
    return rewriteCpAsync(copy, l);
  if (isa<NVVM::CpAsyncCommitGroupOp, NVVM::CpAsyncWaitGroupOp,
          NVVM::WgmmaFenceAlignedOp, NVVM::WgmmaGroupSyncAlignedOp,
          NVVM::WgmmaWaitGroupSyncOp>(op))
    return rewriteAsyncGroupOp(op, l);
  if (isa<NVVM::FenceProxyOp, NVVM::FenceMbarrierInitOp,
          NVVM::SetMaxRegisterOp>(op)) {
    // Host memory has one proxy; mbarrier.init is seen at once; a host
    // thread has no register budget to move (setmaxnreg).
    op->erase();
    return success();
  }
  if (auto bar = dyn_cast<NVVM::BarrierOp>(op))
    return rewriteBarrier(bar, l);
  if (isa<NVVM::MapaOp, NVVM::ClusterArriveOp, NVVM::ClusterWaitOp,
          NVVM::MBarrierInitOp, NVVM::MBarrierArriveExpectTxOp,
          NVVM::MBarrierArriveOp,
          NVVM::MBarrierTryWaitParityOp,
          NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp,
          NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp,
          NVVM::CpAsyncBulkCommitGroupOp, NVVM::CpAsyncBulkWaitGroupOp>(op))
    return rewriteTmaOp(b, module, op, error);
  if (auto intr = dyn_cast<LLVM::CallIntrinsicOp>(op))
    return rewriteIntrinsic(intr, l);
  auto asmOp = cast<LLVM::InlineAsmOp>(op);
  if (asmOp.getAsmString().contains("wgmma.mma_async"))
    return rewriteWgmma(b, module, asmOp, error);
  if (asmOp.getAsmString().starts_with("mov.u32 $0, %"))
    return rewriteSpecialRegister(asmOp, l);
  return rewriteLdmatrix(asmOp, l);
}

/// Thread and block ids, barriers, printf, the dynamic shared memory and the
/// return.
LogicalResult HostKernelRewriter::rewriteGpuOp(Operation *op, Location l) {
  if (isa<mlir::gpu::ThreadIdOp>(op)) {
    auto f = declare(b, module, "pallasc_emu_tid", {}, {index});
    op->getResult(0).replaceAllUsesWith(
        func::CallOp::create(b, l, f, ValueRange{}).getResult(0));
  } else if (auto bid = dyn_cast<mlir::gpu::BlockIdOp>(op)) {
    auto f = declare(b, module, "pallasc_emu_bid", {i32}, {index});
    Value d = arith::ConstantIntOp::create(
        b, l, i32, static_cast<int64_t>(bid.getDimension()));
    op->getResult(0).replaceAllUsesWith(
        func::CallOp::create(b, l, f, ValueRange{d}).getResult(0));
  } else if (isa<mlir::gpu::BarrierOp>(op)) {
    auto f = declare(b, module, "pallasc_emu_barrier", {}, {});
    func::CallOp::create(b, l, f, ValueRange{});
  } else if (isa<mlir::gpu::DynamicSharedMemoryOp>(op)) {
    op->getResult(0).replaceAllUsesWith(smem);
  } else if (isa<mlir::gpu::ReturnOp>(op)) {
    func::ReturnOp::create(b, l);
  }
  // gpu.printf: dropped.
  op->erase();
  return success();
}

/// %clusterid and %cluster_ctaid along x, y or z: clusters tile the grid,
/// so they are %ctaid divided by, and modulo, the cluster's size there.
LogicalResult HostKernelRewriter::rewriteClusterId(Operation *op, Location l) {
  int32_t dim =
      isa<NVVM::ClusterIdXOp, NVVM::BlockInClusterIdXOp>(op)   ? 0
      : isa<NVVM::ClusterIdYOp, NVVM::BlockInClusterIdYOp>(op) ? 1
                                                               : 2;
  bool within = isa<NVVM::BlockInClusterIdXOp, NVVM::BlockInClusterIdYOp,
                    NVVM::BlockInClusterIdZOp>(op);
  auto f = declare(b, module, "pallasc_emu_bid", {i32}, {index});
  Value bid = arith::IndexCastUIOp::create(
      b, l, i32,
      func::CallOp::create(
          b, l, f, ValueRange{arith::ConstantIntOp::create(b, l, i32, dim)})
          .getResult(0));
  Value size = arith::ConstantIntOp::create(b, l, i32, clusterDim[dim]);
  Value v = within ? arith::RemUIOp::create(b, l, bid, size).getResult()
                   : arith::DivUIOp::create(b, l, bid, size).getResult();
  op->getResult(0).replaceAllUsesWith(v);
  op->erase();
  return success();
}

/// bar.sync: the block barrier, or a named one (id, thread count).
LogicalResult HostKernelRewriter::rewriteBarrier(NVVM::BarrierOp bar,
                                                 Location l) {
  if (bar.getReductionPredicate() || bar->getNumResults()) {
    error = "the emulator runs bar.sync without a reduction only";
    return failure();
  }
  if (!bar.getBarrierId() && !bar.getNumberOfThreads()) {
    auto f = declare(b, module, "pallasc_emu_barrier", {}, {});
    func::CallOp::create(b, l, f, ValueRange{});
  } else {
    Value id = bar.getBarrierId()
                   ? bar.getBarrierId()
                   : arith::ConstantIntOp::create(b, l, i32, 0).getResult();
    Value count =
        bar.getNumberOfThreads()
            ? bar.getNumberOfThreads()
            : arith::ConstantIntOp::create(b, l, i32, -1).getResult();
    auto f = declare(b, module, "pallasc_emu_bar_sync", {i32, i32}, {});
    func::CallOp::create(b, l, f, ValueRange{id, count});
  }
  bar->erase();
  return success();
}

LogicalResult HostKernelRewriter::rewriteShuffle(mlir::gpu::ShuffleOp sh,
                                                 Location l) {
  if (sh.getMode() != mlir::gpu::ShuffleMode::XOR) {
    error = "the emulator handles xor shuffles only";
    return failure();
  }
  auto f = declare(b, module, "pallasc_emu_shfl_xor", {i32, i32}, {i32});
  Value v = sh.getValue();
  bool isFloat = v.getType().isF32();
  if (isFloat)
    v = arith::BitcastOp::create(b, l, i32, v);
  Value r = func::CallOp::create(b, l, f, ValueRange{v, sh.getOffset()})
                .getResult(0);
  if (isFloat)
    r = arith::BitcastOp::create(b, l, f32, r);
  sh.getShuffleResult().replaceAllUsesWith(r);
  sh.getValid().replaceAllUsesWith(
      arith::ConstantIntOp::create(b, l, 1, 1).getResult());
  sh->erase();
  return success();
}

LogicalResult HostKernelRewriter::rewriteTf32(NVVM::ConvertFloatToTF32Op cvt,
                                              Location l) {
  if (cvt.getRnd() != NVVM::FPRoundingMode::RNA || cvt.getRelu() ||
      cvt.getSat() != NVVM::SaturationMode::NONE) {
    error = "the emulator handles cvt.rna.tf32.f32 only";
    return failure();
  }
  auto f = declare(b, module, "pallasc_emu_cvt_rna_tf32", {f32}, {i32});
  cvt.getResult().replaceAllUsesWith(
      func::CallOp::create(b, l, f, ValueRange{cvt.getSrc()}).getResult(0));
  cvt.erase();
  return success();
}

LogicalResult HostKernelRewriter::rewriteMma(NVVM::MmaOp mma, Location l) {
  int32_t kind = 0;
  if (auto t = mma.getMultiplicandAPtxType())
    kind = *t == NVVM::MMATypes::bf16   ? 1
           : *t == NVVM::MMATypes::tf32 ? 2
                                        : 0;
  auto shape = mma.getShapeAttr();
  if (shape.getK() != (kind == 2 ? 8 : 16)) {
    error = "the emulator handles m16n8k16 f16/bf16 and m16n8k8 tf32 "
            "mma.sync only";
    return failure();
  }
  Value out = buffer(f32);
  SmallVector<Type> types = {i32};
  SmallVector<Value> operands = {
      arith::ConstantIntOp::create(b, l, i32, kind)};
  for (Value a : mma.getOperandA()) {
    operands.push_back(toI32(a));
    types.push_back(i32);
  }
  for (Value v : mma.getOperandB()) {
    operands.push_back(toI32(v));
    types.push_back(i32);
  }
  for (Value c : mma.getOperandC()) {
    operands.push_back(c);
    types.push_back(f32);
  }
  if (operands.size() != 11) {
    error = "the emulator handles m16n8k16 mma.sync only";
    return failure();
  }
  operands.push_back(out);
  types.push_back(out.getType());
  auto f = declare(b, module, "pallasc_emu_mma", types, {});
  func::CallOp::create(b, l, f, operands);
  if (failed(replaceExtracts(b, mma.getResult(), out))) {
    error = "unexpected use of an mma result";
    return failure();
  }
  mma.erase();
  return success();
}

LogicalResult HostKernelRewriter::callOnAccumulators(
    Operation *op, Value c, Value d, StringRef callee,
    SmallVector<Value> &operands, SmallVector<Type> &types, Value out,
    Location l) {
  auto ct = cast<VectorType>(c.getType());
  int64_t n = ct.getNumElements();
  for (int64_t j = 0; j < n; ++j) {
    operands.push_back(vector::ExtractOp::create(b, l, c, j));
    types.push_back(f32);
  }
  operands.push_back(out);
  types.push_back(out.getType());
  auto f = declare(b, module, callee, types, {});
  func::CallOp::create(b, l, f, operands);
  SmallVector<Value> results;
  for (int64_t j = 0; j < n; ++j)
    results.push_back(memref::LoadOp::create(
        b, l, out, ValueRange{arith::ConstantIndexOp::create(b, l, j)}));
  d.replaceAllUsesWith(
      vector::FromElementsOp::create(b, l, ct, results).getResult());
  op->erase();
  return success();
}

/// v_mfma_f32_16x16x16{f16,bf16} (4 A/B elements per lane) and CDNA4's
/// v_mfma_f32_16x16x32_{f16,bf16} (8 per lane).
LogicalResult HostKernelRewriter::rewriteMfma(amdgpu::MFMAOp mfma,
                                              Location l) {
  auto at = dyn_cast<VectorType>(mfma.getSourceA().getType());
  auto bt = dyn_cast<VectorType>(mfma.getSourceB().getType());
  auto ct = dyn_cast<VectorType>(mfma.getDestC().getType());
  int64_t k = mfma.getK();
  if (mfma.getM() != 16 || mfma.getN() != 16 || (k != 16 && k != 32) ||
      mfma.getBlocks() != 1 || !at || at != bt ||
      at.getNumElements() != k / 4 ||
      !(at.getElementType().isF16() || at.getElementType().isBF16()) ||
      !ct || ct.getNumElements() != 4 || !ct.getElementType().isF32() ||
      mfma.getCbsz() != 0 || mfma.getAbid() != 0 ||
      mfma.getBlgp() != amdgpu::MFMAPermB::none) {
    error = "the emulator handles 16x16x16 and 16x16x32 f16/bf16 MFMA "
            "only";
    return failure();
  }
  Type i64 = b.getI64Type();
  int64_t words = k / 16; // i64s of 4 16-bit elements per operand
  auto pack = [&](Value v, SmallVector<Value> &into) {
    Value c = vector::BitCastOp::create(
        b, l, VectorType::get({words}, i64), v);
    for (int64_t q = 0; q < words; ++q)
      into.push_back(vector::ExtractOp::create(b, l, c, q));
  };
  Value out = buffer(f32);
  SmallVector<Value> operands = {arith::ConstantIntOp::create(
      b, l, i32, at.getElementType().isBF16() ? 1 : 0)};
  pack(mfma.getSourceA(), operands);
  pack(mfma.getSourceB(), operands);
  SmallVector<Type> types = {i32};
  types.append(2 * words, i64);
  return callOnAccumulators(mfma, mfma.getDestC(), mfma.getDestD(),
                            k == 32 ? "pallasc_emu_mfma_16x16x32"
                                    : "pallasc_emu_mfma",
                            operands, types, out, l);
}

/// The op is llvm.amdgcn.wmma.f32.16x16x16.{f16,bf16} on the lane's VGPRs
/// (AMDGPUToROCDL only bitcasts bf16 to i16): 16 A/B elements per lane on
/// gfx11, 8 on gfx12, 8 f32 accumulators on both.
LogicalResult HostKernelRewriter::rewriteWmma(amdgpu::WMMAOp wmma,
                                              Location l) {
  auto at = dyn_cast<VectorType>(wmma.getSourceA().getType());
  auto bt = dyn_cast<VectorType>(wmma.getSourceB().getType());
  auto ct = dyn_cast<VectorType>(wmma.getDestC().getType());
  if (wmma.getM() != 16 || wmma.getN() != 16 || wmma.getK() != 16 ||
      !at || at != bt ||
      (at.getNumElements() != 16 && at.getNumElements() != 8) ||
      !(at.getElementType().isF16() || at.getElementType().isBF16()) ||
      !ct || ct.getNumElements() != 8 || !ct.getElementType().isF32() ||
      wmma.getSubwordOffset() != 0 || wmma.getClamp()) {
    error = "the emulator handles 16x16x16 f16/bf16 WMMA with f32 "
            "accumulators only";
    return failure();
  }
  Type i64 = b.getI64Type();
  int64_t words = at.getNumElements() / 4;
  auto pack = [&](Value v, SmallVector<Value> &into) {
    Value c = vector::BitCastOp::create(
        b, l, VectorType::get({words}, i64), v);
    for (int64_t q = 0; q < 4; ++q)
      into.push_back(q < words ? vector::ExtractOp::create(b, l, c, q)
                                     .getResult()
                               : arith::ConstantIntOp::create(b, l, i64, 0)
                                     .getResult());
  };
  Value out = buffer(f32, 8);
  int32_t kind = (at.getElementType().isBF16() ? 1 : 0) |
                 (at.getNumElements() == 8 ? 2 : 0);
  SmallVector<Value> operands = {
      arith::ConstantIntOp::create(b, l, i32, kind)};
  pack(wmma.getSourceA(), operands);
  pack(wmma.getSourceB(), operands);
  SmallVector<Type> types = {i32};
  types.append(8, i64);
  return callOnAccumulators(wmma, wmma.getDestC(), wmma.getDestD(),
                            "pallasc_emu_wmma", operands, types, out, l);
}

LogicalResult HostKernelRewriter::rewriteCpAsync(nvgpu::DeviceAsyncCopyOp copy,
                                                 Location l) {
  // The byte addresses of both ends.
  auto address = [&](Value m, ValueRange indices) -> Value {
    auto type = cast<MemRefType>(m.getType());
    Value ptr =
        memref::ExtractAlignedPointerAsIndexOp::create(b, l, m);
    auto meta = memref::ExtractStridedMetadataOp::create(b, l, m);
    Value linear = meta.getOffset();
    for (auto [i, stride] : llvm::zip(indices, meta.getStrides()))
      linear = arith::AddIOp::create(
          b, l, linear, arith::MulIOp::create(b, l, i, stride));
    int64_t bytes = type.getElementTypeBitWidth() / 8;
    Value a = arith::AddIOp::create(
        b, l, ptr,
        arith::MulIOp::create(
            b, l, linear, arith::ConstantIndexOp::create(b, l, bytes)));
    return arith::IndexCastOp::create(b, l, b.getI64Type(), a);
  };
  Value dst = address(copy.getDst(), copy.getDstIndices());
  Value src = address(copy.getSrc(), copy.getSrcIndices());
  if (copy.getSrcElements()) {
    error = "the emulator does not handle partial cp.async copies";
    return failure();
  }
  int64_t bytes = copy.getDstElements().getZExtValue() *
                  copy.getDst().getType().getElementTypeBitWidth() / 8;
  auto f = declare(b, module, "pallasc_emu_cp_async",
                   {b.getI64Type(), b.getI64Type(), i32}, {});
  func::CallOp::create(
      b, l, f,
      ValueRange{dst, src, arith::ConstantIntOp::create(b, l, i32, bytes)});
  if (!copy.getAsyncToken().use_empty()) {
    error = "the emulator does not handle nvgpu async tokens";
    return failure();
  }
  copy->erase();
  return success();
}

/// cp.async's commit and wait, wgmma's fence, commit and wait.
LogicalResult HostKernelRewriter::rewriteAsyncGroupOp(Operation *op,
                                                      Location l) {
  // The emulator function of the op, and its i32 operand where it has one.
  const char *name = nullptr;
  std::optional<int64_t> n;
  if (isa<NVVM::CpAsyncCommitGroupOp>(op)) {
    name = "pallasc_emu_cp_commit";
  } else if (auto wait = dyn_cast<NVVM::CpAsyncWaitGroupOp>(op)) {
    name = "pallasc_emu_cp_wait";
    n = wait.getN();
  } else if (isa<NVVM::WgmmaFenceAlignedOp>(op)) {
    name = "pallasc_emu_wgmma_fence";
  } else if (isa<NVVM::WgmmaGroupSyncAlignedOp>(op)) {
    name = "pallasc_emu_wgmma_commit";
  } else if (auto wait = dyn_cast<NVVM::WgmmaWaitGroupSyncOp>(op)) {
    name = "pallasc_emu_wgmma_wait";
    n = static_cast<int64_t>(wait.getGroup());
  }
  if (name) {
    SmallVector<Type> types;
    if (n)
      types.push_back(i32);
    auto f = declare(b, module, name, types, {});
    SmallVector<Value> args;
    if (n)
      args.push_back(arith::ConstantIntOp::create(b, l, i32, *n));
    func::CallOp::create(b, l, f, args);
  }
  op->erase();
  return success();
}

LogicalResult HostKernelRewriter::rewriteIntrinsic(LLVM::CallIntrinsicOp intr,
                                                   Location l) {
  if (intr.getIntrin() != "llvm.nvvm.div.full") {
    error = "the emulator cannot run the intrinsic " + intr.getIntrin().str();
    return failure();
  }
  auto f = declare(b, module, "pallasc_emu_div_full", {f32, f32}, {f32});
  intr->getResult(0).replaceAllUsesWith(
      func::CallOp::create(b, l, f, intr.getArgs()).getResult(0));
  intr->erase();
  return success();
}

/// A special register read again (a wgmma epilogue after a loop,
/// Epilogue.cpp readSpecialRegister): %tid.x, %ctaid.x/y/z.
LogicalResult HostKernelRewriter::rewriteSpecialRegister(
    LLVM::InlineAsmOp asmOp, Location l) {
  StringRef reg = asmOp.getAsmString()
                      .drop_front(strlen("mov.u32 $0, "))
                      .rtrim(';');
  Value id;
  if (reg == "%tid.x") {
    auto f = declare(b, module, "pallasc_emu_tid", {}, {index});
    id = func::CallOp::create(b, l, f, ValueRange{}).getResult(0);
  } else if (reg == "%ctaid.x" || reg == "%ctaid.y" || reg == "%ctaid.z") {
    auto f = declare(b, module, "pallasc_emu_bid", {i32}, {index});
    Value d = arith::ConstantIntOp::create(b, l, i32, reg.back() - 'x');
    id = func::CallOp::create(b, l, f, ValueRange{d}).getResult(0);
  } else {
    error = "the emulator cannot run inline assembly '" +
            asmOp.getAsmString().str() + "'";
    return failure();
  }
  asmOp.getResult(0).replaceAllUsesWith(
      arith::IndexCastUIOp::create(b, l, i32, id).getResult());
  asmOp.erase();
  return success();
}

LogicalResult HostKernelRewriter::rewriteLdmatrix(LLVM::InlineAsmOp asmOp,
                                                  Location l) {
  StringRef text = asmOp.getAsmString();
  if (!text.starts_with("ldmatrix.sync.aligned.m8n8.x")) {
    error = "the emulator cannot run inline assembly '" + text.str() + "'";
    return failure();
  }
  int32_t num = text[strlen("ldmatrix.sync.aligned.m8n8.x")] - '0';
  int32_t trans = text.contains(".trans") ? 1 : 0;
  int64_t offset = 0;
  StringRef tail = text.substr(text.rfind('+') + 1);
  tail = tail.take_while([](char c) { return std::isdigit(c); });
  tail.getAsInteger(10, offset);
  Value out = buffer(i32);
  Value addr = arith::ExtUIOp::create(b, l, b.getI64Type(),
                                      asmOp.getOperands()[0]);
  addr = arith::AddIOp::create(
      b, l, addr,
      arith::ConstantIntOp::create(b, l, b.getI64Type(), offset));
  auto f = declare(b, module, "pallasc_emu_ldmatrix",
                   {b.getI64Type(), i32, i32, out.getType()}, {});
  func::CallOp::create(
      b, l, f,
      ValueRange{addr, arith::ConstantIntOp::create(b, l, i32, num),
                 arith::ConstantIntOp::create(b, l, i32, trans), out});
  if (failed(replaceExtracts(b, asmOp.getResult(0), out))) {
    error = "unexpected use of an ldmatrix result";
    return failure();
  }
  asmOp.erase();
  return success();
}

/// Moves the body of `kernel` into a new host function, its arguments with
/// their memory spaces stripped, plus the shared memory as memref<?xi8>.
func::FuncOp createHostFunction(ModuleOp module,
                                mlir::gpu::GPUFuncOp kernel) {
  OpBuilder b(module.getContext());
  Location loc = kernel.getLoc();
  SmallVector<Type> args;
  for (Type t : kernel.getArgumentTypes())
    args.push_back(stripSpace(t));
  args.push_back(MemRefType::get({ShapedType::kDynamic}, b.getI8Type()));
  b.setInsertionPointToEnd(module.getBody());
  auto host = func::FuncOp::create(b, loc, "pallasc_emu_kernel",
                                   b.getFunctionType(args, {}));
  host->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                b.getUnitAttr());
  host.getBody().takeBody(kernel.getBody());
  host.getBody().front().addArgument(args.back(), loc);
  return host;
}

/// After the rewrite: drops the unused addresses the rewritten ops made,
/// strips the memory spaces (shared memory is plain host memory here) and
/// erases the gpu.module.
void finishHostKernel(ModuleOp module, func::FuncOp host) {
  host.walk([&](LLVM::IntToPtrOp op) {
    if (op->use_empty())
      op->erase();
  });
  host.walk([&](Operation *op) {
    for (Value r : op->getResults())
      r.setType(stripSpace(r.getType()));
    for (Region &region : op->getRegions())
      for (Block &blk : region)
        for (BlockArgument a : blk.getArguments())
          a.setType(stripSpace(a.getType()));
  });
  for (BlockArgument a : host.getBody().front().getArguments())
    a.setType(stripSpace(a.getType()));
  module.walk([&](mlir::gpu::GPUModuleOp m) { m.erase(); });
  module->removeAttr(mlir::gpu::GPUDialect::getContainerModuleAttrName());
}

} // namespace

FailureOr<func::FuncOp> buildHostKernel(ModuleOp module,
                                         std::string &error) {
  MLIRContext *ctx = module.getContext();
  // What the host kernel is built from, outside any pass manager.
  ctx->loadDialect<arith::ArithDialect, func::FuncDialect, LLVM::LLVMDialect,
                   memref::MemRefDialect, vector::VectorDialect>();
  mlir::gpu::GPUFuncOp kernel;
  module.walk([&](mlir::gpu::GPUFuncOp f) { kernel = f; });
  if (!kernel) {
    error = "no gpu.func to emulate";
    return failure();
  }
  int64_t clusterDim[3] = {1, 1, 1};
  if (auto c = kernel->getAttrOfType<DenseI32ArrayAttr>(
          NVVM::NVVMDialect::getClusterDimAttrName()))
    for (auto [i, n] : llvm::enumerate(c.asArrayRef()))
      if (i < 3)
        clusterDim[i] = n;
  func::FuncOp host = createHostFunction(module, kernel);
  Value smem = host.getBody().front().getArguments().back();
  HostKernelRewriter rewriter(module, host, smem, error);
  std::copy(clusterDim, clusterDim + 3, rewriter.clusterDim);
  for (Operation *op : HostKernelRewriter::collect(host))
    if (failed(rewriter.rewrite(op)))
      return failure();
  finishHostKernel(module, host);
  return host;
}

LogicalResult lowerHostKernel(ModuleOp module) {
  PassManager pm(module.getContext());
  // The CPU pipeline's lowering to the LLVM dialect, for vectorized GPU
  // code that may hold affine loops.
  mlir::pallas::HostToLLVMOptions toLLVM;
  toLLVM.affineLoopsFirst = true;
  toLLVM.lowerVectors = true;
  mlir::pallas::buildHostToLLVMPipeline(pm, toLLVM);
  return pm.run(module);
}

} // namespace pallasc::runtime::emulator
