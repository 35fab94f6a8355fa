// A masked store that turns off lanes inside the array as well as past its
// end: y[r, c] = 2 * x[r, c] where c % 8 < 5, y keeps its old value
// elsewhere (y is aliased to the second input). The array is [64, 1000],
// the block [None, 1024]: the last 24 lanes of a block lie past the end.
pallas.kernel @masked_store_kernel(%x_ref: !pallas.ref<1024xf32>,
                                   %y0_ref: !pallas.ref<1024xf32>,
                                   %y_ref: !pallas.ref<1024xf32>) {
  %cols = pallas.iota 0 : tensor<1024xi32>
  %seven = arith.constant dense<7> : tensor<1024xi32>
  %five = arith.constant dense<5> : tensor<1024xi32>
  %low = arith.andi %cols, %seven : tensor<1024xi32>
  %mask = arith.cmpi slt, %low, %five : tensor<1024xi32>
  %x = pallas.load %x_ref[0 : 1024] : !pallas.ref<1024xf32> -> tensor<1024xf32>
  %twice = arith.addf %x, %x : tensor<1024xf32>
  pallas.store %y_ref[0 : 1024], %twice mask %mask
      : !pallas.ref<1024xf32>, tensor<1024xf32>
}
