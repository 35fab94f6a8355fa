// RUN: pallasc-opt %s -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu="chip=sm_80 print-layouts" -o /dev/null 2>&1 | FileCheck %s --check-prefix=LAYOUT
// RUN: pallasc-opt %s -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu=chip=sm_80 -canonicalize -cse 2>/dev/null | FileCheck %s --check-prefix=SM80
// RUN: pallasc-opt %s -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu=chip=sm_90a -canonicalize -cse 2>/dev/null | FileCheck %s --check-prefix=SM90

// The barriers of JAX's decode_attention.mqa as it ships (exported with
// pallasc_jax: q [2, 16, 64], k/v [2, 4096, 64] f16, block_h 16, block_k
// 256, k_splits 16, num_warps 4; the call-level transforms applied). Its
// 16-row dots take 4 warps along N (pallas-to-gpu-dot-small-m.mlir); Triton
// compiles the same kernel with 9 bar.sync. Three things kept pallasc at 33:
//
// 1. The row max broadcast back over the scores goes [16] -> [16, 1] ->
//    [16, 256]. The [16, 1] step took the default blocked layout, and so did
//    the [16, 256] broadcast: both the max and the rescale factor went
//    through shared memory and back into the accumulator layout (2 barriers
//    per conversion). The [16, 1] value is now the accumulator's slice seen
//    with a unit column (LayoutAssignment.cpp, chooseElementwise), and the
//    broadcasts take the accumulator layout itself.
// LAYOUT: :[[@LINE+105]]:15: remark: result 0: MmaC <[16, 256] regs=[1, 2048, 8, 16, 32] lanes=[2, 4, 256, 512, 1024] warps=[64, 128]>
// LAYOUT: :[[@LINE+110]]:15: remark: result 0: Derived <[16, 1] regs=[8] lanes=[0, 0, 1, 2, 4] warps=[0, 0]>
// LAYOUT: :[[@LINE+110]]:15: remark: result 0: MmaC <[16, 256] regs=[1, 2048, 8, 16, 32] lanes=[2, 4, 256, 512, 1024] warps=[64, 128]>
// LAYOUT: :[[@LINE+117]]:15: remark: result 0: Derived <[16, 1] regs=[8] lanes=[0, 0, 1, 2, 4] warps=[0, 0]>
// LAYOUT: :[[@LINE+117]]:15: remark: result 0: MmaC <[16, 64] regs=[1, 512, 8] lanes=[2, 4, 64, 128, 256] warps=[16, 32]>
// LAYOUT: :[[@LINE+117]]:15: remark: result 0: MmaC <[16, 64] regs=[1, 512, 8] lanes=[2, 4, 64, 128, 256] warps=[16, 32]>
//
// 2. The masked output stores select against a snapshot of the outputs
//    that emitMaterialize turns into stores under the mask; the snapshot
//    was still loaded and converted through shared memory (3 barriers and
//    stores nothing read). It is no longer loaded (EmitMemory.cpp).
//
// 3. Each dot's cp.async copies were waited for in 4 chunks along k, a
//    wait and a barrier each; a dot of 32 mma.sync per warp is now waited
//    for whole (MmaSync.cpp: at least 32 mma.sync per warp and chunk).
//
// sm_80, 9 barriers: K's copies landed (1), K's tile read before the
// reductions reuse it (1), the row max and the row sum across the warps
// (2 + 2), P and V's copies landed (1), V's tile read (1), and one after
// the loop; nothing in the epilogue touches shared memory.
// SM80-LABEL: gpu.func @mha_forward(
// SM80-COUNT-16: nvgpu.device_async_copy
// SM80-NOT: gpu.barrier
// SM80: nvvm.cp.async.wait.group 0
// SM80-NEXT: gpu.barrier
// SM80-NOT: gpu.barrier
// SM80-COUNT-32: nvvm.mma.sync
// SM80-NOT: nvvm.mma.sync
// SM80: gpu.barrier
// SM80-COUNT-4: gpu.shuffle  xor
// SM80-NOT: gpu.barrier
// SM80-COUNT-2: memref.store {{.+}} #gpu.address_space<workgroup>>
// SM80-NEXT: gpu.barrier
// SM80-NOT: gpu.barrier
// SM80: gpu.barrier
// SM80-NOT: gpu.barrier
// SM80-COUNT-4: gpu.shuffle  xor
// SM80-NOT: gpu.barrier
// SM80-COUNT-2: memref.store {{.+}} #gpu.address_space<workgroup>>
// SM80-NEXT: gpu.barrier
// SM80-NOT: gpu.barrier
// SM80: gpu.barrier
// SM80-NOT: gpu.barrier
// SM80-COUNT-16: nvgpu.device_async_copy
// SM80-NOT: gpu.barrier
// SM80: nvvm.cp.async.wait.group 0
// SM80-NEXT: gpu.barrier
// SM80-NOT: gpu.barrier
// SM80-COUNT-32: nvvm.mma.sync
// SM80-NOT: nvvm.mma.sync
// SM80: gpu.barrier
// SM80: gpu.barrier
// SM80-NOT: gpu.barrier
// SM80-NOT: #gpu.address_space<workgroup>
// SM80: gpu.return
//
// sm_90a (mma.sync: wgmma needs 64-row slabs) has the shared memory for
// a 2-stage ring of K and V: 10 barriers, the ring's wait taking the place
// of K's, and the same epilogue.
// SM90-LABEL: gpu.func @mha_forward(
// SM90-NOT: wgmma
// SM90-COUNT-10: gpu.barrier
// SM90-NOT: gpu.barrier
// SM90-NOT: #gpu.address_space<workgroup>
// SM90: gpu.return
module {
  pallas.kernel @mha_forward(%arg0: !pallas.ref<16x64xf16>, %arg1: !pallas.ref<256x64xf16>, %arg2: !pallas.ref<256x64xf16>, %arg3: !pallas.ref<16x64xf16>, %arg4: !pallas.ref<16xf32>, %arg5: !pallas.ref<16xf32>) {
    %c0 = arith.constant 0 : index
    %cst = arith.constant dense<-3.40282347E+38> : tensor<16xf32>
    %cst_0 = arith.constant dense<1.250000e-01> : tensor<16x256xf32>
    %c1 = arith.constant 1 : index
    %c255_i32 = arith.constant 255 : i32
    %c1_i32 = arith.constant 1 : i32
    %c256_i32 = arith.constant 256 : i32
    %cst_1 = arith.constant dense<0.000000e+00> : tensor<16x64xf32>
    %cst_2 = arith.constant dense<0.000000e+00> : tensor<16xf32>
    %c16_i32 = arith.constant 16 : i32
    %0 = pallas.program_id 1 : i32
    %1 = pallas.program_id 2 : i32
    %2 = pallas.iota 0 : tensor<16xi32>
    %3 = arith.muli %0, %c16_i32 : i32
    %4 = arith.subi %c16_i32, %3 : i32
    %5 = pallas.broadcast_in_dim %4 dims [] : i32 -> tensor<16xi32>
    %6 = arith.cmpi slt, %2, %5 : tensor<16xi32>
    %7 = pallas.broadcast_in_dim %6 dims [0] : tensor<16xi1> -> tensor<16x1xi1>
    %8 = arith.muli %1, %c256_i32 : i32
    %9 = arith.addi %1, %c1_i32 : i32
    %10 = arith.muli %9, %c256_i32 : i32
    %11 = arith.cmpi sge, %8, %10 : i32
    %12:3 = scf.if %11 -> (tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32>) {
      scf.yield %cst_1, %cst, %cst_2 : tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32>
    } else {
      %16 = pallas.broadcast_in_dim %7 dims [0, 1] : tensor<16x1xi1> -> tensor<16x64xi1>
      %17 = pallas.load %arg0[] mask %16 : !pallas.ref<16x64xf16> -> tensor<16x64xf16>
      %18 = arith.subi %10, %8 : i32
      %19 = arith.addi %18, %c255_i32 : i32
      %20 = arith.divsi %19, %c256_i32 : i32
      %21 = arith.minsi %20, %c1_i32 : i32
      %22 = arith.index_cast %21 : i32 to index
      %23:3 = scf.for %arg6 = %c0 to %22 step %c1 iter_args(%arg7 = %cst_1, %arg8 = %cst, %arg9 = %cst_2) -> (tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32>) {
        %24 = arith.index_cast %arg6 : index to i32
        %25 = arith.muli %24, %c256_i32 : i32
        %26 = pallas.load %arg1[%25 : 256, 0 : 64] {fit} : !pallas.ref<256x64xf16> -> tensor<256x64xf16>
        %27 = pallas.transpose %26 [1, 0] : tensor<256x64xf16> -> tensor<64x256xf16>
        %28 = pallas.dot %17, %27 : tensor<16x64xf16>, tensor<64x256xf16> -> tensor<16x256xf32>
        %29 = arith.mulf %28, %cst_0 : tensor<16x256xf32>
        %30 = pallas.reduce max %29 dims [1] : tensor<16x256xf32> -> tensor<16xf32>
        %31 = arith.maximumf %arg8, %30 : tensor<16xf32>
        %32 = arith.subf %arg8, %31 : tensor<16xf32>
        %33 = math.exp %32 : tensor<16xf32>
        %34 = arith.mulf %33, %arg9 : tensor<16xf32>
        %35 = pallas.broadcast_in_dim %31 dims [0] : tensor<16xf32> -> tensor<16x1xf32>
        %36 = pallas.broadcast_in_dim %35 dims [0, 1] : tensor<16x1xf32> -> tensor<16x256xf32>
        %37 = arith.subf %29, %36 : tensor<16x256xf32>
        %38 = math.exp %37 : tensor<16x256xf32>
        %39 = pallas.reduce sum %38 dims [1] : tensor<16x256xf32> -> tensor<16xf32>
        %40 = arith.addf %34, %39 : tensor<16xf32>
        %41 = pallas.load %arg2[%25 : 256, 0 : 64] {fit} : !pallas.ref<256x64xf16> -> tensor<256x64xf16>
        %42 = arith.truncf %38 : tensor<16x256xf32> to tensor<16x256xf16>
        %43 = pallas.dot %42, %41 : tensor<16x256xf16>, tensor<256x64xf16> -> tensor<16x64xf32>
        %44 = pallas.broadcast_in_dim %33 dims [0] : tensor<16xf32> -> tensor<16x1xf32>
        %45 = pallas.broadcast_in_dim %44 dims [0, 1] : tensor<16x1xf32> -> tensor<16x64xf32>
        %46 = arith.mulf %45, %arg7 : tensor<16x64xf32>
        %47 = arith.addf %46, %43 : tensor<16x64xf32>
        scf.yield %47, %31, %40 : tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32>
      }
      scf.yield %23#0, %23#1, %23#2 : tensor<16x64xf32>, tensor<16xf32>, tensor<16xf32>
    }
    %13 = pallas.reshape %7 : tensor<16x1xi1> -> tensor<16xi1>
    pallas.store %arg4[], %12#2 mask %13 : !pallas.ref<16xf32>, tensor<16xf32>
    pallas.store %arg5[], %12#1 mask %13 : !pallas.ref<16xf32>, tensor<16xf32>
    %14 = arith.truncf %12#0 : tensor<16x64xf32> to tensor<16x64xf16>
    %15 = pallas.broadcast_in_dim %7 dims [0, 1] : tensor<16x1xi1> -> tensor<16x64xi1>
    pallas.store %arg3[], %14 mask %15 : !pallas.ref<16x64xf16>, tensor<16x64xf16>
  }
  func.func @main(%arg0: tensor<2x16x64xf16>, %arg1: tensor<2x16x256x64xf16>, %arg2: tensor<2x16x256x64xf16>) -> (tensor<2x16x16x64xf16>, tensor<2x16x16xf32>, tensor<2x16x16xf32>) {
    %0:3 = pallas.call @mha_forward(%arg0, %arg1, %arg2) {compiler_params = #pallas.compiler_params<gpu = <num_warps = 4, num_stages = 2>>, grid = array<i64: 2, 1, 16>, in_specs = [#pallas.block_spec<[squeezed, 16, 64], (d0, d1, d2) -> (d0, d1, 0)>, #pallas.block_spec<[squeezed, squeezed, 256, 64], (d0, d1, d2) -> (d0, d2, 0, 0)>, #pallas.block_spec<[squeezed, squeezed, 256, 64], (d0, d1, d2) -> (d0, d2, 0, 0)>], name = "mha_forward", out_specs = [#pallas.block_spec<[squeezed, squeezed, 16, 64], (d0, d1, d2) -> (d0, d2, d1, 0)>, #pallas.block_spec<[squeezed, squeezed, 16], (d0, d1, d2) -> (d0, d2, d1)>, #pallas.block_spec<[squeezed, squeezed, 16], (d0, d1, d2) -> (d0, d2, d1)>]} : (tensor<2x16x64xf16>, tensor<2x16x256x64xf16>, tensor<2x16x256x64xf16>) -> (tensor<2x16x16x64xf16>, tensor<2x16x16xf32>, tensor<2x16x16xf32>)
    return %0#0, %0#1, %0#2 : tensor<2x16x16x64xf16>, tensor<2x16x16xf32>, tensor<2x16x16xf32>
  }
}
