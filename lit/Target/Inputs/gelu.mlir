// GELU with the tanh approximation, as jax.nn.gelu(approximate=True):
//   0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
pallas.kernel @gelu_kernel(%x_ref: !pallas.ref<1024xf32>, %o_ref: !pallas.ref<1024xf32>) {
  %x = pallas.load %x_ref[] : !pallas.ref<1024xf32> -> tensor<1024xf32>
  %half = arith.constant dense<0.5> : tensor<1024xf32>
  %one = arith.constant dense<1.0> : tensor<1024xf32>
  %k = arith.constant dense<0.7978845608> : tensor<1024xf32>
  %c = arith.constant dense<0.044715> : tensor<1024xf32>
  %x2 = arith.mulf %x, %x : tensor<1024xf32>
  %x3 = arith.mulf %x2, %x : tensor<1024xf32>
  %cx3 = arith.mulf %c, %x3 : tensor<1024xf32>
  %inner = arith.addf %x, %cx3 : tensor<1024xf32>
  %scaled = arith.mulf %k, %inner : tensor<1024xf32>
  %t = math.tanh %scaled : tensor<1024xf32>
  %onet = arith.addf %one, %t : tensor<1024xf32>
  %hx = arith.mulf %half, %x : tensor<1024xf32>
  %r = arith.mulf %hx, %onet : tensor<1024xf32>
  pallas.store %o_ref[], %r : !pallas.ref<1024xf32>, tensor<1024xf32>
}
