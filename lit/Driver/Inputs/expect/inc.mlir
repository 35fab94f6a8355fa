// An integer output for the --expect tests: o = x + 1 on 8-element i32 blocks.
pallas.kernel @inc(%x: !pallas.ref<8xi32>, %o: !pallas.ref<8xi32>) {
  %v = pallas.load %x[] : !pallas.ref<8xi32> -> tensor<8xi32>
  %one = arith.constant dense<1> : tensor<8xi32>
  %w = arith.addi %v, %one : tensor<8xi32>
  pallas.store %o[], %w : !pallas.ref<8xi32>, tensor<8xi32>
}
