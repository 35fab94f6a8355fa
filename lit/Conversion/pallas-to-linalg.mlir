// RUN: pallasc-opt %s -split-input-file --pallas-to-linalg | FileCheck %s

// Tests that a kernel becomes a func.func whose leading i32 arguments are the program ids and grid sizes.
// CHECK-LABEL: func.func @grid
// CHECK-SAME: (%[[PID0:.+]]: i32, %[[PID1:.+]]: i32, %[[NUM0:.+]]: i32, %[[NUM1:.+]]: i32, %[[O:.+]]: memref<8xi32>)
// CHECK-SAME: pallas.kernel
// CHECK-SAME: pallas.num_grid_axes = 2
// CHECK: %[[S:.+]] = arith.addi %[[PID1]], %[[NUM0]] : i32
// CHECK: memref.store %[[S]], %[[O]][%{{.+}}] : memref<8xi32>
// CHECK-NOT: pallas.

pallas.kernel @grid(%o: !pallas.ref<8xi32>) {
  %i = pallas.program_id 1 : i32
  %n = pallas.num_programs 0 : i32
  %s = arith.addi %i, %n : i32
  pallas.store %o[3], %s : !pallas.ref<8xi32>, i32
}

// -----

// Tests that the axis count comes from the pallas.call (minus vmapped dims) and the call's wrapper is erased.
// CHECK-NOT: @main
// CHECK-NOT: pallas.call
// CHECK-LABEL: func.func @k
// CHECK-SAME: (%{{.+}}: i32, %{{.+}}: i32, %[[X:.+]]: memref<8xf32>, %[[O:.+]]: memref<8xf32>)
// CHECK-SAME: pallas.num_grid_axes = 1
// CHECK: %[[V:.+]] = bufferization.to_tensor %[[X]] restrict : memref<8xf32> to tensor<8xf32>
// CHECK: bufferization.materialize_in_destination %[[V]] in writable %[[O]]
// CHECK-NOT: @main

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  %v = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  pallas.store %o[], %v : !pallas.ref<8xf32>, tensor<8xf32>
}
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %o = pallas.call @k(%x) {grid = array<i64: 2, 4>, vmapped_dims = array<i64: 0>,
      in_specs = [#pallas.block_spec<[squeezed, 8], (b, i) -> (i, 0)>],
      out_specs = [#pallas.block_spec<[squeezed, 8], (b, i) -> (i, 0)>]}
      : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// -----

// Tests strided and integer-indexed static slices: rank-reducing subviews; a ref that is written is copied before it is read.
// CHECK-LABEL: func.func @slices
// CHECK-SAME: (%[[X:.+]]: memref<16x8xf32>, %[[W:.+]]: memref<16x8xf32>)
// CHECK: %[[SV:.+]] = memref.subview %[[X]][2, 0] [1, 4] [1, 2] : memref<16x8xf32> to memref<4xf32, strided<[2], offset: 16>>
// CHECK: %[[V:.+]] = bufferization.to_tensor %[[SV]] restrict
// CHECK: %[[SW:.+]] = memref.subview %[[W]][3, 0] [1, 4] [1, 1]
// CHECK: %[[BUF:.+]] = memref.alloc() : memref<4xf32>
// CHECK: linalg.copy ins(%[[SW]] : {{.+}}) outs(%[[BUF]] : memref<4xf32>)
// CHECK: %[[T:.+]] = bufferization.to_tensor %[[BUF]] restrict
// CHECK: %[[D0:.+]] = memref.subview %[[W]][0, 4] [1, 4] [1, 1]
// CHECK: bufferization.materialize_in_destination %[[V]] in writable %[[D0]]
// CHECK: %[[D1:.+]] = memref.subview %[[W]][1, 0] [1, 4] [1, 1]
// CHECK: bufferization.materialize_in_destination %[[T]] in writable %[[D1]]

pallas.kernel @slices(%x: !pallas.ref<16x8xf32>, %w: !pallas.ref<16x8xf32>) {
  %v = pallas.load %x[2, 0 : 4 : 2] : !pallas.ref<16x8xf32> -> tensor<4xf32>
  %t = pallas.load %w[3, 0 : 4] : !pallas.ref<16x8xf32> -> tensor<4xf32>
  pallas.store %w[0, 4 : 4], %v : !pallas.ref<16x8xf32>, tensor<4xf32>
  pallas.store %w[1, 0 : 4], %t : !pallas.ref<16x8xf32>, tensor<4xf32>
}

// -----

// Tests a dynamic start without `fit` (masked_load/masked_swap: the ref padded
// by the slice size): a negative start wraps by dim + size (80), the start is
// clamped to [0, dim], a fast path when the slice is in bounds, lane by lane
// with uninitialized values otherwise.
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: (%[[X:.+]]: memref<64xf32>, %[[O:.+]]: memref<16xf32>, %[[I:.+]]: memref<1xi32>)
// CHECK-DAG: %[[NAN:.+]] = arith.constant 0x7FC00000 : f32
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C16:.+]] = arith.constant 16 : index
// CHECK-DAG: %[[C64:.+]] = arith.constant 64 : index
// CHECK-DAG: %[[C80:.+]] = arith.constant 80 : index
// CHECK: %[[S:.+]] = memref.load %[[I]][%[[C0]]] : memref<1xi32>
// CHECK: %[[SI:.+]] = arith.index_cast %[[S]] : i32 to index
// CHECK: %[[WR:.+]] = arith.addi %[[SI]], %[[C80]] : index
// CHECK: %[[NEG:.+]] = arith.cmpi slt, %[[SI]], %[[C0]] : index
// CHECK: %[[W:.+]] = arith.select %[[NEG]], %[[WR]], %[[SI]] : index
// CHECK: %[[LO:.+]] = arith.maxsi %[[W]], %[[C0]] : index
// CHECK: %[[START:.+]] = arith.minsi %[[LO]], %[[C64]] : index
// CHECK: %[[END:.+]] = arith.addi %[[START]], %[[C16]] : index
// CHECK: %[[IN:.+]] = arith.cmpi sle, %[[END]], %[[C64]] : index
// CHECK: %[[V:.+]] = scf.if %[[IN]] -> (tensor<16xf32>) {
// CHECK:   memref.subview %[[X]][%[[START]]] [16] [1]
// CHECK:   linalg.copy
// CHECK: } else {
// CHECK:   tensor.generate
// CHECK:     arith.cmpi slt, %{{.+}}, %[[C64]] : index
// CHECK:     memref.load %[[X]]
// CHECK:     scf.yield %[[NAN]] : f32
// CHECK: scf.if %{{.+}} {
// CHECK:   bufferization.materialize_in_destination %[[V]] in writable
// CHECK: } else {
// CHECK:   scf.for
// CHECK:     tensor.extract %[[V]]
// CHECK:     scf.if
// CHECK:       memref.store %{{.+}}, %[[X]]
// CHECK: bufferization.materialize_in_destination %[[V]] in writable %[[O]]

pallas.kernel @dynamic(%x: !pallas.ref<64xf32>, %o: !pallas.ref<16xf32>, %i: !pallas.ref<1xi32>) {
  %c0 = arith.constant 0 : i32
  %s = pallas.load %i[%c0] : !pallas.ref<1xi32> -> i32
  %v = pallas.load %x[%s : 16] : !pallas.ref<64xf32> -> tensor<16xf32>
  pallas.store %x[%s : 16], %v : !pallas.ref<64xf32>, tensor<16xf32>
  pallas.store %o[], %v : !pallas.ref<16xf32>, tensor<16xf32>
}

// -----

// Tests `fit` (get/swap, `x_ref[pl.ds(s, 16)]`, as lax.dynamic_slice): a
// negative start wraps by dim (64), the start is clamped to [0, dim - size]
// (48), so the slice always fits: no bounds check, no lane-by-lane path.
// CHECK-LABEL: func.func @fit
// CHECK-SAME: (%[[X:.+]]: memref<64xf32>, %[[O:.+]]: memref<16xf32>, %[[I:.+]]: memref<1xi32>)
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C48:.+]] = arith.constant 48 : index
// CHECK-DAG: %[[C64:.+]] = arith.constant 64 : index
// CHECK: %[[SI:.+]] = arith.index_cast %{{.+}} : i32 to index
// CHECK: %[[WR:.+]] = arith.addi %[[SI]], %[[C64]] : index
// CHECK: %[[NEG:.+]] = arith.cmpi slt, %[[SI]], %[[C0]] : index
// CHECK: %[[W:.+]] = arith.select %[[NEG]], %[[WR]], %[[SI]] : index
// CHECK: %[[LO:.+]] = arith.maxsi %[[W]], %[[C0]] : index
// CHECK: %[[START:.+]] = arith.minsi %[[LO]], %[[C48]] : index
// CHECK-NOT: scf.if
// CHECK: memref.subview %[[X]][%[[START]]] [16] [1]
// CHECK-NOT: scf.if
// CHECK: arith.minsi %{{.+}}, %[[C48]] : index
// CHECK-NOT: scf.if
// CHECK: bufferization.materialize_in_destination
// CHECK-NOT: scf.if
// CHECK: return

