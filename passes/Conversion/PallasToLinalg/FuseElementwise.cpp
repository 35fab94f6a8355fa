//===- FuseElementwise.cpp - pallas-cpu-fuse-elementwise ----------*- C++ -*-===//
//
// Elementwise fusion of linalg ops on tensors with a bound on the size of a
// fused body (see Passes.td): the upstream pass's patterns and control, plus
// the bound, so that LLVM never sees one loop body of thousands of ops; and a
// pattern of its own that fuses producers with several uses (a jvp's primal
// values) without recomputing them (FuseMultiUseProducer below).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pallas {
#define GEN_PASS_DEF_PALLASCPUFUSEELEMENTWISE
#include "passes/Conversion/Passes.h.inc"
} // namespace mlir::pallas

using namespace mlir;

namespace {

/// Operations in the body of a linalg op, its terminator not counted.
int64_t bodyOps(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || op->getNumRegions() == 0 || op->getRegion(0).empty())
    return 0;
  int64_t count = 0;
  op->getRegion(0).walk([&](Operation *) { ++count; });
  return count - 1;
}

/// A generic on tensors of one shape whose loops are all parallel and whose
/// operands are all read and written with the identity map: the form
/// pallas-to-linalg gives an elementwise op on a block.
bool isPlainElementwise(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() ||
      op.getNumParallelLoops() != op.getNumLoops() || op.getNumLoops() == 0)
    return false;
  if (!llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return false;
  Type shape = op->getOperand(0).getType();
  for (Value v : op->getOperands()) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || !type.hasStaticShape() ||
        type.getShape() != cast<RankedTensorType>(shape).getShape())
      return false;
  }
  return true;
}

/// Fuses a plain elementwise producer with several uses into its first
/// consumer (in block order): the fused generic computes the producer's body,
/// then the consumer's, and yields, besides the consumer's results, those
/// producer results that are used elsewhere; those uses (all after the
/// consumer, so the fused op dominates them) read the fused op instead, and
/// the producer goes away. Nothing is computed twice. Upstream's pattern,
/// given a producer with several uses, keeps the producer and recomputes its
/// body in the consumer, which for a chain whose values are all used several
/// times (a jvp: each primal value feeds the next primal op and the tangent
/// ops) multiplies the work. Producers with a single use are left to the
/// upstream pattern, so kernels without multi-use producers are unchanged.
struct FuseMultiUseProducer : OpRewritePattern<linalg::GenericOp> {
  FuseMultiUseProducer(MLIRContext *context, int64_t bound)
      : OpRewritePattern<linalg::GenericOp>(context), bound(bound) {}

  /// The producer of `operand` that this pattern fuses into its owner, or null.
  linalg::GenericOp fusable(OpOperand &operand) const {
    auto consumer = cast<linalg::GenericOp>(operand.getOwner());
    auto producer = operand.get().getDefiningOp<linalg::GenericOp>();
    if (!producer || producer->hasOneUse() || !consumer.isDpsInput(&operand) ||
        producer->getBlock() != consumer->getBlock())
      return nullptr;
    if (!isPlainElementwise(producer) || !isPlainElementwise(consumer) ||
        producer.getNumLoops() != consumer.getNumLoops() ||
        producer->getOperand(0).getType() != consumer->getOperand(0).getType())
      return nullptr;
    // The producer's outputs are only written.
    for (OpOperand &init : producer.getDpsInitsMutable())
      if (producer.payloadUsesValueFromOperand(&init))
        return nullptr;
    if (bodyOps(producer) + bodyOps(consumer) > bound)
      return nullptr;
    // Every other user comes after the consumer (the fused op takes the
    // consumer's place and must dominate them).
    Block *block = consumer->getBlock();
    for (Operation *user : producer->getUsers()) {
      if (user == consumer)
        continue;
      Operation *ancestor = block->findAncestorOpInBlock(*user);
      if (!ancestor || !consumer->isBeforeInBlock(ancestor))
        return nullptr;
    }
    return producer;
  }

  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    linalg::GenericOp producer;
    for (OpOperand &operand : consumer->getOpOperands())
      if ((producer = fusable(operand)))
        break;
    if (!producer)
      return failure();

    // Producer results read after the fusion.
    SmallVector<unsigned> kept;
    for (OpResult result : producer->getResults())
      if (llvm::any_of(result.getUsers(),
                       [&](Operation *user) { return user != consumer; }))
        kept.push_back(result.getResultNumber());

