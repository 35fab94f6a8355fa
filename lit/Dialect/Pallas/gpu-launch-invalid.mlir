// RUN: pallasc-opt %s -split-input-file -verify-diagnostics

// Malformed launch records (`pallas.gpu.launch`, #pallas.gpu_launch): each
// is a located diagnostic, never a crash.

// Tests that a record that is a dictionary is refused under its name.
// expected-error @+1 {{'func.func' op attribute 'pallas.gpu.launch' must be a #pallas.gpu_launch record, got {block = [128, 1, 1], entry = "mm"}}}
func.func @f() attributes {pallas.gpu.launch = {entry = "mm", block = [128, 1, 1]}} {
  return
}

// -----

// Tests that an empty entry symbol is an error.
// expected-error @+1 {{the launch record needs an entry symbol}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "", grid = [2, 2, 1], grid_axes = [[0], [1], []], block = [128, 1, 1], num_warps = 4, warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, outputs[0]>]>} {
  return
}

// -----

// Tests that a grid of two entries is an error.
// expected-error @+1 {{the launch record's grid must have 3 entries (x, y, z), got 2}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2], grid_axes = [[0], [1], []], block = [128, 1, 1], num_warps = 4, warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, outputs[0]>]>} {
  return
}

// -----

// Tests that a grid entry below -1 is an error.
// expected-error @+1 {{the launch record's grid entries must be non-negative or -1 (dynamic), got -2}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, -2, 1], grid_axes = [[0], [1], []], block = [128, 1, 1], num_warps = 4, warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, outputs[0]>]>} {
  return
}

// -----

// Tests that grid_axes of two entries is an error.
// expected-error @+1 {{grid_axes must have 3 entries (x, y, z), got 2}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2, 1], grid_axes = [[0], [1]], block = [128, 1, 1], num_warps = 4, warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, outputs[0]>]>} {
  return
}

// -----

// Tests that a negative grid axis is an error.
// expected-error @+1 {{the launch record's grid_axes must be non-negative pallas grid axes, got -1}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2, 1], grid_axes = [[0], [-1], []], block = [128, 1, 1], num_warps = 4, warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, outputs[0]>]>} {
  return
}

// -----

// Tests that a block of one entry is an error.
// expected-error @+1 {{the launch record's block must have 3 entries (x, y, z), got 1}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2, 1], grid_axes = [[0], [1], []], block = [128], num_warps = 4, warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, outputs[0]>]>} {
  return
}

// -----

// Tests that a block of no threads is an error.
// expected-error @+1 {{the launch record's block entries must be positive, got 0}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2, 1], grid_axes = [[0], [1], []], block = [128, 0, 1], num_warps = 4, warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, outputs[0]>]>} {
  return
}

// -----

// Tests that no warps is an error.
// expected-error @+1 {{the launch record's num_warps must be positive, got 0}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2, 1], grid_axes = [[0], [1], []], block = [128, 1, 1], num_warps = 0, warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, outputs[0]>]>} {
  return
}

// -----

// Tests that a warp of no threads is an error.
// expected-error @+1 {{the launch record's warp_size must be positive, got 0}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2, 1], grid_axes = [[0], [1], []], block = [128, 1, 1], num_warps = 4, warp_size = 0, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, outputs[0]>]>} {
  return
}

// -----

// Tests that a negative sequential axis is an error.
// expected-error @+1 {{the launch record's sequential_axes must be non-negative pallas grid axes, got -2}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2, 1], grid_axes = [[0], [1], []], block = [128, 1, 1], num_warps = 4, warp_size = 32, sequential_axes = [-2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, outputs[0]>]>} {
  return
}

// -----

// Tests that negative shared memory is an error.
// expected-error @+1 {{the launch record's dynamic_shared_memory_bytes must be non-negative, got -4096}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2, 1], grid_axes = [[0], [1], []], block = [128, 1, 1], num_warps = 4, warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = -4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, outputs[0]>]>} {
  return
}

// -----

// Tests that scratch beyond the shared memory is an error.
// expected-error @+1 {{the launch record's scratch_shared_memory_bytes must be in [0, dynamic_shared_memory_bytes = 4096], got 8192}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2, 1], grid_axes = [[0], [1], []], block = [128, 1, 1], num_warps = 4, warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 8192, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, outputs[0]>]>} {
  return
}

// -----

// Tests that a missing field is an error.
// expected-error @+1 {{expected 'num_warps'}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2, 1], grid_axes = [[0], [1], []], block = [128, 1, 1], warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, outputs[0]>]>} {
  return
}

// -----

