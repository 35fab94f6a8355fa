// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu=chip=sm_80 -canonicalize -cse | FileCheck %s
// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu=chip=sm_90a -canonicalize -cse | FileCheck %s --check-prefix=WG

// pallas-to-gpu is one pass whose source is split by concern
// (passes/Conversion/PallasToGPU, docs/cuda.md's file map); the
// pallas-to-gpu-*.mlir files test it one concern per file: elementwise,
// reduce, memory, dot-mma, dot-wgmma, dot-tf32, tma, rocm, nvgpu-to-nvvm,
// num-warps, and its error cases in pallas-to-gpu-invalid.mlir and
// pallas-to-gpu-malformed.mlir.
//
// This file: wgmma dots on sm_90a (Wgmma.cpp); the same kernel keeps
// mma.sync on sm_80.

// Tests wgmma on sm_90a (one warpgroup: the 4 warps, one 64-row slab): the
// accumulator in registers as for mma.sync; A [64, 32] (K-major) and B
// [32, 64] (N-major: trans-b 1) copied by cp.async into 8x8 core-matrix
// tiles ([rows/8, cols/8, 8, 8], unpadded) in two k chunks; per chunk: wait,
// fence.proxy.async, barrier, then an m64n64k16 wgmma reading both operands
// through matrix descriptors (one per k step of 16), after a wgmma fence
// (after the barrier: ptxas wants no control flow or register writes
// between them); one commit and wait(0) after (operands copied per step:
// not pipelined). The pl.when(k == 0) zeroing of the scratch accumulator is
// the first wgmma's scale-d (k != 0), the carried registers its input, no
// select. At the last k step the accumulator goes out through shared
// memory (Epilogue.cpp): 16 column pairs written, a barrier, 8 reads and 8
// stores of 16 bytes per thread; its buffer (64 rows of 288 bytes) is the
// workspace's 18432 bytes, which the operands' 8192 bytes of tiles reuse.
// sm_80 keeps mma.sync for the same kernel.
// WG-LABEL: gpu.func @mmwg(
// WG-SAME: dynamic_shared_memory_bytes = 18432,
// WG: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args({{.+}}) -> ({{(f32, ){31}f32}})
// WG: %[[NOTFIRST:.+]] = arith.cmpi ne, %{{.+}}, %c0_i32 : i32
// WG-NEXT: %[[SCALED:.+]] = arith.extui %[[NOTFIRST]] : i1 to i32
// WG: memref.view %{{.+}}[%{{.+}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<8x4x8x8xbf16, #gpu.address_space<workgroup>>
// WG-NEXT: memref.view %{{.+}}[%{{.+}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4x8x8x8xbf16, #gpu.address_space<workgroup>>
// WG: nvgpu.device_async_copy {{.+}}, 8 {bypassL1} : memref<{{.+}}xbf16> to memref<2048xbf16, #gpu.address_space<workgroup>>
// WG: nvvm.cp.async.commit.group
// WG: nvvm.cp.async.commit.group
// WG-NOT: nvvm.mma.sync
// WG-NOT: ldmatrix
// WG-NOT: arith.select
// WG: nvvm.cp.async.wait.group 1
// WG-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// WG-NEXT: gpu.barrier
// WG-NEXT: nvvm.wgmma.fence.aligned
// WG-NEXT: llvm.inline_asm has_side_effects "{\0A.reg .pred p;\0Asetp.ne.b32 p, $32, 0;\0Awgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {$0, {{.+}}, $31}, $33, $34, p, 1, 1, 0, 1;\0A}", "{{(=f,){32}r}},l,l,0,1,{{.+}},31" %[[SCALED]], {{.+}} -> !llvm.struct<({{(f32, ){31}f32}})>
// WG: nvvm.cp.async.wait.group 0
// WG-NEXT: nvvm.fence.proxy
// WG-NEXT: gpu.barrier
// WG-NEXT: nvvm.wgmma.fence.aligned
// WG: llvm.inline_asm has_side_effects "{\0A.reg .pred p;\0Asetp.ne.b32 p, 1, 0;\0Awgmma.mma_async
// WG: nvvm.wgmma.commit.group.sync.aligned
// WG-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// WG-NEXT: gpu.barrier
// WG-NOT: wgmma.mma_async
// WG: scf.if
// WG-COUNT-16: vector.store {{.+}} : memref<4608xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// WG-NEXT: gpu.barrier
// WG-COUNT-8: vector.load {{.+}} : memref<4608xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// WG-COUNT-8: vector.store {{.+}} : memref<16384xf32>, vector<4xf32>
// WG-NOT: vector.store
// WG: scf.yield
// CHECK-LABEL: gpu.func @mmwg(
// CHECK: nvvm.mma.sync
// CHECK-NOT: wgmma
// CHECK: scf.yield
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
