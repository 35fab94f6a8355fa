//===- CallPlan.cpp - What the CPU runtime reads from a pallas.call -*- C++ -*-===//

#include "src/Runtime/CallPlan.h"

#include "dialects/Pallas/IR/GridMapping.h"
#include "dialects/Pallas/IR/PallasOps.h"
#include "src/Spec/SymExpr.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;

namespace pallasc::runtime {

std::optional<DType> dtypeOf(Type t) {
  if (t.isInteger(1))
    return DType::Bool;
  if (t.isF16())
    return DType::F16;
  if (t.isBF16())
    return DType::BF16;
  if (t.isF32())
    return DType::F32;
  if (t.isF64())
    return DType::F64;
  if (isa<Float8E4M3FNType>(t))
    return DType::F8E4M3FN;
  if (isa<Float8E5M2Type>(t))
    return DType::F8E5M2;
  if (isa<Float8E4M3FNUZType>(t))
    return DType::F8E4M3FNUZ;
  if (isa<Float8E5M2FNUZType>(t))
    return DType::F8E5M2FNUZ;
  // Integers by width and signedness (signless ones are signed); int4,
  // uint4, int2 and uint2 are packed in the kernel's storage.
  if (auto i = dyn_cast<IntegerType>(t)) {
    using Kind = launch::ElementTypeInfo::Kind;
    Kind kind = i.isUnsigned() ? Kind::Unsigned : Kind::Signed;
    for (const launch::ElementTypeInfo &e : launch::allElementTypes())
      if (e.kind == kind && launch::elementBits(e.type) == i.getWidth())
        return e.type;
  }
  return std::nullopt;
}

namespace {

std::string printed(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

/// One result of an affine index map as the launch library evaluates it;
/// false with `error` set for a map that uses symbols.
bool compileAffineExpr(AffineExpr e, launch::AffineProgram &program,
                       std::string &error) {
  using Op = launch::AffineProgram::Op;
  if (auto c = dyn_cast<AffineConstantExpr>(e)) {
    program.code.push_back(Op::Const);
    program.code.push_back(c.getValue());
    return true;
  }
  if (auto d = dyn_cast<AffineDimExpr>(e)) {
    program.code.push_back(Op::Dim);
    program.code.push_back(d.getPosition());
    return true;
  }
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin) {
    error = "index map uses a symbol";
    return false;
  }
  if (!compileAffineExpr(bin.getLHS(), program, error) ||
      !compileAffineExpr(bin.getRHS(), program, error))
    return false;
  // The program's operation for each binary affine expression.
  static constexpr std::pair<AffineExprKind, Op> kBinaryOps[] = {
      {AffineExprKind::Add, Op::Add},
      {AffineExprKind::Mul, Op::Mul},
      {AffineExprKind::FloorDiv, Op::FloorDiv},
      {AffineExprKind::CeilDiv, Op::CeilDiv},
      {AffineExprKind::Mod, Op::Mod}};
  for (auto [kind, op] : kBinaryOps)
    if (e.getKind() == kind) {
      program.code.push_back(op);
      return true;
    }
  error = "unsupported index map expression";
  return false;
}

/// A #pallas.block_spec, its affine index map compiled (a `@func` map's
/// wrapper is added by planCall).
bool mappingOf(pallas::BlockSpecAttr spec, launch::HostBlockMapping &m,
               std::string &error) {
  using Kind = launch::HostBlockMapping::Kind;
  if (spec.isWholeArray()) {
    m.wholeArray = true;
    return true;
  }
  for (unsigned i = 0; i < spec.getRank(); ++i) {
    m.blockShape.push_back(spec.getSizes()[i]);
    m.kinds.push_back(static_cast<Kind>(spec.getKinds()[i]));
    m.padLow.push_back(spec.getPadLow()[i]);
    m.padHigh.push_back(spec.getPadHigh()[i]);
  }
  if (AffineMap map = spec.getIndexMap(); map && !spec.getIndexFunc())
    for (AffineExpr r : map.getResults())
      if (!compileAffineExpr(r, m.indexMap.emplace_back(), error))
        return false;
  return true;
}

/// Adds `func.func @<wrapper>(grid i32..., prefetch refs..., memref<Rxi64>)`
/// calling the index map `func` and storing its results.
bool addIndexWrapper(ModuleOp module, func::FuncOp func, StringRef wrapperName,
                     int64_t gridRank, ArrayRef<Type> prefetchTypes,
                     int64_t rank, std::string &error) {
  FunctionType type = func.getFunctionType();
  std::string where = "index map @" + func.getSymName().str();
  if (type.getNumInputs() != gridRank + prefetchTypes.size()) {
    error = where + " takes " + std::to_string(type.getNumInputs()) +
            " arguments but the grid has rank " + std::to_string(gridRank) +
            " and there are " + std::to_string(prefetchTypes.size()) +
            " scalar-prefetch operands";
    return false;
  }
  if (static_cast<int64_t>(type.getNumResults()) != rank) {
    error = where + " returns " + std::to_string(type.getNumResults()) +
            " indices but the array has rank " + std::to_string(rank);
    return false;
  }
  for (Type t : type.getResults())
    if (!t.isIndex() && !t.isSignlessInteger()) {
      error = where + " returns " + printed(t) + "; indices must be integers";
      return false;
    }
  MLIRContext *ctx = module.getContext();
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Location loc = func.getLoc();
  SmallVector<Type> argTypes(gridRank, b.getI32Type());
  for (int64_t i = 0; i < static_cast<int64_t>(prefetchTypes.size()); ++i)
    argTypes.push_back(type.getInput(gridRank + i));
  auto outType = MemRefType::get({std::max<int64_t>(rank, 1)}, b.getI64Type());
  argTypes.push_back(outType);
  auto wrapper = func::FuncOp::create(b, loc, wrapperName,
                                      FunctionType::get(ctx, argTypes, {}));
  Block *entry = wrapper.addEntryBlock();
  b.setInsertionPointToStart(entry);
  SmallVector<Value> args;
  for (int64_t i = 0; i < gridRank; ++i) {
    Value g = entry->getArgument(i);
    Type want = type.getInput(i);
    if (want.isIndex())
      g = arith::IndexCastOp::create(b, loc, want, g);
    else if (want.isSignlessInteger(64))
      g = arith::ExtSIOp::create(b, loc, want, g);
    else if (!want.isSignlessInteger(32)) {
      error = where + " takes grid index " + std::to_string(i) + " as " +
              printed(want) + "; expected i32, i64 or index";
      wrapper.erase();
      return false;
    }
    args.push_back(g);
  }
  for (size_t i = 0; i < prefetchTypes.size(); ++i)
    args.push_back(entry->getArgument(gridRank + i));
  auto call = func::CallOp::create(b, loc, func, args);
  Value out = entry->getArguments().back();
  for (int64_t r = 0; r < rank; ++r) {
    Value v = call.getResult(r);
    if (v.getType().isIndex())
      v = arith::IndexCastOp::create(b, loc, b.getI64Type(), v);
    else if (v.getType().getIntOrFloatBitWidth() < 64)
      v = arith::ExtSIOp::create(b, loc, b.getI64Type(), v);
    Value at = arith::ConstantIndexOp::create(b, loc, r);
    memref::StoreOp::create(b, loc, v, out, ValueRange{at});
  }
  func::ReturnOp::create(b, loc);
  return true;
}

/// Which kernel ref arguments the kernel may write.
std::vector<bool> kernelWrites(pallas::KernelOp kernel) {
  std::vector<bool> writes;
  for (BlockArgument arg : kernel.getBody().getArguments()) {
    bool w = false;
    for (Operation *user : arg.getUsers()) {
      // A DMA writes its dst only; dma_wait writes nothing.
      if (auto dma = dyn_cast<pallas::DmaStartOp>(user))
        w |= dma.getDst() == arg;
      else if (!isa<pallas::LoadOp, pallas::DmaWaitOp>(user))
        w = true;
    }
    writes.push_back(w);
  }
  return writes;
}

} // namespace

bool arrayTypeOf(Type t, const std::string &what, launch::HostArrayType &out,
                 std::string &error, bool allowDynamic) {
  if (isa<pallas::HiType>(t)) {
    error = what + " has the hi type " + printed(t) +
            "; run pallas-hi-to-lo first (--hi-to-lo) to run its parts";
    return false;
  }
  auto tensor = dyn_cast<RankedTensorType>(t);
  if (!tensor || (!tensor.hasStaticShape() && !allowDynamic)) {
    error = what + " has type " + printed(t) +
            "; the CPU runtime runs statically shaped arrays only";
    return false;
  }
  std::optional<DType> d = dtypeOf(tensor.getElementType());
  if (!d) {
    error = what + " has element type " + printed(tensor.getElementType()) +
            ", which the CPU runtime does not support";
    return false;
  }
  out.type = *d;
  out.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
  // A symbolic dimension's size comes at launch (instantiateSymbols).
  for (int64_t &dim : out.shape)
    if (ShapedType::isDynamic(dim))
      dim = 0;
  return true;
}

namespace {
/// `text` (a `symbolic` attribute's expression) over `plan`'s symbols.
bool hostDimExpr(StringRef text, const launch::HostCallPlan &plan,
                 const std::string &what, launch::HostDimExpr &out,
                 std::string &error) {
  spec::DimExprError parseError;
  std::optional<spec::DimExpr> e =
      spec::parseDimExpr(text.str(), /*allowDivision=*/true, parseError);
  if (!e) {
    error = what + ": '" + text.str() + "': " + parseError.message;
    return false;
  }
  const std::vector<launch::HostSymbol> &symbols = plan.symbolic.symbols;
  out.coefficients.assign(symbols.size(), 0);
  for (const auto &[name, c] : e->num.terms) {
    auto it = llvm::find_if(symbols, [&, &name = name](const auto &s) {
      return s.name == name;
    });
    if (it == symbols.end()) {
      error = what + ": '" + text.str() + "' uses the undeclared symbol '" +
              name + "'";
      return false;
    }
    out.coefficients[it - symbols.begin()] = c;
  }
  out.constant = e->num.constant;
  out.divisor = e->divisor;
  out.ceil = e->round == spec::DimExpr::Round::Ceil;
  return true;
}
} // namespace

bool planSymbols(pallas::CallOp call, launch::HostCallPlan &plan,
                 std::string &error) {
  DictionaryAttr sym = call.getSymbolicAttr();
  launch::HostSymbolic &out = plan.symbolic;
  // The verifier checked the attribute's form.
  for (NamedAttribute s : sym.getAs<DictionaryAttr>("symbols")) {
    auto c = cast<DictionaryAttr>(s.getValue());
    launch::HostSymbol d;
    d.name = s.getName().str();
    if (auto v = c.getAs<IntegerAttr>("min"))
      d.min = v.getInt();
    if (auto v = c.getAs<IntegerAttr>("max"))
      d.max = v.getInt();
    if (auto v = c.getAs<IntegerAttr>("multiple_of"))
      d.multipleOf = v.getInt();
    if (d.min < 1 || d.multipleOf < 1) {
      error = "symbol '" + d.name + "' has min or multiple_of below 1";
      return false;
    }
    out.symbols.push_back(d);
  }
  // A dictionary sorts its keys: the order of @main's symbol arguments is
  // their `pallas.symbol` names.
  if (auto main = call->getParentOfType<func::FuncOp>()) {
    std::vector<launch::HostSymbol> ordered;
    for (unsigned i = 0; i < main.getNumArguments(); ++i)
      if (auto name = main.getArgAttrOfType<StringAttr>(i, "pallas.symbol"))
        for (const launch::HostSymbol &d : out.symbols)
          if (d.name == name.getValue())
            ordered.push_back(d);
    if (ordered.size() == out.symbols.size())
      out.symbols = ordered;
  }
  auto grid = sym.getAs<ArrayAttr>("grid");
  for (auto [i, a] : llvm::enumerate(grid)) {
    StringRef text = cast<StringAttr>(a).getValue();
    out.gridIsExpr.push_back(!text.empty());
    launch::HostDimExpr &e = out.grid.emplace_back();
    e.coefficients.assign(out.symbols.size(), 0);
    if (!text.empty() &&
        !hostDimExpr(text, plan, "grid axis " + std::to_string(i), e, error))
      return false;
  }
  for (auto [key, arrays] :
       {std::pair{"inputs", &out.inputs}, std::pair{"outputs", &out.outputs}}) {
    for (auto [k, a] : llvm::enumerate(sym.getAs<ArrayAttr>(key))) {
      std::vector<launch::HostDimExpr> &dims = arrays->emplace_back();
      for (auto [d, t] : llvm::enumerate(cast<ArrayAttr>(a)))
        if (!hostDimExpr(cast<StringAttr>(t).getValue(), plan,
                         std::string(key) + "[" + std::to_string(k) +
                             "] dimension " + std::to_string(d),
                         dims.emplace_back(), error))
          return false;
    }
  }
  return true;
}

/// The plan of a Mosaic GPU kernel (`pallas_mgpu.kernel`, which has no
/// pallas.call): its mesh's grid, its arguments as whole operands (the last
/// `num_outputs` the outputs, which it writes). Only a GPU launcher or the
/// emulator runs it: no entry point is named for the host.
static bool planMosaicGpuLaunch(Operation *kernel,
                                launch::HostCallPlan &plan,
                                std::string &error) {
  auto fn = cast<FunctionOpInterface>(kernel);
  auto grid = kernel->getAttrOfType<DenseI64ArrayAttr>("grid");
  auto names = kernel->getAttrOfType<ArrayAttr>("grid_names");
  auto numOutputs = kernel->getAttrOfType<IntegerAttr>("num_outputs");
  if (!grid || !names || !numOutputs) {
    error = "the Mosaic GPU kernel has no grid, grid_names or num_outputs";
    return false;
  }
  plan.kernelName = fn.getName().str();
  plan.grid.assign(grid.asArrayRef().begin(), grid.asArrayRef().end());
  for (Attribute a : names)
    plan.gridNames.push_back(cast<StringAttr>(a).str());
  // The launch is in blocks: each grid axis times the cluster's blocks
  // along it (a cluster axis past the grid's rank adds an axis).
  if (auto cluster = kernel->getAttrOfType<DenseI64ArrayAttr>("cluster")) {
    auto clusterNames = kernel->getAttrOfType<ArrayAttr>("cluster_names");
    for (auto [i, n] : llvm::enumerate(cluster.asArrayRef())) {
      if (i < plan.grid.size()) {
        plan.grid[i] *= n;
        continue;
      }
      plan.grid.push_back(n);
      plan.gridNames.push_back(
          clusterNames && i < clusterNames.size()
              ? cast<StringAttr>(clusterNames[i]).str()
              : "cluster" + std::to_string(i));
    }
  }
  ArrayRef<Type> args = fn.getArgumentTypes();
  size_t numInputs = args.size() - numOutputs.getInt();
  for (auto [i, t] : llvm::enumerate(args)) {
    auto m = cast<MemRefType>(t);
    launch::HostArrayType a;
    bool input = i < numInputs;
    size_t index = input ? i : i - numInputs;
    if (!arrayTypeOf(RankedTensorType::get(m.getShape(), m.getElementType()),
                     (input ? "input " : "output ") + std::to_string(index),
                     a, error))
      return false;
    (input ? plan.inputs : plan.outputs).push_back(a);
    launch::HostBlockMapping whole;
    whole.wholeArray = true;
    (input ? plan.inMappings : plan.outMappings).push_back(whole);
    plan.kernelWrites.push_back(!input);
  }
  return true;
}

bool planLaunch(ModuleOp module, launch::HostCallPlan &plan,
                std::string &error) {
  // The index wrappers are built here, outside any pass manager.
  module.getContext()
      ->loadDialect<arith::ArithDialect, func::FuncDialect,
                    memref::MemRefDialect>();
  SmallVector<pallas::CallOp> calls;
  module.walk([&](pallas::CallOp c) { calls.push_back(c); });
  if (calls.empty()) {
    for (Operation &op : module.getBody()->getOperations())
      if (op.getName().getStringRef() == "pallas_mgpu.kernel")
        return planMosaicGpuLaunch(&op, plan, error);
    auto wrapper = module.lookupSymbol<func::FuncOp>("main");
    if (wrapper && wrapper->hasAttr("pallas.eliminated")) {
      plan.eliminated = true;
      return true;
    }
    error = "the module holds no pallas.call";
    return false;
  }
  if (calls.size() > 1) {
    error = "the module holds " + std::to_string(calls.size()) +
            " pallas.call ops; the CPU runtime runs one";
    return false;
  }
  return planCall(module, calls.front(), "__pallasc_index_map_", plan, error);
}

bool planCall(ModuleOp module, pallas::CallOp call,
              const std::string &wrapperPrefix, launch::HostCallPlan &plan,
              std::string &error) {
  plan.kernelName = call.getKernel().str();
  auto kernel = module.lookupSymbol<pallas::KernelOp>(call.getKernel());
  if (!kernel) {
    error = "the call's kernel @" + plan.kernelName + " is not a pallas.kernel";
    return false;
  }
  pallas::GridMapping mapping = pallas::GridMapping::get(call);
  plan.grid.assign(mapping.getGrid().begin(), mapping.getGrid().end());
  plan.gridNames.assign(mapping.getGridNames().begin(),
                        mapping.getGridNames().end());
  plan.vmappedDims.assign(mapping.getVmappedAxes().begin(),
                          mapping.getVmappedAxes().end());
  plan.numScalarPrefetch = mapping.getNumScalarPrefetch();
  bool symbolic = static_cast<bool>(call.getSymbolicAttr());
  for (auto [i, v] : llvm::enumerate(call.getInputs())) {
    launch::HostArrayType a;
    if (!arrayTypeOf(v.getType(), "input " + std::to_string(i), a, error,
                     symbolic))
      return false;
    plan.inputs.push_back(a);
  }
  for (auto [i, t] : llvm::enumerate(call.getResultTypes())) {
    launch::HostArrayType a;
    if (!arrayTypeOf(t, "output " + std::to_string(i), a, error, symbolic))
      return false;
    plan.outputs.push_back(a);
  }
  if (symbolic && !planSymbols(call, plan, error))
    return false;
  for (pallas::BlockSpecAttr spec : mapping.getInSpecs())
    if (!mappingOf(spec, plan.inMappings.emplace_back(), error))
      return false;
  for (pallas::BlockSpecAttr spec : mapping.getOutSpecs())
    if (!mappingOf(spec, plan.outMappings.emplace_back(), error))
      return false;
  for (Attribute a : call.getScratch()) {
    auto ref = cast<pallas::RefType>(cast<TypeAttr>(a).getValue());
    // A semaphore scratch is a plain buffer: DMAs signal nothing on the CPU.
    launch::HostArrayType s;
    if (!arrayTypeOf(ref.getValueType(), "a scratch buffer", s, error))
      return false;
    plan.scratch.push_back(s);
  }
  for (auto [in, out] : mapping.getAliases())
    plan.aliases.push_back({in, out});
  plan.kernelWrites = kernelWrites(kernel);

  // Wrappers for @func index maps.
  SmallVector<Type> prefetchTypes;
  for (auto [i, t] : llvm::enumerate(kernel.getArgumentTypes()))
    if (static_cast<int64_t>(i) < plan.numScalarPrefetch)
      prefetchTypes.push_back(t);
  auto addWrappers = [&](ArrayAttr specs,
                         std::vector<launch::HostBlockMapping> &maps,
                         const std::vector<launch::HostArrayType> &arrays,
                         size_t arrayOffset, const char *what) {
    for (auto [i, a] : llvm::enumerate(specs)) {
      auto spec = cast<pallas::BlockSpecAttr>(a);
      if (!spec.getIndexFunc())
        continue;
      auto func = module.lookupSymbol<func::FuncOp>(spec.getIndexFunc());
      if (!func) {
        error = std::string(what) + " " + std::to_string(i) +
                ": index map @" + spec.getIndexFunc().getValue().str() +
                " is not a func.func in the module";
        return false;
      }
      std::string name = wrapperPrefix + what + "_" + std::to_string(i);
      if (!addIndexWrapper(
              module, func, name, static_cast<int64_t>(plan.grid.size()),
              prefetchTypes,
              static_cast<int64_t>(arrays[arrayOffset + i].shape.size()),
              error))
        return false;
      maps[i].indexWrapperName = name;
    }
    return true;
  };
  if (!addWrappers(call.getInSpecs(), plan.inMappings, plan.inputs,
                   plan.numScalarPrefetch, "in") ||
      !addWrappers(call.getOutSpecs(), plan.outMappings, plan.outputs, 0,
                   "out"))
    return false;
  return true;
}

} // namespace pallasc::runtime
