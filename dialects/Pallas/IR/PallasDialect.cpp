//===- PallasDialect.cpp - pallas dialect, attributes, types ---*- C++ -*-===//

#include "dialects/Pallas/IR/PallasDialect.h"
#include "dialects/Pallas/IR/GpuCallAttrs.h"
#include "dialects/Pallas/IR/GpuLaunchAttrs.h"
#include "dialects/Pallas/IR/PallasOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::pallas;

#include "dialects/Pallas/IR/PallasOpsDialect.cpp.inc"
#include "dialects/Pallas/IR/PallasOpsEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Pallas/IR/PallasOpsAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/Pallas/IR/PallasOpsTypes.cpp.inc"

void PallasDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Pallas/IR/PallasOpsAttrs.cpp.inc"
      >();
  registerGpuLaunchAttrs();
  registerGpuCallAttrs();
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/Pallas/IR/PallasOpsTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/Pallas/IR/PallasOps.cpp.inc"
      >();
}

/// The attribute groups of their own TableGen file (AttrGroups.h), in the
/// order the dialect asks them: GpuLaunchAttrs.td's, then GpuCallAttrs.td's.
static std::array<const AttrGroup *, 2> attrGroups() {
  return {&gpuLaunchAttrGroup(), &gpuCallAttrGroup()};
}

// The attributes of PallasAttrs.td, then those of the attribute groups.
Attribute PallasDialect::parseAttribute(DialectAsmParser &parser,
                                        Type type) const {
  SMLoc loc = parser.getCurrentLocation();
  StringRef mnemonic;
  Attribute attr;
  OptionalParseResult result =
      generatedAttributeParser(parser, &mnemonic, type, attr);
  for (const AttrGroup *group : attrGroups()) {
    if (result.has_value())
      break;
    result = group->parse(parser, mnemonic, type, attr);
  }
  if (result.has_value())
    return succeeded(*result) ? attr : Attribute();
  parser.emitError(loc) << "unknown attribute `" << mnemonic << "` in dialect `"
                        << getNamespace() << "`";
  return {};
}

void PallasDialect::printAttribute(Attribute attr,
                                   DialectAsmPrinter &printer) const {
  if (succeeded(generatedAttributePrinter(attr, printer)))
    return;
  for (const AttrGroup *group : attrGroups())
    if (succeeded(group->print(attr, printer)))
      return;
}

LogicalResult PallasDialect::verifyOperationAttribute(Operation *op,
                                                      NamedAttribute attr) {
  for (const AttrGroup *group : attrGroups())
    if (attr.getName() == group->attrName &&
        !group->isRecord(attr.getValue()))
      return op->emitOpError()
             << "attribute '" << group->attrName << "' must be a #pallas."
             << group->recordMnemonic << " record, got " << attr.getValue();
  return success();
}

Operation *PallasDialect::materializeConstant(OpBuilder &builder,
                                              Attribute value, Type type,
                                              Location loc) {
  return arith::ConstantOp::materialize(builder, value, type, loc);
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

Type mlir::pallas::getMaskType(Type type) {
  auto i1 = IntegerType::get(type.getContext(), 1);
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return RankedTensorType::get(tensor.getShape(), i1);
  return i1;
}

ArrayRef<int64_t> mlir::pallas::getShapeOf(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return tensor.getShape();
  return {};
}

Type mlir::pallas::getElementTypeOf(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return tensor.getElementType();
  return type;
}

static ParseResult parseMemorySpaceKeyword(AsmParser &parser,
                                           MemorySpace &memorySpace) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<MemorySpace> ms = symbolizeMemorySpace(keyword);
  if (!ms)
    return parser.emitError(loc)
           << "unknown memory space '" << keyword
           << "' (expected default, any, smem, vmem, gmem, hbm or semaphore)";
  memorySpace = *ms;
  return success();
}

//===----------------------------------------------------------------------===//
// RefType
//===----------------------------------------------------------------------===//

