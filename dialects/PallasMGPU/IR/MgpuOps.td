//===- MgpuOps.td - The pallas_mgpu dialect: Mosaic GPU kernels -*- tablegen -*-===//
//
// The kernel IR of JAX's Mosaic GPU programming model (`plgpu.kernel`):
// explicit shared memory with tiling/swizzle transforms, mbarriers with
// arrival counts, TMA copies and their completion, wgmma accumulators,
// warpgroup/thread axes, register layouts and register-count hints.
// Views of refs are upstream `memref.subview`s; values are `tensor`s.
//
//===----------------------------------------------------------------------===//

#ifndef PALLAS_MGPU_OPS_TD
#define PALLAS_MGPU_OPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Mgpu_Dialect : Dialect {
  let name = "pallas_mgpu";
  let summary = "Mosaic GPU (plgpu.kernel) kernels";
  let description = [{
    A kernel of JAX's Mosaic GPU model: a grid of clusters of blocks, each
    block running `num_threads` warpgroups, which manage shared memory, TMA
    copies and mbarriers themselves. See docs/dialect.md, "Mosaic GPU".
  }];
  let cppNamespace = "::mlir::pallas_mgpu";
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

//===----------------------------------------------------------------------===//
// Attributes: memory spaces and register layouts
//===----------------------------------------------------------------------===//

def Mgpu_SmemAttr : AttrDef<Mgpu_Dialect, "Smem"> {
  let mnemonic = "smem";
  let summary = "shared memory, with plgpu's tiling and swizzle transforms";
  let description = [{
    The memory space of a shared-memory memref. The memref's shape is the
    logical one (what the kernel indexes); `tiling` (plgpu.TilingTransform)
    tiles its trailing dimensions, `swizzle` (plgpu.SwizzleTransform) is the
    swizzle span in bytes (0: none; 16, 32, 64 or 128).
  }];
  let parameters = (ins OptionalArrayRefParameter<"int64_t">:$tiling,
                        DefaultValuedParameter<"int64_t", "0">:$swizzle);
  let assemblyFormat = [{
    (`<` `tiling` `=` `[` $tiling^ `]` (`,` `swizzle` `=` $swizzle^)? `>`)?
  }];
  let genVerifyDecl = 1;
}

def Mgpu_AccAttr : AttrDef<Mgpu_Dialect, "Acc"> {
  let mnemonic = "acc";
  let summary = "wgmma accumulator registers (plgpu.ACC)";
}

def Mgpu_LayoutAttr : AttrDef<Mgpu_Dialect, "Layout"> {
  let mnemonic = "layout";
  let summary = "a register layout of a warpgroup array (plgpu.Layout)";
  let description = [{
    `name` is a plgpu.Layout (`wgmma`, `wgmma_row`, `wgmma_col`, `wg_splat`,
    `wg_strided`, `tiled`); `reduced` lists the axes a ReducedLayout drops.
  }];
  let parameters = (ins StringRefParameter<"layout name">:$name,
                        OptionalArrayRefParameter<"int64_t">:$reduced);
  let assemblyFormat = "`<` $name (`,` `reduced` `=` `[` $reduced^ `]`)? `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

def Mgpu_BarrierType : TypeDef<Mgpu_Dialect, "Barrier"> {
  let mnemonic = "barrier";
  let summary = "an array of mbarriers (plgpu.Barrier)";
  let description = [{
    `num` mbarriers in shared memory, each completing a phase after
    `arrivals` arrivals (plus the bytes of the TMA copies that complete on it).
  }];
  let parameters = (ins "int64_t":$num, "int64_t":$arrivals);
  let assemblyFormat = "`<` $num `,` `arrivals` `=` $arrivals `>`";
  let genVerifyDecl = 1;
}

def Mgpu_SmemRef : Type<CPred<"::mlir::pallas_mgpu::isSmem($_self)">,
    "memref in shared memory (#pallas_mgpu.smem)", "::mlir::MemRefType">;
def Mgpu_AccRef : Type<CPred<"::mlir::pallas_mgpu::isAcc($_self)">,
    "memref of wgmma accumulator registers (#pallas_mgpu.acc)",
    "::mlir::MemRefType">;
def Mgpu_GmemRef : Type<CPred<"::mlir::pallas_mgpu::isGmem($_self)">,
    "memref in global memory (no memory space)", "::mlir::MemRefType">;

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

class Mgpu_Op<string mnemonic, list<Trait> traits = []>
    : Op<Mgpu_Dialect, mnemonic, traits>;

def Mgpu_KernelOp : Mgpu_Op<"kernel", [
    IsolatedFromAbove, Symbol, FunctionOpInterface, NoTerminator,
    SingleBlock]> {
  let summary = "a Mosaic GPU kernel (plgpu.kernel): its mesh and body";
  let description = [{
    The body runs once per thread (warpgroup) of every block of the grid.
    Arguments are the operands then the outputs, whole arrays in global
    memory. `grid`/`grid_names`, `cluster`/`cluster_names`, `num_threads`
    and `thread_name` are the plgpu.Mesh; `num_outputs` counts the trailing
    arguments that are outputs.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs,
                       DenseI64ArrayAttr:$grid, StrArrayAttr:$grid_names,
                       DenseI64ArrayAttr:$cluster, StrArrayAttr:$cluster_names,
                       I64Attr:$num_threads, OptionalAttr<StrAttr>:$thread_name,
                       I64Attr:$num_outputs);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() {
      return getFunctionType().getInputs();
    }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() {
      return getFunctionType().getResults();
    }
    ::mlir::Region *getCallableRegion() { return &getBody(); }
  }];
}

