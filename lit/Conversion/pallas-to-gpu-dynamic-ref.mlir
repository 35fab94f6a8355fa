// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -pallas-to-gpu=chip=sm_90a -verify-diagnostics
// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -pallas-to-gpu=chip=gfx942 -verify-diagnostics

// Tests the GPU lowering's refusal of an `any` ref with a dynamic dimension
// (a symbolic array passed whole, !pallas.ref<?x32xf32, any>), which the CPU
// and TPU paths compile (pallas-to-linalg-dynamic-ref.mlir,
// pallas-to-tpu-dynamic-ref.mlir): the reproducer of what is left for the GPU
// (BlockViews::blockView refuses a whole-array block of a symbolic operand).
// python/tests/test_symbolic_matrix.py skips the attention's GPU half on
// this message.

// expected-error @+1 {{'func.func' op input 1 is symbolic and has a whole-array block, which the GPU lowering does not support yet; give it a block shape}}
pallas.kernel @rows(%q: !pallas.ref<16x32xf32>, %k: !pallas.ref<?x32xf32, any>, %o: !pallas.ref<16x32xf32>) {
  %n = pallas.symbol_value "n" : i32
  %i = pallas.program_id 0 : i32
  %c16 = arith.constant 16 : i32
  %s = arith.muli %i, %c16 : i32
  %rows = pallas.iota 0 : tensor<16x32xi32>
  %base = pallas.broadcast_in_dim %s dims [] : i32 -> tensor<16x32xi32>
  %r = arith.addi %base, %rows : tensor<16x32xi32>
  %nb = pallas.broadcast_in_dim %n dims [] : i32 -> tensor<16x32xi32>
  %m = arith.cmpi slt, %r, %nb : tensor<16x32xi32>
  %z = arith.constant dense<0.0> : tensor<16x32xf32>
  %kb = pallas.load %k[%s : 16, 0 : 32] mask %m other %z : !pallas.ref<?x32xf32, any> -> tensor<16x32xf32>
  %qb = pallas.load %q[] : !pallas.ref<16x32xf32> -> tensor<16x32xf32>
  %a = arith.addf %qb, %kb : tensor<16x32xf32>
  pallas.store %o[], %a : !pallas.ref<16x32xf32>, tensor<16x32xf32>
}
func.func @main(%q: tensor<?x32xf32>, %k: tensor<?x32xf32>, %n: index {pallas.symbol = "n"}) -> tensor<?x32xf32> {
  %c16 = arith.constant 16 : index
  %g = arith.ceildivsi %n, %c16 : index
  %o = pallas.call @rows[%g](%q, %k) sizes(%n) {
      grid = array<i64: -1>,
      in_specs = [#pallas.block_spec<[16, 32], (i) -> (i, 0)>, #pallas.block_spec<any>],
      out_specs = [#pallas.block_spec<[16, 32], (i) -> (i, 0)>],
      symbolic = {symbols = {n = {min = 1, max = 65536}},
                  grid = ["cdiv(n, 16)"], inputs = [["n", "32"], ["n", "32"]],
                  outputs = [["n", "32"]]}}
      : (tensor<?x32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  return %o : tensor<?x32xf32>
}
