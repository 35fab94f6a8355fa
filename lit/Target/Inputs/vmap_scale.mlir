// o = x * (program_id + num_programs), vmapped over a leading batch axis of
// size 3 by the spec's transform: the kernel keeps seeing a 1-D grid.
pallas.kernel @scale_kernel(%x_ref: !pallas.ref<8x128xf32>,
                            %o_ref: !pallas.ref<8x128xf32>) {
  %i = pallas.program_id 0 : i32
  %n = pallas.num_programs 0 : i32
  %s = arith.addi %i, %n : i32
  %sf = arith.sitofp %s : i32 to f32
  %sb = pallas.broadcast_in_dim %sf dims [] : f32 -> tensor<8x128xf32>
  %x = pallas.load %x_ref[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %y = arith.mulf %x, %sb : tensor<8x128xf32>
  pallas.store %o_ref[], %y : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
