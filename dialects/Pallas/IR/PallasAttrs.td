//===- PallasAttrs.td - pallas enums and attributes --------*- tablegen -*-===//

#ifndef PALLAS_ATTRS_TD
#define PALLAS_ATTRS_TD

include "dialects/Pallas/IR/PallasDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Pallas_MemorySpace : I32EnumAttr<"MemorySpace", "memory space of a ref", [
    I32EnumAttrCase<"Default", 0, "default">,
    I32EnumAttrCase<"Any", 1, "any">,
    I32EnumAttrCase<"Smem", 2, "smem">,
    I32EnumAttrCase<"Vmem", 3, "vmem">,
    I32EnumAttrCase<"Gmem", 4, "gmem">,
    I32EnumAttrCase<"Hbm", 5, "hbm">,
    I32EnumAttrCase<"Semaphore", 6, "semaphore">]> {
  let cppNamespace = "::mlir::pallas";
  let genSpecializedAttr = 0;
}
def Pallas_MemorySpaceAttr : EnumAttr<Pallas_Dialect, Pallas_MemorySpace,
                                      "memory_space"> {
  let assemblyFormat = "`<` $value `>`";
}

def Pallas_ReduceKind : I32EnumAttr<"ReduceKind", "reduction kind", [
    I32EnumAttrCase<"Sum", 0, "sum">,
    I32EnumAttrCase<"Max", 1, "max">,
    I32EnumAttrCase<"Min", 2, "min">,
    I32EnumAttrCase<"Argmax", 3, "argmax">,
    I32EnumAttrCase<"Argmin", 4, "argmin">]> {
  let cppNamespace = "::mlir::pallas";
  let genSpecializedAttr = 0;
}
def Pallas_ReduceKindAttr : EnumAttr<Pallas_Dialect, Pallas_ReduceKind,
                                     "reduce_kind">;

def Pallas_AtomicKind : I32EnumAttr<"AtomicKind", "atomic read-modify-write", [
    I32EnumAttrCase<"Add", 0, "add">,
    I32EnumAttrCase<"Max", 1, "max">,
    I32EnumAttrCase<"Min", 2, "min">,
    I32EnumAttrCase<"And", 3, "and">,
    I32EnumAttrCase<"Or", 4, "or">,
    I32EnumAttrCase<"Xor", 5, "xor">,
    I32EnumAttrCase<"Xchg", 6, "xchg">]> {
  let cppNamespace = "::mlir::pallas";
  let genSpecializedAttr = 0;
}
def Pallas_AtomicKindAttr : EnumAttr<Pallas_Dialect, Pallas_AtomicKind,
                                     "atomic_kind">;

def Pallas_DotPrecision : I32EnumAttr<"DotPrecision", "dot precision", [
    I32EnumAttrCase<"Default", 0, "default">,
    I32EnumAttrCase<"High", 1, "high">,
    I32EnumAttrCase<"Highest", 2, "highest">]> {
  let cppNamespace = "::mlir::pallas";
  let genSpecializedAttr = 0;
}
def Pallas_DotPrecisionAttr : EnumAttr<Pallas_Dialect, Pallas_DotPrecision,
                                       "precision"> {
  let assemblyFormat = "`<` $value `>`";
}

def Pallas_DimensionSemantics : I32EnumAttr<"DimensionSemantics",
    "how the iterations of one grid axis may run", [
    I32EnumAttrCase<"Parallel", 0, "parallel">,
    I32EnumAttrCase<"Arbitrary", 1, "arbitrary">,
    I32EnumAttrCase<"CoreParallel", 2, "core_parallel">,
    I32EnumAttrCase<"SubcoreParallel", 3, "subcore_parallel">]> {
  let cppNamespace = "::mlir::pallas";
  let genSpecializedAttr = 0;
}

