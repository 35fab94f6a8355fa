//===- GpuLaunchAttrs.cpp - pallas-to-gpu's typed launch record -*- C++ -*-===//

#include "dialects/Pallas/IR/GpuLaunchAttrs.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::pallas;

#include "dialects/Pallas/IR/GpuLaunchEnums.cpp.inc"

//===----------------------------------------------------------------------===//
// Custom directives of #pallas.gpu_launch
//===----------------------------------------------------------------------===//

/// `[1, 2, 3]`, `[]`; `[#pallas.gpu_param<...>, ...]`.
template <typename T>
static ParseResult parseGpuList(AsmParser &parser, SmallVector<T> &values) {
  values.clear();
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() {
    if constexpr (std::is_integral_v<T>)
      return parser.parseInteger(values.emplace_back());
    else
      return parser.parseAttribute(values.emplace_back());
  });
}

template <typename T>
static void printGpuList(AsmPrinter &printer, ArrayRef<T> values) {
  printer << "[";
  llvm::interleaveComma(values, printer, [&](T v) {
    if constexpr (std::is_integral_v<T>)
      printer << v;
    else
      printer.printAttribute(v);
  });
  printer << "]";
}

/// `[[0, 1], [2], []]`: the axes folded into x, y and z.
static ParseResult parseGpuGridAxes(AsmParser &parser, SmallVector<int64_t> &x,
                                    SmallVector<int64_t> &y,
                                    SmallVector<int64_t> &z) {
  SmallVector<int64_t> *dims[3] = {&x, &y, &z};
  unsigned count = 0;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseCommaSeparatedList(
          AsmParser::Delimiter::Square, [&]() -> ParseResult {
            if (count == 3)
              return parser.emitError(parser.getCurrentLocation(),
                                      "grid_axes has more than 3 entries "
                                      "(x, y, z)");
            return parseGpuList(parser, *dims[count++]);
          }))
    return failure();
  if (count != 3)
    return parser.emitError(loc) << "grid_axes must have 3 entries (x, y, z), "
                                    "got "
                                 << count;
  return success();
}

static void printGpuGridAxes(AsmPrinter &printer, ArrayRef<int64_t> x,
                             ArrayRef<int64_t> y, ArrayRef<int64_t> z) {
  printer << "[";
  printGpuList(printer, x);
  printer << ", ";
  printGpuList(printer, y);
  printer << ", ";
  printGpuList(printer, z);
  printer << "]";
}

// The generated parser dispatch reads the mnemonic itself; the dialect's
// parser (PallasDialect.cpp) has read it already and calls
// gpuLaunchAttrGroup().parse instead.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#define GET_ATTRDEF_CLASSES
#include "dialects/Pallas/IR/GpuLaunchAttrs.cpp.inc"
#pragma GCC diagnostic pop

//===----------------------------------------------------------------------===//
// GpuParamAttr
//===----------------------------------------------------------------------===//

std::string GpuParamAttr::getOperandName() const {
  return (stringifyGpuOperandGroup(getGroup()) + "[" +
          std::to_string(getIndex()) + "]")
      .str();
}

namespace {
/// The fields after a parameter's operand, as the parser collects them.
struct ParsedGpuParam {
  std::optional<int64_t> axis;
  Type dtype;
  SmallVector<int64_t> globalShape, boxShape;
  StringAttr swizzle, interleave, l2Promotion, oobFill;
};
} // namespace

/// A keyword naming a value of the enum `E` (`symbolize`), else none: an
/// error at `loc` naming `what` and the `expected` keywords when it names
/// none.
template <typename E>
static std::optional<E>
parseEnumKeyword(AsmParser &parser, SMLoc loc,
                 std::optional<E> (*symbolize)(StringRef), StringRef what,
                 StringRef expected) {
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return std::nullopt;
  std::optional<E> value = symbolize(keyword);
  if (!value)
    parser.emitError(loc) << "unknown " << what << " '" << keyword
                          << "'; expected " << expected;
  return value;
}

