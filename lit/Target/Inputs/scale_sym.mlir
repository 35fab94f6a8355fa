// o = x * (program_id 0 + num_programs 0 + num_programs 1) over a grid of
// symbolic bounds (n // 8, cdiv(m, 128)): both bounds are read at run time
// (tpu.iteration_bound).
pallas.kernel @scale_sym_kernel(%x_ref: !pallas.ref<8x128xf32>,
                                %o_ref: !pallas.ref<8x128xf32>) {
  %i = pallas.program_id 0 : i32
  %n0 = pallas.num_programs 0 : i32
  %n1 = pallas.num_programs 1 : i32
  %s0 = arith.addi %i, %n0 : i32
  %s = arith.addi %s0, %n1 : i32
  %sf = arith.sitofp %s : i32 to f32
  %sb = pallas.broadcast_in_dim %sf dims [] : f32 -> tensor<8x128xf32>
  %x = pallas.load %x_ref[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %y = arith.mulf %x, %sb : tensor<8x128xf32>
  pallas.store %o_ref[], %y : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
