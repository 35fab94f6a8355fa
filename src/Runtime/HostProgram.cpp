//===- HostProgram.cpp - Run the whole wrapper @main on the host --------===//

#include "src/Runtime/HostProgram.h"

#include "dialects/Pallas/IR/PallasOps.h"
#include "passes/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

using namespace mlir;

namespace pallasc::runtime {

namespace {

constexpr const char *kLauncherName = "__pallasc_launch";

/// The wrapper the spec's call is imported into (src/Spec/SpecToIR.cpp).
func::FuncOp findMain(ModuleOp module) {
  return module.lookupSymbol<func::FuncOp>("main");
}

} // namespace

int64_t HostProgram::numBoundValues() const {
  int64_t n = 0;
  for (const ProgramArgument &a : arguments)
    n += a.numBounds;
  return n;
}

std::pair<const char *, void *> launcherSymbol() {
  return {"_mlir_ciface___pallasc_launch",
          reinterpret_cast<void *>(&launch::pallasc_launcher_cpu_launch)};
}

bool isDirectCall(ModuleOp module) {
  func::FuncOp main = findMain(module);
  if (!main || main.getBody().getBlocks().size() != 1)
    return false;
  Block &entry = main.getBody().front();
  if (entry.getOperations().size() != 2)
    return false;
  auto call = dyn_cast<pallas::CallOp>(entry.front());
  auto ret = dyn_cast<func::ReturnOp>(entry.back());
  if (!call || !ret)
    return false;
  if (!llvm::equal(call->getOperands(), entry.getArguments()))
    return false;
  return llvm::equal(ret.getOperands(), call.getResults());
}

bool prepareHostProgram(ModuleOp module, HostProgram &program,
                        std::string &error) {
  func::FuncOp main = findMain(module);
  if (!main || main.isExternal()) {
    error = "the module has no @main holding the pallas.call";
    return false;
  }
  SmallVector<pallas::CallOp> calls;
  main.walk([&](pallas::CallOp c) { calls.push_back(c); });
  if (calls.empty()) {
    error = "@main holds no pallas.call";
    return false;
  }
  MLIRContext *ctx = module.getContext();
  OpBuilder b(ctx);
  Type i64 = b.getI64Type();

  // @main's arguments and results.
  for (auto [i, arg] : llvm::enumerate(main.getArguments())) {
    ProgramArgument pa;
    Type t = arg.getType();
    auto tensor = dyn_cast<RankedTensorType>(t);
    if (t.isIndex()) {
      pa.kind = ProgramArgument::Kind::Bound;
      pa.numBounds = 1;
    } else if (tensor && tensor.getElementType().isIndex() &&
               tensor.getRank() == 1 && tensor.hasStaticShape()) {
      pa.kind = ProgramArgument::Kind::BatchedBound;
      pa.numBounds = tensor.getDimSize(0);
    } else {
      if (!arrayTypeOf(t, "input " + std::to_string(program.inputs.size()),
                       pa.array, error))
        return false;
      program.inputs.push_back(pa.array);
    }
    program.arguments.push_back(pa);
  }
  for (auto [j, t] : llvm::enumerate(main.getResultTypes())) {
    ArrayType a;
    if (!arrayTypeOf(t, "output " + std::to_string(j), a, error))
      return false;
    program.outputs.push_back(a);
  }

  // Plan every call before any rewriting (planCall reads the kernels).
  for (auto [k, call] : llvm::enumerate(calls)) {
    LaunchPlan plan;
    std::string callError;
    if (!planCall(module, call,
                  "__pallasc_index_map_" + std::to_string(k) + "_", plan,
                  callError)) {
      error = "pallas.call #" + std::to_string(k) + " (@" +
              call.getKernel().str() + "): " + callError;
      return false;
    }
    for (auto [in, out] : plan.aliases)
      if (in < plan.numScalarPrefetch) {
        error = "pallas.call #" + std::to_string(k) + ": input " +
                std::to_string(in) +
                " is a scalar-prefetch operand aliased to an output, which "
                "the CPU runtime does not support";
        return false;
      }
    program.calls.push_back(std::move(plan));
    // pallas-to-linalg reads the kernel's grid axes from its call, which is
    // about to go.
    if (auto kernel = module.lookupSymbol<pallas::KernelOp>(call.getKernel()))
      kernel->setAttr(pallas::kNumGridAxesAttrName,
                      b.getI64IntegerAttr(
                          static_cast<int64_t>(call.getGrid().size()) -
                          static_cast<int64_t>(call.getVmappedDims().size())));
  }

  // The launcher: (call number, pointers).
  b.setInsertionPointToEnd(module.getBody());
  auto pointersType = MemRefType::get({ShapedType::kDynamic}, i64);
  auto launcher = func::FuncOp::create(
      b, main.getLoc(), kLauncherName,
      b.getFunctionType({i64, pointersType}, {}));
  launcher.setPrivate();
  launcher->setAttr("llvm.emit_c_interface", b.getUnitAttr());

  // Each call becomes: copy the inputs into fresh buffers, allocate the
  // outputs (an aliased output is its input's buffer), launch, and read
  // the outputs back as tensors.
  for (auto [k, call] : llvm::enumerate(calls)) {
    Location loc = call.getLoc();
    b.setInsertionPoint(call);
    int64_t numSlots = call.getDynamicGridBounds().size() +
                       call.getInputs().size() + call.getNumResults();
    Value pointers = memref::AllocaOp::create(
        b, loc, MemRefType::get({std::max<int64_t>(numSlots, 1)}, i64));
    int64_t slot = 0;
    auto store = [&](Value v) {
      Value at = arith::ConstantIndexOp::create(b, loc, slot++);
      memref::StoreOp::create(b, loc, v, pointers, ValueRange{at});
    };
    auto storeAddress = [&](Value buffer) {
      Value p = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
      store(arith::IndexCastOp::create(b, loc, i64, p));
    };
    for (Value bound : call.getDynamicGridBounds())
      store(arith::IndexCastOp::create(b, loc, i64, bound));
    SmallVector<Value> inputBuffers;
    for (Value input : call.getInputs()) {
      auto type = cast<RankedTensorType>(input.getType());
      Value buffer = memref::AllocOp::create(
          b, loc, MemRefType::get(type.getShape(), type.getElementType()));
      bufferization::MaterializeInDestinationOp::create(
          b, loc, TypeRange{}, input, buffer, /*restrict=*/true,
          /*writable=*/true);
      storeAddress(buffer);
      inputBuffers.push_back(buffer);
    }
    const LaunchPlan &plan = program.calls[k];
    SmallVector<Value> outputBuffers;
    for (auto [j, result] : llvm::enumerate(call.getResults())) {
      Value buffer;
      for (auto [in, out] : plan.aliases)
        if (out == static_cast<int64_t>(j))
          buffer = inputBuffers[in];
      if (!buffer) {
        auto type = cast<RankedTensorType>(result.getType());
        buffer = memref::AllocOp::create(
            b, loc, MemRefType::get(type.getShape(), type.getElementType()));
      }
      storeAddress(buffer);
      outputBuffers.push_back(buffer);
    }
    Value number =
        arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(k));
    Value dynamicPointers =
        memref::CastOp::create(b, loc, pointersType, pointers);
    func::CallOp::create(b, loc, launcher, ValueRange{number, dynamicPointers});
    for (auto [j, result] : llvm::enumerate(call.getResults())) {
      Value tensor = bufferization::ToTensorOp::create(
          b, loc, result.getType(), outputBuffers[j], /*restrict=*/true,
          /*writable=*/true);
      result.replaceAllUsesWith(tensor);
    }
    call.erase();
  }

