// RUN: pallasc-opt %s -split-input-file -pallas-mgpu-to-gpu | FileCheck %s
// The pass: passes/Conversion/PallasMGPUToGPU/PallasMGPUToGPU.cpp.

// Shared memory: each buffer a 1024-byte aligned slot of the dynamic shared
// memory (its base aligned at run time); a TMA copy of a 128x64 f16 tile:
// every thread expects its 128th of the 16384 bytes on the mbarrier, thread 0
// of the warpgroup issues one box per 64-column panel through a tensor map
// passed as a pointer; the wait on the thread's phase bit, then flipped.
pallas_mgpu.kernel @tma(%x: memref<256x128xf16>, %o: memref<256x128xf16>)
    attributes {grid = array<i64: 2>, grid_names = ["g"], cluster = array<i64: 1>,
                cluster_names = ["c"], num_threads = 1, thread_name = "wg",
                num_outputs = 1} {
  %c0 = arith.constant 0 : index
  %g = pallas_mgpu.axis_index "g" : i32
  %s0 = pallas_mgpu.alloc_smem : memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %s = pallas_mgpu.alloc_smem : memref<128x128xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %bar = pallas_mgpu.alloc_barriers : !pallas_mgpu.barrier<1, arrivals = 1>
  %row = arith.index_cast %g : i32 to index
  %src = memref.subview %x[%row, 0] [128, 128] [1, 1] : memref<256x128xf16> to memref<128x128xf16, strided<[128, 1], offset: ?>>
  pallas_mgpu.copy_gmem_to_smem %src, %s, %bar[%c0] : memref<128x128xf16, strided<[128, 1], offset: ?>>, memref<128x128xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, !pallas_mgpu.barrier<1, arrivals = 1>
  pallas_mgpu.barrier_wait %bar[%c0] : !pallas_mgpu.barrier<1, arrivals = 1>
}

// CHECK-LABEL: gpu.module @tma_kernels
// CHECK: gpu.func @tma(%{{.*}}: memref<256x128xf16>, %{{.*}}: memref<256x128xf16>, %[[MAP:.*]]: !llvm.ptr) kernel
// CHECK-SAME: pallas.gpu.launch = #pallas.gpu_launch<entry = "tma", grid = [2, 1, 1], grid_axes = {{\[\[0\], \[\], \[\]\]}}, block = [128, 1, 1], num_warps = 4, warp_size = 32, sequential_axes = [], vmapped_axes = [], dynamic_shared_memory_bytes = 41992, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, outputs[0]>, #pallas.gpu_param<tensor_map, inputs[0], dtype = f16, global_shape = [256, 128], box_shape = [128, 64], swizzle = "128B", interleave = "none", l2_promotion = "128B", oob_fill = "zero">]>
// CHECK: %[[DYN:.*]] = gpu.dynamic_shared_memory
// CHECK: %[[PTR:.*]] = memref.extract_aligned_pointer_as_index %[[DYN]]
// CHECK: arith.constant 1023 : i32
// CHECK: %[[BASE:.*]] = arith.andi %{{.*}}, %c-1024_i32 : i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c128_i32, predicate = %{{.*}} : !llvm.ptr<3>, i32, i1
// CHECK: nvvm.fence.mbarrier.init
// CHECK-NEXT: nvvm.barrier
// CHECK: gpu.block_id x
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c256_i32 : !llvm.ptr<3>, i32
// CHECK: scf.if
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[MAP]], %{{.*}}, box[%{{.*}}, %{{.*}}] : !llvm.ptr<7>, !llvm.ptr
// CHECK: arith.constant 16384 : i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[MAP]], %{{.*}}, box[%{{.*}}, %{{.*}}] : !llvm.ptr<7>, !llvm.ptr
// CHECK: }
// CHECK: %[[BITS:.*]] = memref.load %[[PHASES:.*]][] : memref<i32>
// CHECK: nvvm.mbarrier.try_wait.parity %{{.*}}, %{{.*}}, %c10000000_i32 : !llvm.ptr<3>, i32, i32
// CHECK: %[[FLIP:.*]] = arith.xori %[[BITS]], %{{.*}} : i32
// CHECK: memref.store %[[FLIP]], %[[PHASES]][] : memref<i32>
// CHECK: gpu.return

