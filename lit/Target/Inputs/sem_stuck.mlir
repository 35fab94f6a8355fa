// Program 0 signals its semaphore once and waits for 2: on the CPU nothing
// else runs while it waits, so `pallasc run` stops with an error.
pallas.kernel @sem_stuck_kernel(%x: !pallas.ref<8x128xf32>, %o: !pallas.ref<8x128xf32>,
                                %sem: !pallas.ref<1xi32, semaphore>) {
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  pallas.semaphore_signal %sem[0], %c1 : !pallas.ref<1xi32, semaphore>
  pallas.semaphore_wait %sem[0], %c2 : !pallas.ref<1xi32, semaphore>
  %x0 = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  pallas.store %o[], %x0 : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
