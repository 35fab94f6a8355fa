// RUN: pallasc-opt %s -split-input-file -pallas-to-tpu | FileCheck %s

// Tests local semaphores as Pallas' Mosaic lowering writes them
// (pl.semaphore_signal/wait/read on pltpu.SemaphoreType.REGULAR((2,))): a
// semaphore scratch no DMA uses is memref<2x!tpu.semaphore>; each op slices
// its semaphore at its i32 index, squeezes it to rank 0, then
// tpu.sem_signal / tpu.sem_wait / tpu.sem_read.
// CHECK-LABEL: func.func @counter(
// CHECK-SAME: %[[I:[^:]+]]: i32, %{{[^:]+}}: memref<8x128xf32, #tpu.memory_space<vmem>>, %{{[^:]+}}: memref<8x128xf32, #tpu.memory_space<vmem>>, %[[SEMS:[^:]+]]: memref<2x!tpu.semaphore, #tpu.memory_space<semaphore_mem>>)
// CHECK-SAME: scratch_operands = 1 : i64
// CHECK: %[[C2:.+]] = arith.constant 2 : i32
// CHECK: %[[R:.+]] = arith.remsi %[[I]], %[[C2]] : i32
// CHECK: %[[S0:.+]] = tpu.memref_slice %[[SEMS]][%[[R]]] : memref<2x!tpu.semaphore, #tpu.memory_space<semaphore_mem>> -> memref<1x!tpu.semaphore, #tpu.memory_space<semaphore_mem>>
// CHECK: %[[Q0:.+]] = tpu.memref_squeeze %[[S0]] : memref<1x!tpu.semaphore, #tpu.memory_space<semaphore_mem>> -> memref<!tpu.semaphore, #tpu.memory_space<semaphore_mem>>
// CHECK: tpu.sem_signal %[[Q0]], %[[C2]] : memref<!tpu.semaphore, #tpu.memory_space<semaphore_mem>>
// CHECK: %[[S1:.+]] = tpu.memref_slice %[[SEMS]][%{{.+}}]
// CHECK: %[[Q1:.+]] = tpu.memref_squeeze %[[S1]]
// CHECK: tpu.sem_wait %[[Q1]], %{{.+}} : memref<!tpu.semaphore, #tpu.memory_space<semaphore_mem>>
// CHECK: %[[S2:.+]] = tpu.memref_slice %[[SEMS]][%{{.+}}]
// CHECK: %[[Q2:.+]] = tpu.memref_squeeze %[[S2]]
// CHECK: %[[V:.+]] = tpu.sem_read %[[Q2]] : memref<!tpu.semaphore, #tpu.memory_space<semaphore_mem>> -> i32
// CHECK: arith.sitofp %[[V]] : i32 to f32
pallas.kernel @counter_kernel(%x: !pallas.ref<8x128xf32>, %o: !pallas.ref<8x128xf32>,
                              %sem: !pallas.ref<2xi32, semaphore>) {
  %i = pallas.program_id 0 : i32
  %c2 = arith.constant 2 : i32
  %c1 = arith.constant 1 : i32
  %r = arith.remsi %i, %c2 : i32
  pallas.semaphore_signal %sem[%r], %c2 : !pallas.ref<2xi32, semaphore>
  pallas.semaphore_wait %sem[0], %c1 : !pallas.ref<2xi32, semaphore>
  %v = pallas.semaphore_read %sem[1] : !pallas.ref<2xi32, semaphore> -> i32
  %f = arith.sitofp %v : i32 to f32
  %x0 = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %b = pallas.broadcast_in_dim %f dims [] : f32 -> tensor<8x128xf32>
  %y = arith.addf %x0, %b : tensor<8x128xf32>
  pallas.store %o[], %y : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @main(%x: tensor<32x128xf32>) -> tensor<32x128xf32> {
  %0 = pallas.call @counter_kernel(%x) {grid = array<i64: 4>, name = "counter",
      in_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>],
      out_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>],
      scratch = [!pallas.ref<2xi32, semaphore>]}
      : (tensor<32x128xf32>) -> tensor<32x128xf32>
  return %0 : tensor<32x128xf32>
}

// -----

// Tests a rank-0 semaphore (pltpu.SemaphoreType.REGULAR): the memref itself,
// no slice or squeeze.
// CHECK-LABEL: func.func @scalar(
// CHECK-SAME: %[[SEM:[^:]+]]: memref<!tpu.semaphore, #tpu.memory_space<semaphore_mem>>)
// CHECK-NOT: tpu.memref_slice
// CHECK: tpu.sem_signal %[[SEM]], %{{.+}} : memref<!tpu.semaphore, #tpu.memory_space<semaphore_mem>>
pallas.kernel @scalar_kernel(%o: !pallas.ref<8x128xf32>, %sem: !pallas.ref<i32, semaphore>) {
  %c1 = arith.constant 1 : i32
  pallas.semaphore_signal %sem[], %c1 : !pallas.ref<i32, semaphore>
  %z = arith.constant dense<0.0> : tensor<8x128xf32>
  pallas.store %o[], %z : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @main() -> tensor<8x128xf32> {
  %0 = pallas.call @scalar_kernel() {grid = array<i64: 1>, name = "scalar",
      in_specs = [], out_specs = [#pallas.block_spec<[8, 128], (d0) -> (0, 0)>],
      scratch = [!pallas.ref<i32, semaphore>]}
      : () -> tensor<8x128xf32>
  return %0 : tensor<8x128xf32>
}
