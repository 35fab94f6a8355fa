// The math ops whose lowering depends on the element type (device-library
// functions per type, f16/bf16 promoted to f32, bit tests per width) on f16,
// bf16 and f64: lit/Target/math-every-op.test compiles it for every target.
pallas.kernel @math_types(
    %x_f16: !pallas.ref<32xf16>,
    %y_f16: !pallas.ref<32xf16>,
    %x_bf16: !pallas.ref<32xbf16>,
    %y_bf16: !pallas.ref<32xbf16>,
    %x_f64: !pallas.ref<32xf64>,
    %y_f64: !pallas.ref<32xf64>,
    %o_f16: !pallas.ref<32xf16>,
    %o_bf16: !pallas.ref<32xbf16>,
    %o_f64: !pallas.ref<32xf64>) {
  // f16
  %xf16 = pallas.load %x_f16[] : !pallas.ref<32xf16> -> tensor<32xf16>
  %yf16 = pallas.load %y_f16[] : !pallas.ref<32xf16> -> tensor<32xf16>
  %tanh_f16 = math.tanh %xf16 : tensor<32xf16>
  %sf16_0 = arith.addf %xf16, %tanh_f16 : tensor<32xf16>
  %atan_f16 = math.atan %xf16 : tensor<32xf16>
  %sf16_1 = arith.addf %sf16_0, %atan_f16 : tensor<32xf16>
  %exp_f16 = math.exp %xf16 : tensor<32xf16>
  %sf16_2 = arith.addf %sf16_1, %exp_f16 : tensor<32xf16>
  %log_f16 = math.log %xf16 : tensor<32xf16>
  %sf16_3 = arith.addf %sf16_2, %log_f16 : tensor<32xf16>
  %sqrt_f16 = math.sqrt %xf16 : tensor<32xf16>
  %sf16_4 = arith.addf %sf16_3, %sqrt_f16 : tensor<32xf16>
  %rsqrt_f16 = math.rsqrt %xf16 : tensor<32xf16>
  %sf16_5 = arith.addf %sf16_4, %rsqrt_f16 : tensor<32xf16>
  %trunc_f16 = math.trunc %xf16 : tensor<32xf16>
  %sf16_6 = arith.addf %sf16_5, %trunc_f16 : tensor<32xf16>
  %round_f16 = math.round %xf16 : tensor<32xf16>
  %sf16_7 = arith.addf %sf16_6, %round_f16 : tensor<32xf16>
  %sin_f16 = math.sin %xf16 : tensor<32xf16>
  %sf16_8 = arith.addf %sf16_7, %sin_f16 : tensor<32xf16>
  %atan2_f16 = math.atan2 %xf16, %yf16 : tensor<32xf16>
  %sf16_9 = arith.addf %sf16_8, %atan2_f16 : tensor<32xf16>
  %copysign_f16 = math.copysign %xf16, %yf16 : tensor<32xf16>
  %sf16_10 = arith.addf %sf16_9, %copysign_f16 : tensor<32xf16>
  %clampf_f16 = math.clampf %xf16 to [%yf16, %xf16] : tensor<32xf16>
  %sf16_11 = arith.addf %sf16_10, %clampf_f16 : tensor<32xf16>
  %sincos_s_f16, %sincos_c_f16 = math.sincos %xf16 : tensor<32xf16>
  %sf16_12 = arith.addf %sf16_11, %sincos_s_f16 : tensor<32xf16>
  %sf16_13 = arith.addf %sf16_12, %sincos_c_f16 : tensor<32xf16>
  %n_f16 = arith.constant dense<3> : tensor<32xi32>
  %fpowi_f16 = math.fpowi %xf16, %n_f16 : tensor<32xf16>, tensor<32xi32>
  %sf16_14 = arith.addf %sf16_13, %fpowi_f16 : tensor<32xf16>
  %isinf_f16 = math.isinf %xf16 : tensor<32xf16>
  %isinf_f16_v = arith.select %isinf_f16, %xf16, %yf16 : tensor<32xi1>, tensor<32xf16>
  %sf16_15 = arith.addf %sf16_14, %isinf_f16_v : tensor<32xf16>
  %isnormal_f16 = math.isnormal %xf16 : tensor<32xf16>
  %isnormal_f16_v = arith.select %isnormal_f16, %xf16, %yf16 : tensor<32xi1>, tensor<32xf16>
  %sf16_16 = arith.addf %sf16_15, %isnormal_f16_v : tensor<32xf16>
  pallas.store %o_f16[], %sf16_16 : !pallas.ref<32xf16>, tensor<32xf16>
  // bf16
  %xbf16 = pallas.load %x_bf16[] : !pallas.ref<32xbf16> -> tensor<32xbf16>
  %ybf16 = pallas.load %y_bf16[] : !pallas.ref<32xbf16> -> tensor<32xbf16>
  %tanh_bf16 = math.tanh %xbf16 : tensor<32xbf16>
  %sbf16_0 = arith.addf %xbf16, %tanh_bf16 : tensor<32xbf16>
  %atan_bf16 = math.atan %xbf16 : tensor<32xbf16>
  %sbf16_1 = arith.addf %sbf16_0, %atan_bf16 : tensor<32xbf16>
  %exp_bf16 = math.exp %xbf16 : tensor<32xbf16>
  %sbf16_2 = arith.addf %sbf16_1, %exp_bf16 : tensor<32xbf16>
  %log_bf16 = math.log %xbf16 : tensor<32xbf16>
  %sbf16_3 = arith.addf %sbf16_2, %log_bf16 : tensor<32xbf16>
  %sqrt_bf16 = math.sqrt %xbf16 : tensor<32xbf16>
  %sbf16_4 = arith.addf %sbf16_3, %sqrt_bf16 : tensor<32xbf16>
  %rsqrt_bf16 = math.rsqrt %xbf16 : tensor<32xbf16>
  %sbf16_5 = arith.addf %sbf16_4, %rsqrt_bf16 : tensor<32xbf16>
  %trunc_bf16 = math.trunc %xbf16 : tensor<32xbf16>
  %sbf16_6 = arith.addf %sbf16_5, %trunc_bf16 : tensor<32xbf16>
  %round_bf16 = math.round %xbf16 : tensor<32xbf16>
  %sbf16_7 = arith.addf %sbf16_6, %round_bf16 : tensor<32xbf16>
  %sin_bf16 = math.sin %xbf16 : tensor<32xbf16>
  %sbf16_8 = arith.addf %sbf16_7, %sin_bf16 : tensor<32xbf16>
  %atan2_bf16 = math.atan2 %xbf16, %ybf16 : tensor<32xbf16>
  %sbf16_9 = arith.addf %sbf16_8, %atan2_bf16 : tensor<32xbf16>
  %copysign_bf16 = math.copysign %xbf16, %ybf16 : tensor<32xbf16>
  %sbf16_10 = arith.addf %sbf16_9, %copysign_bf16 : tensor<32xbf16>
  %clampf_bf16 = math.clampf %xbf16 to [%ybf16, %xbf16] : tensor<32xbf16>
  %sbf16_11 = arith.addf %sbf16_10, %clampf_bf16 : tensor<32xbf16>
  %sincos_s_bf16, %sincos_c_bf16 = math.sincos %xbf16 : tensor<32xbf16>
  %sbf16_12 = arith.addf %sbf16_11, %sincos_s_bf16 : tensor<32xbf16>
  %sbf16_13 = arith.addf %sbf16_12, %sincos_c_bf16 : tensor<32xbf16>
  %n_bf16 = arith.constant dense<3> : tensor<32xi32>
  %fpowi_bf16 = math.fpowi %xbf16, %n_bf16 : tensor<32xbf16>, tensor<32xi32>
  %sbf16_14 = arith.addf %sbf16_13, %fpowi_bf16 : tensor<32xbf16>
  %isinf_bf16 = math.isinf %xbf16 : tensor<32xbf16>
  %isinf_bf16_v = arith.select %isinf_bf16, %xbf16, %ybf16 : tensor<32xi1>, tensor<32xbf16>
  %sbf16_15 = arith.addf %sbf16_14, %isinf_bf16_v : tensor<32xbf16>
  %isnormal_bf16 = math.isnormal %xbf16 : tensor<32xbf16>
  %isnormal_bf16_v = arith.select %isnormal_bf16, %xbf16, %ybf16 : tensor<32xi1>, tensor<32xbf16>
  %sbf16_16 = arith.addf %sbf16_15, %isnormal_bf16_v : tensor<32xbf16>
  pallas.store %o_bf16[], %sbf16_16 : !pallas.ref<32xbf16>, tensor<32xbf16>
  // f64
  %xf64 = pallas.load %x_f64[] : !pallas.ref<32xf64> -> tensor<32xf64>
  %yf64 = pallas.load %y_f64[] : !pallas.ref<32xf64> -> tensor<32xf64>
  %tanh_f64 = math.tanh %xf64 : tensor<32xf64>
  %sf64_0 = arith.addf %xf64, %tanh_f64 : tensor<32xf64>
  %atan_f64 = math.atan %xf64 : tensor<32xf64>
  %sf64_1 = arith.addf %sf64_0, %atan_f64 : tensor<32xf64>
  %exp_f64 = math.exp %xf64 : tensor<32xf64>
  %sf64_2 = arith.addf %sf64_1, %exp_f64 : tensor<32xf64>
  %log_f64 = math.log %xf64 : tensor<32xf64>
  %sf64_3 = arith.addf %sf64_2, %log_f64 : tensor<32xf64>
  %sqrt_f64 = math.sqrt %xf64 : tensor<32xf64>
  %sf64_4 = arith.addf %sf64_3, %sqrt_f64 : tensor<32xf64>
  %rsqrt_f64 = math.rsqrt %xf64 : tensor<32xf64>
  %sf64_5 = arith.addf %sf64_4, %rsqrt_f64 : tensor<32xf64>
  %trunc_f64 = math.trunc %xf64 : tensor<32xf64>
  %sf64_6 = arith.addf %sf64_5, %trunc_f64 : tensor<32xf64>
  %round_f64 = math.round %xf64 : tensor<32xf64>
  %sf64_7 = arith.addf %sf64_6, %round_f64 : tensor<32xf64>
  %sin_f64 = math.sin %xf64 : tensor<32xf64>
  %sf64_8 = arith.addf %sf64_7, %sin_f64 : tensor<32xf64>
  %atan2_f64 = math.atan2 %xf64, %yf64 : tensor<32xf64>
  %sf64_9 = arith.addf %sf64_8, %atan2_f64 : tensor<32xf64>
  %copysign_f64 = math.copysign %xf64, %yf64 : tensor<32xf64>
  %sf64_10 = arith.addf %sf64_9, %copysign_f64 : tensor<32xf64>
  %clampf_f64 = math.clampf %xf64 to [%yf64, %xf64] : tensor<32xf64>
  %sf64_11 = arith.addf %sf64_10, %clampf_f64 : tensor<32xf64>
  %sincos_s_f64, %sincos_c_f64 = math.sincos %xf64 : tensor<32xf64>
  %sf64_12 = arith.addf %sf64_11, %sincos_s_f64 : tensor<32xf64>
  %sf64_13 = arith.addf %sf64_12, %sincos_c_f64 : tensor<32xf64>
  %n_f64 = arith.constant dense<3> : tensor<32xi32>
  %fpowi_f64 = math.fpowi %xf64, %n_f64 : tensor<32xf64>, tensor<32xi32>
  %sf64_14 = arith.addf %sf64_13, %fpowi_f64 : tensor<32xf64>
  %isinf_f64 = math.isinf %xf64 : tensor<32xf64>
  %isinf_f64_v = arith.select %isinf_f64, %xf64, %yf64 : tensor<32xi1>, tensor<32xf64>
  %sf64_15 = arith.addf %sf64_14, %isinf_f64_v : tensor<32xf64>
  %isnormal_f64 = math.isnormal %xf64 : tensor<32xf64>
  %isnormal_f64_v = arith.select %isnormal_f64, %xf64, %yf64 : tensor<32xi1>, tensor<32xf64>
  %sf64_16 = arith.addf %sf64_15, %isnormal_f64_v : tensor<32xf64>
  pallas.store %o_f64[], %sf64_16 : !pallas.ref<32xf64>, tensor<32xf64>
}