pallas.kernel @fit(%x: !pallas.ref<64xf32>, %o: !pallas.ref<16xf32>, %i: !pallas.ref<1xi32>) {
  %c0 = arith.constant 0 : i32
  %s = pallas.load %i[%c0] : !pallas.ref<1xi32> -> i32
  %v = pallas.load %x[%s : 16] {fit} : !pallas.ref<64xf32> -> tensor<16xf32>
  pallas.store %x[%s : 16], %v {fit} : !pallas.ref<64xf32>, tensor<16xf32>
  pallas.store %o[], %v : !pallas.ref<16xf32>, tensor<16xf32>
}

// -----

// Tests `fit` with a stride (JAX gathers/scatters): every lane's index wraps
// by dim on its own; loads clamp it to [0, dim - 1] (no uninitialized
// values), stores drop lanes outside [0, dim).
// CHECK-LABEL: func.func @fit_strided
// CHECK-SAME: (%[[X:.+]]: memref<64xf32>, %[[O:.+]]: memref<4xf32>, %[[I:.+]]: memref<1xi32>)
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C63:.+]] = arith.constant 63 : index
// CHECK-DAG: %[[C64:.+]] = arith.constant 64 : index
// CHECK: scf.if
// CHECK: tensor.generate
// CHECK: %[[L:.+]] = arith.addi
// CHECK: %[[LW:.+]] = arith.addi %[[L]], %[[C64]] : index
// CHECK: %[[LN:.+]] = arith.cmpi slt, %[[L]], %[[C0]] : index
// CHECK: %[[LS:.+]] = arith.select %[[LN]], %[[LW]], %[[L]] : index
// CHECK: %[[LLO:.+]] = arith.maxsi %[[LS]], %[[C0]] : index
// CHECK: %[[LC:.+]] = arith.minsi %[[LLO]], %[[C63]] : index
// CHECK: memref.load %[[X]][%[[LC]]]
// CHECK-NOT: 0x7FC00000
// CHECK: scf.for
// CHECK: arith.select
// CHECK: %[[HI:.+]] = arith.cmpi slt, %{{.+}}, %[[C64]] : index
// CHECK: %[[GE:.+]] = arith.cmpi sge, %{{.+}}, %[[C0]] : index
// CHECK: arith.andi %[[HI]], %[[GE]] : i1
// CHECK: memref.store %{{.+}}, %[[X]]

