//===- PallasToTPU.cpp - pallas-to-tpu ---------------------------*- C++ -*-===//
//
// The call level of the TPU lowering: what jax/_src/pallas/mosaic/lowering.py
// (lower_jaxpr_into_pipelined_module, MosaicGridMapping,
// _check_block_mappings, lower_jaxpr_to_transform_func) does around the
// kernel body: the kernel signature and attributes, the window params, the
// transform functions and the TPU block-shape rules. The body itself is
// lowered by KernelBody.cpp.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToTPU/Lowering.h"
#include "dialects/Pallas/IR/GridMapping.h"
#include "passes/Conversion/Passes.h"
#include "passes/Utils/IndexMapExpr.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#define DEBUG_TYPE "pallas-to-tpu"

namespace mlir::pallas {
#define GEN_PASS_DEF_PALLASTOTPU
#include "passes/Conversion/Passes.h.inc"
} // namespace mlir::pallas

using namespace mlir;
using namespace mlir::pallas;
using namespace mlir::pallas::tpu_lowering;

namespace {

/// One blocked operand of the call (an in_spec or an out_spec).
struct BlockOperand {
  std::string name; ///< "in_specs[i]" / "out_specs[i]"
  BlockSpecAttr spec;
  RankedTensorType array;
  tpu::MemorySpace space = tpu::MemorySpace::kVmem;
  bool windowed = true; ///< false for any/hbm/semaphore operands
  bool trivialWindow = false;
};

std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

std::string typeString(Type t) {
  if (t.isInteger(1))
    return "bool";
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}

/// The block shape as the spec wrote it: `null` for squeezed dims.
std::string blockShapeString(BlockSpecAttr spec) {
  std::string s = "[";
  for (unsigned i = 0, e = spec.getRank(); i < e; ++i) {
    s += i ? ", " : "";
    switch (spec.getKind(i)) {
    case BlockDimKind::Blocked:
      s += std::to_string(spec.getSizes()[i]);
      break;
    case BlockDimKind::Squeezed:
      s += "null";
      break;
    case BlockDimKind::Element:
      s += "element(" + std::to_string(spec.getSizes()[i]) + ")";
      break;
    }
  }
  return s + "]";
}

/// The block's sizes with squeezed dims as 1 (Mosaic's window bounds).
SmallVector<int64_t> windowBounds(const BlockOperand &op) {
  if (op.spec.isWholeArray())
    return SmallVector<int64_t>(op.array.getShape());
  return SmallVector<int64_t>(op.spec.getSizes());
}

Type memrefElementType(Type t) {
  // Mosaic keeps booleans in memory as i32.
  return t.isInteger(1) ? IntegerType::get(t.getContext(), 32) : t;
}

FailureOr<tpu::MemorySpace> toTpuSpace(Operation *diagOp,
                                       const std::string &name,
                                       MemorySpace ms) {
  switch (ms) {
  case MemorySpace::Default:
  case MemorySpace::Vmem:
    return tpu::MemorySpace::kVmem;
  case MemorySpace::Smem:
    return tpu::MemorySpace::kSmem;
  case MemorySpace::Any:
    return tpu::MemorySpace::kAny;
  case MemorySpace::Hbm:
    return tpu::MemorySpace::kHbm;
  case MemorySpace::Semaphore:
    return tpu::MemorySpace::kSemaphoreMem;
  case MemorySpace::Gmem:
    break;
  }
  diagOp->emitError() << name
                      << ": memory space gmem is GPU-only; TPU kernels use "
                         "vmem, smem, any, hbm or semaphore";
  return failure();
}

MemRefType makeMemRef(ArrayRef<int64_t> shape, Type element,
                      tpu::MemorySpace space) {
  MLIRContext *ctx = element.getContext();
  return MemRefType::get(shape, element, MemRefLayoutAttrInterface(),
                         tpu::MemorySpaceAttr::get(ctx, space));
}

/// True when the block is the whole array and the index map is all zeros
/// (BlockMapping.has_trivial_window).
bool hasTrivialWindow(BlockSpecAttr spec, RankedTensorType array) {
  if (spec.isWholeArray())
    return true;
  if (!llvm::equal(spec.getSizes(), array.getShape()))
    return false;
  AffineMap map = spec.getIndexMap();
  if (!map)
    return false;
  return llvm::all_of(map.getResults(), [](AffineExpr e) {
    auto c = dyn_cast<AffineConstantExpr>(e);
    return c && c.getValue() == 0;
  });
}

/// `_check_block_mappings`: the TPU's tiling rules for one block.
LogicalResult checkBlockShape(Operation *diagOp, const BlockOperand &op) {
  if (op.space == tpu::MemorySpace::kSemaphoreMem)
    return success();
  if (op.space == tpu::MemorySpace::kSmem && op.trivialWindow)
    return success();
  if (op.spec.isWholeArray())
    return success();
  BlockSpecAttr spec = op.spec;
  unsigned rank = spec.getRank();
  Type elem = op.array.getElementType();
  std::string what = op.name + ": block shape " + blockShapeString(spec) +
                     " for " + typeString(elem) + " array " +
                     shapeString(op.array.getShape());
  if (rank < 1)
    return diagOp->emitError()
           << op.name << ": the TPU lowering supports only blocks of rank >= 1";
  if ((op.space == tpu::MemorySpace::kAny ||
       op.space == tpu::MemorySpace::kHbm) &&
      !op.trivialWindow)
    return diagOp->emitError()
           << what
           << ": an operand in memory space "
           << tpu::stringifyMemorySpace(op.space)
           << " must be the whole array with an all-zero index map on TPU";
  bool anyElement = false, allElementOrSqueezed = true;
  for (unsigned i = 0; i < rank; ++i) {
    anyElement |= spec.getKind(i) == BlockDimKind::Element;
    allElementOrSqueezed &= spec.getKind(i) != BlockDimKind::Blocked;
  }
  if (anyElement && !allElementOrSqueezed)
    return diagOp->emitError()
           << what
           << ": when one block dim is an element dim, all must be element or "
              "squeezed dims on TPU";
  ArrayRef<int64_t> bs = spec.getSizes(), as = op.array.getShape();
  int64_t bs0 = bs[rank - 1], as0 = as[rank - 1];
  if (rank >= 2) {
    int64_t bs1 = bs[rank - 2], as1 = as[rank - 2];
    if (!((bs0 == as0 || bs0 % 128 == 0) && (bs1 == as1 || bs1 % 8 == 0)))
      return diagOp->emitError()
             << what
             << ": the last two dims must be divisible by 8 and 128, or equal "
                "the array's";
    return success();
  }
  unsigned bitwidth =
      elem.isInteger(1) ? 32 : std::max(1u, elem.getIntOrFloatBitWidth());
  int64_t packing = std::max<int64_t>(1, 32 / bitwidth);
  constexpr int64_t kLanes = 128, kSublanes = 8;
  int64_t minTiling = kLanes * packing, chunk = kSublanes * kLanes;
  if (bs0 == as0 || bs0 % chunk == 0 ||
      (bs0 >= minTiling && llvm::isPowerOf2_64(bs0)))
    return success();
  return diagOp->emitError()
         << what << ": a rank-1 block must equal the array's size, be a "
         << "multiple of " << chunk << ", or be a power of 2 of at least "
         << minTiling << " (128 * 32 / " << bitwidth << ")";
}

/// `pipeline_mode=pl.Buffered(n)`: Mosaic pipelines a block with one or two
/// buffers (JAX's lowering refuses more).
LogicalResult checkBufferCount(Operation *diagOp, const BlockOperand &op) {
  int64_t buffers = op.spec.getBufferCount();
  if (buffers <= 2 ||
      (op.space == tpu::MemorySpace::kVmem && op.trivialWindow))
    return success();
  return diagOp->emitError()
         << op.name << ": buffer_count " << buffers
         << " (pipeline_mode=pl.Buffered(" << buffers
         << ")): the TPU pipeline supports only single (1) and double (2) "
            "buffering, as JAX's Mosaic lowering";
}

/// dimension_semantics: the user's, one per kernel-visible axis (the call's
/// verifier holds it to that rank), default arbitrary as Mosaic's; vmapped
/// axes are parallel.
LogicalResult collectSemantics(CallOp call, const GridMapping &mapping,
                               int64_t gridRank,
                               SmallVectorImpl<Attribute> &semantics) {
  MLIRContext *ctx = call.getContext();
  for (int64_t d = 0; d < gridRank; ++d) {
    StringRef s = stringifyDimensionSemantics(
        mapping.getAxisSemantics(d, DimensionSemantics::Arbitrary));
    std::optional<tpu::DimensionSemantics> sem =
        tpu::symbolizeDimensionSemantics(s);
    if (!sem)
      return call.emitError() << "unknown dimension semantics '" << s << "'";
    semantics.push_back(tpu::DimensionSemanticsAttr::get(ctx, *sem));
  }
  return success();
}

/// The blocked inputs and outputs, each checked against Mosaic's rules.
LogicalResult collectBlocks(CallOp call, int64_t gridRank,
                            SmallVectorImpl<BlockOperand> &blocks) {
  auto addBlock = [&](const std::string &name, Attribute spec, Type array) {
    BlockOperand op;
    op.name = name;
    op.spec = cast<BlockSpecAttr>(spec);
    op.array = cast<RankedTensorType>(array);
    FailureOr<tpu::MemorySpace> space =
        toTpuSpace(call, name, op.spec.getMemorySpace());
    if (failed(space))
      return failure();
    op.space = *space;
    op.windowed = op.space != tpu::MemorySpace::kAny &&
                  op.space != tpu::MemorySpace::kHbm &&
                  op.space != tpu::MemorySpace::kSemaphoreMem;
    op.trivialWindow = hasTrivialWindow(op.spec, op.array);
    if (failed(checkBlockShape(call, op)) ||
        failed(checkBufferCount(call, op)))
      return failure();
    blocks.push_back(op);
    return success();
  };
  for (auto [i, spec] : llvm::enumerate(call.getInSpecs()))
    if (failed(addBlock("in_specs[" + std::to_string(i) + "]", spec,
                        call.getBlockedInputs()[i].getType())))
      return failure();
  for (auto [i, spec] : llvm::enumerate(call.getOutSpecs()))
    if (failed(addBlock("out_specs[" + std::to_string(i) + "]", spec,
                        call.getResult(i).getType())))
      return failure();
  if (gridRank == 0)
    for (const BlockOperand &op : blocks)
      if (!op.trivialWindow)
        return call.emitError() << op.name
                                << ": a pallas_call without a grid supports "
                                   "only whole-array blocks on TPU";
  return success();
}

/// The Mosaic kernel's refs, in argument order: scalar prefetch (also in
/// `prefetchTypes`), the blocks, scratch; each checked against the kernel's
/// argument, and appended to `argTypes`.
LogicalResult collectRefs(CallOp call, KernelOp kernel,
                          ArrayRef<BlockOperand> blocks,
                          SmallVectorImpl<RefInfo> &infos,
                          SmallVectorImpl<Type> &prefetchTypes,
                          SmallVectorImpl<Type> &argTypes) {
  MLIRContext *ctx = call.getContext();
  int64_t nsp = call.getNumScalarPrefetch();
  for (int64_t i = 0; i < nsp; ++i) {
    auto array = cast<RankedTensorType>(call.getInputs()[i].getType());
    RefInfo info;
    info.type = makeMemRef(array.getShape(),
                           memrefElementType(array.getElementType()),
                           tpu::MemorySpace::kSmem);
    info.squeezed.assign(array.getRank(), false);
    info.boolAsI32 = array.getElementType().isInteger(1);
    info.name = "inputs[" + std::to_string(i) + "] (scalar prefetch)";
    prefetchTypes.push_back(info.type);
    infos.push_back(info);
  }
  for (const BlockOperand &op : blocks) {
    RefInfo info;
    SmallVector<int64_t> shape = windowBounds(op);
    info.type = makeMemRef(shape, memrefElementType(op.array.getElementType()),
                           op.space);
    info.squeezed.assign(shape.size(), false);
    if (!op.spec.isWholeArray())
      for (unsigned d = 0, e = op.spec.getRank(); d < e; ++d)
        info.squeezed[d] = op.spec.getKind(d) == BlockDimKind::Squeezed;
    info.boolAsI32 = op.array.getElementType().isInteger(1);
    info.name = op.name;
    infos.push_back(info);
  }
  for (auto [i, attr] : llvm::enumerate(call.getScratch())) {
    auto ref = cast<RefType>(cast<TypeAttr>(attr).getValue());
    std::string name = "scratch[" + std::to_string(i) + "]";
    FailureOr<tpu::MemorySpace> space =
        toTpuSpace(call, name, ref.getMemorySpace());
    if (failed(space))
      return failure();
    RefInfo info;
    // A semaphore the kernel hands to DMAs is a DMA semaphore
    // (pltpu.SemaphoreType.DMA), any other a regular one.
    Type elem = memrefElementType(ref.getElementType());
    if (*space == tpu::MemorySpace::kSemaphoreMem) {
      elem = tpu::SemaphoreType::get(ctx);
      size_t argIndex = infos.size();
      if (argIndex < kernel.getNumArguments() &&
          llvm::any_of(kernel.getArgument(argIndex).getUsers(),
                       [](Operation *user) {
                         return isDmaSemaphoreUser(user);
                       }))
        elem = tpu::DMASemaphoreType::get(ctx);
    }
    info.type = makeMemRef(ref.getShape(), elem, *space);
    info.squeezed.assign(ref.getRank(), false);
    info.boolAsI32 = ref.getElementType().isInteger(1);
    info.name = name;
    infos.push_back(info);
  }
  if (kernel.getNumArguments() != infos.size())
    return kernel.emitError()
           << "the kernel takes " << kernel.getNumArguments()
           << " refs but the call provides " << infos.size();
  for (auto [info, type] : llvm::zip(infos, kernel.getArgumentTypes())) {
    info.refType = dyn_cast<RefType>(type);
    if (!info.refType)
      return kernel.emitError()
             << "kernel argument of type " << type << " is not a ref";
    argTypes.push_back(info.type);
  }
  return success();
}

/// A symbolic array in memory space `any` reaches the kernel whole, with
/// dynamic dimensions. JAX's Mosaic lowering (under
/// pallas_export_experimental(dynamic_shapes=True), which such a call needs)
/// gives each one the placeholder of its symbol, kSymbolPlaceholderTop - k
/// for the k-th symbol met, the kernel's signature first; the module then
/// says where each placeholder's value comes from
/// (describeSymbolPlaceholders). Replaces the dynamic dimensions of `infos`
/// (and their `argTypes`) by those placeholders.
LogicalResult placeholderDims(CallOp call, ArrayRef<BlockOperand> blocks,
                              MutableArrayRef<RefInfo> infos,
                              MutableArrayRef<Type> argTypes,
                              SmallVectorImpl<std::string> &symbolsRead) {
  DictionaryAttr sym = call.getSymbolicAttr();
  auto symbols = sym ? sym.getAs<DictionaryAttr>("symbols") : DictionaryAttr();
  int64_t nsp = call.getNumScalarPrefetch();
  int64_t numBlockedInputs = call.getBlockedInputs().size();
  for (auto [j, op] : llvm::enumerate(blocks)) {
    RefInfo &info = infos[nsp + j];
    if (info.type.hasStaticShape())
      continue;
    bool input = static_cast<int64_t>(j) < numBlockedInputs;
    int64_t index = input ? nsp + j : j - numBlockedInputs;
    std::string operand = (input ? "inputs[" : "outputs[") +
                          std::to_string(index) + "]";
    auto exprs = sym ? sym.getAs<ArrayAttr>(input ? "inputs" : "outputs")
                     : ArrayAttr();
    SmallVector<int64_t> shape(info.type.getShape());
    for (auto [d, dim] : llvm::enumerate(shape)) {
      if (!ShapedType::isDynamic(dim))
        continue;
      StringRef expr;
      if (exprs && index < static_cast<int64_t>(exprs.size()))
        if (auto dims = dyn_cast<ArrayAttr>(exprs[index]))
          if (d < dims.size())
            if (auto e = dyn_cast<StringAttr>(dims[d]))
              expr = e.getValue();
      if (!symbols || !symbols.get(expr))
        return call.emitError()
               << op.name << ": dimension " << d << " of " << operand
               << " is '" << expr
               << "' in memory space 'any'; on TPU a dynamic dimension of an "
                  "'any' ref must be exactly one symbol (JAX's Mosaic "
                  "lowering gives it that symbol's placeholder)";
      auto *it = llvm::find(symbolsRead, expr.str());
      if (it == symbolsRead.end()) {
        symbolsRead.push_back(expr.str());
        it = symbolsRead.end() - 1;
      }
      dim = kSymbolPlaceholderTop - (it - symbolsRead.begin());
    }
    info.type = MemRefType::get(shape, info.type.getElementType(),
                                info.type.getLayout(),
                                info.type.getMemorySpace());
    argTypes[nsp + j] = info.type;
  }
  return success();
}

/// Block `op`'s transform function `fname` (grid indices and the
/// scalar-prefetch refs to the block indices), at the end of `module`: its
/// affine index map expanded, or its index-map function cloned and lowered.
FailureOr<func::FuncOp> buildTransform(OpBuilder &b, ModuleOp module,
                                       CallOp call, const BlockOperand &op,
                                       const std::string &fname,
                                       const GridInfo &grid,
                                       ArrayRef<RefInfo> infos,
                                       ArrayRef<Type> prefetchTypes) {
  int64_t gridRank = grid.grid.size();
  int64_t nsp = call.getNumScalarPrefetch();
  Location callLoc = call.getLoc();
  b.setInsertionPointToEnd(module.getBody());
  func::FuncOp transform;
  SmallVector<Type> tArgs(gridRank, b.getI32Type());
  tArgs.append(prefetchTypes.begin(), prefetchTypes.end());
  SmallVector<Type> tResults(op.array.getRank(), b.getI32Type());
  if (AffineMap map = op.spec.getIndexMap()) {
    transform = func::FuncOp::create(b, callLoc, fname,
                                     b.getFunctionType(tArgs, tResults));
    Block *tb = transform.addEntryBlock();
    OpBuilder tbld = OpBuilder::atBlockEnd(tb);
    SmallVector<Value> results;
    for (AffineExpr e : map.getResults())
      results.push_back(expandIndexMapExpr(
          tbld, callLoc, e, tb->getArguments().take_front(gridRank),
          tbld.getI32Type(), IndexMapArith::TruncatingOps));
    func::ReturnOp::create(tbld, callLoc, results);
    return transform;
  }
  auto indexFunc = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      call, op.spec.getIndexFunc());
  if (!indexFunc || indexFunc.isExternal())
    return call.emitError() << op.name << ": index map @"
                            << op.spec.getIndexFunc().getValue()
                            << " is not a func.func with a body";
  if (indexFunc.getNumArguments() != tArgs.size() ||
      indexFunc.getNumResults() != tResults.size())
    return indexFunc.emitError()
           << op.name << ": the TPU transform function must take "
           << gridRank << " grid indices and " << nsp
           << " scalar-prefetch refs and return " << tResults.size()
           << " indices; @" << indexFunc.getName() << " takes "
           << indexFunc.getNumArguments() << " and returns "
           << indexFunc.getNumResults();
  transform = cast<func::FuncOp>(b.clone(*indexFunc));
  transform.setSymName(fname);
  transform.setFunctionType(b.getFunctionType(tArgs, tResults));
  transform.setVisibility(SymbolTable::Visibility::Public);
  Block &tb = transform.getBody().front();
  llvm::DenseMap<Value, RefInfo> prefetchRefs;
  for (int64_t i = 0; i < nsp; ++i) {
    BlockArgument arg = tb.getArgument(gridRank + i);
    RefInfo info = infos[i];
    info.refType = dyn_cast<RefType>(arg.getType());
    if (!info.refType)
      return indexFunc.emitError()
             << op.name << ": argument " << gridRank + i << " of @"
             << indexFunc.getName() << " must be a scalar-prefetch ref";
    arg.setType(info.type);
    prefetchRefs[arg] = info;
  }
  GridInfo noGrid; // index maps see grid indices as arguments
  noGrid.grid = grid.grid;
  noGrid.vmappedDims = grid.vmappedDims;
  if (failed(lowerBody(transform.getBody(), noGrid, prefetchRefs)))
    return failure();
  return transform;
}

