// A window rounded up along both dimensions of a 6x100 ref (8x128), the
// mask `row < 6 and col < 100` built from two iotas; o = 3 * x.
pallas.kernel @twod_kernel(%x_ref: !pallas.ref<6x100xf32>, %o_ref: !pallas.ref<6x100xf32>) {
  %1 = pallas.iota 0 : tensor<8xi32>
  %2 = pallas.broadcast_in_dim %1 dims [0] : tensor<8xi32> -> tensor<8x1xi32>
  %3 = arith.constant dense<6> : tensor<8x1xi32>
  %4 = arith.cmpi slt, %2, %3 : tensor<8x1xi32>
  %5 = pallas.iota 0 : tensor<128xi32>
  %6 = pallas.broadcast_in_dim %5 dims [1] : tensor<128xi32> -> tensor<1x128xi32>
  %7 = arith.constant dense<100> : tensor<1x128xi32>
  %8 = arith.cmpi slt, %6, %7 : tensor<1x128xi32>
  %9 = pallas.broadcast_in_dim %4 dims [0, 1] : tensor<8x1xi1> -> tensor<8x128xi1>
  %10 = pallas.broadcast_in_dim %8 dims [0, 1] : tensor<1x128xi1> -> tensor<8x128xi1>
  %11 = arith.andi %9, %10 : tensor<8x128xi1>
  %12 = arith.constant 0 : i32
  %14 = arith.constant 0.0 : f32
  %15 = pallas.broadcast_in_dim %14 dims [] : f32 -> tensor<8x128xf32>
  %16 = pallas.load %x_ref[%12 : 8, %12 : 128] mask %11 other %15 : !pallas.ref<6x100xf32> -> tensor<8x128xf32>
  %17 = arith.constant dense<3.0> : tensor<8x128xf32>
  %18 = arith.mulf %16, %17 : tensor<8x128xf32>
  pallas.store %o_ref[%12 : 8, %12 : 128], %18 mask %11 : !pallas.ref<6x100xf32>, tensor<8x128xf32>
}