  // @main in destination-passing style over memrefs.
  Block &entry = main.getBody().front();
  b.setInsertionPointToStart(&entry);
  for (BlockArgument arg : entry.getArguments()) {
    auto tensor = dyn_cast<RankedTensorType>(arg.getType());
    if (!tensor)
      continue;
    arg.setType(MemRefType::get(tensor.getShape(), tensor.getElementType()));
    Value value = bufferization::ToTensorOp::create(
        b, main.getLoc(), tensor, arg, /*restrict=*/true, /*writable=*/false);
    arg.replaceAllUsesExcept(value, value.getDefiningOp());
  }
  SmallVector<Type> resultTypes(main.getResultTypes());
  for (Type t : resultTypes) {
    auto tensor = cast<RankedTensorType>(t);
    entry.addArgument(
        MemRefType::get(tensor.getShape(), tensor.getElementType()),
        main.getLoc());
  }
  SmallVector<func::ReturnOp> returns;
  main.walk([&](func::ReturnOp r) { returns.push_back(r); });
  for (func::ReturnOp ret : returns) {
    b.setInsertionPoint(ret);
    unsigned firstDest = entry.getNumArguments() - resultTypes.size();
    for (auto [j, v] : llvm::enumerate(ret.getOperands()))
      bufferization::MaterializeInDestinationOp::create(
          b, ret.getLoc(), TypeRange{}, v, entry.getArgument(firstDest + j),
          /*restrict=*/true, /*writable=*/true);
    func::ReturnOp::create(b, ret.getLoc());
    ret.erase();
  }
  main.setFunctionType(b.getFunctionType(entry.getArgumentTypes(), {}));
  main->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  return true;
}

