// RUN: pallasc-opt %s -pallas-cpu-fuse-elementwise | FileCheck %s --check-prefix=ALL
// (passes/Conversion/PallasToLinalg/FuseElementwise.cpp)
// RUN: pallasc-opt %s -pallas-cpu-fuse-elementwise=max-body-ops=2 | FileCheck %s --check-prefix=TWO

// A chain of three single-use elementwise generics: fused into one body by
// default; with a bound of two ops per fused body, the first two fuse and
// the third stays a generic of its own, reading the fused one's result.

#id = affine_map<(d0) -> (d0)>

// ALL-LABEL: func.func @chain
// ALL: linalg.generic
// ALL: arith.addf
// ALL-NEXT: arith.mulf
// ALL-NEXT: arith.subf
// ALL-NEXT: linalg.yield
// ALL-NOT: linalg.generic

// TWO-LABEL: func.func @chain
// TWO: %[[AB:.+]] = linalg.generic
// TWO: arith.addf
// TWO-NEXT: arith.mulf
// TWO-NEXT: linalg.yield
// TWO: linalg.generic {{.*}} ins(%[[AB]], %{{.+}} : tensor<16xf32>, tensor<16xf32>)
// TWO: arith.subf
// TWO-NEXT: linalg.yield
func.func @chain(%x: tensor<16xf32>, %y: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %a = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %y : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %r = arith.addf %p, %q : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %b = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %y : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %r = arith.mulf %p, %q : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %c = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%b, %y : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %r = arith.subf %p, %q : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  return %c : tensor<16xf32>
}