Type RefType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  MemorySpace memorySpace = MemorySpace::Default;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/true,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType))
    return {};
  if (succeeded(parser.parseOptionalComma()) &&
      parseMemorySpaceKeyword(parser, memorySpace))
    return {};
  if (parser.parseGreater())
    return {};
  return parser.getChecked<RefType>(parser.getContext(), shape, elementType,
                                    memorySpace);
}

void RefType::print(AsmPrinter &printer) const {
  printer << "<";
  for (int64_t dim : getShape()) {
    if (ShapedType::isDynamic(dim))
      printer << "?x";
    else
      printer << dim << "x";
  }
  printer << getElementType();
  if (getMemorySpace() != MemorySpace::Default)
    printer << ", " << stringifyMemorySpace(getMemorySpace());
  printer << ">";
}

LogicalResult RefType::verify(function_ref<InFlightDiagnostic()> emitError,
                              ArrayRef<int64_t> shape, Type elementType,
                              MemorySpace memorySpace) {
  if (!elementType.isIntOrIndexOrFloat())
    return emitError() << "ref element type must be an integer, index or "
                          "float type, got "
                       << elementType;
  int64_t elements = 1;
  for (int64_t dim : shape) {
    // `?`: a dimension known at launch (a symbolic array in memory space
    // `any`, docs/dialect.md#symbolic-shapes).
    if (ShapedType::isDynamic(dim)) {
      if (memorySpace != MemorySpace::Any)
        return emitError() << "only refs in memory space 'any' may have "
                              "dynamic dimensions ('?'), got memory space '"
                           << stringifyMemorySpace(memorySpace) << "'";
      continue;
    }
    if (dim < 0)
      return emitError() << "ref dimensions must be non-negative, got "
                         << dim;
    if (dim != 0 && elements > std::numeric_limits<int64_t>::max() / dim)
      return emitError() << "ref element count overflows int64";
    elements *= dim;
  }
  return success();
}

int64_t RefType::getNumElements() const {
  // A ref with dynamic dimensions has no static count.
  if (llvm::any_of(getShape(), ShapedType::isDynamic))
    return ShapedType::kDynamic;
  int64_t n = 1;
  for (int64_t dim : getShape())
    n *= dim;
  return n;
}

//===----------------------------------------------------------------------===//
// HiType
//===----------------------------------------------------------------------===//

LogicalResult HiType::verify(function_ref<InFlightDiagnostic()> emitError,
                             StringRef name, ArrayRef<Type> parts) {
  if (name.empty())
    return emitError() << "hi type needs a non-empty name";
  if (parts.empty())
    return emitError() << "hi type '" << name << "' needs at least one part";
  for (Type part : parts)
    if (isa<HiType>(part))
      return emitError() << "hi type '" << name
                         << "' cannot nest another hi type";
  return success();
}

//===----------------------------------------------------------------------===//
// BlockSpecAttr
//===----------------------------------------------------------------------===//

