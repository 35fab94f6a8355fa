// RUN: pallasc-opt %s -split-input-file -pallas-to-gpu=chip=sm_80 -verify-diagnostics

// pallas-to-gpu reads the call pallas-gpu-prepare records on the module
// (`pallas.gpu.call`, the call's attributes as a dictionary). A missing or
// mistyped entry is a diagnostic, never a crash.

// expected-error @+1 {{no pallas.call was recorded; run pallas-gpu-prepare on a module holding one}}
module {
}

// -----

// expected-error @+1 {{the recorded pallas.call ('pallas.gpu.call') must be a dictionary, got 1 : i64}}
module attributes {pallas.gpu.call = 1} {
}

// -----

// expected-error @+1 {{the recorded pallas.call has no 'grid' (expected an array<i64: ...>)}}
module attributes {pallas.gpu.call = {kernel = @k, in_specs = [], out_specs = [], input_types = [], output_types = []}} {
}

// -----

// expected-error @+1 {{the recorded pallas.call's 'grid' must be an array<i64: ...>, got [4]}}
module attributes {pallas.gpu.call = {kernel = @k, grid = [4], in_specs = [], out_specs = [], input_types = [], output_types = []}} {
}

// -----

// expected-error @+1 {{the recorded pallas.call's 'in_specs' must be an array of #pallas.block_spec, got [8]}}
module attributes {pallas.gpu.call = {kernel = @k, grid = array<i64: 4>, in_specs = [8], out_specs = [], input_types = [], output_types = []}} {
}

// -----

// expected-error @+1 {{the recorded pallas.call has no 'out_specs' (expected an array of #pallas.block_spec)}}
module attributes {pallas.gpu.call = {kernel = @k, grid = array<i64: 4>, in_specs = [], input_types = [], output_types = []}} {
}

// -----

// expected-error @+1 {{the recorded pallas.call's 'compiler_params' must be a #pallas.compiler_params, got {gpu = {num_warps = 4 : i64}}}}
module attributes {pallas.gpu.call = {kernel = @k, grid = array<i64: 4>, in_specs = [], out_specs = [], input_types = [], output_types = [], compiler_params = {gpu = {num_warps = 4}}}} {
}

// -----

// expected-error @+1 {{the recorded pallas.call's 'vmapped_dims' must be an array<i64: ...>, got [0]}}
module attributes {pallas.gpu.call = {kernel = @k, grid = array<i64: 4>, in_specs = [], out_specs = [], input_types = [], output_types = [], vmapped_dims = [0]}} {
}

// -----

// expected-error @+1 {{vmapped_dims must be increasing grid axes in [0, 1)}}
module attributes {pallas.gpu.call = {kernel = @k, grid = array<i64: 4>, in_specs = [], out_specs = [], input_types = [], output_types = [], vmapped_dims = array<i64: 1>}} {
}

// -----

// dimension_semantics: one entry per kernel-visible axis (the GPU lowering
// once took one per grid axis too).
// expected-error @+1 {{compiler_params.tpu.dimension_semantics has 2 entries but the kernel sees 1 grid axes (grid rank 2, 1 vmapped); give one per kernel-visible axis}}
module attributes {pallas.gpu.call = {kernel = @k, grid = array<i64: 2, 4>, in_specs = [], out_specs = [], input_types = [], output_types = [], vmapped_dims = array<i64: 0>, compiler_params = #pallas.compiler_params<tpu = <dimension_semantics = [parallel, arbitrary]>>}} {
}

// -----

// expected-error @+1 {{the recorded pallas.call's input_output_aliases must hold (input, output) pairs}}
module attributes {pallas.gpu.call = {kernel = @k, grid = array<i64: 4>, in_specs = [], out_specs = [], input_types = [], output_types = [], input_output_aliases = array<i64: 0>}} {
}

// -----

// expected-error @+1 {{the recorded pallas.call's in_specs[0] index map takes 2 grid indices but the grid has rank 1}}
module attributes {pallas.gpu.call = {kernel = @k, grid = array<i64: 4>, in_specs = [#pallas.block_spec<[8], (d0, d1) -> (d0)>], out_specs = [], input_types = [tensor<32xf32>], output_types = []}} {
}

// -----

// expected-error @+1 {{the recorded pallas.call's 'kernel' must be a symbol (@name), got "k"}}
module attributes {pallas.gpu.call = {kernel = "k", grid = array<i64: 4>, in_specs = [], out_specs = [], input_types = [], output_types = []}} {
}

// -----

// expected-error @+1 {{the recorded pallas.call's 'input_types' must be an array of types}}
module attributes {pallas.gpu.call = {kernel = @k, grid = array<i64: 4>, in_specs = [], out_specs = [], output_types = []}} {
}

// -----

// expected-error @+1 {{the recorded pallas.call's scratch entries must be !pallas.ref types, got 'f32'}}
module attributes {pallas.gpu.call = {kernel = @k, grid = array<i64: 4>, in_specs = [], out_specs = [], input_types = [], output_types = [], scratch = [f32]}} {
}

// -----

// expected-error @+1 {{the recorded pallas.call has 1 in_specs and 0 out_specs for 0 inputs (0 scalar prefetch) and 0 outputs}}
module attributes {pallas.gpu.call = {kernel = @k, grid = array<i64: 4>, in_specs = [#pallas.block_spec<[8], (d0) -> (d0)>], out_specs = [], input_types = [], output_types = []}} {
}

// -----

// expected-error @+1 {{the recorded pallas.call's input_output_aliases pair (0, 3) is out of range}}
module attributes {pallas.gpu.call = {kernel = @k, grid = array<i64: 4>, in_specs = [#pallas.block_spec<[8], (d0) -> (d0)>], out_specs = [#pallas.block_spec<[8], (d0) -> (d0)>], input_types = [tensor<32xf32>], output_types = [tensor<32xf32>], input_output_aliases = array<i64: 0, 3>}} {
}

// -----

// A lowered kernel without its grid-axis count (pallas-to-linalg's
// pallas.num_grid_axes).
module attributes {pallas.gpu.call = {kernel = @k, grid = array<i64: 4>, in_specs = [], out_specs = [], input_types = [], output_types = []}} {
  // expected-error @+1 {{'func.func' op has no integer 'pallas.num_grid_axes' (pallas-to-linalg records it)}}
  func.func @k() attributes {pallas.kernel} {
    return
  }
}
