//===- Passes.td - pallasc conversion passes ---------------*- tablegen -*-===//

#ifndef PALLASC_PASSES_CONVERSION_PASSES_TD
#define PALLASC_PASSES_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def PallasToLinalg : Pass<"pallas-to-linalg", "ModuleOp"> {
  let summary = "Lower pallas kernels to func/linalg/memref/bufferization";
  let description = [{
    Turns every `pallas.kernel` into a backend-neutral `func.func` of the
    same name whose arguments are, in order: one `i32` program id per
    kernel-visible grid axis, one `i32` grid size (num_programs) per such
    axis, then one memref per ref argument (the ref's shape and element
    type, identity layout). The number of axes is the grid rank of the
    `pallas.call` that launches the kernel minus its `vmapped_dims` (or,
    without a call, one more than the highest axis the kernel asks for); it
    is recorded in `pallas.num_grid_axes`.

    The body is lowered to upstream dialects:
    - `pallas.load`/`store`/`swap` → `memref.subview` (rank-reducing for
      integer indices) + `bufferization.to_tensor` /
      `bufferization.materialize_in_destination`; masks via `arith.select`
      (a masked store is a read-modify-write of the slice). Dynamic starts
      follow the interpret mode: clamped to `[0, dim]`, lanes past the end
      read the uninitialized value (NaN, the integer minimum, 0 for i16,
      false) and are not written.
    - `pallas.atomic_rmw`/`atomic_cas` → plain read-modify-write returning
      the old values (the CPU runs one grid step at a time).
    - `pallas.dot` → `linalg.matmul`/`linalg.batch_matmul` (operands
      converted to the result element type, transposes as
      `linalg.transpose`), `pallas.reduce` → `linalg.reduce` (argmax/argmin:
      a `linalg.generic` carrying (value, index), first index on ties, NaN
      wins), `broadcast_in_dim`/`iota` → `linalg.generic`/`linalg.fill`,
      `reshape` → `tensor.collapse_shape`/`expand_shape`, `transpose` →
      `linalg.transpose`, `select` → `arith.select`, `cumsum` → an `scf.for`
      over the dimension; hints are dropped.
    - `pallas.debug_print` → calls to `pallasc_debug_*` runtime functions.
    - `program_id`/`num_programs` → the new `i32` arguments.
    - `symbol_value` (a symbolic call's symbol, docs/dialect.md#symbolic-shapes)
      → with `symbol-args`, one more `i64` argument per symbol of the call
      (sorted by name), after the memrefs; without it (the GPU pipelines)
      the op is kept, for `pallas-gpu-bind-symbols` after `pallas-to-gpu`.
    - elementwise `arith`/`math` on tensors → `linalg.generic`.

    `func.func` index maps (the `@func` of a block spec) are lowered the same
    way (their ref arguments become memrefs) and tagged `pallas.index_map`.
    The `func.func` holding the `pallas.call` is erased: the launch is
    described by the call, which the driver reads before this pass.

    Before:
    ```mlir
    pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
      %v = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
      pallas.store %o[], %v : !pallas.ref<8xf32>, tensor<8xf32>
    }
    ```
    After:
    ```mlir
    func.func @k(%x: memref<8xf32>, %o: memref<8xf32>)
        attributes {pallas.kernel, pallas.num_grid_axes = 0 : i64} {
      %v = bufferization.to_tensor %x restrict : memref<8xf32> to tensor<8xf32>
      bufferization.materialize_in_destination %v in writable %o
          : (tensor<8xf32>, memref<8xf32>) -> ()
      return
    }
    ```
  }];
  let options = [
    Option<"stridedRefs", "strided-refs", "bool", /*default=*/"false",
           "Give ref arguments a fully dynamic strided layout "
           "(`strided<[?, ...], offset: ?>`) instead of the identity, so a "
           "caller can pass a view of a larger array (the CPU runtime passes "
           "blocks in place)">,
    Option<"symbolArgs", "symbol-args", "bool", /*default=*/"false",
           "Give the kernel of a symbolic call one i64 argument per symbol "
           "(sorted by name) after its memrefs, which pallas.symbol_value "
           "reads (the CPU runtime passes the values)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}


include "passes/Conversion/PallasToTPU/PallasToTPU.td"
include "passes/Conversion/GPUPrepare/GPUPrepare.td"
include "passes/Conversion/PallasToGPU/PallasToGPU.td"
include "passes/Conversion/NVGPUToNVVM/NVGPUToNVVM.td"
include "passes/Conversion/PallasMGPUToGPU/PallasMGPUToGPU.td"
include "passes/Conversion/GPUCodegen/GPUCodegen.td"
include "passes/Conversion/MathToOcml/MathToOcml.td"

def PallasCpuFuseElementwise : Pass<"pallas-cpu-fuse-elementwise"> {
  let summary = "Fuse elementwise linalg ops on tensors, with a bound on the "
                "size of a fused body";
  let description = [{
    Runs in the CPU pipeline after pallas-to-linalg. The patterns of
    upstream `linalg-fuse-elementwise-ops` (a producer with one use is fused
    into its consumer; reshapes folded by expansion; fills, splat constants
    and constant-foldable generics folded in), with one addition: a fusion
    is refused when the fused body would hold more than `max-body-ops`
    operations. LLVM's code generation (register allocation, the two-address
    pass) is super-linear in the size of one loop body, so a chain of
    thousands of elementwise ops fused into one loop took minutes to compile
    (docs/limits.md, "Compile time"); bounded, the chain becomes a sequence
    of loops over the block, each fused as far as the bound allows, and the
    compile time grows linearly. Kernels whose fused bodies stay within the
    bound compile exactly as with the upstream pass.

    Before (`max-body-ops=2`):
    ```mlir
    %a = linalg.generic ... { arith.addf; linalg.yield }
    %b = linalg.generic ins(%a ...) { arith.mulf; linalg.yield }
    %c = linalg.generic ins(%b ...) { arith.subf; linalg.yield }
    ```
    After: `%a` and `%b` fused into one generic (two ops and a yield), `%c`
    kept apart.
  }];
  let options = [
    Option<"maxBodyOps", "max-body-ops", "int64_t", /*default=*/"256",
           "Most operations (the terminator not counted) in one fused body">
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect", "::mlir::tensor::TensorDialect"
  ];
}

def PallasCpuBoundLoopNests : Pass<"pallas-cpu-bound-loop-nests"> {
  let summary = "Copy the tensors carried into every `segment-depth`-th level "
                "of a deep loop nest, so that bufferization stays polynomial";
  let description = [{
    Runs in the CPU pipeline right before `one-shot-bufferize`. Upstream's
    bufferization infers the buffer type of a loop's tensor iter_arg from
    the type of its init and of its yielded value, without memoization; in
    a nest the yielded value is the inner loop's result and the init is the
    outer loop's iter_arg, so the work about doubles with every level
    (without it a 25-deep `scf.for` nest took 23 s).

    The pass counts, for every `scf.for` and `scf.while` that carries a
    tensor, how many such loops enclose it (itself included: its level).
    At levels `segment-depth` + 1, 2 * `segment-depth` + 1, ... each ranked
    tensor init is replaced by a copy, `bufferization.alloc_tensor() copy(%init)`
    in the default memory space, whose buffer type bufferization knows
    without looking further: the inference never climbs more than
    `segment-depth` levels, and the compile time grows polynomially with
    the depth. Inits whose buffer type is already known at once (a
    function argument, `tensor.empty`, `bufferization.alloc_tensor`,
    `bufferization.to_tensor`, a constant) are left alone. The cost is one
    block copy each time a cut loop starts; nests no deeper than
    `segment-depth` (every ordinary kernel) are not changed at all.

    Before (`segment-depth=1`):
    ```mlir
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> (tensor<8xf32>) {
      %s = scf.for %j = %c0 to %n step %c1 iter_args(%b = %a) -> (tensor<8xf32>) {
        ...
    ```
    After:
    ```mlir
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> (tensor<8xf32>) {
      %cut = bufferization.alloc_tensor() copy(%a) {memory_space = 0 : i64} : tensor<8xf32>
      %s = scf.for %j = %c0 to %n step %c1 iter_args(%b = %cut) -> (tensor<8xf32>) {
        ...
    ```
  }];
  let options = [
    Option<"segmentDepth", "segment-depth", "int64_t", /*default=*/"8",
           "Most levels of a loop nest between two copies (at least 1)">
  ];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def PallasCpuOptimize : Pass<"pallas-cpu-optimize", "::mlir::func::FuncOp"> {
  let summary = "Host-specific rewrites of lowered kernels (loop order, math)";
  let description = [{
    Runs in the CPU pipeline after pallas-to-linalg, on tensors:
    - `linalg.matmul`/`linalg.batch_matmul` become `linalg.generic`s whose
      loops run (m, k, n) instead of (m, n, k), so the innermost loop walks
      rows of the right operand and of the result (unit stride, vectorized
      by LLVM) instead of a column.
    - With `approximate-math`, `math.exp`, `expm1`, `log`, `log1p`, `log2`,
      `tanh` and `erf` on f32 become MLIR's polynomial approximations (pure
      arithmetic that LLVM vectorizes) instead of a libm call per element.
      XLA's CPU backend, which runs interpret mode, approximates the same way.
    - A `bufferization.materialize_in_destination` into a ref is marked
      `restrict` when the value can be computed in the ref itself: the ref is
      written by that store only (other uses are snapshot copies taken
      before the value is computed) and the value's chain of linalg inits
      back to a `tensor.empty` is used by nothing else. `eliminate-empty-tensors`
      then makes the computation write the ref directly.

    Before:
    ```mlir
    %d = linalg.matmul ins(%a, %b : tensor<8x4xf32>, tensor<4x16xf32>)
                       outs(%c : tensor<8x16xf32>) -> tensor<8x16xf32>
    ```
    After:
    ```mlir
    %d = linalg.generic {indexing_maps = [(d0, d1, d2) -> (d0, d1),
                                          (d0, d1, d2) -> (d1, d2),
                                          (d0, d1, d2) -> (d0, d2)],
        iterator_types = ["parallel", "reduction", "parallel"]} ...
    ```
  }];
  let options = [
    Option<"approximateMath", "approximate-math", "bool", /*default=*/"true",
           "Replace f32 transcendental functions by polynomial "
           "approximations">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect"
  ];
}

#endif // PALLASC_PASSES_CONVERSION_PASSES_TD