// -----

// Barriers: thread 0 initializes each mbarrier of an allocation with
// arrivals x 128 (every thread of a warpgroup arrives), then the init fence
// and a block barrier; an arrive is mbarrier.arrive; the thread axis is the
// warpgroup index (tid.x / 128), setmaxnreg from the register hint.
pallas_mgpu.kernel @bars(%x: memref<256x128xf16>, %o: memref<256x128xf16>)
    attributes {grid = array<i64: 1>, grid_names = ["g"], cluster = array<i64: 1>,
                cluster_names = ["c"], num_threads = 2, thread_name = "wg",
                num_outputs = 1} {
  %wg = pallas_mgpu.axis_index "wg" : i32
  %bar = pallas_mgpu.alloc_barriers : !pallas_mgpu.barrier<2, arrivals = 2>
  %i = arith.index_cast %wg : i32 to index
  pallas_mgpu.set_max_registers "decrease" 40
  pallas_mgpu.barrier_arrive %bar[%i] : !pallas_mgpu.barrier<2, arrivals = 2>
  pallas_mgpu.barrier_wait %bar[%i] : !pallas_mgpu.barrier<2, arrivals = 2>
}

// CHECK-LABEL: gpu.module @bars_kernels
// CHECK: block = [256, 1, 1], num_warps = 8
// CHECK: %[[TID:.*]] = arith.index_cast %thread_id_x : index to i32
// CHECK: %[[WG:.*]] = arith.shrui %[[TID]], %c7_i32 : i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c256_i32, predicate
// CHECK: nvvm.mbarrier.init %{{.*}}, %c256_i32{{.*}}, predicate
// CHECK: arith.index_cast %[[WG]] : i32 to index
// CHECK: nvvm.setmaxregister  decrease 40
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// CHECK: nvvm.mbarrier.try_wait.parity

// -----

// wgmma: the fence, one wgmma.mma_async m64n128k16 per 64 rows of the
// accumulator and 16 of k (A K-major, B M/N-major, 128-byte swizzle
// descriptors), the commit; wgmma_wait is wait_group; the accumulator is
// read in the wgmma layout, converted, stored to shared memory (swizzled, two
// elements per store) and copied out by a TMA store through the output's
// tensor map (a bulk async group).
pallas_mgpu.kernel @mma(%x: memref<128x64xf16>, %y: memref<64x128xf16>, %o: memref<128x128xf16>)
    attributes {grid = array<i64: 1>, grid_names = ["g"], cluster = array<i64: 1>,
                cluster_names = ["c"], num_threads = 1, thread_name = "wg",
                num_outputs = 1} {
  %c0 = arith.constant 0 : index
  %a = pallas_mgpu.alloc_smem : memref<128x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %b = pallas_mgpu.alloc_smem : memref<64x128xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %out = pallas_mgpu.alloc_smem : memref<128x128xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %bar = pallas_mgpu.alloc_barriers : !pallas_mgpu.barrier<1, arrivals = 2>
  pallas_mgpu.copy_gmem_to_smem %x, %a, %bar[%c0] : memref<128x64xf16>, memref<128x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, !pallas_mgpu.barrier<1, arrivals = 2>
  pallas_mgpu.copy_gmem_to_smem %y, %b, %bar[%c0] : memref<64x128xf16>, memref<64x128xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, !pallas_mgpu.barrier<1, arrivals = 2>
  pallas_mgpu.barrier_wait %bar[%c0] : !pallas_mgpu.barrier<1, arrivals = 2>
  %acc = pallas_mgpu.alloc_acc : memref<128x128xf32, #pallas_mgpu.acc>
  pallas_mgpu.wgmma %acc, %a, %b : memref<128x128xf32, #pallas_mgpu.acc>, memref<128x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, memref<64x128xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  pallas_mgpu.wgmma_wait 0
  %v = pallas_mgpu.acc_read %acc : memref<128x128xf32, #pallas_mgpu.acc> -> tensor<128x128xf32>
  %h = arith.truncf %v : tensor<128x128xf32> to tensor<128x128xf16>
  pallas_mgpu.store %h, %out : tensor<128x128xf16>, memref<128x128xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  pallas_mgpu.commit_smem
  pallas_mgpu.copy_smem_to_gmem %out, %o : memref<128x128xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, memref<128x128xf16>
  pallas_mgpu.wait_smem_to_gmem 0 {read_only}
}

