//===- SpecToIR.cpp - Grid spec -> pallas.call -----------------*- C++ -*-===//

#include "src/Spec/SpecToIR.h"

#include "dialects/Pallas/IR/PallasOps.h"
#include "src/Support/InputChecks.h"
#include "src/Launch/ElementType.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <limits>
#include <optional>

using namespace mlir;

namespace pallasc::spec {

Type dtypeToType(MLIRContext *ctx, const std::string &dtype) {
  using launch::ElementType;
  ElementType element;
  if (!launch::parseElementType(dtype, element))
    return {};
  Builder b(ctx);
  switch (element) {
  case ElementType::Bool:
    return b.getI1Type();
  case ElementType::F16:
    return b.getF16Type();
  case ElementType::BF16:
    return b.getBF16Type();
  case ElementType::F32:
    return b.getF32Type();
  case ElementType::F64:
    return b.getF64Type();
  case ElementType::F8E4M3FN:
    return b.getType<Float8E4M3FNType>();
  case ElementType::F8E5M2:
    return b.getType<Float8E5M2Type>();
  case ElementType::F8E4M3FNUZ:
    return b.getType<Float8E4M3FNUZType>();
  case ElementType::F8E5M2FNUZ:
    return b.getType<Float8E5M2FNUZType>();
  case ElementType::I4:
  case ElementType::U4:
  case ElementType::I2:
  case ElementType::U2:
  case ElementType::I8:
  case ElementType::I16:
  case ElementType::I32:
  case ElementType::I64:
  case ElementType::U8:
  case ElementType::U16:
  case ElementType::U32:
  case ElementType::U64:
    // Signless, as the kernel's arith ops are: the signedness of an
    // unsigned array is the spec's (and the manifest's), not the IR's.
    return b.getIntegerType(launch::elementBits(element));
  }
  return {};
}

std::string typeToDtype(Type type) {
  if (type.isInteger(1))
    return "bool";
  if (type.isF16())
    return "f16";
  if (type.isBF16())
    return "bf16";
  if (type.isF32())
    return "f32";
  if (type.isF64())
    return "f64";
  if (isa<Float8E4M3FNType>(type))
    return "f8e4m3fn";
  if (isa<Float8E5M2Type>(type))
    return "f8e5m2";
  if (isa<Float8E4M3FNUZType>(type))
    return "f8e4m3fnuz";
  if (isa<Float8E5M2FNUZType>(type))
    return "f8e5m2fnuz";
  if (auto i = dyn_cast<IntegerType>(type))
    return (i.isUnsigned() ? "u" : "i") + std::to_string(i.getWidth());
  if (type.isIndex())
    return "index";
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

namespace {

/// An index map's text for a message: whole when short, else its start.
std::string mapText(const std::string &text) {
  constexpr size_t kShown = 80;
  return "\"" + (text.size() <= kShown ? text : text.substr(0, kShown) + "...") +
         "\"";
}

/// The values an affine expression takes over a box of grid indices, or
/// the first subexpression whose value can leave int64 (evaluated as the
/// runtimes do: floordiv, then the product, for mod).
struct Range {
  __int128 lo = 0, hi = 0;
};

constexpr __int128 kInt64Min = std::numeric_limits<int64_t>::min();
constexpr __int128 kInt64Max = std::numeric_limits<int64_t>::max();

__int128 floorDiv128(__int128 a, __int128 b) {
  __int128 q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

std::optional<Range> exprRange(AffineExpr e, ArrayRef<Range> dims,
                               AffineExpr &overflowing) {
  auto fits = [&](Range r) -> std::optional<Range> {
    if (r.lo < kInt64Min || r.hi > kInt64Max) {
      overflowing = e;
      return std::nullopt;
    }
    return r;
  };
  if (auto c = dyn_cast<AffineConstantExpr>(e))
    return Range{c.getValue(), c.getValue()};
  if (auto d = dyn_cast<AffineDimExpr>(e))
    return dims[d.getPosition()];
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin)
    return Range{kInt64Min, kInt64Max}; // symbols are rejected elsewhere
  std::optional<Range> l = exprRange(bin.getLHS(), dims, overflowing);
  if (!l)
    return std::nullopt;
  std::optional<Range> r = exprRange(bin.getRHS(), dims, overflowing);
  if (!r)
    return std::nullopt;
  auto corners = [&](auto f) {
    __int128 v[4] = {f(l->lo, r->lo), f(l->lo, r->hi), f(l->hi, r->lo),
                     f(l->hi, r->hi)};
    return Range{*std::min_element(v, v + 4), *std::max_element(v, v + 4)};
  };
  switch (e.getKind()) {
  case AffineExprKind::Add:
    return fits({l->lo + r->lo, l->hi + r->hi});
  case AffineExprKind::Mul:
    return fits(corners([](__int128 a, __int128 b) { return a * b; }));
  case AffineExprKind::FloorDiv:
  case AffineExprKind::CeilDiv:
  case AffineExprKind::Mod: {
    // The divisor is a constant (affine maps without symbols), not zero
    // (checked before).
    if (r->lo != r->hi || r->lo == 0)
      return Range{kInt64Min, kInt64Max};
    __int128 c = r->lo;
    Range q = corners([](__int128 a, __int128 b) { return floorDiv128(a, b); });
    if (e.getKind() == AffineExprKind::CeilDiv)
      q = corners([](__int128 a, __int128 b) { return -floorDiv128(-a, b); });
    if (!fits(q))
      return std::nullopt;
    if (e.getKind() != AffineExprKind::Mod)
      return q;
    return c > 0 ? Range{0, c - 1} : Range{c + 1, 0};
  }
  default:
    return Range{kInt64Min, kInt64Max};
  }
}

/// Builds the pallas.call for one spec, collecting errors.
class Importer {
public:
  Importer(ModuleOp module, const GridSpec &spec, Location loc,
           std::vector<SpecError> &errors)
      : module(module), spec(spec), loc(loc), errors(errors),
        builder(module.getContext()) {}

  bool run();

private:
  void error(const std::string &path, const std::string &message) {
    errors.push_back(SpecError{path, message, 0, 0});
  }
  /// A tensor, or a `!pallas.hi` of tensors for a hi input.
  Type arrayType(const ArraySpec &array);
  /// `e` as index arithmetic over @main's symbol arguments.
  Value emitDimExpr(const DimExpr &e,
                    const std::map<std::string, Value> &symbols);
  /// The call's `symbolic` attribute (PallasOps.td).
  DictionaryAttr symbolicAttr();
  pallas::BlockSpecAttr blockSpec(const BlockSpec &bs, const ArraySpec &array);
  AffineMap parseIndexMap(const std::string &text, const std::string &path,
                          size_t rank);
  /// Fails with an error if `map` (of `bs`) can leave int64 for grid
  /// indices in the grid's range, or so can a block start it gives.
  bool checkIndexMapRange(AffineMap map, const BlockSpec &bs,
                          const std::string &text);

  ModuleOp module;
  const GridSpec &spec;
  Location loc;
  std::vector<SpecError> &errors;
  OpBuilder builder;
};
} // namespace

Value Importer::emitDimExpr(const DimExpr &e,
                            const std::map<std::string, Value> &symbols) {
  // index arithmetic: sum(c * s) + k, then a floor or ceiling division by
  // a positive constant (the values are checked at launch to fit).
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(builder, loc, v);
  };
  Value acc;
  for (const auto &[name, coefficient] : e.num.terms) {
    Value term = symbols.at(name);
    if (coefficient != 1)
      term = arith::MulIOp::create(builder, loc, term, constant(coefficient));
    acc = acc ? arith::AddIOp::create(builder, loc, acc, term).getResult()
              : term;
  }
  if (!acc)
    acc = constant(e.num.constant);
  else if (e.num.constant != 0)
    acc = arith::AddIOp::create(builder, loc, acc, constant(e.num.constant));
  if (e.divisor == 1)
    return acc;
  if (e.round == DimExpr::Round::Ceil)
    return arith::CeilDivSIOp::create(builder, loc, acc, constant(e.divisor));
  return arith::FloorDivSIOp::create(builder, loc, acc, constant(e.divisor));
}

DictionaryAttr Importer::symbolicAttr() {
  SmallVector<NamedAttribute> symbols;
  for (const SymbolSpec &s : spec.symbols) {
    SmallVector<NamedAttribute> c;
    c.push_back(builder.getNamedAttr("min", builder.getI64IntegerAttr(s.min)));
    if (s.max)
      c.push_back(
          builder.getNamedAttr("max", builder.getI64IntegerAttr(*s.max)));
    c.push_back(builder.getNamedAttr("multiple_of",
                                     builder.getI64IntegerAttr(s.multipleOf)));
    symbols.push_back(
        builder.getNamedAttr(s.name, builder.getDictionaryAttr(c)));
  }
  SmallVector<StringRef> gridStorage;
  std::vector<std::string> gridTexts;
  for (size_t i = 0; i < spec.grid.size(); ++i)
    gridTexts.push_back(spec.grid[i] == kSymbolicGridDim
                            ? spec.gridExprs[i].str()
                            : std::string());
  auto shapes = [&](const std::vector<ArraySpec> &arrays) {
    SmallVector<Attribute> out;
    for (const ArraySpec &a : arrays) {
      SmallVector<Attribute> dims;
      for (auto [d, dim] : llvm::enumerate(a.shape))
        dims.push_back(builder.getStringAttr(
            dim == kSymbolicDim ? a.shapeExprs[d].str() : std::to_string(dim)));
      out.push_back(builder.getArrayAttr(dims));
    }
    return builder.getArrayAttr(out);
  };
  SmallVector<Attribute> grid;
  for (const std::string &t : gridTexts)
    grid.push_back(builder.getStringAttr(t));
  return builder.getDictionaryAttr(
      {builder.getNamedAttr("symbols", builder.getDictionaryAttr(symbols)),
       builder.getNamedAttr("grid", builder.getArrayAttr(grid)),
       builder.getNamedAttr("inputs", shapes(spec.inputs)),
       builder.getNamedAttr("outputs", shapes(spec.outputs))});
}

Type Importer::arrayType(const ArraySpec &array) {
  if (array.isHi()) {
    SmallVector<Type> parts;
    for (const ArraySpec &part : array.parts) {
      Type t = arrayType(part);
      if (!t)
        return {};
      parts.push_back(t);
    }
    return pallas::HiType::get(module.getContext(), array.hiName, parts);
  }
  Type element = dtypeToType(module.getContext(), array.dtype);
  if (!element) {
    error(array.path + ".dtype", "unsupported dtype '" + array.dtype + "'");
    return {};
  }
  return RankedTensorType::get(array.shape, element);
}

AffineMap Importer::parseIndexMap(const std::string &text,
                                  const std::string &path, size_t rank) {
  MLIRContext *ctx = module.getContext();
  // The map is parsed as an `affine_map<...>` attribute: unlike
  // mlir::parseAffineMap, which prints its errors itself, parseAttribute
  // reports through the context, so the message can be captured here and
  // given with the JSON path.
  const std::string prefix = "affine_map<";
  std::string message;
  // MLIR's affine parser recurses once per operator and parenthesis.
  if (!checkIndexMapText(text, message)) {
    error(path, "cannot parse index map " + mapText(text) + ": " + message);
    return {};
  }
  Attribute attr;
  {
    ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
      if (message.empty()) {
        message = diag.str();
        if (auto loc = dyn_cast<FileLineColLoc>(diag.getLocation()))
          if (loc.getLine() == 1 && loc.getColumn() > prefix.size())
            message += " at character " +
                       std::to_string(loc.getColumn() - prefix.size());
      }
      return success();
    });
    attr = mlir::parseAttribute(prefix + text + ">", ctx);
  }
  auto mapAttr = dyn_cast_or_null<AffineMapAttr>(attr);
  if (!mapAttr) {
    if (message.empty())
      message = "not an affine map";
    error(path, "cannot parse index map " + mapText(text) + ": " + message +
                    " (expected an affine map such as \"(i, j) -> (i, j "
                    "floordiv 2)\" over the grid indices, or \"@func\")");
    return {};
  }
  AffineMap map = mapAttr.getValue();
  // A constant zero divisor parses (and is kept as is) but has no value.
  bool divByZero = false;
  for (AffineExpr result : map.getResults())
    result.walk([&](AffineExpr e) {
      auto bin = dyn_cast<AffineBinaryOpExpr>(e);
      if (!bin || bin.getKind() == AffineExprKind::Add ||
          bin.getKind() == AffineExprKind::Mul)
        return;
      if (auto c = dyn_cast<AffineConstantExpr>(bin.getRHS()))
        divByZero |= c.getValue() == 0;
    });
  if (divByZero) {
    error(path, "index map " + mapText(text) + " divides by zero");
    return {};
  }
  if (map.getNumSymbols() != 0) {
    error(path, "index map " + mapText(text) +
                    " has symbols; use only the grid indices");
    return {};
  }
  if (map.getNumDims() != spec.grid.size()) {
    error(path, "index map " + mapText(text) + " takes " +
                    std::to_string(map.getNumDims()) +
                    (map.getNumDims() == 1 ? " grid index" : " grid indices") +
                    " but the grid has rank " +
                    std::to_string(spec.grid.size()));
    return {};
  }
  if (map.getNumResults() != rank) {
    error(path, "index map " + mapText(text) + " returns " +
                    std::to_string(map.getNumResults()) +
                    (map.getNumResults() == 1 ? " index" : " indices") +
                    " but the array has rank " + std::to_string(rank));
    return {};
  }
  return map;
}

