// Blocked matmul: [1024, 512] bf16 x [512, 1024] bf16 -> [1024, 1024] f32.
//
// JAX equivalent:
//   def matmul_kernel(a_ref, b_ref, o_ref, acc_ref):
//     @pl.when(pl.program_id(2) == 0)
//     def _():
//       acc_ref[...] = jnp.zeros_like(acc_ref)
//
//     acc_ref[...] += jnp.dot(a_ref[...], b_ref[...],
//                             preferred_element_type=jnp.float32)
//
//     @pl.when(pl.program_id(2) == pl.num_programs(2) - 1)
//     def _():
//       o_ref[...] = acc_ref[...]
//
//   pl.pallas_call(matmul_kernel, grid=(8, 8, 4),
//       in_specs=[pl.BlockSpec((128, 128), lambda m, n, k: (m, k)),
//                 pl.BlockSpec((128, 128), lambda m, n, k: (k, n))],
//       out_specs=pl.BlockSpec((128, 128), lambda m, n, k: (m, n)),
//       scratch_shapes=[pltpu.VMEM((128, 128), jnp.float32)],
//       out_shape=jax.ShapeDtypeStruct((1024, 1024), jnp.float32))(a, b)
//
// The grid's last axis (k) walks the contraction dimension; the f32 scratch
// accumulator persists across the k steps of one (m, n) output block, so
// that axis must run sequentially ("arbitrary").

pallas.kernel @matmul_kernel(%a_ref: !pallas.ref<128x128xbf16>,
                             %b_ref: !pallas.ref<128x128xbf16>,
                             %o_ref: !pallas.ref<128x128xf32>,
                             %acc_ref: !pallas.ref<128x128xf32, vmem>) {
  %k = pallas.program_id 2 : i32
  %nk = pallas.num_programs 2 : i32
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32

  // First k step: zero the accumulator.
  %is_first = arith.cmpi eq, %k, %c0 : i32
  scf.if %is_first {
    %zeros = arith.constant dense<0.0> : tensor<128x128xf32>
    pallas.store %acc_ref[], %zeros
        : !pallas.ref<128x128xf32, vmem>, tensor<128x128xf32>
  }

  // acc += a @ b, accumulated in f32.
  %a = pallas.load %a_ref[] : !pallas.ref<128x128xbf16> -> tensor<128x128xbf16>
  %b = pallas.load %b_ref[] : !pallas.ref<128x128xbf16> -> tensor<128x128xbf16>
  %acc = pallas.load %acc_ref[]
      : !pallas.ref<128x128xf32, vmem> -> tensor<128x128xf32>
  %acc_next = pallas.dot %a, %b, %acc
      : tensor<128x128xbf16>, tensor<128x128xbf16>, tensor<128x128xf32>
        -> tensor<128x128xf32>
  pallas.store %acc_ref[], %acc_next
      : !pallas.ref<128x128xf32, vmem>, tensor<128x128xf32>

  // Last k step: write the finished block out.
  %last_k = arith.subi %nk, %c1 : i32
  %is_last = arith.cmpi eq, %k, %last_k : i32
  scf.if %is_last {
    %result = pallas.load %acc_ref[]
        : !pallas.ref<128x128xf32, vmem> -> tensor<128x128xf32>
    pallas.store %o_ref[], %result
        : !pallas.ref<128x128xf32>, tensor<128x128xf32>
  }
}