// CHECK-LABEL: gpu.module @mma_kernels
// CHECK: gpu.func @mma(%{{.*}}: memref<128x64xf16>, %{{.*}}: memref<64x128xf16>, %{{.*}}: memref<128x128xf16>, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[OUTMAP:.*]]: !llvm.ptr)
// CHECK-SAME: tensor_map, inputs[0], dtype = f16, global_shape = [128, 64], box_shape = [128, 64]
// CHECK-SAME: tensor_map, inputs[1], dtype = f16, global_shape = [64, 128], box_shape = [64, 64]
// CHECK-SAME: tensor_map, outputs[0], dtype = f16, global_shape = [128, 128], box_shape = [128, 64]
// CHECK: %[[ACC:.*]] = memref.alloca() : memref<128xf32>
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{.*}}p, 1, 1, 0, 1;
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: memref.load %[[ACC]]
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: %[[PAIR:.*]] = vector.from_elements %{{.*}}, %{{.*}} : vector<2xf16>
// CHECK: llvm.store %[[PAIR]], %{{.*}} {alignment = 4 : i64} : vector<2xf16>, !llvm.ptr<3>
// commit_smem: the fence to the async proxy, then the warpgroup's barrier.
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: arith.constant 1 : i32
// CHECK-NEXT: arith.addi
// CHECK-NEXT: arith.constant 128 : i32
// CHECK-NEXT: nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
// copy_smem_to_gmem: thread 0 of the warpgroup stores the two 64-column
// panels through the output's tensor map, then the bulk group is closed.
// CHECK: scf.if
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta %[[OUTMAP]], %{{.*}}, box[%{{.*}}, %{{.*}}] : !llvm.ptr, <3>
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta %[[OUTMAP]], %{{.*}}, box[%{{.*}}, %{{.*}}] : !llvm.ptr, <3>
// CHECK-NOT: nvvm.cp.async.bulk.tensor
// CHECK: nvvm.cp.async.bulk.commit.group
// wait_smem_to_gmem 0 {read_only}: the group's reads of shared memory.
// CHECK-NEXT: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
// CHECK-NEXT: gpu.return

// -----

// A cluster of 2 x 2 blocks: its shape compiled into the kernel
// (nvvm.cluster_dim: `.reqnctapercluster`), a launch of grid x cluster
// blocks; a grid axis indexes clusters (%clusterid), a cluster axis the
// block within its cluster (%cluster_ctaid).
pallas_mgpu.kernel @clustered(%x: memref<256x128xf16>, %o: memref<256x128xf16>)
    attributes {grid = array<i64: 3, 5>, grid_names = ["i", "j"], cluster = array<i64: 2, 2>,
                cluster_names = ["cx", "cy"], num_threads = 1, thread_name = "wg",
                num_outputs = 1} {
  %i = pallas_mgpu.axis_index "i" : i32
  %j = pallas_mgpu.axis_index "j" : i32
  %cx = pallas_mgpu.axis_index "cx" : i32
  %cy = pallas_mgpu.axis_index "cy" : i32
  %a = arith.addi %i, %j : i32
  %b = arith.addi %cx, %cy : i32
  %s = arith.addi %a, %b : i32
}