bool Importer::checkIndexMapRange(AffineMap map, const BlockSpec &bs,
                                  const std::string &text) {
  // Grid indices range over [0, bound - 1]; a dynamic bound is below 2^31
  // (the runtimes' limit). An empty grid evaluates nothing.
  SmallVector<Range> dims;
  for (int64_t bound : spec.grid) {
    if (bound == 0)
      return true;
    // A "dynamic" bound or an expression (checked at launch to be in
    // [0, 2^31)).
    dims.push_back({0, bound < 0
                           ? std::numeric_limits<int32_t>::max() - 1
                           : bound - 1});
  }
  std::string path = bs.path + ".index_map";
  for (auto [i, result] : llvm::enumerate(map.getResults())) {
    AffineExpr overflowing;
    std::optional<Range> r = exprRange(result, dims, overflowing);
    auto where = [&, i = i] {
      std::string s;
      llvm::raw_string_ostream os(s);
      os << "result " << i << " of index map " << mapText(text);
      return s;
    };
    if (!r) {
      std::string sub;
      llvm::raw_string_ostream os(sub);
      os << overflowing;
      error(path, where() + " overflows int64 for grid indices in the "
                            "grid's range (at " +
                      mapText(sub) + ")");
      return false;
    }
    const BlockDim &d = bs.blockShape[i];
    if (d.kind != BlockDim::Kind::Blocked)
      continue;
    if (r->lo * d.size < kInt64Min || r->hi * d.size > kInt64Max) {
      error(path, where() + " times the block size " +
                      std::to_string(d.size) +
                      " (the block start) overflows int64 for grid indices "
                      "in the grid's range");
      return false;
    }
  }
  return true;
}

