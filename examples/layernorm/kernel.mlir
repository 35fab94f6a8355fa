// Row layernorm of a [4096, 1024] f32 array with a learned scale and shift,
// 8 rows per grid step.
//
// JAX equivalent:
//   def layernorm_kernel(x_ref, w_ref, b_ref, o_ref, *, eps=1e-5):
//     x = x_ref[...]                                   # [8, 1024]
//     mean = jnp.sum(x, axis=1) / 1024                 # [8]
//     xc = x - mean[:, None]
//     var = jnp.sum(xc * xc, axis=1) / 1024            # [8]
//     rstd = lax.rsqrt(var + eps)
//     o_ref[...] = xc * rstd[:, None] * w_ref[...][None, :] + b_ref[...][None, :]
//
//   pl.pallas_call(layernorm_kernel, grid=(512,),
//       in_specs=[pl.BlockSpec((8, 1024), lambda i: (i, 0)),
//                 pl.BlockSpec((1024,), lambda i: (0,)),
//                 pl.BlockSpec((1024,), lambda i: (0,))],
//       out_specs=pl.BlockSpec((8, 1024), lambda i: (i, 0)),
//       out_shape=jax.ShapeDtypeStruct((4096, 1024), jnp.float32))(x, w, b)
//
// The weight and bias blocks are the whole vectors; their index map is
// constant, so every grid step sees the same block.

pallas.kernel @layernorm_kernel(%x_ref: !pallas.ref<8x1024xf32>,
                                %w_ref: !pallas.ref<1024xf32>,
                                %b_ref: !pallas.ref<1024xf32>,
                                %o_ref: !pallas.ref<8x1024xf32>) {
  %x = pallas.load %x_ref[] : !pallas.ref<8x1024xf32> -> tensor<8x1024xf32>
  %n = arith.constant dense<1024.0> : tensor<8xf32>

  // mean = sum(x) / N, per row.
  %sum = pallas.reduce sum %x dims [1] : tensor<8x1024xf32> -> tensor<8xf32>
  %mean = arith.divf %sum, %n : tensor<8xf32>
  %mean_b = pallas.broadcast_in_dim %mean dims [0]
      : tensor<8xf32> -> tensor<8x1024xf32>
  %xc = arith.subf %x, %mean_b : tensor<8x1024xf32>

  // var = sum((x - mean)^2) / N, per row (biased, as jnp.var).
  %sq = arith.mulf %xc, %xc : tensor<8x1024xf32>
  %sq_sum = pallas.reduce sum %sq dims [1] : tensor<8x1024xf32> -> tensor<8xf32>
  %var = arith.divf %sq_sum, %n : tensor<8xf32>

  // rstd = 1 / sqrt(var + eps); eps is a Python float folded into the kernel.
  %eps = arith.constant 1.0e-05 : f32
  %eps_b = pallas.broadcast_in_dim %eps dims [] : f32 -> tensor<8xf32>
  %var_eps = arith.addf %var, %eps_b : tensor<8xf32>
  %rstd = math.rsqrt %var_eps : tensor<8xf32>
  %rstd_b = pallas.broadcast_in_dim %rstd dims [0]
      : tensor<8xf32> -> tensor<8x1024xf32>
  %xn = arith.mulf %xc, %rstd_b : tensor<8x1024xf32>

  // y = xn * w + b, with w and b broadcast along the rows.
  %w = pallas.load %w_ref[] : !pallas.ref<1024xf32> -> tensor<1024xf32>
  %b = pallas.load %b_ref[] : !pallas.ref<1024xf32> -> tensor<1024xf32>
  %w_b = pallas.broadcast_in_dim %w dims [1] : tensor<1024xf32> -> tensor<8x1024xf32>
  %b_b = pallas.broadcast_in_dim %b dims [1] : tensor<1024xf32> -> tensor<8x1024xf32>
  %scaled = arith.mulf %xn, %w_b : tensor<8x1024xf32>
  %y = arith.addf %scaled, %b_b : tensor<8x1024xf32>
  pallas.store %o_ref[], %y : !pallas.ref<8x1024xf32>, tensor<8x1024xf32>
}