/// Block `op`'s window_params entry: its transform, window bounds, element
/// padding and pipeline mode (checked by checkBufferCount).
DictionaryAttr windowParamsOf(OpBuilder &b, const BlockOperand &op,
                              const std::string &fname) {
  MLIRContext *ctx = b.getContext();
  SmallVector<NamedAttribute> params;
  params.push_back(b.getNamedAttr("transform_indices",
                                  FlatSymbolRefAttr::get(ctx, fname)));
  params.push_back(b.getNamedAttr(
      "window_bounds", b.getDenseI64ArrayAttr(windowBounds(op))));
  bool element = false;
  SmallVector<int64_t> lo, hi;
  for (unsigned d = 0, e = op.spec.getRank(); d < e; ++d) {
    bool isElement = op.spec.getKind(d) == BlockDimKind::Element;
    element |= isElement;
    lo.push_back(isElement ? op.spec.getPadLow()[d] : 0);
    hi.push_back(isElement ? op.spec.getPadHigh()[d] : 0);
  }
  if (element)
    params.push_back(b.getNamedAttr(
        "window_kind", tpu::ElementWindowAttr::get(ctx, lo, hi)));
  // Pallas single-buffers VMEM blocks that never move, whatever their
  // pl.Buffered; else a buffer count gives the mode: 1 synchronous, 2
  // double-buffered (none without one).
  int64_t buffers = op.spec.getBufferCount();
  if (op.space == tpu::MemorySpace::kVmem && op.trivialWindow)
    buffers = 1;
  if (buffers == 1 || buffers == 2) {
    tpu::PipelineMode mode = buffers == 1 ? tpu::PipelineMode::kSynchronous
                                          : tpu::PipelineMode::kDoubleBuffered;
    params.push_back(b.getNamedAttr("pipeline_mode",
                                    tpu::PipelineModeAttr::get(ctx, mode)));
  }
  return b.getDictionaryAttr(params);
}

