// Local semaphores on the CPU and the TPU (python/tests/test_semaphores.py
// has the JAX version): program i signals sem[i % 2] by 2, waits 1 off
// sem[0] and adds sem[1] to its block. The counters start at 0 and persist
// across grid steps: the blocks get 0, 2, 2, 4.
pallas.kernel @sem_counter_kernel(%x: !pallas.ref<8x128xf32>, %o: !pallas.ref<8x128xf32>,
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
