// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu="chip=sm_90a print-schedule" -o /dev/null 2>&1 | FileCheck %s --check-prefix=WG
// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu="chip=sm_80 print-schedule" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MMA

// pallas-to-gpu's print-schedule: the software pipeline of each tensor-core
// dot (Analysis/PipelineSchedule.h), decided before the dot is emitted.

// Tests that a matmul step whose operands both come from two TMA stages
// (sm_90a, num_stages = 2) keeps one wgmma group in flight and copies one
// step ahead; on sm_80 the operands are prefetched with cp.async two steps
// ahead and waited for with cp.async.wait_group 1.
// WG: remark: pipeline: stages 2 ahead 1 copy-wait 0 wait-group 1 chunks 4 x 16 a tma b tma
// MMA: remark: pipeline: stages 2 ahead 2 copy-wait 1 wait-group 0 chunks 1 x 64 a prefetched b prefetched

pallas.kernel @mm_kernel(%a: !pallas.ref<64x64xbf16>, %b: !pallas.ref<64x64xbf16>,
                         %o: !pallas.ref<64x64xf32>, %acc: !pallas.ref<64x64xf32, vmem>) {
  %k = pallas.program_id 2 : i32
  %nk = pallas.num_programs 2 : i32
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %first = arith.cmpi eq, %k, %c0 : i32
  scf.if %first {
    %z = arith.constant dense<0.0> : tensor<64x64xf32>
    pallas.store %acc[], %z : !pallas.ref<64x64xf32, vmem>, tensor<64x64xf32>
  }
  %x = pallas.load %a[] : !pallas.ref<64x64xbf16> -> tensor<64x64xbf16>
  %y = pallas.load %b[] : !pallas.ref<64x64xbf16> -> tensor<64x64xbf16>
  %p = pallas.load %acc[] : !pallas.ref<64x64xf32, vmem> -> tensor<64x64xf32>
  %d = pallas.dot %x, %y, %p : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  pallas.store %acc[], %d : !pallas.ref<64x64xf32, vmem>, tensor<64x64xf32>
  %lastk = arith.subi %nk, %c1 : i32
  %last = arith.cmpi eq, %k, %lastk : i32
  scf.if %last {
    %r = pallas.load %acc[] : !pallas.ref<64x64xf32, vmem> -> tensor<64x64xf32>
    pallas.store %o[], %r : !pallas.ref<64x64xf32>, tensor<64x64xf32>
  }
}
func.func @main(%a: tensor<128x256xbf16>, %b: tensor<256x64xbf16>) -> tensor<128x64xf32> {
  %o = pallas.call @mm_kernel(%a, %b) {grid = array<i64: 2, 1, 4>, name = "mm",
      in_specs = [#pallas.block_spec<[64, 64], (d0, d1, d2) -> (d0, d2)>, #pallas.block_spec<[64, 64], (d0, d1, d2) -> (d2, d1)>],
      out_specs = [#pallas.block_spec<[64, 64], (d0, d1, d2) -> (d0, d1)>],
      scratch = [!pallas.ref<64x64xf32, vmem>],
      compiler_params = #pallas.compiler_params<
          gpu = <num_warps = 4, num_stages = 2>,
          tpu = <dimension_semantics = [parallel, parallel, arbitrary]>>}
      : (tensor<128x256xbf16>, tensor<256x64xbf16>) -> tensor<128x64xf32>
  return %o : tensor<128x64xf32>
}

// -----

// Tests that without TMA stages (64x32 by 32x64 blocks, no num_stages) the
// wgmma operands are copied with cp.async in two k chunks and no group stays
// in flight; on sm_80 the default three cp.async stages prefetch them.
// WG: remark: pipeline: stages 0 ahead 0 copy-wait 0 wait-group 0 chunks 2 x 16 a cp.async b cp.async
// MMA: remark: pipeline: stages 3 ahead 3 copy-wait 2 wait-group 0 chunks 1 x 32 a prefetched b prefetched

pallas.kernel @mmwg_kernel(%a: !pallas.ref<64x32xbf16>, %b: !pallas.ref<32x64xbf16>,
                           %o: !pallas.ref<64x64xf32>, %acc: !pallas.ref<64x64xf32, vmem>) {
  %k = pallas.program_id 2 : i32
  %nk = pallas.num_programs 2 : i32
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %first = arith.cmpi eq, %k, %c0 : i32
  scf.if %first {
    %z = arith.constant dense<0.0> : tensor<64x64xf32>
    pallas.store %acc[], %z : !pallas.ref<64x64xf32, vmem>, tensor<64x64xf32>
  }
  %x = pallas.load %a[] : !pallas.ref<64x32xbf16> -> tensor<64x32xbf16>
  %y = pallas.load %b[] : !pallas.ref<32x64xbf16> -> tensor<32x64xbf16>
  %p = pallas.load %acc[] : !pallas.ref<64x64xf32, vmem> -> tensor<64x64xf32>
  %d = pallas.dot %x, %y, %p : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  pallas.store %acc[], %d : !pallas.ref<64x64xf32, vmem>, tensor<64x64xf32>
  %lastk = arith.subi %nk, %c1 : i32
  %last = arith.cmpi eq, %k, %lastk : i32
  scf.if %last {
    %r = pallas.load %acc[] : !pallas.ref<64x64xf32, vmem> -> tensor<64x64xf32>
    pallas.store %o[], %r : !pallas.ref<64x64xf32>, tensor<64x64xf32>
  }
}
func.func @main(%a: tensor<128x64xbf16>, %b: tensor<64x128xbf16>) -> tensor<128x128xf32> {
  %o = pallas.call @mmwg_kernel(%a, %b) {grid = array<i64: 2, 2, 2>, name = "mmwg",
      in_specs = [#pallas.block_spec<[64, 32], (d0, d1, d2) -> (d0, d2)>, #pallas.block_spec<[32, 64], (d0, d1, d2) -> (d2, d1)>],
      out_specs = [#pallas.block_spec<[64, 64], (d0, d1, d2) -> (d0, d1)>],
      scratch = [!pallas.ref<64x64xf32, vmem>],
      compiler_params = #pallas.compiler_params<tpu = <dimension_semantics = [parallel, parallel, arbitrary]>>}
      : (tensor<128x64xbf16>, tensor<64x128xbf16>) -> tensor<128x128xf32>
  return %o : tensor<128x128xf32>
}

// -----

// Tests that an operand computed in the kernel (A squared) is stored to a
// shared-memory tile, while the loaded one keeps its cp.async feed.
// WG: remark: pipeline: stages 0 ahead 0 copy-wait 0 wait-group 0 chunks 2 x 16 a stored b cp.async
// MMA: remark: pipeline: stages 3 ahead 3 copy-wait 2 wait-group 0 chunks 1 x 32 a stored b prefetched

pallas.kernel @mmreg_kernel(%a: !pallas.ref<64x32xbf16>, %b: !pallas.ref<32x64xbf16>,
                           %o: !pallas.ref<64x64xf32>, %acc: !pallas.ref<64x64xf32, vmem>) {
  %k = pallas.program_id 2 : i32
  %nk = pallas.num_programs 2 : i32
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %first = arith.cmpi eq, %k, %c0 : i32
  scf.if %first {
    %z = arith.constant dense<0.0> : tensor<64x64xf32>
    pallas.store %acc[], %z : !pallas.ref<64x64xf32, vmem>, tensor<64x64xf32>
  }
  %x0 = pallas.load %a[] : !pallas.ref<64x32xbf16> -> tensor<64x32xbf16>
  %x = arith.mulf %x0, %x0 : tensor<64x32xbf16>
  %y = pallas.load %b[] : !pallas.ref<32x64xbf16> -> tensor<32x64xbf16>
  %p = pallas.load %acc[] : !pallas.ref<64x64xf32, vmem> -> tensor<64x64xf32>
  %d = pallas.dot %x, %y, %p : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  pallas.store %acc[], %d : !pallas.ref<64x64xf32, vmem>, tensor<64x64xf32>
  %lastk = arith.subi %nk, %c1 : i32
  %last = arith.cmpi eq, %k, %lastk : i32
  scf.if %last {
    %r = pallas.load %acc[] : !pallas.ref<64x64xf32, vmem> -> tensor<64x64xf32>
    pallas.store %o[], %r : !pallas.ref<64x64xf32>, tensor<64x64xf32>
  }
}
func.func @main(%a: tensor<128x64xbf16>, %b: tensor<64x128xbf16>) -> tensor<128x128xf32> {
  %o = pallas.call @mmreg_kernel(%a, %b) {grid = array<i64: 2, 2, 2>, name = "mmreg",
      in_specs = [#pallas.block_spec<[64, 32], (d0, d1, d2) -> (d0, d2)>, #pallas.block_spec<[32, 64], (d0, d1, d2) -> (d2, d1)>],
      out_specs = [#pallas.block_spec<[64, 64], (d0, d1, d2) -> (d0, d1)>],
      scratch = [!pallas.ref<64x64xf32, vmem>],
      compiler_params = #pallas.compiler_params<tpu = <dimension_semantics = [parallel, parallel, arbitrary]>>}
      : (tensor<128x64xbf16>, tensor<64x128xbf16>) -> tensor<128x128xf32>
  return %o : tensor<128x128xf32>
}
