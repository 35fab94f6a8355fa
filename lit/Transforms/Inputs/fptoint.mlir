// float -> integer conversions (arith.fptosi / arith.fptoui) from f32, f16 and
// bf16 to every integer width, signed and unsigned: row r of output d holds
// source r (f32, f16, bf16) converted to d. pallas-legalize-math gives them
// XLA's semantics (NaN -> 0, saturation at the limits); fptoint_check.py
// feeds NaN, infinities, the limits +-1 and beyond.
pallas.kernel @fptoint(%x32_ref: !pallas.ref<64xf32>,
                        %x16_ref: !pallas.ref<64xf16>,
                        %xb_ref: !pallas.ref<64xbf16>,
                        %o_i8: !pallas.ref<3x64xi8>,
                        %o_i16: !pallas.ref<3x64xi16>,
                        %o_i32: !pallas.ref<3x64xi32>,
                        %o_i64: !pallas.ref<3x64xi64>,
                        %o_u8: !pallas.ref<3x64xi8>,
                        %o_u16: !pallas.ref<3x64xi16>,
                        %o_u32: !pallas.ref<3x64xi32>,
                        %o_u64: !pallas.ref<3x64xi64>) {
  %x32 = pallas.load %x32_ref[] : !pallas.ref<64xf32> -> tensor<64xf32>
  %x16 = pallas.load %x16_ref[] : !pallas.ref<64xf16> -> tensor<64xf16>
  %xb = pallas.load %xb_ref[] : !pallas.ref<64xbf16> -> tensor<64xbf16>
  %i8_x32 = arith.fptosi %x32 : tensor<64xf32> to tensor<64xi8>
  pallas.store %o_i8[0, 0 : 64], %i8_x32 : !pallas.ref<3x64xi8>, tensor<64xi8>
  %i8_x16 = arith.fptosi %x16 : tensor<64xf16> to tensor<64xi8>
  pallas.store %o_i8[1, 0 : 64], %i8_x16 : !pallas.ref<3x64xi8>, tensor<64xi8>
  %i8_xb = arith.fptosi %xb : tensor<64xbf16> to tensor<64xi8>
  pallas.store %o_i8[2, 0 : 64], %i8_xb : !pallas.ref<3x64xi8>, tensor<64xi8>
  %i16_x32 = arith.fptosi %x32 : tensor<64xf32> to tensor<64xi16>
  pallas.store %o_i16[0, 0 : 64], %i16_x32 : !pallas.ref<3x64xi16>, tensor<64xi16>
  %i16_x16 = arith.fptosi %x16 : tensor<64xf16> to tensor<64xi16>
  pallas.store %o_i16[1, 0 : 64], %i16_x16 : !pallas.ref<3x64xi16>, tensor<64xi16>
  %i16_xb = arith.fptosi %xb : tensor<64xbf16> to tensor<64xi16>
  pallas.store %o_i16[2, 0 : 64], %i16_xb : !pallas.ref<3x64xi16>, tensor<64xi16>
  %i32_x32 = arith.fptosi %x32 : tensor<64xf32> to tensor<64xi32>
  pallas.store %o_i32[0, 0 : 64], %i32_x32 : !pallas.ref<3x64xi32>, tensor<64xi32>
  %i32_x16 = arith.fptosi %x16 : tensor<64xf16> to tensor<64xi32>
  pallas.store %o_i32[1, 0 : 64], %i32_x16 : !pallas.ref<3x64xi32>, tensor<64xi32>
  %i32_xb = arith.fptosi %xb : tensor<64xbf16> to tensor<64xi32>
  pallas.store %o_i32[2, 0 : 64], %i32_xb : !pallas.ref<3x64xi32>, tensor<64xi32>
  %i64_x32 = arith.fptosi %x32 : tensor<64xf32> to tensor<64xi64>
  pallas.store %o_i64[0, 0 : 64], %i64_x32 : !pallas.ref<3x64xi64>, tensor<64xi64>
  %i64_x16 = arith.fptosi %x16 : tensor<64xf16> to tensor<64xi64>
  pallas.store %o_i64[1, 0 : 64], %i64_x16 : !pallas.ref<3x64xi64>, tensor<64xi64>
  %i64_xb = arith.fptosi %xb : tensor<64xbf16> to tensor<64xi64>
  pallas.store %o_i64[2, 0 : 64], %i64_xb : !pallas.ref<3x64xi64>, tensor<64xi64>
  %u8_x32 = arith.fptoui %x32 : tensor<64xf32> to tensor<64xi8>
  pallas.store %o_u8[0, 0 : 64], %u8_x32 : !pallas.ref<3x64xi8>, tensor<64xi8>
  %u8_x16 = arith.fptoui %x16 : tensor<64xf16> to tensor<64xi8>
  pallas.store %o_u8[1, 0 : 64], %u8_x16 : !pallas.ref<3x64xi8>, tensor<64xi8>
  %u8_xb = arith.fptoui %xb : tensor<64xbf16> to tensor<64xi8>
  pallas.store %o_u8[2, 0 : 64], %u8_xb : !pallas.ref<3x64xi8>, tensor<64xi8>
  %u16_x32 = arith.fptoui %x32 : tensor<64xf32> to tensor<64xi16>
  pallas.store %o_u16[0, 0 : 64], %u16_x32 : !pallas.ref<3x64xi16>, tensor<64xi16>
  %u16_x16 = arith.fptoui %x16 : tensor<64xf16> to tensor<64xi16>
  pallas.store %o_u16[1, 0 : 64], %u16_x16 : !pallas.ref<3x64xi16>, tensor<64xi16>
  %u16_xb = arith.fptoui %xb : tensor<64xbf16> to tensor<64xi16>
  pallas.store %o_u16[2, 0 : 64], %u16_xb : !pallas.ref<3x64xi16>, tensor<64xi16>
  %u32_x32 = arith.fptoui %x32 : tensor<64xf32> to tensor<64xi32>
  pallas.store %o_u32[0, 0 : 64], %u32_x32 : !pallas.ref<3x64xi32>, tensor<64xi32>
  %u32_x16 = arith.fptoui %x16 : tensor<64xf16> to tensor<64xi32>
  pallas.store %o_u32[1, 0 : 64], %u32_x16 : !pallas.ref<3x64xi32>, tensor<64xi32>
  %u32_xb = arith.fptoui %xb : tensor<64xbf16> to tensor<64xi32>
  pallas.store %o_u32[2, 0 : 64], %u32_xb : !pallas.ref<3x64xi32>, tensor<64xi32>
  %u64_x32 = arith.fptoui %x32 : tensor<64xf32> to tensor<64xi64>
  pallas.store %o_u64[0, 0 : 64], %u64_x32 : !pallas.ref<3x64xi64>, tensor<64xi64>
  %u64_x16 = arith.fptoui %x16 : tensor<64xf16> to tensor<64xi64>
  pallas.store %o_u64[1, 0 : 64], %u64_x16 : !pallas.ref<3x64xi64>, tensor<64xi64>
  %u64_xb = arith.fptoui %xb : tensor<64xbf16> to tensor<64xi64>
  pallas.store %o_u64[2, 0 : 64], %u64_xb : !pallas.ref<3x64xi64>, tensor<64xi64>
}
