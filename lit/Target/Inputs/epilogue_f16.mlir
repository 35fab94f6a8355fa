// A dot whose result is cast to f16 and stored (Epilogue.cpp): the
// accumulator goes through shared memory into 16-byte stores when the
// output's rows allow them (epilogue_f16.json: 136 columns, blocks past the
// array's end on both axes), else straight from the fragments
// (epilogue_f16_odd.json: 130 columns, rows not 16-byte aligned).
pallas.kernel @epilogue_f16(%a_ref: !pallas.ref<64x32xf16>,
                            %b_ref: !pallas.ref<32x64xf16>,
                            %o_ref: !pallas.ref<64x64xf16>) {
  %a = pallas.load %a_ref[] : !pallas.ref<64x32xf16> -> tensor<64x32xf16>
  %b = pallas.load %b_ref[] : !pallas.ref<32x64xf16> -> tensor<32x64xf16>
  %c = pallas.dot %a, %b
      : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
  %h = arith.truncf %c : tensor<64x64xf32> to tensor<64x64xf16>
  pallas.store %o_ref[], %h : !pallas.ref<64x64xf16>, tensor<64x64xf16>
}
