// RUN: pallasc-opt %s -split-input-file --pallas-to-linalg | FileCheck %s

// Tests a ref with a dynamic dimension (a symbolic array in memory space
// `any`): it lowers to a memref with that dynamic dimension, every access
// reads the dimension's size (memref.dim) and checks its start at run
// time: the in-bounds slice is a subview, the one past the edge goes lane by
// lane.

// A padded (masked) read: the start is clamped to [0, n], the fast path
// runs when start + 8 <= n, else each lane past n reads the uninitialized
// value (then masked).
// CHECK-LABEL: func.func @padded
// CHECK-SAME: %[[X:[^:]+]]: memref<?x32xf32>
// CHECK: %[[N:.+]] = memref.dim %[[X]], %{{.+}} : memref<?x32xf32>
// CHECK: %[[PAD:.+]] = arith.addi %[[N]], %{{.+}} : index
// CHECK: arith.maxsi
// CHECK: %[[S:.+]] = arith.minsi %{{.+}}, %[[N]] : index
// CHECK: %[[END:.+]] = arith.addi %[[S]], %{{.+}} : index
// CHECK: %[[OK:.+]] = arith.cmpi sle, %[[END]], %[[N]] : index
// CHECK: scf.if %[[OK]]
// CHECK: memref.subview %[[X]][%[[S]], 0] [8, 32] [1, 1] : memref<?x32xf32> to memref<8x32xf32, strided<[32, 1], offset: ?>>
// CHECK: } else {
// CHECK: tensor.generate
// CHECK: arith.cmpi slt, %{{.+}}, %[[N]] : index
pallas.kernel @padded(%x: !pallas.ref<?x32xf32, any>, %o: !pallas.ref<8x32xf32>) {
  %i = pallas.program_id 0 : i32
  %c8 = arith.constant 8 : i32
  %s = arith.muli %i, %c8 : i32
  %m = arith.constant dense<true> : tensor<8x32xi1>
  %z = arith.constant dense<0.0> : tensor<8x32xf32>
  %a = pallas.load %x[%s : 8, 0 : 32] mask %m other %z : !pallas.ref<?x32xf32, any> -> tensor<8x32xf32>
  pallas.store %o[], %a : !pallas.ref<8x32xf32>, tensor<8x32xf32>
}

// -----

// A `fit` read (lax.dynamic_slice): the start wraps once by n and is clamped
// to [0, max(n - 8, 0)], so the slice lies inside the array whenever it fits.
// CHECK-LABEL: func.func @fit
// CHECK-SAME: %[[X:[^:]+]]: memref<?x32xf32>
// CHECK: %[[N:.+]] = memref.dim %[[X]], %{{.+}} : memref<?x32xf32>
// CHECK: %[[NM8:.+]] = arith.addi %[[N]], %c-8 : index
// CHECK: %[[LAST:.+]] = arith.maxsi %[[NM8]], %{{.+}} : index
// CHECK: arith.addi %{{.+}}, %[[N]] : index
// CHECK: arith.minsi %{{.+}}, %[[LAST]] : index
pallas.kernel @fit(%x: !pallas.ref<?x32xf32, any>, %o: !pallas.ref<8x32xf32>) {
  %i = pallas.program_id 0 : i32
  %c8 = arith.constant 8 : i32
  %s = arith.muli %i, %c8 : i32
  %a = pallas.load %x[%s : 8, 0 : 32] {fit} : !pallas.ref<?x32xf32, any> -> tensor<8x32xf32>
  pallas.store %o[], %a : !pallas.ref<8x32xf32>, tensor<8x32xf32>
}

// -----

// A masked store through the ref: lanes past n are dropped.
// CHECK-LABEL: func.func @store
// CHECK-SAME: %[[O:[^:]+]]: memref<?x32xf32>
// CHECK: %[[N:.+]] = memref.dim %[[O]], %{{.+}} : memref<?x32xf32>
// CHECK: scf.if
// CHECK: bufferization.materialize_in_destination
// CHECK: } else {
// CHECK: scf.for
// CHECK: arith.cmpi slt, %{{.+}}, %[[N]] : index
// CHECK: memref.store %{{.+}}, %[[O]]
pallas.kernel @store(%x: !pallas.ref<8x32xf32>, %o: !pallas.ref<?x32xf32, any>) {
  %i = pallas.program_id 0 : i32
  %c8 = arith.constant 8 : i32
  %s = arith.muli %i, %c8 : i32
  %a = pallas.load %x[] : !pallas.ref<8x32xf32> -> tensor<8x32xf32>
  %m = arith.constant dense<true> : tensor<8x32xi1>
  pallas.store %o[%s : 8, 0 : 32], %a mask %m : !pallas.ref<?x32xf32, any>, tensor<8x32xf32>
}