// #pallas.gpu_param<pointer, inputs[0]>
// #pallas.gpu_param<i32, grid_bounds[0], axis = 1>
// #pallas.gpu_param<tensor_map, inputs[1], dtype = bf16, global_shape = [..],
//                   box_shape = [..], swizzle = "128B", ...>
Attribute GpuParamAttr::parse(AsmParser &parser, Type) {
  SMLoc start = parser.getCurrentLocation();
  if (parser.parseLess())
    return {};
  // The kind (`i32` lexes as an integer type, which parseKeyword takes).
  SMLoc loc = parser.getCurrentLocation();
  std::optional<GpuParamKind> kind = parseEnumKeyword(
      parser, loc, symbolizeGpuParamKind, "GPU parameter kind",
      "'pointer', 'i32', 'tensor_map' or 'symbol'");
  if (!kind)
    return {};
  // The operand: inputs[i], outputs[j], grid_bounds[k].
  int64_t index = 0;
  loc = parser.getCurrentLocation();
  if (parser.parseComma())
    return {};
  std::optional<GpuOperandGroup> group = parseEnumKeyword(
      parser, loc, symbolizeGpuOperandGroup, "GPU parameter operand",
      "'inputs', 'outputs', 'grid_bounds' or 'symbols'");
  if (!group)
    return {};
  if (parser.parseLSquare() || parser.parseInteger(index) ||
      parser.parseRSquare())
    return {};
  // The kind's fields.
  ParsedGpuParam p;
  llvm::SmallSet<StringRef, 8> seen;
  while (succeeded(parser.parseOptionalComma())) {
    loc = parser.getCurrentLocation();
    StringRef name;
    if (parser.parseKeyword(&name))
      return {};
    if (!seen.insert(name).second) {
      parser.emitError(loc)
          << "GPU parameter field '" << name << "' is given twice";
      return {};
    }
    if (parser.parseEqual())
      return {};
    auto parseString = [&](StringAttr &out) {
      std::string s;
      if (parser.parseString(&s))
        return failure();
      out = StringAttr::get(parser.getContext(), s);
      return success();
    };
    ParseResult r = failure();
    if (name == "axis") {
      int64_t axis = 0;
      r = parser.parseInteger(axis);
      p.axis = axis;
    } else if (name == "dtype") {
      r = parser.parseType(p.dtype);
    } else if (name == "global_shape") {
      r = parseGpuList(parser, p.globalShape);
    } else if (name == "box_shape") {
      r = parseGpuList(parser, p.boxShape);
    } else if (name == "swizzle") {
      r = parseString(p.swizzle);
    } else if (name == "interleave") {
      r = parseString(p.interleave);
    } else if (name == "l2_promotion") {
      r = parseString(p.l2Promotion);
    } else if (name == "oob_fill") {
      r = parseString(p.oobFill);
    } else {
      parser.emitError(loc)
          << "unknown GPU parameter field '" << name
          << "'; expected 'axis', 'dtype', 'global_shape', 'box_shape', "
             "'swizzle', 'interleave', 'l2_promotion' or 'oob_fill'";
      return {};
    }
    if (r)
      return {};
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<GpuParamAttr>(
      start, parser.getContext(), *kind, *group, index, p.axis, p.dtype,
      p.globalShape, p.boxShape, p.swizzle, p.interleave, p.l2Promotion,
      p.oobFill);
}

void GpuParamAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyGpuParamKind(getKind()) << ", "
          << stringifyGpuOperandGroup(getGroup()) << "[" << getIndex() << "]";
  if (getAxis())
    printer << ", axis = " << *getAxis();
  if (getDtype())
    printer << ", dtype = " << getDtype();
  if (!getGlobalShape().empty()) {
    printer << ", global_shape = ";
    printGpuList(printer, getGlobalShape());
  }
  if (!getBoxShape().empty()) {
    printer << ", box_shape = ";
    printGpuList(printer, getBoxShape());
  }
  auto printString = [&](StringRef name, StringAttr value) {
    if (value)
      printer << ", " << name << " = \"" << value.getValue() << "\"";
  };
  printString("swizzle", getSwizzle());
  printString("interleave", getInterleave());
  printString("l2_promotion", getL2Promotion());
  printString("oob_fill", getOobFill());
  printer << ">";
}