// #pallas.block_spec<any>
// #pallas.block_spec<[8, squeezed, element(64, 1, 1)], (i) -> (i, 0, 0), vmem>
// #pallas.block_spec<[8], @index_map>
Attribute BlockSpecAttr::parse(AsmParser &parser, Type) {
  MLIRContext *ctx = parser.getContext();
  SmallVector<int64_t> sizes, kinds, padLow, padHigh;
  AffineMap indexMap;
  FlatSymbolRefAttr indexFunc;
  MemorySpace memorySpace = MemorySpace::Default;
  if (parser.parseLess())
    return {};
  if (succeeded(parser.parseOptionalKeyword("any"))) {
    if (parser.parseGreater())
      return {};
    return parser.getChecked<BlockSpecAttr>(ctx, sizes, kinds, padLow,
                                            padHigh, indexMap, indexFunc,
                                            MemorySpace::Any, 0);
  }
  auto parseDim = [&]() -> ParseResult {
    if (succeeded(parser.parseOptionalKeyword("squeezed"))) {
      sizes.push_back(1);
      kinds.push_back(static_cast<int64_t>(BlockDimKind::Squeezed));
      padLow.push_back(0);
      padHigh.push_back(0);
      return success();
    }
    if (succeeded(parser.parseOptionalKeyword("element"))) {
      int64_t size = 0, lo = 0, hi = 0;
      if (parser.parseLParen() || parser.parseInteger(size))
        return failure();
      if (succeeded(parser.parseOptionalComma()) &&
          (parser.parseInteger(lo) || parser.parseComma() ||
           parser.parseInteger(hi)))
        return failure();
      if (parser.parseRParen())
        return failure();
      sizes.push_back(size);
      kinds.push_back(static_cast<int64_t>(BlockDimKind::Element));
      padLow.push_back(lo);
      padHigh.push_back(hi);
      return success();
    }
    int64_t size = 0;
    if (parser.parseInteger(size))
      return failure();
    sizes.push_back(size);
    kinds.push_back(static_cast<int64_t>(BlockDimKind::Blocked));
    padLow.push_back(0);
    padHigh.push_back(0);
    return success();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseDim))
    return {};
  int64_t bufferCount = 0;
  while (succeeded(parser.parseOptionalComma())) {
    // An index map, an index function, the memory space, or `buffers = N`.
    if (succeeded(parser.parseOptionalKeyword("buffers"))) {
      if (parser.parseEqual() || parser.parseInteger(bufferCount))
        return {};
      continue;
    }
    if (parser.getCurrentLocation().getPointer() &&
        *parser.getCurrentLocation().getPointer() == '@') {
      StringAttr sym;
      if (parser.parseSymbolName(sym))
        return {};
      indexFunc = FlatSymbolRefAttr::get(sym);
      continue;
    }
    if (*parser.getCurrentLocation().getPointer() == '(') {
      if (parser.parseAffineMap(indexMap))
        return {};
      continue;
    }
    if (parseMemorySpaceKeyword(parser, memorySpace))
      return {};
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<BlockSpecAttr>(ctx, sizes, kinds, padLow, padHigh,
                                          indexMap, indexFunc, memorySpace,
                                          bufferCount);
}

void BlockSpecAttr::print(AsmPrinter &printer) const {
  printer << "<";
  if (isWholeArray()) {
    printer << "any>";
    return;
  }
  printer << "[";
  for (unsigned i = 0, e = getRank(); i < e; ++i) {
    if (i)
      printer << ", ";
    switch (getKind(i)) {
    case BlockDimKind::Blocked:
      printer << getSizes()[i];
      break;
    case BlockDimKind::Squeezed:
      printer << "squeezed";
      break;
    case BlockDimKind::Element:
      printer << "element(" << getSizes()[i];
      if (getPadLow()[i] || getPadHigh()[i])
        printer << ", " << getPadLow()[i] << ", " << getPadHigh()[i];
      printer << ")";
      break;
    }
  }
  printer << "]";
  if (getIndexMap())
    printer << ", " << getIndexMap();
  if (getIndexFunc())
    printer << ", " << getIndexFunc();
  if (getMemorySpace() != MemorySpace::Default)
    printer << ", " << stringifyMemorySpace(getMemorySpace());
  if (getBufferCount())
    printer << ", buffers = " << getBufferCount();
  printer << ">";
}

