//===- HostProgram.cpp - Run the whole wrapper @main on the host --------===//

#include "src/Runtime/HostProgram.h"

#include "dialects/Pallas/IR/GridMapping.h"
#include "dialects/Pallas/IR/PallasOps.h"
#include "passes/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
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

std::pair<const char *, void *> launcherSymbol() {
  return {"_mlir_ciface___pallasc_launch",
          reinterpret_cast<void *>(&launch::pallasc_launcher_cpu_launch)};
}

bool isDirectCall(ModuleOp module) {
  func::FuncOp main = findMain(module);
  if (!main || main.getBody().getBlocks().size() != 1)
    return false;
  Block &entry = main.getBody().front();
  auto ret = dyn_cast<func::ReturnOp>(entry.back());
  if (!ret || entry.getOperations().size() < 2)
    return false;
  auto call = dyn_cast<pallas::CallOp>(ret->getPrevNode());
  if (!call || !llvm::equal(ret.getOperands(), call.getResults()))
    return false;
  if (!call.getSymbolicAttr())
    return entry.getOperations().size() == 2 &&
           llvm::equal(call->getOperands(), entry.getArguments());
  // A symbolic call: its grid bounds and result sizes are index arithmetic
  // on @main's symbol arguments (src/Spec/SpecToIR.cpp), which the plan
  // evaluates from its expressions; the inputs are @main's arrays.
  for (Operation &op : entry.without_terminator())
    if (&op != call.getOperation() &&
        op.getDialect()->getNamespace() != "arith")
      return false;
  // The inputs are @main's arrays, every one in order (pallas-dce may have
  // dropped some from the call, which then runs as a host program).
  SmallVector<Value> arrays;
  for (BlockArgument arg : entry.getArguments())
    if (!main.getArgAttr(arg.getArgNumber(), "pallas.symbol"))
      arrays.push_back(arg);
  return !entry.getArguments().empty() && llvm::equal(call.getInputs(), arrays);
}

int64_t BatchLoopProgram::numBoundValues() const {
  int64_t n = 0;
  for (int64_t axis : boundAxes)
    n += axis == 0 ? axisSize : 1;
  return n;
}

launch::GpuBatchLoop BatchLoopProgram::gpuLoop() const {
  launch::GpuBatchLoop loop;
  loop.axisSize = axisSize;
  for (size_t i = 0; i < call.inputs.size(); ++i)
    loop.inputStrides.push_back(
        inAxes[i] == 0
            ? HostArray(call.inputs[i].type, call.inputs[i].shape).byteSize()
            : 0);
  for (const launch::HostArrayType &a : call.outputs)
    loop.outputStrides.push_back(HostArray(a.type, a.shape).byteSize());
  for (int64_t axis : boundAxes)
    loop.batchedBounds.push_back(axis == 0);
  return loop;
}

