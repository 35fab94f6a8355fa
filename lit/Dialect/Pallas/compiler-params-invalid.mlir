// RUN: pallasc-opt %s -split-input-file -verify-diagnostics

// Malformed pallas.call attributes: every one is a located diagnostic.

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>], out_specs = [#pallas.block_spec<[8]>],
      // expected-error @+1 {{compiler_params.gpu.num_warps must be a power of 2 in [1, 32], got 64}}
      compiler_params = #pallas.compiler_params<gpu = <num_warps = 64>>} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>], out_specs = [#pallas.block_spec<[8]>],
      // expected-error @+1 {{compiler_params.gpu.num_warps must be a power of 2 in [1, 32], got 0}}
      compiler_params = #pallas.compiler_params<gpu = <num_warps = 0>>} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>], out_specs = [#pallas.block_spec<[8]>],
      // expected-error @+1 {{compiler_params.gpu.num_stages must be a positive integer, got 0}}
      compiler_params = #pallas.compiler_params<gpu = <num_stages = 0>>} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>], out_specs = [#pallas.block_spec<[8]>],
      // expected-error @+1 {{compiler_params.tpu.vmem_limit_bytes must be a positive integer, got -4}}
      compiler_params = #pallas.compiler_params<tpu = <vmem_limit_bytes = -4>>} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>], out_specs = [#pallas.block_spec<[8]>],
      // expected-error @+1 {{compiler_params.tpu.dimension_semantics entries must be 'parallel', 'arbitrary', 'core_parallel' or 'subcore_parallel', got 'paralel'}}
      compiler_params = #pallas.compiler_params<tpu = <dimension_semantics = [paralel]>>} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>], out_specs = [#pallas.block_spec<[8]>],
      // expected-error @+1 {{compiler_params.tpu.has_side_effects must be 'true', 'false' or 'dataflow_side_effecting', got 'maybe'}}
      compiler_params = #pallas.compiler_params<tpu = <has_side_effects = maybe>>} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>], out_specs = [#pallas.block_spec<[8]>],
      // expected-error @+1 {{expected 'true' or 'false'}}
      compiler_params = #pallas.compiler_params<gpu = <strict_fp = 1>>} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>], out_specs = [#pallas.block_spec<[8]>],
      // expected-error @+1 {{unknown compiler_params.gpu field 'num_warp'; expected one of 'num_warps', 'num_stages', 'strict_fp'}}
      compiler_params = #pallas.compiler_params<gpu = <num_warp = 4>>} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>], out_specs = [#pallas.block_spec<[8]>],
      // expected-error @+1 {{unknown compiler_params.tpu field 'num_warps'; expected one of 'dimension_semantics', 'vmem_limit_bytes', 'has_side_effects', 'collective_id'}}
      compiler_params = #pallas.compiler_params<tpu = <num_warps = 4>>} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>], out_specs = [#pallas.block_spec<[8]>],
      // expected-error @+1 {{unknown compiler_params part 'cuda'; expected 'gpu' or 'tpu'}}
      compiler_params = #pallas.compiler_params<cuda = <num_warps = 4>>} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>], out_specs = [#pallas.block_spec<[8]>],
      // expected-error @+1 {{compiler_params.gpu.num_warps is given twice}}
      compiler_params = #pallas.compiler_params<gpu = <num_warps = 4, num_warps = 8>>} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>], out_specs = [#pallas.block_spec<[8]>],
      // expected-error @+1 {{compiler_params.tpu is given twice}}
      compiler_params = #pallas.compiler_params<tpu = <>, tpu = <>>} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// The untyped dictionary of before is not accepted.
pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{compiler_params}}
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>], out_specs = [#pallas.block_spec<[8]>],
      compiler_params = {gpu = {num_warps = 4 : i64}}} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// dimension_semantics: one entry per kernel-visible axis (here 1: axis 0 was
// added by vmap), not one per grid axis.
pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op compiler_params.tpu.dimension_semantics has 2 entries but the kernel sees 1 grid axes (grid rank 2, 1 vmapped); give one per kernel-visible axis}}
  %o = pallas.call @k(%x) {grid = array<i64: 4, 2>, in_specs = [#pallas.block_spec<[8]>], out_specs = [#pallas.block_spec<[8]>],
      vmapped_dims = array<i64: 0>,
      compiler_params = #pallas.compiler_params<tpu = <dimension_semantics = [parallel, arbitrary]>>} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// A pallas.call without its grid.
pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{grid}}
  %o = pallas.call @k(%x) {in_specs = [#pallas.block_spec<[8]>], out_specs = [#pallas.block_spec<[8]>]} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// in_specs that are not block specs.
pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{in_specs}}
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [[8]], out_specs = [#pallas.block_spec<[8]>]} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// A block spec with a malformed dimension.
pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{expected integer value}}
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[eight]>], out_specs = [#pallas.block_spec<[8]>]} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>], out_specs = [#pallas.block_spec<[8]>],
      // expected-error @+1 {{compiler_params.tpu.collective_id must be an integer in [0, 2^31), got -1}}
      compiler_params = #pallas.compiler_params<tpu = <collective_id = -1>>} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}
