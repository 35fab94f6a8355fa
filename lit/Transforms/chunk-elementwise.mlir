// RUN: pallasc-opt %s -split-input-file -pallas-chunk-elementwise=max-element-ops=8192 | FileCheck %s

// Tests that a 64x128 block computed by a chain of 7 ops from iotas, a
// constant and a size-1 broadcast of a scalar (7 x 8192 element-ops, over
// the budget of 8192) is stored 8 rows at a time: 8 rows x 128 x 7 ops =
// 7168 fits, 16 rows would not. The
// leading-dimension iota counts from the chunk's row, the other iota and the
// broadcasts are recomputed on the chunk, and the store starts at the row.

// CHECK-LABEL: pallas.kernel @bits(
// CHECK-SAME: %[[S:[^:]+]]: !pallas.ref<1xi32, smem>
// CHECK-SAME: %[[O:[^:]+]]: !pallas.ref<64x128xi32>
// CHECK: %[[K:.+]] = pallas.load %[[S]][0]
// CHECK: %[[K11:.+]] = pallas.broadcast_in_dim %[[K]] dims [] : i32 -> tensor<1x1xi32>
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C64:.+]] = arith.constant 64 : index
// CHECK-DAG: %[[C8:.+]] = arith.constant 8 : index
// CHECK: scf.for %[[ROW:.+]] = %[[C0]] to %[[C64]] step %[[C8]] {
// CHECK:   %[[I0:.+]] = pallas.iota 0 : tensor<8x128xi32>
// CHECK:   %[[R32:.+]] = arith.index_cast %[[ROW]] : index to i32
// CHECK:   %[[RB:.+]] = pallas.broadcast_in_dim %[[R32]] dims [] : i32 -> tensor<8x128xi32>
// CHECK:   %[[ROWS:.+]] = arith.addi %[[I0]], %[[RB]] : tensor<8x128xi32>
// CHECK:   %[[COLS:.+]] = pallas.iota 1 : tensor<8x128xi32>
// CHECK:   %[[C:.+]] = arith.constant dense<128> : tensor<8x128xi32>
// CHECK:   %[[M:.+]] = arith.muli %[[ROWS]], %[[C]] : tensor<8x128xi32>
// CHECK:   %[[LIN:.+]] = arith.addi %[[M]], %[[COLS]] : tensor<8x128xi32>
// CHECK:   %[[KB:.+]] = pallas.broadcast_in_dim %[[K11]] dims [0, 1] : tensor<1x1xi32> -> tensor<8x128xi32>
// CHECK:   %[[X:.+]] = arith.xori %[[LIN]], %[[KB]] : tensor<8x128xi32>
// CHECK:   %[[START:.+]] = arith.index_cast %[[ROW]] : index to i32
// CHECK:   pallas.store %[[O]][%[[START]] : 8, 0 : 128], %[[X]] : !pallas.ref<64x128xi32>, tensor<8x128xi32>
// CHECK: }
// CHECK-NOT: tensor<64x128xi32>
pallas.kernel @bits(%s: !pallas.ref<1xi32, smem>, %o: !pallas.ref<64x128xi32>) {
  %k = pallas.load %s[0] : !pallas.ref<1xi32, smem> -> i32
  %k11 = pallas.broadcast_in_dim %k dims [] : i32 -> tensor<1x1xi32>
  %rows = pallas.iota 0 : tensor<64x128xi32>
  %cols = pallas.iota 1 : tensor<64x128xi32>
  %c = arith.constant dense<128> : tensor<64x128xi32>
  %m = arith.muli %rows, %c : tensor<64x128xi32>
  %lin = arith.addi %m, %cols : tensor<64x128xi32>
  %kb = pallas.broadcast_in_dim %k11 dims [0, 1] : tensor<1x1xi32> -> tensor<64x128xi32>
  %x = arith.xori %lin, %kb : tensor<64x128xi32>
  pallas.store %o[], %x : !pallas.ref<64x128xi32>, tensor<64x128xi32>
}

// -----

// Tests that a store into a slice of a larger ref keeps its other entries
// and adds the chunk's row to the slice's static start (rows 16..79 of the
// ref, chunks of 8 rows), and that a select with a block condition is
// recomputed on the chunk.