LogicalResult GpuParamAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   GpuParamKind kind, GpuOperandGroup group,
                                   int64_t index, std::optional<int64_t> axis,
                                   Type dtype, ArrayRef<int64_t> globalShape,
                                   ArrayRef<int64_t> boxShape,
                                   StringAttr swizzle, StringAttr interleave,
                                   StringAttr l2Promotion, StringAttr oobFill) {
  StringRef kindName = stringifyGpuParamKind(kind);
  if (index < 0)
    return emitError() << "a GPU parameter's operand index must be "
                          "non-negative, got "
                       << index;
  bool tensorMapFields = dtype || !globalShape.empty() || !boxShape.empty() ||
                         swizzle || interleave || l2Promotion || oobFill;
  // A parameter of an operand group its kind does not take: `takes` says
  // which it does.
  auto wrongGroup = [&](StringRef takes) {
    return emitError() << takes << ", not " << stringifyGpuOperandGroup(group)
                       << "[" << index << "]";
  };
  switch (kind) {
  case GpuParamKind::Pointer:
    if (group == GpuOperandGroup::GridBounds ||
        group == GpuOperandGroup::Symbols)
      return wrongGroup("a pointer parameter takes an input or an output");
    break;
  case GpuParamKind::Symbol:
    if (group != GpuOperandGroup::Symbols)
      return wrongGroup("a symbol parameter takes symbols[s]");
    break;
  case GpuParamKind::GridBound:
    if (group != GpuOperandGroup::GridBounds)
      return wrongGroup("an i32 parameter takes grid_bounds[k]");
    if (!axis)
      return emitError() << "an i32 parameter needs the pallas grid axis "
                            "whose bound it is (axis = n)";
    if (*axis < 0)
      return emitError() << "an i32 parameter's axis must be non-negative, "
                            "got "
                         << *axis;
    break;
  case GpuParamKind::TensorMap:
    if (group == GpuOperandGroup::GridBounds)
      return wrongGroup("a tensor_map parameter takes an input or an output");
    if (!dtype || !(dtype.isBF16() || dtype.isF16()))
      return emitError() << "a tensor_map parameter needs dtype = bf16 or "
                            "f16";
    if (globalShape.size() < 2 || globalShape.size() > 5 ||
        boxShape.size() != globalShape.size())
      return emitError() << "a tensor_map parameter needs a global_shape and "
                            "a box_shape of 2 to 5 entries each, as many "
                            "(outermost first)";
    for (int64_t d : llvm::concat<const int64_t>(globalShape, boxShape))
      if (d <= 0)
        return emitError() << "a tensor_map parameter's shapes must be "
                              "positive, got "
                           << d;
    if (!swizzle || !interleave || !l2Promotion || !oobFill)
      return emitError() << "a tensor_map parameter needs swizzle, "
                            "interleave, l2_promotion and oob_fill";
    break;
  }
  if (kind != GpuParamKind::GridBound && axis)
    return emitError() << "a " << kindName << " parameter takes no axis";
  if (kind != GpuParamKind::TensorMap && tensorMapFields)
    return emitError() << "a " << kindName
                       << " parameter takes no tensor-map fields";
  return success();
}

//===----------------------------------------------------------------------===//
// GpuLaunchAttr
//===----------------------------------------------------------------------===//