LogicalResult
BlockSpecAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      ArrayRef<int64_t> sizes, ArrayRef<int64_t> kinds,
                      ArrayRef<int64_t> padLow, ArrayRef<int64_t> padHigh,
                      AffineMap indexMap, FlatSymbolRefAttr indexFunc,
                      MemorySpace memorySpace, int64_t bufferCount) {
  if (sizes.size() != kinds.size() || sizes.size() != padLow.size() ||
      sizes.size() != padHigh.size())
    return emitError() << "block spec arrays must have equal lengths";
  if (bufferCount < 0)
    return emitError() << "a block spec's buffer count must be positive, got "
                       << bufferCount;
  if (memorySpace == MemorySpace::Any && sizes.empty()) {
    if (bufferCount)
      return emitError() << "a block spec in memory space 'any' without a "
                            "block shape is not pipelined and takes no "
                            "buffer count";
    if (indexMap || indexFunc)
      return emitError() << "a block spec in memory space 'any' without a "
                            "block shape covers the whole array and takes no "
                            "index map";
    return success();
  }
  if (indexMap && indexFunc)
    return emitError() << "a block spec takes an index map or an index "
                          "function, not both";
  for (size_t i = 0; i < sizes.size(); ++i) {
    switch (kinds[i]) {
    case static_cast<int64_t>(BlockDimKind::Blocked):
      if (sizes[i] <= 0)
        return emitError() << "block dimension " << i
                           << " must be positive, got " << sizes[i];
      break;
    case static_cast<int64_t>(BlockDimKind::Squeezed):
      if (sizes[i] != 1)
        return emitError() << "squeezed block dimension " << i
                           << " must have size 1";
      break;
    case static_cast<int64_t>(BlockDimKind::Element):
      if (sizes[i] <= 0)
        return emitError() << "element block dimension " << i
                           << " must be positive, got " << sizes[i];
      if (padLow[i] < 0 || padHigh[i] < 0)
        return emitError() << "element block dimension " << i
                           << " has negative padding";
      break;
    default:
      return emitError() << "unknown block dimension kind " << kinds[i];
    }
    if (static_cast<BlockDimKind>(kinds[i]) != BlockDimKind::Element &&
        (padLow[i] || padHigh[i]))
      return emitError() << "only element block dimensions take padding";
  }
  if (indexMap) {
    if (indexMap.getNumSymbols() != 0)
      return emitError() << "index map " << AffineMapAttr::get(indexMap)
                         << " must not have symbols";
    if (indexMap.getNumResults() != sizes.size())
      return emitError() << "index map " << AffineMapAttr::get(indexMap) << " returns "
                         << indexMap.getNumResults()
                         << " indices but the block has rank "
                         << sizes.size();
  }
  return success();
}

SmallVector<int64_t>
BlockSpecAttr::getKernelShape(ArrayRef<int64_t> arrayShape) const {
  if (isWholeArray())
    return SmallVector<int64_t>(arrayShape);
  SmallVector<int64_t> shape;
  for (unsigned i = 0, e = getRank(); i < e; ++i)
    if (getKind(i) != BlockDimKind::Squeezed)
      shape.push_back(getSizes()[i]);
  return shape;
}

//===----------------------------------------------------------------------===//
// CompilerParamsAttr
//===----------------------------------------------------------------------===//

bool CompilerParamsAttr::hasGpuPart() const {
  return getNumWarps() || getNumStages() || getStrictFp();
}

bool CompilerParamsAttr::hasTpuPart() const {
  return !getDimensionSemantics().empty() || getVmemLimitBytes() ||
         getHasSideEffects() != SideEffectType::Pure || getCollectiveId();
}

namespace {
/// The fields of the two parts, as the parser collects them.
struct ParsedCompilerParams {
  std::optional<int64_t> numWarps, numStages, vmemLimitBytes, collectiveId;
  bool strictFp = false;
  SmallVector<DimensionSemantics> semantics;
  SideEffectType sideEffects = SideEffectType::Pure;
};
} // namespace

static ParseResult parseBoolKeyword(AsmParser &parser, bool &value) {
  if (succeeded(parser.parseOptionalKeyword("true"))) {
    value = true;
    return success();
  }
  if (succeeded(parser.parseOptionalKeyword("false"))) {
    value = false;
    return success();
  }
  return parser.emitError(parser.getCurrentLocation(),
                          "expected 'true' or 'false'");
}

