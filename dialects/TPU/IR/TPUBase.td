//===- TPUBase.td - The tpu dialect, its attributes and types -*- tablegen -*-===//
//
// A minimal, registered subset of Mosaic's `tpu` dialect (jax-ml/jax,
// jaxlib/mosaic/dialect/tpu): the attributes, types and ops that pallasc's
// `pallas-to-tpu` lowering emits. The tpu dialect has no bytecode interface,
// so Mosaic stores `#tpu.*` / `!tpu.*` in bytecode as their printed text:
// every mnemonic, enum keyword and assembly format here spells exactly what
// jaxlib parses (checked by test/Target/check_tpu_with_jax.py).
//
//===----------------------------------------------------------------------===//

#ifndef TPU_BASE_TD
#define TPU_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

def TPU_Dialect : Dialect {
  let name = "tpu";
  let summary = "the subset of Mosaic's TPU dialect that pallasc emits";
  let description = [{
    Real IR for the `tpu` attributes, types and ops of a Mosaic kernel
    module: memory spaces on memrefs, semaphore element types, grid
    dimension semantics, the core type, window kinds, dot dimension numbers
    and the ops Mosaic requires where upstream dialects have no equivalent
    (matmul, masked/strided vector stores, iota, iteration bounds, ...).
  }];
  let cppNamespace = "::mlir::tpu";
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
}

class TPU_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<TPU_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

class TPU_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<TPU_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

//===----------------------------------------------------------------------===//
// Enums (keywords and values as in Mosaic)
//===----------------------------------------------------------------------===//

def TPU_CoreType : I32EnumAttr<"CoreType", "core type", [
    I32EnumAttrCase<"kTc", 0, "tc">,
    I32EnumAttrCase<"kScScalarSubcore", 1, "sc_scalar_subcore">,
    I32EnumAttrCase<"kScVectorSubcore", 2, "sc_vector_subcore">]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tpu";
}
def TPU_CoreTypeAttr : EnumAttr<TPU_Dialect, TPU_CoreType, "core_type"> {
  let assemblyFormat = "`<` $value `>`";
}

def TPU_PipelineMode : I32EnumAttr<"PipelineMode", "pipeline mode", [
    I32EnumAttrCase<"kSynchronous", 1, "synchronous">,
    I32EnumAttrCase<"kDoubleBuffered", 2, "double_buffered">]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tpu";
}
def TPU_PipelineModeAttr
    : EnumAttr<TPU_Dialect, TPU_PipelineMode, "pipeline_mode"> {
  let assemblyFormat = "`<` $value `>`";
}

def TPU_DimensionSemantics : I32EnumAttr<"DimensionSemantics",
                                         "grid dimension semantics", [
    I32EnumAttrCase<"parallel", 0>,
    I32EnumAttrCase<"arbitrary", 1>,
    I32EnumAttrCase<"core_parallel", 2>,
    I32EnumAttrCase<"subcore_parallel", 3>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tpu";
}
def TPU_DimensionSemanticsAttr
    : EnumAttr<TPU_Dialect, TPU_DimensionSemantics, "dimension_semantics"> {
  let assemblyFormat = "`<` $value `>`";
}

def TPU_ContractPrecision : I32EnumAttr<"ContractPrecision",
                                        "contraction precision", [
    I32EnumAttrCase<"kBF16", 0, "bf16">,
    I32EnumAttrCase<"kFP32", 1, "fp32">]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tpu";
}
def TPU_ContractPrecisionAttr
    : EnumAttr<TPU_Dialect, TPU_ContractPrecision, "contract_precision"> {
  let assemblyFormat = "`<` $value `>`";
}

def TPU_ReductionKind : I32EnumAttr<"ReductionKind", "reduction kind", [
    I32EnumAttrCase<"kSum", 0, "sum">,
    I32EnumAttrCase<"kMax", 1, "max">,
    I32EnumAttrCase<"kMin", 2, "min">,
    I32EnumAttrCase<"kArgMax", 3, "arg_max">,
    I32EnumAttrCase<"kArgMin", 4, "arg_min">,
    I32EnumAttrCase<"kFindFirstSet", 5, "find_first_set">]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tpu";
}
def TPU_ReductionKindAttr
    : EnumAttr<TPU_Dialect, TPU_ReductionKind, "reduction_kind"> {
  let assemblyFormat = "`<` $value `>`";
}

