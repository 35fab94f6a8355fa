// f32 x f32 -> f32 dots at each precision: `default` (and `high`) run on
// tf32 tensor cores on sm_80+, `highest` stays exact IEEE f32 (as Pallas'
// Triton lowering maps DEFAULT/HIGH to tf32 and HIGHEST to IEEE).
//
// JAX equivalent:
//   def kernel(a_ref, b_ref, fast_ref, exact_ref):
//     a, b = a_ref[...], b_ref[...]
//     fast_ref[...] = jnp.dot(a, b) + 1.0
//     exact_ref[...] = jnp.dot(a, b, precision=lax.Precision.HIGHEST)
pallas.kernel @matmul_f32(%a_ref: !pallas.ref<64x32xf32>,
                          %b_ref: !pallas.ref<32x64xf32>,
                          %fast_ref: !pallas.ref<64x64xf32>,
                          %exact_ref: !pallas.ref<64x64xf32>) {
  %a = pallas.load %a_ref[] : !pallas.ref<64x32xf32> -> tensor<64x32xf32>
  %b = pallas.load %b_ref[] : !pallas.ref<32x64xf32> -> tensor<32x64xf32>
  %one = arith.constant dense<1.0> : tensor<64x64xf32>
  %fast = pallas.dot %a, %b, %one
      : tensor<64x32xf32>, tensor<32x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  pallas.store %fast_ref[], %fast : !pallas.ref<64x64xf32>, tensor<64x64xf32>
  %exact = pallas.dot %a, %b {precision = #pallas.precision<highest>}
      : tensor<64x32xf32>, tensor<32x64xf32> -> tensor<64x64xf32>
  pallas.store %exact_ref[], %exact : !pallas.ref<64x64xf32>, tensor<64x64xf32>
}
