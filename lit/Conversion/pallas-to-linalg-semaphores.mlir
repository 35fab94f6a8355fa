// RUN: pallasc-opt %s --pallas-to-linalg | FileCheck %s

// Tests local semaphores on the CPU: the semaphore ref is an i32 buffer that
// the program at grid point 0 zeroes on entry; signal loads, adds and
// stores; wait subtracts when the counter is at least its value and else
// calls the runtime's pallasc_semaphore_wait_stuck with the op's location;
// read is a load. Indices are clamped into the buffer.
// CHECK: func.func private @pallasc_semaphore_wait_stuck(memref<?xi8>, i32, i32) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @counter_kernel(
// CHECK-SAME: %[[I:[^:]+]]: i32, %{{[^:]+}}: i32, %{{[^:]+}}: memref<8x128xf32>, %{{[^:]+}}: memref<8x128xf32>, %[[SEM:[^:]+]]: memref<2xi32>)
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[I]], %{{.+}} : i32
// CHECK: scf.if %{{.+}} {
// CHECK: scf.for
// CHECK: memref.store %{{.+}}, %[[SEM]][%{{.+}}] : memref<2xi32>
// CHECK: %[[OLD:.+]] = memref.load %[[SEM]][%[[AT:.+]]] : memref<2xi32>
// CHECK: %[[NEW:.+]] = arith.addi %[[OLD]], %{{.+}} : i32
// CHECK: memref.store %[[NEW]], %[[SEM]][%[[AT]]] : memref<2xi32>
// CHECK: %[[HAVE:.+]] = memref.load %[[SEM]]
// CHECK: %[[OK:.+]] = arith.cmpi sge, %[[HAVE]], %[[WANT:[^ ]+]] : i32
// CHECK: scf.if %[[OK]] {
// CHECK: %[[REST:.+]] = arith.subi %[[HAVE]], %[[WANT]] : i32
// CHECK: memref.store %[[REST]], %[[SEM]]
// CHECK: } else {
// CHECK: memref.get_global @__pallasc_semaphore_site_0 : memref<{{[0-9]+}}xi8>
// CHECK: func.call @pallasc_semaphore_wait_stuck(%{{.+}}, %[[HAVE]], %[[WANT]]) : (memref<?xi8>, i32, i32) -> ()
// CHECK: %[[V:.+]] = memref.load %[[SEM]]
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
