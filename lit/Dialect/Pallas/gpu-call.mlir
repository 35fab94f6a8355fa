// RUN: pallasc-opt %s -split-input-file | FileCheck %s
// RUN: pallasc-opt %s -split-input-file | pallasc-opt -split-input-file | FileCheck %s

// The typed record of the pallas.call pallas-gpu-prepare attaches to the
// module (`pallas.gpu.call`) round-trips in its printed form.

// Tests that a record with every field prints them in order, whatever the
// order they were written in.
// CHECK: module attributes {pallas.gpu.call = #pallas.gpu_call<kernel = @mm, name = "matmul", grid = [2, -1, 4], grid_names = ["b", "i", "k"], vmapped_dims = [0], num_scalar_prefetch = 1,
// CHECK-SAME: in_specs = [#pallas.block_spec<[64, 32], (d0, d1, d2) -> (d1, d2)>], out_specs = [#pallas.block_spec<[64, 64], (d0, d1, d2) -> (d1, 0)>], input_output_aliases = [1, 0],
// CHECK-SAME: compiler_params = #pallas.compiler_params<gpu = <num_warps = 8, num_stages = 2>, tpu = <dimension_semantics = [parallel, arbitrary]>>,
// CHECK-SAME: scratch = [!pallas.ref<64x64xf32, vmem>], input_types = [tensor<4xi32>, tensor<128x128xf32>], output_types = [tensor<128x128xf32>]>}
module attributes {pallas.gpu.call = #pallas.gpu_call<
    output_types = [tensor<128x128xf32>],
    input_types = [tensor<4xi32>, tensor<128x128xf32>],
    kernel = @mm, name = "matmul", grid = [2, -1, 4],
    grid_names = ["b", "i", "k"], vmapped_dims = [0],
    num_scalar_prefetch = 1,
    in_specs = [#pallas.block_spec<[64, 32], (b, i, k) -> (i, k)>],
    out_specs = [#pallas.block_spec<[64, 64], (b, i, k) -> (i, 0)>],
    input_output_aliases = [1, 0],
    compiler_params = #pallas.compiler_params<gpu = <num_warps = 8, num_stages = 2>,
        tpu = <dimension_semantics = [parallel, arbitrary]>>,
    scratch = [!pallas.ref<64x64xf32, vmem>]>} {
}

// -----

// Tests that the optional fields are left out when absent (the name is then
// the kernel's, no vmapped axes, no scalar prefetch, no aliases, params or
// scratch).
// CHECK: module attributes {pallas.gpu.call = #pallas.gpu_call<kernel = @add, grid = [4], in_specs = [#pallas.block_spec<[8], (d0) -> (d0)>], out_specs = [#pallas.block_spec<[8], (d0) -> (d0)>], input_types = [tensor<32xf32>], output_types = [tensor<32xf32>]>}
module attributes {pallas.gpu.call = #pallas.gpu_call<kernel = @add, grid = [4],
    in_specs = [#pallas.block_spec<[8], (i) -> (i)>],
    out_specs = [#pallas.block_spec<[8], (i) -> (i)>],
    input_types = [tensor<32xf32>], output_types = [tensor<32xf32>]>} {
}

// -----

// Tests that a call with no operands over an empty grid is a record.
// CHECK: module attributes {pallas.gpu.call = #pallas.gpu_call<kernel = @k, grid = [], in_specs = [], out_specs = [], input_types = [], output_types = []>}
module attributes {pallas.gpu.call = #pallas.gpu_call<kernel = @k, grid = [], in_specs = [], out_specs = [], input_types = [], output_types = []>} {
}
