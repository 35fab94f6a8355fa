// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu=chip=gfx942 -canonicalize -cse | FileCheck %s
// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu=chip=gfx90a -canonicalize -cse | FileCheck %s
// RUN: not pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu=chip=gfx1030 2>&1 | FileCheck %s --check-prefix=CHIP

// The AMD (CDNA) flavour of pallas-to-gpu: 64-thread wavefronts, MFMA.
// CHIP: error: unknown GPU chip 'gfx1030'; expected one of sm_75, sm_80, {{(sm_[0-9]+a?, )*}}gfx90a, gfx942{{(, gfx[0-9a-f]+)*}}

// Tests a row reduction on wave64: 4 warps are 256 threads; the lanes of a
// wavefront combine with six xor shuffles of width 64, then the warps
// through LDS.
// CHECK-LABEL: gpu.func @rowmax(
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK-SAME: block = [256, 1, 1]
// CHECK-SAME: num_warps = 4
// CHECK-SAME: warp_size = 64
// CHECK: %[[W:.+]] = arith.constant 64 : i32
// CHECK: gpu.shuffle xor %{{.+}}, %{{.+}}, %[[W]] : f32
// CHECK-COUNT-5: gpu.shuffle xor %{{.+}}, %{{.+}}, %[[W]] : f32
// CHECK-NOT: gpu.shuffle
// CHECK: memref.view {{.+}} to memref<4x1xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
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

// Tests a bf16 dot on MFMA: the 32x32 result over 2x2 wavefronts, one
// 16x16 tile each; the operands, read from global memory for this dot only,
// are staged through LDS one 32-wide k chunk at a time (A row-major, B
// stored k-contiguous so that each fragment is one 8-byte read), two
// 16x16x16 MFMAs per chunk accumulate in registers carried by the k loop.
// CHECK-LABEL: gpu.func @mm(
// CHECK-SAME: warp_size = 64
// CHECK-SAME: sequential_axes = [2]
// CHECK-SAME: dynamic_shared_memory_bytes = 5120,
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args({{.+}}) -> (f32, f32, f32, f32)
// CHECK-DAG: %[[TA:.+]] = memref.view %{{.+}}[%{{.+}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32x40xbf16, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[TB:.+]] = memref.view %{{.+}}[%{{.+}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32x40xbf16, #gpu.address_space<workgroup>>
// CHECK: vector.load %{{.+}} {alignment = 16 : i64} : memref<8192xbf16>, vector<8xbf16>
// CHECK: gpu.barrier
// CHECK: %[[A0:.+]] = vector.load %{{.+}} {alignment = 8 : i64} : memref<1280xbf16, #gpu.address_space<workgroup>>, vector<4xbf16>
// CHECK: %[[B0:.+]] = vector.load %{{.+}} {alignment = 8 : i64} : memref<1280xbf16, #gpu.address_space<workgroup>>, vector<4xbf16>
// CHECK: %[[D0:.+]] = amdgpu.mfma 16x16x16 %[[A0]] * %[[B0]] + %{{.+}} blgp = none : vector<4xbf16>, vector<4xbf16>, vector<4xf32>
// CHECK: %[[D1:.+]] = amdgpu.mfma 16x16x16 %{{.+}} * %{{.+}} + %[[D0]]
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK: %[[D2:.+]] = amdgpu.mfma 16x16x16 %{{.+}} * %{{.+}} + %[[D1]]
// CHECK: %[[D3:.+]] = amdgpu.mfma 16x16x16 %{{.+}} * %{{.+}} + %[[D2]]
// CHECK-NOT: amdgpu.mfma
// CHECK: gpu.barrier
// CHECK: scf.if
// The epilogue (Epilogue.cpp): the accumulator to a padded LDS buffer, a
// barrier, one 16-byte read and store per lane.
// CHECK: memref.view {{.+}} to memref<32x36xf32, #gpu.address_space<workgroup>>
// CHECK-COUNT-4: memref.store %{{.+}} : memref<1152xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: vector.load %{{.+}} {alignment = 16 : i64} : memref<1152xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-NOT: memref.store
// CHECK: vector.store %{{.+}} {alignment = 16 : i64} : memref<4096xf32>, vector<4xf32>
// CHECK: scf.yield {{.+}} : f32, f32, f32, f32

pallas.kernel @mm_kernel(%a: !pallas.ref<32x64xbf16>, %b: !pallas.ref<64x32xbf16>,
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
  %x = pallas.load %a[] : !pallas.ref<32x64xbf16> -> tensor<32x64xbf16>
  %y = pallas.load %b[] : !pallas.ref<64x32xbf16> -> tensor<64x32xbf16>
  %p = pallas.load %acc[] : !pallas.ref<32x32xf32, vmem> -> tensor<32x32xf32>
  %d = pallas.dot %x, %y, %p : tensor<32x64xbf16>, tensor<64x32xbf16>, tensor<32x32xf32> -> tensor<32x32xf32>
  pallas.store %acc[], %d : !pallas.ref<32x32xf32, vmem>, tensor<32x32xf32>
  %lastk = arith.subi %nk, %c1 : i32
  %last = arith.cmpi eq, %k, %lastk : i32
  scf.if %last {
    %r = pallas.load %acc[] : !pallas.ref<32x32xf32, vmem> -> tensor<32x32xf32>
    pallas.store %o[], %r : !pallas.ref<32x32xf32>, tensor<32x32xf32>
  }
}
func.func @main(%a: tensor<64x128xbf16>, %b: tensor<128x64xbf16>) -> tensor<64x64xf32> {
  %o = pallas.call @mm_kernel(%a, %b) {grid = array<i64: 2, 2, 2>, name = "mm",
      in_specs = [#pallas.block_spec<[32, 64], (d0, d1, d2) -> (d0, d2)>, #pallas.block_spec<[64, 32], (d0, d1, d2) -> (d2, d1)>],
      out_specs = [#pallas.block_spec<[32, 32], (d0, d1, d2) -> (d0, d1)>],
      scratch = [!pallas.ref<32x32xf32, vmem>],
      compiler_params = #pallas.compiler_params<tpu = <dimension_semantics = [parallel, parallel, arbitrary]>>}
      : (tensor<64x128xbf16>, tensor<128x64xbf16>) -> tensor<64x64xf32>
  return %o : tensor<64x64xf32>
}
