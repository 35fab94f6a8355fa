// o = (x * y + z) / w on 64x128 f32 blocks: one contractible multiply-add
// and one f32 division per element (lit/Target/cuda-float.test).
pallas.kernel @fma_div_kernel(%x_ref: !pallas.ref<64x128xf32>,
                              %y_ref: !pallas.ref<64x128xf32>,
                              %z_ref: !pallas.ref<64x128xf32>,
                              %w_ref: !pallas.ref<64x128xf32>,
                              %o_ref: !pallas.ref<64x128xf32>) {
  %x = pallas.load %x_ref[] : !pallas.ref<64x128xf32> -> tensor<64x128xf32>
  %y = pallas.load %y_ref[] : !pallas.ref<64x128xf32> -> tensor<64x128xf32>
  %z = pallas.load %z_ref[] : !pallas.ref<64x128xf32> -> tensor<64x128xf32>
  %w = pallas.load %w_ref[] : !pallas.ref<64x128xf32> -> tensor<64x128xf32>
  %p = arith.mulf %x, %y : tensor<64x128xf32>
  %s = arith.addf %p, %z : tensor<64x128xf32>
  %q = arith.divf %s, %w : tensor<64x128xf32>
  pallas.store %o_ref[], %q : !pallas.ref<64x128xf32>, tensor<64x128xf32>
}
