// RUN: pallasc-opt %s -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu=chip=sm_90a -canonicalize -cse | FileCheck %s
// RUN: pallasc-opt %s -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu=chip=sm_90 -canonicalize -cse | FileCheck %s --check-prefix=SM90

// Tests TMA pipelining on sm_90a (the TMA plan: StagingPlans.cpp; its copies
// and mbarriers: DotStaging.cpp, Wgmma.cpp): a matmul whose k axis is the one
// sequential grid axis (a loop in the block), its dot at the top of the
// body, both operands whole 2-D bf16 blocks. Each input gets a tensor map
// parameter (!llvm.ptr, after the arrays; box [64, 64]: A K-major, B
// N-major) described in the launch record. Two stages (num_stages) x one
// 64-wide k chunk: two mbarriers, initialized once by thread 0 before the
// loop. Both operands come from TMA stages, so the wgmma groups are
// pipelined: one stays in flight (holding a stage), the copies use the
// other. Per step, thread 0 issues from one site, a loop over the steps
// [s, s] (the general [s == 0 ? 0 : s + stages - 2, s + stages - 2], when
// in range: step s into the stage step s - 2 read, whose group is retired):
// arrive.expect_tx with the chunk's 16 KiB, then one TMA box per operand
// into the stage j mod 2 (1024-byte aligned region) at the block's
// coordinates (A: {k*64, m*64}, B: {n*64, k*64}, innermost first). The
// warpgroup waits for its stage's phase (parity (s / 2) mod 2), then
// fences, before the wgmmas, whose descriptors set the 128B swizzle mode
// (bit 62), stride byte offset 1024 and leading byte offset 1 (A, K-major)
// or the panel stride 8192 (B, N-major); the first takes the pl.when(k == 0)
// zeroing as its scale-d (k != 0). The step ends with wait_group 1 (the
// previous step's group retired) and a barrier; the epilogue of the last
// step waits for all first, in its branch, and so does the loop's end.
// CHECK: gpu.func @mm(%{{.+}}: memref<128x256xbf16>, %{{.+}}: memref<256x64xbf16>, %{{.+}}: memref<128x64xf32>, %[[MAPA:[a-z0-9]+]]: !llvm.ptr, %[[MAPB:[a-z0-9]+]]: !llvm.ptr)
// CHECK-SAME: #pallas.gpu_param<tensor_map, inputs[0], dtype = bf16, global_shape = [128, 256], box_shape = [64, 64], swizzle = "128B", interleave = "none", l2_promotion = "128B", oob_fill = "zero">, #pallas.gpu_param<tensor_map, inputs[1], dtype = bf16, global_shape = [256, 64], box_shape = [64, 64], swizzle = "128B", interleave = "none", l2_promotion = "128B", oob_fill = "zero">]>
// CHECK-DAG: %[[DESCA:.+]] = arith.constant 4611686293305360384 : i64
// CHECK-DAG: %[[DESCB:.+]] = arith.constant 4611686293338849280 : i64
// CHECK: %[[SMEM:.+]] = arith.index_cast %{{.+}} : index to i32
// CHECK: %[[T0:.+]] = arith.cmpi eq, %thread_id_x, %c0 : index
// CHECK: scf.if %[[T0]] {
// CHECK: nvvm.mbarrier.init %{{.+}}, %c1_i32 : !llvm.ptr<3>, i32
// CHECK: nvvm.mbarrier.init %{{.+}}, %c1_i32 : !llvm.ptr<3>, i32
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for %[[K:.+]] = %c0 to %c4 step %c1
// CHECK: %[[NOTFIRST:.+]] = arith.cmpi ne, %{{.+}}, %c0_i32 : i32
// CHECK-NEXT: %[[SCALED:.+]] = arith.extui %[[NOTFIRST]] : i1 to i32
// CHECK: %[[REGION:.+]] = arith.andi %{{.+}}, %c-1024_i32 : i32
// CHECK: scf.if %[[T0]] {
// CHECK: %[[HI:.+]] = arith.addi %[[K]], %c1 : index
// CHECK: scf.for %[[J:.+]] = %[[K]] to %[[HI]] step %c1 {
// CHECK: %[[IN:.+]] = arith.cmpi slt, %[[J]], %c4 : index
// CHECK: scf.if %[[IN]] {
// CHECK: %[[STAGE:.+]] = arith.remui %[[J]], %c2 : index
// CHECK: nvvm.mbarrier.arrive.expect_tx %[[BAR:.+]], %c16384_i32 : !llvm.ptr<3>, i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %[[MAPA]], %[[BAR]], box[%{{.+}}, %{{.+}}] : !llvm.ptr<7>, !llvm.ptr
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %[[MAPB]], %[[BAR]], box[%{{.+}}, %{{.+}}] : !llvm.ptr<7>, !llvm.ptr
// CHECK-NOT: nvvm.cp.async.bulk.tensor
// CHECK: arith.ori %{{.+}}, %[[DESCA]] : i64
// CHECK: arith.ori %{{.+}}, %[[DESCB]] : i64
// CHECK: %[[ROUND:.+]] = arith.divui %[[K]], %c2 : index
// CHECK: %[[PAR:.+]] = arith.andi %[[ROUND]], %c1 : index
// CHECK: %[[PARITY:.+]] = arith.index_cast %[[PAR]] : index to i32
// CHECK: nvvm.mbarrier.try_wait.parity %{{.+}}, %[[PARITY]], %c10000000_i32 : !llvm.ptr<3>, i32, i32
// CHECK-NEXT: nvvm.wgmma.fence.aligned
// CHECK-NEXT: llvm.inline_asm has_side_effects {{.+}}setp.ne.b32 p, $32, 0;\0Awgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16{{.+}} %[[SCALED]],
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK-NEXT: gpu.barrier
// CHECK: scf.if
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: vector.store
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: gpu.return

// Without wgmma (sm_90: mma.sync) nothing changes: cp.async, no tensor map.
// SM90: gpu.func @mm(%{{.+}}: memref<128x256xbf16>, %{{.+}}: memref<256x64xbf16>, %{{.+}}: memref<128x64xf32>)
// SM90-NOT: tensor_map
// SM90-NOT: mbarrier
// SM90: nvgpu.device_async_copy
// SM90-NOT: cp.async.bulk

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
