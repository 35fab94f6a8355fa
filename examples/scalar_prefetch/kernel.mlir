// Gather rows by index (an embedding lookup) with scalar prefetch:
// out[i, :] = table[indices[i], :] for a [256, 512] f32 table and 16 i32
// indices, one row per grid step.
//
// JAX equivalent:
//   def gather_rows_kernel(idx_ref, row_ref, o_ref):
//     o_ref[...] = row_ref[...]
//
//   grid_spec = pltpu.PrefetchScalarGridSpec(
//       num_scalar_prefetch=1, grid=(16,),
//       in_specs=[pl.BlockSpec((None, 512), lambda i, idx_ref: (idx_ref[i], 0))],
//       out_specs=pl.BlockSpec((None, 512), lambda i, idx_ref: (i, 0)))
//   pl.pallas_call(gather_rows_kernel, grid_spec=grid_spec,
//       out_shape=jax.ShapeDtypeStruct((16, 512), jnp.float32))(indices, table)
//
// The indices are prefetched into scalar memory before the grid runs, so the
// table's index map can read them: it is a function of the grid index and
// the prefetch ref (@table_index_map below) rather than an affine map. The
// kernel receives the prefetch ref first; here it only copies the selected
// row. Indices must lie in [0, 256).

// The table's block index at grid step i: (indices[i], 0). With the row
// dimension squeezed, a block index is a row number.
func.func @table_index_map(%i: i32, %idx_ref: !pallas.ref<16xi32, smem>)
    -> (i32, i32) {
  %row = pallas.load %idx_ref[%i] : !pallas.ref<16xi32, smem> -> i32
  %c0 = arith.constant 0 : i32
  return %row, %c0 : i32, i32
}

pallas.kernel @gather_rows_kernel(%idx_ref: !pallas.ref<16xi32, smem>,
                                  %row_ref: !pallas.ref<512xf32>,
                                  %o_ref: !pallas.ref<512xf32>) {
  %row = pallas.load %row_ref[] : !pallas.ref<512xf32> -> tensor<512xf32>
  pallas.store %o_ref[], %row : !pallas.ref<512xf32>, tensor<512xf32>
}