pallas.kernel @fit_strided(%x: !pallas.ref<64xf32>, %o: !pallas.ref<4xf32>, %i: !pallas.ref<1xi32>) {
  %c0 = arith.constant 0 : i32
  %s = pallas.load %i[%c0] : !pallas.ref<1xi32> -> i32
  %v = pallas.load %x[%s : 4 : 2] {fit} : !pallas.ref<64xf32> -> tensor<4xf32>
  pallas.store %x[%s : 4 : 3], %v {fit} : !pallas.ref<64xf32>, tensor<4xf32>
  pallas.store %o[], %v : !pallas.ref<4xf32>, tensor<4xf32>
}

// -----

// Tests masked loads (select with other) and masked stores (read-modify-write).
// CHECK-LABEL: func.func @masked
// CHECK-SAME: (%[[X:.+]]: memref<8xf32>, %[[O:.+]]: memref<8xf32>)
// CHECK: linalg.generic
// CHECK: linalg.index 0
// CHECK: %[[MASK:.+]] = linalg.generic
// CHECK: arith.cmpi slt
// CHECK: %[[V:.+]] = bufferization.to_tensor %[[X]] restrict
// CHECK: %[[SEL:.+]] = linalg.generic {{.+}} ins(%[[MASK]], %[[V]], %{{.+}} : tensor<8xi1>, tensor<8xf32>, tensor<8xf32>)
// CHECK: arith.select
// CHECK: linalg.copy ins(%[[O]] : memref<8xf32>)
// CHECK: %[[OLD:.+]] = bufferization.to_tensor
// CHECK: %[[NEW:.+]] = linalg.generic {{.+}} ins(%[[MASK]], %[[SEL]], %[[OLD]] : tensor<8xi1>, tensor<8xf32>, tensor<8xf32>)
// CHECK: arith.select
// CHECK: bufferization.materialize_in_destination %[[NEW]] in writable %[[O]]

