//===- GpuCallAttrs.cpp - pallas-gpu-prepare's typed call record -*- C++ -*-===//

#include "dialects/Pallas/IR/GpuCallAttrs.h"
#include "dialects/Pallas/IR/GridMapping.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::pallas;

// The generated parser dispatch reads the mnemonic itself; the dialect's
// parser (PallasDialect.cpp) has read it already and calls
// gpuCallAttrGroup().parse instead.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#define GET_ATTRDEF_CLASSES
#include "dialects/Pallas/IR/GpuCallAttrs.cpp.inc"
#pragma GCC diagnostic pop

//===----------------------------------------------------------------------===//
// Parsing and printing
//===----------------------------------------------------------------------===//

namespace {
/// The fields of a #pallas.gpu_call as the parser collects them.
struct ParsedGpuCall {
  FlatSymbolRefAttr kernel;
  StringAttr name;
  SmallVector<int64_t> grid, vmapped, aliases;
  SmallVector<StringAttr> gridNames;
  int64_t numScalarPrefetch = 0;
  SmallVector<BlockSpecAttr> inSpecs, outSpecs;
  CompilerParamsAttr params;
  SmallVector<RefType> scratch;
  SmallVector<RankedTensorType> inputs, outputs;
};

/// The fields in print order, with what each takes (for the diagnostics).
struct GpuCallField {
  const char *name;
  const char *expected;
  bool required;
};
constexpr GpuCallField kGpuCallFields[] = {
    {"kernel", "a symbol (@name)", true},
    {"name", "a string", false},
    {"grid", "a list of integers ([4, -1])", true},
    {"grid_names", "a list of strings", false},
    {"vmapped_dims", "a list of integers", false},
    {"num_scalar_prefetch", "an integer", false},
    {"in_specs", "a list of #pallas.block_spec", true},
    {"out_specs", "a list of #pallas.block_spec", true},
    {"input_output_aliases", "a list of integers (input, output pairs)",
     false},
    {"compiler_params", "a #pallas.compiler_params", false},
    {"scratch", "a list of !pallas.ref types", false},
    {"input_types", "a list of ranked tensor types", true},
    {"output_types", "a list of ranked tensor types", true},
};
} // namespace

/// `[E, ...]` (field `field`, which takes `expected`): each element read by
/// `element`.
static ParseResult parseList(AsmParser &parser, StringRef field,
                             StringRef expected,
                             function_ref<ParseResult()> element) {
  if (failed(parser.parseOptionalLSquare()))
    return parser.emitError(parser.getCurrentLocation())
           << "#pallas.gpu_call's '" << field << "' must be " << expected;
  if (succeeded(parser.parseOptionalRSquare()))
    return success();
  if (parser.parseCommaSeparatedList(element) || parser.parseRSquare())
    return failure();
  return success();
}

/// `[1, 2, 3]`, `[]`.
static ParseResult parseIntList(AsmParser &parser, StringRef field,
                                StringRef expected,
                                SmallVector<int64_t> &values) {
  return parseList(parser, field, expected, [&]() {
    return parser.parseInteger(values.emplace_back());
  });
}

static ParseResult parseEntry(AsmParser &parser, Attribute &a) {
  return parser.parseAttribute(a);
}
static ParseResult parseEntry(AsmParser &parser, Type &t) {
  return parser.parseType(t);
}

/// `[E, ...]` of attributes or types (`Entry`) of kind `T`, each `entries`.
template <typename Entry, typename T>
static ParseResult parseEntryList(AsmParser &parser, StringRef field,
                                  StringRef expected, StringRef entries,
                                  SmallVector<T> &values) {
  return parseList(parser, field, expected, [&]() -> ParseResult {
    SMLoc loc = parser.getCurrentLocation();
    Entry e;
    if (parseEntry(parser, e))
      return failure();
    auto t = dyn_cast<T>(e);
    if (!t)
      return parser.emitError(loc)
             << "#pallas.gpu_call's '" << field << "' entries must be "
             << entries << ", got " << e;
    values.push_back(t);
    return success();
  });
}

/// One attribute of kind `T` (a symbol, the compiler params).
template <typename T>
static ParseResult parseOneAttr(AsmParser &parser, StringRef field,
                                StringRef expected, T &value) {
  SMLoc loc = parser.getCurrentLocation();
  Attribute a;
  if (parser.parseAttribute(a))
    return failure();
  value = dyn_cast<T>(a);
  if (!value)
    return parser.emitError(loc) << "#pallas.gpu_call's '" << field
                                 << "' must be " << expected << ", got " << a;
  return success();
}

