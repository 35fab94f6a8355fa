// Tests pallas-expand-views, the GPU codegen pipelines' expand-strided-metadata
// restricted to the view ops: a subview becomes the base's metadata, an
// affine offset and a reinterpret_cast, as upstream's pass makes it, while
// the ops the upstream pass would also fold on its way through the whole
// module (here an addi of two constants) are left to later passes.
// RUN: pallasc-opt %s --pallas-expand-views | FileCheck %s

// CHECK: #[[$MAP:.+]] = affine_map<()[s0] -> (s0 * 64 + 8)>
// CHECK-LABEL: func.func @view(
// CHECK-SAME: %[[M:.+]]: memref<64x64xf32>, %[[I:.+]]: index)
// CHECK: %[[SUM:.+]] = arith.addi
// CHECK: %[[BASE:.+]], %{{.+}}, %{{.+}}:2, %{{.+}}:2 = memref.extract_strided_metadata %[[M]]
// CHECK: %[[OFF:.+]] = affine.apply #[[$MAP]]()[%[[I]]]
// CHECK: %[[RC:.+]] = memref.reinterpret_cast %[[BASE]] to offset: [%[[OFF]]], sizes: [16, 16], strides: [64, 1]
// CHECK-NOT: memref.subview
// CHECK: memref.load %[[RC]]
// CHECK: return %{{.+}}, %[[SUM]]
func.func @view(%m: memref<64x64xf32>, %i: index) -> (f32, i32) {
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %unfolded = arith.addi %c1, %c2 : i32
  %sv = memref.subview %m[%i, 8] [16, 16] [1, 1] : memref<64x64xf32> to memref<16x16xf32, strided<[64, 1], offset: ?>>
  %c0 = arith.constant 0 : index
  %v = memref.load %sv[%c0, %c0] : memref<16x16xf32, strided<[64, 1], offset: ?>>
  return %v, %unfolded : f32, i32
}

// A module without views is left as it is.
// RUN: pallasc-opt %s --pallas-expand-views --split-input-file | FileCheck %s --check-prefix=NOVIEW
// NOVIEW-LABEL: func.func @no_view(
// NOVIEW-NEXT: %[[C:.+]] = arith.constant 1 : i32
// NOVIEW-NEXT: %[[S:.+]] = arith.addi %[[C]], %[[C]] : i32
// NOVIEW-NEXT: return %[[S]]

// -----

func.func @no_view() -> i32 {
  %c1 = arith.constant 1 : i32
  %s = arith.addi %c1, %c1 : i32
  return %s : i32
}