def Mgpu_AxisIndexOp : Mgpu_Op<"axis_index", [Pure]> {
  let summary = "the index along a named mesh axis (lax.axis_index)";
  let arguments = (ins StrAttr:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Mgpu_SetMaxRegistersOp : Mgpu_Op<"set_max_registers"> {
  let summary = "a register-count hint for this warpgroup (setmaxnreg)";
  let arguments = (ins StrAttr:$action, I64Attr:$count);
  let assemblyFormat = "$action $count attr-dict";
  let hasVerifier = 1;
}

def Mgpu_AllocSmemOp : Mgpu_Op<"alloc_smem",
    [MemoryEffects<[MemAlloc<DefaultResource>]>]> {
  let summary = "a shared-memory buffer (plgpu.SMEM in pl.run_scoped)";
  let results = (outs Mgpu_SmemRef:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Mgpu_AllocAccOp : Mgpu_Op<"alloc_acc",
    [MemoryEffects<[MemAlloc<DefaultResource>]>]> {
  let summary = "a wgmma accumulator, zero or `init` (plgpu.ACC, ACC.init)";
  let arguments = (ins Optional<AnyRankedTensor>:$init);
  let results = (outs Mgpu_AccRef:$result);
  let assemblyFormat = [{
    (`init` `(` $init^ `:` type($init) `)`)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def Mgpu_AllocBarriersOp : Mgpu_Op<"alloc_barriers",
    [MemoryEffects<[MemAlloc<DefaultResource>]>]> {
  let summary = "mbarriers in shared memory (plgpu.Barrier, plgpu.ClusterBarrier)";
  let description = [{
    With `collective_axes` (one cluster axis of the kernel), cluster
    barriers (plgpu.ClusterBarrier): a `barrier_arrive` arrives on the
    barrier of every block of the cluster along that axis (a remote arrive
    through the shared::cluster window), so each barrier's phase completes
    after `arrivals` arrivals from each of those blocks.
  }];
  let arguments = (ins OptionalAttr<StrArrayAttr>:$collective_axes);
  let results = (outs Mgpu_BarrierType:$result);
  let assemblyFormat = "attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

def Mgpu_BarrierArriveOp : Mgpu_Op<"barrier_arrive"> {
  let summary = "arrives once on barrier `index` (plgpu.barrier_arrive)";
  let arguments = (ins Mgpu_BarrierType:$barriers, Index:$index);
  let assemblyFormat = "$barriers `[` $index `]` attr-dict `:` qualified(type($barriers))";
}

def Mgpu_BarrierWaitOp : Mgpu_Op<"barrier_wait"> {
  let summary = "waits for barrier `index`'s current phase (plgpu.barrier_wait)";
  let arguments = (ins Mgpu_BarrierType:$barriers, Index:$index);
  let assemblyFormat = "$barriers `[` $index `]` attr-dict `:` qualified(type($barriers))";
  let hasVerifier = 1;
}

def Mgpu_CopyGmemToSmemOp : Mgpu_Op<"copy_gmem_to_smem"> {
  let summary = "a TMA load that completes on a barrier";
  let arguments = (ins Mgpu_GmemRef:$src, Mgpu_SmemRef:$dst,
                       Mgpu_BarrierType:$barriers, Index:$index,
                       OptionalAttr<StrArrayAttr>:$collective_axes);
  let assemblyFormat = [{
    $src `,` $dst `,` $barriers `[` $index `]` attr-dict `:` type($src) `,`
    type($dst) `,` qualified(type($barriers))
  }];
  let hasVerifier = 1;
}

def Mgpu_CopySmemToGmemOp : Mgpu_Op<"copy_smem_to_gmem"> {
  let summary = "a TMA store, tracked by a bulk async group";
  let arguments = (ins Mgpu_SmemRef:$src, Mgpu_GmemRef:$dst,
                       DefaultValuedAttr<BoolAttr, "true">:$commit_group);
  let assemblyFormat = "$src `,` $dst attr-dict `:` type($src) `,` type($dst)";
  let hasVerifier = 1;
}

def Mgpu_CommitSmemOp : Mgpu_Op<"commit_smem"> {
  let summary = "fences this thread's shared-memory writes for TMA (plgpu.commit_smem)";
  let assemblyFormat = "attr-dict";
}

def Mgpu_CommitGroupOp : Mgpu_Op<"commit_group"> {
  let summary = "closes the current bulk async group of TMA stores";
  let assemblyFormat = "attr-dict";
}

def Mgpu_WaitSmemToGmemOp : Mgpu_Op<"wait_smem_to_gmem"> {
  let summary = "waits until at most `n` TMA store groups are in flight";
  let arguments = (ins I64Attr:$n, UnitAttr:$read_only);
  let assemblyFormat = "$n attr-dict";
  let hasVerifier = 1;
}

def Mgpu_WgmmaOp : Mgpu_Op<"wgmma"> {
  let summary = "acc += a @ b on the tensor cores, asynchronously (plgpu.wgmma)";
  let arguments = (ins Mgpu_AccRef:$acc,
                       AnyTypeOf<[Mgpu_SmemRef, AnyRankedTensor]>:$a,
                       Mgpu_SmemRef:$b);
  let assemblyFormat = [{
    $acc `,` $a `,` $b attr-dict `:` type($acc) `,` type($a) `,` type($b)
  }];
  let hasVerifier = 1;
}

def Mgpu_WgmmaWaitOp : Mgpu_Op<"wgmma_wait"> {
  let summary = "waits until at most `n` wgmma groups are in flight";
  let arguments = (ins I64Attr:$n);
  let assemblyFormat = "$n attr-dict";
  let hasVerifier = 1;
}

def Mgpu_AccReadOp : Mgpu_Op<"acc_read"> {
  let summary = "the accumulator's value once its wgmmas completed";
  let arguments = (ins Mgpu_AccRef:$acc);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$acc attr-dict `:` type($acc) `->` type($result)";
  let hasVerifier = 1;
}

def Mgpu_LoadOp : Mgpu_Op<"load"> {
  let summary = "reads a whole shared-memory ref into registers";
  let arguments = (ins Mgpu_SmemRef:$ref);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$ref attr-dict `:` type($ref) `->` type($result)";
  let hasVerifier = 1;
}

def Mgpu_StoreOp : Mgpu_Op<"store"> {
  let summary = "writes registers into a whole shared-memory ref";
  let arguments = (ins AnyRankedTensor:$value, Mgpu_SmemRef:$ref);
  let assemblyFormat = "$value `,` $ref attr-dict `:` type($value) `,` type($ref)";
  let hasVerifier = 1;
}

def Mgpu_LayoutCastOp : Mgpu_Op<"layout_cast", [Pure,
    AllTypesMatch<["value", "result"]>]> {
  let summary = "the same value in another register layout (plgpu.layout_cast)";
  let arguments = (ins AnyRankedTensor:$value, Mgpu_LayoutAttr:$layout);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$value attr-dict `:` type($value) `to` qualified($layout)";
  let hasVerifier = 1;
}

#endif // PALLAS_MGPU_OPS_TD