/// `<name = value, ...>` of one part; `fields` lists the names the part takes.
static ParseResult
parseCompilerParamsPart(AsmParser &parser, StringRef part,
                        ArrayRef<StringRef> fields,
                        function_ref<ParseResult(StringRef)> parseField) {
  if (parser.parseLess())
    return failure();
  if (succeeded(parser.parseOptionalGreater()))
    return success();
  llvm::SmallSet<StringRef, 4> seen;
  auto parseOne = [&]() -> ParseResult {
    SMLoc loc = parser.getCurrentLocation();
    StringRef name;
    if (parser.parseKeyword(&name))
      return failure();
    if (!llvm::is_contained(fields, name)) {
      auto diag = parser.emitError(loc)
                  << "unknown compiler_params." << part << " field '" << name
                  << "'; expected one of ";
      llvm::interleave(
          fields, [&](StringRef f) { diag << "'" << f << "'"; },
          [&] { diag << ", "; });
      return diag;
    }
    if (!seen.insert(name).second)
      return parser.emitError(loc) << "compiler_params." << part << "."
                                   << name << " is given twice";
    if (parser.parseEqual())
      return failure();
    return parseField(name);
  };
  do {
    if (parseOne())
      return failure();
  } while (succeeded(parser.parseOptionalComma()));
  return parser.parseGreater();
}

// #pallas.compiler_params<gpu = <num_warps = 4, num_stages = 3>,
//                         tpu = <dimension_semantics = [parallel]>>
Attribute CompilerParamsAttr::parse(AsmParser &parser, Type) {
  ParsedCompilerParams p;
  SMLoc start = parser.getCurrentLocation();
  if (parser.parseLess())
    return {};
  auto parseGpuField = [&](StringRef name) -> ParseResult {
    if (name == "strict_fp")
      return parseBoolKeyword(parser, p.strictFp);
    int64_t n = 0;
    if (parser.parseInteger(n))
      return failure();
    (name == "num_warps" ? p.numWarps : p.numStages) = n;
    return success();
  };
  auto parseTpuField = [&](StringRef name) -> ParseResult {
    if (name == "vmem_limit_bytes" || name == "collective_id") {
      int64_t n = 0;
      if (parser.parseInteger(n))
        return failure();
      (name == "collective_id" ? p.collectiveId : p.vmemLimitBytes) = n;
      return success();
    }
    if (name == "has_side_effects") {
      SMLoc loc = parser.getCurrentLocation();
      StringRef value;
      if (parser.parseKeyword(&value))
        return failure();
      if (value == "true" || value == "side_effecting")
        p.sideEffects = SideEffectType::SideEffecting;
      else if (value == "false" || value == "pure")
        p.sideEffects = SideEffectType::Pure;
      else if (value == "dataflow_side_effecting")
        p.sideEffects = SideEffectType::DataflowSideEffecting;
      else
        return parser.emitError(loc)
               << "compiler_params.tpu.has_side_effects must be 'true', "
                  "'false' or 'dataflow_side_effecting', got '"
               << value << "'";
      return success();
    }
    // dimension_semantics
    return parser.parseCommaSeparatedList(
        AsmParser::Delimiter::Square, [&]() -> ParseResult {
          SMLoc loc = parser.getCurrentLocation();
          StringRef value;
          if (parser.parseKeyword(&value))
            return failure();
          std::optional<DimensionSemantics> sem =
              symbolizeDimensionSemantics(value);
          if (!sem)
            return parser.emitError(loc)
                   << "compiler_params.tpu.dimension_semantics entries must "
                      "be 'parallel', 'arbitrary', 'core_parallel' or "
                      "'subcore_parallel', got '"
                   << value << "'";
          p.semantics.push_back(*sem);
          return success();
        });
  };
  if (failed(parser.parseOptionalGreater())) {
    llvm::SmallSet<StringRef, 2> seen;
    do {
      SMLoc loc = parser.getCurrentLocation();
      StringRef part;
      if (parser.parseKeyword(&part))
        return {};
      if (part != "gpu" && part != "tpu") {
        parser.emitError(loc) << "unknown compiler_params part '" << part
                              << "'; expected 'gpu' or 'tpu'";
        return {};
      }
      if (!seen.insert(part).second) {
        parser.emitError(loc)
            << "compiler_params." << part << " is given twice";
        return {};
      }
      if (parser.parseEqual())
        return {};
      ParseResult r =
          part == "gpu"
              ? parseCompilerParamsPart(parser, part,
                                        {"num_warps", "num_stages",
                                         "strict_fp"},
                                        parseGpuField)
              : parseCompilerParamsPart(parser, part,
                                        {"dimension_semantics",
                                         "vmem_limit_bytes",
                                         "has_side_effects",
                                         "collective_id"},
                                        parseTpuField);
      if (r)
        return {};
    } while (succeeded(parser.parseOptionalComma()));
    if (parser.parseGreater())
      return {};
  }
  return parser.getChecked<CompilerParamsAttr>(
      start, parser.getContext(), p.numWarps, p.numStages, p.strictFp,
      p.semantics, p.vmemLimitBytes, p.sideEffects, p.collectiveId);
}

