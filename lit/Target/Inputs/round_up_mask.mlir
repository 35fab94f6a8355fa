// JAX's shipped softmax (jax.experimental.pallas.ops.gpu.softmax) on rows of
// 1000, as pallasc-export writes it: the block is the whole row (1000), the
// kernel reads and writes a window rounded up to 1024 under `iota < 1000`
// (the round-up-and-mask idiom; the window reaches past the ref's end).
pallas.kernel @_vmappable_softmax_kernel(%input_ref: !pallas.ref<1000xf32>, %probs_ref: !pallas.ref<1000xf32>) {
  %1 = pallas.iota 0 : tensor<1024xi32>
  %2 = arith.constant dense<1000> : tensor<1024xi32>
  %3 = arith.cmpi slt, %1, %2 : tensor<1024xi32>
  %4 = arith.constant 0 : i32
  %5 = arith.constant 0xFF800000 : f32
  %6 = pallas.broadcast_in_dim %5 dims [] : f32 -> tensor<1024xf32>
  %7 = pallas.load %input_ref[%4 : 1024] mask %3 other %6 : !pallas.ref<1000xf32> -> tensor<1024xf32>
  %8 = pallas.reduce max %7 dims [0] : tensor<1024xf32> -> tensor<f32>
  %9 = pallas.broadcast_in_dim %8 dims [] : tensor<f32> -> tensor<1024xf32>
  %10 = arith.subf %7, %9 : tensor<1024xf32>
  %11 = math.exp %10 : tensor<1024xf32>
  %12 = pallas.reduce sum %11 dims [0] : tensor<1024xf32> -> tensor<f32>
  %13 = pallas.broadcast_in_dim %12 dims [] : tensor<f32> -> tensor<1024xf32>
  %14 = arith.divf %11, %13 : tensor<1024xf32>
  %15 = arith.constant 0 : i32
  pallas.store %probs_ref[%15 : 1024], %14 mask %3 : !pallas.ref<1000xf32>, tensor<1024xf32>
}