// #pallas.gpu_call<kernel = @k, grid = [4], in_specs = [...], ...>: fields
// in any order, each once.
Attribute GpuCallAttr::parse(AsmParser &parser, Type) {
  SMLoc start = parser.getCurrentLocation();
  if (parser.parseLess())
    return {};
  ParsedGpuCall p;
  llvm::SmallSet<StringRef, 16> seen;
  if (failed(parser.parseOptionalGreater())) {
    do {
      SMLoc loc = parser.getCurrentLocation();
      StringRef name;
      if (parser.parseKeyword(&name))
        return {};
      const GpuCallField *field =
          llvm::find_if(kGpuCallFields, [&](const GpuCallField &f) {
            return name == f.name;
          });
      if (field == std::end(kGpuCallFields)) {
        auto diag = parser.emitError(loc)
                    << "unknown #pallas.gpu_call field '" << name
                    << "'; expected one of ";
        llvm::interleaveComma(kGpuCallFields, diag,
                              [&](const GpuCallField &f) {
                                diag << "'" << f.name << "'";
                              });
        return {};
      }
      if (!seen.insert(field->name).second) {
        parser.emitError(loc)
            << "#pallas.gpu_call field '" << name << "' is given twice";
        return {};
      }
      if (parser.parseEqual())
        return {};
      StringRef f = field->name, e = field->expected;
      ParseResult r = failure();
      if (f == "kernel") {
        r = parseOneAttr(parser, f, e, p.kernel);
      } else if (f == "name") {
        std::string s;
        if (failed(parser.parseOptionalString(&s)))
          r = parser.emitError(parser.getCurrentLocation())
              << "#pallas.gpu_call's 'name' must be " << e;
        else
          r = success();
        p.name = StringAttr::get(parser.getContext(), s);
      } else if (f == "grid") {
        r = parseIntList(parser, f, e, p.grid);
      } else if (f == "grid_names") {
        r = parseEntryList<Attribute>(parser, f, e, "strings", p.gridNames);
      } else if (f == "vmapped_dims") {
        r = parseIntList(parser, f, e, p.vmapped);
      } else if (f == "num_scalar_prefetch") {
        OptionalParseResult n = parser.parseOptionalInteger(p.numScalarPrefetch);
        if (!n.has_value())
          r = parser.emitError(parser.getCurrentLocation())
              << "#pallas.gpu_call's 'num_scalar_prefetch' must be " << e;
        else
          r = *n;
      } else if (f == "in_specs") {
        r = parseEntryList<Attribute>(parser, f, e, "#pallas.block_spec",
                                      p.inSpecs);
      } else if (f == "out_specs") {
        r = parseEntryList<Attribute>(parser, f, e, "#pallas.block_spec",
                                      p.outSpecs);
      } else if (f == "input_output_aliases") {
        r = parseIntList(parser, f, e, p.aliases);
      } else if (f == "compiler_params") {
        r = parseOneAttr(parser, f, e, p.params);
      } else if (f == "scratch") {
        r = parseEntryList<Type>(parser, f, e, "!pallas.ref types", p.scratch);
      } else if (f == "input_types") {
        r = parseEntryList<Type>(parser, f, e, "ranked tensor types", p.inputs);
      } else if (f == "output_types") {
        r = parseEntryList<Type>(parser, f, e, "ranked tensor types",
                                 p.outputs);
      }
      if (r)
        return {};
    } while (succeeded(parser.parseOptionalComma()));
    if (parser.parseGreater())
      return {};
  }
  for (const GpuCallField &f : kGpuCallFields)
    if (f.required && !seen.contains(f.name)) {
      parser.emitError(start) << "#pallas.gpu_call needs '" << f.name
                              << "' (" << f.expected << ")";
      return {};
    }
  return parser.getChecked<GpuCallAttr>(
      start, parser.getContext(), p.kernel, p.name, p.grid, p.gridNames,
      p.vmapped, p.numScalarPrefetch, p.inSpecs, p.outSpecs, p.aliases,
      p.params, p.scratch, p.inputs, p.outputs);
}

void GpuCallAttr::print(AsmPrinter &printer) const {
  auto ints = [&](ArrayRef<int64_t> values) {
    printer << "[";
    llvm::interleaveComma(values, printer);
    printer << "]";
  };
  auto attrs = [&](auto values) {
    printer << "[";
    llvm::interleaveComma(values, printer,
                          [&](auto a) { printer.printAttribute(a); });
    printer << "]";
  };
  auto types = [&](auto values) {
    printer << "[";
    llvm::interleaveComma(values, printer,
                          [&](auto t) { printer.printType(t); });
    printer << "]";
  };
  printer << "<kernel = ";
  printer.printAttribute(getKernel());
  if (getName()) {
    printer << ", name = ";
    printer.printString(getName().getValue());
  }
  printer << ", grid = ";
  ints(getGrid());
  if (!getGridNames().empty()) {
    printer << ", grid_names = ";
    attrs(getGridNames());
  }
  if (!getVmappedDims().empty()) {
    printer << ", vmapped_dims = ";
    ints(getVmappedDims());
  }
  if (getNumScalarPrefetch() != 0)
    printer << ", num_scalar_prefetch = " << getNumScalarPrefetch();
  printer << ", in_specs = ";
  attrs(getInSpecs());
  printer << ", out_specs = ";
  attrs(getOutSpecs());
  if (!getInputOutputAliases().empty()) {
    printer << ", input_output_aliases = ";
    ints(getInputOutputAliases());
  }
  if (getCompilerParams()) {
    printer << ", compiler_params = ";
    printer.printAttribute(getCompilerParams());
  }
  if (!getScratch().empty()) {
    printer << ", scratch = ";
    types(getScratch());
  }
  printer << ", input_types = ";
  types(getInputTypes());
  printer << ", output_types = ";
  types(getOutputTypes());
  printer << ">";
}

