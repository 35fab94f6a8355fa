// Two outputs for the run output tests: a = x, b = x + x on 8x128 f32 blocks.
pallas.kernel @two(%x: !pallas.ref<8x128xf32>, %a: !pallas.ref<8x128xf32>,
                   %b: !pallas.ref<8x128xf32>) {
  %v = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  pallas.store %a[], %v : !pallas.ref<8x128xf32>, tensor<8x128xf32>
  %w = arith.addf %v, %v : tensor<8x128xf32>
  pallas.store %b[], %w : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
