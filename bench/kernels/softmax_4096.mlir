// Row softmax of 4096-wide rows, one row per grid step, for
// bench/cpu_run.sh: the example's softmax at a width that needs no mask.

pallas.kernel @softmax_kernel(%x_ref: !pallas.ref<4096xf32>,
                              %o_ref: !pallas.ref<4096xf32>) {
  %x = pallas.load %x_ref[] : !pallas.ref<4096xf32> -> tensor<4096xf32>
  %max = pallas.reduce max %x dims [0] : tensor<4096xf32> -> tensor<f32>
  %max_b = pallas.broadcast_in_dim %max dims [] : tensor<f32> -> tensor<4096xf32>
  %shifted = arith.subf %x, %max_b : tensor<4096xf32>
  %e = math.exp %shifted : tensor<4096xf32>
  %sum = pallas.reduce sum %e dims [0] : tensor<4096xf32> -> tensor<f32>
  %sum_b = pallas.broadcast_in_dim %sum dims [] : tensor<f32> -> tensor<4096xf32>
  %y = arith.divf %e, %sum_b : tensor<4096xf32>
  pallas.store %o_ref[], %y : !pallas.ref<4096xf32>, tensor<4096xf32>
}
