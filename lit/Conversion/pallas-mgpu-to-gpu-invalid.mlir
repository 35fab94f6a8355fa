// RUN: pallasc-opt %s -split-input-file -pallas-mgpu-to-gpu -verify-diagnostics
// The pass: passes/Conversion/PallasMGPUToGPU/PallasMGPUToGPU.cpp.

// What the sm_90a lowering of Mosaic GPU kernels does not build yet is a
// located error naming it.

// expected-error @+1 {{a cluster of 16 blocks is not lowered; at most 8 (the portable cluster size)}}
pallas_mgpu.kernel @cluster(%x: memref<256x64xf16>, %o: memref<256x64xf16>)
    attributes {grid = array<i64: 2>, grid_names = ["g"], cluster = array<i64: 16>,
                cluster_names = ["c"], num_threads = 1, thread_name = "wg",
                num_outputs = 1} {
}

// -----

pallas_mgpu.kernel @unswizzled(%x: memref<256x64xf16>, %o: memref<256x64xf16>)
    attributes {grid = array<i64: 2>, grid_names = ["g"], cluster = array<i64: 1>,
                cluster_names = ["c"], num_threads = 1, thread_name = "wg",
                num_outputs = 1} {
  // expected-error @+1 {{shared memory 'memref<128x64xf16, #pallas_mgpu.smem>' is not lowered yet: the sm_90a lowering lays out 2-byte elements with tiling [8, 64] and a 128-byte swizzle}}
  %s = pallas_mgpu.alloc_smem : memref<128x64xf16, #pallas_mgpu.smem>
}

// -----

pallas_mgpu.kernel @scoped(%x: memref<256x64xf16>, %o: memref<256x64xf16>)
    attributes {grid = array<i64: 2>, grid_names = ["g"], cluster = array<i64: 1>,
                cluster_names = ["c"], num_threads = 1, thread_name = "wg",
                num_outputs = 1} {
  %t = arith.constant true
  scf.if %t {
    // expected-error @+1 {{'pallas_mgpu.alloc_smem' inside a loop or branch is not lowered yet; allocate at the kernel's top level}}
    %s = pallas_mgpu.alloc_smem : memref<128x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  }
}

// -----

pallas_mgpu.kernel @transposed_a(%x: memref<64x64xf16>, %o: memref<64x64xf16>)
    attributes {grid = array<i64: 1>, grid_names = ["g"], cluster = array<i64: 1>,
                cluster_names = ["c"], num_threads = 1, thread_name = "wg",
                num_outputs = 1} {
  %s = pallas_mgpu.alloc_smem : memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %t = memref.transpose %s (d0, d1) -> (d1, d0) : memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>> to memref<64x64xf16, strided<[1, 64]>, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %acc = pallas_mgpu.alloc_acc : memref<64x64xf32, #pallas_mgpu.acc>
  // expected-error @+1 {{wgmma with a transposed `a` view is not lowered yet}}
  pallas_mgpu.wgmma %acc, %t, %s : memref<64x64xf32, #pallas_mgpu.acc>, memref<64x64xf16, strided<[1, 64]>, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  pallas_mgpu.wgmma_wait 0
}

// -----

pallas_mgpu.kernel @column_reduction(%x: memref<64x64xf16>, %o: memref<64x64xf16>)
    attributes {grid = array<i64: 1>, grid_names = ["g"], cluster = array<i64: 1>,
                cluster_names = ["c"], num_threads = 1, thread_name = "wg",
                num_outputs = 1} {
  %acc = pallas_mgpu.alloc_acc : memref<64x64xf32, #pallas_mgpu.acc>
  %v = pallas_mgpu.acc_read %acc : memref<64x64xf32, #pallas_mgpu.acc> -> tensor<64x64xf32>
  // expected-error @+1 {{a reduction is lowered only as the sum or max of f32 rows of the wgmma layout}}
  %r = pallas.reduce max %v dims [0] : tensor<64x64xf32> -> tensor<64xf32>
}

// -----

pallas_mgpu.kernel @carried_without_layout(%x: memref<64x64xf16>, %o: memref<64x64xf16>)
    attributes {grid = array<i64: 1>, grid_names = ["g"], cluster = array<i64: 1>,
                cluster_names = ["c"], num_threads = 1, thread_name = "wg",
                num_outputs = 1} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant dense<0.0> : tensor<64xf32>
  // expected-error @+1 {{a loop-carried register value must have a register layout before the loop (a layout_cast)}}
  %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%a = %z) -> (tensor<64xf32>) {
    scf.yield %a : tensor<64xf32>
  }
}

// -----

pallas_mgpu.kernel @multicast_rows(%x: memref<256x64xf16>, %o: memref<256x64xf16>)
    attributes {grid = array<i64: 2>, grid_names = ["g"], cluster = array<i64: 4>,
                cluster_names = ["c"], num_threads = 1, thread_name = "wg",
                num_outputs = 1} {
  %c0 = arith.constant 0 : index
  %s = pallas_mgpu.alloc_smem : memref<16x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %bar = pallas_mgpu.alloc_barriers : !pallas_mgpu.barrier<1, arrivals = 1>
  %src = memref.subview %x[0, 0] [16, 64] [1, 1] : memref<256x64xf16> to memref<16x64xf16, strided<[64, 1]>>
  // expected-error @+1 {{a TMA multicast of 16 rows over 4 blocks is not lowered: each block's slice must be a multiple of 8 rows (the 128-byte swizzle's period)}}
  pallas_mgpu.copy_gmem_to_smem %src, %s, %bar[%c0] {collective_axes = ["c"]} : memref<16x64xf16, strided<[64, 1]>>, memref<16x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, !pallas_mgpu.barrier<1, arrivals = 1>
}

// -----

pallas_mgpu.kernel @multicast_axes(%x: memref<256x64xf16>, %o: memref<256x64xf16>)
    attributes {grid = array<i64: 1>, grid_names = ["g"], cluster = array<i64: 2, 2>,
                cluster_names = ["c", "d"], num_threads = 1, thread_name = "wg",
                num_outputs = 1} {
  %c0 = arith.constant 0 : index
  %s = pallas_mgpu.alloc_smem : memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %bar = pallas_mgpu.alloc_barriers : !pallas_mgpu.barrier<1, arrivals = 1>
  %src = memref.subview %x[0, 0] [64, 64] [1, 1] : memref<256x64xf16> to memref<64x64xf16, strided<[64, 1]>>
  // expected-error @+1 {{a TMA multicast over several cluster axes of more than one block is not lowered; multicast over one}}
  pallas_mgpu.copy_gmem_to_smem %src, %s, %bar[%c0] {collective_axes = ["c", "d"]} : memref<64x64xf16, strided<[64, 1]>>, memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, !pallas_mgpu.barrier<1, arrivals = 1>
}
