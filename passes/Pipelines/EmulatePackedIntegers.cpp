//===- EmulatePackedIntegers.cpp - i4/i2 memrefs as packed bytes -*- C++ -*-===//
//
// int4/uint4 (`i4`) and int2/uint2 (`i2`) arrays are packed, 2 or 4 elements
// per byte, element 0 in the low bits, rows not padded to bytes (XLA's and
// ml_dtypes' layout, docs/gridspec.md#arrays). On the host, after
// bufferization and linalg-to-loops, this pass gives every memref of such
// elements that storage: upstream's narrow-type emulation
// (memref::populateMemRefNarrowTypeEmulationPatterns) turns the memref into
// a one-dimensional memref of bytes (the kernel's ref arguments, allocations,
// views), and each load into a byte load, a shift and a truncation, each
// store into a read-modify-write of its byte (clear under a mask, or; plain,
// not atomic: the host runs one kernel step at a time on one thread). Arithmetic stays
// in i4/i2 (LLVM wraps it at 4 or 2 bits, as XLA does).
//
// Before the conversion, copies between packed memrefs of different layouts
// (which upstream's pattern refuses) become loops of element loads and
// stores. A view the emulation cannot express (a subview that is not a run
// of whole rows of static size starting on a byte) is refused at its
// location, naming the ref.
//
//===----------------------------------------------------------------------===//

#include "passes/Pipelines/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/NarrowTypeEmulationConverter.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;

namespace mlir::pallas {
#define GEN_PASS_DEF_PALLASEMULATEPACKEDINTEGERS
#include "passes/Pipelines/Passes.h.inc"
} // namespace mlir::pallas

namespace {

/// Whether `type` is a memref of i4 or i2 elements.
bool isPackedMemRef(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref)
    return false;
  auto i = dyn_cast<IntegerType>(memref.getElementType());
  return i && (i.getWidth() == 4 || i.getWidth() == 2);
}

/// A copy between packed memrefs that are not both dense as a loop nest of
/// element loads and stores (the emulation then packs each access).
void expandPackedCopies(ModuleOp module) {
  SmallVector<memref::CopyOp> copies;
  module.walk([&](memref::CopyOp op) {
    auto from = dyn_cast<MemRefType>(op.getSource().getType());
    auto to = dyn_cast<MemRefType>(op.getTarget().getType());
    if (from && to && isPackedMemRef(from) &&
        !(from.getLayout().isIdentity() && to.getLayout().isIdentity()))
      copies.push_back(op);
  });
  for (memref::CopyOp op : copies) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto type = cast<MemRefType>(op.getSource().getType());
    SmallVector<Value> lbs, ubs, steps;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      lbs.push_back(zero);
      ubs.push_back(memref::DimOp::create(b, loc, op.getSource(), d));
      steps.push_back(one);
    }
    scf::buildLoopNest(b, loc, lbs, ubs, steps,
                       [&](OpBuilder &nb, Location l, ValueRange ivs) {
                         Value v =
                             memref::LoadOp::create(nb, l, op.getSource(), ivs);
                         memref::StoreOp::create(nb, l, v, op.getTarget(),
                                                 ivs);
                       });
    op.erase();
  }
}

/// Whether the first element of `op`'s view starts a byte of its packed
/// source: the static part of its offset is a multiple of the elements per
/// byte, and so is the source's stride of each dimension with a dynamic
/// offset. (A source of dynamic offset is a view checked here, or a ref
/// argument at offset 0.)
bool startsOnByte(memref::SubViewOp op) {
  MemRefType source = op.getSourceType();
  int64_t perByte = 8 / source.getElementTypeBitWidth();
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(source.getStridesAndOffset(strides, offset)))
    return false;
  int64_t start = ShapedType::isDynamic(offset) ? 0 : offset;
  for (auto [o, stride] : llvm::zip(op.getStaticOffsets(), strides)) {
    if (ShapedType::isDynamic(stride))
      return false;
    if (ShapedType::isDynamic(o)) {
      if (stride % perByte != 0)
        return false;
      continue;
    }
    start += o * stride;
  }
  return start % perByte == 0;
}

/// Refuses the views of packed memrefs the emulation has no form for: the
/// emulated memref is one run of bytes, so a view must be whole rows of a
/// static size, contiguous, with unit strides, starting on a byte.
LogicalResult checkViews(ModuleOp module) {
  WalkResult walk = module.walk([&](memref::SubViewOp op) {
    MemRefType type = op.getType();
    if (!isPackedMemRef(type))
      return WalkResult::advance();
    bool unitStrides = llvm::all_of(op.getStaticStrides(),
                                    [](int64_t s) { return s == 1; });
    if (unitStrides && memref::isStaticShapeAndContiguousRowMajor(type) &&
        !ShapedType::isDynamic(op.getStaticOffsets().back()) &&
        startsOnByte(op))
      return WalkResult::advance();
    op.emitError() << "a view " << type << " of the packed "
                   << op.getSourceType()
                   << " (int4/uint4/int2/uint2, stored 2 or 4 per byte) is "
                      "not supported on target 'cpu': the CPU lowering takes "
                      "views of whole rows, of static sizes, starting on a "
                      "byte; load the whole block and slice the value "
                      "instead";
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}

/// An op that passes a packed memref on (memref.cast, the aligned pointer
/// of memref.extract_aligned_pointer_as_index): the same op on the bytes,
/// of converted result types.
template <typename OpTy>
struct ConvertPassThrough final : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<Type> types;
    if (failed(this->getTypeConverter()->convertTypes(op->getResultTypes(),
                                                      types)))
      return rewriter.notifyMatchFailure(op, "unconvertible type");
    rewriter.replaceOpWithNewOp<OpTy>(op, types, adaptor.getOperands(),
                                      op->getAttrs());
    return success();
  }
};

