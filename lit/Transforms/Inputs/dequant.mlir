// A bias plus a dequantized matrix: o = x + float(q.values) * q.scales[:, None],
// where q is a hi aggregate (!pallas.hi<"qarray", ...>) of int8 values and
// per-row f32 scales, one [64, 128] block of rows per grid step.
pallas.kernel @dequant_kernel(%x_ref: !pallas.ref<64x128xf32>,
                              %q: !pallas.hi<"qarray", !pallas.ref<64x128xi8>, !pallas.ref<64xf32>>,
                              %o_ref: !pallas.ref<64x128xf32>) {
  %vals, %scales = pallas.hi_unpack %q : !pallas.hi<"qarray", !pallas.ref<64x128xi8>, !pallas.ref<64xf32>>
  %x = pallas.load %x_ref[] : !pallas.ref<64x128xf32> -> tensor<64x128xf32>
  %v = pallas.load %vals[] : !pallas.ref<64x128xi8> -> tensor<64x128xi8>
  %s = pallas.load %scales[] : !pallas.ref<64xf32> -> tensor<64xf32>
  %f = arith.sitofp %v : tensor<64x128xi8> to tensor<64x128xf32>
  %sb = pallas.broadcast_in_dim %s dims [0] : tensor<64xf32> -> tensor<64x128xf32>
  %d = arith.mulf %f, %sb : tensor<64x128xf32>
  %r = arith.addf %x, %d : tensor<64x128xf32>
  pallas.store %o_ref[], %r : !pallas.ref<64x128xf32>, tensor<64x128xf32>
}
