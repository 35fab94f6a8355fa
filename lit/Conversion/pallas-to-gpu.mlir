// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu=chip=sm_80 -canonicalize -cse | FileCheck %s
// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu=chip=sm_75 -canonicalize -cse | FileCheck %s --check-prefix=SIMT
// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu=chip=sm_90a -canonicalize -cse | FileCheck %s --check-prefix=WG

// pallas-to-gpu is one pass whose source is split by concern
// (passes/Conversion/PallasToGPU, docs/cuda.md's file map): the driver
// (Distributor.cpp), LayoutAssignment.cpp, the op-family emitters
// (EmitElementwise.cpp, EmitReduce.cpp, EmitControlFlow.cpp,
// EmitTensorOps.cpp, Memory.cpp) and the dots (Dot.cpp, DotLayout.cpp,
// DotStaging.cpp, Wgmma.cpp); this file and the other pallas-to-gpu*.mlir
// files test them through the pass, its error cases in
// pallas-to-gpu-invalid.mlir.

// Tests that an elementwise kernel becomes one kernel gpu.func over the
// whole arrays with 16-byte vector accesses, 128 threads (4 warps), and the
// launch record: one CUDA block per grid point, x and y from grid axes 0, 1.
// CHECK-LABEL: gpu.module @add_kernels
// CHECK: gpu.func @add(%[[X:.+]]: memref<32x256xf32>, %[[Y:.+]]: memref<32x256xf32>, %[[O:.+]]: memref<32x256xf32>) kernel
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// CHECK-SAME: pallas.gpu.launch = {block = [128, 1, 1], dynamic_shared_memory_bytes = 0 : i64, entry = "add", grid = [4, 2, 1], grid_axes = {{\[}}[0], [1], []]
// CHECK-DAG: %[[TID:.+]] = gpu.thread_id x
// CHECK-DAG: gpu.block_id x
// CHECK-DAG: gpu.block_id y
// CHECK: %[[XF:.+]] = memref.collapse_shape %[[X]]
// CHECK: vector.load %[[XF]][%{{.+}}] {alignment = 16 : i64} : memref<8192xf32>, vector<4xf32>
// CHECK: arith.addf
// CHECK: %[[OF:.+]] = memref.collapse_shape %[[O]]
// CHECK: vector.store %{{.+}}, %[[OF]][%{{.+}}] {alignment = 16 : i64}
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
pallas.kernel @add_kernel(%x: !pallas.ref<8x128xf32>, %y: !pallas.ref<8x128xf32>,
                          %o: !pallas.ref<8x128xf32>) {
  %a = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %b = pallas.load %y[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %s = arith.addf %a, %b : tensor<8x128xf32>
  pallas.store %o[], %s : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @main(%x: tensor<32x256xf32>, %y: tensor<32x256xf32>) -> tensor<32x256xf32> {
  %o = pallas.call @add_kernel(%x, %y) {grid = array<i64: 4, 2>, name = "add",
      in_specs = [#pallas.block_spec<[8, 128], (d0, d1) -> (d0, d1)>, #pallas.block_spec<[8, 128], (d0, d1) -> (d0, d1)>],
      out_specs = [#pallas.block_spec<[8, 128], (d0, d1) -> (d0, d1)>]}
      : (tensor<32x256xf32>, tensor<32x256xf32>) -> tensor<32x256xf32>
  return %o : tensor<32x256xf32>
}

// -----

// Tests a row reduction: partials in registers, xor shuffles across the
// lanes of a warp, shared memory and a barrier across the warps. The
// barrier that would keep the slots from being written again before all
// warps read them is dropped: nothing after it touches shared memory and
// nothing before it wrote global memory.
// CHECK-LABEL: gpu.func @rowmax(
// CHECK: %[[SMEM:.+]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK: vector.load {{.+}} : memref<65536xf32>, vector<4xf32>
// CHECK: arith.maximumf
// CHECK: gpu.shuffle xor %{{.+}}, %{{.+}}, %[[W:.+]] : f32
// CHECK-COUNT-4: gpu.shuffle xor
// CHECK: %[[WS:.+]] = memref.view %[[SMEM]][%{{.+}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4x1xf32, #gpu.address_space<workgroup>>
// CHECK: memref.store %{{.+}}, %[[WS]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[WS]]
// CHECK-NOT: gpu.barrier
// CHECK: memref.store %{{.+}}, %{{.+}} : memref<64xf32>
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
pallas.kernel @rowmax_kernel(%x: !pallas.ref<1024xf32>, %o: !pallas.ref<1xf32>) {
  %v = pallas.load %x[] : !pallas.ref<1024xf32> -> tensor<1024xf32>
  %m = pallas.reduce max %v dims [0] : tensor<1024xf32> -> tensor<f32>
  %r = pallas.reshape %m : tensor<f32> -> tensor<1xf32>
  pallas.store %o[], %r : !pallas.ref<1xf32>, tensor<1xf32>
}
func.func @main(%x: tensor<64x1024xf32>) -> tensor<64x1xf32> {
  %o = pallas.call @rowmax_kernel(%x) {grid = array<i64: 64>, name = "rowmax",
      in_specs = [#pallas.block_spec<[squeezed, 1024], (d0) -> (d0, 0)>],
      out_specs = [#pallas.block_spec<[squeezed, 1], (d0) -> (d0, 0)>]}
      : (tensor<64x1024xf32>) -> tensor<64x1xf32>
  return %o : tensor<64x1xf32>
}

// -----

// Tests that a rank-4 grid folds its leading axes into CUDA x (Pallas'
// Triton rule: the first axis fastest), and that the lanes past the
// array's edge (1000 is not a multiple of 256) read NaN and are not
// written; only the first of two replicated warps stores.
// CHECK-LABEL: gpu.func @copy4(
// CHECK-SAME: grid = [6, 4, 4], grid_axes = {{\[}}[0, 1], [2], [3]]
// CHECK-DAG: %[[NAN:.+]] = arith.constant 0x7FC00000 : f32
// CHECK: %[[BX:.+]] = gpu.block_id x
// CHECK: %[[A0:.+]] = arith.remui %[[BX]], %{{.+}} : index
// CHECK: %[[Q:.+]] = arith.divui %[[BX]], %{{.+}} : index
// CHECK: %[[A1:.+]] = arith.remui %[[Q]], %{{.+}} : index
// CHECK: gpu.block_id y
// CHECK: gpu.block_id z
// CHECK: %[[IN:.+]] = arith.cmpi slt, %{{.+}}, %{{.+}} : index
// CHECK: %[[SAFE:.+]] = arith.select %[[IN]], %{{.+}}, %{{.+}} : index
// CHECK: vector.load %{{.+}}[%[[SAFE]]]
// CHECK: arith.select %[[IN]], %{{.+}}, %[[NAN]] : f32
// CHECK: %[[P:.+]] = arith.andi %[[IN]], %{{.+}} : i1
// CHECK: scf.if %[[P]] {
// CHECK-NEXT: vector.from_elements
// CHECK-NEXT: vector.store
pallas.kernel @copy4_kernel(%x: !pallas.ref<256xf32>, %o: !pallas.ref<256xf32>) {
  %v = pallas.load %x[] : !pallas.ref<256xf32> -> tensor<256xf32>
  pallas.store %o[], %v : !pallas.ref<256xf32>, tensor<256xf32>
}
func.func @main(%x: tensor<2x3x4x1000xf32>) -> tensor<2x3x4x1000xf32> {
  %o = pallas.call @copy4_kernel(%x) {grid = array<i64: 2, 3, 4, 4>, name = "copy4",
      in_specs = [#pallas.block_spec<[squeezed, squeezed, squeezed, 256], (d0, d1, d2, d3) -> (d0, d1, d2, d3)>],
      out_specs = [#pallas.block_spec<[squeezed, squeezed, squeezed, 256], (d0, d1, d2, d3) -> (d0, d1, d2, d3)>]}
      : (tensor<2x3x4x1000xf32>) -> tensor<2x3x4x1000xf32>
  return %o : tensor<2x3x4x1000xf32>
}

// -----

// Tests a dot accumulating into scratch across an "arbitrary" k axis: k
// runs as a loop inside the block; the scratch accumulator, only ever read
// and written whole in the accumulator layout, stays in registers carried by
// the loop (the `k == 0` zeroing becomes selects). The operands (whole
// blocks) are prefetched with cp.async into padded tiles, num_stages (3 by
// default) steps ahead, from one issue site: a loop over the steps
// [k == 0 ? 0 : k + 2, k + 2] (all three at the first step, then one), each
// copied into its stage (j mod 3, a view shifted by 5120 bytes a stage)
// when in range and committed as its own group either way; then
// `wait_group 2` (this step's copies landed) and a barrier; the stage
// k mod 3 is read with ldmatrix for mma.sync on sm_80; a barrier ends the
// step (its stage is refilled next); the output is written at the last k,
// through a padded shared buffer after the 15360 bytes of stages
// (Epilogue.cpp: fragment pairs in, 16-byte reads and stores out).
// sm_75 gets a SIMT loop over k.
// CHECK-LABEL: gpu.func @mm(
// CHECK-SAME: dynamic_shared_memory_bytes = 20480 : i64
// CHECK-SAME: grid = [2, 2, 1], grid_axes = {{\[}}[0], [1], []]
// CHECK-SAME: scratch_shared_memory_bytes = 0 : i64, sequential_axes = [2]
// CHECK: %[[SMEM:.+]] = gpu.dynamic_shared_memory
// CHECK-NOT: memref<32x32xf32, #gpu.address_space<workgroup>>
// CHECK: scf.for %[[K:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args({{.+}}) -> (f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK-COUNT-8: arith.select
// CHECK: %[[AHEAD:.+]] = arith.addi %[[K]], %c2 : index
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[K]], %c0 : index
// CHECK: %[[LO:.+]] = arith.select %[[FIRST]], %c0, %[[AHEAD]] : index
// CHECK: %[[HI:.+]] = arith.addi %[[K]], %c3 : index
// CHECK: scf.for %[[J:.+]] = %[[LO]] to %[[HI]] step %c1 {
// CHECK: %[[IN:.+]] = arith.cmpi slt, %[[J]], %c2 : index
// CHECK: scf.if %[[IN]] {
// CHECK: %[[STAGE:.+]] = arith.remui %[[J]], %c3 : index
// CHECK: memref.view %[[SMEM]][%{{.+}}][] : {{.+}} to memref<32x40xbf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy %{{.+}}[%{{.+}}], %{{.+}}[%{{.+}}], 8 {bypassL1} : memref<4096xbf16> to memref<1280xbf16, #gpu.address_space<workgroup>>
// CHECK: memref.view %[[SMEM]][%{{.+}}][] : {{.+}} to memref<32x40xbf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.commit.group
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.wait.group 2
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: vector.store {{.+}}#gpu.address_space<workgroup>
// CHECK: llvm.inline_asm has_side_effects "ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK: llvm.inline_asm has_side_effects "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// CHECK: nvvm.mma.sync A[{{.+}}] B[{{.+}}] C[{{.+}}] {{{.+}}multiplicandAPtxType = #nvvm.mma_type<bf16>{{.+}}shape = #nvvm.shape<m = 16, n = 8, k = 16>}
// CHECK-COUNT-3: nvvm.mma.sync
// CHECK-NOT: nvvm.cp.async.wait.group
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: memref.view %[[SMEM]][%c15360][] : {{.+}} to memref<32x40xf32, #gpu.address_space<workgroup>>
// CHECK-COUNT-4: vector.store %{{.+}}, %{{.+}}[%{{.+}}] {alignment = 8 : i64} : memref<1280xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-2: vector.load %{{.+}}[%{{.+}}] {alignment = 16 : i64} : memref<1280xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-COUNT-2: vector.store %{{.+}}, %{{.+}}[%{{.+}}] {alignment = 16 : i64} : memref<4096xf32>, vector<4xf32>
// CHECK-NEXT: gpu.barrier
// CHECK: scf.yield {{.+}} : f32, f32, f32, f32, f32, f32, f32, f32
// SIMT-LABEL: gpu.func @mm(
// SIMT-NOT: nvvm.mma.sync
// SIMT: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args
// SIMT: arith.extf %{{.+}} : bf16 to f32
// SIMT: arith.mulf
// SIMT: arith.addf
pallas.kernel @mm_kernel(%a: !pallas.ref<32x32xbf16>, %b: !pallas.ref<32x32xbf16>,
                         %o: !pallas.ref<32x32xf32>, %acc: !pallas.ref<32x32xf32, vmem>) {
  %k = pallas.program_id 2 : i32
  %nk = pallas.num_programs 2 : i32
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %first = arith.cmpi eq, %k, %c0 : i32
  scf.if %first {
    %z = arith.constant dense<0.0> : tensor<32x32xf32>
    pallas.store %acc[], %z : !pallas.ref<32x32xf32, vmem>, tensor<32x32xf32>
  }
  %x = pallas.load %a[] : !pallas.ref<32x32xbf16> -> tensor<32x32xbf16>
  %y = pallas.load %b[] : !pallas.ref<32x32xbf16> -> tensor<32x32xbf16>
  %p = pallas.load %acc[] : !pallas.ref<32x32xf32, vmem> -> tensor<32x32xf32>
  %d = pallas.dot %x, %y, %p : tensor<32x32xbf16>, tensor<32x32xbf16>, tensor<32x32xf32> -> tensor<32x32xf32>
  pallas.store %acc[], %d : !pallas.ref<32x32xf32, vmem>, tensor<32x32xf32>
  %lastk = arith.subi %nk, %c1 : i32
  %last = arith.cmpi eq, %k, %lastk : i32
  scf.if %last {
    %r = pallas.load %acc[] : !pallas.ref<32x32xf32, vmem> -> tensor<32x32xf32>
    pallas.store %o[], %r : !pallas.ref<32x32xf32>, tensor<32x32xf32>
  }
}
func.func @main(%a: tensor<64x64xbf16>, %b: tensor<64x64xbf16>) -> tensor<64x64xf32> {
  %o = pallas.call @mm_kernel(%a, %b) {grid = array<i64: 2, 2, 2>, name = "mm",
      in_specs = [#pallas.block_spec<[32, 32], (d0, d1, d2) -> (d0, d2)>, #pallas.block_spec<[32, 32], (d0, d1, d2) -> (d2, d1)>],
      out_specs = [#pallas.block_spec<[32, 32], (d0, d1, d2) -> (d0, d1)>],
      scratch = [!pallas.ref<32x32xf32, vmem>],
      compiler_params = #pallas.compiler_params<tpu = <dimension_semantics = [parallel, parallel, arbitrary]>>}
      : (tensor<64x64xbf16>, tensor<64x64xbf16>) -> tensor<64x64xf32>
  return %o : tensor<64x64xf32>
}

// -----

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
// select. sm_80 keeps mma.sync for the same kernel.
// WG-LABEL: gpu.func @mmwg(
// WG-SAME: dynamic_shared_memory_bytes = 8192 : i64
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

// -----

// Tests a dynamic grid bound (an i32 parameter), a scalar-prefetch index
// map inlined into the kernel (the row comes from the prefetched indices),
// and a vmapped axis launched after the kernel's own axes.
// CHECK-LABEL: gpu.func @gather(
// CHECK-SAME: %[[IDX:.+]]: memref<8xi32>, %[[T:.+]]: memref<4x64x128xf32>, %[[O:.+]]: memref<4x8x128xf32>, %[[N:.+]]: i32) kernel
// CHECK-SAME: grid = [-1, 4, 1], grid_axes = {{\[}}[1], [0], []]
// CHECK-SAME: {axis = 1 : i64, kind = "i32", operand = "grid_bounds[0]"}
// CHECK-SAME: vmapped_axes = [0]
// CHECK: %[[J:.+]] = gpu.block_id x
// CHECK: memref.load %[[IDX]]
// CHECK: vector.load {{.+}} : memref<32768xf32>, vector<4xf32>
pallas.kernel @gather_kernel(%idx: !pallas.ref<8xi32, smem>, %t: !pallas.ref<128xf32>, %o: !pallas.ref<128xf32>) {
  %v = pallas.load %t[] : !pallas.ref<128xf32> -> tensor<128xf32>
  pallas.store %o[], %v : !pallas.ref<128xf32>, tensor<128xf32>
}
func.func @row_map(%i: i32, %j: i32, %idx: !pallas.ref<8xi32, smem>) -> (i32, i32, i32) {
  %r = pallas.load %idx[%j] : !pallas.ref<8xi32, smem> -> i32
  %c0 = arith.constant 0 : i32
  return %i, %r, %c0 : i32, i32, i32
}
func.func @main(%n: index, %idx: tensor<8xi32>, %t: tensor<4x64x128xf32>) -> tensor<4x8x128xf32> {
  %o = pallas.call @gather_kernel[%n](%idx, %t) {grid = array<i64: 4, -1>, name = "gather",
      num_scalar_prefetch = 1 : i64, vmapped_dims = array<i64: 0>,
      in_specs = [#pallas.block_spec<[squeezed, squeezed, 128], @row_map>],
      out_specs = [#pallas.block_spec<[squeezed, squeezed, 128], (d0, d1) -> (d0, d1, 0)>]}
      : (tensor<8xi32>, tensor<4x64x128xf32>) -> tensor<4x8x128xf32>
  return %o : tensor<4x8x128xf32>
}

// -----

// Tests that an atomic is a real atomic, done once per block (thread 0),
// and only in bounds, on an `any` output aliased to its input.
// CHECK-LABEL: gpu.func @hist(
// CHECK: %[[TID:.+]] = gpu.thread_id x
// CHECK: %[[IN:.+]] = arith.cmpi slt
// CHECK: scf.if %[[IN]] {
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[TID]], %{{.+}} : index
// CHECK: scf.if %[[FIRST]] {
// CHECK: memref.atomic_rmw addi %{{.+}}, %{{.+}}[%{{.+}}] : (i32, memref<16xi32>) -> i32
pallas.kernel @hist_kernel(%x: !pallas.ref<128xi32>, %hin: !pallas.ref<16xi32, any>,
                           %h: !pallas.ref<16xi32, any>) {
  %c0 = arith.constant 0 : i32
  %v = pallas.load %x[%c0] : !pallas.ref<128xi32> -> i32
  %one = arith.constant 1 : i32
  %old = pallas.atomic_rmw add %h[%v], %one : !pallas.ref<16xi32, any>, i32
}
func.func @main(%x: tensor<1024xi32>, %h: tensor<16xi32>) -> tensor<16xi32> {
  %o = pallas.call @hist_kernel(%x, %h) {grid = array<i64: 8>, name = "hist",
      in_specs = [#pallas.block_spec<[128], (d0) -> (d0)>, #pallas.block_spec<any>],
      out_specs = [#pallas.block_spec<any>],
      input_output_aliases = array<i64: 1, 0>}
      : (tensor<1024xi32>, tensor<16xi32>) -> tensor<16xi32>
  return %o : tensor<16xi32>
}

// -----

// Tests f32 dots: at precision `high` (and the default) on tf32 tensor cores
// from sm_80 on (sm_90a too: wgmma stays f16/bf16), `mma.sync.m16n8k8.tf32`
// with every operand element rounded by cvt.rna.tf32.f32 as it is read
// (a0..a3 of each 16x8 A tile reused across the n tiles), the accumulator
// chained through the k steps; at `highest` exact f32 (the SIMT loop over k);
// before sm_80 both SIMT.
// CHECK-LABEL: gpu.func @mmtf32(
// CHECK: %[[A0:.+]] = nvvm.convert.float.to.tf32 %{{.+}} {rnd = #nvvm.fp_rnd_mode<rna>}
// CHECK-COUNT-5: nvvm.convert.float.to.tf32 %{{.+}} {rnd = #nvvm.fp_rnd_mode<rna>}
// CHECK: %[[D:.+]] = nvvm.mma.sync A[%[[A0]], %{{.+}}, %{{.+}}, %{{.+}}]  B[%{{.+}}, %{{.+}}]  C[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}]  {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>, shape = #nvvm.shape<m = 16, n = 8, k = 8>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NEXT: %[[C0:.+]] = llvm.extractvalue %[[D]][0]
// CHECK: nvvm.mma.sync A[%[[A0]],
// CHECK: nvvm.mma.sync A[{{.+}}]  B[{{.+}}]  C[%[[C0]], {{.+}}] {{.+}}shape = #nvvm.shape<m = 16, n = 8, k = 8>}
// CHECK: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args({{.+}}) -> ({{(f32, ){7}f32}})
// CHECK: arith.mulf
// CHECK-NOT: nvvm.mma.sync
// CHECK: gpu.return
// WG-LABEL: gpu.func @mmtf32(
// WG-COUNT-4: nvvm.mma.sync {{.+}}multiplicandAPtxType = #nvvm.mma_type<tf32>
// WG-NOT: wgmma
// WG: gpu.return
// SIMT-LABEL: gpu.func @mmtf32(
// SIMT-NOT: nvvm.mma.sync
// SIMT-NOT: nvvm.convert.float.to.tf32
// SIMT: gpu.return

pallas.kernel @mm_tf32(%a: !pallas.ref<32x16xf32>, %b: !pallas.ref<16x32xf32>,
                       %o: !pallas.ref<32x32xf32>, %e: !pallas.ref<32x32xf32>) {
  %x = pallas.load %a[] : !pallas.ref<32x16xf32> -> tensor<32x16xf32>
  %y = pallas.load %b[] : !pallas.ref<16x32xf32> -> tensor<16x32xf32>
  %d = pallas.dot %x, %y {precision = #pallas.precision<high>} : tensor<32x16xf32>, tensor<16x32xf32> -> tensor<32x32xf32>
  pallas.store %o[], %d : !pallas.ref<32x32xf32>, tensor<32x32xf32>
  %d2 = pallas.dot %x, %y {precision = #pallas.precision<highest>} : tensor<32x16xf32>, tensor<16x32xf32> -> tensor<32x32xf32>
  pallas.store %e[], %d2 : !pallas.ref<32x32xf32>, tensor<32x32xf32>
}
func.func @main(%a: tensor<32x16xf32>, %b: tensor<16x32xf32>) -> (tensor<32x32xf32>, tensor<32x32xf32>) {
  %o:2 = pallas.call @mm_tf32(%a, %b) {grid = array<i64: 1>, name = "mmtf32",
      in_specs = [#pallas.block_spec<[32, 16], (d0) -> (0, 0)>, #pallas.block_spec<[16, 32], (d0) -> (0, 0)>],
      out_specs = [#pallas.block_spec<[32, 32], (d0) -> (0, 0)>, #pallas.block_spec<[32, 32], (d0) -> (0, 0)>]}
      : (tensor<32x16xf32>, tensor<16x32xf32>) -> (tensor<32x32xf32>, tensor<32x32xf32>)
  return %o#0, %o#1 : tensor<32x32xf32>, tensor<32x32xf32>
}