namespace {

/// The parts of vmap's explicit loop in @main: `ret(for(...))`.
struct LoopShape {
  scf::ForOp loop;
  pallas::CallOp call;
};

/// How soleOp names a block and the op it looks for in `why`.
struct SoleOpNames {
  const char *block; ///< "@main"
  const char *op;    ///< "scf.for"
  const char *role;  ///< "the batch loop": what the others stand beside
  const char *none;  ///< "batch loop (scf.for)": what a block without it lacks
};

/// The one op of type OpT in `block`, whose other ops must all be of the
/// Allowed types; null (and `why` set) otherwise.
template <typename OpT, typename... Allowed>
OpT soleOp(Block &block, const SoleOpNames &names, std::string &why) {
  OpT found;
  for (Operation &op : block) {
    if (auto o = dyn_cast<OpT>(op)) {
      if (found) {
        why = std::string(names.block) + " holds more than one " + names.op;
        return nullptr;
      }
      found = o;
    } else if (!isa<Allowed...>(op)) {
      why = std::string(names.block) + " holds '" +
            op.getName().getStringRef().str() + "' besides " + names.role;
      return nullptr;
    }
  }
  if (!found)
    why = std::string(names.block) + " holds no " + names.none;
  return found;
}

/// Matches `@main` = constants, one tensor.empty per result, one scf.for
/// from 0 to N step 1 over them, returning its results in order; the body:
/// tensor.extract / tensor.extract_slice of @main's arguments at the
/// induction variable, one pallas.call, tensor.insert_slice of each of its
/// results into its iter_arg at the induction variable, scf.yield of them.
/// `why` says what differs.
bool matchLoopShape(ModuleOp module, LoopShape &shape, std::string &why) {
  func::FuncOp main = findMain(module);
  if (!main || main.isExternal() || main.getBody().getBlocks().size() != 1) {
    why = "the module has no @main of one block";
    return false;
  }
  Block &entry = main.getBody().front();
  auto loop =
      soleOp<scf::ForOp, arith::ConstantOp, tensor::EmptyOp, func::ReturnOp>(
          entry, {"@main", "scf.for", "the batch loop", "batch loop (scf.for)"},
          why);
  if (!loop)
    return false;
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  if (!llvm::equal(ret.getOperands(), loop.getResults())) {
    why = "@main does not return the batch loop's results in order";
    return false;
  }
  APInt lb, step, ub;
  if (!matchPattern(loop.getLowerBound(), m_ConstantInt(&lb)) || !lb.isZero() ||
      !matchPattern(loop.getStep(), m_ConstantInt(&step)) || !step.isOne() ||
      !matchPattern(loop.getUpperBound(), m_ConstantInt(&ub))) {
    why = "the batch loop does not run from 0 step 1 to a constant";
    return false;
  }
  for (Value init : loop.getInitArgs())
    if (!init.getDefiningOp<tensor::EmptyOp>()) {
      why = "an output of the batch loop does not start as tensor.empty";
      return false;
    }
  Block *body = loop.getBody();
  auto call = soleOp<pallas::CallOp, tensor::ExtractOp, tensor::ExtractSliceOp,
                     tensor::InsertSliceOp, arith::ConstantOp, scf::YieldOp>(
      *body, {"the batch loop", "pallas.call", "the call", "pallas.call"}, why);
  if (!call)
    return false;
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  if (yield.getNumOperands() != call.getNumResults()) {
    why = "the batch loop does not yield one value per result of the call";
    return false;
  }
  shape = {loop, call};
  return true;
}

/// Whether `offsets`/`sizes`/`strides` select index `iv` at `axis` of
/// `full` (sizes 1 there, whole elsewhere, offsets 0, strides 1).
bool isSliceAt(ArrayRef<OpFoldResult> offsets, ArrayRef<OpFoldResult> sizes,
               ArrayRef<OpFoldResult> strides, ArrayRef<int64_t> full,
               int64_t axis, Value iv) {
  if (offsets.size() != full.size() || sizes.size() != full.size() ||
      strides.size() != full.size())
    return false;
  for (size_t d = 0; d < full.size(); ++d) {
    std::optional<int64_t> size = getConstantIntValue(sizes[d]);
    std::optional<int64_t> stride = getConstantIntValue(strides[d]);
    if (!stride || *stride != 1 || !size)
      return false;
    if (static_cast<int64_t>(d) == axis) {
      if (*size != 1 || llvm::dyn_cast_if_present<Value>(offsets[d]) != iv)
        return false;
    } else {
      std::optional<int64_t> offset = getConstantIntValue(offsets[d]);
      if (!offset || *offset != 0 || *size != full[d])
        return false;
    }
  }
  return true;
}

} // namespace

bool isBatchLoop(ModuleOp module) {
  LoopShape shape;
  std::string why;
  return matchLoopShape(module, shape, why);
}

