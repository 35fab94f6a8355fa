// RUN: pallasc-opt %s -split-input-file -verify-diagnostics

// Tests that a barrier waited with no arrival source is an error.
pallas_mgpu.kernel @no_arrival(%x: memref<64x64xf16>)
    attributes {grid = array<i64: 1>, grid_names = ["g"], cluster = array<i64: 1>,
                cluster_names = [], num_threads = 1, num_outputs = 0} {
  %c0 = arith.constant 0 : index
  %bar = pallas_mgpu.alloc_barriers : !pallas_mgpu.barrier<1, arrivals = 1>
  // expected-error @+1 {{waits on barriers that nothing arrives on}}
  pallas_mgpu.barrier_wait %bar[%c0] : !pallas_mgpu.barrier<1, arrivals = 1>
}

// -----

// Tests that a wgmma operand in global memory is refused.
pallas_mgpu.kernel @wgmma_gmem(%x: memref<64x64xf16>)
    attributes {grid = array<i64: 1>, grid_names = [], cluster = array<i64: 1>,
                cluster_names = [], num_threads = 1, num_outputs = 0} {
  %acc = pallas_mgpu.alloc_acc : memref<64x64xf32, #pallas_mgpu.acc>
  %b = pallas_mgpu.alloc_smem : memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  // expected-error @+1 {{operand #1 must be memref in shared memory (#pallas_mgpu.smem)}}
  pallas_mgpu.wgmma %acc, %x, %b : memref<64x64xf32, #pallas_mgpu.acc>, memref<64x64xf16>, memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
}

// -----

// Tests that a wgmma operand without a swizzle wgmma can read is refused.
pallas_mgpu.kernel @wgmma_layout(%x: memref<64x64xf16>)
    attributes {grid = array<i64: 1>, grid_names = [], cluster = array<i64: 1>,
                cluster_names = [], num_threads = 1, num_outputs = 0} {
  %acc = pallas_mgpu.alloc_acc : memref<64x64xf32, #pallas_mgpu.acc>
  %a = pallas_mgpu.alloc_smem : memref<64x64xf16, #pallas_mgpu.smem>
  %b = pallas_mgpu.alloc_smem : memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  // expected-error @+1 {{wgmma operand a 'memref<64x64xf16, #pallas_mgpu.smem>' is not in a layout wgmma can read}}
  pallas_mgpu.wgmma %acc, %a, %b : memref<64x64xf32, #pallas_mgpu.acc>, memref<64x64xf16, #pallas_mgpu.smem>, memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
}

// -----

// Tests that wgmma shapes must compose.
pallas_mgpu.kernel @wgmma_shapes(%x: memref<64x64xf16>)
    attributes {grid = array<i64: 1>, grid_names = [], cluster = array<i64: 1>,
                cluster_names = [], num_threads = 1, num_outputs = 0} {
  %acc = pallas_mgpu.alloc_acc : memref<128x64xf32, #pallas_mgpu.acc>
  %a = pallas_mgpu.alloc_smem : memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  // expected-error @+1 {{shapes do not compose}}
  pallas_mgpu.wgmma %acc, %a, %a : memref<128x64xf32, #pallas_mgpu.acc>, memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
}

// -----

// Tests that a TMA box dimension over 256 elements is refused.
pallas_mgpu.kernel @tma_box(%x: memref<512x64xf16>)
    attributes {grid = array<i64: 1>, grid_names = [], cluster = array<i64: 1>,
                cluster_names = [], num_threads = 1, num_outputs = 0} {
  %c0 = arith.constant 0 : index
  %s = pallas_mgpu.alloc_smem : memref<512x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %bar = pallas_mgpu.alloc_barriers : !pallas_mgpu.barrier<1, arrivals = 1>
  // expected-error @+1 {{TMA box dimension 0 is 512; TMA addresses 1 to 256 elements per dimension}}
  pallas_mgpu.copy_gmem_to_smem %x, %s, %bar[%c0] : memref<512x64xf16>, memref<512x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>, !pallas_mgpu.barrier<1, arrivals = 1>
}