def Pallas_SideEffectType : I32EnumAttr<"SideEffectType",
    "the side effects a pallas_call declares (jax's SideEffectType)", [
    I32EnumAttrCase<"Pure", 0, "pure">,
    I32EnumAttrCase<"DataflowSideEffecting", 1, "dataflow_side_effecting">,
    I32EnumAttrCase<"SideEffecting", 2, "side_effecting">]> {
  let cppNamespace = "::mlir::pallas";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

class Pallas_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Pallas_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Pallas_BlockSpecAttr : Pallas_Attr<"BlockSpec", "block_spec"> {
  let summary = "how one operand of a pallas_call is cut into blocks";
  let description = [{
    One entry of `in_specs`/`out_specs`: per dimension a block size (an
    integer: the index map returns a block index), `squeezed` (size 1,
    dropped from the kernel's ref) or `element(n)` / `element(n, lo, hi)`
    (the index map returns an element offset; optional padding), then the
    index map (an affine map over the grid indices, or `@func`, a
    `func.func` taking the grid indices and the scalar-prefetch refs), then
    the memory space the kernel sees the block in, then `buffers = N`: the
    block's pipeline buffer count (`pipeline_mode=pl.Buffered(N)`; absent,
    0 in the attribute, when the call does not set one).

    ```mlir
    #pallas.block_spec<[128, squeezed, element(64, 2, 2)],
                       (i, j) -> (i, j, j * 64), vmem>
    #pallas.block_spec<[8, 128], @index_map_0>
    #pallas.block_spec<any>   // the whole array, not blocked
    #pallas.block_spec<[squeezed, 64], (b) -> (b, 0), any>  // one whole batch element
    #pallas.block_spec<[8, 128], (i) -> (i, 0), buffers = 1>  // pl.Buffered(1)
    ```
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t", "block sizes">:$sizes,
    ArrayRefParameter<"int64_t", "0 blocked, 1 squeezed, 2 element">:$kinds,
    ArrayRefParameter<"int64_t", "element low padding">:$padLow,
    ArrayRefParameter<"int64_t", "element high padding">:$padHigh,
    OptionalParameter<"::mlir::AffineMap">:$indexMap,
    OptionalParameter<"::mlir::FlatSymbolRefAttr">:$indexFunc,
    "::mlir::pallas::MemorySpace":$memorySpace,
    DefaultValuedParameter<"int64_t", "0",
                           "pipeline buffer count, 0: unspecified">:$bufferCount
  );
  let builders = [
    // A spec without a pipeline buffer count.
    AttrBuilder<(ins "::llvm::ArrayRef<int64_t>":$sizes,
                     "::llvm::ArrayRef<int64_t>":$kinds,
                     "::llvm::ArrayRef<int64_t>":$padLow,
                     "::llvm::ArrayRef<int64_t>":$padHigh,
                     "::mlir::AffineMap":$indexMap,
                     "::mlir::FlatSymbolRefAttr":$indexFunc,
                     "::mlir::pallas::MemorySpace":$memorySpace), [{
      return $_get($_ctxt, sizes, kinds, padLow, padHigh, indexMap, indexFunc,
                   memorySpace, 0);
    }]>
  ];
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Kind of block dimension `i`.
    BlockDimKind getKind(unsigned i) const {
      return static_cast<BlockDimKind>(getKinds()[i]);
    }
    unsigned getRank() const { return getSizes().size(); }
    /// True for `any`-space specs without a block shape: the kernel sees the
    /// whole array. (An `any` spec with a block shape, as pallas-vmap makes
    /// for a batched `any` operand, is blocked like any other spec.)
    bool isWholeArray() const {
      return getMemorySpace() == MemorySpace::Any && getSizes().empty();
    }
    /// The shape of the kernel's ref for an array of shape `arrayShape`:
    /// the block shape with squeezed dims dropped, or the array's shape for
    /// `any`.
    ::llvm::SmallVector<int64_t> getKernelShape(
        ::llvm::ArrayRef<int64_t> arrayShape) const;
  }];
}

def Pallas_CostEstimateAttr : Pallas_Attr<"CostEstimate", "cost"> {
  let summary = "the cost estimate of a pallas_call";
  let description = [{
    ```mlir
    #pallas.cost<flops = 1024, bytes_accessed = 4096, transcendentals = 0>
    ```
  }];
  let parameters = (ins "int64_t":$flops, "int64_t":$bytes_accessed,
                        "int64_t":$transcendentals);
  let assemblyFormat = "`<` struct(params) `>`";
}

def Pallas_CompilerParamsAttr : Pallas_Attr<"CompilerParams",
                                            "compiler_params"> {
  let summary = "the per-target compiler parameters of a pallas_call";
  let description = [{
    The spec's `compiler_params`, typed: a `gpu` part (Triton's
    `num_warps`, `num_stages`, and `strict_fp`) and a `tpu` part (Mosaic's
    `dimension_semantics`, one entry per kernel-visible grid axis,
    `vmem_limit_bytes`, `has_side_effects` and `collective_id`, the barrier
    semaphore's id of a kernel that communicates across devices). Absent
    fields are not
    printed; a part with no field is not printed. The verifier enforces the
    ranges the spec validator does (docs/dialect.md, "Compiler params").

    ```mlir
    #pallas.compiler_params<gpu = <num_warps = 4, num_stages = 3>,
        tpu = <dimension_semantics = [parallel, arbitrary],
               vmem_limit_bytes = 33554432, has_side_effects = true>>
    ```
  }];
  let parameters = (ins
    OptionalParameter<"::std::optional<int64_t>">:$numWarps,
    OptionalParameter<"::std::optional<int64_t>">:$numStages,
    "bool":$strictFp,
    ArrayRefParameter<"::mlir::pallas::DimensionSemantics",
                      "per kernel-visible grid axis">:$dimensionSemantics,
    OptionalParameter<"::std::optional<int64_t>">:$vmemLimitBytes,
    "::mlir::pallas::SideEffectType":$hasSideEffects,
    OptionalParameter<"::std::optional<int64_t>">:$collectiveId
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// True when some field of the gpu / tpu part is given.
    bool hasGpuPart() const;
    bool hasTpuPart() const;
    /// True when the call is side effecting (`has_side_effects = true`;
    /// `dataflow_side_effecting` is not, as in jax's _has_side_effects).
    bool isSideEffecting() const {
      return getHasSideEffects() == SideEffectType::SideEffecting;
    }
  }];
}

#endif // PALLAS_ATTRS_TD