bool planBatchLoop(ModuleOp module, BatchLoopProgram &program,
                   std::string &error) {
  LoopShape shape;
  std::string why;
  if (!matchLoopShape(module, shape, why)) {
    error = "@main is not vmap's batch loop around one pallas.call (" + why +
            ")";
    return false;
  }
  func::FuncOp main = findMain(module);
  Block &entry = main.getBody().front();
  pallas::CallOp call = shape.call;
  Value iv = shape.loop.getInductionVar();
  program = BatchLoopProgram();
  program.axisSize = *getConstantIntValue(shape.loop.getUpperBound());
  auto bounds = call.getDynamicGridBounds();
  auto inputs = call.getInputs();
  if (entry.getNumArguments() != bounds.size() + inputs.size()) {
    error = "@main takes " + std::to_string(entry.getNumArguments()) +
            " arguments but its batch loop's call takes " +
            std::to_string(bounds.size()) + " grid bounds and " +
            std::to_string(inputs.size()) + " inputs";
    return false;
  }
  // Bound k comes from @main's argument k, input i from argument
  // numBounds + i: directly (unbatched) or sliced at the iteration.
  for (auto [k, bound] : llvm::enumerate(bounds)) {
    BlockArgument arg = entry.getArgument(k);
    if (bound == arg) {
      program.boundAxes.push_back(-1);
      continue;
    }
    auto extract = bound.getDefiningOp<tensor::ExtractOp>();
    if (!extract || extract.getTensor() != arg ||
        extract.getIndices().size() != 1 || extract.getIndices()[0] != iv) {
      error = "dynamic grid bound " + std::to_string(k) +
              " of the batch loop's call is not @main's argument " +
              std::to_string(k) + " (or its element at the iteration)";
      return false;
    }
    program.boundAxes.push_back(0);
  }
  for (auto [i, input] : llvm::enumerate(inputs)) {
    BlockArgument arg = entry.getArgument(bounds.size() + i);
    launch::HostArrayType batched;
    if (!arrayTypeOf(arg.getType(), "input " + std::to_string(i), batched,
                     error))
      return false;
    program.inputs.push_back(batched);
    if (input == arg) {
      program.inAxes.push_back(-1);
      continue;
    }
    auto slice = input.getDefiningOp<tensor::ExtractSliceOp>();
    int64_t axis = -1;
    if (slice && slice.getSource() == arg) {
      ArrayRef<int64_t> full = slice.getSourceType().getShape();
      for (int64_t a = 0; a < static_cast<int64_t>(full.size()); ++a)
        if (isSliceAt(slice.getMixedOffsets(), slice.getMixedSizes(),
                      slice.getMixedStrides(), full, a, iv))
          axis = a;
    }
    if (axis < 0) {
      error = "input " + std::to_string(i) +
              " of the batch loop's call is not @main's input " +
              std::to_string(i) + " (or its slice at the iteration)";
      return false;
    }
    if (axis != 0) {
      error = "input " + std::to_string(i) + " (" + batched.describe() +
              ") is batched at axis " + std::to_string(axis) +
              ": its per-iteration slices are not contiguous in memory, "
              "and GPU launches take inputs batched at axis 0 or not "
              "batched (vmap in_axes 0 or none for it)";
      return false;
    }
    program.inAxes.push_back(0);
  }
  // Result j of the call goes into iter_arg j at the iteration, returned
  // as @main's result j.
  auto yield = cast<scf::YieldOp>(shape.loop.getBody()->getTerminator());
  for (auto [j, result] : llvm::enumerate(call.getResults())) {
    auto insert = yield.getOperand(j).getDefiningOp<tensor::InsertSliceOp>();
    if (!insert || insert.getSource() != result ||
        insert.getDest() != shape.loop.getRegionIterArg(j) ||
        !isSliceAt(insert.getMixedOffsets(), insert.getMixedSizes(),
                   insert.getMixedStrides(), insert.getDestType().getShape(),
                   0, iv)) {
      error = "the batch loop does not stack result " + std::to_string(j) +
              " of its call at the iteration along axis 0";
      return false;
    }
    launch::HostArrayType stacked;
    if (!arrayTypeOf(main.getResultTypes()[j], "output " + std::to_string(j),
                     stacked, error))
      return false;
    program.outputs.push_back(stacked);
  }
  if (!planCall(module, call, "__pallasc_index_map_", program.call, error))
    return false;
  for (auto [in, out] : program.call.aliases)
    if (program.inAxes[in] != 0) {
      error = "input " + std::to_string(in) +
              " is aliased to output " + std::to_string(out) +
              " but not batched: every iteration's output would start as "
              "the same input, which GPU launches do not copy (batch it: "
              "vmap in_axes 0)";
      return false;
    }
  return true;
}

