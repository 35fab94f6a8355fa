// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -pallas-to-gpu=chip=sm_80 -verify-diagnostics

// Tests that a block dimension that is not a power of two is rejected with
// the shape, as Pallas' Triton lowering rejects it.
pallas.kernel @odd_kernel(%x: !pallas.ref<100xf32>, %o: !pallas.ref<100xf32>) {
  // expected-error @+1 {{works on 'tensor<100xf32>'; the GPU lowering needs power-of-two block dimensions}}
  %v = pallas.load %x[] : !pallas.ref<100xf32> -> tensor<100xf32>
  pallas.store %o[], %v : !pallas.ref<100xf32>, tensor<100xf32>
}
func.func @main(%x: tensor<400xf32>) -> tensor<400xf32> {
  %o = pallas.call @odd_kernel(%x) {grid = array<i64: 4>, name = "odd",
      in_specs = [#pallas.block_spec<[100], (d0) -> (d0)>],
      out_specs = [#pallas.block_spec<[100], (d0) -> (d0)>]}
      : (tensor<400xf32>) -> tensor<400xf32>
  return %o : tensor<400xf32>
}

// -----

// Tests that num_warps must be a power of two (the compiler_params
// attribute's verifier; --num-warps is checked by the lowering, in
// pallas-to-gpu-malformed.mlir).
pallas.kernel @w3_kernel(%x: !pallas.ref<128xf32>, %o: !pallas.ref<128xf32>) {
  %v = pallas.load %x[] : !pallas.ref<128xf32> -> tensor<128xf32>
  pallas.store %o[], %v : !pallas.ref<128xf32>, tensor<128xf32>
}
func.func @main(%x: tensor<512xf32>) -> tensor<512xf32> {
  %o = pallas.call @w3_kernel(%x) {grid = array<i64: 4>, name = "w3",
      // expected-error @+1 {{compiler_params.gpu.num_warps must be a power of 2 in [1, 32], got 3}}
      compiler_params = #pallas.compiler_params<gpu = <num_warps = 3>>,
      in_specs = [#pallas.block_spec<[128], (d0) -> (d0)>],
      out_specs = [#pallas.block_spec<[128], (d0) -> (d0)>]}
      : (tensor<512xf32>) -> tensor<512xf32>
  return %o : tensor<512xf32>
}

// -----

// Tests that printing a block is rejected (gpu.printf prints scalars).
pallas.kernel @print_kernel(%x: !pallas.ref<128xf32>, %o: !pallas.ref<128xf32>) {
  %v = pallas.load %x[] : !pallas.ref<128xf32> -> tensor<128xf32>
  // expected-error @+1 {{prints a block ('tensor<128xf32>'); the GPU lowering prints scalars only}}
  pallas.debug_print "v = {}" %v : tensor<128xf32>
  pallas.store %o[], %v : !pallas.ref<128xf32>, tensor<128xf32>
}
func.func @main(%x: tensor<128xf32>) -> tensor<128xf32> {
  %o = pallas.call @print_kernel(%x) {grid = array<i64: 1>, name = "print",
      in_specs = [#pallas.block_spec<[128], (d0) -> (d0)>],
      out_specs = [#pallas.block_spec<[128], (d0) -> (d0)>]}
      : (tensor<128xf32>) -> tensor<128xf32>
  return %o : tensor<128xf32>
}

// -----

// Tests that pallas.gather is refused by name on the GPU targets.

pallas.kernel @k(%t: !pallas.ref<32x128xf32>, %o: !pallas.ref<8x128xf32>) {
  %r = pallas.iota 0 : tensor<8x128xi32>
  %c = pallas.iota 1 : tensor<8x128xi32>
  // expected-error @+1 {{'pallas.gather' op has no GPU lowering yet (a gather at index vectors); compile it for the CPU}}
  %v = pallas.gather %t[%r, %c] : !pallas.ref<32x128xf32>, tensor<8x128xi32>, tensor<8x128xi32> -> tensor<8x128xf32>
  pallas.store %o[], %v : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @main(%x: tensor<32x128xf32>) -> tensor<32x128xf32> {
  %0 = pallas.call @k(%x) {grid = array<i64: 4>,
      in_specs = [#pallas.block_spec<[32, 128], (d0) -> (0, 0)>],
      out_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>]}
      : (tensor<32x128xf32>) -> tensor<32x128xf32>
  return %0 : tensor<32x128xf32>
}
