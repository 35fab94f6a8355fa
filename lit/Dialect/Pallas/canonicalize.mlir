// RUN: pallasc-opt %s -split-input-file -canonicalize | FileCheck %s

// Tests that a broadcast_in_dim to the operand's own type folds away.

// CHECK-LABEL: func.func @broadcast_identity
// CHECK-SAME: (%[[X:.+]]: tensor<8x128xf32>)
// CHECK-NOT: pallas.broadcast_in_dim
// CHECK: return %[[X]]
func.func @broadcast_identity(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %0 = pallas.broadcast_in_dim %x dims [0, 1] : tensor<8x128xf32> -> tensor<8x128xf32>
  return %0 : tensor<8x128xf32>
}

// -----

// Tests that broadcasting a splat constant or a scalar constant yields a
// splat constant of the result type.

// CHECK-LABEL: func.func @broadcast_splat
// CHECK-DAG: %[[A:.+]] = arith.constant dense<1.000000e+00> : tensor<4x8xf32>
// CHECK-DAG: %[[B:.+]] = arith.constant dense<7> : tensor<8x4xi32>
// CHECK-NOT: pallas.broadcast_in_dim
// CHECK: return %[[A]], %[[B]]
func.func @broadcast_splat() -> (tensor<4x8xf32>, tensor<8x4xi32>) {
  %c = arith.constant dense<1.0> : tensor<8xf32>
  %0 = pallas.broadcast_in_dim %c dims [1] : tensor<8xf32> -> tensor<4x8xf32>
  %s = arith.constant 7 : i32
  %1 = pallas.broadcast_in_dim %s dims [] : i32 -> tensor<8x4xi32>
  return %0, %1 : tensor<4x8xf32>, tensor<8x4xi32>
}

// -----

// Tests that a real broadcast of a non-constant is kept.

// CHECK-LABEL: func.func @broadcast_kept
// CHECK-SAME: (%[[X:.+]]: tensor<8xf32>)
// CHECK: %[[B:.+]] = pallas.broadcast_in_dim %[[X]] dims [0] : tensor<8xf32> -> tensor<8x128xf32>
// CHECK: return %[[B]]
func.func @broadcast_kept(%x: tensor<8xf32>) -> tensor<8x128xf32> {
  %0 = pallas.broadcast_in_dim %x dims [0] : tensor<8xf32> -> tensor<8x128xf32>
  return %0 : tensor<8x128xf32>
}

// -----

// Tests that a reshape to the same type folds away.

// CHECK-LABEL: func.func @reshape_identity
// CHECK-SAME: (%[[X:.+]]: tensor<8x128xf32>)
// CHECK-NOT: pallas.reshape
// CHECK: return %[[X]]
func.func @reshape_identity(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %0 = pallas.reshape %x : tensor<8x128xf32> -> tensor<8x128xf32>
  return %0 : tensor<8x128xf32>
}

// -----

// Tests that a chain of reshapes becomes one reshape of the first operand,
// and a chain that returns to the original shape disappears.

// CHECK-LABEL: func.func @reshape_chain
// CHECK-SAME: (%[[X:.+]]: tensor<8x128xf32>)
// CHECK: %[[R:.+]] = pallas.reshape %[[X]] : tensor<8x128xf32> -> tensor<32x32xf32>
// CHECK-NOT: pallas.reshape
// CHECK: return %[[R]], %[[X]]
func.func @reshape_chain(%x: tensor<8x128xf32>) -> (tensor<32x32xf32>, tensor<8x128xf32>) {
  %0 = pallas.reshape %x : tensor<8x128xf32> -> tensor<1024xf32>
  %1 = pallas.reshape %0 : tensor<1024xf32> -> tensor<4x256xf32>
  %2 = pallas.reshape %1 : tensor<4x256xf32> -> tensor<32x32xf32>
  %3 = pallas.reshape %2 : tensor<32x32xf32> -> tensor<8x128xf32>
  return %2, %3 : tensor<32x32xf32>, tensor<8x128xf32>
}

// -----

// Tests that reshaping a splat constant yields a splat constant.

