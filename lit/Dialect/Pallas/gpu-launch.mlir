// RUN: pallasc-opt %s -split-input-file | FileCheck %s
// RUN: pallasc-opt %s -split-input-file | pallasc-opt -split-input-file | FileCheck %s

// The typed launch record pallas-to-gpu writes on its gpu.func
// (`pallas.gpu.launch`) round-trips in its printed form.

// Tests that a record with every parameter kind prints as it was written.
// CHECK-LABEL: func.func @every_kind
// CHECK-SAME: pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, -1, 1], grid_axes = {{\[}}[0], [1], []], block = [128, 1, 1], num_warps = 4, warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 65536, scratch_shared_memory_bytes = 1024,
// CHECK-SAME: params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, inputs[1]>, #pallas.gpu_param<pointer, outputs[0]>, #pallas.gpu_param<i32, grid_bounds[0], axis = 1>,
// CHECK-SAME: #pallas.gpu_param<tensor_map, inputs[1], dtype = bf16, global_shape = [256, 512], box_shape = [64, 64], swizzle = "128B", interleave = "none", l2_promotion = "128B", oob_fill = "zero">]>
func.func @every_kind() attributes {pallas.gpu.launch = #pallas.gpu_launch<
    entry = "mm", grid = [2, -1, 1], grid_axes = [[0], [1], []],
    block = [128, 1, 1], num_warps = 4, warp_size = 32,
    sequential_axes = [2], vmapped_axes = [],
    dynamic_shared_memory_bytes = 65536, scratch_shared_memory_bytes = 1024,
    params = [#pallas.gpu_param<pointer, inputs[0]>,
              #pallas.gpu_param<pointer, inputs[1]>,
              #pallas.gpu_param<pointer, outputs[0]>,
              #pallas.gpu_param<i32, grid_bounds[0], axis = 1>,
              #pallas.gpu_param<tensor_map, inputs[1], oob_fill = "zero",
                  dtype = bf16, global_shape = [256, 512],
                  box_shape = [64, 64], swizzle = "128B",
                  interleave = "none", l2_promotion = "128B">]>} {
  return
}

// -----

// Tests that a wave64 record with folded axes, vmapped axes and no
// parameters round-trips.
// CHECK-LABEL: func.func @wave64
// CHECK-SAME: pallas.gpu.launch = #pallas.gpu_launch<entry = "k", grid = [24, 4, 1], grid_axes = {{\[}}[0, 1], [2], []], block = [256, 1, 1], num_warps = 4, warp_size = 64, sequential_axes = [], vmapped_axes = [0], dynamic_shared_memory_bytes = 0, scratch_shared_memory_bytes = 0, params = []>
func.func @wave64() attributes {pallas.gpu.launch = #pallas.gpu_launch<
    entry = "k", grid = [24, 4, 1], grid_axes = [[0, 1], [2], []],
    block = [256, 1, 1], num_warps = 4, warp_size = 64,
    sequential_axes = [], vmapped_axes = [0],
    dynamic_shared_memory_bytes = 0, scratch_shared_memory_bytes = 0,
    params = []>} {
  return
}