pallas.kernel @masked(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  %iota = pallas.iota 0 : tensor<8xi32>
  %n = arith.constant dense<5> : tensor<8xi32>
  %m = arith.cmpi slt, %iota, %n : tensor<8xi32>
  %other = arith.constant dense<0.0> : tensor<8xf32>
  %v = pallas.load %x[0 : 8] mask %m other %other : !pallas.ref<8xf32> -> tensor<8xf32>
  pallas.store %o[0 : 8], %v mask %m : !pallas.ref<8xf32>, tensor<8xf32>
}

// -----

// Tests swap and the atomics: plain read-modify-write returning the old values.
// CHECK-LABEL: func.func @atomics
// CHECK-SAME: (%[[R:.+]]: memref<8xi32>, %[[V:.+]]: memref<8xi32>)
// CHECK: %[[X:.+]] = bufferization.to_tensor %[[V]] restrict
// CHECK: linalg.copy ins(%[[R]] : memref<8xi32>)
// CHECK: %[[OLD:.+]] = bufferization.to_tensor
// CHECK: bufferization.materialize_in_destination %[[X]] in writable %[[R]]
// CHECK: %[[A:.+]] = memref.load %[[R]]
// CHECK: %[[B:.+]] = arith.addi %[[A]], %{{.+}} : i32
// CHECK: memref.store %[[B]], %[[R]]
// CHECK: linalg.copy ins(%[[R]] : memref<8xi32>)
// CHECK: %[[CUR:.+]] = bufferization.to_tensor
// CHECK: %[[MAX:.+]] = linalg.generic {{.+}} ins(%[[CUR]], %[[OLD]]
// CHECK: arith.maxsi
// CHECK: bufferization.materialize_in_destination %[[MAX]] in writable %[[R]]
// CHECK: %[[C:.+]] = memref.load %[[R]]
// CHECK: %[[EQ:.+]] = arith.cmpi eq, %[[C]], %{{.+}} : i32
// CHECK: %[[N:.+]] = arith.select %[[EQ]], %{{.+}}, %[[C]] : i32
// CHECK: memref.store %[[N]], %[[R]]

