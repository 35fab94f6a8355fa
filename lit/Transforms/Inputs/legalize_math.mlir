// The ops pallas-legalize-math rewrites, on special values: the
// classifications (as 1.0 / 0.0), clampf to [-1, 1], sincos, ipowi.
pallas.kernel @legalize_math(%x_ref: !pallas.ref<16xf32>, %h_ref: !pallas.ref<16xf16>,
                             %b_ref: !pallas.ref<16xi32>, %e_ref: !pallas.ref<16xi32>,
                             %cls_ref: !pallas.ref<8x16xf32>, %clamp_ref: !pallas.ref<16xf32>,
                             %sin_ref: !pallas.ref<16xf32>, %cos_ref: !pallas.ref<16xf32>,
                             %pow_ref: !pallas.ref<16xi32>) {
  %x = pallas.load %x_ref[] : !pallas.ref<16xf32> -> tensor<16xf32>
  %h = pallas.load %h_ref[] : !pallas.ref<16xf16> -> tensor<16xf16>
  %one = arith.constant dense<1.0> : tensor<16xf32>
  %zero = arith.constant dense<0.0> : tensor<16xf32>
  %minus_one = arith.constant dense<-1.0> : tensor<16xf32>
  %isinf_f32 = math.isinf %x : tensor<16xf32>
  %isinf_f32_v = arith.select %isinf_f32, %one, %zero : tensor<16xi1>, tensor<16xf32>
  pallas.store %cls_ref[0, 0 : 16], %isinf_f32_v : !pallas.ref<8x16xf32>, tensor<16xf32>
  %isnan_f32 = math.isnan %x : tensor<16xf32>
  %isnan_f32_v = arith.select %isnan_f32, %one, %zero : tensor<16xi1>, tensor<16xf32>
  pallas.store %cls_ref[1, 0 : 16], %isnan_f32_v : !pallas.ref<8x16xf32>, tensor<16xf32>
  %isfinite_f32 = math.isfinite %x : tensor<16xf32>
  %isfinite_f32_v = arith.select %isfinite_f32, %one, %zero : tensor<16xi1>, tensor<16xf32>
  pallas.store %cls_ref[2, 0 : 16], %isfinite_f32_v : !pallas.ref<8x16xf32>, tensor<16xf32>
  %isnormal_f32 = math.isnormal %x : tensor<16xf32>
  %isnormal_f32_v = arith.select %isnormal_f32, %one, %zero : tensor<16xi1>, tensor<16xf32>
  pallas.store %cls_ref[3, 0 : 16], %isnormal_f32_v : !pallas.ref<8x16xf32>, tensor<16xf32>
  %isinf_f16 = math.isinf %h : tensor<16xf16>
  %isinf_f16_v = arith.select %isinf_f16, %one, %zero : tensor<16xi1>, tensor<16xf32>
  pallas.store %cls_ref[4, 0 : 16], %isinf_f16_v : !pallas.ref<8x16xf32>, tensor<16xf32>
  %isnan_f16 = math.isnan %h : tensor<16xf16>
  %isnan_f16_v = arith.select %isnan_f16, %one, %zero : tensor<16xi1>, tensor<16xf32>
  pallas.store %cls_ref[5, 0 : 16], %isnan_f16_v : !pallas.ref<8x16xf32>, tensor<16xf32>
  %isfinite_f16 = math.isfinite %h : tensor<16xf16>
  %isfinite_f16_v = arith.select %isfinite_f16, %one, %zero : tensor<16xi1>, tensor<16xf32>
  pallas.store %cls_ref[6, 0 : 16], %isfinite_f16_v : !pallas.ref<8x16xf32>, tensor<16xf32>
  %isnormal_f16 = math.isnormal %h : tensor<16xf16>
  %isnormal_f16_v = arith.select %isnormal_f16, %one, %zero : tensor<16xi1>, tensor<16xf32>
  pallas.store %cls_ref[7, 0 : 16], %isnormal_f16_v : !pallas.ref<8x16xf32>, tensor<16xf32>
  %clamp = math.clampf %x to [%minus_one, %one] : tensor<16xf32>
  pallas.store %clamp_ref[], %clamp : !pallas.ref<16xf32>, tensor<16xf32>
  %sin, %cos = math.sincos %x : tensor<16xf32>
  pallas.store %sin_ref[], %sin : !pallas.ref<16xf32>, tensor<16xf32>
  pallas.store %cos_ref[], %cos : !pallas.ref<16xf32>, tensor<16xf32>
  %b = pallas.load %b_ref[] : !pallas.ref<16xi32> -> tensor<16xi32>
  %e = pallas.load %e_ref[] : !pallas.ref<16xi32> -> tensor<16xi32>
  %pow = math.ipowi %b, %e : tensor<16xi32>
  pallas.store %pow_ref[], %pow : !pallas.ref<16xi32>, tensor<16xi32>
}
