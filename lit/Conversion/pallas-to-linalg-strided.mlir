// RUN: pallasc-opt %s --pallas-to-linalg=strided-refs=true | FileCheck %s

// Tests that with strided-refs the ref arguments take fully dynamic strided
// layouts (the CPU runtime passes views into larger arrays), index maps
// included, and slices of them are subviews of those layouts.
// CHECK-LABEL: func.func @index_map
// CHECK-SAME: (%{{.+}}: i32, %{{.+}}: memref<16xi32, strided<[?], offset: ?>>) -> i32
// CHECK-LABEL: func.func @k
// CHECK-SAME: (%{{.+}}: i32, %{{.+}}: i32, %[[X:.+]]: memref<8x128xf32, strided<[?, ?], offset: ?>>, %[[O:.+]]: memref<128xf32, strided<[?], offset: ?>>, %[[S:.+]]: memref<f32, strided<[], offset: ?>>)
// CHECK: %[[ROW:.+]] = memref.subview %[[X]][2, 0] [1, 128] [1, 1] : memref<8x128xf32, strided<[?, ?], offset: ?>> to memref<128xf32, strided<[?], offset: ?>>
// CHECK: bufferization.to_tensor %[[ROW]] restrict
// CHECK: bufferization.materialize_in_destination %{{.+}} in writable %[[O]] : (tensor<128xf32>, memref<128xf32, strided<[?], offset: ?>>)
// CHECK: memref.store %{{.+}}, %[[S]][] : memref<f32, strided<[], offset: ?>>

func.func @index_map(%i: i32, %idx: !pallas.ref<16xi32, smem>) -> i32 {
  %row = pallas.load %idx[%i] : !pallas.ref<16xi32, smem> -> i32
  return %row : i32
}

pallas.kernel @k(%x: !pallas.ref<8x128xf32>, %o: !pallas.ref<128xf32>, %s: !pallas.ref<f32>) {
  %i = pallas.program_id 0 : i32
  %v = pallas.load %x[2, 0 : 128] : !pallas.ref<8x128xf32> -> tensor<128xf32>
  pallas.store %o[], %v : !pallas.ref<128xf32>, tensor<128xf32>
  %f = arith.sitofp %i : i32 to f32
  pallas.store %s[], %f : !pallas.ref<f32>, f32
}
