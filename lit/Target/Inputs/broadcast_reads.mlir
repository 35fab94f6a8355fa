// A dot's accumulator plus a bias broadcast along the rows, times a vector
// broadcast along the columns. Both vectors are read from memory only to be
// broadcast, so the GPU lowering loads them straight into the projection of
// the accumulator's layout (no conversion through shared memory).
//
// JAX equivalent:
//   def kernel(a_ref, b_ref, bias_ref, rb_ref, o_ref):
//     acc = jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32)
//     o_ref[...] = (acc + bias_ref[...][None, :]) * rb_ref[...][:, None]
pallas.kernel @mm_bias(%a_ref: !pallas.ref<64x32xf16>,
                       %b_ref: !pallas.ref<32x64xf16>,
                       %bias_ref: !pallas.ref<64xf32>,
                       %rb_ref: !pallas.ref<64xf32>,
                       %o_ref: !pallas.ref<64x64xf32>) {
  %a = pallas.load %a_ref[] : !pallas.ref<64x32xf16> -> tensor<64x32xf16>
  %b = pallas.load %b_ref[] : !pallas.ref<32x64xf16> -> tensor<32x64xf16>
  %c = pallas.dot %a, %b : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
  %bias = pallas.load %bias_ref[] : !pallas.ref<64xf32> -> tensor<64xf32>
  %bias_b = pallas.broadcast_in_dim %bias dims [1] : tensor<64xf32> -> tensor<64x64xf32>
  %rb = pallas.load %rb_ref[] : !pallas.ref<64xf32> -> tensor<64xf32>
  %rb_b = pallas.broadcast_in_dim %rb dims [0] : tensor<64xf32> -> tensor<64x64xf32>
  %s = arith.addf %c, %bias_b : tensor<64x64xf32>
  %y = arith.mulf %s, %rb_b : tensor<64x64xf32>
  pallas.store %o_ref[], %y : !pallas.ref<64x64xf32>, tensor<64x64xf32>
}
