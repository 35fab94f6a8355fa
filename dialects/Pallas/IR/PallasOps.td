//===- PallasOps.td - pallas operations --------------------*- tablegen -*-===//

#ifndef PALLAS_OPS_TD
#define PALLAS_OPS_TD

include "dialects/Pallas/IR/PallasTypes.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/CallInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Pallas_I32OrIndex : AnyTypeOf<[I32, Index]>;
def Pallas_ScalarOrTensor : AnyTypeOf<[AnyRankedTensor, AnySignlessIntegerOrIndex,
                                       AnyFloat]>;

//===----------------------------------------------------------------------===//
// Kernel structure
//===----------------------------------------------------------------------===//

def Pallas_KernelOp : Pallas_Op<"kernel", [
    IsolatedFromAbove, Symbol, FunctionOpInterface,
    SingleBlockImplicitTerminator<"ReturnOp">]> {
  let summary = "a Pallas kernel: the body run at each grid point";
  let description = [{
    A kernel takes refs in Pallas' calling convention: scalar-prefetch refs,
    input refs, output refs, scratch refs, and returns nothing. Its body is
    one block; the `pallas.return` terminator is implicit.

    ```mlir
    pallas.kernel @add(%x: !pallas.ref<8x128xf32>, %y: !pallas.ref<8x128xf32>,
                       %o: !pallas.ref<8x128xf32>) {
      %a = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
      %b = pallas.load %y[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
      %s = arith.addf %a, %b : tensor<8x128xf32>
      pallas.store %o[], %s : !pallas.ref<8x128xf32>, tensor<8x128xf32>
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let builders = [OpBuilder<(ins "::llvm::StringRef":$name,
                                 "::mlir::FunctionType":$type)>];
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

def Pallas_ReturnOp : Pallas_Op<"return", [Pure, HasParent<"KernelOp">,
                                           Terminator, ReturnLike]> {
  let summary = "terminates a kernel (implicit in the custom form)";
  let assemblyFormat = "attr-dict";
}

def Pallas_ProgramIdOp : Pallas_Op<"program_id", [Pure]> {
  let summary = "the index of the current grid point along an axis";
  let description = [{
    `program_id_p`: the axis counts the kernel's own grid axes; grid axes
    added by `pallas-vmap` are invisible to the kernel.

    ```mlir
    %i = pallas.program_id 0 : i32
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict `:` type($result)";
}

def Pallas_NumProgramsOp : Pallas_Op<"num_programs", [Pure]> {
  let summary = "the grid's size along an axis";
  let description = [{
    ```mlir
    %n = pallas.num_programs 1 : i32
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict `:` type($result)";
}

def Pallas_SymbolValueOp : Pallas_Op<"symbol_value", [Pure]> {
  let summary = "the value of a shape symbol of a symbolic call";
  let description = [{
    `dim_as_value_p` inside a kernel: the value at launch of a symbol the
    calling `pallas.call` declares in its `symbolic` attribute (a dimension
    variable of `jax.export.symbolic_shape`). A dimension expression's value
    (`pl.cdiv(n, 8)`, `2*n + 3`) is `arith` over it. The kernel is the same
    at every size; each target passes the value at launch (the CPU and GPU
    kernels as a parameter, TPU as a placeholder constant, docs/dialect.md).

    ```mlir
    %n = pallas.symbol_value "n" : i32
    ```
  }];
  let arguments = (ins StrAttr:$symbol);
  let results = (outs AnyTypeOf<[I32, I64, Index]>:$result);
  let assemblyFormat = "$symbol attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Pallas_PlatformIndexOp : Pallas_Op<"platform_index", [Pure]> {
  let summary = "which branch of `lax.platform_dependent` the target takes";
  let description = [{
    `platform_index_p` (`jax.lax.platform_dependent` inside a kernel): the
    index of the first group of platform names that holds the platform being
    compiled for, else, with `default`, the number of groups (the default
    branch). The index usually selects a branch of a `cond`.

    `pallas-resolve-platform` replaces it with a constant in each target's
    pipeline, as JAX's lowering does: `cpu` on the CPU (what interpret mode
    gives), `cuda` on NVIDIA, `rocm` on AMD, and `mosaic` on TPU (JAX's
    Mosaic lowering matches `mosaic`, never `tpu`: a `tpu=` branch is not
    taken there, the default is). Names: `cpu`, `cuda`, `rocm`, `tpu`,
    `mosaic`, each in at most one group.

    ```mlir
    // platform_dependent(x, cuda=f, rocm=g, default=h)
    %i = pallas.platform_index [["cuda"], ["rocm"]] default : i32
    ```
  }];
  let arguments = (ins ArrayAttr:$platforms, UnitAttr:$has_default);
  let results = (outs I32:$index);
  let assemblyFormat = [{
    $platforms (`default` $has_default^)? attr-dict `:` type($index)
  }];
  let extraClassDeclaration = [{
    /// The branch taken on `platform`, or nullopt when no group names it
    /// and there is no default.
    std::optional<int32_t> indexFor(::llvm::StringRef platform);
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Ref access
//===----------------------------------------------------------------------===//

// Per-dimension indexer shared by load/store/swap/atomics: `[e, ...]` where
// each `e` is `start` (an integer index: the dimension is dropped),
// `start : size` or `start : size : stride`; `start` is a constant or an i32
// value. `[]` is the whole ref.
class Pallas_IndexedOp<string mnemonic, list<Trait> traits = []>
    : Pallas_Op<mnemonic, traits> {
  code indexerDecl = [{
    /// The normalized indexer: one entry per ref dimension.
    ::mlir::pallas::Indexer getIndexer();
  }];
  let hasVerifier = 1;
}

def Pallas_LoadOp : Pallas_IndexedOp<"load", [
    AttrSizedOperandSegments,
    TypesMatchWith<"mask is i1 with the result's shape", "result", "mask",
                   "::mlir::pallas::getMaskType($_self)",
                   "!::mlir::pallas::detail::hasMask($_op) || std::equal_to<>()">,
    TypesMatchWith<"other has the result's type", "result", "other",
                   "$_self",
                   "!::mlir::pallas::detail::hasOther($_op) || std::equal_to<>()">]> {
  let summary = "reads a (masked, strided) slice of a ref";
  let description = [{
    `get_p` / `masked_load`. Masked-off lanes read `other` (or are
    unspecified without it). An all-integer indexer yields a scalar.

    `{fit}` selects how an out-of-range dynamic start is brought in range:
    present (`get_p`/`swap_p`, `x_ref[pl.ds(s, n)]`), as `lax.dynamic_slice`
    (wrap once by the dimension, then clamp so the slice fits); absent
    (`masked_load`/`masked_swap`, `plgpu.load`/`store`), as on a ref padded by
    the slice size (docs/dialect.md, "Dynamic starts").

    `eviction_policy` (`plgpu.load(..., eviction_policy=...)`:
    `"evict_first"`, `"evict_last"` or `"evict_normal"`) is a cache hint
    that does not change what is read: the NVIDIA targets carry it into the
    PTX as `ld.global.L1::evict_first` / `L1::evict_last`; other targets
    ignore it.

    ```mlir
    %v = pallas.load %x[0 : 1024] mask %m other %ninf
        : !pallas.ref<1024xf32> -> tensor<1024xf32>
    %s = pallas.load %idx[%i] : !pallas.ref<8xi32, smem> -> i32
    %w = pallas.load %x[] {eviction_policy = "evict_last"}
        : !pallas.ref<1024xf32> -> tensor<1024xf32>
    ```
  }];
  let arguments = (ins
                       Arg<Pallas_AnyRef, "the ref read", [MemRead]>:$ref,
                       Variadic<I32>:$dyn_starts,
                       DenseI64ArrayAttr:$static_starts,
                       DenseI64ArrayAttr:$static_sizes,
                       DenseI64ArrayAttr:$static_strides,
                       Optional<AnyType>:$mask, Optional<AnyType>:$other,
                       UnitAttr:$fit,
                       OptionalAttr<StrAttr>:$eviction_policy);
  let results = (outs Pallas_ScalarOrTensor:$result);
  let assemblyFormat = [{
    $ref `[` custom<Indexer>($dyn_starts, $static_starts, $static_sizes,
                             $static_strides) `]`
    (`mask` $mask^)? (`other` $other^)? attr-dict `:` qualified(type($ref))
    `->` type($result)
  }];
  let extraClassDeclaration = indexerDecl;
}

def Pallas_StoreOp : Pallas_IndexedOp<"store", [
    AttrSizedOperandSegments,
    TypesMatchWith<"mask is i1 with the value's shape", "value", "mask",
                   "::mlir::pallas::getMaskType($_self)",
                   "!::mlir::pallas::detail::hasMask($_op) || std::equal_to<>()">]> {
  let summary = "writes a (masked, strided) slice of a ref";
  let description = [{
    `swap_p` without a result / `masked_swap`. Masked-off lanes are not
    written.

    `{fit}` selects how an out-of-range dynamic start is brought in range:
    present (`get_p`/`swap_p`, `x_ref[pl.ds(s, n)]`), as `lax.dynamic_slice`
    (wrap once by the dimension, then clamp so the slice fits); absent
    (`masked_load`/`masked_swap`, `plgpu.load`/`store`), as on a ref padded by
    the slice size (docs/dialect.md, "Dynamic starts").

    ```mlir
    pallas.store %o[0 : 1024], %r mask %m
        : !pallas.ref<1024xf32>, tensor<1024xf32>
    ```
  }];
  let arguments = (ins
                       Arg<Pallas_AnyRef, "the ref written", [MemWrite]>:$ref,
                       Variadic<I32>:$dyn_starts,
                       DenseI64ArrayAttr:$static_starts,
                       DenseI64ArrayAttr:$static_sizes,
                       DenseI64ArrayAttr:$static_strides,
                       Pallas_ScalarOrTensor:$value, Optional<AnyType>:$mask,
                       UnitAttr:$fit);
  let assemblyFormat = [{
    $ref `[` custom<Indexer>($dyn_starts, $static_starts, $static_sizes,
                             $static_strides) `]` `,` $value
    (`mask` $mask^)? attr-dict `:` qualified(type($ref)) `,` type($value)
  }];
  let extraClassDeclaration = indexerDecl;
}

def Pallas_SwapOp : Pallas_IndexedOp<"swap", [
    AttrSizedOperandSegments,
    // Not AllTypesMatch: ODS would infer the result from a fixed operand
    // index, which is wrong with the variadic dyn_starts before the value.
    PredOpTrait<"value and result have the same type",
                AllMatchPred<["$value.getType()", "$result.getType()"]>>,
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    TypesMatchWith<"mask is i1 with the value's shape", "value", "mask",
                   "::mlir::pallas::getMaskType($_self)",
                   "!::mlir::pallas::detail::hasMask($_op) || std::equal_to<>()">]> {
  let summary = "writes a slice of a ref and returns the old values";
  let description = [{
    `swap_p`: `old = ref[idx]; ref[idx] = value`. Masked-off lanes are
    neither written nor read (their result is unspecified).

    `{fit}` selects how an out-of-range dynamic start is brought in range:
    present (`get_p`/`swap_p`, `x_ref[pl.ds(s, n)]`), as `lax.dynamic_slice`
    (wrap once by the dimension, then clamp so the slice fits); absent
    (`masked_load`/`masked_swap`, `plgpu.load`/`store`), as on a ref padded by
    the slice size (docs/dialect.md, "Dynamic starts").

    ```mlir
    %old = pallas.swap %acc[0 : 8, 0 : 128], %v
        : !pallas.ref<8x128xf32>, tensor<8x128xf32>
    ```
  }];
  let arguments = (ins
                       Arg<Pallas_AnyRef, "the ref updated", [MemRead, MemWrite]>:$ref,
                       Variadic<I32>:$dyn_starts,
                       DenseI64ArrayAttr:$static_starts,
                       DenseI64ArrayAttr:$static_sizes,
                       DenseI64ArrayAttr:$static_strides,
                       Pallas_ScalarOrTensor:$value, Optional<AnyType>:$mask,
                       UnitAttr:$fit);
  let results = (outs Pallas_ScalarOrTensor:$result);
  let assemblyFormat = [{
    $ref `[` custom<Indexer>($dyn_starts, $static_starts, $static_sizes,
                             $static_strides) `]` `,` $value
    (`mask` $mask^)? attr-dict `:` qualified(type($ref)) `,` type($value)
  }];
  let extraClassDeclaration = indexerDecl;
}

def Pallas_AtomicRMWOp : Pallas_IndexedOp<"atomic_rmw", [
    AttrSizedOperandSegments,
    // Not AllTypesMatch: ODS would infer the result from a fixed operand
    // index, which is wrong with the variadic dyn_starts before the value.
    PredOpTrait<"value and result have the same type",
                AllMatchPred<["$value.getType()", "$result.getType()"]>>,
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    TypesMatchWith<"mask is i1 with the value's shape", "value", "mask",
                   "::mlir::pallas::getMaskType($_self)",
                   "!::mlir::pallas::detail::hasMask($_op) || std::equal_to<>()">]> {
  let summary = "atomic read-modify-write of a slice of a ref";
  let description = [{
    Returns the values held before the update.

    ```mlir
    %old = pallas.atomic_rmw add %hist[%b], %one
        : !pallas.ref<256xi32>, i32
    ```
  }];
  let arguments = (ins Pallas_AtomicKindAttr:$kind,
                       Arg<Pallas_AnyRef, "the ref updated", [MemRead, MemWrite]>:$ref,
                       Variadic<I32>:$dyn_starts,
                       DenseI64ArrayAttr:$static_starts,
                       DenseI64ArrayAttr:$static_sizes,
                       DenseI64ArrayAttr:$static_strides,
                       Pallas_ScalarOrTensor:$value, Optional<AnyType>:$mask);
  let results = (outs Pallas_ScalarOrTensor:$result);
  let assemblyFormat = [{
    `` $kind $ref `[` custom<Indexer>($dyn_starts, $static_starts, $static_sizes,
                                   $static_strides) `]` `,` $value
    (`mask` $mask^)? attr-dict `:` qualified(type($ref)) `,` type($value)
  }];
  let extraClassDeclaration = indexerDecl;
}

def Pallas_AtomicCASOp : Pallas_IndexedOp<"atomic_cas", [
    TypesMatchWith<"cmp has the value's type", "value", "cmp", "$_self">,
    PredOpTrait<"value and result have the same type",
                AllMatchPred<["$value.getType()", "$result.getType()"]>>,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "atomic compare-and-swap of a slice of a ref";
  let description = [{
    Where `ref[idx] == cmp` stores `value`; returns the old values.

    ```mlir
    %old = pallas.atomic_cas %lock[0], %c0, %c1 : !pallas.ref<1xi32>, i32
    ```
  }];
  let arguments = (ins
                       Arg<Pallas_AnyRef, "the ref updated", [MemRead, MemWrite]>:$ref,
                       Variadic<I32>:$dyn_starts,
                       DenseI64ArrayAttr:$static_starts,
                       DenseI64ArrayAttr:$static_sizes,
                       DenseI64ArrayAttr:$static_strides,
                       Pallas_ScalarOrTensor:$cmp, Pallas_ScalarOrTensor:$value);
  let results = (outs Pallas_ScalarOrTensor:$result);
  let assemblyFormat = [{
    $ref `[` custom<Indexer>($dyn_starts, $static_starts, $static_sizes,
                             $static_strides) `]` `,` $cmp `,` $value
    attr-dict `:` qualified(type($ref)) `,` type($value)
  }];
  let extraClassDeclaration = indexerDecl;
}

//===----------------------------------------------------------------------===//
// DMA (TPU async copies)
//===----------------------------------------------------------------------===//

// `pltpu.make_async_copy(src.at[...], dst.at[...], sem.at[...])`: src and dst
// slices use the load/store indexer (no strides); the semaphore is selected
// by one integer index per dimension of a `semaphore` ref.
class Pallas_DmaOp<string mnemonic, list<Trait> traits = []>
    : Pallas_Op<mnemonic, !listconcat(traits, [AttrSizedOperandSegments])> {
  let assemblyFormat = [{
    $src `[` custom<Indexer>($src_dyn_starts, $src_static_starts,
                             $src_static_sizes, $src_static_strides) `]` `,`
    $dst `[` custom<Indexer>($dst_dyn_starts, $dst_static_starts,
                             $dst_static_sizes, $dst_static_strides) `]` `,`
    $sem `[` custom<Indexer>($sem_dyn_starts, $sem_static_starts,
                             $sem_static_sizes, $sem_static_strides) `]`
    attr-dict `:` qualified(type($src)) `,` qualified(type($dst)) `,`
    qualified(type($sem))
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::pallas::Indexer getSrcIndexer();
    ::mlir::pallas::Indexer getDstIndexer();
    ::mlir::pallas::Indexer getSemIndexer();
  }];
}

def Pallas_DmaStartOp : Pallas_DmaOp<"dma_start"> {
  let summary = "starts an async copy of a ref slice into another (TPU)";
  let description = [{
    `dma_start_p` (`pltpu.make_async_copy(src, dst, sem).start()`): copies
    the `src` slice into the `dst` slice (same shape and element type) and
    signals the DMA semaphore `sem[idx...]` when done. Only the TPU target
    lowers it (`tpu.enqueue_dma`); the CPU lowering copies at once (Pallas'
    interpret mode).

    ```mlir
    pallas.dma_start %x[%off : 8, 0 : 128], %buf[], %sem[0]
        : !pallas.ref<32x128xf32, any>, !pallas.ref<8x128xf32, vmem>,
          !pallas.ref<2xi32, semaphore>
    ```
  }];
  let arguments = (ins
      Arg<Pallas_AnyRef, "the ref copied from", [MemRead]>:$src,
      Variadic<I32>:$src_dyn_starts,
      DenseI64ArrayAttr:$src_static_starts,
      DenseI64ArrayAttr:$src_static_sizes,
      DenseI64ArrayAttr:$src_static_strides,
      Arg<Pallas_AnyRef, "the ref copied to", [MemWrite]>:$dst,
      Variadic<I32>:$dst_dyn_starts,
      DenseI64ArrayAttr:$dst_static_starts,
      DenseI64ArrayAttr:$dst_static_sizes,
      DenseI64ArrayAttr:$dst_static_strides,
      Arg<Pallas_AnyRef, "the semaphore signalled", [MemRead, MemWrite]>:$sem,
      Variadic<I32>:$sem_dyn_starts,
      DenseI64ArrayAttr:$sem_static_starts,
      DenseI64ArrayAttr:$sem_static_sizes,
      DenseI64ArrayAttr:$sem_static_strides);
}

def Pallas_DmaWaitOp : Pallas_DmaOp<"dma_wait"> {
  let summary = "waits for an async copy started by pallas.dma_start (TPU)";
  let description = [{
    `dma_wait_p` (`pltpu.make_async_copy(src, dst, sem).wait()`): blocks
    until the copy of the `src` slice into the `dst` slice signalled on
    `sem[idx...]` has landed (the slices give the byte count to wait for).
    Lowers to `tpu.wait_dma2`; a no-op on the CPU.

    ```mlir
    pallas.dma_wait %x[%off : 8, 0 : 128], %buf[], %sem[0]
        : !pallas.ref<32x128xf32, any>, !pallas.ref<8x128xf32, vmem>,
          !pallas.ref<2xi32, semaphore>
    ```
  }];
  let arguments = (ins
      Arg<Pallas_AnyRef, "the ref copied from", [MemRead]>:$src,
      Variadic<I32>:$src_dyn_starts,
      DenseI64ArrayAttr:$src_static_starts,
      DenseI64ArrayAttr:$src_static_sizes,
      DenseI64ArrayAttr:$src_static_strides,
      Arg<Pallas_AnyRef, "the ref whose copy completes",
          [MemRead, MemWrite]>:$dst,
      Variadic<I32>:$dst_dyn_starts,
      DenseI64ArrayAttr:$dst_static_starts,
      DenseI64ArrayAttr:$dst_static_sizes,
      DenseI64ArrayAttr:$dst_static_strides,
      Arg<Pallas_AnyRef, "the semaphore waited on", [MemRead, MemWrite]>:$sem,
      Variadic<I32>:$sem_dyn_starts,
      DenseI64ArrayAttr:$sem_static_starts,
      DenseI64ArrayAttr:$sem_static_sizes,
      DenseI64ArrayAttr:$sem_static_strides);
}

//===----------------------------------------------------------------------===//
// Multi-device TPU kernels: remote copies, remote signals, the device id and
// the barrier semaphore (kernels under jax.shard_map)
//===----------------------------------------------------------------------===//

// `pltpu.make_async_remote_copy(src, dst, send_sem, recv_sem, device_id)`:
// the DMA operands of pallas.dma_start / dma_wait plus the logical id (i32)
// of the other device; the exporter turns mesh coordinates into that id as
// Pallas' device_id_to_logical does (coordinates times row-major strides).
class Pallas_RemoteDmaOp<string mnemonic, dag extra, string format>
    : Pallas_Op<mnemonic, [AttrSizedOperandSegments]> {
  let arguments = !con((ins
      Arg<Pallas_AnyRef, "the ref copied from", [MemRead]>:$src,
      Variadic<I32>:$src_dyn_starts,
      DenseI64ArrayAttr:$src_static_starts,
      DenseI64ArrayAttr:$src_static_sizes,
      DenseI64ArrayAttr:$src_static_strides,
      Arg<Pallas_AnyRef, "the ref copied to", [MemWrite]>:$dst,
      Variadic<I32>:$dst_dyn_starts,
      DenseI64ArrayAttr:$dst_static_starts,
      DenseI64ArrayAttr:$dst_static_sizes,
      DenseI64ArrayAttr:$dst_static_strides,
      Arg<Pallas_AnyRef, "the semaphore signalled or waited on",
          [MemRead, MemWrite]>:$sem,
      Variadic<I32>:$sem_dyn_starts,
      DenseI64ArrayAttr:$sem_static_starts,
      DenseI64ArrayAttr:$sem_static_sizes,
      DenseI64ArrayAttr:$sem_static_strides), extra);
  let assemblyFormat = format;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::pallas::Indexer getSrcIndexer();
    ::mlir::pallas::Indexer getDstIndexer();
    ::mlir::pallas::Indexer getSemIndexer();
  }];
}

def Pallas_RemoteDmaStartOp : Pallas_RemoteDmaOp<"remote_dma_start",
    (ins Arg<Pallas_AnyRef, "this device's send semaphore",
             [MemRead, MemWrite]>:$send_sem,
         Variadic<I32>:$send_sem_dyn_starts,
         DenseI64ArrayAttr:$send_sem_static_starts,
         DenseI64ArrayAttr:$send_sem_static_sizes,
         DenseI64ArrayAttr:$send_sem_static_strides,
         I32:$device_id), [{
    $src `[` custom<Indexer>($src_dyn_starts, $src_static_starts,
                             $src_static_sizes, $src_static_strides) `]` `,`
    $dst `[` custom<Indexer>($dst_dyn_starts, $dst_static_starts,
                             $dst_static_sizes, $dst_static_strides) `]` `,`
    $sem `[` custom<Indexer>($sem_dyn_starts, $sem_static_starts,
                             $sem_static_sizes, $sem_static_strides) `]` `,`
    $send_sem `[` custom<Indexer>($send_sem_dyn_starts,
                                  $send_sem_static_starts,
                                  $send_sem_static_sizes,
                                  $send_sem_static_strides) `]` `,`
    $device_id
    attr-dict `:` qualified(type($src)) `,` qualified(type($dst)) `,`
    qualified(type($sem)) `,` qualified(type($send_sem))
  }]> {
  let summary = "starts a copy into another device's ref (TPU)";
  let description = [{
    `dma_start_p` with a device id (`pltpu.make_async_remote_copy(src, dst,
    send_sem, recv_sem, device_id).start()`): copies this device's `src`
    slice into the `dst` slice of device `device_id` (a logical id), signals
    `sem[idx...]` (the receive semaphore) on that device when it lands and
    `send_sem[idx...]` here when the source has been read. The TPU lowering
    writes `tpu.enqueue_dma` with `source_semaphore` and `device_id`; the CPU
    and GPU targets refuse it (it communicates across devices).

    ```mlir
    pallas.remote_dma_start %o[%slot, 0 : 4, 0 : 128], %o[%slot, 0 : 4, 0 : 128],
        %recv[], %send[], %right
        : !pallas.ref<4x8x128xf32, vmem>, !pallas.ref<4x8x128xf32, vmem>,
          !pallas.ref<i32, semaphore>, !pallas.ref<i32, semaphore>
    ```
  }];
  let extraClassDeclaration = [{
    ::mlir::pallas::Indexer getSrcIndexer();
    ::mlir::pallas::Indexer getDstIndexer();
    ::mlir::pallas::Indexer getSemIndexer();
    ::mlir::pallas::Indexer getSendSemIndexer();
  }];
}

def Pallas_RemoteDmaWaitOp : Pallas_RemoteDmaOp<"remote_dma_wait",
    (ins I32:$device_id, UnitAttr:$send), [{
    (`send` $send^)?
    $src `[` custom<Indexer>($src_dyn_starts, $src_static_starts,
                             $src_static_sizes, $src_static_strides) `]` `,`
    $dst `[` custom<Indexer>($dst_dyn_starts, $dst_static_starts,
                             $dst_static_sizes, $dst_static_strides) `]` `,`
    $sem `[` custom<Indexer>($sem_dyn_starts, $sem_static_starts,
                             $sem_static_sizes, $sem_static_strides) `]` `,`
    $device_id
    attr-dict `:` qualified(type($src)) `,` qualified(type($dst)) `,`
    qualified(type($sem))
  }]> {
  let summary = "waits for one side of a remote copy (TPU)";
  let description = [{
    `dma_wait_p` of a remote copy. Without `send` (`.wait_recv()`): waits
    until the copy into this device's `dst` slice signalled `sem[idx...]`,
    lowered to `tpu.wait_dma2 ... device_id(%device_id)`. With `send`
    (`.wait_send()`, whose `src` and `dst` Pallas swaps): waits until this
    device's send semaphore says the source was read, lowered as Pallas
    does with a dummy device and core (`device_id(0) core_id(0)`).
    `.wait()` is `wait_send` then `wait_recv`.

    ```mlir
    pallas.remote_dma_wait send %o[%slot, 0 : 4, 0 : 128], %o[%slot, 0 : 4, 0 : 128],
        %send[], %right : !pallas.ref<4x8x128xf32, vmem>,
        !pallas.ref<4x8x128xf32, vmem>, !pallas.ref<i32, semaphore>
    ```
  }];
}

def Pallas_RemoteSemaphoreSignalOp
    : Pallas_IndexedOp<"remote_semaphore_signal"> {
  let summary = "adds to a semaphore of another device (TPU)";
  let description = [{
    `semaphore_signal_p` with a device id (`pl.semaphore_signal(sem, inc,
    device_id=...)`): adds `value` to the semaphore `ref[idx...]` of device
    `device_id` (a logical id). The TPU lowering writes `tpu.sem_signal ...
    device_id`; the CPU and GPU targets refuse it.

    ```mlir
    pallas.remote_semaphore_signal %barrier[], %c1, %left
        : !pallas.ref<i32, semaphore>
    ```
  }];
  let arguments = (ins
      Arg<Pallas_AnyRef, "the semaphore ref", [MemRead, MemWrite]>:$ref,
      Variadic<I32>:$dyn_starts,
      DenseI64ArrayAttr:$static_starts,
      DenseI64ArrayAttr:$static_sizes,
      DenseI64ArrayAttr:$static_strides,
      I32:$value,
      I32:$device_id);
  let assemblyFormat = [{
    $ref `[` custom<Indexer>($dyn_starts, $static_starts, $static_sizes,
                             $static_strides) `]` `,` $value `,` $device_id
    attr-dict `:` qualified(type($ref))
  }];
  let extraClassDeclaration = indexerDecl;
}

def Pallas_DeviceIdOp : Pallas_Op<"device_id", [Pure]> {
  let summary = "the logical id of the device running the kernel (TPU)";
  let description = [{
    What `lax.axis_index` of a shard_map mesh axis reads: the exporter
    writes `(device_id / product of the minor axes' sizes) % axis size`, as
    Pallas' TPU lowering does. Lowers to `tpu.device_id`; the CPU and GPU
    targets refuse it.

    ```mlir
    %d = pallas.device_id : i32
    ```
  }];
  let results = (outs I32:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def Pallas_BarrierSemaphoreOp : Pallas_Op<"barrier_semaphore", [Pure]> {
  let summary = "the barrier semaphore of a collective kernel (TPU)";
  let description = [{
    `get_barrier_semaphore_p` (`pltpu.get_barrier_semaphore()`): a rank-0
    semaphore ref that other devices signal (with
    `pallas.remote_semaphore_signal`) to synchronize; the call needs
    `compiler_params.tpu.collective_id`. Lowers to `tpu.sem_barrier`.

    ```mlir
    %b = pallas.barrier_semaphore : !pallas.ref<i32, semaphore>
    ```
  }];
  let results = (outs Pallas_AnyRef:$result);
  let assemblyFormat = "attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Semaphores (TPU local semaphores)
//===----------------------------------------------------------------------===//

// `pl.semaphore_signal/wait/read(sem.at[...])` on a `semaphore` ref
// (`pltpu.SemaphoreType.REGULAR` scratch): the indexer picks one semaphore
// with an integer index per dimension (`[]` for a rank-0 ref).
class Pallas_SemaphoreOp<string mnemonic, list<Trait> traits = []>
    : Pallas_IndexedOp<mnemonic, traits> {
  let extraClassDeclaration = indexerDecl;
}

def Pallas_SemaphoreSignalOp : Pallas_SemaphoreOp<"semaphore_signal"> {
  let summary = "adds to a local semaphore";
  let description = [{
    `semaphore_signal_p` (`pl.semaphore_signal(sem.at[i], inc)`) without a
    device id or core index: adds `value` to the semaphore. The TPU lowering
    writes `tpu.sem_signal`; on the CPU a semaphore is an i32 counter that
    starts at 0 when the call starts and persists across grid steps.

    ```mlir
    pallas.semaphore_signal %sem[%i], %c2 : !pallas.ref<2xi32, semaphore>
    ```
  }];
  let arguments = (ins
      Arg<Pallas_AnyRef, "the semaphore ref", [MemRead, MemWrite]>:$ref,
      Variadic<I32>:$dyn_starts,
      DenseI64ArrayAttr:$static_starts,
      DenseI64ArrayAttr:$static_sizes,
      DenseI64ArrayAttr:$static_strides,
      I32:$value);
  let assemblyFormat = [{
    $ref `[` custom<Indexer>($dyn_starts, $static_starts, $static_sizes,
                             $static_strides) `]` `,` $value
    attr-dict `:` qualified(type($ref))
  }];
}

def Pallas_SemaphoreWaitOp : Pallas_SemaphoreOp<"semaphore_wait"> {
  let summary = "waits until a local semaphore reaches a value, then subtracts it";
  let description = [{
    `semaphore_wait_p` (`pl.semaphore_wait(sem.at[i], dec)`): blocks until
    the semaphore is at least `value`, then subtracts `value`. The TPU
    lowering writes `tpu.sem_wait`. The CPU runs the grid on one thread, so
    nothing can signal while a program waits: a wait on a semaphore below
    `value` stops the run with a runtime error instead of hanging.

    ```mlir
    pallas.semaphore_wait %sem[0], %c1 : !pallas.ref<2xi32, semaphore>
    ```
  }];
  let arguments = (ins
      Arg<Pallas_AnyRef, "the semaphore ref", [MemRead, MemWrite]>:$ref,
      Variadic<I32>:$dyn_starts,
      DenseI64ArrayAttr:$static_starts,
      DenseI64ArrayAttr:$static_sizes,
      DenseI64ArrayAttr:$static_strides,
      I32:$value);
  let assemblyFormat = [{
    $ref `[` custom<Indexer>($dyn_starts, $static_starts, $static_sizes,
                             $static_strides) `]` `,` $value
    attr-dict `:` qualified(type($ref))
  }];
}

def Pallas_SemaphoreReadOp : Pallas_SemaphoreOp<"semaphore_read"> {
  let summary = "the current value of a local semaphore";
  let description = [{
    `semaphore_read_p` (`pl.semaphore_read(sem.at[i])`). Lowers to
    `tpu.sem_read` on the TPU, a load of the counter on the CPU.

    ```mlir
    %v = pallas.semaphore_read %sem[1] : !pallas.ref<2xi32, semaphore> -> i32
    ```
  }];
  let arguments = (ins
      Arg<Pallas_AnyRef, "the semaphore ref", [MemRead]>:$ref,
      Variadic<I32>:$dyn_starts,
      DenseI64ArrayAttr:$static_starts,
      DenseI64ArrayAttr:$static_sizes,
      DenseI64ArrayAttr:$static_strides);
  let results = (outs I32:$result);
  let assemblyFormat = [{
    $ref `[` custom<Indexer>($dyn_starts, $static_starts, $static_sizes,
                             $static_strides) `]`
    attr-dict `:` qualified(type($ref)) `->` type($result)
  }];
}

def Pallas_GatherOp : Pallas_Op<"gather", [
    AttrSizedOperandSegments,
    TypesMatchWith<"mask is i1 with the result's shape", "result", "mask",
                   "::mlir::pallas::getMaskType($_self)",
                   "!::mlir::pallas::detail::hasMask($_op) || std::equal_to<>()">,
    TypesMatchWith<"other has the result's type", "result", "other",
                   "$_self",
                   "!::mlir::pallas::detail::hasOther($_op) || std::equal_to<>()">]> {
  let summary = "reads a ref at index vectors (a gather)";
  let description = [{
    `get_p` / `masked_load` with index-vector indexers
    (`x_ref[idx]`, `plgpu.load(x_ref.at[rows, cols], mask=m)`): one i32
    index tensor per ref dimension, each with the result's shape;
    `result[p] = ref[i0[p], i1[p], ...]`. Indices outside `[0, dim)` are
    clamped into it (JAX's gather semantics); masked-off lanes read `other`
    (unspecified without it) and are not read from the ref.

    ```mlir
    %v = pallas.gather %table[%rows, %cols] mask %m other %zero
        : !pallas.ref<64x128xf32>, tensor<8x16xi32>, tensor<8x16xi32>
          -> tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Arg<Pallas_AnyRef, "the ref read", [MemRead]>:$ref,
                       Variadic<RankedTensorOf<[I32]>>:$indices,
                       Optional<AnyType>:$mask, Optional<AnyType>:$other);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $ref `[` $indices `]` (`mask` $mask^)? (`other` $other^)? attr-dict `:`
    qualified(type($ref)) `,` type($indices) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Block computations
//===----------------------------------------------------------------------===//

def Pallas_DotOp : Pallas_Op<"dot", [Pure]> {
  let summary = "matrix product of two blocks, with optional accumulator";
  let description = [{
    `result = (lhs^T?) x (rhs^T?) (+ acc)`, computed in the result's element
    type (the accumulator type). Operands are 2-D, or 3-D with a leading
    batch dimension.

    ```mlir
    %d = pallas.dot %x, %y, %acc
        : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32>
          -> tensor<128x128xf32>
    %e = pallas.dot %q, %k {transpose_rhs, precision = #pallas.precision<highest>}
        : tensor<64x32xf32>, tensor<64x32xf32> -> tensor<64x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs,
                       Optional<AnyRankedTensor>:$acc,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs,
                       DefaultValuedAttr<Pallas_DotPrecisionAttr,
                           "::mlir::pallas::DotPrecision::Default">:$precision);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`,` $acc^)? attr-dict `:` type($lhs) `,` type($rhs)
    (`,` type($acc)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def Pallas_ReduceOp : Pallas_Op<"reduce", [Pure]> {
  let summary = "reduces a block along dimensions";
  let description = [{
    `sum`, `max`, `min` keep the element type; `argmax`/`argmin` reduce one
    dimension and return integer indices (the first index on ties, as
    `jnp.argmax`). The reduced dimensions are removed.

    ```mlir
    %m = pallas.reduce max %v dims [1] : tensor<8x1024xf32> -> tensor<8xf32>
    %a = pallas.reduce argmax %v dims [1] : tensor<8x1024xf32> -> tensor<8xi32>
    ```
  }];
  let arguments = (ins Pallas_ReduceKindAttr:$kind, AnyRankedTensor:$input,
                       DenseI64ArrayAttr:$dims);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    `` $kind $input `dims` $dims attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Pallas_BroadcastInDimOp : Pallas_Op<"broadcast_in_dim", [Pure]> {
  let summary = "broadcasts a block (or scalar) to a larger shape";
  let description = [{
    `lax.broadcast_in_dim`: operand dimension `i` becomes result dimension
    `dims[i]` (its size must be 1 or equal to it).

    ```mlir
    %b = pallas.broadcast_in_dim %m dims [0] : tensor<8xf32> -> tensor<8x1024xf32>
    %s = pallas.broadcast_in_dim %x dims [] : f32 -> tensor<8x128xf32>
    ```
  }];
  let arguments = (ins Pallas_ScalarOrTensor:$operand, DenseI64ArrayAttr:$dims);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $operand `dims` $dims attr-dict `:` type($operand) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Pallas_IotaOp : Pallas_Op<"iota", [Pure]> {
  let summary = "indices along one dimension of a block";
  let description = [{
    ```mlir
    %i = pallas.iota 1 : tensor<8x1024xi32>
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$dimension);
  let results = (outs RankedTensorOf<[AnySignlessInteger, Index]>:$result);
  let assemblyFormat = "$dimension attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Pallas_ReshapeOp : Pallas_Op<"reshape", [Pure]> {
  let summary = "reshapes a block (row-major, same element count)";
  let description = [{
    ```mlir
    %r = pallas.reshape %x : tensor<8x128xf32> -> tensor<1024xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$operand);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$operand attr-dict `:` type($operand) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Pallas_TransposeOp : Pallas_Op<"transpose", [Pure]> {
  let summary = "permutes the dimensions of a block";
  let description = [{
    Result dimension `i` is operand dimension `permutation[i]`.

    ```mlir
    %t = pallas.transpose %x [1, 0] : tensor<8x128xf32> -> tensor<128x8xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$operand, DenseI64ArrayAttr:$permutation);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $operand $permutation attr-dict `:` type($operand) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Pallas_SelectOp : Pallas_Op<"select", [Pure,
    AllTypesMatch<["on_true", "on_false", "result"]>]> {
  let summary = "elementwise choice between two blocks";
  let description = [{
    `lax.select`: `cond` is an `i1` scalar or a block of `i1` with the
    result's shape.

    ```mlir
    %r = pallas.select %m, %a, %b : tensor<1024xi1>, tensor<1024xf32>
    ```
  }];
  let arguments = (ins Pallas_ScalarOrTensor:$cond,
                       Pallas_ScalarOrTensor:$on_true,
                       Pallas_ScalarOrTensor:$on_false);
  let results = (outs Pallas_ScalarOrTensor:$result);
  let assemblyFormat = [{
    $cond `,` $on_true `,` $on_false attr-dict `:` type($cond) `,` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Pallas_CumsumOp : Pallas_Op<"cumsum", [Pure, AllTypesMatch<["operand", "result"]>]> {
  let summary = "inclusive prefix sum along one dimension";
  let description = [{
    ```mlir
    %c = pallas.cumsum %x dim 0 : tensor<1024xf32>
    %r = pallas.cumsum %x dim 1 reverse : tensor<8x128xi32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$operand,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
                       UnitAttr:$reverse);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $operand `dim` $dim (`reverse` $reverse^)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def Pallas_MultipleOfOp : Pallas_Op<"multiple_of", [Pure,
    AllTypesMatch<["operand", "result"]>]> {
  let summary = "hint: the value is a multiple of a constant";
  let description = [{
    ```mlir
    %s = pallas.multiple_of %start, 128 : i32
    ```
  }];
  let arguments = (ins Pallas_ScalarOrTensor:$operand,
                       ConfinedAttr<I64Attr, [IntPositive]>:$divisor);
  let results = (outs Pallas_ScalarOrTensor:$result);
  let assemblyFormat = "$operand `,` $divisor attr-dict `:` type($result)";
  let hasFolder = 1;
}

def Pallas_MaxContiguousOp : Pallas_Op<"max_contiguous", [Pure,
    AllTypesMatch<["operand", "result"]>]> {
  let summary = "hint: runs of consecutive values along each dimension";
  let description = [{
    ```mlir
    %o = pallas.max_contiguous %offs, [128] : tensor<128xi32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$operand, DenseI64ArrayAttr:$values);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$operand `,` $values attr-dict `:` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Pallas_DebugPrintOp : Pallas_Op<"debug_print", [
    MemoryEffects<[MemWrite]>]> {
  let summary = "prints a message with values from inside a kernel";
  let description = [{
    `pl.debug_print`: each `{}` in the format is replaced by the next value.

    ```mlir
    pallas.debug_print "i = {}, x = {}" %i, %x : i32, f32
    ```
  }];
  let arguments = (ins StrAttr:$format, Variadic<Pallas_ScalarOrTensor>:$values);
  let assemblyFormat = [{
    $format ($values^ `:` type($values))? attr-dict
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Closed-over refs and hi types
//===----------------------------------------------------------------------===//

def Pallas_RefGlobalOp : Pallas_Op<"ref_global", [Symbol]> {
  let summary = "a module-level ref that kernels close over";
  let description = [{
    A ref that lives outside the call (JAX: a `Ref` closed over by the
    kernel). The runtime provides it; `pallas-discharge-state` turns it into
    a leading input and an aliased output of the call.

    ```mlir
    pallas.ref_global @counts : !pallas.ref<256xi32>
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttrOf<Pallas_AnyRef>:$type);
  let assemblyFormat = "$sym_name attr-dict `:` $type";
}

def Pallas_GetGlobalOp : Pallas_Op<"get_global", [Pure,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "the ref of a pallas.ref_global, inside a kernel";
  let description = [{
    ```mlir
    %c = pallas.get_global @counts : !pallas.ref<256xi32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$name);
  let results = (outs Pallas_AnyRef:$result);
  let assemblyFormat = "$name attr-dict `:` qualified(type($result))";
}

def Pallas_HiPackOp : Pallas_Op<"hi_pack", [Pure]> {
  let summary = "builds a hi aggregate from its lo parts";
  let description = [{
    ```mlir
    %q = pallas.hi_pack %v, %s : tensor<64xi8>, tensor<1xf32>
        -> !pallas.hi<"qarray", tensor<64xi8>, tensor<1xf32>>
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$parts);
  let results = (outs Pallas_HiType:$result);
  let assemblyFormat = [{
    $parts attr-dict `:` type($parts) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Pallas_HiUnpackOp : Pallas_Op<"hi_unpack", [Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "the lo parts of a hi aggregate";
  let description = [{
    ```mlir
    %v, %s = pallas.hi_unpack %q
        : !pallas.hi<"qarray", !pallas.ref<64xi8>, !pallas.ref<1xf32>>
    ```
  }];
  let arguments = (ins Pallas_HiType:$aggregate);
  let results = (outs Variadic<AnyType>:$parts);
  let assemblyFormat = "$aggregate attr-dict `:` qualified(type($aggregate))";
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// The call
//===----------------------------------------------------------------------===//

def Pallas_CallOp : Pallas_Op<"call", [
    AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "a pallas_call: runs a kernel over a grid of blocks";
  let description = [{
    The `pallas_call` equation with its whole grid mapping. Operands are the
    dynamic grid bounds (one `index` per `-1` in `grid`), then the call's
    inputs (scalar-prefetch operands first), then the dynamic sizes of the
    results (one `index` per `?` in the result types, in order, as
    `tensor.empty` takes them); results are the outputs.

    - `symbolic`: present when the call's shapes depend on shape symbols
      (docs/gridspec.md#symbols): `symbols` (name -> `{min, max,
      multiple_of}`), `grid` (one expression per axis, `""` for a static
      or plain dynamic one), `inputs`/`outputs` (per operand, one expression
      per dimension). The `?` dims of the inputs and results, the dynamic
      sizes and the dynamic grid bounds are these expressions' values.

    - `grid`: one bound per axis, `-1` for a dynamic bound.
    - `in_specs`/`out_specs`: one `#pallas.block_spec` per non-prefetch
      input / per output.
    - `scratch`: the kernel's scratch refs.
    - `input_output_aliases`: flat pairs `[in, out, ...]`; input indices
      count every input including scalar-prefetch operands.
    - `pinned_inputs`: inputs that must be aliased (linear values).
    - `vmapped_dims`: grid axes added by vmap, invisible to the kernel.
    - `transforms`: the call-level transforms applied, in order.
    - `compiler_params`: a `#pallas.compiler_params` (gpu and tpu parts).

    ```mlir
    %o = pallas.call @add(%x, %y) {
        grid = array<i64: 4>, num_scalar_prefetch = 0,
        in_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>,
                    #pallas.block_spec<[8, 128], (i) -> (i, 0)>],
        out_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>]}
        : (tensor<32x128xf32>, tensor<32x128xf32>) -> tensor<32x128xf32>
    ```
  }];
  let arguments = (ins
    FlatSymbolRefAttr:$kernel,
    Variadic<Index>:$dynamic_grid_bounds,
    Variadic<AnyType>:$inputs,
    Variadic<Index>:$dynamic_sizes,
    DenseI64ArrayAttr:$grid,
    OptionalAttr<StrArrayAttr>:$grid_names,
    DefaultValuedAttr<I64Attr, "0">:$num_scalar_prefetch,
    TypedArrayAttrBase<Pallas_BlockSpecAttr, "block specs">:$in_specs,
    TypedArrayAttrBase<Pallas_BlockSpecAttr, "block specs">:$out_specs,
    DefaultValuedAttr<TypeArrayAttr, "{}">:$scratch,
    DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$input_output_aliases,
    DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$pinned_inputs,
    DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$vmapped_dims,
    OptionalAttr<Pallas_CostEstimateAttr>:$cost_estimate,
    OptionalAttr<Pallas_CompilerParamsAttr>:$compiler_params,
    OptionalAttr<DictionaryAttr>:$metadata,
    OptionalAttr<StrAttr>:$name,
    DefaultValuedAttr<StrArrayAttr, "{}">:$transforms,
    OptionalAttr<DictionaryAttr>:$symbolic
  );
  let results = (outs Variadic<AnyType>:$outputs);
  let assemblyFormat = [{
    $kernel (`[` $dynamic_grid_bounds^ `]`)? `` `(` $inputs `)`
    (`sizes` `(` $dynamic_sizes^ `)`)? attr-dict `:`
    functional-type($inputs, $outputs)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getNumScalarPrefetchOperands() { return getNumScalarPrefetch(); }
    /// The non-prefetch inputs, one per in_spec.
    ::mlir::OperandRange getBlockedInputs() {
      return getInputs().drop_front(getNumScalarPrefetch());
    }
    ::mlir::SmallVector<std::pair<int64_t, int64_t>> getAliasPairs();
    /// Checks that depend on the kernel, made by verifySymbolUses.
    ::mlir::LogicalResult verifyAgainstKernel(KernelOp kernel);
    /// The form of the `symbolic` attribute (see the description).
    ::mlir::LogicalResult verifySymbolic();
  }];
}

#endif // PALLAS_OPS_TD
