// An in-place update: acc += 2 * x, one [8, 128] block per grid step, with
// the accumulator aliased to the output (input 1 -> output 0).
pallas.kernel @axpy_kernel(%x_ref: !pallas.ref<8x128xf32>,
                           %acc_ref: !pallas.ref<8x128xf32>,
                           %o_ref: !pallas.ref<8x128xf32>) {
  %x = pallas.load %x_ref[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %acc = pallas.load %acc_ref[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %two = arith.constant dense<2.0> : tensor<8x128xf32>
  %x2 = arith.mulf %x, %two : tensor<8x128xf32>
  %sum = arith.addf %acc, %x2 : tensor<8x128xf32>
  pallas.store %o_ref[], %sum : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
