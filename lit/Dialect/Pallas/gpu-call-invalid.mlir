// RUN: pallasc-opt %s -split-input-file -verify-diagnostics

// Malformed call records (`pallas.gpu.call`, #pallas.gpu_call): each is a
// located diagnostic, never a crash.

// Tests that a record that is a dictionary is refused under its name.
// expected-error @+1 {{'builtin.module' op attribute 'pallas.gpu.call' must be a #pallas.gpu_call record, got {grid = array<i64: 4>, kernel = @k}}}
module attributes {pallas.gpu.call = {kernel = @k, grid = array<i64: 4>}} {
}

// -----

// Tests that a missing required field is named.
// expected-error @+1 {{#pallas.gpu_call needs 'grid' (a list of integers ([4, -1]))}}
module attributes {pallas.gpu.call = #pallas.gpu_call<kernel = @k, in_specs = [], out_specs = [], input_types = [], output_types = []>} {
}

// -----

// expected-error @+1 {{#pallas.gpu_call needs 'kernel' (a symbol (@name))}}
module attributes {pallas.gpu.call = #pallas.gpu_call<grid = [4], in_specs = [], out_specs = [], input_types = [], output_types = []>} {
}

// -----

// expected-error @+1 {{#pallas.gpu_call needs 'out_specs' (a list of #pallas.block_spec)}}
module attributes {pallas.gpu.call = #pallas.gpu_call<kernel = @k, grid = [4], in_specs = [], input_types = [], output_types = []>} {
}

// -----

// expected-error @+1 {{#pallas.gpu_call needs 'input_types' (a list of ranked tensor types)}}
module attributes {pallas.gpu.call = #pallas.gpu_call<kernel = @k, grid = [4], in_specs = [], out_specs = [], output_types = []>} {
}

// -----

// Tests that an unknown field and a field given twice are errors.
// expected-error @+1 {{unknown #pallas.gpu_call field 'grids'; expected one of 'kernel', 'name', 'grid', 'grid_names', 'vmapped_dims', 'num_scalar_prefetch', 'in_specs', 'out_specs', 'input_output_aliases', 'compiler_params', 'scratch', 'input_types', 'output_types'}}
module attributes {pallas.gpu.call = #pallas.gpu_call<kernel = @k, grids = [4]>} {
}

// -----

// expected-error @+1 {{#pallas.gpu_call field 'grid' is given twice}}
module attributes {pallas.gpu.call = #pallas.gpu_call<kernel = @k, grid = [4], grid = [4]>} {
}

// -----

// Tests that mistyped fields are errors naming the field.
// expected-error @+1 {{#pallas.gpu_call's 'kernel' must be a symbol (@name), got "k"}}
module attributes {pallas.gpu.call = #pallas.gpu_call<kernel = "k", grid = [4], in_specs = [], out_specs = [], input_types = [], output_types = []>} {
}

// -----

// expected-error @+1 {{#pallas.gpu_call's 'grid' must be a list of integers ([4, -1])}}
module attributes {pallas.gpu.call = #pallas.gpu_call<kernel = @k, grid = array<i64: 4>, in_specs = [], out_specs = [], input_types = [], output_types = []>} {
}

// -----

// expected-error @+1 {{#pallas.gpu_call's 'vmapped_dims' must be a list of integers}}
module attributes {pallas.gpu.call = #pallas.gpu_call<kernel = @k, grid = [4], vmapped_dims = 0, in_specs = [], out_specs = [], input_types = [], output_types = []>} {
}

// -----

// expected-error @+1 {{#pallas.gpu_call's 'num_scalar_prefetch' must be an integer}}
module attributes {pallas.gpu.call = #pallas.gpu_call<kernel = @k, grid = [4], num_scalar_prefetch = [1], in_specs = [], out_specs = [], input_types = [], output_types = []>} {
}

// -----

// expected-error @+1 {{#pallas.gpu_call's 'in_specs' entries must be #pallas.block_spec, got 8 : i64}}
module attributes {pallas.gpu.call = #pallas.gpu_call<kernel = @k, grid = [4], in_specs = [8], out_specs = [], input_types = [], output_types = []>} {
}

// -----

// expected-error @+1 {{#pallas.gpu_call's 'compiler_params' must be a #pallas.compiler_params, got {gpu = {num_warps = 4 : i64}}}}
module attributes {pallas.gpu.call = #pallas.gpu_call<kernel = @k, grid = [4], in_specs = [], out_specs = [], input_types = [], output_types = [], compiler_params = {gpu = {num_warps = 4}}>} {
}

// -----

// expected-error @+1 {{#pallas.gpu_call's 'grid_names' entries must be strings, got 0 : i64}}
module attributes {pallas.gpu.call = #pallas.gpu_call<kernel = @k, grid = [4], grid_names = [0], in_specs = [], out_specs = [], input_types = [], output_types = []>} {
}

// -----

