//===- DebugPrint.cpp - pallas.debug_print to runtime calls -----*- C++ -*-===//
//
// `pallas.debug_print "x = {}, y = {}" %x, %y` becomes, in order, calls to
// the runtime's printers: the text before each placeholder (a private
// memref.global of bytes), then the value. Without placeholders the values
// follow the format separated by spaces, as Python's `print(fmt, *args)`
// (what interpret mode does). A newline ends the line.
//
// Values are widened so the runtime needs few entry points: integers and
// index to i64, i1 to i64 (printed True/False), f16/bf16/f32 to f32, f64
// stays. Tensors are passed as unranked memrefs (C interface).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToLinalg/Lowering.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::lowering;

namespace {

/// Finds or declares `func.func private @name(argType)`.
func::FuncOp getRuntimeFunc(ModuleOp module, StringRef name, Type argType) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto f = func::FuncOp::create(b, module.getLoc(), name,
                                b.getFunctionType({argType}, {}));
  f.setPrivate();
  if (isa<BaseMemRefType>(argType))
    f->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  return f;
}

void call(OpBuilder &b, Location loc, ModuleOp module, StringRef suffix,
          Value arg) {
  std::string name = std::string(kDebugPrintPrefix) + suffix.str();
  func::FuncOp f = getRuntimeFunc(module, name, arg.getType());
  func::CallOp::create(b, loc, f, ValueRange{arg});
}

void emitText(OpBuilder &b, Location loc, ModuleOp module, StringRef text) {
  if (text.empty())
    return;
  call(b, loc, module, "text",
       textGlobal(b, loc, module, "__pallasc_debug_str_", text));
}

void emitValue(OpBuilder &b, Location loc, ModuleOp module, Value value) {
  Type elementType = getElementTypeOf(value.getType());
  Type i64 = b.getI64Type(), f32 = b.getF32Type();
  auto retype = [&](Type to) -> Type {
    if (auto t = dyn_cast<RankedTensorType>(value.getType()))
      return t.clone(to);
    return to;
  };
  std::string kind;
  if (elementType.isInteger(1)) {
    value = arith::ExtUIOp::create(b, loc, retype(i64), value);
    kind = "bool";
  } else if (elementType.isIndex()) {
    value = arith::IndexCastOp::create(b, loc, retype(i64), value);
    kind = "i64";
  } else if (isa<IntegerType>(elementType)) {
    value = convertElementType(b, loc, value, i64);
    kind = "i64";
  } else if (elementType.isF64()) {
    kind = "f64";
  } else {
    value = convertElementType(b, loc, value, f32);
    kind = "f32";
  }
  auto tensorType = dyn_cast<RankedTensorType>(value.getType());
  if (!tensorType) {
    call(b, loc, module, kind, value);
    return;
  }
  // The tensor's buffer may be a strided view: take it with a fully dynamic
  // layout, then erase the rank.
  SmallVector<int64_t> strides(tensorType.getRank(), ShapedType::kDynamic);
  auto layout = StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic,
                                       strides);
  auto bufferType = MemRefType::get(tensorType.getShape(),
                                    tensorType.getElementType(), layout);
  Value buffer =
      bufferization::ToBufferOp::create(b, loc, bufferType, value, true);
  Value unranked = memref::CastOp::create(
      b, loc, UnrankedMemRefType::get(tensorType.getElementType(), 0), buffer);
  call(b, loc, module, "tensor_" + kind, unranked);
}

/// Python's str.format escapes.
std::string unescapeBraces(StringRef text) {
  std::string s;
  for (size_t i = 0; i < text.size(); ++i) {
    s += text[i];
    if ((text[i] == '{' || text[i] == '}') && i + 1 < text.size() &&
        text[i + 1] == text[i])
      ++i;
  }
  return s;
}

} // namespace

Value mlir::pallas::lowering::textGlobal(OpBuilder &b, Location loc,
                                         ModuleOp module, StringRef prefix,
                                         StringRef text) {
  MLIRContext *ctx = b.getContext();
  auto type =
      MemRefType::get({static_cast<int64_t>(text.size())}, b.getI8Type());
  auto data = DenseElementsAttr::get(
      RankedTensorType::get(type.getShape(), b.getI8Type()),
      ArrayRef<char>(text.data(), text.size()));
  // One global per distinct text.
  std::string name;
  for (unsigned i = 0;; ++i) {
    name = (prefix + Twine(i)).str();
    auto existing = module.lookupSymbol<memref::GlobalOp>(name);
    if (!existing || existing.getInitialValueAttr() == data)
      break;
  }
  if (!module.lookupSymbol(name)) {
    OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
    memref::GlobalOp::create(mb, loc, StringAttr::get(ctx, name),
                             mb.getStringAttr("private"), TypeAttr::get(type),
                             data, mb.getUnitAttr(), IntegerAttr());
  }
  Value global = memref::GetGlobalOp::create(b, loc, type, name);
  return memref::CastOp::create(
      b, loc, MemRefType::get({ShapedType::kDynamic}, b.getI8Type()), global);
}

LogicalResult lowering::lowerDebugPrint(DebugPrintOp op, ModuleOp module,
                                        RewriterBase &rewriter) {
  OpBuilder &b = rewriter;
  Location loc = op.getLoc();
  StringRef fmt = op.getFormat();
  ValueRange values = op.getValues();
  SmallVector<std::string> texts; // texts[i] comes before values[i]
  if (fmt.contains("{}")) {
    StringRef rest = fmt;
    while (true) {
      auto [head, tail] = rest.split("{}");
      texts.push_back(unescapeBraces(head));
      if (head.size() == rest.size())
        break;
      rest = tail;
    }
  } else {
    // print(fmt, *args): the values follow, separated by spaces.
    texts.push_back(values.empty() ? fmt.str() : fmt.str() + " ");
    for (size_t i = 1; i < values.size(); ++i)
      texts.push_back(" ");
    if (!values.empty())
      texts.push_back("");
  }
  texts.back() += "\n";
  for (size_t i = 0; i < texts.size(); ++i) {
    emitText(b, loc, module, texts[i]);
    if (i < values.size())
      emitValue(b, loc, module, values[i]);
  }
  rewriter.eraseOp(op);
  return success();
}