// CHECK-LABEL: func.func @reshape_splat
// CHECK: %[[C:.+]] = arith.constant dense<2.000000e+00> : tensor<2x4xf32>
// CHECK-NOT: pallas.reshape
// CHECK: return %[[C]]
func.func @reshape_splat() -> tensor<2x4xf32> {
  %c = arith.constant dense<2.0> : tensor<8xf32>
  %0 = pallas.reshape %c : tensor<8xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Tests that an identity transpose folds away and a real one is kept.

// CHECK-LABEL: func.func @transpose_identity
// CHECK-SAME: (%[[X:.+]]: tensor<8x128xf32>)
// CHECK: %[[T:.+]] = pallas.transpose %[[X]] [1, 0]
// CHECK: return %[[X]], %[[T]]
func.func @transpose_identity(%x: tensor<8x128xf32>) -> (tensor<8x128xf32>, tensor<128x8xf32>) {
  %0 = pallas.transpose %x [0, 1] : tensor<8x128xf32> -> tensor<8x128xf32>
  %1 = pallas.transpose %x [1, 0] : tensor<8x128xf32> -> tensor<128x8xf32>
  return %0, %1 : tensor<8x128xf32>, tensor<128x8xf32>
}

// -----

// Tests that select of two equal operands folds to the operand.

// CHECK-LABEL: func.func @select_same
// CHECK-SAME: (%[[C:[^:]+]]: tensor<8xi1>, %[[X:[^:]+]]: tensor<8xf32>)
// CHECK-NOT: pallas.select
// CHECK: return %[[X]]
func.func @select_same(%c: tensor<8xi1>, %x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = pallas.select %c, %x, %x : tensor<8xi1>, tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Tests that select with a constant condition (scalar or splat) picks a
// side, and a non-constant condition is kept.

// CHECK-LABEL: func.func @select_constant_cond
// CHECK-SAME: (%[[A:[^:]+]]: tensor<8xf32>, %[[B:[^:]+]]: tensor<8xf32>, %[[M:[^:]+]]: tensor<8xi1>)
// CHECK: %[[S:.+]] = pallas.select %[[M]], %[[A]], %[[B]]
// CHECK: return %[[A]], %[[B]], %[[B]], %[[A]], %[[S]]
func.func @select_constant_cond(%a: tensor<8xf32>, %b: tensor<8xf32>, %m: tensor<8xi1>)
    -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %t = arith.constant true
  %f = arith.constant false
  %st = arith.constant dense<true> : tensor<8xi1>
  %sf = arith.constant dense<false> : tensor<8xi1>
  %0 = pallas.select %t, %a, %b : i1, tensor<8xf32>
  %1 = pallas.select %f, %a, %b : i1, tensor<8xf32>
  %2 = pallas.select %sf, %a, %b : tensor<8xi1>, tensor<8xf32>
  %3 = pallas.select %st, %a, %b : tensor<8xi1>, tensor<8xf32>
  %4 = pallas.select %m, %a, %b : tensor<8xi1>, tensor<8xf32>
  return %0, %1, %2, %3, %4 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// Tests that select with a non-splat constant condition is kept.

// CHECK-LABEL: func.func @select_mixed_cond
// CHECK: pallas.select
func.func @select_mixed_cond(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %m = arith.constant dense<[true, false]> : tensor<2xi1>
  %0 = pallas.select %m, %a, %b : tensor<2xi1>, tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that the multiple_of and max_contiguous hints on constants fold
// away, and hints on other values are kept.

// CHECK-LABEL: func.func @hints_on_constants
// CHECK-SAME: (%[[I:[^:]+]]: i32, %[[O:[^:]+]]: tensor<128xi32>)
// CHECK-DAG: %[[C:.+]] = arith.constant 256 : i32
// CHECK-DAG: %[[IOTA:.+]] = arith.constant dense<{{.*}}> : tensor<4xi32>
// CHECK: %[[M:.+]] = pallas.multiple_of %[[I]], 16 : i32
// CHECK: %[[MC:.+]] = pallas.max_contiguous %[[O]], [128] : tensor<128xi32>
// CHECK: return %[[C]], %[[IOTA]], %[[M]], %[[MC]]
func.func @hints_on_constants(%i: i32, %o: tensor<128xi32>)
    -> (i32, tensor<4xi32>, i32, tensor<128xi32>) {
  %c = arith.constant 256 : i32
  %0 = pallas.multiple_of %c, 128 : i32
  %v = arith.constant dense<[0, 1, 2, 3]> : tensor<4xi32>
  %1 = pallas.max_contiguous %v, [4] : tensor<4xi32>
  %2 = pallas.multiple_of %i, 16 : i32
  %3 = pallas.max_contiguous %o, [128] : tensor<128xi32>
  return %0, %1, %2, %3 : i32, tensor<4xi32>, i32, tensor<128xi32>
}

// -----

// Tests that hi_unpack(hi_pack(x...)) folds to x....

// CHECK-LABEL: func.func @unpack_of_pack
// CHECK-SAME: (%[[V:[^:]+]]: tensor<64xi8>, %[[S:[^:]+]]: tensor<1xf32>)
// CHECK-NOT: pallas.hi_pack
// CHECK-NOT: pallas.hi_unpack
// CHECK: return %[[V]], %[[S]]
func.func @unpack_of_pack(%v: tensor<64xi8>, %s: tensor<1xf32>) -> (tensor<64xi8>, tensor<1xf32>) {
  %q = pallas.hi_pack %v, %s : tensor<64xi8>, tensor<1xf32> -> !pallas.hi<"qarray", tensor<64xi8>, tensor<1xf32>>
  %a, %b = pallas.hi_unpack %q : !pallas.hi<"qarray", tensor<64xi8>, tensor<1xf32>>
  return %a, %b : tensor<64xi8>, tensor<1xf32>
}

// -----

// Tests that hi_unpack of a kernel argument is kept.

// CHECK-LABEL: pallas.kernel @unpack_of_argument
// CHECK: pallas.hi_unpack
pallas.kernel @unpack_of_argument(%q: !pallas.hi<"qarray", !pallas.ref<64xi8>, !pallas.ref<1xf32>>,
                                  %o: !pallas.ref<64xi8>) {
  %v, %s = pallas.hi_unpack %q : !pallas.hi<"qarray", !pallas.ref<64xi8>, !pallas.ref<1xf32>>
  %x = pallas.load %v[] : !pallas.ref<64xi8> -> tensor<64xi8>
  pallas.store %o[], %x : !pallas.ref<64xi8>, tensor<64xi8>
}