pallas::BlockSpecAttr Importer::blockSpec(const BlockSpec &bs,
                                          const ArraySpec &array) {
  MLIRContext *ctx = module.getContext();
  auto ms = static_cast<pallas::MemorySpace>(
      *pallas::symbolizeMemorySpace(memorySpaceName(bs.memorySpace)));
  if (ms == pallas::MemorySpace::Any)
    return pallas::BlockSpecAttr::get(ctx, {}, {}, {}, {}, AffineMap(),
                                      FlatSymbolRefAttr(), ms);
  SmallVector<int64_t> sizes, kinds, lo, hi;
  for (auto [i, d] : llvm::enumerate(bs.blockShape)) {
    switch (d.kind) {
    case BlockDim::Kind::Blocked:
      kinds.push_back(static_cast<int64_t>(pallas::BlockDimKind::Blocked));
      break;
    case BlockDim::Kind::Squeezed:
      kinds.push_back(static_cast<int64_t>(pallas::BlockDimKind::Squeezed));
      break;
    case BlockDim::Kind::Element:
      kinds.push_back(static_cast<int64_t>(pallas::BlockDimKind::Element));
      break;
    }
    if (d.kind != BlockDim::Kind::Squeezed && d.size <= 0) {
      error(bs.path + (bs.hasBlockShape
                           ? ".block_shape[" + std::to_string(i) + "]"
                           : std::string()),
            "block dimension " + std::to_string(i) + " of " + array.path +
                " has size 0; zero-size blocks are not supported");
      return {};
    }
    sizes.push_back(d.kind == BlockDim::Kind::Squeezed ? 1 : d.size);
    lo.push_back(d.padLow);
    hi.push_back(d.padHigh);
  }
  AffineMap map;
  FlatSymbolRefAttr func;
  switch (bs.indexMap.kind) {
  case IndexMap::Kind::Zeros: {
    SmallVector<AffineExpr> zeros(array.shape.size(),
                                  getAffineConstantExpr(0, ctx));
    map = AffineMap::get(spec.grid.size(), 0, zeros, ctx);
    break;
  }
  case IndexMap::Kind::Affine:
    map = parseIndexMap(bs.indexMap.text, bs.path + ".index_map",
                        array.shape.size());
    if (!map || !checkIndexMapRange(map, bs, bs.indexMap.text))
      return {};
    break;
  case IndexMap::Kind::Func: {
    Operation *sym =
        SymbolTable::lookupSymbolIn(module, bs.indexMap.text);
    if (!sym || !isa<func::FuncOp>(sym)) {
      error(bs.path + ".index_map",
            "index map @" + bs.indexMap.text +
                " does not name a func.func in the kernel module");
      return {};
    }
    func = FlatSymbolRefAttr::get(ctx, bs.indexMap.text);
    break;
  }
  }
  return pallas::BlockSpecAttr::get(ctx, sizes, kinds, lo, hi, map, func, ms,
                                    bs.bufferCount);
}

