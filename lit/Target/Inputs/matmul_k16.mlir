// examples/matmul/kernel.mlir with f16 blocks of K = 16 (a dot whose K is
// not a multiple of 32: gfx950 takes CDNA3's 16x16x16 MFMA for it).
pallas.kernel @matmul_kernel(%a_ref: !pallas.ref<64x16xf16>,
                             %b_ref: !pallas.ref<16x64xf16>,
                             %o_ref: !pallas.ref<64x64xf32>,
                             %acc_ref: !pallas.ref<64x64xf32, vmem>) {
  %k = pallas.program_id 2 : i32
  %nk = pallas.num_programs 2 : i32
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32

  // First k step: zero the accumulator.
  %is_first = arith.cmpi eq, %k, %c0 : i32
  scf.if %is_first {
    %zeros = arith.constant dense<0.0> : tensor<64x64xf32>
    pallas.store %acc_ref[], %zeros
        : !pallas.ref<64x64xf32, vmem>, tensor<64x64xf32>
  }

  // acc += a @ b, accumulated in f32.
  %a = pallas.load %a_ref[] : !pallas.ref<64x16xf16> -> tensor<64x16xf16>
  %b = pallas.load %b_ref[] : !pallas.ref<16x64xf16> -> tensor<16x64xf16>
  %acc = pallas.load %acc_ref[]
      : !pallas.ref<64x64xf32, vmem> -> tensor<64x64xf32>
  %acc_next = pallas.dot %a, %b, %acc
      : tensor<64x16xf16>, tensor<16x64xf16>, tensor<64x64xf32>
        -> tensor<64x64xf32>
  pallas.store %acc_ref[], %acc_next
      : !pallas.ref<64x64xf32, vmem>, tensor<64x64xf32>

  // Last k step: write the finished block out.
  %last_k = arith.subi %nk, %c1 : i32
  %is_last = arith.cmpi eq, %k, %last_k : i32
  scf.if %is_last {
    %result = pallas.load %acc_ref[]
        : !pallas.ref<64x64xf32, vmem> -> tensor<64x64xf32>
    pallas.store %o_ref[], %result
        : !pallas.ref<64x64xf32>, tensor<64x64xf32>
  }
}
