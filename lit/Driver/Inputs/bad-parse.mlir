// Kernel for the driver tests: o = x * y on 8x128 f32 blocks.
pallas.kernel @mul_kernel(%x_ref: !pallas.ref<8x128xf32>,
                          %y_ref: !pallas.ref<8x128xf32>,
                          %o_ref: !pallas.ref<8x128xf32>) {
  %x = pallas.load %x_ref[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %y = pallas.load %y_ref[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %p = arith.mulf %x %y : tensor<8x128xf32>
  pallas.store %o_ref[], %p : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
