// RUN: pallasc-opt %s -split-input-file -pallas-cpu-fuse-elementwise | FileCheck %s --check-prefix=ALL
// (passes/Conversion/PallasToLinalg/FuseElementwise.cpp)
// RUN: pallasc-opt %s -split-input-file -pallas-cpu-fuse-elementwise=max-body-ops=2 | FileCheck %s --check-prefix=TWO

// Producers with several uses (a jvp's primal values feed the next primal op
// and the tangent ops): %a is read by %b and %c, %b by %c and the return.
// All three fuse into one body that computes each value once and yields,
// besides %c, the %b that the return reads. With a bound of two ops per
// body, %a and %b fuse (yielding both, since %c reads both) and %c stays a
// generic of its own.

#id = affine_map<(d0) -> (d0)>

// ALL-LABEL: func.func @diamond
// ALL: %[[F:.+]]:2 = linalg.generic
// ALL-SAME: ins(%{{.+}}, %{{.+}} : tensor<16xf32>, tensor<16xf32>)
// ALL: %[[A:.+]] = arith.addf
// ALL-NEXT: %[[B:.+]] = arith.mulf %[[A]]
// ALL-NEXT: %[[C:.+]] = arith.subf %[[A]], %[[B]]
// ALL-NEXT: linalg.yield %[[B]], %[[C]]
// ALL-NOT: linalg.generic
// ALL-NOT: arith.addf
// ALL: return %[[F]]#1, %[[F]]#0

// TWO-LABEL: func.func @diamond
// TWO: %[[AB:.+]]:2 = linalg.generic
// TWO: %[[A:.+]] = arith.addf
// TWO-NEXT: %[[B:.+]] = arith.mulf %[[A]]
// TWO-NEXT: linalg.yield %[[A]], %[[B]]
// TWO: %[[C:.+]] = linalg.generic {{.*}} ins(%[[AB]]#0, %[[AB]]#1 : tensor<16xf32>, tensor<16xf32>)
// TWO: arith.subf
// TWO-NEXT: linalg.yield
// TWO-NOT: linalg.generic
// TWO: return %[[C]], %[[AB]]#1
func.func @diamond(%x: tensor<16xf32>, %y: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
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
      ins(%a, %b : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %r = arith.subf %p, %q : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  return %c, %b : tensor<16xf32>, tensor<16xf32>
}

// -----

// A use of the producer before its first generic consumer (here a
// tensor.extract) must keep reading the producer's own result: the fused op
// would take the consumer's place, after that use. Nothing fuses.

#id = affine_map<(d0) -> (d0)>

// ALL-LABEL: func.func @use_before
// ALL: %[[A:.+]] = linalg.generic
// ALL: arith.addf
// ALL: tensor.extract %[[A]]
// ALL: linalg.generic {{.*}} ins(%[[A]], %{{.+}} : tensor<16xf32>, tensor<16xf32>)
// ALL: arith.mulf
func.func @use_before(%x: tensor<16xf32>, %y: tensor<16xf32>, %i: index) -> (f32, tensor<16xf32>) {
  %e = tensor.empty() : tensor<16xf32>
  %a = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %y : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %r = arith.addf %p, %q : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %s = tensor.extract %a[%i] : tensor<16xf32>
  %b = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %y : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %r = arith.mulf %p, %q : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  return %s, %b : f32, tensor<16xf32>
}

// -----

// A use after the consumer reads the value from the fused op, which yields
// it; the producer's body is not recomputed.

#id = affine_map<(d0) -> (d0)>

// ALL-LABEL: func.func @use_after
// ALL: %[[F:.+]]:2 = linalg.generic
// ALL: arith.addf
// ALL-NEXT: arith.mulf
// ALL-NEXT: linalg.yield
// ALL-NOT: arith.addf
// ALL: tensor.extract %[[F]]#0
func.func @use_after(%x: tensor<16xf32>, %y: tensor<16xf32>, %i: index) -> (f32, tensor<16xf32>) {
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
  %s = tensor.extract %a[%i] : tensor<16xf32>
  return %s, %b : f32, tensor<16xf32>
}
