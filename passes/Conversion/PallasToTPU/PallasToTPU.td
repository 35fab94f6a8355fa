//===- PallasToTPU.td - pallas-to-tpu pass definition ------*- tablegen -*-===//
//
// Included from passes/Conversion/Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_CONVERSION_PALLASTOTPU_TD
#define PALLASC_PASSES_CONVERSION_PALLASTOTPU_TD

include "mlir/Pass/PassBase.td"

def PallasToTPU : Pass<"pallas-to-tpu", "::mlir::ModuleOp"> {
  let summary = "Lower a pallas_call to the kernel module Mosaic consumes";
  let description = [{
    Replaces the module's contents by what Pallas' Mosaic lowering
    (jax/_src/pallas/mosaic/lowering.py) hands the TPU compiler for the
    module's single `pallas.call`:

    - the kernel as a `func.func` named after the call, taking one `i32`
      per grid dimension (vmapped ones included), the scalar-prefetch
      operands as SMEM memrefs, one memref per blocked operand (its block
      shape, squeezed dims kept as 1, in VMEM; the whole array in `any`/`hbm`
      for unblocked ones) and the scratch memrefs, with the attributes
      `dimension_semantics`, `iteration_bounds`, `scalar_prefetch`,
      `scratch_operands`, `tpu.core_type` and `window_params`;
    - one `func.func @transform_<i>` per blocked operand, mapping the grid
      indices (and scalar-prefetch refs) to the block indices of its index
      map (affine maps become `arith` on i32, `@func` maps are lowered);
    - the kernel body in `vector`/`arith`/`math`/`memref`/`scf` plus `tpu`
      ops where Mosaic needs them (`tpu.matmul`, `tpu.vector_store`,
      `tpu.strided_load`/`strided_store`, `tpu.iota`, `tpu.transpose`,
      `tpu.reduce_index`, `tpu.iteration_bound`, `tpu.assume_multiple`,
      `tpu.log`).

    The TPU block-shape rules (last two block dims divisible by 8 and 128 or
    equal to the array's; rank-1 tiling rules) are checked first, with the
    offending operand named. Ops Mosaic cannot lower are errors naming the
    op.

    Before:
    ```mlir
    pallas.kernel @k(%x: !pallas.ref<8x128xf32>, %o: !pallas.ref<8x128xf32>) {
      %v = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
      pallas.store %o[], %v : !pallas.ref<8x128xf32>, tensor<8x128xf32>
    }
    func.func @main(%a: tensor<32x128xf32>) -> tensor<32x128xf32> {
      %r = pallas.call @k(%a) {grid = array<i64: 4>, name = "k", ...}
      return %r : tensor<32x128xf32>
    }
    ```
    After:
    ```mlir
    func.func @k(%arg0: i32, %arg1: memref<8x128xf32, #tpu.memory_space<vmem>>,
                 %arg2: memref<8x128xf32, #tpu.memory_space<vmem>>)
        attributes {dimension_semantics = [#tpu.dimension_semantics<arbitrary>],
                    iteration_bounds = array<i64: 4>, scalar_prefetch = 0 : i64,
                    scratch_operands = 0 : i64, tpu.core_type = #tpu.core_type<tc>,
                    window_params = [{transform_indices = @transform_0,
                                      window_bounds = array<i64: 8, 128>}, ...]} {
      %c0 = arith.constant 0 : index
      %0 = vector.load %arg1[%c0, %c0] : memref<8x128xf32, ...>, vector<8x128xf32>
      tpu.vector_store %arg2[%c0, %c0], %0 {strides = array<i32>} : ...
      return
    }
    func.func @transform_0(%arg0: i32) -> (i32, i32) { ... }
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
    "::mlir::tpu::TPUDialect"
  ];
}

#endif // PALLASC_PASSES_CONVERSION_PALLASTOTPU_TD