/// The metadata of a packed memref of static layout (a kernel's ref
/// argument, which upstream's patterns cannot resolve): constants, and the
/// base buffer of its bytes.
struct ConvertStaticMetadata final
    : OpConversionPattern<memref::ExtractStridedMetadataOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(memref::ExtractStridedMetadataOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<MemRefType>(op.getSource().getType());
    SmallVector<int64_t> strides;
    int64_t offset;
    if (!isPackedMemRef(type) || !type.hasStaticShape() ||
        failed(type.getStridesAndOffset(strides, offset)) ||
        ShapedType::isDynamic(offset) ||
        llvm::any_of(strides, ShapedType::isDynamic))
      return rewriter.notifyMatchFailure(op, "dynamic metadata");
    Location loc = op.getLoc();
    auto bytes =
        memref::ExtractStridedMetadataOp::create(rewriter, loc, adaptor.getSource());
    SmallVector<Value> results = {bytes.getBaseBuffer()};
    results.push_back(arith::ConstantIndexOp::create(rewriter, loc, offset));
    for (int64_t v : type.getShape())
      results.push_back(arith::ConstantIndexOp::create(rewriter, loc, v));
    for (int64_t v : strides)
      results.push_back(arith::ConstantIndexOp::create(rewriter, loc, v));
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// Upstream's store is two atomic read-modify-writes of its byte (clear the
/// element's bits, or the value in). The host runs one kernel step at a time
/// on one thread, so the stores it created (those not in `before`) become one
/// plain load, and, or and store of the byte.
void plainStores(ModuleOp module,
                 const llvm::DenseSet<Operation *> &before) {
  SmallVector<memref::AtomicRMWOp> clears;
  module.walk([&](memref::AtomicRMWOp op) {
    if (!before.contains(op) && op.getKind() == arith::AtomicRMWKind::andi)
      clears.push_back(op);
  });
  for (memref::AtomicRMWOp clear : clears) {
    auto put = dyn_cast_or_null<memref::AtomicRMWOp>(clear->getNextNode());
    if (!put || before.contains(put) ||
        put.getKind() != arith::AtomicRMWKind::ori ||
        put.getMemref() != clear.getMemref() ||
        put.getIndices() != clear.getIndices() || !clear->use_empty() ||
        !put->use_empty())
      continue;
    OpBuilder b(clear);
    Location loc = clear.getLoc();
    Value byte = memref::LoadOp::create(b, loc, clear.getMemref(),
                                        clear.getIndices());
    Value kept = arith::AndIOp::create(b, loc, byte, clear.getValue());
    Value stored = arith::OrIOp::create(b, loc, kept, put.getValue());
    memref::StoreOp::create(b, loc, stored, clear.getMemref(),
                            clear.getIndices());
    put.erase();
    clear.erase();
  }
}

struct EmulatePackedIntegersPass
    : pallas::impl::PallasEmulatePackedIntegersBase<
          EmulatePackedIntegersPass> {
  void runOnOperation() final {
    ModuleOp module = getOperation();
    bool any = false;
    module.walk([&](Operation *op) {
      for (Type t : op->getResultTypes())
        any |= isPackedMemRef(t);
      for (Region &r : op->getRegions())
        for (Block &block : r)
          for (BlockArgument arg : block.getArguments())
            any |= isPackedMemRef(arg.getType());
    });
    if (!any)
      return;
    if (failed(checkViews(module)))
      return signalPassFailure();
    expandPackedCopies(module);

    MLIRContext *ctx = &getContext();
    arith::NarrowTypeEmulationConverter converter(8);
    memref::populateMemRefNarrowTypeEmulationConversions(converter);
    // Bool memrefs keep a byte per element (the runtime's layout): only i4
    // and i2 are packed. (Conversions added later are tried first.)
    converter.addConversion([](MemRefType type) -> std::optional<Type> {
      if (isPackedMemRef(type))
        return std::nullopt;
      return type;
    });
    ConversionTarget target(*ctx);
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp op) {
      return converter.isSignatureLegal(op.getFunctionType());
    });
    auto legal = [&](Operation *op) { return converter.isLegal(op); };
    target.addDynamicallyLegalOp<func::CallOp, func::ReturnOp>(legal);
    target.addDynamicallyLegalDialect<arith::ArithDialect,
                                      memref::MemRefDialect,
                                      affine::AffineDialect>(legal);
    llvm::DenseSet<Operation *> atomics;
    module.walk([&](memref::AtomicRMWOp op) { atomics.insert(op); });
    RewritePatternSet patterns(ctx);
    arith::populateArithNarrowTypeEmulationPatterns(converter, patterns);
    // A store: two atomic read-modify-writes of its byte (and, or), made
    // one plain read-modify-write after the conversion (plainStores).
    memref::populateMemRefNarrowTypeEmulationPatterns(converter, patterns);
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                         target);
    patterns.add<ConvertPassThrough<memref::CastOp>,
                 ConvertPassThrough<memref::ExtractAlignedPointerAsIndexOp>,
                 ConvertStaticMetadata>(converter, ctx);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    plainStores(module, atomics);
  }
};

} // namespace
