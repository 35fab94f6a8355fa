//===- TPUOps.td - The tpu ops pallasc emits ----------------*- tablegen -*-===//
//
// Argument names, attribute names and assembly formats follow Mosaic's
// tpu_ops.td, so that the printed IR and the attribute dictionaries written
// by the serializer are the ones jaxlib expects.
//
//===----------------------------------------------------------------------===//

#ifndef TPU_OPS_TD
#define TPU_OPS_TD

include "dialects/TPU/IR/TPUBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class TPU_Op<string mnemonic, list<Trait> traits = []>
    : Op<TPU_Dialect, mnemonic, traits>;

def TPU_MemWrite : MemoryEffects<[MemWrite<DefaultResource>]>;
def TPU_MemRead : MemoryEffects<[MemRead<DefaultResource>]>;

//===----------------------------------------------------------------------===//
// Memory access
//===----------------------------------------------------------------------===//

def TPU_VectorStoreOp : TPU_Op<"vector_store", [TPU_MemWrite,
                                                AttrSizedOperandSegments]> {
  let summary = "stores a vector into a memref, with an optional mask";
  let description = [{
    Mosaic's store for Pallas ref writes: `strides` is empty (unit strides)
    or has one entry per memref dimension; masked-off lanes are not written.

    ```mlir
    tpu.vector_store %ref[%c0, %c0], %v {strides = array<i32>}
        : memref<8x128xf32, #tpu.memory_space<vmem>>, vector<8x128xf32>,
    ```
  }];
  let arguments = (ins AnyVectorOfNonZeroRank:$valueToStore,
                       AnyMemRef:$base, Variadic<Index>:$indices,
                       DenseI32ArrayAttr:$strides,
                       Optional<AnyVectorOfNonZeroRank>:$mask,
                       DefaultValuedAttr<BoolAttr, "false">:$add);
  let assemblyFormat = [{
    $base `[` $indices `]` `,` $valueToStore (`masked` $mask^)? attr-dict
    `:` type($base) `,` type($valueToStore) `,` type($mask)
  }];
  let hasVerifier = 1;
}

def TPU_StridedLoadOp : TPU_Op<"strided_load", [TPU_MemRead]> {
  let summary = "loads a vector with a stride per memref dimension";
  let arguments = (ins AnyMemRef:$base, Variadic<Index>:$indices,
                       DenseI32ArrayAttr:$strides);
  let results = (outs AnyVectorOfNonZeroRank:$result);
  let assemblyFormat = [{
    $base `[` $indices `]` attr-dict `:` type($base) `,` type($result)
  }];
  let hasVerifier = 1;
}

