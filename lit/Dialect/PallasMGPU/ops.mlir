// RUN: pallasc-opt %s -split-input-file | pallasc-opt -split-input-file | FileCheck %s

// Tests that a kernel with its mesh, the warpgroup axes and the register hint
// round-trip.
// CHECK-LABEL: pallas_mgpu.kernel @mesh
// CHECK-SAME: (%{{.*}}: memref<256x256xf16>, %{{.*}}: memref<256x256xf16>)
// CHECK-SAME: cluster = array<i64: 1>, cluster_names = ["cluster"], grid = array<i64: 2>, grid_names = ["cluster_grid"], num_outputs = 1 : i64, num_threads = 3 : i64, thread_name = "wg"
// CHECK: %[[WG:.+]] = pallas_mgpu.axis_index "wg" : i32
// CHECK: pallas_mgpu.axis_index "cluster_grid" : i32
// CHECK: pallas_mgpu.set_max_registers "decrease" 40
pallas_mgpu.kernel @mesh(%x: memref<256x256xf16>, %o: memref<256x256xf16>)
    attributes {grid = array<i64: 2>, grid_names = ["cluster_grid"],
                cluster = array<i64: 1>, cluster_names = ["cluster"],
                num_threads = 3, thread_name = "wg", num_outputs = 1} {
  %wg = pallas_mgpu.axis_index "wg" : i32
  %b = pallas_mgpu.axis_index "cluster_grid" : i32
  pallas_mgpu.set_max_registers "decrease" 40
}

// -----

// Tests shared memory with transforms, barriers, a TMA load that completes on
// a barrier, wgmma into an accumulator, and a TMA store with its completion.
// CHECK-LABEL: pallas_mgpu.kernel @tile
// CHECK: %[[A:.+]] = pallas_mgpu.alloc_smem : memref<2x128x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
// CHECK: %[[BAR:.+]] = pallas_mgpu.alloc_barriers : !pallas_mgpu.barrier<2, arrivals = 1>
// CHECK: %[[ACC:.+]] = pallas_mgpu.alloc_acc : memref<128x64xf32, #pallas_mgpu.acc>
// CHECK: pallas_mgpu.copy_gmem_to_smem %{{.*}}, %{{.*}}, %[[BAR]][%{{.*}}] : memref<128x64xf16, strided<[256, 1], offset: ?>>, memref<128x64xf16, strided<[64, 1], offset: ?>, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, !pallas_mgpu.barrier<2, arrivals = 1>
// CHECK: pallas_mgpu.barrier_wait %[[BAR]][%{{.*}}]
// CHECK: pallas_mgpu.wgmma %[[ACC]], %{{.*}}, %{{.*}} : memref<128x64xf32, #pallas_mgpu.acc>
// CHECK: pallas_mgpu.wgmma_wait 0
// CHECK: pallas_mgpu.barrier_arrive %[[BAR]][%{{.*}}]
// CHECK: pallas_mgpu.commit_group
// CHECK: %[[V:.+]] = pallas_mgpu.acc_read %[[ACC]] : memref<128x64xf32, #pallas_mgpu.acc> -> tensor<128x64xf32>
// CHECK: pallas_mgpu.layout_cast %{{.*}} : tensor<128x64xf32> to #pallas_mgpu.layout<"wgmma">
// CHECK: pallas_mgpu.store %{{.*}}, %{{.*}} : tensor<128x64xf16>
// CHECK: pallas_mgpu.load %{{.*}} : memref<128x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>> -> tensor<128x64xf16>
// CHECK: pallas_mgpu.commit_smem
// CHECK: pallas_mgpu.copy_smem_to_gmem %{{.*}}, %{{.*}} :
// CHECK: pallas_mgpu.wait_smem_to_gmem 0 {read_only}
pallas_mgpu.kernel @tile(%x: memref<256x256xf16>, %w: memref<64x64xf16>,
                         %o: memref<256x64xf16>)
    attributes {grid = array<i64: 2>, grid_names = ["g"], cluster = array<i64: 1>,
                cluster_names = ["c"], num_threads = 1, thread_name = "wg",
                num_outputs = 1} {
  %c0 = arith.constant 0 : index
  %g = pallas_mgpu.axis_index "g" : i32
  %gi = arith.index_cast %g : i32 to index
  %row = arith.muli %gi, %c0 : index
  %a = pallas_mgpu.alloc_smem : memref<2x128x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %b = pallas_mgpu.alloc_smem : memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %out = pallas_mgpu.alloc_smem : memref<128x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %bar = pallas_mgpu.alloc_barriers : !pallas_mgpu.barrier<2, arrivals = 1>
  %acc = pallas_mgpu.alloc_acc : memref<128x64xf32, #pallas_mgpu.acc>
  %src = memref.subview %x[%row, %c0] [128, 64] [1, 1] : memref<256x256xf16> to memref<128x64xf16, strided<[256, 1], offset: ?>>
  %slot = memref.subview %a[%c0, 0, 0] [1, 128, 64] [1, 1, 1] : memref<2x128x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>> to memref<128x64xf16, strided<[64, 1], offset: ?>, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  pallas_mgpu.copy_gmem_to_smem %src, %slot, %bar[%c0] : memref<128x64xf16, strided<[256, 1], offset: ?>>, memref<128x64xf16, strided<[64, 1], offset: ?>, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, !pallas_mgpu.barrier<2, arrivals = 1>
  pallas_mgpu.barrier_wait %bar[%c0] : !pallas_mgpu.barrier<2, arrivals = 1>
  pallas_mgpu.wgmma %acc, %slot, %b : memref<128x64xf32, #pallas_mgpu.acc>, memref<128x64xf16, strided<[64, 1], offset: ?>, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  pallas_mgpu.wgmma_wait 0
  pallas_mgpu.barrier_arrive %bar[%c0] : !pallas_mgpu.barrier<2, arrivals = 1>
  pallas_mgpu.commit_group
  %v = pallas_mgpu.acc_read %acc : memref<128x64xf32, #pallas_mgpu.acc> -> tensor<128x64xf32>
  %l = pallas_mgpu.layout_cast %v : tensor<128x64xf32> to #pallas_mgpu.layout<"wgmma">
  %h = arith.truncf %l : tensor<128x64xf32> to tensor<128x64xf16>
  pallas_mgpu.store %h, %out : tensor<128x64xf16>, memref<128x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %back = pallas_mgpu.load %out : memref<128x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>> -> tensor<128x64xf16>
  pallas_mgpu.commit_smem
  %dst = memref.subview %o[%row, 0] [128, 64] [1, 1] : memref<256x64xf16> to memref<128x64xf16, strided<[64, 1], offset: ?>>
  pallas_mgpu.copy_smem_to_gmem %out, %dst : memref<128x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, memref<128x64xf16, strided<[64, 1], offset: ?>>
  pallas_mgpu.wait_smem_to_gmem 0 {read_only}
}

