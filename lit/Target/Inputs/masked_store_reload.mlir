// A select against a value of the output read before another store to it:
// y = x, then y = select(c % 8 < 5, 3 * x, old y). The lanes the select
// keeps must get the value read first (the aliased input's), not x: the
// store of the select is not turned into a masked store of 3 * x.
pallas.kernel @masked_store_reload_kernel(%x_ref: !pallas.ref<1024xf32>,
                                          %y0_ref: !pallas.ref<1024xf32>,
                                          %y_ref: !pallas.ref<1024xf32>) {
  %cols = pallas.iota 0 : tensor<1024xi32>
  %seven = arith.constant dense<7> : tensor<1024xi32>
  %five = arith.constant dense<5> : tensor<1024xi32>
  %low = arith.andi %cols, %seven : tensor<1024xi32>
  %mask = arith.cmpi slt, %low, %five : tensor<1024xi32>
  %x = pallas.load %x_ref[0 : 1024] : !pallas.ref<1024xf32> -> tensor<1024xf32>
  %old = pallas.load %y_ref[0 : 1024] : !pallas.ref<1024xf32> -> tensor<1024xf32>
  pallas.store %y_ref[0 : 1024], %x : !pallas.ref<1024xf32>, tensor<1024xf32>
  %twice = arith.addf %x, %x : tensor<1024xf32>
  %thrice = arith.addf %twice, %x : tensor<1024xf32>
  %y = arith.select %mask, %thrice, %old : tensor<1024xi1>, tensor<1024xf32>
  pallas.store %y_ref[0 : 1024], %y : !pallas.ref<1024xf32>, tensor<1024xf32>
}
