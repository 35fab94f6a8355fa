// RUN: pallasc-opt %s -split-input-file -verify-diagnostics

// Tests that a semaphore op needs a ref in the semaphore memory space.

pallas.kernel @not_semaphore(%s: !pallas.ref<2xi32, smem>) {
  %c1 = arith.constant 1 : i32
  // expected-error @+1 {{'pallas.semaphore_signal' op needs a ref in the semaphore memory space (pltpu.SemaphoreType.REGULAR scratch), got '!pallas.ref<2xi32, smem>'}}
  pallas.semaphore_signal %s[0], %c1 : !pallas.ref<2xi32, smem>
}

// -----

// Tests that the indexer must pick one semaphore.

pallas.kernel @slice(%s: !pallas.ref<4xi32, semaphore>) {
  %c1 = arith.constant 1 : i32
  // expected-error @+1 {{'pallas.semaphore_wait' op indexer must pick one semaphore with an integer index per dimension of '!pallas.ref<4xi32, semaphore>', but it selects shape [2]}}
  pallas.semaphore_wait %s[0 : 2], %c1 : !pallas.ref<4xi32, semaphore>
}

// -----

// Tests that a semaphore ref holds i32 counters.

pallas.kernel @elem(%s: !pallas.ref<2xf32, semaphore>) {
  // expected-error @+1 {{'pallas.semaphore_read' op semaphore ref '!pallas.ref<2xf32, semaphore>' must have element type i32}}
  %v = pallas.semaphore_read %s[0] : !pallas.ref<2xf32, semaphore> -> i32
}
