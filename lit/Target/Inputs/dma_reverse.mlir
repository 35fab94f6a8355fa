// A DMA straight into an output block with a squeezed dim, with an integer
// index on the source: program i copies block 3 - i of an `any` input. Both
// sides are squeezed to [8, 128] (tpu.memref_squeeze). JAX 0.10.2's own
// lowering of this kernel passes the [1, 8, 128] block memref unsqueezed and
// fails Mosaic's verifier (source and target shape mismatch), so
// compare_with_jax_lowering.py has no JAX version of it. In JAX:
//
//   def dma_reverse_kernel(x_hbm, o_ref, sem):
//     j = 3 - pl.program_id(0)
//     copy = pltpu.make_async_copy(x_hbm.at[j], o_ref, sem.at[0])
//     copy.start()
//     copy.wait()
pallas.kernel @dma_reverse_kernel(%x: !pallas.ref<4x8x128xf32, any>,
                                  %o: !pallas.ref<8x128xf32>,
                                  %sem: !pallas.ref<1xi32, semaphore>) {
  %i = pallas.program_id 0 : i32
  %c3 = arith.constant 3 : i32
  %j = arith.subi %c3, %i : i32
  pallas.dma_start %x[%j, 0 : 8, 0 : 128], %o[], %sem[0]
      : !pallas.ref<4x8x128xf32, any>, !pallas.ref<8x128xf32>, !pallas.ref<1xi32, semaphore>
  pallas.dma_wait %x[%j, 0 : 8, 0 : 128], %o[], %sem[0]
      : !pallas.ref<4x8x128xf32, any>, !pallas.ref<8x128xf32>, !pallas.ref<1xi32, semaphore>
}