bool Importer::run() {
  MLIRContext *ctx = module.getContext();
  Operation *kernelSym = SymbolTable::lookupSymbolIn(module, spec.kernel);
  if (!kernelSym || !isa<pallas::KernelOp>(kernelSym)) {
    error("kernel", noKernelMessage<pallas::KernelOp>(module, "pallas.kernel",
                                                      spec.kernel));
    return false;
  }
  if (SymbolTable::lookupSymbolIn(module, kCallWrapperName)) {
    error("", std::string("the kernel module already defines a symbol @") +
                  kCallWrapperName +
                  ", which pallasc uses for the call; rename it");
    return false;
  }

  // Hi inputs reach the backends, the runtime and the manifest only as
  // their parts: the call must be flattened.
  bool flattened = llvm::any_of(spec.transforms, [](const Transform &t) {
    return t.kind == Transform::Kind::HiToLo;
  });
  for (const ArraySpec &a : spec.inputs)
    if (a.isHi() && !flattened)
      error(a.path + ".hi",
            a.path + " is a hi aggregate ('" + a.hiName +
                "'), which needs the hi_to_lo transform: add {\"hi_to_lo\": "
                "{}} to transforms or pass --hi-to-lo");
  SmallVector<Type> inputTypes, outputTypes;
  for (const ArraySpec &a : spec.inputs)
    inputTypes.push_back(arrayType(a));
  for (const ArraySpec &a : spec.outputs)
    outputTypes.push_back(arrayType(a));
  if (!errors.empty())
    return false;

  SmallVector<Attribute> inSpecs, outSpecs;
  size_t nsp = spec.numScalarPrefetch;
  for (auto [i, bs] : llvm::enumerate(spec.inSpecs))
    inSpecs.push_back(blockSpec(bs, spec.inputs[nsp + i]));
  for (auto [i, bs] : llvm::enumerate(spec.outSpecs))
    outSpecs.push_back(blockSpec(bs, spec.outputs[i]));
  SmallVector<Attribute> scratch;
  for (const ScratchSpec &s : spec.scratchShapes) {
    Type element = dtypeToType(ctx, s.dtype);
    if (!element) {
      error(s.path + ".dtype", "unsupported dtype '" + s.dtype + "'");
      continue;
    }
    auto ms = *pallas::symbolizeMemorySpace(memorySpaceName(s.memorySpace));
    scratch.push_back(
        TypeAttr::get(pallas::RefType::get(ctx, s.shape, element, ms)));
  }
  if (!errors.empty())
    return false;

  // func.func @main(dynamic bounds..., inputs..., symbols...) -> outputs
  SmallVector<Type> argTypes;
  int64_t numDynamic = llvm::count(spec.grid, kDynamicGridDim);
  int64_t numSymbols = spec.symbols.size();
  argTypes.append(numDynamic, builder.getIndexType());
  argTypes.append(inputTypes.begin(), inputTypes.end());
  argTypes.append(numSymbols, builder.getIndexType());
  builder.setInsertionPointToEnd(module.getBody());
  auto wrapper = func::FuncOp::create(
      builder, loc, kCallWrapperName,
      builder.getFunctionType(argTypes, outputTypes));
  Block *entry = wrapper.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  for (auto [i, sym] : llvm::enumerate(spec.symbols))
    wrapper.setArgAttr(numDynamic + inputTypes.size() + i, "pallas.symbol",
                       builder.getStringAttr(sym.name));

  ValueRange args = entry->getArguments();
  SmallVector<Value> inputs(args.begin() + numDynamic,
                            args.begin() + numDynamic + inputTypes.size());
  std::map<std::string, Value> symbolValues;
  for (auto [i, sym] : llvm::enumerate(spec.symbols))
    symbolValues[sym.name] = args[numDynamic + inputTypes.size() + i];
  // The grid's dynamic bounds in grid order: "dynamic" ones are @main's
  // leading arguments, expressions are computed from the symbols.
  SmallVector<Value> bounds;
  SmallVector<int64_t> grid(spec.grid.begin(), spec.grid.end());
  int64_t nextBound = 0;
  for (size_t i = 0; i < grid.size(); ++i) {
    if (grid[i] == kDynamicGridDim) {
      bounds.push_back(args[nextBound++]);
    } else if (grid[i] == kSymbolicGridDim) {
      bounds.push_back(emitDimExpr(spec.gridExprs[i], symbolValues));
      grid[i] = kDynamicGridDim;
    }
  }
  // The results' dynamic sizes, as tensor.empty takes them.
  SmallVector<Value> sizes;
  for (const ArraySpec &a : spec.outputs)
    for (auto [d, dim] : llvm::enumerate(a.shape))
      if (dim == kSymbolicDim)
        sizes.push_back(emitDimExpr(a.shapeExprs[d], symbolValues));
  SmallVector<int64_t> aliases, pinned;
  for (auto [in, out] : spec.inputOutputAliases) {
    aliases.push_back(in);
    aliases.push_back(out);
  }
  for (auto [i, a] : llvm::enumerate(spec.inputs))
    if (a.linear)
      pinned.push_back(i);

  // The call's attributes as its typed record (the op's properties), by
  // name; the optional ones are set below where the spec has them.
  pallas::CallOp::Properties properties;
  properties.kernel = FlatSymbolRefAttr::get(ctx, spec.kernel);
  properties.grid = builder.getDenseI64ArrayAttr(grid);
  properties.num_scalar_prefetch =
      builder.getI64IntegerAttr(spec.numScalarPrefetch);
  properties.in_specs = builder.getArrayAttr(inSpecs);
  properties.out_specs = builder.getArrayAttr(outSpecs);
  properties.scratch = builder.getArrayAttr(scratch);
  properties.input_output_aliases = builder.getDenseI64ArrayAttr(aliases);
  properties.pinned_inputs = builder.getDenseI64ArrayAttr(pinned);
  properties.vmapped_dims = builder.getDenseI64ArrayAttr({});
  properties.name = builder.getStringAttr(spec.name);
  properties.transforms = builder.getStrArrayAttr({});
  properties.operandSegmentSizes = {static_cast<int32_t>(bounds.size()),
                                    static_cast<int32_t>(inputs.size()),
                                    static_cast<int32_t>(sizes.size())};
  SmallVector<Value> operands(bounds.begin(), bounds.end());
  operands.append(inputs.begin(), inputs.end());
  operands.append(sizes.begin(), sizes.end());
  auto call = pallas::CallOp::create(builder, loc, outputTypes, operands,
                                     properties);
  if (!spec.gridNames.empty()) {
    SmallVector<StringRef> names(spec.gridNames.begin(),
                                 spec.gridNames.end());
    call.setGridNamesAttr(builder.getStrArrayAttr(names));
  }
  if (spec.costEstimate)
    call.setCostEstimateAttr(pallas::CostEstimateAttr::get(
        ctx, spec.costEstimate->flops, spec.costEstimate->bytesAccessed,
        spec.costEstimate->transcendentals));
  const CompilerParams &cp = spec.compilerParams;
  if (!cp.empty()) {
    SmallVector<pallas::DimensionSemantics> semantics;
    for (const std::string &s : cp.dimensionSemantics)
      // The validator accepts the enum's spellings only.
      semantics.push_back(*pallas::symbolizeDimensionSemantics(s));
    call.setCompilerParamsAttr(pallas::CompilerParamsAttr::get(
        ctx, cp.numWarps, cp.numStages, cp.strictFp, semantics,
        cp.vmemLimitBytes,
        cp.hasSideEffects ? pallas::SideEffectType::SideEffecting
                          : pallas::SideEffectType::Pure,
        cp.collectiveId));
  }
  if (!spec.symbols.empty())
    call.setSymbolicAttr(symbolicAttr());
  if (!spec.metadata.empty()) {
    SmallVector<NamedAttribute> md;
    for (const auto &[k, v] : spec.metadata)
      md.push_back(builder.getNamedAttr(k, builder.getStringAttr(v)));
    call.setMetadataAttr(builder.getDictionaryAttr(md));
  }
  func::ReturnOp::create(builder, loc, call.getResults());
  return true;
}

bool importGridSpec(ModuleOp module, const GridSpec &spec, Location specLoc,
                    std::vector<SpecError> &errors) {
  // The context loads dialects as they are needed (the parser, the pass
  // managers); the import builds pallas and func ops itself.
  module.getContext()
      ->loadDialect<mlir::pallas::PallasDialect, mlir::func::FuncDialect,
                    mlir::arith::ArithDialect>();
  size_t before = errors.size();
  Importer importer(module, spec, specLoc, errors);
  return importer.run() && errors.size() == before;
}

} // namespace pallasc::spec
