// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu=chip=sm_80 -canonicalize -cse | FileCheck %s

// pallas-to-gpu is one pass whose source is split by concern
// (passes/Conversion/PallasToGPU, docs/cuda.md's file map); the
// pallas-to-gpu-*.mlir files test it one concern per file.
//
// This file: windows reaching past a ref's end, JAX's round-up-and-mask
// idiom (EmitWindow.cpp): pallas-to-linalg's lane-by-lane slow path (a
// tensor.generate of guarded loads, a loop nest of guarded stores) becomes
// one distributed load and one distributed store with vector groups. The
// PTX and the emulators: lit/Target/cuda-round-up-mask.test.

// Tests the 1024-long window over a 1000-long row (the whole row is the
// block): 8 elements a thread in two groups of 4, each one 16-byte
// vector.load. A thread's first group lies below 892 + 4 (the range of its
// coordinate, from the thread id's): no bounds check and no mask is left on
// it. The second group's load reads from an index made safe by its bounds
// check, and only its 4 lanes keep a mask compare. The stores are two
// 16-byte vector.stores, the second under the bounds check alone (the mask
// `iota < 1000` repeats it); no loop over the elements, no barrier.
// CHECK-LABEL: gpu.func @window(
// CHECK-NOT: scf.for
// CHECK-NOT: gpu.barrier
// CHECK: %[[TC:.+]] = arith.ori
// CHECK-NOT: arith.cmpi
// CHECK: vector.load %{{.+}}[%[[B0:.+]]] {alignment = 16 : i64} : memref<4000xf32>, vector<4xf32>
// CHECK: %[[C1:.+]] = arith.addi %[[TC]], %c128 : index
// CHECK: %[[OK1:.+]] = arith.cmpi slt, %[[C1]], %c1000 : index
// CHECK: %[[I1:.+]] = arith.select %[[OK1]]
// CHECK: vector.load %{{.+}}[%[[I1]]] {alignment = 16 : i64} : memref<4000xf32>, vector<4xf32>
// CHECK-COUNT-4: arith.cmpi slt, %{{.+}}, %c1000_i32 : i32
// CHECK-NOT: arith.cmpi
// CHECK-NOT: memref.load
// CHECK-NOT: scf.for
// CHECK-NOT: gpu.barrier
// CHECK: vector.from_elements
// CHECK-NEXT: vector.store %{{.+}}[%[[B0]]] {alignment = 16 : i64} : memref<4000xf32>, vector<4xf32>
// CHECK-NEXT: scf.if %[[OK1]] {
// CHECK-NEXT: vector.from_elements
// CHECK-NEXT: vector.store {{.+}} : memref<4000xf32>, vector<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: gpu.return
pallas.kernel @window_kernel(%x: !pallas.ref<1000xf32>, %o: !pallas.ref<1000xf32>) {
  %iota = pallas.iota 0 : tensor<1024xi32>
  %n = arith.constant dense<1000> : tensor<1024xi32>
  %mask = arith.cmpi slt, %iota, %n : tensor<1024xi32>
  %c0 = arith.constant 0 : i32
  %ninf = arith.constant dense<0xFF800000> : tensor<1024xf32>
  %v = pallas.load %x[%c0 : 1024] mask %mask other %ninf : !pallas.ref<1000xf32> -> tensor<1024xf32>
  %e = math.exp %v : tensor<1024xf32>
  pallas.store %o[%c0 : 1024], %e mask %mask : !pallas.ref<1000xf32>, tensor<1024xf32>
}
func.func @main(%x: tensor<4x1000xf32>) -> tensor<4x1000xf32> {
  %o = pallas.call @window_kernel(%x) {grid = array<i64: 4>, name = "window",
      in_specs = [#pallas.block_spec<[squeezed, 1000], (d0) -> (d0, 0)>],
      out_specs = [#pallas.block_spec<[squeezed, 1000], (d0) -> (d0, 0)>]}
      : (tensor<4x1000xf32>) -> tensor<4x1000xf32>
  return %o : tensor<4x1000xf32>
}

// -----

// Tests a store mask stricter than the ref's end (`iota < 150` on a
// 200-long row, window 256): it stays, per group of 4 lanes one vector
// store when the whole group is on, else one store per lane that is on,
// all under the group's bounds check; still no loop and no barrier.
// CHECK-LABEL: gpu.func @strict(
// CHECK-NOT: scf.for
// CHECK-NOT: gpu.barrier
// CHECK: vector.load {{.+}} : memref<600xf32>, vector<4xf32>
// CHECK-NOT: scf.for
// CHECK-NOT: gpu.barrier
// CHECK: scf.if %{{.+}} {
// CHECK: scf.if %{{.+}} {
// CHECK: vector.store {{.+}} : memref<600xf32>, vector<4xf32>
// CHECK: } else {
// CHECK: memref.store {{.+}} : memref<600xf32>
// CHECK-NOT: scf.for
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
pallas.kernel @strict_kernel(%x: !pallas.ref<200xf32>, %o: !pallas.ref<200xf32>) {
  %iota = pallas.iota 0 : tensor<256xi32>
  %n150 = arith.constant dense<150> : tensor<256xi32>
  %keep = arith.cmpi slt, %iota, %n150 : tensor<256xi32>
  %n200 = arith.constant dense<200> : tensor<256xi32>
  %in = arith.cmpi slt, %iota, %n200 : tensor<256xi32>
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0.0> : tensor<256xf32>
  %v = pallas.load %x[%c0 : 256] mask %in other %zero : !pallas.ref<200xf32> -> tensor<256xf32>
  %one = arith.constant dense<1.0> : tensor<256xf32>
  %w = arith.addf %v, %one : tensor<256xf32>
  pallas.store %o[%c0 : 256], %w mask %keep : !pallas.ref<200xf32>, tensor<256xf32>
}
func.func @main(%x: tensor<3x200xf32>) -> tensor<3x200xf32> {
  %o = pallas.call @strict_kernel(%x) {grid = array<i64: 3>, name = "strict",
      in_specs = [#pallas.block_spec<[squeezed, 200], (d0) -> (d0, 0)>],
      out_specs = [#pallas.block_spec<[squeezed, 200], (d0) -> (d0, 0)>]}
      : (tensor<3x200xf32>) -> tensor<3x200xf32>
  return %o : tensor<3x200xf32>
}

// -----

// Tests the window's scope: a 1000-long block of a 2000-long row ends
// before its array does, so the views' bounds checks (against the array)
// cannot drop the lanes past the block: such a window keeps the
// lane-by-lane path.
// CHECK-LABEL: gpu.func @half(
// CHECK: scf.for
pallas.kernel @half_kernel(%x: !pallas.ref<1000xf32>, %o: !pallas.ref<1000xf32>) {
  %iota = pallas.iota 0 : tensor<1024xi32>
  %n = arith.constant dense<1000> : tensor<1024xi32>
  %mask = arith.cmpi slt, %iota, %n : tensor<1024xi32>
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0.0> : tensor<1024xf32>
  %v = pallas.load %x[%c0 : 1024] mask %mask other %zero : !pallas.ref<1000xf32> -> tensor<1024xf32>
  pallas.store %o[%c0 : 1024], %v mask %mask : !pallas.ref<1000xf32>, tensor<1024xf32>
}
func.func @main(%x: tensor<3x2000xf32>) -> tensor<3x2000xf32> {
  %o = pallas.call @half_kernel(%x) {grid = array<i64: 3, 2>, name = "half",
      in_specs = [#pallas.block_spec<[squeezed, 1000], (d0, d1) -> (d0, d1)>],
      out_specs = [#pallas.block_spec<[squeezed, 1000], (d0, d1) -> (d0, d1)>]}
      : (tensor<3x2000xf32>) -> tensor<3x2000xf32>
  return %o : tensor<3x2000xf32>
}

// -----

// Tests a mask proven true from the iota's range (the row is 1024 long, the
// mask `iota < 1024`): every lane's compare folds to true, so the load keeps
// no select against `other` and the masked store (a select against the old
// output) is two plain 16-byte stores, with no compare and no branch.
// CHECK-LABEL: gpu.func @proven(
// CHECK-NOT: arith.cmpi
// CHECK-NOT: scf.if
// CHECK-COUNT-2: vector.load {{.+}} : memref<4096xf32>, vector<4xf32>
// CHECK-NOT: arith.cmpi
// CHECK-NOT: arith.select
// CHECK-NOT: scf.if
// CHECK-COUNT-2: vector.store {{.+}} : memref<4096xf32>, vector<4xf32>
// CHECK-NOT: scf.if
// CHECK: gpu.return
pallas.kernel @proven_kernel(%x: !pallas.ref<1024xf32>, %o: !pallas.ref<1024xf32>) {
  %iota = pallas.iota 0 : tensor<1024xi32>
  %n = arith.constant dense<1024> : tensor<1024xi32>
  %mask = arith.cmpi slt, %iota, %n : tensor<1024xi32>
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0.0> : tensor<1024xf32>
  %v = pallas.load %x[%c0 : 1024] mask %mask other %zero : !pallas.ref<1024xf32> -> tensor<1024xf32>
  %e = math.exp %v : tensor<1024xf32>
  pallas.store %o[%c0 : 1024], %e mask %mask : !pallas.ref<1024xf32>, tensor<1024xf32>
}
func.func @main(%x: tensor<4x1024xf32>) -> tensor<4x1024xf32> {
  %o = pallas.call @proven_kernel(%x) {grid = array<i64: 4>, name = "proven",
      in_specs = [#pallas.block_spec<[squeezed, 1024], (d0) -> (d0, 0)>],
      out_specs = [#pallas.block_spec<[squeezed, 1024], (d0) -> (d0, 0)>]}
      : (tensor<4x1024xf32>) -> tensor<4x1024xf32>
  return %o : tensor<4x1024xf32>
}