def TPU_MemorySpace : I32EnumAttr<"MemorySpace", "memory space", [
    I32EnumAttrCase<"kAny", 4294967295, "any">,
    I32EnumAttrCase<"kVmem", 0, "vmem">,
    I32EnumAttrCase<"kSmem", 1, "smem">,
    I32EnumAttrCase<"kHbm", 2, "hbm">,
    I32EnumAttrCase<"kCmem", 3, "cmem">,
    I32EnumAttrCase<"kSemaphoreMem", 4, "semaphore_mem">,
    I32EnumAttrCase<"kVmemShared", 5, "vmem_shared">,
    I32EnumAttrCase<"kHost", 6, "host">]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tpu";
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

def TPU_MemorySpaceAttr : TPU_Attr<"MemorySpace", "memory_space"> {
  let summary = "the memory a memref lives in";
  let description = [{
    ```mlir
    memref<128x128xf32, #tpu.memory_space<vmem>>
    memref<16xi32, #tpu.memory_space<smem>>
    memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
    ```
  }];
  let parameters = (ins
    "::mlir::tpu::MemorySpace":$value,
    OptionalParameter<"::std::optional<::mlir::tpu::CoreType>">:$core_type);
  let assemblyFormat = "`<` $value (`,` $core_type^)? `>`";
  let builders = [
    AttrBuilder<(ins "::mlir::tpu::MemorySpace":$value), [{
      return $_get($_ctxt, value, std::nullopt);
    }]>
  ];
}

def TPU_ElementWindowAttr : TPU_Attr<"ElementWindow", "element_window"> {
  let summary = "window_kind of an operand whose block dims are elements";
  let description = [{
    Low and high padding per dimension, in elements:
    `#tpu.element_window<[2, 0], [2, 0]>`.
  }];
  let parameters = (ins ArrayRefParameter<"int64_t", "">:$pad_low,
                        ArrayRefParameter<"int64_t", "">:$pad_high);
  let assemblyFormat = "`<` `[` $pad_low `]` `,` `[` $pad_high `]` `>`";
}

def TPU_DotDimensionNumbersAttr
    : TPU_Attr<"DotDimensionNumbers", "dot_dimension_numbers"> {
  let summary = "the dimension numbers of a tpu.matmul";
  let description = [{
    Contracting dims of lhs and rhs, non-contracting dims of lhs and rhs,
    the output dimension order as (operand, dim) pairs (0 = lhs, 1 = rhs),
    then the batch dims of lhs and rhs:
    `#tpu.dot_dimension_numbers<[1], [0], [0], [1], [0, 0, 1, 1], [], []>`.
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t", "">:$lhs_contracting_dims,
    ArrayRefParameter<"int64_t", "">:$rhs_contracting_dims,
    OptionalArrayRefParameter<"int64_t", "">:$lhs_non_contracting_dims,
    OptionalArrayRefParameter<"int64_t", "">:$rhs_non_contracting_dims,
    ArrayRefParameter<"int64_t", "">:$output_dim_order,
    OptionalArrayRefParameter<"int64_t", "">:$lhs_batch_dims,
    OptionalArrayRefParameter<"int64_t", "">:$rhs_batch_dims);
  let assemblyFormat =
      "`<` `[` $lhs_contracting_dims `]` `,` `[` $rhs_contracting_dims `]` `,` "
      "`[` (`]`):($lhs_non_contracting_dims^ `]`)? `,` "
      "`[` (`]`):($rhs_non_contracting_dims^ `]`)? `,` "
      "`[` $output_dim_order `]` `,` "
      "`[` (`]`):($lhs_batch_dims^ `]`)? `,` "
      "`[` (`]`):($rhs_batch_dims^ `]`)? `>`";
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

def TPU_SemaphoreType : TPU_Type<"Semaphore", "semaphore",
                                 [MemRefElementTypeInterface]> {
  let summary = "a semaphore (element type of semaphore_mem memrefs)";
}
def TPU_DMASemaphoreType : TPU_Type<"DMASemaphore", "dma_semaphore",
                                    [MemRefElementTypeInterface]> {
  let summary = "a DMA semaphore (element type of semaphore_mem memrefs)";
}

#endif // TPU_BASE_TD