bool toHostProgramPlan(
    const HostProgram &program,
    const std::function<launch::PackedFn(const std::string &, std::string &)>
        &lookup,
    launch::HostProgramPlan &host, std::string &error) {
  host = launch::HostProgramPlan();
  host.main = lookup("main", error);
  if (!host.main)
    return false;
  for (const LaunchPlan &call : program.calls)
    if (!toHostCallPlan(call, lookup, host.calls.emplace_back(), error))
      return false;
  auto arrayType = [](const ArrayType &a) {
    return launch::HostArrayType{elementTypeOf(a.dtype), a.shape};
  };
  for (const ProgramArgument &a : program.arguments) {
    launch::HostProgramArgument &h = host.arguments.emplace_back();
    h.kind = static_cast<launch::HostProgramArgument::Kind>(a.kind);
    h.numBounds = a.numBounds;
    h.array = arrayType(a.array);
  }
  for (const ArrayType &a : program.inputs)
    host.inputs.push_back(arrayType(a));
  for (const ArrayType &a : program.outputs)
    host.outputs.push_back(arrayType(a));
  return true;
}

bool runHostProgram(const HostProgram &program, JitModule &jit,
                    std::vector<HostArray> &inputs,
                    const std::vector<int64_t> &boundValues,
                    const std::vector<DType> &outputDTypes,
                    std::vector<HostArray> &outputs,
                    const ExecuteOptions &options, std::string &error) {
  launch::HostProgramPlan host;
  auto lookup = [&](const std::string &symbol, std::string &lookupError) {
    return jit.lookupCInterface(symbol, lookupError);
  };
  if (!toHostProgramPlan(program, lookup, host, error))
    return false;
  uint64_t needed = 0;
  for (const HostArray &a : inputs)
    needed += a.byteSize();
  outputs.clear();
  for (size_t j = 0; j < program.outputs.size(); ++j) {
    HostArray &a =
        outputs.emplace_back(outputDTypes[j], program.outputs[j].shape);
    if (__builtin_add_overflow(needed, a.byteSize(), &needed) ||
        needed > options.maxBytes || !a.allocate()) {
      error = "cannot allocate output " + std::to_string(j) + " (" +
              a.describe() + ") within the limit of " +
              std::to_string(options.maxBytes) + " bytes";
      return false;
    }
  }
  std::vector<const void *> inputPtrs;
  for (HostArray &a : inputs)
    inputPtrs.push_back(a.data());
  std::vector<void *> outputPtrs;
  for (HostArray &a : outputs)
    outputPtrs.push_back(a.data());
  launch::HostGridOptions grid;
  grid.maxBytes = options.maxBytes;
  grid.gridWalkMs = options.gridWalkMs;
  return launch::runHostProgram(host, inputPtrs, boundValues, outputPtrs, grid,
                                error);
}

} // namespace pallasc::runtime
