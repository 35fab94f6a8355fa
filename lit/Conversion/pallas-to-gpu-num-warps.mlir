// RUN: pallasc-opt %s -pallas-gpu-prepare -pallas-to-linalg -pallas-to-gpu="chip=sm_80 num-warps=3" -verify-diagnostics

// The lowering checks the warp count it is given (--num-warps overrides the
// call's compiler_params.gpu.num_warps, which the attribute verifies).
// expected-error @+1 {{num_warps is 3; the CUDA lowering needs a power of two in [1, 32]}}
pallas.kernel @w3_kernel(%x: !pallas.ref<128xf32>, %o: !pallas.ref<128xf32>) {
  %v = pallas.load %x[] : !pallas.ref<128xf32> -> tensor<128xf32>
  pallas.store %o[], %v : !pallas.ref<128xf32>, tensor<128xf32>
}
func.func @main(%x: tensor<512xf32>) -> tensor<512xf32> {
  %o = pallas.call @w3_kernel(%x) {grid = array<i64: 4>, name = "w3",
      compiler_params = #pallas.compiler_params<gpu = <num_warps = 4>>,
      in_specs = [#pallas.block_spec<[128], (d0) -> (d0)>],
      out_specs = [#pallas.block_spec<[128], (d0) -> (d0)>]}
      : (tensor<512xf32>) -> tensor<512xf32>
  return %o : tensor<512xf32>
}