//===----------------------------------------------------------------------===//
// Verification: the rules of the lowering (docs/dialect.md)
//===----------------------------------------------------------------------===//

LogicalResult GpuCallAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, FlatSymbolRefAttr kernel,
    StringAttr callName, ArrayRef<int64_t> grid, ArrayRef<StringAttr> gridNames,
    ArrayRef<int64_t> vmappedDims, int64_t numScalarPrefetch,
    ArrayRef<BlockSpecAttr> inSpecs, ArrayRef<BlockSpecAttr> outSpecs,
    ArrayRef<int64_t> aliases, CompilerParamsAttr params,
    ArrayRef<RefType> scratch, ArrayRef<RankedTensorType> inputTypes,
    ArrayRef<RankedTensorType> outputTypes) {
  if (!kernel || kernel.getValue().empty())
    return emitError() << "the recorded pallas.call needs a kernel symbol";
  int64_t rank = grid.size();
  for (auto [i, g] : llvm::enumerate(grid))
    if (g < -1)
      return emitError() << "the recorded pallas.call's grid[" << i
                         << "] = " << g
                         << ": a grid bound must be non-negative or -1 "
                            "(dynamic)";
  if (!gridNames.empty() && static_cast<int64_t>(gridNames.size()) != rank)
    return emitError() << "the recorded pallas.call's grid_names has "
                       << gridNames.size() << " entries but the grid has rank "
                       << rank;
  if (numScalarPrefetch < 0)
    return emitError() << "the recorded pallas.call's num_scalar_prefetch "
                          "must be non-negative, got "
                       << numScalarPrefetch;
  int64_t numIn = inputTypes.size(), numOut = outputTypes.size();
  if (numScalarPrefetch > numIn ||
      static_cast<int64_t>(inSpecs.size()) != numIn - numScalarPrefetch ||
      static_cast<int64_t>(outSpecs.size()) != numOut)
    return emitError() << "the recorded pallas.call has " << inSpecs.size()
                       << " in_specs and " << outSpecs.size()
                       << " out_specs for " << numIn << " inputs ("
                       << numScalarPrefetch << " scalar prefetch) and "
                       << numOut << " outputs";
  for (auto [what, specs] : {std::pair{"in_specs", inSpecs},
                             std::pair{"out_specs", outSpecs}})
    for (auto [i, spec] : llvm::enumerate(specs)) {
      if (!spec)
        return emitError() << "the recorded pallas.call's " << what
                           << " entries must be #pallas.block_spec";
      if (AffineMap map = spec.getIndexMap(); map && map.getNumDims() != rank)
        return emitError() << "the recorded pallas.call's " << what << "["
                           << i << "] index map takes " << map.getNumDims()
                           << " grid indices but the grid has rank " << rank;
    }
  if (aliases.size() % 2)
    return emitError() << "the recorded pallas.call's input_output_aliases "
                          "must hold (input, output) pairs";
  for (size_t i = 0; i + 1 < aliases.size(); i += 2) {
    int64_t in = aliases[i], out = aliases[i + 1];
    if (in < 0 || in >= numIn || out < 0 || out >= numOut)
      return emitError() << "the recorded pallas.call's input_output_aliases "
                            "pair ("
                         << in << ", " << out << ") is out of range";
  }
  for (RefType s : scratch)
    if (!s)
      return emitError() << "the recorded pallas.call's scratch entries "
                            "must be !pallas.ref types";
  for (Type t : llvm::concat<const RankedTensorType>(inputTypes, outputTypes))
    if (!t)
      return emitError() << "the recorded pallas.call's input_types and "
                            "output_types must be ranked tensor types";
  // vmapped_dims and dimension_semantics: the rules of GridMapping.h, as
  // pallas.call's verifier checks them.
  return verifyGridAxes(emitError, rank, vmappedDims, params);
}

//===----------------------------------------------------------------------===//
// The dialect's hooks
//===----------------------------------------------------------------------===//

void PallasDialect::registerGpuCallAttrs() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Pallas/IR/GpuCallAttrs.cpp.inc"
      >();
}

const AttrGroup &mlir::pallas::gpuCallAttrGroup() {
  static const AttrGroup group{
      parseAttrOf<GpuCallAttr>, generatedAttributePrinter, kGpuCallAttrName,
      GpuCallAttr::getMnemonic(),
      [](Attribute value) { return isa<GpuCallAttr>(value); }};
  return group;
}
