// Row softmax of a [4096, 1000] f32 array: one row per grid step.
//
// JAX equivalent (the Triton-style fused softmax):
//   def softmax_kernel(x_ref, o_ref):
//     cols = lax.iota(jnp.int32, 1024)
//     mask = cols < 1000
//     x = pl.load(x_ref, pl.ds(0, 1024), mask=mask, other=-jnp.inf)
//     e = jnp.exp(x - jnp.max(x))
//     pl.store(o_ref, pl.ds(0, 1024), e / jnp.sum(e), mask=mask)
//
//   spec = pl.BlockSpec((None, 1024), lambda i: (i, 0))
//   pl.pallas_call(softmax_kernel, grid=(4096,), in_specs=[spec],
//                  out_specs=spec,
//                  out_shape=jax.ShapeDtypeStruct((4096, 1000), jnp.float32))(x)
//
// The row dimension is squeezed (None), so the kernel sees 1-D refs. The
// block is 1024 wide (a power of two) but a row has 1000 elements: the last
// 24 lanes lie past the end of the array. They are masked off: the load
// fills them with -inf (so they do not change the max and contribute
// exp(-inf) = 0 to the sum) and the store does not write them.

pallas.kernel @softmax_kernel(%x_ref: !pallas.ref<1024xf32>,
                              %o_ref: !pallas.ref<1024xf32>) {
  %cols = pallas.iota 0 : tensor<1024xi32>
  %n_cols = arith.constant dense<1000> : tensor<1024xi32>
  %mask = arith.cmpi slt, %cols, %n_cols : tensor<1024xi32>
  %neg_inf = arith.constant dense<0xFF800000> : tensor<1024xf32>
  %x = pallas.load %x_ref[0 : 1024] mask %mask other %neg_inf
      : !pallas.ref<1024xf32> -> tensor<1024xf32>

  // Subtract the row maximum for numerical stability.
  %max = pallas.reduce max %x dims [0] : tensor<1024xf32> -> tensor<f32>
  %max_b = pallas.broadcast_in_dim %max dims [] : tensor<f32> -> tensor<1024xf32>
  %shifted = arith.subf %x, %max_b : tensor<1024xf32>
  %e = math.exp %shifted : tensor<1024xf32>

  // Normalize by the row sum.
  %sum = pallas.reduce sum %e dims [0] : tensor<1024xf32> -> tensor<f32>
  %sum_b = pallas.broadcast_in_dim %sum dims [] : tensor<f32> -> tensor<1024xf32>
  %y = arith.divf %e, %sum_b : tensor<1024xf32>

  pallas.store %o_ref[0 : 1024], %y mask %mask
      : !pallas.ref<1024xf32>, tensor<1024xf32>
}