// -----

// Tests that a TMA box whose inner extent is not a multiple of 16 bytes is
// refused.
pallas_mgpu.kernel @tma_inner(%x: memref<64x4xf16>)
    attributes {grid = array<i64: 1>, grid_names = [], cluster = array<i64: 1>,
                cluster_names = [], num_threads = 1, num_outputs = 0} {
  %s = pallas_mgpu.alloc_smem : memref<64x4xf16, #pallas_mgpu.smem>
  // expected-error @+1 {{the innermost TMA box extent is 8 bytes; TMA needs a multiple of 16 bytes}}
  pallas_mgpu.copy_smem_to_gmem %s, %x : memref<64x4xf16, #pallas_mgpu.smem>, memref<64x4xf16>
}

// -----

// Tests that a TMA copy of a strided inner dimension is refused.
pallas_mgpu.kernel @tma_strided(%x: memref<64x128xf16>)
    attributes {grid = array<i64: 1>, grid_names = [], cluster = array<i64: 1>,
                cluster_names = [], num_threads = 1, num_outputs = 0} {
  %s = pallas_mgpu.alloc_smem : memref<64x64xf16, #pallas_mgpu.smem>
  %v = memref.subview %x[0, 0] [64, 64] [1, 2] : memref<64x128xf16> to memref<64x64xf16, strided<[128, 2]>>
  // expected-error @+1 {{is not contiguous in its innermost dimension, which TMA requires}}
  pallas_mgpu.copy_smem_to_gmem %s, %v : memref<64x64xf16, #pallas_mgpu.smem>, memref<64x64xf16, strided<[128, 2]>>
}

// -----

// Tests that a swizzle must span the innermost tile.
pallas_mgpu.kernel @swizzle_tile(%x: memref<64x64xf16>)
    attributes {grid = array<i64: 1>, grid_names = [], cluster = array<i64: 1>,
                cluster_names = [], num_threads = 1, num_outputs = 0} {
  // expected-error @+1 {{the buffer: a 128-byte swizzle needs an innermost tile of 128 bytes, got 64}}
  %s = pallas_mgpu.alloc_smem : memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 32], swizzle = 128>>
}

// -----

// Tests that a tiling must divide the buffer.
pallas_mgpu.kernel @tiling_divides(%x: memref<64x64xf16>)
    attributes {grid = array<i64: 1>, grid_names = [], cluster = array<i64: 1>,
                cluster_names = [], num_threads = 1, num_outputs = 0} {
  // expected-error @+1 {{is not divisible by its tiling [8, 64]}}
  %s = pallas_mgpu.alloc_smem : memref<60x64xf16, #pallas_mgpu.smem<tiling = [8, 64]>>
}

// -----

