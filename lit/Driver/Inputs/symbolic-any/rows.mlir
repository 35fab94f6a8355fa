// Rows i*8 .. i*8+7 of a symbolic input in memory space `any` (the kernel's
// ref keeps the dynamic row count), read by a masked load past the edge,
// doubled and plus n (the symbol's value) into an 8-row output block.
pallas.kernel @rows_kernel(%x: !pallas.ref<?x128xf32, any>, %o: !pallas.ref<8x128xf32>) {
  %n = pallas.symbol_value "n" : i32
  %i = pallas.program_id 0 : i32
  %c8 = arith.constant 8 : i32
  %s = arith.muli %i, %c8 : i32
  %rows = pallas.iota 0 : tensor<8x128xi32>
  %base = pallas.broadcast_in_dim %s dims [] : i32 -> tensor<8x128xi32>
  %r = arith.addi %base, %rows : tensor<8x128xi32>
  %nb = pallas.broadcast_in_dim %n dims [] : i32 -> tensor<8x128xi32>
  %m = arith.cmpi slt, %r, %nb : tensor<8x128xi32>
  %z = arith.constant dense<0.0> : tensor<8x128xf32>
  %v = pallas.load %x[%s : 8, 0 : 128] mask %m other %z : !pallas.ref<?x128xf32, any> -> tensor<8x128xf32>
  %two = arith.constant dense<2.0> : tensor<8x128xf32>
  %d = arith.mulf %v, %two : tensor<8x128xf32>
  %nf = arith.sitofp %n : i32 to f32
  %nfb = pallas.broadcast_in_dim %nf dims [] : f32 -> tensor<8x128xf32>
  %y = arith.addf %d, %nfb : tensor<8x128xf32>
  pallas.store %o[], %y : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
