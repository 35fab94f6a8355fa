// Every op of the upstream math dialect (the kernel dialect accepts them all):
// the float ops on f32, the integer ones on i32 (math_types.mlir has f16, bf16
// and f64). Each result is summed into the output of its type.
// lit/Target/math-every-op.test compiles it for every target and checks that
// no math op is missing from it.
pallas.kernel @math_every_op(
    %x_f32: !pallas.ref<32xf32>,
    %y_f32: !pallas.ref<32xf32>,
    %x_i32: !pallas.ref<32xi32>,
    %y_i32: !pallas.ref<32xi32>,
    %o_f32: !pallas.ref<32xf32>,
    %o_i32: !pallas.ref<32xi32>) {
  // f32
  %xf32 = pallas.load %x_f32[] : !pallas.ref<32xf32> -> tensor<32xf32>
  %yf32 = pallas.load %y_f32[] : !pallas.ref<32xf32> -> tensor<32xf32>
  %absf_f32 = math.absf %xf32 : tensor<32xf32>
  %sf32_0 = arith.addf %xf32, %absf_f32 : tensor<32xf32>
  %acos_f32 = math.acos %xf32 : tensor<32xf32>
  %sf32_1 = arith.addf %sf32_0, %acos_f32 : tensor<32xf32>
  %acosh_f32 = math.acosh %xf32 : tensor<32xf32>
  %sf32_2 = arith.addf %sf32_1, %acosh_f32 : tensor<32xf32>
  %asin_f32 = math.asin %xf32 : tensor<32xf32>
  %sf32_3 = arith.addf %sf32_2, %asin_f32 : tensor<32xf32>
  %asinh_f32 = math.asinh %xf32 : tensor<32xf32>
  %sf32_4 = arith.addf %sf32_3, %asinh_f32 : tensor<32xf32>
  %atan_f32 = math.atan %xf32 : tensor<32xf32>
  %sf32_5 = arith.addf %sf32_4, %atan_f32 : tensor<32xf32>
  %atanh_f32 = math.atanh %xf32 : tensor<32xf32>
  %sf32_6 = arith.addf %sf32_5, %atanh_f32 : tensor<32xf32>
  %cbrt_f32 = math.cbrt %xf32 : tensor<32xf32>
  %sf32_7 = arith.addf %sf32_6, %cbrt_f32 : tensor<32xf32>
  %ceil_f32 = math.ceil %xf32 : tensor<32xf32>
  %sf32_8 = arith.addf %sf32_7, %ceil_f32 : tensor<32xf32>
  %cos_f32 = math.cos %xf32 : tensor<32xf32>
  %sf32_9 = arith.addf %sf32_8, %cos_f32 : tensor<32xf32>
  %cosh_f32 = math.cosh %xf32 : tensor<32xf32>
  %sf32_10 = arith.addf %sf32_9, %cosh_f32 : tensor<32xf32>
  %erf_f32 = math.erf %xf32 : tensor<32xf32>
  %sf32_11 = arith.addf %sf32_10, %erf_f32 : tensor<32xf32>
  %erfc_f32 = math.erfc %xf32 : tensor<32xf32>
  %sf32_12 = arith.addf %sf32_11, %erfc_f32 : tensor<32xf32>
  %exp_f32 = math.exp %xf32 : tensor<32xf32>
  %sf32_13 = arith.addf %sf32_12, %exp_f32 : tensor<32xf32>
  %exp2_f32 = math.exp2 %xf32 : tensor<32xf32>
  %sf32_14 = arith.addf %sf32_13, %exp2_f32 : tensor<32xf32>
  %expm1_f32 = math.expm1 %xf32 : tensor<32xf32>
  %sf32_15 = arith.addf %sf32_14, %expm1_f32 : tensor<32xf32>
  %floor_f32 = math.floor %xf32 : tensor<32xf32>
  %sf32_16 = arith.addf %sf32_15, %floor_f32 : tensor<32xf32>
  %log_f32 = math.log %xf32 : tensor<32xf32>
  %sf32_17 = arith.addf %sf32_16, %log_f32 : tensor<32xf32>
  %log10_f32 = math.log10 %xf32 : tensor<32xf32>
  %sf32_18 = arith.addf %sf32_17, %log10_f32 : tensor<32xf32>
  %log1p_f32 = math.log1p %xf32 : tensor<32xf32>
  %sf32_19 = arith.addf %sf32_18, %log1p_f32 : tensor<32xf32>
  %log2_f32 = math.log2 %xf32 : tensor<32xf32>
  %sf32_20 = arith.addf %sf32_19, %log2_f32 : tensor<32xf32>
  %round_f32 = math.round %xf32 : tensor<32xf32>
  %sf32_21 = arith.addf %sf32_20, %round_f32 : tensor<32xf32>
  %roundeven_f32 = math.roundeven %xf32 : tensor<32xf32>
  %sf32_22 = arith.addf %sf32_21, %roundeven_f32 : tensor<32xf32>
  %rsqrt_f32 = math.rsqrt %xf32 : tensor<32xf32>
  %sf32_23 = arith.addf %sf32_22, %rsqrt_f32 : tensor<32xf32>
  %sin_f32 = math.sin %xf32 : tensor<32xf32>
  %sf32_24 = arith.addf %sf32_23, %sin_f32 : tensor<32xf32>
  %sinh_f32 = math.sinh %xf32 : tensor<32xf32>
  %sf32_25 = arith.addf %sf32_24, %sinh_f32 : tensor<32xf32>
  %sqrt_f32 = math.sqrt %xf32 : tensor<32xf32>
  %sf32_26 = arith.addf %sf32_25, %sqrt_f32 : tensor<32xf32>
  %tan_f32 = math.tan %xf32 : tensor<32xf32>
  %sf32_27 = arith.addf %sf32_26, %tan_f32 : tensor<32xf32>
  %tanh_f32 = math.tanh %xf32 : tensor<32xf32>
  %sf32_28 = arith.addf %sf32_27, %tanh_f32 : tensor<32xf32>
  %trunc_f32 = math.trunc %xf32 : tensor<32xf32>
  %sf32_29 = arith.addf %sf32_28, %trunc_f32 : tensor<32xf32>
  %atan2_f32 = math.atan2 %xf32, %yf32 : tensor<32xf32>
  %sf32_30 = arith.addf %sf32_29, %atan2_f32 : tensor<32xf32>
  %copysign_f32 = math.copysign %xf32, %yf32 : tensor<32xf32>
  %sf32_31 = arith.addf %sf32_30, %copysign_f32 : tensor<32xf32>
  %powf_f32 = math.powf %xf32, %yf32 : tensor<32xf32>
  %sf32_32 = arith.addf %sf32_31, %powf_f32 : tensor<32xf32>
  %fma_f32 = math.fma %xf32, %yf32, %xf32 : tensor<32xf32>
  %sf32_33 = arith.addf %sf32_32, %fma_f32 : tensor<32xf32>
  %clampf_f32 = math.clampf %xf32 to [%yf32, %xf32] : tensor<32xf32>
  %sf32_34 = arith.addf %sf32_33, %clampf_f32 : tensor<32xf32>
  %sincos_s_f32, %sincos_c_f32 = math.sincos %xf32 : tensor<32xf32>
  %sf32_35 = arith.addf %sf32_34, %sincos_s_f32 : tensor<32xf32>
  %sf32_36 = arith.addf %sf32_35, %sincos_c_f32 : tensor<32xf32>
  %n_f32 = arith.constant dense<3> : tensor<32xi32>
  %fpowi_f32 = math.fpowi %xf32, %n_f32 : tensor<32xf32>, tensor<32xi32>
  %sf32_37 = arith.addf %sf32_36, %fpowi_f32 : tensor<32xf32>
  %isfinite_f32 = math.isfinite %xf32 : tensor<32xf32>
  %isfinite_f32_v = arith.select %isfinite_f32, %xf32, %yf32 : tensor<32xi1>, tensor<32xf32>
  %sf32_38 = arith.addf %sf32_37, %isfinite_f32_v : tensor<32xf32>
  %isinf_f32 = math.isinf %xf32 : tensor<32xf32>
  %isinf_f32_v = arith.select %isinf_f32, %xf32, %yf32 : tensor<32xi1>, tensor<32xf32>
  %sf32_39 = arith.addf %sf32_38, %isinf_f32_v : tensor<32xf32>
  %isnan_f32 = math.isnan %xf32 : tensor<32xf32>
  %isnan_f32_v = arith.select %isnan_f32, %xf32, %yf32 : tensor<32xi1>, tensor<32xf32>
  %sf32_40 = arith.addf %sf32_39, %isnan_f32_v : tensor<32xf32>
  %isnormal_f32 = math.isnormal %xf32 : tensor<32xf32>
  %isnormal_f32_v = arith.select %isnormal_f32, %xf32, %yf32 : tensor<32xi1>, tensor<32xf32>
  %sf32_41 = arith.addf %sf32_40, %isnormal_f32_v : tensor<32xf32>
  pallas.store %o_f32[], %sf32_41 : !pallas.ref<32xf32>, tensor<32xf32>
  // i32
  %xi32 = pallas.load %x_i32[] : !pallas.ref<32xi32> -> tensor<32xi32>
  %yi32 = pallas.load %y_i32[] : !pallas.ref<32xi32> -> tensor<32xi32>
  %absi = math.absi %xi32 : tensor<32xi32>
  %si32_0 = arith.addi %xi32, %absi : tensor<32xi32>
  %ctlz = math.ctlz %xi32 : tensor<32xi32>
  %si32_1 = arith.addi %si32_0, %ctlz : tensor<32xi32>
  %cttz = math.cttz %xi32 : tensor<32xi32>
  %si32_2 = arith.addi %si32_1, %cttz : tensor<32xi32>
  %ctpop = math.ctpop %xi32 : tensor<32xi32>
  %si32_3 = arith.addi %si32_2, %ctpop : tensor<32xi32>
  %ipowi = math.ipowi %xi32, %yi32 : tensor<32xi32>
  %si32_4 = arith.addi %si32_3, %ipowi : tensor<32xi32>
  pallas.store %o_i32[], %si32_4 : !pallas.ref<32xi32>, tensor<32xi32>
}