    // Operands: the producer's inputs, the consumer's inputs that the
    // producer does not define, the kept producer outputs, the consumer's
    // outputs.
    SmallVector<Value> inputs(producer.getDpsInputs());
    SmallVector<OpOperand *> consumerInputs;
    for (OpOperand *operand : consumer.getDpsInputOperands())
      if (operand->get().getDefiningOp() != producer.getOperation()) {
        consumerInputs.push_back(operand);
        inputs.push_back(operand->get());
      }
    SmallVector<Value> outputs;
    SmallVector<Type> resultTypes;
    for (unsigned i : kept) {
      outputs.push_back(producer.getDpsInits()[i]);
      resultTypes.push_back(producer->getResult(i).getType());
    }
    for (Value init : consumer.getDpsInits()) {
      outputs.push_back(init);
      resultTypes.push_back(init.getType());
    }
    AffineMap id = consumer.getIndexingMapsArray().front();
    SmallVector<AffineMap> maps(inputs.size() + outputs.size(), id);

    rewriter.setInsertionPoint(consumer);
    auto fused = linalg::GenericOp::create(
        rewriter, consumer.getLoc(), resultTypes, inputs, outputs,
        rewriter.getAffineMapArrayAttr(maps), consumer.getIteratorTypes(),
        /*doc=*/nullptr, /*library_call=*/nullptr);

    Block &producerBlock = producer->getRegion(0).front();
    Block &consumerBlock = consumer->getRegion(0).front();
    Block *block = rewriter.createBlock(&fused.getRegion());
    IRMapping mapper;
    auto addArg = [&](BlockArgument arg) {
      mapper.map(arg, block->addArgument(arg.getType(), arg.getLoc()));
    };
    for (BlockArgument arg :
         producerBlock.getArguments().take_front(producer.getNumDpsInputs()))
      addArg(arg);
    for (OpOperand *operand : consumerInputs)
      addArg(consumerBlock.getArgument(operand->getOperandNumber()));
    for (unsigned i : kept)
      addArg(producerBlock.getArgument(producer.getNumDpsInputs() + i));
    for (BlockArgument arg :
         consumerBlock.getArguments().take_back(consumer.getNumDpsInits()))
      addArg(arg);
    // The producer's payload reads none of its outputs (checked above), so
    // the outputs not kept need no block argument.
    for (auto &op : producerBlock.without_terminator())
      rewriter.clone(op, mapper);
    auto producerYield = cast<linalg::YieldOp>(producerBlock.getTerminator());
    for (OpOperand *operand : consumer.getDpsInputOperands())
      if (auto result = dyn_cast<OpResult>(operand->get());
          result && result.getOwner() == producer.getOperation())
        mapper.map(
            consumerBlock.getArgument(operand->getOperandNumber()),
            mapper.lookupOrDefault(
                producerYield.getOperand(result.getResultNumber())));
    for (auto &op : consumerBlock.without_terminator())
      rewriter.clone(op, mapper);
    auto consumerYield = cast<linalg::YieldOp>(consumerBlock.getTerminator());
    SmallVector<Value> yielded;
    for (unsigned i : kept)
      yielded.push_back(mapper.lookupOrDefault(producerYield.getOperand(i)));
    for (Value v : consumerYield.getOperands())
      yielded.push_back(mapper.lookupOrDefault(v));
    linalg::YieldOp::create(rewriter, consumer.getLoc(), yielded);

    // The kept producer results are read, after the consumer, from the fused
    // op; the consumer's results likewise.
    for (auto [n, i] : llvm::enumerate(kept))
      rewriter.replaceUsesWithIf(producer->getResult(i), fused->getResult(n),
                                 [&](OpOperand &use) {
                                   return use.getOwner() != consumer;
                                 });
    rewriter.replaceOp(consumer,
                       fused->getResults().drop_front(kept.size()));
    rewriter.eraseOp(producer);
    return success();
  }

  int64_t bound;
};

struct PallasCpuFuseElementwisePass
    : pallas::impl::PallasCpuFuseElementwiseBase<PallasCpuFuseElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    Operation *op = getOperation();
    MLIRContext *context = op->getContext();
    int64_t bound = maxBodyOps;
    // Upstream's rule (a producer with one use) ...
    linalg::ControlFusionFn oneUse = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      return producer && producer->hasOneUse();
    };
    // ... and, for elementwise fusion, the bound on the fused body.
    linalg::ControlFusionFn bounded = [bound](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      if (!producer || !producer->hasOneUse())
        return false;
      return bodyOps(producer) + bodyOps(fused->getOwner()) <= bound;
    };

    RewritePatternSet patterns(context);
    linalg::populateElementwiseOpsFusionPatterns(patterns, bounded);
    patterns.add<FuseMultiUseProducer>(context, bound);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, oneUse);
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()
        ->getCanonicalizationPatterns(patterns);
    linalg::populateConstantFoldLinalgOperations(patterns, oneUse);
    (void)applyPatternsGreedily(op, std::move(patterns),
                                GreedyRewriteConfig().setUseTopDownTraversal());
  }
};

} // namespace
