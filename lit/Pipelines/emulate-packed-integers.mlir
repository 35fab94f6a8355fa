// pallas-emulate-packed-integers, which the CPU pipeline runs after
// linalg-to-loops: every i4/i2 memref becomes one dimension of bytes holding
// the elements packed as XLA packs them (2 or 4 per byte, element 0 in the
// low bits, rows not padded); a load is a byte load, an arithmetic shift by
// the element's bit offset and a truncation (sign or zero extension is the
// op's after it), a store loads the byte, clears the element's bits, ors the
// value in and stores it (not atomically: the host runs one step at a time).
// RUN: pallasc-opt %s --split-input-file --pallas-emulate-packed-integers --canonicalize --cse --verify-diagnostics | FileCheck %s

// CHECK-DAG: #[[$BYTE:.+]] = affine_map<()[s0, s1] -> (s0 * 64 + s1 floordiv 2)>
// CHECK-DAG: #[[$BIT:.+]] = affine_map<()[s0] -> (s0 * 4 - (s0 floordiv 2) * 8)>
// CHECK-LABEL: func.func @int4_block(
// CHECK-SAME: %[[X:.+]]: memref<512xi8>, %[[O:.+]]: memref<8x128xf32, strided<[?, 1], offset: ?>>, %[[W:.+]]: memref<512xi8>)
// CHECK-DAG:   %[[MASK:.+]] = arith.constant 15 : i8
// CHECK-DAG:   %[[ONES:.+]] = arith.constant -1 : i8
// CHECK:       %[[AT:.+]] = affine.apply #[[$BYTE]]()[%[[I:.+]], %[[J:.+]]]
// CHECK:       %[[$BYTEV:.+]] = memref.load %[[X]][%[[AT]]] : memref<512xi8>
// CHECK:       %[[OFF:.+]] = affine.apply #[[$BIT]]()[%[[J]]]
// CHECK:       %[[SH:.+]] = arith.index_cast %[[OFF]] : index to i8
// CHECK:       %[[R:.+]] = arith.shrsi %[[$BYTEV]], %[[SH]] : i8
// CHECK:       %[[V:.+]] = arith.trunci %[[R]] : i8 to i4
// CHECK:       arith.sitofp %[[V]] : i4 to f32
// CHECK:       %[[SUM:.+]] = arith.addi %[[V]], %[[V]] : i4
// CHECK:       %[[WIDE:.+]] = arith.extui %[[SUM]] : i4 to i8
// CHECK:       %[[M:.+]] = arith.shli %[[MASK]], %[[SH]] : i8
// CHECK:       %[[CLEAR:.+]] = arith.xori %[[M]], %[[ONES]] : i8
// CHECK:       %[[PUT:.+]] = arith.shli %[[WIDE]], %[[SH]] : i8
// CHECK:       %[[OLD:.+]] = memref.load %[[W]][%[[AT]]] : memref<512xi8>
// CHECK:       %[[KEPT:.+]] = arith.andi %[[OLD]], %[[CLEAR]] : i8
// CHECK:       %[[NEW:.+]] = arith.ori %[[KEPT]], %[[PUT]] : i8
// CHECK:       memref.store %[[NEW]], %[[W]][%[[AT]]] : memref<512xi8>
func.func @int4_block(%x: memref<8x128xi4>,
                      %o: memref<8x128xf32, strided<[?, 1], offset: ?>>,
                      %w: memref<8x128xi4>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c128 = arith.constant 128 : index
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c128 step %c1 {
      %v = memref.load %x[%i, %j] : memref<8x128xi4>
      %f = arith.sitofp %v : i4 to f32
      memref.store %f, %o[%i, %j] : memref<8x128xf32, strided<[?, 1], offset: ?>>
      %s = arith.addi %v, %v : i4
      memref.store %s, %w[%i, %j] : memref<8x128xi4>
    }
  }
  return
}

// -----