// Tests that a mistyped field is an error.
// expected-error @+2 {{expected integer value}}
// expected-error @+1 {{failed to parse Pallas_GpuLaunchAttr parameter 'num_warps' which is to be a `int64_t`}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2, 1], grid_axes = [[0], [1], []], block = [128, 1, 1], num_warps = "four", warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, outputs[0]>]>} {
  return
}

// -----

// Tests that an unknown parameter kind is an error.
// expected-error @+1 {{unknown GPU parameter kind 'i64'; expected 'pointer', 'i32', 'tensor_map' or 'symbol'}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2, 1], grid_axes = [[0], [1], []], block = [128, 1, 1], num_warps = 4, warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<i64, outputs[0]>]>} {
  return
}

// -----

// Tests that an unknown parameter operand is an error.
// expected-error @+1 {{unknown GPU parameter operand 'results'; expected 'inputs', 'outputs', 'grid_bounds' or 'symbols'}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2, 1], grid_axes = [[0], [1], []], block = [128, 1, 1], num_warps = 4, warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, results[0]>]>} {
  return
}

// -----

// Tests that a pointer to a grid bound is an error.
// expected-error @+1 {{a pointer parameter takes an input or an output, not grid_bounds[0]}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2, 1], grid_axes = [[0], [1], []], block = [128, 1, 1], num_warps = 4, warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, grid_bounds[0]>]>} {
  return
}

// -----

// Tests that a negative operand index is an error.
// expected-error @+1 {{a GPU parameter's operand index must be non-negative, got -1}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2, 1], grid_axes = [[0], [1], []], block = [128, 1, 1], num_warps = 4, warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, outputs[-1]>]>} {
  return
}

// -----

// Tests that operands out of launch order are an error.
// expected-error @+1 {{the launch record's parameter outputs[1] is out of order: expected outputs[0]}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2, 1], grid_axes = [[0], [1], []], block = [128, 1, 1], num_warps = 4, warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, outputs[1]>]>} {
  return
}

// -----

// Tests that an unknown parameter field is an error.
// expected-error @+1 {{unknown GPU parameter field 'size'}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2, 1], grid_axes = [[0], [1], []], block = [128, 1, 1], num_warps = 4, warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, outputs[0], size = 4>]>} {
  return
}

// -----

// Tests that a field given twice is an error.
// expected-error @+1 {{GPU parameter field 'axis' is given twice}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2, 1], grid_axes = [[0], [1], []], block = [128, 1, 1], num_warps = 4, warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<i32, grid_bounds[0], axis = 1, axis = 2>]>} {
  return
}

// -----

// Tests that an i32 parameter without its axis is an error.
// expected-error @+1 {{an i32 parameter needs the pallas grid axis whose bound it is (axis = n)}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2, 1], grid_axes = [[0], [1], []], block = [128, 1, 1], num_warps = 4, warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, outputs[0]>, #pallas.gpu_param<i32, grid_bounds[0]>]>} {
  return
}

// -----

// Tests that an i32 parameter of an axis the grid does not have is an error.
// expected-error @+1 {{the launch record's parameter grid_bounds[0] is the bound of axis 5, which is neither in grid_axes nor in sequential_axes}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2, 1], grid_axes = [[0], [1], []], block = [128, 1, 1], num_warps = 4, warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, outputs[0]>, #pallas.gpu_param<i32, grid_bounds[0], axis = 5>]>} {
  return
}

// -----

// Tests that an i32 parameter over an input is an error.
// expected-error @+1 {{an i32 parameter takes grid_bounds[k], not inputs[0]}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2, 1], grid_axes = [[0], [1], []], block = [128, 1, 1], num_warps = 4, warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, outputs[0]>, #pallas.gpu_param<i32, inputs[0], axis = 1>]>} {
  return
}

// -----

// Tests that a pointer with an axis is an error.
// expected-error @+1 {{a pointer parameter takes no axis}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2, 1], grid_axes = [[0], [1], []], block = [128, 1, 1], num_warps = 4, warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, outputs[0], axis = 1>]>} {
  return
}

// -----

// Tests that a pointer with tensor-map fields is an error.
// expected-error @+1 {{a pointer parameter takes no tensor-map fields}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2, 1], grid_axes = [[0], [1], []], block = [128, 1, 1], num_warps = 4, warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, outputs[0], dtype = bf16>]>} {
  return
}

// -----