struct PallasToTPUPass
    : public mlir::pallas::impl::PallasToTPUBase<PallasToTPUPass> {
  using PallasToTPUBase::PallasToTPUBase;
  void runOnOperation() override;
};

} // namespace

/// The module attributes JAX's Mosaic lowering writes for each placeholder
/// of a symbolic dimension (jax/_src/pallas/mosaic/lowering.py, "On Export
/// Placeholders"): `tpu.dynamic_dimension_mapping_indices_<P>`, where each
/// symbol is found among the custom call's operands (the dynamic grid bounds,
/// then the inputs), and `tpu.dynamic_dimension_mapping_module_<P>`, a
/// StableHLO module computing the placeholder's value from the symbols
/// (sorted by name): here the symbol itself.
static LogicalResult
describeSymbolPlaceholders(ModuleOp module, CallOp call,
                           ArrayRef<std::string> symbolsRead) {
  if (symbolsRead.empty())
    return success();
  DictionaryAttr sym = call.getSymbolicAttr();
  auto symbols = sym ? sym.getAs<DictionaryAttr>("symbols") : DictionaryAttr();
  if (!symbols)
    return call.emitError() << "the kernel reads symbol '"
                            << symbolsRead.front()
                            << "' but the call is not symbolic";
  int64_t numBounds = llvm::count_if(call.getGrid(),
                                     [](int64_t g) { return g < 0; });
  auto inputs = sym.getAs<ArrayAttr>("inputs");
  Builder b(module.getContext());
  SmallVector<Attribute> locations;
  SmallVector<std::string> names;
  for (NamedAttribute s : symbols) {
    StringRef name = s.getName().getValue();
    names.push_back(name.str());
    std::optional<std::pair<int64_t, int64_t>> at;
    for (auto [i, dims] : llvm::enumerate(inputs))
      for (auto [d, e] : llvm::enumerate(cast<ArrayAttr>(dims)))
        if (!at && cast<StringAttr>(e).getValue() == name)
          at = {numBounds + static_cast<int64_t>(i), static_cast<int64_t>(d)};
    if (!at)
      return call.emitError()
             << "the kernel reads a symbol's value, which the TPU runtime "
                "takes from an input dimension that is exactly each symbol, "
                "but no input dimension is '"
             << name << "'";
    locations.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("dimension_index", b.getI64IntegerAttr(at->second)),
         b.getNamedAttr("operand_index", b.getI64IntegerAttr(at->first))}));
  }
  for (auto [k, name] : llvm::enumerate(symbolsRead)) {
    std::string p = std::to_string(kSymbolPlaceholderTop -
                                   static_cast<int64_t>(k));
    int64_t index = llvm::find(names, name) - names.begin();
    std::string args;
    for (size_t a = 0; a < names.size(); ++a)
      args += (a ? ", " : "") + ("%arg" + std::to_string(a)) +
              ": tensor<i32>";
    std::string text =
        "module @jit_evaluate_shape attributes {jax.uses_shape_polymorphism "
        "= false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : "
        "i32} {\n  func.func public @main(" +
        args +
        ") -> (tensor<i32> {jax.result_info = \"result[0]\"}) {\n    "
        "return %arg" +
        std::to_string(index) + " : tensor<i32>\n  }\n}\n";
    module->setAttr("tpu.dynamic_dimension_mapping_indices_" + p,
                    b.getArrayAttr(locations));
    module->setAttr("tpu.dynamic_dimension_mapping_module_" + p,
                    b.getStringAttr(text));
  }
  return success();
}

void PallasToTPUPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();

  SmallVector<CallOp> calls;
  module.walk([&](CallOp c) { calls.push_back(c); });
  if (calls.size() != 1) {
    module.emitError() << "pallas-to-tpu lowers one pallas.call; the module "
                          "holds "
                       << calls.size();
    return signalPassFailure();
  }
  CallOp call = calls.front();
  auto kernel = SymbolTable::lookupNearestSymbolFrom<KernelOp>(
      call, call.getKernelAttr());
  if (!kernel) {
    call.emitError() << "no pallas.kernel @" << call.getKernel();
    return signalPassFailure();
  }

  // The grid, as the kernel sees it and as Mosaic iterates it.
  GridMapping mapping = GridMapping::get(call);
  GridInfo grid;
  grid.grid.assign(mapping.getGrid().begin(), mapping.getGrid().end());
  grid.vmappedDims.assign(mapping.getVmappedAxes().begin(),
                          mapping.getVmappedAxes().end());
  int64_t gridRank = grid.grid.size();
  SmallVector<Attribute> semantics;
  if (failed(collectSemantics(call, mapping, gridRank, semantics)))
    return signalPassFailure();

  // Operands: scalar prefetch, blocked inputs and outputs, scratch.
  int64_t nsp = call.getNumScalarPrefetch();
  SmallVector<BlockOperand> blocks;
  if (failed(collectBlocks(call, gridRank, blocks)))
    return signalPassFailure();
  SmallVector<Type> argTypes(gridRank, IntegerType::get(ctx, 32));
  SmallVector<RefInfo> infos;
  SmallVector<Type> prefetchTypes;
  if (failed(collectRefs(call, kernel, blocks, infos, prefetchTypes,
                         argTypes)))
    return signalPassFailure();
  SmallVector<std::string> symbolsRead;
  if (failed(placeholderDims(call, blocks, infos,
                             MutableArrayRef<Type>(argTypes).drop_front(gridRank),
                             symbolsRead)))
    return signalPassFailure();

  // The kernel function, named as the pallas_call.
  std::string name = call.getName() && !call.getName()->empty()
                         ? call.getName()->str()
                         : call.getKernel().str();
  if (StringRef(name).starts_with("transform_")) {
    call.emitError() << "kernel name '" << name
                     << "' clashes with Mosaic's transform_<i> functions";
    return signalPassFailure();
  }
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(b, kernel.getLoc(), name,
                                   b.getFunctionType(argTypes, {}));
  SmallVector<Operation *> created{func};
  func.getBody().takeBody(kernel.getBody());
  Block &entry = func.getBody().front();
  for (int64_t d = 0; d < gridRank; ++d)
    grid.indices.push_back(
        entry.insertArgument(d, b.getI32Type(), kernel.getLoc()));
  llvm::DenseMap<Value, RefInfo> refs;
  for (auto [i, info] : llvm::enumerate(infos)) {
    BlockArgument arg = entry.getArgument(gridRank + i);
    arg.setType(info.type);
    refs[arg] = info;
  }
  grid.symbolsRead = &symbolsRead;
  if (failed(lowerBody(func.getBody(), grid, refs)))
    return signalPassFailure();
  if (failed(describeSymbolPlaceholders(module, call, symbolsRead)))
    return signalPassFailure();

  func->setAttr("tpu.core_type",
                tpu::CoreTypeAttr::get(ctx, tpu::CoreType::kTc));
  if (gridRank > 0) {
    SmallVector<Attribute> windowParams;
    int64_t nextTransform = 0;
    for (const BlockOperand &op : blocks) {
      int64_t index = nextTransform++;
      if (!op.windowed) {
        windowParams.push_back(b.getDictionaryAttr({}));
        continue;
      }
      std::string fname = "transform_" + std::to_string(index);
      FailureOr<func::FuncOp> transform = buildTransform(
          b, module, call, op, fname, grid, infos, prefetchTypes);
      if (failed(transform))
        return signalPassFailure();
      created.push_back(*transform);
      windowParams.push_back(windowParamsOf(b, op, fname));
    }
    func->setAttr("window_params", b.getArrayAttr(windowParams));
    SmallVector<int64_t> bounds;
    for (int64_t g : grid.grid)
      bounds.push_back(g < 0 ? ShapedType::kDynamic : g);
    func->setAttr("iteration_bounds", b.getDenseI64ArrayAttr(bounds));
  }
  func->setAttr("scalar_prefetch", b.getI64IntegerAttr(nsp));
  func->setAttr("scratch_operands",
                b.getI64IntegerAttr(call.getScratch().size()));
  func->setAttr("dimension_semantics", b.getArrayAttr(semantics));

  // The module now holds only the Mosaic kernel and its transforms.
  for (Operation &op : llvm::make_early_inc_range(*module.getBody()))
    if (!llvm::is_contained(created, &op))
      op.erase();
}
