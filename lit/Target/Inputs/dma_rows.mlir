// The TPU async-copy pattern of Pallas' docs: the input stays in HBM
// (memory_space any) and each program DMAs its 8 rows into a VMEM scratch,
// waits, and computes on the copy. In JAX:
//
//   def dma_rows_kernel(x_hbm, o_ref, buf, sem):
//     i = pl.program_id(0)
//     copy = pltpu.make_async_copy(x_hbm.at[pl.ds(i * 8, 8)], buf, sem.at[0])
//     copy.start()
//     copy.wait()
//     o_ref[...] = buf[...] * 2
pallas.kernel @dma_rows_kernel(%x: !pallas.ref<32x128xf32, any>,
                               %o: !pallas.ref<8x128xf32>,
                               %buf: !pallas.ref<8x128xf32, vmem>,
                               %sem: !pallas.ref<2xi32, semaphore>) {
  %i = pallas.program_id 0 : i32
  %c8 = arith.constant 8 : i32
  %row = arith.muli %i, %c8 : i32
  pallas.dma_start %x[%row : 8, 0 : 128], %buf[], %sem[0]
      : !pallas.ref<32x128xf32, any>, !pallas.ref<8x128xf32, vmem>,
        !pallas.ref<2xi32, semaphore>
  pallas.dma_wait %x[%row : 8, 0 : 128], %buf[], %sem[0]
      : !pallas.ref<32x128xf32, any>, !pallas.ref<8x128xf32, vmem>,
        !pallas.ref<2xi32, semaphore>
  %v = pallas.load %buf[] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
  %two = arith.constant dense<2.0> : tensor<8x128xf32>
  %r = arith.mulf %v, %two : tensor<8x128xf32>
  pallas.store %o[], %r : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