// Tests that a tensor map over a grid bound is an error (it takes an input
// or, for a TMA store, an output).
// expected-error @+1 {{a tensor_map parameter takes an input or an output, not grid_bounds[0]}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2, 1], grid_axes = [[0], [1], []], block = [128, 1, 1], num_warps = 4, warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, outputs[0]>, #pallas.gpu_param<tensor_map, grid_bounds[0], dtype = bf16, global_shape = [256, 512], box_shape = [64, 64], swizzle = "128B", interleave = "none", l2_promotion = "128B", oob_fill = "zero">]>} {
  return
}

// -----

// Tests that a tensor map of f32 is an error.
// expected-error @+1 {{a tensor_map parameter needs dtype = bf16 or f16}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2, 1], grid_axes = [[0], [1], []], block = [128, 1, 1], num_warps = 4, warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, outputs[0]>, #pallas.gpu_param<tensor_map, inputs[0], dtype = f32, global_shape = [256, 512], box_shape = [64, 64], swizzle = "128B", interleave = "none", l2_promotion = "128B", oob_fill = "zero">]>} {
  return
}

// -----

// Tests that a tensor map whose box has another rank than its array is an
// error.
// expected-error @+1 {{a tensor_map parameter needs a global_shape and a box_shape of 2 to 5 entries each, as many (outermost first)}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2, 1], grid_axes = [[0], [1], []], block = [128, 1, 1], num_warps = 4, warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, outputs[0]>, #pallas.gpu_param<tensor_map, inputs[0], dtype = bf16, global_shape = [256, 512], box_shape = [64], swizzle = "128B", interleave = "none", l2_promotion = "128B", oob_fill = "zero">]>} {
  return
}

// -----

// Tests that a tensor map of an empty box is an error.
// expected-error @+1 {{a tensor_map parameter's shapes must be positive, got 0}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2, 1], grid_axes = [[0], [1], []], block = [128, 1, 1], num_warps = 4, warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, outputs[0]>, #pallas.gpu_param<tensor_map, inputs[0], dtype = bf16, global_shape = [256, 512], box_shape = [64, 0], swizzle = "128B", interleave = "none", l2_promotion = "128B", oob_fill = "zero">]>} {
  return
}

// -----

// Tests that a tensor map without its swizzle is an error.
// expected-error @+1 {{a tensor_map parameter needs swizzle, interleave, l2_promotion and oob_fill}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2, 1], grid_axes = [[0], [1], []], block = [128, 1, 1], num_warps = 4, warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, outputs[0]>, #pallas.gpu_param<tensor_map, inputs[0], dtype = bf16, global_shape = [256, 512], box_shape = [64, 64], interleave = "none", l2_promotion = "128B", oob_fill = "zero">]>} {
  return
}

// -----

// Tests that a tensor map over an input without a pointer is an error.
// expected-error @+1 {{the launch record's tensor_map parameter is over inputs[3], which has no pointer parameter}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2, 1], grid_axes = [[0], [1], []], block = [128, 1, 1], num_warps = 4, warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, outputs[0]>, #pallas.gpu_param<tensor_map, inputs[3], dtype = bf16, global_shape = [256, 512], box_shape = [64, 64], swizzle = "128B", interleave = "none", l2_promotion = "128B", oob_fill = "zero">]>} {
  return
}

// -----

// Tests that a parameter that is not a #pallas.gpu_param is an error.
// expected-error @+1 {{invalid kind of attribute specified}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2, 1], grid_axes = [[0], [1], []], block = [128, 1, 1], num_warps = 4, warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, {kind = "pointer"}]>} {
  return
}

// -----

// Tests that a symbol parameter takes a symbols[s] operand.
// expected-error @+1 {{a symbol parameter takes symbols[s], not inputs[0]}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2, 1], grid_axes = [[0], [1], []], block = [128, 1, 1], num_warps = 4, warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<symbol, inputs[0]>]>} {
  return
}

// -----

// Tests that a pointer to a symbol is an error.
// expected-error @+1 {{a pointer parameter takes an input or an output, not symbols[0]}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2, 1], grid_axes = [[0], [1], []], block = [128, 1, 1], num_warps = 4, warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, symbols[0]>]>} {
  return
}

// -----

// Tests that symbol parameters are numbered in order.
// expected-error @+1 {{the launch record's parameter symbols[1] is out of order: expected symbols[0]}}
func.func @f() attributes {pallas.gpu.launch = #pallas.gpu_launch<entry = "mm", grid = [2, 2, 1], grid_axes = [[0], [1], []], block = [128, 1, 1], num_warps = 4, warp_size = 32, sequential_axes = [2], vmapped_axes = [], dynamic_shared_memory_bytes = 4096, scratch_shared_memory_bytes = 0, params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<symbol, symbols[1]>]>} {
  return
}
