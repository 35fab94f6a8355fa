// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -pallas-to-gpu=chip=sm_90a | FileCheck %s --check-prefixes=CHECK,SM90
// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -pallas-to-gpu=chip=gfx942 | FileCheck %s --check-prefixes=CHECK,GFX942

// Tests the GPU lowering of an `any` ref with a dynamic dimension (a symbolic
// array passed whole, !pallas.ref<?x32xf32, any>), as the CPU and TPU paths
// compile it (pallas-to-linalg-dynamic-ref.mlir,
// pallas-to-tpu-dynamic-ref.mlir): the pointer is reinterpreted at the size
// the symbol parameter gives, `memref.dim` of the ref is that size, and a
// static-size slice at a dynamic start takes the unchecked 16-byte path only
// when it ends before the size; otherwise each row is checked against it
// (reads past it are never made, writes past it are dropped).

// The masked load of K at row i * 16 (the attention's K and V reads).
// CHECK-LABEL: gpu.func @rows(
// SM90-SAME: block = [128, 1, 1]
// GFX942-SAME: block = [256, 1, 1]
// CHECK-SAME: #pallas.gpu_param<symbol, symbols[0]>
// CHECK: %[[N:.*]] = arith.index_castui %arg4 : i32 to index
// CHECK: %[[K:.*]] = memref.reinterpret_cast %arg1 to offset: [0], sizes: [%[[N]], 32], strides: [32, 1] : memref<1x32xf32> to memref<?x32xf32>
// CHECK: %[[START:.*]] = arith.minsi %{{.*}}, %[[N]] : index
// CHECK: %[[END:.*]] = arith.addi %[[START]], %{{.*}} : index
// CHECK: %[[FITS:.*]] = arith.cmpi sle, %[[END]], %[[N]] : index
// CHECK: scf.if %[[FITS]] -> (f32, f32, f32, f32) {
// CHECK: memref.collapse_shape %[[K]]
// CHECK: vector.load %{{.*}} : memref<?xf32>, vector<4xf32>
// CHECK: } else {
// CHECK: %[[ROW:.*]] = arith.addi %[[START]], %{{.*}} : index
// CHECK: %[[IN:.*]] = arith.cmpi slt, %[[ROW]], %[[N]] : index
// CHECK: scf.if %[[IN]] -> (f32) {
// CHECK-NEXT: memref.load %[[K]][%[[ROW]], %{{.*}}] : memref<?x32xf32>
pallas.kernel @rows(%q: !pallas.ref<16x32xf32>, %k: !pallas.ref<?x32xf32, any>, %o: !pallas.ref<16x32xf32>) {
  %n = pallas.symbol_value "n" : i32
  %i = pallas.program_id 0 : i32
  %c16 = arith.constant 16 : i32
  %s = arith.muli %i, %c16 : i32
  %rows = pallas.iota 0 : tensor<16x32xi32>
  %base = pallas.broadcast_in_dim %s dims [] : i32 -> tensor<16x32xi32>
  %r = arith.addi %base, %rows : tensor<16x32xi32>
  %nb = pallas.broadcast_in_dim %n dims [] : i32 -> tensor<16x32xi32>
  %m = arith.cmpi slt, %r, %nb : tensor<16x32xi32>
  %z = arith.constant dense<0.0> : tensor<16x32xf32>
  %kb = pallas.load %k[%s : 16, 0 : 32] mask %m other %z : !pallas.ref<?x32xf32, any> -> tensor<16x32xf32>
  %qb = pallas.load %q[] : !pallas.ref<16x32xf32> -> tensor<16x32xf32>
  %a = arith.addf %qb, %kb : tensor<16x32xf32>
  pallas.store %o[], %a : !pallas.ref<16x32xf32>, tensor<16x32xf32>
}
func.func @main(%q: tensor<?x32xf32>, %k: tensor<?x32xf32>, %n: index {pallas.symbol = "n"}) -> tensor<?x32xf32> {
  %c16 = arith.constant 16 : index
  %g = arith.ceildivsi %n, %c16 : index
  %o = pallas.call @rows[%g](%q, %k) sizes(%n) {
      grid = array<i64: -1>,
      in_specs = [#pallas.block_spec<[16, 32], (i) -> (i, 0)>, #pallas.block_spec<any>],
      out_specs = [#pallas.block_spec<[16, 32], (i) -> (i, 0)>],
      symbolic = {symbols = {n = {min = 1, max = 65536}},
                  grid = ["cdiv(n, 16)"], inputs = [["n", "32"], ["n", "32"]],
                  outputs = [["n", "32"]]}}
      : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  return %o : tensor<?x32xf32>
}

// -----

// A store of a block into an `any` output at row i * 16: the rows at or
// past n are dropped.
// CHECK-LABEL: gpu.func @wrows(
// CHECK: %[[N:.*]] = arith.index_castui %arg3 : i32 to index
// CHECK: %[[O:.*]] = memref.reinterpret_cast %arg1 to offset: [0], sizes: [%[[N]], 32], strides: [32, 1] : memref<1x32xf32> to memref<?x32xf32>
// CHECK: %[[START:.*]] = arith.minsi %{{.*}}, %[[N]] : index
// CHECK: %[[END:.*]] = arith.addi %[[START]], %{{.*}} : index
// CHECK: %[[FITS:.*]] = arith.cmpi sle, %[[END]], %[[N]] : index
// CHECK: scf.if %[[FITS]] {
// CHECK: vector.store %{{.*}} : memref<?xf32>, vector<4xf32>
// CHECK: } else {
// CHECK: scf.for
// CHECK: %[[ROW:.*]] = arith.addi %[[START]], %{{.*}} : index
// CHECK: %[[IN:.*]] = arith.cmpi slt, %[[ROW]], %[[N]] : index
// CHECK: scf.if %[[IN]] {
// CHECK: memref.store %{{.*}}, %[[O]][%[[ROW]], %{{.*}}] : memref<?x32xf32>
pallas.kernel @wrows(%x: !pallas.ref<16x32xf32>, %o: !pallas.ref<?x32xf32, any>) {
  %i = pallas.program_id 0 : i32
  %c16 = arith.constant 16 : i32
  %s = arith.muli %i, %c16 : i32
  %xb = pallas.load %x[] : !pallas.ref<16x32xf32> -> tensor<16x32xf32>
  pallas.store %o[%s : 16, 0 : 32], %xb : !pallas.ref<?x32xf32, any>, tensor<16x32xf32>
}
func.func @main(%x: tensor<?x32xf32>, %n: index {pallas.symbol = "n"}) -> tensor<?x32xf32> {
  %c16 = arith.constant 16 : index
  %g = arith.ceildivsi %n, %c16 : index
  %o = pallas.call @wrows[%g](%x) sizes(%n) {
      grid = array<i64: -1>,
      in_specs = [#pallas.block_spec<[16, 32], (i) -> (i, 0)>],
      out_specs = [#pallas.block_spec<any>],
      symbolic = {symbols = {n = {min = 1, max = 65536}},
                  grid = ["cdiv(n, 16)"], inputs = [["n", "32"]],
                  outputs = [["n", "32"]]}}
      : (tensor<?x32xf32>) -> tensor<?x32xf32>
  return %o : tensor<?x32xf32>
}

// -----

// A dynamic innermost dimension: the row pitch is n, so no vector access
// (its alignment is unknown); the columns from i * 16 are checked against n.
// CHECK-LABEL: gpu.func @cols(
// CHECK: %[[N:.*]] = arith.index_castui %arg3 : i32 to index
// CHECK: %[[K:.*]] = memref.reinterpret_cast %arg0 to offset: [0], sizes: [4, %[[N]]], strides: [%{{.*}}, 1] : memref<4x1xf32> to memref<4x?xf32>
// CHECK: %[[START:.*]] = arith.minsi %{{.*}}, %[[N]] : index
// CHECK: %[[END:.*]] = arith.addi %[[START]], %{{.*}} : index
// CHECK: %[[FITS:.*]] = arith.cmpi sle, %[[END]], %[[N]] : index
// CHECK: scf.if %[[FITS]] -> (f32, f32, f32, f32) {
// CHECK-NOT: vector.load
// CHECK: memref.load %[[K]]
// CHECK: } else {
// CHECK: %[[COL:.*]] = arith.addi %[[START]], %{{.*}} : index
// CHECK: %[[IN:.*]] = arith.cmpi slt, %[[COL]], %[[N]] : index
// CHECK: scf.if %[[IN]] -> (f32) {
// CHECK-NEXT: memref.load %[[K]][%{{.*}}, %[[COL]]] : memref<4x?xf32>
pallas.kernel @cols(%k: !pallas.ref<4x?xf32, any>, %o: !pallas.ref<4x16xf32>) {
  %i = pallas.program_id 0 : i32
  %c16 = arith.constant 16 : i32
  %s = arith.muli %i, %c16 : i32
  %kb = pallas.load %k[0 : 4, %s : 16] : !pallas.ref<4x?xf32, any> -> tensor<4x16xf32>
  pallas.store %o[], %kb : !pallas.ref<4x16xf32>, tensor<4x16xf32>
}
func.func @main(%k: tensor<4x?xf32>, %n: index {pallas.symbol = "n"}) -> tensor<4x?xf32> {
  %c16 = arith.constant 16 : index
  %g = arith.ceildivsi %n, %c16 : index
  %o = pallas.call @cols[%g](%k) sizes(%n) {
      grid = array<i64: -1>,
      in_specs = [#pallas.block_spec<any>],
      out_specs = [#pallas.block_spec<[4, 16], (i) -> (0, i)>],
      symbolic = {symbols = {n = {min = 1, max = 65536}},
                  grid = ["cdiv(n, 16)"], inputs = [["4", "n"]],
                  outputs = [["4", "n"]]}}
      : (tensor<4x?xf32>) -> tensor<4x?xf32>
  return %o : tensor<4x?xf32>
}
