// The layernorm example with larger blocks: too many values per thread for
// the registers (spills; lit/Target/gpu-limits.test).


pallas.kernel @layernorm_kernel(%x_ref: !pallas.ref<32x2048xf32>,
                                %w_ref: !pallas.ref<2048xf32>,
                                %b_ref: !pallas.ref<2048xf32>,
                                %o_ref: !pallas.ref<32x2048xf32>) {
  %x = pallas.load %x_ref[] : !pallas.ref<32x2048xf32> -> tensor<32x2048xf32>
  %n = arith.constant dense<2048.0> : tensor<32xf32>

  // mean = sum(x) / N, per row.
  %sum = pallas.reduce sum %x dims [1] : tensor<32x2048xf32> -> tensor<32xf32>
  %mean = arith.divf %sum, %n : tensor<32xf32>
  %mean_b = pallas.broadcast_in_dim %mean dims [0]
      : tensor<32xf32> -> tensor<32x2048xf32>
  %xc = arith.subf %x, %mean_b : tensor<32x2048xf32>

  // var = sum((x - mean)^2) / N, per row (biased, as jnp.var).
  %sq = arith.mulf %xc, %xc : tensor<32x2048xf32>
  %sq_sum = pallas.reduce sum %sq dims [1] : tensor<32x2048xf32> -> tensor<32xf32>
  %var = arith.divf %sq_sum, %n : tensor<32xf32>

  // rstd = 1 / sqrt(var + eps); eps is a Python float folded into the kernel.
  %eps = arith.constant 1.0e-05 : f32
  %eps_b = pallas.broadcast_in_dim %eps dims [] : f32 -> tensor<32xf32>
  %var_eps = arith.addf %var, %eps_b : tensor<32xf32>
  %rstd = math.rsqrt %var_eps : tensor<32xf32>
  %rstd_b = pallas.broadcast_in_dim %rstd dims [0]
      : tensor<32xf32> -> tensor<32x2048xf32>
  %xn = arith.mulf %xc, %rstd_b : tensor<32x2048xf32>

  // y = xn * w + b, with w and b broadcast along the rows.
  %w = pallas.load %w_ref[] : !pallas.ref<2048xf32> -> tensor<2048xf32>
  %b = pallas.load %b_ref[] : !pallas.ref<2048xf32> -> tensor<2048xf32>
  %w_b = pallas.broadcast_in_dim %w dims [1] : tensor<2048xf32> -> tensor<32x2048xf32>
  %b_b = pallas.broadcast_in_dim %b dims [1] : tensor<2048xf32> -> tensor<32x2048xf32>
  %scaled = arith.mulf %xn, %w_b : tensor<32x2048xf32>
  %y = arith.addf %scaled, %b_b : tensor<32x2048xf32>
  pallas.store %o_ref[], %y : !pallas.ref<32x2048xf32>, tensor<32x2048xf32>
}
