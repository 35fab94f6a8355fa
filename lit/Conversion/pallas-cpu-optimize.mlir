// RUN: pallasc-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(pallas-cpu-optimize))' | FileCheck %s
// RUN: pallasc-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(pallas-cpu-optimize{approximate-math=false}))' | FileCheck %s --check-prefix=EXACT

// Tests that a matmul becomes a generic whose loops run (m, k, n).
// CHECK-DAG: #[[$A:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[$B:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$C:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @matmul
// CHECK: linalg.generic {indexing_maps = [#[[$A]], #[[$B]], #[[$C]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%{{.+}}, %{{.+}} : tensor<8x4xf32>, tensor<4x16xf32>) outs(%{{.+}} : tensor<8x16xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: linalg.matmul
func.func @matmul(%a: tensor<8x4xf32>, %b: tensor<4x16xf32>, %c: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %d = linalg.matmul ins(%a, %b : tensor<8x4xf32>, tensor<4x16xf32>) outs(%c : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %d : tensor<8x16xf32>
}

// -----

// Tests that a batch matmul runs (b, m, k, n).
// CHECK-LABEL: func.func @batch
// CHECK: linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "reduction", "parallel"]
// CHECK-NOT: linalg.batch_matmul
func.func @batch(%a: tensor<2x8x4xf32>, %b: tensor<2x4x16xf32>, %c: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %d = linalg.batch_matmul ins(%a, %b : tensor<2x8x4xf32>, tensor<2x4x16xf32>) outs(%c : tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %d : tensor<2x8x16xf32>
}

// -----

// Tests that f32 exp becomes arithmetic (a polynomial), unless disabled.
// CHECK-LABEL: func.func @exp
// CHECK-NOT: math.exp
// CHECK: arith.mulf
// EXACT-LABEL: func.func @exp
// EXACT: math.exp
func.func @exp(%x: f32) -> f32 {
  %e = math.exp %x : f32
  return %e : f32
}

// -----

// Tests that a store whose value is computed privately from a tensor.empty,
// into a ref nothing else writes, becomes restrict (computed in place).
// CHECK-LABEL: func.func @in_place
// CHECK: bufferization.materialize_in_destination %{{.+}} in restrict writable %{{.+}}
func.func @in_place(%x: memref<8xf32>, %o: memref<8xf32, strided<[?], offset: ?>>) {
  %t = bufferization.to_tensor %x restrict : memref<8xf32> to tensor<8xf32>
  %e = tensor.empty() : tensor<8xf32>
  %s = linalg.add ins(%t, %t : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  bufferization.materialize_in_destination %s in writable %o : (tensor<8xf32>, memref<8xf32, strided<[?], offset: ?>>) -> ()
  return
}

// -----

// Tests that an init shared by two computations, or a ref read after the
// value is computed, keeps the store a plain copy.
// CHECK-LABEL: func.func @shared
// CHECK: bufferization.materialize_in_destination %{{.+}} in writable
// CHECK: bufferization.materialize_in_destination %{{.+}} in writable
// CHECK-LABEL: func.func @read_between
// CHECK: bufferization.materialize_in_destination %{{.+}} in writable
func.func @shared(%x: memref<8xf32>, %o: memref<8xf32>, %p: memref<8xf32>) {
  %t = bufferization.to_tensor %x restrict : memref<8xf32> to tensor<8xf32>
  %e = tensor.empty() : tensor<8xf32>
  %c = arith.constant 0.0 : f32
  %z = linalg.fill ins(%c : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %a = linalg.add ins(%t, %t : tensor<8xf32>, tensor<8xf32>) outs(%z : tensor<8xf32>) -> tensor<8xf32>
  %b = linalg.mul ins(%t, %t : tensor<8xf32>, tensor<8xf32>) outs(%z : tensor<8xf32>) -> tensor<8xf32>
  bufferization.materialize_in_destination %a in writable %o : (tensor<8xf32>, memref<8xf32>) -> ()
  bufferization.materialize_in_destination %b in writable %p : (tensor<8xf32>, memref<8xf32>) -> ()
  return
}
func.func @read_between(%x: memref<8xf32>, %o: memref<8xf32>) -> tensor<8xf32> {
  %t = bufferization.to_tensor %x restrict : memref<8xf32> to tensor<8xf32>
  %e = tensor.empty() : tensor<8xf32>
  %a = linalg.add ins(%t, %t : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %buf = memref.alloc() : memref<8xf32>
  linalg.copy ins(%o : memref<8xf32>) outs(%buf : memref<8xf32>)
  %old = bufferization.to_tensor %buf restrict : memref<8xf32> to tensor<8xf32>
  bufferization.materialize_in_destination %a in writable %o : (tensor<8xf32>, memref<8xf32>) -> ()
  return %old : tensor<8xf32>
}