LogicalResult GpuLaunchAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, StringRef entry,
    ArrayRef<int64_t> grid, ArrayRef<int64_t> gridAxesX,
    ArrayRef<int64_t> gridAxesY, ArrayRef<int64_t> gridAxesZ,
    ArrayRef<int64_t> block, int64_t numWarps, int64_t warpSize,
    ArrayRef<int64_t> sequentialAxes, ArrayRef<int64_t> vmappedAxes,
    int64_t dynamicSharedBytes, int64_t scratchSharedBytes,
    ArrayRef<GpuParamAttr> params) {
  if (entry.empty())
    return emitError() << "the launch record needs an entry symbol";
  if (grid.size() != 3)
    return emitError() << "the launch record's grid must have 3 entries "
                          "(x, y, z), got "
                       << grid.size();
  for (int64_t g : grid)
    if (g < -1)
      return emitError() << "the launch record's grid entries must be "
                            "non-negative or -1 (dynamic), got "
                         << g;
  if (block.size() != 3)
    return emitError() << "the launch record's block must have 3 entries "
                          "(x, y, z), got "
                       << block.size();
  for (int64_t t : block)
    if (t < 1)
      return emitError() << "the launch record's block entries must be "
                            "positive, got "
                         << t;
  if (numWarps < 1)
    return emitError() << "the launch record's num_warps must be positive, "
                          "got "
                       << numWarps;
  if (warpSize < 1)
    return emitError() << "the launch record's warp_size must be positive, "
                          "got "
                       << warpSize;
  auto checkAxes = [&](StringRef field,
                       ArrayRef<int64_t> axes) -> LogicalResult {
    for (int64_t a : axes)
      if (a < 0)
        return emitError() << "the launch record's " << field
                           << " must be non-negative pallas grid axes, got "
                           << a;
    return success();
  };
  if (failed(checkAxes("grid_axes", gridAxesX)) ||
      failed(checkAxes("grid_axes", gridAxesY)) ||
      failed(checkAxes("grid_axes", gridAxesZ)) ||
      failed(checkAxes("sequential_axes", sequentialAxes)) ||
      failed(checkAxes("vmapped_axes", vmappedAxes)))
    return failure();
  if (dynamicSharedBytes < 0)
    return emitError() << "the launch record's dynamic_shared_memory_bytes "
                          "must be non-negative, got "
                       << dynamicSharedBytes;
  if (scratchSharedBytes < 0 || scratchSharedBytes > dynamicSharedBytes)
    return emitError() << "the launch record's scratch_shared_memory_bytes "
                          "must be in [0, dynamic_shared_memory_bytes = "
                       << dynamicSharedBytes << "], got " << scratchSharedBytes;
  // The operands each group's parameters name are numbered in launch
  // order (inputs[0], inputs[1], ...); a tensor map is over an input that
  // has a pointer parameter.
  int64_t next[4] = {0, 0, 0, 0};
  for (GpuParamAttr p : params) {
    if (!p)
      return emitError() << "the launch record's params must be "
                            "#pallas.gpu_param";
    if (p.getKind() == GpuParamKind::TensorMap)
      continue;
    int64_t &expected = next[static_cast<unsigned>(p.getGroup())];
    if (p.getIndex() != expected)
      return emitError() << "the launch record's parameter "
                         << p.getOperandName() << " is out of order: "
                         << "expected "
                         << stringifyGpuOperandGroup(p.getGroup()) << "["
                         << expected << "]";
    ++expected;
    if (p.getKind() == GpuParamKind::GridBound) {
      int64_t axis = *p.getAxis();
      if (!llvm::is_contained(gridAxesX, axis) &&
          !llvm::is_contained(gridAxesY, axis) &&
          !llvm::is_contained(gridAxesZ, axis) &&
          !llvm::is_contained(sequentialAxes, axis))
        return emitError() << "the launch record's parameter "
                           << p.getOperandName() << " is the bound of axis "
                           << axis
                           << ", which is neither in grid_axes nor in "
                              "sequential_axes";
    }
  }
  for (GpuParamAttr p : params)
    if (p.getKind() == GpuParamKind::TensorMap &&
        p.getIndex() >= next[static_cast<unsigned>(GpuOperandGroup::Inputs)])
      return emitError() << "the launch record's tensor_map parameter is over "
                         << p.getOperandName()
                         << ", which has no pointer parameter";
  return success();
}

//===----------------------------------------------------------------------===//
// The dialect's hooks
//===----------------------------------------------------------------------===//

void PallasDialect::registerGpuLaunchAttrs() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Pallas/IR/GpuLaunchAttrs.cpp.inc"
      >();
}

const AttrGroup &mlir::pallas::gpuLaunchAttrGroup() {
  static const AttrGroup group{
      parseAttrOf<GpuLaunchAttr, GpuParamAttr>, generatedAttributePrinter,
      kGpuLaunchAttrName, GpuLaunchAttr::getMnemonic(),
      [](Attribute value) { return isa<GpuLaunchAttr>(value); }};
  return group;
}