bool prepareHostProgram(ModuleOp module, launch::HostProgramPlan &program,
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
  // What the rewriting below builds, outside any pass manager.
  ctx->loadDialect<arith::ArithDialect, bufferization::BufferizationDialect,
                   func::FuncDialect, memref::MemRefDialect, scf::SCFDialect,
                   tensor::TensorDialect>();
  OpBuilder b(ctx);
  Type i64 = b.getI64Type();

  // @main's arguments and results.
  for (auto [i, arg] : llvm::enumerate(main.getArguments())) {
    using Kind = launch::HostProgramArgument::Kind;
    launch::HostProgramArgument pa;
    Type t = arg.getType();
    auto tensor = dyn_cast<RankedTensorType>(t);
    if (t.isIndex()) {
      pa.kind = Kind::Bound;
      pa.numBounds = 1;
    } else if (tensor && tensor.getElementType().isIndex() &&
               tensor.getRank() == 1 && tensor.hasStaticShape()) {
      pa.kind = Kind::BatchedBound;
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
    launch::HostArrayType a;
    if (!arrayTypeOf(t, "output " + std::to_string(j), a, error))
      return false;
    program.outputs.push_back(a);
  }

  // Plan every call before any rewriting (planCall reads the kernels).
  for (auto [k, call] : llvm::enumerate(calls)) {
    launch::HostCallPlan plan;
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
    if (auto kernel = module.lookupSymbol<pallas::KernelOp>(call.getKernel())) {
      kernel->setAttr(pallas::kNumGridAxesAttrName,
                      b.getI64IntegerAttr(static_cast<int64_t>(
                          pallas::GridMapping::get(call)
                              .getVisibleAxes()
                              .size())));
      // ... and its symbols (a symbolic call's kernel takes their values).
      SmallVector<Attribute> symbols;
      if (DictionaryAttr sym = call.getSymbolicAttr())
        if (auto names = sym.getAs<DictionaryAttr>("symbols"))
          for (NamedAttribute s : names)
            symbols.push_back(s.getName());
      if (!symbols.empty())
        kernel->setAttr(pallas::kKernelSymbolsAttrName,
                        b.getArrayAttr(symbols));
    }
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
    const launch::HostCallPlan &plan = program.calls[k];
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

bool runHostProgram(const launch::HostProgramPlan &program, JitModule &jit,
                    std::vector<HostArray> &inputs,
                    const std::vector<int64_t> &boundValues,
                    const std::vector<DType> &outputDTypes,
                    std::vector<HostArray> &outputs,
                    const ExecuteOptions &options, std::string &error) {
  launch::HostProgramPlan host = program;
  auto lookup = [&](const std::string &symbol, std::string &lookupError) {
    return jit.lookupCInterface(symbol, lookupError);
  };
  if (!launch::resolveEntryPoints(host, lookup, error))
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
  PackedStorage packed;
  std::vector<const void *> inputPtrs;
  for (HostArray &a : inputs)
    inputPtrs.push_back(packed.input(a));
  std::vector<void *> outputPtrs;
  for (HostArray &a : outputs)
    outputPtrs.push_back(packed.output(a));
  launch::HostGridOptions grid;
  grid.maxBytes = options.maxBytes;
  grid.gridWalkMs = options.gridWalkMs;
  if (!launch::runHostProgram(host, inputPtrs, boundValues, outputPtrs, grid,
                              error))
    return false;
  packed.unpackOutputs();
  return true;
}

} // namespace pallasc::runtime