// CHECK-LABEL: pallas.kernel @offset(
// CHECK: scf.for %[[ROW:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK:   %[[SEL:.+]] = pallas.select %{{.+}}, %{{.+}}, %{{.+}} : tensor<8x128xi1>, tensor<8x128xi32>
// CHECK:   %[[R:.+]] = arith.index_cast %[[ROW]] : index to i32
// CHECK:   %[[C16:.+]] = arith.constant 16 : i32
// CHECK:   %[[START:.+]] = arith.addi %[[R]], %[[C16]] : i32
// CHECK:   pallas.store %{{.+}}[2, %[[START]] : 8, 0 : 128], %[[SEL]] : !pallas.ref<4x96x128xi32>, tensor<8x128xi32>
pallas.kernel @offset(%o: !pallas.ref<4x96x128xi32>) {
  %rows = pallas.iota 0 : tensor<64x128xi32>
  %cols = pallas.iota 1 : tensor<64x128xi32>
  %lt = arith.cmpi ult, %rows, %cols : tensor<64x128xi32>
  %a = arith.addi %rows, %cols : tensor<64x128xi32>
  %b = arith.subi %rows, %cols : tensor<64x128xi32>
  %sel = pallas.select %lt, %a, %b : tensor<64x128xi1>, tensor<64x128xi32>
  pallas.store %o[2, 16 : 64, 0 : 128], %sel : !pallas.ref<4x96x128xi32>, tensor<64x128xi32>
}

// -----

// Tests what stays as it is: a chain that reads a block from memory, a
// masked store, a store whose leading slice starts at a dynamic offset, and
// a chain under the budget.

// CHECK-LABEL: pallas.kernel @kept(
// CHECK-NOT: scf.for
// CHECK: pallas.store %{{.+}}[], %{{.+}} : !pallas.ref<64x128xi32>, tensor<64x128xi32>
// CHECK: pallas.store %{{.+}}[], %{{.+}} mask %{{.+}} : !pallas.ref<64x128xi32>, tensor<64x128xi32>
// CHECK: pallas.store %{{.+}}[%{{.+}} : 64, 0 : 128], %{{.+}} {fit} : !pallas.ref<128x128xi32>, tensor<64x128xi32>
// CHECK: pallas.store %{{.+}}[0 : 4, 0 : 128], %{{.+}} : !pallas.ref<128x128xi32>, tensor<4x128xi32>
// CHECK-NOT: scf.for
pallas.kernel @kept(%x: !pallas.ref<64x128xi32>, %o: !pallas.ref<64x128xi32>,
                    %p: !pallas.ref<64x128xi32>, %q: !pallas.ref<128x128xi32>,
                    %s: !pallas.ref<1xi32, smem>) {
  %v = pallas.load %x[] : !pallas.ref<64x128xi32> -> tensor<64x128xi32>
  %rows = pallas.iota 0 : tensor<64x128xi32>
  %cols = pallas.iota 1 : tensor<64x128xi32>
  %a = arith.addi %v, %rows : tensor<64x128xi32>
  %b = arith.muli %a, %cols : tensor<64x128xi32>
  pallas.store %o[], %b : !pallas.ref<64x128xi32>, tensor<64x128xi32>
  %lt = arith.cmpi ult, %rows, %cols : tensor<64x128xi32>
  %c = arith.muli %rows, %cols : tensor<64x128xi32>
  %d = arith.addi %c, %rows : tensor<64x128xi32>
  pallas.store %p[], %d mask %lt : !pallas.ref<64x128xi32>, tensor<64x128xi32>
  %start = pallas.load %s[0] : !pallas.ref<1xi32, smem> -> i32
  pallas.store %q[%start : 64, 0 : 128], %d {fit} : !pallas.ref<128x128xi32>, tensor<64x128xi32>
  %r4 = pallas.iota 0 : tensor<4x128xi32>
  %c4 = pallas.iota 1 : tensor<4x128xi32>
  %e = arith.muli %r4, %c4 : tensor<4x128xi32>
  pallas.store %q[0 : 4, 0 : 128], %e : !pallas.ref<128x128xi32>, tensor<4x128xi32>
}
