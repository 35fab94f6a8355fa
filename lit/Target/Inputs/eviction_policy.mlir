// Loads with JAX's eviction_policy (plgpu.load(..., eviction_policy=...), as
// layer_norm and rms_norm write them): a round-up-and-mask window of x kept
// for reuse (evict_last), a whole block of y streamed once (evict_first), a
// scalar of s (evict_last, 4 bytes) and a plain load of w.
pallas.kernel @evict_kernel(%x_ref: !pallas.ref<1000xf32>, %y_ref: !pallas.ref<1024xf16>,
                            %w_ref: !pallas.ref<1024xf32>, %s_ref: !pallas.ref<4xf32>,
                            %o_ref: !pallas.ref<1000xf32>) {
  %iota = pallas.iota 0 : tensor<1024xi32>
  %n = arith.constant dense<1000> : tensor<1024xi32>
  %m = arith.cmpi slt, %iota, %n : tensor<1024xi32>
  %c0 = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %z = pallas.broadcast_in_dim %zero dims [] : f32 -> tensor<1024xf32>
  %x = pallas.load %x_ref[%c0 : 1024] mask %m other %z {eviction_policy = "evict_last"} : !pallas.ref<1000xf32> -> tensor<1024xf32>
  %y = pallas.load %y_ref[] {eviction_policy = "evict_first"} : !pallas.ref<1024xf16> -> tensor<1024xf16>
  %w = pallas.load %w_ref[] {eviction_policy = "evict_normal"} : !pallas.ref<1024xf32> -> tensor<1024xf32>
  %s = pallas.load %s_ref[2] {eviction_policy = "evict_last"} : !pallas.ref<4xf32> -> f32
  %yf = arith.extf %y : tensor<1024xf16> to tensor<1024xf32>
  %sb = pallas.broadcast_in_dim %s dims [] : f32 -> tensor<1024xf32>
  %a = arith.mulf %x, %yf : tensor<1024xf32>
  %b = arith.addf %a, %w : tensor<1024xf32>
  %r = arith.mulf %b, %sb : tensor<1024xf32>
  pallas.store %o_ref[%c0 : 1024], %r mask %m : !pallas.ref<1000xf32>, tensor<1024xf32>
}
