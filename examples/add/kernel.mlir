// Elementwise add of two [1024, 2048] f32 arrays.
//
// JAX equivalent:
//   def add_kernel(x_ref, y_ref, o_ref):
//     o_ref[...] = x_ref[...] + y_ref[...]
//
//   spec = pl.BlockSpec((32, 256), lambda i, j: (i, j))
//   pl.pallas_call(add_kernel, grid=(32, 8), in_specs=[spec, spec],
//                  out_specs=spec,
//                  out_shape=jax.ShapeDtypeStruct((1024, 2048), jnp.float32))(x, y)
//
// Each grid step (i, j) sees the 32x256 block at rows [32*i, 32*i+32) and
// columns [256*j, 256*j+256) of each operand.

pallas.kernel @add_kernel(%x_ref: !pallas.ref<32x256xf32>,
                          %y_ref: !pallas.ref<32x256xf32>,
                          %o_ref: !pallas.ref<32x256xf32>) {
  %x = pallas.load %x_ref[] : !pallas.ref<32x256xf32> -> tensor<32x256xf32>
  %y = pallas.load %y_ref[] : !pallas.ref<32x256xf32> -> tensor<32x256xf32>
  %sum = arith.addf %x, %y : tensor<32x256xf32>
  pallas.store %o_ref[], %sum : !pallas.ref<32x256xf32>, tensor<32x256xf32>
}