// CHECK-LABEL: gpu.module @clustered_kernels
// CHECK: gpu.func @clustered({{.*}}) kernel
// CHECK-SAME: nvvm.cluster_dim = array<i32: 2, 2, 1>
// CHECK-SAME: pallas.gpu.launch = #pallas.gpu_launch<entry = "clustered", grid = [6, 10, 1], grid_axes = {{\[\[0\], \[1\], \[\]\]}}, block = [128, 1, 1]
// CHECK-DAG: %[[I:.*]] = nvvm.read.ptx.sreg.clusterid.x : i32
// CHECK-DAG: %[[J:.*]] = nvvm.read.ptx.sreg.clusterid.y : i32
// CHECK-DAG: %[[CX:.*]] = nvvm.read.ptx.sreg.cluster.ctaid.x : i32
// CHECK-DAG: %[[CY:.*]] = nvvm.read.ptx.sreg.cluster.ctaid.y : i32
// CHECK-DAG: arith.addi %[[I]], %[[J]] : i32
// CHECK-DAG: arith.addi %[[CX]], %[[CY]] : i32
// CHECK-NOT: gpu.block_id

// -----

// A cluster barrier (collective_axes over the cluster axis of 2 blocks):
// its mbarrier counts 128 arrivals per warpgroup from each of the 2 blocks;
// the cluster synchronizes after the init and before the return
// (barrier.cluster); an arrive maps the barrier into each block of the
// axis (rank = %cluster_ctaid with the axis's coordinate replaced) and
// arrives there; a wait is the block's own.
pallas_mgpu.kernel @cbar(%x: memref<8xf32>)
    attributes {grid = array<i64: 1>, grid_names = ["g"], cluster = array<i64: 2, 2>,
                cluster_names = ["a", "c"], num_threads = 1, thread_name = "wg",
                num_outputs = 0} {
  %c0 = arith.constant 0 : index
  %cb = pallas_mgpu.alloc_barriers {collective_axes = ["c"]} : !pallas_mgpu.barrier<1, arrivals = 1>
  pallas_mgpu.barrier_arrive %cb[%c0] : !pallas_mgpu.barrier<1, arrivals = 1>
  pallas_mgpu.barrier_wait %cb[%c0] : !pallas_mgpu.barrier<1, arrivals = 1>
}

// CHECK-LABEL: gpu.func @cbar
// CHECK-SAME: nvvm.cluster_dim = array<i32: 2, 2, 1>
// CHECK: nvvm.mbarrier.init %{{.*}}, %c256_i32, predicate = %{{.*}} : !llvm.ptr<3>, i32, i1
// CHECK: nvvm.fence.mbarrier.init
// CHECK-NEXT: nvvm.barrier
// CHECK-NEXT: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK: %[[LOCAL:.*]] = llvm.inttoptr %{{.*}} : i32 to !llvm.ptr<3>
// CHECK: %[[X:.*]] = nvvm.read.ptx.sreg.cluster.ctaid.x : i32
// CHECK: %[[XR:.*]] = arith.muli %[[X]], %c1_i32{{.*}} : i32
// CHECK: %[[R0:.*]] = arith.addi %{{.*}}, %[[XR]] : i32
// CHECK: %[[Y0:.*]] = arith.muli %c0_i32{{.*}}, %c2_i32{{.*}} : i32
// CHECK: %[[RANK0:.*]] = arith.addi %[[R0]], %[[Y0]] : i32
// CHECK: %[[M0:.*]] = nvvm.mapa %[[LOCAL]], %[[RANK0]] : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK: nvvm.mbarrier.arrive %[[M0]] {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>
// CHECK: nvvm.read.ptx.sreg.cluster.ctaid.x : i32
// CHECK: %[[Y1:.*]] = arith.muli %c1_i32{{.*}}, %c2_i32{{.*}} : i32
// CHECK: %[[RANK1:.*]] = arith.addi %{{.*}}, %[[Y1]] : i32
// CHECK: %[[M1:.*]] = nvvm.mapa %[[LOCAL]], %[[RANK1]] : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK: nvvm.mbarrier.arrive %[[M1]] {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>
// CHECK: nvvm.mbarrier.try_wait.parity %{{.*}}, %{{.*}}, %c10000000_i32 : !llvm.ptr<3>, i32, i32
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK-NEXT: gpu.return