void CompilerParamsAttr::print(AsmPrinter &printer) const {
  printer << "<";
  // ", " before every part and field but the first of its list.
  llvm::ListSeparator parts;
  if (hasGpuPart()) {
    printer << StringRef(parts) << "gpu = <";
    llvm::ListSeparator sep;
    if (getNumWarps())
      printer << StringRef(sep) << "num_warps = " << *getNumWarps();
    if (getNumStages())
      printer << StringRef(sep) << "num_stages = " << *getNumStages();
    if (getStrictFp())
      printer << StringRef(sep) << "strict_fp = true";
    printer << ">";
  }
  if (hasTpuPart()) {
    printer << StringRef(parts) << "tpu = <";
    llvm::ListSeparator sep;
    if (!getDimensionSemantics().empty()) {
      printer << StringRef(sep) << "dimension_semantics = [";
      llvm::interleaveComma(getDimensionSemantics(), printer,
                            [&](DimensionSemantics s) {
                              printer << stringifyDimensionSemantics(s);
                            });
      printer << "]";
    }
    if (getVmemLimitBytes())
      printer << StringRef(sep)
              << "vmem_limit_bytes = " << *getVmemLimitBytes();
    if (getHasSideEffects() != SideEffectType::Pure) {
      printer << StringRef(sep) << "has_side_effects = "
              << (isSideEffecting() ? StringRef("true")
                                    : StringRef("dataflow_side_effecting"));
    }
    if (getCollectiveId())
      printer << StringRef(sep) << "collective_id = " << *getCollectiveId();
    printer << ">";
  }
  printer << ">";
}

LogicalResult CompilerParamsAttr::verify(
    function_ref<InFlightDiagnostic()> emitError,
    std::optional<int64_t> numWarps, std::optional<int64_t> numStages,
    bool strictFp, ArrayRef<DimensionSemantics> dimensionSemantics,
    std::optional<int64_t> vmemLimitBytes, SideEffectType hasSideEffects,
    std::optional<int64_t> collectiveId) {
  // The ranges of the spec validator (src/Spec/GridSpec.cpp).
  if (numWarps && (*numWarps < 1 || *numWarps > 32 ||
                   !llvm::isPowerOf2_64(static_cast<uint64_t>(*numWarps))))
    return emitError() << "compiler_params.gpu.num_warps must be a power of "
                          "2 in [1, 32], got "
                       << *numWarps;
  if (numStages && *numStages < 1)
    return emitError() << "compiler_params.gpu.num_stages must be a positive "
                          "integer, got "
                       << *numStages;
  if (vmemLimitBytes && *vmemLimitBytes < 1)
    return emitError() << "compiler_params.tpu.vmem_limit_bytes must be a "
                          "positive integer, got "
                       << *vmemLimitBytes;
  if (collectiveId && (*collectiveId < 0 || *collectiveId > INT32_MAX))
    return emitError() << "compiler_params.tpu.collective_id must be an "
                          "integer in [0, 2^31), got "
                       << *collectiveId;
  return success();
}
