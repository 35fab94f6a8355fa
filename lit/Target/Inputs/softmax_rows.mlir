// Row softmax, 8 rows of a [4096, 1000] f32 array per grid step in a
// 1024-wide block: the TPU form of examples/softmax (whose one-row blocks
// break the TPU's (8, 128) block rule). The 24 lanes past the row end are
// masked: loads read -inf there, stores skip them.
pallas.kernel @softmax_rows_kernel(%x_ref: !pallas.ref<8x1024xf32>,
                                   %o_ref: !pallas.ref<8x1024xf32>) {
  %cols = pallas.iota 1 : tensor<8x1024xi32>
  %n = arith.constant dense<1000> : tensor<8x1024xi32>
  %mask = arith.cmpi slt, %cols, %n : tensor<8x1024xi32>
  %ninf = arith.constant dense<0xFF800000> : tensor<8x1024xf32>
  %x = pallas.load %x_ref[0 : 8, 0 : 1024] mask %mask other %ninf
      : !pallas.ref<8x1024xf32> -> tensor<8x1024xf32>
  %max = pallas.reduce max %x dims [1] : tensor<8x1024xf32> -> tensor<8xf32>
  %max_b = pallas.broadcast_in_dim %max dims [0] : tensor<8xf32> -> tensor<8x1024xf32>
  %shifted = arith.subf %x, %max_b : tensor<8x1024xf32>
  %e = math.exp %shifted : tensor<8x1024xf32>
  %sum = pallas.reduce sum %e dims [1] : tensor<8x1024xf32> -> tensor<8xf32>
  %sum_b = pallas.broadcast_in_dim %sum dims [0] : tensor<8xf32> -> tensor<8x1024xf32>
  %y = arith.divf %e, %sum_b : tensor<8x1024xf32>
  pallas.store %o_ref[0 : 8, 0 : 1024], %y mask %mask
      : !pallas.ref<8x1024xf32>, tensor<8x1024xf32>
}