// -----

// Tests a reduced register layout and unswizzled shared memory.
// CHECK-LABEL: pallas_mgpu.kernel @rows
// CHECK: pallas_mgpu.alloc_smem : memref<64xf32, #pallas_mgpu.smem>
// CHECK: pallas_mgpu.layout_cast %{{.*}} : tensor<64xf32> to #pallas_mgpu.layout<"wgmma", reduced = [1]>
pallas_mgpu.kernel @rows(%x: memref<64xf32>)
    attributes {grid = array<i64: 1>, grid_names = [], cluster = array<i64: 1>,
                cluster_names = [], num_threads = 1, num_outputs = 0} {
  %s = pallas_mgpu.alloc_smem : memref<64xf32, #pallas_mgpu.smem>
  %v = pallas_mgpu.load %s : memref<64xf32, #pallas_mgpu.smem> -> tensor<64xf32>
  %r = pallas_mgpu.layout_cast %v : tensor<64xf32> to #pallas_mgpu.layout<"wgmma", reduced = [1]>
}

// -----

// Tests an accumulator initialized from registers, a wgmma whose left operand
// is in registers and whose right operand is a transposed view of shared
// memory.
// CHECK-LABEL: pallas_mgpu.kernel @pv
// CHECK: %[[ACC:.+]] = pallas_mgpu.alloc_acc init(%{{.*}} : tensor<64x64xf32>) : memref<64x64xf32, #pallas_mgpu.acc>
// CHECK: %[[T:.+]] = memref.transpose %{{.*}} (d0, d1) -> (d1, d0) : memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>> to memref<64x64xf16, strided<[1, 64]>, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
// CHECK: pallas_mgpu.wgmma %[[ACC]], %{{.*}}, %[[T]] : memref<64x64xf32, #pallas_mgpu.acc>, tensor<64x64xf16>, memref<64x64xf16, strided<[1, 64]>, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
pallas_mgpu.kernel @pv(%x: memref<64x64xf16>)
    attributes {grid = array<i64: 1>, grid_names = [], cluster = array<i64: 1>,
                cluster_names = [], num_threads = 1, num_outputs = 0} {
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %p = arith.constant dense<1.0> : tensor<64x64xf16>
  %acc = pallas_mgpu.alloc_acc init(%zero : tensor<64x64xf32>) : memref<64x64xf32, #pallas_mgpu.acc>
  %k = pallas_mgpu.alloc_smem : memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %kt = memref.transpose %k (d0, d1) -> (d1, d0) : memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>> to memref<64x64xf16, strided<[1, 64]>, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  pallas_mgpu.wgmma %acc, %p, %kt : memref<64x64xf32, #pallas_mgpu.acc>, tensor<64x64xf16>, memref<64x64xf16, strided<[1, 64]>, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
}

// -----

// Tests a cluster barrier (plgpu.ClusterBarrier): the barriers' collective
// axis round-trips.
// CHECK-LABEL: pallas_mgpu.kernel @cluster_bar
// CHECK: %[[CB:.+]] = pallas_mgpu.alloc_barriers {collective_axes = ["c"]} : !pallas_mgpu.barrier<1, arrivals = 1>
// CHECK: pallas_mgpu.barrier_arrive %[[CB]][%{{.*}}] : !pallas_mgpu.barrier<1, arrivals = 1>
// CHECK: pallas_mgpu.barrier_wait %[[CB]][%{{.*}}] : !pallas_mgpu.barrier<1, arrivals = 1>
pallas_mgpu.kernel @cluster_bar(%x: memref<8xf32>)
    attributes {grid = array<i64: 1>, grid_names = ["g"], cluster = array<i64: 2>,
                cluster_names = ["c"], num_threads = 1, num_outputs = 0} {
  %c0 = arith.constant 0 : index
  %cb = pallas_mgpu.alloc_barriers {collective_axes = ["c"]} : !pallas_mgpu.barrier<1, arrivals = 1>
  pallas_mgpu.barrier_arrive %cb[%c0] : !pallas_mgpu.barrier<1, arrivals = 1>
  pallas_mgpu.barrier_wait %cb[%c0] : !pallas_mgpu.barrier<1, arrivals = 1>
}
