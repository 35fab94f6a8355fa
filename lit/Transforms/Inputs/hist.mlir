// A kernel that closes over a ref: a histogram of its input's values kept in
// a module-level counter array, plus a copy of the input as its output.
pallas.ref_global @counts : !pallas.ref<16xi32>

pallas.kernel @hist_kernel(%x_ref: !pallas.ref<8xi32>, %o_ref: !pallas.ref<8xi32>) {
  %counts = pallas.get_global @counts : !pallas.ref<16xi32>
  %x = pallas.load %x_ref[] : !pallas.ref<8xi32> -> tensor<8xi32>
  %one = arith.constant dense<1> : tensor<8xi32>
  %c0 = arith.constant 0 : i32
  %first = pallas.load %x_ref[0] : !pallas.ref<8xi32> -> i32
  %c1 = arith.constant 1 : i32
  %old = pallas.atomic_rmw add %counts[%first], %c1 : !pallas.ref<16xi32>, i32
  pallas.store %o_ref[], %x : !pallas.ref<8xi32>, tensor<8xi32>
}
