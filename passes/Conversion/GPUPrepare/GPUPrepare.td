//===- GPUPrepare.td - pallas-gpu-prepare pass definition ------ -*- tablegen -*-===//
//
// Included from passes/Conversion/Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_CONVERSION_GPUPREPARE_TD
#define PALLASC_PASSES_CONVERSION_GPUPREPARE_TD

include "mlir/Pass/PassBase.td"

def PallasGPUPrepare : Pass<"pallas-gpu-prepare", "::mlir::ModuleOp"> {
  let summary = "Record the grid mapping and rewrite the ops the GPU lowers "
                "itself, before pallas-to-linalg";
  let description = [{
    The GPU lowering needs what `pallas-to-linalg` erases or lowers for the
    CPU. This pass runs first and:

    - records the module's single `pallas.call` (grid, block specs, scratch,
      aliases, compiler params, operand types) on the module as
      `pallas.gpu.call`, a `#pallas.gpu_call`;
    - rewrites `pallas.atomic_rmw` / `pallas.atomic_cas` on scalars into
      `memref.atomic_rmw` / `memref.generic_atomic_rmw` on the ref (seen as a
      memref through an `unrealized_conversion_cast` that folds away once
      the ref is a memref), with interpret mode's clamping of dynamic starts
      and dropping of out-of-bounds lanes; block-valued atomics become a
      loop over the lanes;
    - rewrites `pallas.multiple_of %x, n` on `i32` scalars into
      `arith.andi %x, -n` (exact when the hint holds), so the divisibility
      survives for the alignment analysis;
    - rewrites `pallas.debug_print` of scalars into `gpu.printf`.

    ```mlir
    %old = pallas.atomic_rmw add %hist[%b], %one : !pallas.ref<256xi32>, i32
    ```
    becomes
    ```mlir
    %m = builtin.unrealized_conversion_cast %hist
        : !pallas.ref<256xi32> to memref<256xi32>
    %old = scf.if %in_bounds -> (i32) {
      %o = memref.atomic_rmw addi %one, %m[%i] : (i32, memref<256xi32>) -> i32
      scf.yield %o : i32
    } else { ... }
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

#endif // PALLASC_PASSES_CONVERSION_GPUPREPARE_TD
