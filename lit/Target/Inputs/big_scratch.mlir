// A scratch buffer of 128 KiB, written and read a row at a time.
pallas.kernel @big_kernel(%x: !pallas.ref<8x128xf32>, %o: !pallas.ref<8x128xf32>,
                          %s: !pallas.ref<256x128xf32, vmem>) {
  %v = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %i = pallas.program_id 0 : i32
  %c8 = arith.constant 8 : i32
  %r = arith.muli %i, %c8 : i32
  %ri = arith.index_cast %r : i32 to index
  pallas.store %s[%r : 8, 0 : 128], %v : !pallas.ref<256x128xf32, vmem>, tensor<8x128xf32>
  %w = pallas.load %s[%r : 8, 0 : 128] : !pallas.ref<256x128xf32, vmem> -> tensor<8x128xf32>
  pallas.store %o[], %w : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