// int2 scratch (an allocation) of 4 x 8 elements is 8 bytes; its row 1 (a
// view of whole rows) is bytes 2 and 3. Its copy into a dense [1, 8] ref (of
// another layout) is a loop over the elements.
// CHECK-LABEL: func.func @int2_rows(
// CHECK-SAME: %[[O:.+]]: memref<2xi8>)
// CHECK:       %[[A:.+]] = memref.alloc() : memref<8xi8>
// CHECK:       %[[ROW:.+]] = memref.subview %[[A]][2] [2] [1] : memref<8xi8> to memref<2xi8, strided<[1], offset: 2>>
// CHECK:       scf.for
// CHECK:       memref.load %[[ROW]]
// CHECK:       arith.shrsi
// CHECK:       arith.trunci %{{.+}} : i8 to i2
// CHECK:       memref.store %{{.+}}, %[[O]]
// CHECK:       memref.dealloc %[[A]] : memref<8xi8>
func.func @int2_rows(%o: memref<1x8xi2>) {
  %a = memref.alloc() : memref<4x8xi2>
  %row = memref.subview %a[1, 0] [1, 8] [1, 1] : memref<4x8xi2> to memref<1x8xi2, strided<[8, 1], offset: 8>>
  memref.copy %row, %o : memref<1x8xi2, strided<[8, 1], offset: 8>> to memref<1x8xi2>
  memref.dealloc %a : memref<4x8xi2>
  return
}

// -----

// Rows of 6 int2 elements: row 1 starts at bit 4 of byte 1, which no view of
// bytes can express: refused.
func.func @mid_byte_row(%a: memref<4x6xi2>, %i: index) -> i2 {
  // expected-error @+1 {{a view 'memref<1x6xi2, strided<[6, 1], offset: ?>>' of the packed 'memref<4x6xi2>' (int4/uint4/int2/uint2, stored 2 or 4 per byte) is not supported on target 'cpu': the CPU lowering takes views of whole rows, of static sizes, starting on a byte}}
  %row = memref.subview %a[%i, 0] [1, 6] [1, 1] : memref<4x6xi2> to memref<1x6xi2, strided<[6, 1], offset: ?>>
  %c0 = arith.constant 0 : index
  %e = memref.load %row[%c0, %c0] : memref<1x6xi2, strided<[6, 1], offset: ?>>
  return %e : i2
}

// -----

// A view that starts at a dynamic column has no packed form: refused.
func.func @dynamic_column(%x: memref<8x128xi4>, %j: index) -> i4 {
  // expected-error @+1 {{a view 'memref<8x4xi4, strided<[128, 1], offset: ?>>' of the packed 'memref<8x128xi4>' (int4/uint4/int2/uint2, stored 2 or 4 per byte) is not supported on target 'cpu': the CPU lowering takes views of whole rows, of static sizes, starting on a byte; load the whole block and slice the value instead}}
  %v = memref.subview %x[0, %j] [8, 4] [1, 1] : memref<8x128xi4> to memref<8x4xi4, strided<[128, 1], offset: ?>>
  %c0 = arith.constant 0 : index
  %e = memref.load %v[%c0, %c0] : memref<8x4xi4, strided<[128, 1], offset: ?>>
  return %e : i4
}

// -----

// Bool memrefs keep one byte per element (the runtime's layout): untouched,
// and so are the kernel's own atomics, while a cast of a packed memref
// becomes a cast of its bytes (which canonicalization folds into the load).
// CHECK-LABEL: func.func @bools_and_casts(
// CHECK-SAME: %[[B:.+]]: memref<8xi1>, %[[X:.+]]: memref<4xi8>, %{{.+}}: index, %[[Y:.+]]: memref<4xi8>
// CHECK:       memref.load %[[B]][%{{.+}}] : memref<8xi1>
// CHECK:       memref.atomic_rmw andi %{{.+}}, %[[Y]]
// CHECK-NEXT:  memref.atomic_rmw ori %{{.+}}, %[[Y]]
// CHECK:       memref.load %[[X]][%{{.+}}] : memref<4xi8>
// CHECK:       arith.trunci %{{.+}} : i8 to i4
func.func @bools_and_casts(%b: memref<8xi1>, %x: memref<8xi4>, %i: index, %y: memref<4xi8>) -> (i1, i4) {
  %v = memref.load %b[%i] : memref<8xi1>
  %k = arith.constant 5 : i8
  %a0 = memref.atomic_rmw andi %k, %y[%i] : (i8, memref<4xi8>) -> i8
  %a1 = memref.atomic_rmw ori %k, %y[%i] : (i8, memref<4xi8>) -> i8
  %c = memref.cast %x : memref<8xi4> to memref<?xi4>
  %e = memref.load %c[%i] : memref<?xi4>
  return %v, %e : i1, i4
}