// expected-error @+1 {{#pallas.gpu_call's 'scratch' entries must be !pallas.ref types, got 'f32'}}
module attributes {pallas.gpu.call = #pallas.gpu_call<kernel = @k, grid = [4], in_specs = [], out_specs = [], input_types = [], output_types = [], scratch = [f32]>} {
}

// -----

// expected-error @+1 {{#pallas.gpu_call's 'input_types' entries must be ranked tensor types, got 'memref<32xf32>'}}
module attributes {pallas.gpu.call = #pallas.gpu_call<kernel = @k, grid = [4], in_specs = [#pallas.block_spec<[8], (d0) -> (d0)>], out_specs = [], input_types = [memref<32xf32>], output_types = []>} {
}

// -----

// Tests the rules of the verifier, one per field.
// expected-error @+1 {{the recorded pallas.call's grid[1] = -2: a grid bound must be non-negative or -1 (dynamic)}}
module attributes {pallas.gpu.call = #pallas.gpu_call<kernel = @k, grid = [4, -2], in_specs = [], out_specs = [], input_types = [], output_types = []>} {
}

// -----

// expected-error @+1 {{the recorded pallas.call's grid_names has 1 entries but the grid has rank 2}}
module attributes {pallas.gpu.call = #pallas.gpu_call<kernel = @k, grid = [4, 2], grid_names = ["i"], in_specs = [], out_specs = [], input_types = [], output_types = []>} {
}

// -----

// expected-error @+1 {{vmapped_dims must be increasing grid axes in [0, 1)}}
module attributes {pallas.gpu.call = #pallas.gpu_call<kernel = @k, grid = [4], vmapped_dims = [1], in_specs = [], out_specs = [], input_types = [], output_types = []>} {
}

// -----

// dimension_semantics: one entry per kernel-visible axis (the GPU lowering
// once took one per grid axis too).
// expected-error @+1 {{compiler_params.tpu.dimension_semantics has 2 entries but the kernel sees 1 grid axes (grid rank 2, 1 vmapped); give one per kernel-visible axis}}
module attributes {pallas.gpu.call = #pallas.gpu_call<kernel = @k, grid = [2, 4], vmapped_dims = [0], in_specs = [], out_specs = [], input_types = [], output_types = [], compiler_params = #pallas.compiler_params<tpu = <dimension_semantics = [parallel, arbitrary]>>>} {
}

// -----

// expected-error @+1 {{the recorded pallas.call's num_scalar_prefetch must be non-negative, got -1}}
module attributes {pallas.gpu.call = #pallas.gpu_call<kernel = @k, grid = [4], num_scalar_prefetch = -1, in_specs = [], out_specs = [], input_types = [], output_types = []>} {
}

// -----

// expected-error @+1 {{the recorded pallas.call has 1 in_specs and 0 out_specs for 0 inputs (0 scalar prefetch) and 0 outputs}}
module attributes {pallas.gpu.call = #pallas.gpu_call<kernel = @k, grid = [4], in_specs = [#pallas.block_spec<[8], (d0) -> (d0)>], out_specs = [], input_types = [], output_types = []>} {
}

// -----

// expected-error @+1 {{the recorded pallas.call has 0 in_specs and 0 out_specs for 1 inputs (2 scalar prefetch) and 0 outputs}}
module attributes {pallas.gpu.call = #pallas.gpu_call<kernel = @k, grid = [4], num_scalar_prefetch = 2, in_specs = [], out_specs = [], input_types = [tensor<4xi32>], output_types = []>} {
}

// -----

// expected-error @+1 {{the recorded pallas.call's in_specs[0] index map takes 2 grid indices but the grid has rank 1}}
module attributes {pallas.gpu.call = #pallas.gpu_call<kernel = @k, grid = [4], in_specs = [#pallas.block_spec<[8], (d0, d1) -> (d0)>], out_specs = [], input_types = [tensor<32xf32>], output_types = []>} {
}

// -----

// expected-error @+1 {{the recorded pallas.call's input_output_aliases must hold (input, output) pairs}}
module attributes {pallas.gpu.call = #pallas.gpu_call<kernel = @k, grid = [4], in_specs = [], out_specs = [], input_types = [], output_types = [], input_output_aliases = [0]>} {
}

// -----

// expected-error @+1 {{the recorded pallas.call's input_output_aliases pair (0, 3) is out of range}}
module attributes {pallas.gpu.call = #pallas.gpu_call<kernel = @k, grid = [4], in_specs = [#pallas.block_spec<[8], (d0) -> (d0)>], out_specs = [#pallas.block_spec<[8], (d0) -> (d0)>], input_types = [tensor<32xf32>], output_types = [tensor<32xf32>], input_output_aliases = [0, 3]>} {
}

// -----

// expected-error @+1 {{#pallas.gpu_call's 'name' must be a string}}
module attributes {pallas.gpu.call = #pallas.gpu_call<kernel = @k, name = @n, grid = [4], in_specs = [], out_specs = [], input_types = [], output_types = []>} {
}