pallas.kernel @atomics(%r: !pallas.ref<8xi32>, %v: !pallas.ref<8xi32>) {
  %x = pallas.load %v[] : !pallas.ref<8xi32> -> tensor<8xi32>
  %old = pallas.swap %r[0 : 8], %x : !pallas.ref<8xi32>, tensor<8xi32>
  %c1 = arith.constant 1 : i32
  %o2 = pallas.atomic_rmw add %r[2], %c1 : !pallas.ref<8xi32>, i32
  %o3 = pallas.atomic_rmw max %r[0 : 8], %old : !pallas.ref<8xi32>, tensor<8xi32>
  %c0 = arith.constant 0 : i32
  %o4 = pallas.atomic_cas %r[5], %c0, %c1 : !pallas.ref<8xi32>, i32
}

// -----

// Tests pallas.dot: operands converted to the accumulator type, transposes, matmul into the accumulator.
// CHECK-LABEL: func.func @dot
// CHECK-SAME: (%[[A:.+]]: memref<16x8xbf16>, %[[B:.+]]: memref<32x8xbf16>, %[[O:.+]]: memref<16x32xf32>)
// CHECK: %[[ACC:.+]] = bufferization.to_tensor %{{.+}} restrict : memref<16x32xf32>
// CHECK: %[[X:.+]] = linalg.generic
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: %[[Y:.+]] = linalg.generic
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: %[[YT:.+]] = linalg.transpose ins(%[[Y]] : tensor<32x8xf32>) outs(%{{.+}} : tensor<8x32xf32>) permutation = [1, 0]
// CHECK: %[[D:.+]] = linalg.matmul ins(%[[X]], %[[YT]] : tensor<16x8xf32>, tensor<8x32xf32>) outs(%[[ACC]] : tensor<16x32xf32>)
// CHECK: bufferization.materialize_in_destination %[[D]] in writable %[[O]]

pallas.kernel @dot(%a: !pallas.ref<16x8xbf16>, %b: !pallas.ref<32x8xbf16>, %o: !pallas.ref<16x32xf32>) {
  %x = pallas.load %a[] : !pallas.ref<16x8xbf16> -> tensor<16x8xbf16>
  %y = pallas.load %b[] : !pallas.ref<32x8xbf16> -> tensor<32x8xbf16>
  %acc = pallas.load %o[] : !pallas.ref<16x32xf32> -> tensor<16x32xf32>
  %d = pallas.dot %x, %y, %acc {transpose_rhs} : tensor<16x8xbf16>, tensor<32x8xbf16>, tensor<16x32xf32> -> tensor<16x32xf32>
  pallas.store %o[], %d : !pallas.ref<16x32xf32>, tensor<16x32xf32>
}

// -----

// Tests that a dot's non-default precision travels to its linalg.matmul as
// the discardable `pallas.precision` attribute (the GPU lowering chooses tf32
// or exact f32 from it); the default precision adds nothing.
// CHECK-LABEL: func.func @dot_precision
// CHECK: linalg.matmul {pallas.precision = #pallas.precision<highest>} ins(
// CHECK: linalg.matmul {pallas.precision = #pallas.precision<high>} ins(
// CHECK: linalg.matmul ins(

