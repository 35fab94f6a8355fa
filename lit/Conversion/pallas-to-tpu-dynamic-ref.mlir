// RUN: pallasc-opt %s -split-input-file -pallas-to-tpu -verify-diagnostics | FileCheck %s

// Tests that an `any` ref with a dynamic dimension (a symbolic array passed
// whole) lowers as JAX's Mosaic lowering writes it under
// pallas_export_experimental(dynamic_shapes=True): the dimension is its
// symbol's placeholder (2147483647 for n, the first symbol met, in the
// kernel's signature), the module says where the TPU runtime finds n
// (operand 1 = after the dynamic grid bound, dimension 0), and the DMA
// slices the ref as a static one.
// CHECK: module attributes {
// CHECK-SAME: tpu.dynamic_dimension_mapping_indices_2147483647 = [{dimension_index = 0 : i64, operand_index = 1 : i64}]
// CHECK-SAME: tpu.dynamic_dimension_mapping_module_2147483647 = "{{.*}}return %arg0 : tensor<i32>
// CHECK-LABEL: func.func @kernel
// CHECK-SAME: %{{.+}}: memref<2147483647x128xf32, #tpu.memory_space<any>>
// CHECK: tpu.memref_slice %{{.+}}[%{{.+}}, %{{.+}}] : memref<2147483647x128xf32, #tpu.memory_space<any>> -> memref<8x128xf32, #tpu.memory_space<any>>
// CHECK: tpu.enqueue_dma
pallas.kernel @kernel(%x_ref: !pallas.ref<?x128xf32, any>, %o_ref: !pallas.ref<8x128xf32>, %buf: !pallas.ref<8x128xf32, vmem>, %sem: !pallas.ref<i32, semaphore>) {
  %1 = pallas.program_id 0 : i32
  %2 = arith.constant 8 : i32
  %3 = arith.muli %1, %2 : i32
  pallas.dma_start %x_ref[%3 : 8, 0 : 128], %buf[], %sem[] : !pallas.ref<?x128xf32, any>, !pallas.ref<8x128xf32, vmem>, !pallas.ref<i32, semaphore>
  pallas.dma_wait %x_ref[%3 : 8, 0 : 128], %buf[], %sem[] : !pallas.ref<?x128xf32, any>, !pallas.ref<8x128xf32, vmem>, !pallas.ref<i32, semaphore>
  %4 = pallas.load %buf[] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
  pallas.store %o_ref[], %4 : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @main(%x: tensor<?x128xf32>, %n: index {pallas.symbol = "n"}) -> tensor<?x128xf32> {
  %c8 = arith.constant 8 : index
  %g = arith.ceildivsi %n, %c8 : index
  %o = pallas.call @kernel[%g](%x) sizes(%n) {
      grid = array<i64: -1>,
      in_specs = [#pallas.block_spec<any>],
      out_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      scratch = [!pallas.ref<8x128xf32, vmem>, !pallas.ref<i32, semaphore>],
      symbolic = {symbols = {n = {min = 1}},
                  grid = ["cdiv(n, 8)"], inputs = [["n", "128"]],
                  outputs = [["n", "128"]]}}
      : (tensor<?x128xf32>) -> tensor<?x128xf32>
  return %o : tensor<?x128xf32>
}

// -----

// Tests that a dynamic dimension of an `any` ref that is an expression, not
// one symbol, is refused on TPU (JAX's placeholders stand for symbols).
pallas.kernel @k2(%x_ref: !pallas.ref<?x128xf32, any>, %o_ref: !pallas.ref<8x128xf32>, %buf: !pallas.ref<8x128xf32, vmem>, %sem: !pallas.ref<i32, semaphore>) {
  %1 = pallas.program_id 0 : i32
  pallas.dma_start %x_ref[%1 : 8, 0 : 128], %buf[], %sem[] : !pallas.ref<?x128xf32, any>, !pallas.ref<8x128xf32, vmem>, !pallas.ref<i32, semaphore>
  pallas.dma_wait %x_ref[%1 : 8, 0 : 128], %buf[], %sem[] : !pallas.ref<?x128xf32, any>, !pallas.ref<8x128xf32, vmem>, !pallas.ref<i32, semaphore>
  %4 = pallas.load %buf[] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
  pallas.store %o_ref[], %4 : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @main(%x: tensor<?x128xf32>, %n: index {pallas.symbol = "n"}) -> tensor<?x128xf32> {
  %c8 = arith.constant 8 : index
  %g = arith.ceildivsi %n, %c8 : index
  %n8 = arith.addi %n, %c8 : index
  // expected-error @+1 {{in_specs[0]: dimension 0 of inputs[0] is 'n + 8' in memory space 'any'; on TPU a dynamic dimension of an 'any' ref must be exactly one symbol (JAX's Mosaic lowering gives it that symbol's placeholder)}}
  %o = pallas.call @k2[%g](%x) sizes(%n) {
      grid = array<i64: -1>,
      in_specs = [#pallas.block_spec<any>],
      out_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      scratch = [!pallas.ref<8x128xf32, vmem>, !pallas.ref<i32, semaphore>],
      symbolic = {symbols = {n = {min = 1}},
                  grid = ["cdiv(n, 8)"], inputs = [["n + 8", "128"]],
                  outputs = [["n", "128"]]}}
      : (tensor<?x128xf32>) -> tensor<?x128xf32>
  return %o : tensor<?x128xf32>
}
