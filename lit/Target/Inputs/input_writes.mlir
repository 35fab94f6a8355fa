// A kernel that writes its input ref, then reads it back: legal Pallas (on a
// GPU the write goes to the input's device buffer, as Triton's lowering
// does). In JAX:
//
//   def input_writes_kernel(x_ref, o_ref):
//     x_ref[...] = x_ref[...] * 2
//     o_ref[...] = x_ref[...]
pallas.kernel @input_writes_kernel(%x: !pallas.ref<8x128xf32>,
                                   %o: !pallas.ref<8x128xf32>) {
  %v = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %two = arith.constant dense<2.0> : tensor<8x128xf32>
  %w = arith.mulf %v, %two : tensor<8x128xf32>
  pallas.store %x[], %w : !pallas.ref<8x128xf32>, tensor<8x128xf32>
  %r = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  pallas.store %o[], %r : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
