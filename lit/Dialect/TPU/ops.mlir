// RUN: pallasc-opt %s -split-input-file | pallasc-opt -split-input-file | FileCheck %s

// Tests that the kernel attributes Mosaic reads round-trip with its spelling.
// CHECK-LABEL: func.func @kernel_attrs
// CHECK-SAME: memref<128x128xbf16, #tpu.memory_space<vmem>>
// CHECK-SAME: memref<16xi32, #tpu.memory_space<smem>>
// CHECK-SAME: memref<32x128xf32, #tpu.memory_space<any>>
// CHECK-SAME: memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
// CHECK-SAME: memref<2x!tpu.semaphore, #tpu.memory_space<semaphore_mem>>
// CHECK-SAME: dimension_semantics = [#tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<arbitrary>]
// CHECK-SAME: tpu.core_type = #tpu.core_type<tc>
// CHECK-SAME: pipeline_mode = #tpu.pipeline_mode<synchronous>
// CHECK-SAME: window_kind = #tpu.element_window<[2, 0], [2, 0]>
func.func @kernel_attrs(%i: i32, %j: i32,
    %a: memref<128x128xbf16, #tpu.memory_space<vmem>>,
    %s: memref<16xi32, #tpu.memory_space<smem>>,
    %h: memref<32x128xf32, #tpu.memory_space<any>>,
    %sem: memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>,
    %sems: memref<2x!tpu.semaphore, #tpu.memory_space<semaphore_mem>>)
    attributes {dimension_semantics = [#tpu.dimension_semantics<parallel>,
                                       #tpu.dimension_semantics<arbitrary>],
                tpu.core_type = #tpu.core_type<tc>,
                window_params = [{pipeline_mode = #tpu.pipeline_mode<synchronous>},
                                 {window_kind = #tpu.element_window<[2, 0], [2, 0]>}]} {
  return
}

// -----

// Tests the vector ops with Mosaic's assembly formats.
// CHECK-LABEL: func.func @vector_ops
func.func @vector_ops(%m: memref<16x128xf32, #tpu.memory_space<vmem>>,
                      %a: vector<128x128xbf16>, %b: vector<128x128xbf16>,
                      %mask: vector<16x128xi1>, %x: vector<8x128xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant dense<0.0> : vector<128x128xf32>
  // CHECK: tpu.matmul %{{.*}} {dimension_numbers = #tpu.dot_dimension_numbers<[1], [0], [0], [1], [0, 0, 1, 1], [], []>, transpose_lhs_hint = false} : vector<128x128xbf16>, vector<128x128xbf16>, vector<128x128xf32> -> vector<128x128xf32>
  %d = tpu.matmul %a, %b, %zero {dimension_numbers = #tpu.dot_dimension_numbers<[1], [0], [0], [1], [0, 0, 1, 1], [], []>, transpose_lhs_hint = false} : vector<128x128xbf16>, vector<128x128xbf16>, vector<128x128xf32> -> vector<128x128xf32>
  // CHECK: tpu.matmul {{.*}}precision = #tpu.contract_precision<fp32>
  %e = tpu.matmul %a, %b, %zero {dimension_numbers = #tpu.dot_dimension_numbers<[1], [1], [0], [0], [0, 0, 1, 0], [], []>, precision = #tpu.contract_precision<fp32>, transpose_lhs_hint = false} : vector<128x128xbf16>, vector<128x128xbf16>, vector<128x128xf32> -> vector<128x128xf32>
  // CHECK: %[[V:.+]] = tpu.strided_load %{{.*}}[%{{.*}}, %{{.*}}] {strides = array<i32: 2, 1>} : memref<16x128xf32, #tpu.memory_space<vmem>>, vector<8x128xf32>
  %v = tpu.strided_load %m[%c0, %c0] {strides = array<i32: 2, 1>} : memref<16x128xf32, #tpu.memory_space<vmem>>, vector<8x128xf32>
  // CHECK: tpu.strided_store %{{.*}}[%{{.*}}, %{{.*}}], %[[V]] {strides = array<i32: 2, 1>}
  tpu.strided_store %m[%c0, %c0], %v {strides = array<i32: 2, 1>} : memref<16x128xf32, #tpu.memory_space<vmem>>, vector<8x128xf32>
  %w = vector.load %m[%c0, %c0] : memref<16x128xf32, #tpu.memory_space<vmem>>, vector<16x128xf32>
  // CHECK: tpu.vector_store %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}} {strides = array<i32>} : memref<16x128xf32, #tpu.memory_space<vmem>>, vector<16x128xf32>,
  tpu.vector_store %m[%c0, %c0], %w {strides = array<i32>} : memref<16x128xf32, #tpu.memory_space<vmem>>, vector<16x128xf32>,
  // CHECK: tpu.vector_store %{{.*}} masked %{{.*}} {strides = array<i32>} : memref<16x128xf32, #tpu.memory_space<vmem>>, vector<16x128xf32>, vector<16x128xi1>
  tpu.vector_store %m[%c0, %c0], %w masked %mask {strides = array<i32>} : memref<16x128xf32, #tpu.memory_space<vmem>>, vector<16x128xf32>, vector<16x128xi1>
  // CHECK: tpu.iota {dimensions = array<i32: 1>} : vector<8x1024xi32>
  %i = tpu.iota {dimensions = array<i32: 1>} : vector<8x1024xi32>
  // CHECK: tpu.transpose %{{.*}}, [1, 0] : vector<8x128xf32> -> vector<128x8xf32>
  %t = tpu.transpose %x, [1, 0] : vector<8x128xf32> -> vector<128x8xf32>
  // CHECK: tpu.reduce_index %{{.*}} {axis = 1 : i32, kind = #tpu.reduction_kind<arg_max>} : vector<8x128xf32> -> vector<8xi32>
  %r = tpu.reduce_index %x {axis = 1 : i32, kind = #tpu.reduction_kind<arg_max>} : vector<8x128xf32> -> vector<8xi32>
  return
}

// -----

// Tests the scalar and grid ops.
// CHECK-LABEL: func.func @scalar_ops
func.func @scalar_ops(%x: i32) {
  // CHECK: tpu.iteration_bound 2 : i32
  %n = tpu.iteration_bound 2 : i32
  // CHECK: tpu.assume_multiple %{{.*}}, 128 : i32
  %m = tpu.assume_multiple %x, 128 : i32
  // CHECK: tpu.log "i = $0" {formatted = true} : [%{{.*}}] : i32
  tpu.log "i = $0" {formatted = true} : [%x] : i32
  // CHECK: tpu.log "hello"
  tpu.log "hello"
  return
}

// -----

// Tests the ref view and DMA ops with Mosaic's assembly formats.
// CHECK-LABEL: func.func @dma_ops
// CHECK: %[[S:.+]] = tpu.memref_slice %{{.+}}[%{{.+}}] : memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
// CHECK: %[[SEM:.+]] = tpu.memref_squeeze %[[S]] : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
// CHECK: %[[X:.+]] = tpu.memref_slice %{{.+}}[%{{.+}}, %{{.+}}] : memref<32x128xf32, #tpu.memory_space<any>> -> memref<8x128xf32, #tpu.memory_space<any>>
// CHECK: tpu.enqueue_dma source(%[[X]] : memref<8x128xf32, #tpu.memory_space<any>>) target(%{{.+}} : memref<8x128xf32, #tpu.memory_space<vmem>>) target_semaphore(%[[SEM]] : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
// CHECK: tpu.wait_dma2 semaphore(%[[SEM]] : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) src(%[[X]] : memref<8x128xf32, #tpu.memory_space<any>>) dst(%{{.+}} : memref<8x128xf32, #tpu.memory_space<vmem>>)
func.func @dma_ops(%i: i32, %x: memref<32x128xf32, #tpu.memory_space<any>>,
                   %buf: memref<8x128xf32, #tpu.memory_space<vmem>>,
                   %sems: memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) {
  %c0 = arith.constant 0 : i32
  %s = tpu.memref_slice %sems[%c0] : memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
  %sem = tpu.memref_squeeze %s : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
  %xs = tpu.memref_slice %x[%i, %c0] : memref<32x128xf32, #tpu.memory_space<any>> -> memref<8x128xf32, #tpu.memory_space<any>>
  tpu.enqueue_dma source(%xs : memref<8x128xf32, #tpu.memory_space<any>>) target(%buf : memref<8x128xf32, #tpu.memory_space<vmem>>) target_semaphore(%sem : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
  tpu.wait_dma2 semaphore(%sem : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) src(%xs : memref<8x128xf32, #tpu.memory_space<any>>) dst(%buf : memref<8x128xf32, #tpu.memory_space<vmem>>)
  return
}