def TPU_StridedStoreOp : TPU_Op<"strided_store", [TPU_MemWrite]> {
  let summary = "stores a vector with a stride per memref dimension";
  let arguments = (ins AnyVectorOfNonZeroRank:$valueToStore,
                       AnyMemRef:$base, Variadic<Index>:$indices,
                       DenseI32ArrayAttr:$strides);
  let assemblyFormat = [{
    $base `[` $indices `]` `,` $valueToStore attr-dict `:` type($base) `,`
    type($valueToStore)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Ref views and DMA
//===----------------------------------------------------------------------===//

def TPU_SomeSemaphoreType : AnyTypeOf<[TPU_SemaphoreType, TPU_DMASemaphoreType]>;

def TPU_MemRefSliceOp : TPU_Op<"memref_slice", [Pure, AttrSizedOperandSegments]> {
  let summary = "a static-shaped window of a memref at i32 offsets";
  let description = [{
    `ref.at[...]` in Pallas: the result keeps the rank; `dynamic_sizes` is
    empty for static result shapes (all pallasc emits).

    ```mlir
    %s = tpu.memref_slice %x[%i, %c0_i32] : memref<32x128xf32, #tpu.memory_space<any>>
        -> memref<8x128xf32, #tpu.memory_space<any>>
    ```
  }];
  let arguments = (ins AnyMemRef:$mem_ref, Variadic<I32>:$base_idx,
                       Variadic<I32>:$dynamic_sizes);
  let results = (outs AnyMemRef:$result);
  let assemblyFormat = [{
    $mem_ref `[` $base_idx `]` (`<` $dynamic_sizes^ `>`)?
    attr-dict `:` type($mem_ref) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TPU_MemRefSqueezeOp : TPU_Op<"memref_squeeze", [Pure]> {
  let summary = "drops unit dimensions of a memref";
  let description = [{
    ```mlir
    %s = tpu.memref_squeeze %m : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
        -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
    ```
  }];
  let arguments = (ins AnyMemRef:$input);
  let results = (outs AnyMemRef:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def TPU_EnqueueDMAOp : TPU_Op<"enqueue_dma", [AttrSizedOperandSegments]> {
  let summary = "starts a DMA from source to target";
  let description = [{
    Mosaic's DMA start (Pallas `dma_start_p`): `target_semaphore` is
    signalled when the copy lands. `subcore_id` exists from Mosaic IR version
    14 on; the serializer drops its operand segment for older versions.

    ```mlir
    tpu.enqueue_dma source(%s : memref<8x128xf32, #tpu.memory_space<any>>)
        target(%buf : memref<8x128xf32, #tpu.memory_space<vmem>>)
        target_semaphore(%sem : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
    ```
  }];
  let arguments = (ins
    AnyMemRef:$source,
    Optional<MemRefOf<[TPU_SomeSemaphoreType]>>:$source_semaphore,
    AnyMemRef:$target,
    MemRefOf<[TPU_SomeSemaphoreType]>:$target_semaphore,
    Optional<I32>:$device_id,
    Optional<I32>:$core_id,
    Optional<I32>:$subcore_id,
    DefaultValuedAttr<I32Attr, "0">:$priority,
    DefaultValuedAttr<BoolAttr, "false">:$strict_ordering
  );
  let assemblyFormat = [{
    `source` `(` $source `:` type($source) `)`
    `target` `(` $target `:` type($target) `)`
    (`source_semaphore` `(` $source_semaphore^ `:` type($source_semaphore) `)`)?
    `target_semaphore` `(` $target_semaphore `:` type($target_semaphore) `)`
    (`device_id` `(` $device_id^ `)`)?
    (`core_id` `(` $core_id^ `)`)?
    (`subcore_id` `(` $subcore_id^ `)`)?
    attr-dict
  }];
  let hasVerifier = 1;
}

def TPU_WaitDMA2Op : TPU_Op<"wait_dma2", [AttrSizedOperandSegments]> {
  let summary = "waits until the DMA from src to dst signalled its semaphore";
  let description = [{
    Pallas `dma_wait_p`; the byte count waited for is the size of `dst`.

    ```mlir
    tpu.wait_dma2 semaphore(%sem : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
        src(%s : memref<8x128xf32, #tpu.memory_space<any>>)
        dst(%buf : memref<8x128xf32, #tpu.memory_space<vmem>>)
    ```
  }];
  let arguments = (ins
    MemRefOf<[TPU_DMASemaphoreType]>:$semaphore,
    AnyMemRef:$src,
    AnyMemRef:$dst,
    Optional<I32>:$device_id,
    Optional<I32>:$core_id,
    DefaultValuedAttr<BoolAttr, "false">:$strict_ordering
  );
  let assemblyFormat = [{
    `semaphore` `(` $semaphore `:` type($semaphore) `)`
    `src` `(` $src `:` type($src) `)`
    `dst` `(` $dst `:` type($dst) `)`
    (`device_id` `(` $device_id^ `)`)?
    (`core_id` `(` $core_id^ `)`)?
    attr-dict
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Semaphores
//===----------------------------------------------------------------------===//

def TPU_SemaphoreSignalOp : TPU_Op<"sem_signal", [AttrSizedOperandSegments]> {
  let summary = "adds `amount` to a semaphore";
  let description = [{
    Pallas `semaphore_signal_p` (`pl.semaphore_signal(sem.at[i], inc)`) on
    a rank-0 view of a semaphore scratch; with `device_id`, the signal of
    that device's semaphore (`pl.semaphore_signal(..., device_id=...)`).
    pallasc writes no `core_id`/`subcore_id`; `subcore_id` exists from Mosaic
    IR version 14 on and the serializer drops its segment for older versions.

    ```mlir
    tpu.sem_signal %s, %c2_i32 : memref<!tpu.semaphore, #tpu.memory_space<semaphore_mem>>
    ```
  }];
  let arguments = (ins
    MemRefOf<[TPU_SomeSemaphoreType]>:$semaphore,
    I32:$amount,
    Optional<I32>:$device_id,
    Optional<I32>:$core_id,
    Optional<I32>:$subcore_id
  );
  let assemblyFormat = [{
    $semaphore `,` $amount
    (`device_id` $device_id^)?
    (`core_id` $core_id^)?
    (`subcore_id` $subcore_id^)?
    attr-dict `:` type($semaphore)
  }];
  let hasVerifier = 1;
}

def TPU_SemaphoreWaitOp : TPU_Op<"sem_wait"> {
  let summary = "waits until a semaphore reaches `amount`, then subtracts it";
  let description = [{
    Pallas `semaphore_wait_p` (`pl.semaphore_wait(sem.at[i], dec)`).

    ```mlir
    tpu.sem_wait %s, %c1_i32 : memref<!tpu.semaphore, #tpu.memory_space<semaphore_mem>>
    ```
  }];
  let arguments = (ins MemRefOf<[TPU_SemaphoreType]>:$semaphore, I32:$amount);
  let assemblyFormat = "$semaphore `,` $amount attr-dict `:` type($semaphore)";
  let hasVerifier = 1;
}

def TPU_GetBarrierSemaphoreOp : TPU_Op<"sem_barrier"> {
  let summary = "the barrier semaphore of a kernel that communicates";
  let description = [{
    Pallas `get_barrier_semaphore_p` (`pltpu.get_barrier_semaphore()`): the
    semaphore other devices signal to synchronize with this one; the call
    names it with `collective_id`.

    ```mlir
    %b = tpu.sem_barrier : memref<!tpu.semaphore, #tpu.memory_space<semaphore_mem>>
    ```
  }];
  let results = (outs MemRefOf<[TPU_SemaphoreType]>:$semaphore);
  let assemblyFormat = "attr-dict `:` type($semaphore)";
}

def TPU_DeviceIdOp : TPU_Op<"device_id", [Pure]> {
  let summary = "the logical id of the device running the kernel";
  let description = [{
    What Pallas' `lax.axis_index` of a mesh axis reads (divided by the minor
    axes' sizes, modulo the axis' size).

    ```mlir
    %d = tpu.device_id : i32
    ```
  }];
  let results = (outs I32:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def TPU_SemaphoreReadOp : TPU_Op<"sem_read"> {
  let summary = "the current value of a semaphore";
  let description = [{
    Pallas `semaphore_read_p` (`pl.semaphore_read(sem.at[i])`).

    ```mlir
    %v = tpu.sem_read %s : memref<!tpu.semaphore, #tpu.memory_space<semaphore_mem>> -> i32
    ```
  }];
  let arguments = (ins MemRefOf<[TPU_SomeSemaphoreType]>:$semaphore);
  let results = (outs I32:$result);
  let assemblyFormat = [{
    $semaphore attr-dict `:` type($semaphore) `->` type($result)
  }];
  let hasVerifier = 1;
}


//===----------------------------------------------------------------------===//
// Vector computations
//===----------------------------------------------------------------------===//

def TPU_MatmulOp : TPU_Op<"matmul", [Pure]> {
  let summary = "matrix product on the MXU: lhs x rhs + acc";
  let description = [{
    `transpose_lhs`/`transpose_rhs` are deprecated in Mosaic (the dimension
    numbers say which dims contract). `transpose_lhs_hint` is required from
    Mosaic IR version 13 on; the serializer drops it for older versions.

    ```mlir
    %r = tpu.matmul %a, %b, %zero {dimension_numbers =
        #tpu.dot_dimension_numbers<[1], [0], [0], [1], [0, 0, 1, 1], [], []>,
        transpose_lhs_hint = false}
        : vector<128x128xbf16>, vector<128x128xbf16>, vector<128x128xf32>
          -> vector<128x128xf32>
    ```
  }];
  let arguments = (ins AnyVectorOfNonZeroRank:$lhs, AnyVectorOfNonZeroRank:$rhs,
                       AnyVectorOfNonZeroRank:$acc,
                       DefaultValuedAttr<BoolAttr, "false">:$transpose_lhs,
                       DefaultValuedAttr<BoolAttr, "false">:$transpose_rhs,
                       OptionalAttr<TPU_ContractPrecisionAttr>:$precision,
                       OptionalAttr<TPU_DotDimensionNumbersAttr>:$dimension_numbers,
                       OptionalAttr<BoolAttr>:$transpose_lhs_hint);
  let results = (outs AnyVectorOfNonZeroRank:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $acc attr-dict `:` type($lhs) `,` type($rhs) `,`
    type($acc) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TPU_IotaOp : TPU_Op<"iota", [Pure]> {
  let summary = "indices along the given (collapsed) dimensions";
  let description = [{
    ```mlir
    %i = tpu.iota {dimensions = array<i32: 1>} : vector<8x1024xi32>
    ```
  }];
  let arguments = (ins DenseI32ArrayAttr:$dimensions);
  let results = (outs VectorOfNonZeroRankOf<[AnyInteger, Index]>:$output);
  let assemblyFormat = "attr-dict `:` type($output)";
  let hasVerifier = 1;
}

def TPU_TransposeOp : TPU_Op<"transpose", [Pure]> {
  let summary = "permutes the dimensions of a vector";
  let arguments = (ins AnyVectorOfAnyRank:$vector,
                       DenseI64ArrayAttr:$permutation);
  let results = (outs AnyVectorOfAnyRank:$result);
  let assemblyFormat = [{
    $vector `,` $permutation attr-dict `:` type($vector) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TPU_ReduceIndexOp : TPU_Op<"reduce_index", [Pure]> {
  let summary = "argmax / argmin along one axis";
  let arguments = (ins AnyVectorOfNonZeroRank:$input, I32Attr:$axis,
                       TPU_ReductionKindAttr:$kind);
  let results = (outs VectorOfNonZeroRankOf<[I32]>:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Scalars and grid
//===----------------------------------------------------------------------===//

def TPU_GetIterationBoundOp : TPU_Op<"iteration_bound"> {
  let summary = "the grid's bound along dimension `dim` (dynamic grids)";
  let arguments = (ins I32Attr:$dim);
  let results = (outs I32:$result);
  let assemblyFormat = "$dim attr-dict `:` type($result)";
}

def TPU_AssumeMultipleOp : TPU_Op<"assume_multiple", [Pure,
                                                      SameOperandsAndResultType]> {
  let summary = "hint: the value is a multiple of `multiple`";
  let arguments = (ins AnyTypeOf<[Index, AnyInteger]>:$value,
                       I32Attr:$multiple);
  let results = (outs AnyTypeOf<[Index, AnyInteger]>:$result);
  let assemblyFormat = "$value `,` $multiple attr-dict `:` type($result)";
}

def TPU_LogOp : TPU_Op<"log"> {
  let summary = "prints a tag and scalars from the kernel";
  let arguments = (ins Variadic<AnyType>:$inputs, StrAttr:$tag,
                       DefaultValuedAttr<BoolAttr, "false">:$formatted);
  let assemblyFormat = [{
    $tag attr-dict (`:` `[` $inputs^ `]` `:` type($inputs))?
  }];
}

#endif // TPU_OPS_TD
