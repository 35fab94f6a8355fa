// RUN: pallasc-opt %s -pallas-to-tpu | FileCheck %s

// Tests a ring step of a multi-device kernel as Pallas' Mosaic lowering
// writes it (ops/tpu/all_gather): lax.axis_index is tpu.device_id; the
// barrier is tpu.sem_barrier, signalled on the neighbour with
// tpu.sem_signal ... device_id; the remote copy is tpu.enqueue_dma with a
// source semaphore and a device id; wait_send waits with device_id(0)
// core_id(0), wait_recv with the neighbour's id. Semaphores that DMAs use
// (remote ones too) are !tpu.dma_semaphore.
// CHECK-LABEL: func.func @ring(
// CHECK-SAME: %[[X:[^:]+]]: memref<8x128xf32, #tpu.memory_space<vmem>>, %[[O:[^:]+]]: memref<2x8x128xf32, #tpu.memory_space<vmem>>, %[[RECV:[^:]+]]: memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>, %[[SEND:[^:]+]]: memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
// CHECK: %[[D:.+]] = tpu.device_id : i32
// CHECK: %[[Q:.+]] = arith.divsi %[[D]], %{{.+}} : i32
// CHECK: %[[ME:.+]] = arith.remsi %[[Q]], %{{.+}} : i32
// CHECK: %[[NEXT:.+]] = arith.remsi %{{.+}}, %{{.+}} : i32
// CHECK: %[[B:.+]] = tpu.sem_barrier : memref<!tpu.semaphore, #tpu.memory_space<semaphore_mem>>
// CHECK: tpu.sem_signal %[[B]], %{{.+}} device_id %[[NEXT]] : memref<!tpu.semaphore, #tpu.memory_space<semaphore_mem>>
// CHECK: tpu.sem_wait %[[B]], %{{.+}} : memref<!tpu.semaphore, #tpu.memory_space<semaphore_mem>>
// CHECK: tpu.memref_slice %{{[^[]+}}[%[[ME]],
// CHECK: %[[S:.+]] = tpu.memref_squeeze
// CHECK: %[[T:.+]] = tpu.memref_squeeze
// CHECK: tpu.enqueue_dma source(%[[S]] : memref<8x128xf32, #tpu.memory_space<vmem>>) target(%[[T]] : memref<8x128xf32, #tpu.memory_space<vmem>>) source_semaphore(%[[SEND]] : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) target_semaphore(%[[RECV]] : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) device_id(%[[NEXT]])
// CHECK: tpu.wait_dma2 semaphore(%[[SEND]] : {{.+}}) src({{.+}}) dst({{.+}}) device_id(%[[ZERO:c0_i32[_0-9]*]]) core_id(%[[ZERO]])
// CHECK: tpu.wait_dma2 semaphore(%[[RECV]] : {{.+}}) src({{.+}}) dst({{.+}}) device_id(%[[NEXT]])
// CHECK-NOT: core_id
// CHECK: return
pallas.kernel @ring_kernel(%x: !pallas.ref<8x128xf32, vmem>,
                           %o: !pallas.ref<2x8x128xf32, vmem>,
                           %recv: !pallas.ref<i32, semaphore>,
                           %send: !pallas.ref<i32, semaphore>) {
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %d = pallas.device_id : i32
  %q = arith.divsi %d, %c1 : i32
  %me = arith.remsi %q, %c2 : i32
  %p1 = arith.addi %me, %c1 : i32
  %next = arith.remsi %p1, %c2 : i32
  %b = pallas.barrier_semaphore : !pallas.ref<i32, semaphore>
  pallas.remote_semaphore_signal %b[], %c1, %next : !pallas.ref<i32, semaphore>
  pallas.semaphore_wait %b[], %c1 : !pallas.ref<i32, semaphore>
  pallas.remote_dma_start %o[%me, 0 : 8, 0 : 128], %o[%me, 0 : 8, 0 : 128], %recv[], %send[], %next
      : !pallas.ref<2x8x128xf32, vmem>, !pallas.ref<2x8x128xf32, vmem>,
        !pallas.ref<i32, semaphore>, !pallas.ref<i32, semaphore>
  pallas.remote_dma_wait send %o[%me, 0 : 8, 0 : 128], %o[%me, 0 : 8, 0 : 128], %send[], %next
      : !pallas.ref<2x8x128xf32, vmem>, !pallas.ref<2x8x128xf32, vmem>,
        !pallas.ref<i32, semaphore>
  pallas.remote_dma_wait %o[%me, 0 : 8, 0 : 128], %o[%me, 0 : 8, 0 : 128], %recv[], %next
      : !pallas.ref<2x8x128xf32, vmem>, !pallas.ref<2x8x128xf32, vmem>,
        !pallas.ref<i32, semaphore>
}
func.func @main(%x: tensor<8x128xf32>) -> tensor<2x8x128xf32> {
  %0 = pallas.call @ring_kernel(%x) {grid = array<i64>, name = "ring",
      in_specs = [#pallas.block_spec<[8, 128], () -> (0, 0), vmem>],
      out_specs = [#pallas.block_spec<[2, 8, 128], () -> (0, 0, 0), vmem>],
      scratch = [!pallas.ref<i32, semaphore>, !pallas.ref<i32, semaphore>],
      compiler_params = #pallas.compiler_params<tpu = <collective_id = 0>>}
      : (tensor<8x128xf32>) -> tensor<2x8x128xf32>
  return %0 : tensor<2x8x128xf32>
}
