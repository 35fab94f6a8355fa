// A dot with an elementwise epilogue (scale, then cast to bf16) over 128x128
// blocks with 8 warps: restaged through shared memory in two chunks of 64
// rows (Epilogue.cpp).
pallas.kernel @epilogue_bf16(%a_ref: !pallas.ref<128x64xbf16>,
                             %b_ref: !pallas.ref<64x128xbf16>,
                             %o_ref: !pallas.ref<128x128xbf16>) {
  %a = pallas.load %a_ref[] : !pallas.ref<128x64xbf16> -> tensor<128x64xbf16>
  %b = pallas.load %b_ref[] : !pallas.ref<64x128xbf16> -> tensor<64x128xbf16>
  %c = pallas.dot %a, %b
      : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
  %half = arith.constant dense<0.5> : tensor<128x128xf32>
  %s = arith.mulf %c, %half : tensor<128x128xf32>
  %h = arith.truncf %s : tensor<128x128xf32> to tensor<128x128xbf16>
  pallas.store %o_ref[], %h : !pallas.ref<128x128xbf16>, tensor<128x128xbf16>
}
