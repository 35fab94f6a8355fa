// RUN: pallasc-opt %s -split-input-file | pallasc-opt -split-input-file | FileCheck %s
// RUN: pallasc-opt %s -split-input-file --mlir-print-op-generic | pallasc-opt -split-input-file | FileCheck %s

// Tests that the local semaphore ops round-trip: a dynamic and a static index
// into a [2] semaphore ref, and a rank-0 one.
// CHECK-LABEL: pallas.kernel @sems(
// CHECK: pallas.semaphore_signal %{{.+}}[%{{.+}}], %{{.+}} : !pallas.ref<2xi32, semaphore>
// CHECK: pallas.semaphore_wait %{{.+}}[0], %{{.+}} : !pallas.ref<2xi32, semaphore>
// CHECK: %{{.+}} = pallas.semaphore_read %{{.+}}[1] : !pallas.ref<2xi32, semaphore> -> i32
// CHECK: pallas.semaphore_signal %{{.+}}[], %{{.+}} : !pallas.ref<i32, semaphore>
// CHECK: %{{.+}} = pallas.semaphore_read %{{.+}}[] : !pallas.ref<i32, semaphore> -> i32
pallas.kernel @sems(%o: !pallas.ref<i32, smem>, %sem: !pallas.ref<2xi32, semaphore>,
                    %one: !pallas.ref<i32, semaphore>) {
  %i = pallas.program_id 0 : i32
  %c1 = arith.constant 1 : i32
  pallas.semaphore_signal %sem[%i], %c1 : !pallas.ref<2xi32, semaphore>
  pallas.semaphore_wait %sem[0], %c1 : !pallas.ref<2xi32, semaphore>
  %v = pallas.semaphore_read %sem[1] : !pallas.ref<2xi32, semaphore> -> i32
  pallas.semaphore_signal %one[], %v : !pallas.ref<i32, semaphore>
  %w = pallas.semaphore_read %one[] : !pallas.ref<i32, semaphore> -> i32
  pallas.store %o[], %w : !pallas.ref<i32, smem>, i32
}
