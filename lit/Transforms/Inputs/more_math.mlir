// A chain of the math functions whose tangent rules jvp-rules.mlir checks
// structurally: o = erfc(log10(cbrt(cosh(sinh(x)))))^3.
pallas.kernel @more_math_kernel(%x_ref: !pallas.ref<8x128xf32>,
                                %o_ref: !pallas.ref<8x128xf32>) {
  %a = pallas.load %x_ref[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %sh = math.sinh %a : tensor<8x128xf32>
  %ch = math.cosh %sh : tensor<8x128xf32>
  %cb = math.cbrt %ch : tensor<8x128xf32>
  %lg = math.log10 %cb : tensor<8x128xf32>
  %ec = math.erfc %lg : tensor<8x128xf32>
  %n = arith.constant dense<3> : tensor<8x128xi32>
  %pw = math.fpowi %ec, %n : tensor<8x128xf32>, tensor<8x128xi32>
  pallas.store %o_ref[], %pw : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