// Tests that a swizzle outside 0/16/32/64/128 is refused.
// expected-error @+1 {{swizzle 96 is not one of 0, 16, 32, 64, 128 (bytes)}}
func.func private @bad_swizzle(memref<64x64xf16, #pallas_mgpu.smem<tiling = [8, 48], swizzle = 96>>)

// -----

// Tests that a barrier array needs arrivals.
// expected-error @+1 {{a barrier expects at least one arrival, got 0}}
func.func private @bad_barrier(!pallas_mgpu.barrier<2, arrivals = 0>)

// -----

// Tests that an axis must be one of the kernel's mesh.
pallas_mgpu.kernel @axis(%x: memref<64x64xf16>)
    attributes {grid = array<i64: 1>, grid_names = ["g"], cluster = array<i64: 1>,
                cluster_names = [], num_threads = 2, thread_name = "wg", num_outputs = 0} {
  // expected-error @+1 {{axis 'warp' is not a grid, cluster or thread axis of @axis}}
  %i = pallas_mgpu.axis_index "warp" : i32
}

// -----

// Tests that register hints follow setmaxnreg's rules.
pallas_mgpu.kernel @regs(%x: memref<64x64xf16>)
    attributes {grid = array<i64: 1>, grid_names = [], cluster = array<i64: 1>,
                cluster_names = [], num_threads = 1, num_outputs = 0} {
  // expected-error @+1 {{register count 300 must be a multiple of 8 in [24, 256] (setmaxnreg)}}
  pallas_mgpu.set_max_registers "increase" 300
}

// -----

// Tests that an accumulator row count is a multiple of a warpgroup's 64.
pallas_mgpu.kernel @acc_rows(%x: memref<64x64xf16>)
    attributes {grid = array<i64: 1>, grid_names = [], cluster = array<i64: 1>,
                cluster_names = [], num_threads = 1, num_outputs = 0} {
  // expected-error @+1 {{accumulator rows (32) must be a multiple of 64 (one warpgroup)}}
  %acc = pallas_mgpu.alloc_acc : memref<32x64xf32, #pallas_mgpu.acc>
}

// -----

// Tests that an unknown register layout is refused.
func.func @layout(%v: tensor<64xf32>) {
  // expected-error @+1 {{unknown register layout 'mma'}}
  %r = pallas_mgpu.layout_cast %v : tensor<64xf32> to #pallas_mgpu.layout<"mma">
  return
}

// -----

// Tests that kernel arguments are global-memory memrefs.
// expected-error @+1 {{argument #0 has type 'memref<64xf32, #pallas_mgpu.smem>'; kernel arguments are statically shaped memrefs in global memory}}
pallas_mgpu.kernel @args(%x: memref<64xf32, #pallas_mgpu.smem>)
    attributes {grid = array<i64: 1>, grid_names = [], cluster = array<i64: 1>,
                cluster_names = [], num_threads = 1, num_outputs = 0} {
}

// -----

// Tests that a load's value matches its ref.
pallas_mgpu.kernel @load(%x: memref<64xf32>)
    attributes {grid = array<i64: 1>, grid_names = [], cluster = array<i64: 1>,
                cluster_names = [], num_threads = 1, num_outputs = 0} {
  %s = pallas_mgpu.alloc_smem : memref<64xf32, #pallas_mgpu.smem>
  // expected-error @+1 {{value type 'tensor<32xf32>' does not match the ref 'memref<64xf32, #pallas_mgpu.smem>'}}
  %v = pallas_mgpu.load %s : memref<64xf32, #pallas_mgpu.smem> -> tensor<32xf32>
}

// -----

// Tests that an accumulator's initial value matches it.
pallas_mgpu.kernel @acc_init(%x: memref<64x64xf16>)
    attributes {grid = array<i64: 1>, grid_names = [], cluster = array<i64: 1>,
                cluster_names = [], num_threads = 1, num_outputs = 0} {
  %zero = arith.constant dense<0.0> : tensor<64x32xf32>
  // expected-error @+1 {{initial value 'tensor<64x32xf32>' does not match the accumulator 'memref<64x64xf32, #pallas_mgpu.acc>'}}
  %acc = pallas_mgpu.alloc_acc init(%zero : tensor<64x32xf32>) : memref<64x64xf32, #pallas_mgpu.acc>
}

// -----

// Tests that the tiling of a transposed view applies to its dimensions in
// memory order: 32x128 divides by [8, 64] but its memory order 128x32 does not.
pallas_mgpu.kernel @transposed_tiling(%x: memref<64x64xf16>)
    attributes {grid = array<i64: 1>, grid_names = [], cluster = array<i64: 1>,
                cluster_names = [], num_threads = 1, num_outputs = 0} {
  %p = arith.constant dense<1.0> : tensor<64x32xf16>
  %k = pallas_mgpu.alloc_smem : memref<128x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %half = memref.subview %k[0, 0] [128, 32] [1, 1] : memref<128x64xf16, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>> to memref<128x32xf16, strided<[64, 1]>, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %kt = memref.transpose %half (d0, d1) -> (d1, d0) : memref<128x32xf16, strided<[64, 1]>, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>> to memref<32x128xf16, strided<[1, 64]>, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
  %acc = pallas_mgpu.alloc_acc : memref<64x128xf32, #pallas_mgpu.acc>
  // expected-error @+1 {{wgmma operand b of shape 'memref<32x128xf16, strided<[1, 64]>, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>' is not divisible by its tiling [8, 64]}}
  pallas_mgpu.wgmma %acc, %p, %kt : memref<64x128xf32, #pallas_mgpu.acc>, tensor<64x32xf16>, memref<32x128xf16, strided<[1, 64]>, #pallas_mgpu.smem<tiling = [8, 64], swizzle = 128>>
}

// -----

// Tests that a kernel without a body is an error, not a crash.
// expected-error @+1 {{a pallas_mgpu.kernel needs a body}}
pallas_mgpu.kernel @no_body(%x: memref<64xf32>)
    attributes {grid = array<i64: 1>, grid_names = [], cluster = array<i64: 1>,
                cluster_names = [], num_threads = 1, num_outputs = 0}

// -----

// Tests that shared memory holds scalars.
pallas_mgpu.kernel @vector_elements(%x: memref<64xf32>)
    attributes {grid = array<i64: 1>, grid_names = [], cluster = array<i64: 1>,
                cluster_names = [], num_threads = 1, num_outputs = 0} {
  // expected-error @+1 {{the buffer 'memref<8xvector<4xf32>, #pallas_mgpu.smem>' must hold integers or floats}}
  %s = pallas_mgpu.alloc_smem : memref<8xvector<4xf32>, #pallas_mgpu.smem>
}

// -----

// Tests that a TMA copy of non-scalar elements is refused, not a crash.
pallas_mgpu.kernel @tma_vector(%x: memref<8xvector<4xf32>>)
    attributes {grid = array<i64: 1>, grid_names = [], cluster = array<i64: 1>,
                cluster_names = [], num_threads = 1, num_outputs = 0} {
  %c0 = arith.constant 0 : index
  %s = pallas_mgpu.alloc_smem : memref<8xf32, #pallas_mgpu.smem>
  %bar = pallas_mgpu.alloc_barriers : !pallas_mgpu.barrier<1, arrivals = 1>
  // expected-error @+1 {{the shapes and element types must match}}
  pallas_mgpu.copy_gmem_to_smem %x, %s, %bar[%c0] : memref<8xvector<4xf32>>, memref<8xf32, #pallas_mgpu.smem>, !pallas_mgpu.barrier<1, arrivals = 1>
}

// -----

// Tests that a cluster barrier's collective axis must be a cluster axis.
pallas_mgpu.kernel @cluster_bar_axis(%x: memref<8xf32>)
    attributes {grid = array<i64: 2>, grid_names = ["g"], cluster = array<i64: 2>,
                cluster_names = ["c"], num_threads = 1, num_outputs = 0} {
  // expected-error @+1 {{collective axis 'g' is not a cluster axis of @cluster_bar_axis}}
  %bar = pallas_mgpu.alloc_barriers {collective_axes = ["g"]} : !pallas_mgpu.barrier<1, arrivals = 1>
}

// -----

// Tests that a cluster barrier over two axes is refused by name.
pallas_mgpu.kernel @cluster_bar_axes(%x: memref<8xf32>)
    attributes {grid = array<i64: 1>, grid_names = ["g"], cluster = array<i64: 2, 2>,
                cluster_names = ["c", "d"], num_threads = 1, num_outputs = 0} {
  // expected-error @+1 {{cluster barriers over 2 axes are not supported; collective_axes names one cluster axis}}
  %bar = pallas_mgpu.alloc_barriers {collective_axes = ["c", "d"]} : !pallas_mgpu.barrier<1, arrivals = 1>
}
