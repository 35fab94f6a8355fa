// A copy that prints its grid step: a call with a side effect.
pallas.kernel @effects_kernel(%x_ref: !pallas.ref<8xf32>, %o_ref: !pallas.ref<8xf32>) {
  %i = pallas.program_id 0 : i32
  pallas.debug_print "step {}" %i : i32
  %x = pallas.load %x_ref[] : !pallas.ref<8xf32> -> tensor<8xf32>
  pallas.store %o_ref[], %x : !pallas.ref<8xf32>, tensor<8xf32>
}