pallas.kernel @dot_precision(%a: !pallas.ref<16x16xf32>, %o: !pallas.ref<16x16xf32>) {
  %x = pallas.load %a[] : !pallas.ref<16x16xf32> -> tensor<16x16xf32>
  %d0 = pallas.dot %x, %x {precision = #pallas.precision<highest>} : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %d1 = pallas.dot %x, %d0 {precision = #pallas.precision<high>} : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %d2 = pallas.dot %x, %d1 : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  pallas.store %o[], %d2 : !pallas.ref<16x16xf32>, tensor<16x16xf32>
}

// -----

// Tests a batched dot without accumulator: zero-filled batch_matmul.
// CHECK-LABEL: func.func @bdot
// CHECK: arith.extsi %{{.+}} : i8 to i32
// CHECK: linalg.transpose ins(%{{.+}} : tensor<2x4x8xi32>) outs(%{{.+}} : tensor<2x8x4xi32>) permutation = [0, 2, 1]
// CHECK: %[[Z:.+]] = linalg.fill ins(%{{.+}} : i32) outs(%{{.+}} : tensor<2x4x4xi32>)
// CHECK: linalg.batch_matmul ins(%{{.+}}, %{{.+}} : tensor<2x4x8xi32>, tensor<2x8x4xi32>) outs(%[[Z]] : tensor<2x4x4xi32>)

pallas.kernel @bdot(%a: !pallas.ref<2x4x8xi8>, %o: !pallas.ref<2x4x4xi32>) {
  %x = pallas.load %a[] : !pallas.ref<2x4x8xi8> -> tensor<2x4x8xi8>
  %d = pallas.dot %x, %x {transpose_rhs} : tensor<2x4x8xi8>, tensor<2x4x8xi8> -> tensor<2x4x4xi32>
  pallas.store %o[], %d : !pallas.ref<2x4x4xi32>, tensor<2x4x4xi32>
}

// -----

// Tests reductions: linalg.reduce from the identity; argmax as a generic carrying (value, index).
// CHECK-LABEL: func.func @reduce
// CHECK-DAG: %[[NOIDX:.+]] = arith.constant 2147483647 : i32
// CHECK-DAG: %[[NINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[I0:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<4xf32>)
// CHECK: linalg.reduce ins(%{{.+}} : tensor<4x8xf32>) outs(%[[I0]] : tensor<4xf32>) dimensions = [1]
// CHECK: arith.addf
// CHECK: %[[I1:.+]] = linalg.fill ins(%[[NINF]] : f32) outs(%{{.+}} : tensor<f32>)
// CHECK: linalg.reduce ins(%{{.+}} : tensor<4x8xf32>) outs(%[[I1]] : tensor<f32>) dimensions = [0, 1]
// CHECK: arith.maximumf
// CHECK: %[[BV:.+]] = linalg.fill ins(%[[NINF]] : f32) outs(%{{.+}} : tensor<4xf32>)
// CHECK: %[[BI:.+]] = linalg.fill ins(%[[NOIDX]] : i32) outs(%{{.+}} : tensor<4xi32>)
// CHECK: %[[ARG:.+]]:2 = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]} ins(%{{.+}} : tensor<4x8xf32>) outs(%[[BV]], %[[BI]] : tensor<4xf32>, tensor<4xi32>)
// CHECK: linalg.index 1
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf uno
// CHECK: linalg.yield %{{.+}}, %{{.+}} : f32, i32
// CHECK: bufferization.materialize_in_destination %[[ARG]]#1

pallas.kernel @reduce(%x: !pallas.ref<4x8xf32>, %s: !pallas.ref<4xf32>, %m: !pallas.ref<f32>, %a: !pallas.ref<4xi32>) {
  %v = pallas.load %x[] : !pallas.ref<4x8xf32> -> tensor<4x8xf32>
  %sum = pallas.reduce sum %v dims [1] : tensor<4x8xf32> -> tensor<4xf32>
  %max = pallas.reduce max %v dims [0, 1] : tensor<4x8xf32> -> tensor<f32>
  %arg = pallas.reduce argmax %v dims [1] : tensor<4x8xf32> -> tensor<4xi32>
  pallas.store %s[], %sum : !pallas.ref<4xf32>, tensor<4xf32>
  pallas.store %m[], %max : !pallas.ref<f32>, tensor<f32>
  pallas.store %a[], %arg : !pallas.ref<4xi32>, tensor<4xi32>
}

// -----

// Tests broadcast_in_dim (size-1 expansion, scalars), reshape, transpose, select, cumsum and the hints.
// CHECK-DAG: #[[$EXPAND:.+]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @shapes
// CHECK: %[[B:.+]] = linalg.generic {indexing_maps = [#[[$EXPAND]], #[[$ID]]], {{.+}} ins(%{{.+}} : tensor<1x8xf32>) outs(%{{.+}} : tensor<4x8xf32>)
// CHECK: %[[S:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<4x8xf32>)
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %[[B]] {{\[}}[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
// CHECK: tensor.expand_shape %[[FLAT]] {{\[}}[0, 1]] output_shape [2, 16] : tensor<32xf32> into tensor<2x16xf32>
// CHECK: %[[T:.+]] = linalg.transpose ins(%[[B]] : tensor<4x8xf32>) {{.+}} permutation = [1, 0]
// CHECK: %[[TS:.+]] = linalg.transpose ins(%[[S]] : tensor<4x8xf32>) {{.+}} permutation = [1, 0]
// CHECK: %[[C:.+]] = memref.load %{{.+}}[] : memref<i1>
// CHECK: %[[SEL:.+]] = linalg.generic {{.+}} ins(%[[C]], %[[T]], %[[TS]] : i1, tensor<8x4xf32>, tensor<8x4xf32>)
// CHECK: arith.select
// CHECK: %[[CS:.+]] = scf.for %[[IV:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %[[SEL]]) -> (tensor<8x4xf32>)
// CHECK:   %[[CUR:.+]] = arith.subi %{{.+}}, %[[IV]] : index
// CHECK:   %[[PREV:.+]] = arith.addi %[[CUR]], %{{.+}} : index
// CHECK:   tensor.extract_slice %[[ACC]][%[[CUR]], 0] [1, 4] [1, 1]
// CHECK:   tensor.extract_slice %[[ACC]][%[[PREV]], 0] [1, 4] [1, 1]
// CHECK:   arith.addf
// CHECK:   tensor.insert_slice %{{.+}} into %[[ACC]][%[[CUR]], 0] [1, 4] [1, 1]
// CHECK: bufferization.materialize_in_destination %[[CS]] in writable

pallas.kernel @shapes(%x: !pallas.ref<1x8xf32>, %o: !pallas.ref<8x4xf32>, %q: !pallas.ref<2x16xf32>, %c: !pallas.ref<i1>) {
  %v = pallas.load %x[] : !pallas.ref<1x8xf32> -> tensor<1x8xf32>
  %b = pallas.broadcast_in_dim %v dims [0, 1] : tensor<1x8xf32> -> tensor<4x8xf32>
  %f = arith.constant 2.0 : f32
  %s = pallas.broadcast_in_dim %f dims [] : f32 -> tensor<4x8xf32>
  %r = pallas.reshape %b : tensor<4x8xf32> -> tensor<2x16xf32>
  pallas.store %q[], %r : !pallas.ref<2x16xf32>, tensor<2x16xf32>
  %t = pallas.transpose %b [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %ts = pallas.transpose %s [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %cv = pallas.load %c[] : !pallas.ref<i1> -> i1
  %sel = pallas.select %cv, %t, %ts : i1, tensor<8x4xf32>
  %cs = pallas.cumsum %sel dim 0 reverse : tensor<8x4xf32>
  %h = pallas.max_contiguous %cs, [8, 4] : tensor<8x4xf32>
  pallas.store %o[], %h : !pallas.ref<8x4xf32>, tensor<8x4xf32>
}

// -----

// Tests debug_print: text as byte globals, values through the runtime's printers.
// CHECK-DAG: memref.global "private" constant @[[$STR0:.+]] : memref<4xi8> = dense<[105, 32, 61, 32]>
// CHECK-DAG: memref.global "private" constant @[[$STR1:.+]] : memref<6xi8> = dense<[44, 32, 120, 32, 61, 32]>
// CHECK-DAG: memref.global "private" constant @[[$NL:.+]] : memref<1xi8> = dense<10>
// CHECK-DAG: func.func private @pallasc_debug_text(memref<?xi8>) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @pallasc_debug_i64(i64)
// CHECK-DAG: func.func private @pallasc_debug_tensor_f32(memref<*xf32>) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @print
// CHECK-SAME: (%[[PID:.+]]: i32, %{{.+}}: i32, %{{.+}}: memref<4xf16>)
// CHECK: memref.get_global @[[$STR0]]
// CHECK: call @pallasc_debug_text
// CHECK: %[[I:.+]] = arith.extsi %[[PID]] : i32 to i64
// CHECK: call @pallasc_debug_i64(%[[I]])
// CHECK: memref.get_global @[[$STR1]]
// CHECK: call @pallasc_debug_text
// CHECK: %[[F:.+]] = linalg.generic
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: %[[BUF:.+]] = bufferization.to_buffer %[[F]] read_only : tensor<4xf32> to memref<4xf32, strided<[?], offset: ?>>
// CHECK: %[[U:.+]] = memref.cast %[[BUF]] : memref<4xf32, strided<[?], offset: ?>> to memref<*xf32>
// CHECK: call @pallasc_debug_tensor_f32(%[[U]])
// CHECK: memref.get_global @[[$NL]]
// CHECK: call @pallasc_debug_text

pallas.kernel @print(%x: !pallas.ref<4xf16>) {
  %i = pallas.program_id 0 : i32
  %v = pallas.load %x[] : !pallas.ref<4xf16> -> tensor<4xf16>
  pallas.debug_print "i = {}, x = {}" %i, %v : i32, tensor<4xf16>
}

// -----

// Tests that a @func index map gets memref arguments and its loads are lowered.
// CHECK-LABEL: func.func @index_map
// CHECK-SAME: (%[[I:.+]]: i32, %[[IDX:.+]]: memref<16xi32>) -> (i32, i32)
// CHECK-SAME: pallas.index_map
// CHECK: %[[S:.+]] = arith.index_cast %[[I]] : i32 to index
// CHECK: scf.if
// CHECK: memref.load %[[IDX]]
// CHECK: return

func.func @index_map(%i: i32, %idx: !pallas.ref<16xi32, smem>) -> (i32, i32) {
  %row = pallas.load %idx[%i] : !pallas.ref<16xi32, smem> -> i32
  %c0 = arith.constant 0 : i32
  return %row, %c0 : i32, i32
}

// -----

// Tests pallas.gather: a tensor.generate reading the memref at each lane's
// indices, clamped into the ref ([0, 23] here), masked-off lanes taking
// `other`.
// CHECK-LABEL: func.func @gather
// CHECK-SAME: %[[T:[^:]+]]: memref<24x32xf32
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C23:.+]] = arith.constant 23 : index
// CHECK: tensor.generate
// CHECK: ^bb0(%[[I:.+]]: index):
// CHECK: %[[R:.+]] = tensor.extract %{{.+}}[%[[I]]] : tensor<16xi32>
// CHECK: %[[RI:.+]] = arith.index_cast %[[R]] : i32 to index
// CHECK: %[[RLO:.+]] = arith.maxsi %[[RI]], %[[C0]] : index
// CHECK: %[[RC:.+]] = arith.minsi %[[RLO]], %[[C23]] : index
// CHECK: %[[V:.+]] = memref.load %[[T]][%[[RC]], %{{.+}}]
// CHECK: %[[M:.+]] = tensor.extract %{{.+}}[%[[I]]] : tensor<16xi1>
// CHECK: %[[S:.+]] = arith.select %[[M]], %[[V]], %{{.+}} : f32
// CHECK: tensor.yield %[[S]] : f32

pallas.kernel @gather(%t: !pallas.ref<24x32xf32>, %o: !pallas.ref<16xf32>) {
  %r = pallas.iota 0 : tensor<16xi32>
  %c = arith.constant dense<7> : tensor<16xi32>
  %m = arith.constant dense<[true, false, true, false, true, false, true, false, true, false, true, false, true, false, true, false]> : tensor<16xi1>
  %z = arith.constant dense<-1.0> : tensor<16xf32>
  %v = pallas.gather %t[%r, %c] mask %m other %z
      : !pallas.ref<24x32xf32>, tensor<16xi32>, tensor<16xi32> -> tensor<16xf32>
  pallas.store %o[], %v : !pallas.ref<16xf32>, tensor<16xf32>
}
