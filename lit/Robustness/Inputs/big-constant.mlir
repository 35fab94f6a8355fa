// mul.mlir's signature with a 16 GiB splat constant (a few hundred bytes of
// input): rejected before any pass materializes it.
pallas.kernel @mul_kernel(%x_ref: !pallas.ref<8x128xf32>,
                          %y_ref: !pallas.ref<8x128xf32>,
                          %o_ref: !pallas.ref<8x128xf32>) {
  %z = arith.constant dense<0.0> : tensor<65536x65536xf32>
  %x = pallas.load %x_ref[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  pallas.store %o_ref[], %x : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
