// Gather 8-row blocks of a [256, 512] table by prefetched block indices
// (the TPU form of examples/scalar_prefetch), scaled by the index itself:
// out[8i:8i+8] = table[8 idx[i]: 8 idx[i] + 8] + idx[i].
func.func @block_index_map(%i: i32, %idx_ref: !pallas.ref<16xi32, smem>)
    -> (i32, i32) {
  %b = pallas.load %idx_ref[%i] : !pallas.ref<16xi32, smem> -> i32
  %c0 = arith.constant 0 : i32
  return %b, %c0 : i32, i32
}

pallas.kernel @gather_blocks_kernel(%idx_ref: !pallas.ref<16xi32, smem>,
                                    %rows_ref: !pallas.ref<8x512xf32>,
                                    %o_ref: !pallas.ref<8x512xf32>) {
  %i = pallas.program_id 0 : i32
  %b = pallas.load %idx_ref[%i] : !pallas.ref<16xi32, smem> -> i32
  %bf = arith.sitofp %b : i32 to f32
  %bb = pallas.broadcast_in_dim %bf dims [] : f32 -> tensor<8x512xf32>
  %rows = pallas.load %rows_ref[] : !pallas.ref<8x512xf32> -> tensor<8x512xf32>
  %y = arith.addf %rows, %bb : tensor<8x512xf32>
  pallas.store %o_ref[], %y : !pallas.ref<8x512xf32>, tensor<8x512xf32>
}
