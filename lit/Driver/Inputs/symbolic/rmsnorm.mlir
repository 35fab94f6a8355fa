// RMSNorm over rows of 128, 8 rows per grid step (the symbolic-shape tests).
pallas.kernel @rmsnorm_kernel(%x_ref: !pallas.ref<8x128xf32>,
                              %w_ref: !pallas.ref<128xf32>,
                              %o_ref: !pallas.ref<8x128xf32>) {
  %x = pallas.load %x_ref[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %n = arith.constant dense<128.0> : tensor<8xf32>
  %sq = arith.mulf %x, %x : tensor<8x128xf32>
  %sum = pallas.reduce sum %sq dims [1] : tensor<8x128xf32> -> tensor<8xf32>
  %ms = arith.divf %sum, %n : tensor<8xf32>
  %eps = arith.constant 1.0e-06 : f32
  %eps_b = pallas.broadcast_in_dim %eps dims [] : f32 -> tensor<8xf32>
  %ms_eps = arith.addf %ms, %eps_b : tensor<8xf32>
  %r = math.rsqrt %ms_eps : tensor<8xf32>
  %r_b = pallas.broadcast_in_dim %r dims [0] : tensor<8xf32> -> tensor<8x128xf32>
  %w = pallas.load %w_ref[] : !pallas.ref<128xf32> -> tensor<128xf32>
  %w_b = pallas.broadcast_in_dim %w dims [1] : tensor<128xf32> -> tensor<8x128xf32>
  %xn = arith.mulf %x, %r_b : tensor<8x128xf32>
  %y = arith.mulf %xn, %w_b : tensor<8x128xf32>
  pallas.store %o_ref[], %y : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
