// RUN: pallasc-opt %s -pallas-vmap="axis-size=3 in-axes=0,-1" -pallas-jvp | FileCheck %s --check-prefixes=CHECK,VJ
// RUN: pallasc-opt %s -pallas-jvp -pallas-vmap="axis-size=3 in-axes=0,-1,0,-1" | FileCheck %s --check-prefixes=CHECK,JV
// RUN: pallasc-opt %s -pallas-vmap="axis-size=1 in-axes=0,-1" -pallas-jvp | FileCheck %s --check-prefix=SIZE1

// Tests that pallas-vmap and pallas-jvp compose in both orders, as in JAX:
// the differentiated kernel is the same (vmap leaves the kernel alone and
// jvp keeps vmapped_dims), the batched call takes (primals, tangents) with
// the tangent of each input batched like its primal, the cost is scaled by
// both (x3 x2), and the float scratch accumulator gets its tangent scratch.

// CHECK-LABEL: pallas.kernel @scale_rows_jvp
// CHECK-SAME: (%[[X:.+]]: !pallas.ref<8x128xf32>, %[[W:.+]]: !pallas.ref<128xf32>, %[[DX:.+]]: !pallas.ref<8x128xf32>, %[[DW:.+]]: !pallas.ref<128xf32>, %[[O:.+]]: !pallas.ref<8x128xf32>, %[[DO:.+]]: !pallas.ref<8x128xf32>, %[[ACC:.+]]: !pallas.ref<8x128xf32, vmem>, %[[DACC:.+]]: !pallas.ref<8x128xf32, vmem>)
// CHECK: pallas.program_id 0
// CHECK: %[[P:.+]] = arith.mulf
// CHECK: %[[DP:.+]] = arith.addf
// CHECK: pallas.store %[[ACC]][], %[[P]]
// CHECK: pallas.store %[[DACC]][], %[[DP]]
// CHECK: %[[R:.+]] = pallas.load %[[ACC]][]
// CHECK: %[[DR:.+]] = pallas.load %[[DACC]][]
// CHECK: %[[E:.+]] = math.exp %[[R]]
// CHECK: %[[DE:.+]] = arith.mulf %[[DR]], %[[E]]
// CHECK: pallas.store %[[O]][], %[[E]]
// CHECK: pallas.store %[[DO]][], %[[DE]]
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[MX:.+]]: tensor<3x32x128xf32>, %[[MW:.+]]: tensor<128xf32>, %[[MDX:.+]]: tensor<3x32x128xf32>, %[[MDW:.+]]: tensor<128xf32>) -> (tensor<3x32x128xf32>, tensor<3x32x128xf32>)
// CHECK: %[[RES:.+]]:2 = pallas.call @scale_rows_jvp(%[[MX]], %[[MW]], %[[MDX]], %[[MDW]])
// CHECK-SAME: cost_estimate = #pallas.cost<flops = 60, bytes_accessed = 120, transcendentals = 180>
// CHECK-SAME: grid = array<i64: 3, 4>, grid_names = ["", "i"]
// CHECK-SAME: in_specs = [#pallas.block_spec<[squeezed, 8, 128], (d0, d1) -> (d0, d1, 0)>, #pallas.block_spec<[128], (d0, d1) -> (0)>, #pallas.block_spec<[squeezed, 8, 128], (d0, d1) -> (d0, d1, 0)>, #pallas.block_spec<[128], (d0, d1) -> (0)>]
// CHECK-SAME: out_specs = [#pallas.block_spec<[squeezed, 8, 128], (d0, d1) -> (d0, d1, 0)>, #pallas.block_spec<[squeezed, 8, 128], (d0, d1) -> (d0, d1, 0)>]
// CHECK-SAME: scratch = [!pallas.ref<8x128xf32, vmem>, !pallas.ref<8x128xf32, vmem>]
// VJ-SAME: transforms = ["vmap", "jvp"]
// JV-SAME: transforms = ["jvp", "vmap"]
// CHECK-SAME: vmapped_dims = array<i64: 0>
// CHECK: return %[[RES]]#0, %[[RES]]#1

// With axis_size 1, vmap squeezes and re-expands the batch axis with
// pallas.reshape in @main; jvp differentiates those reshapes too.

// SIZE1-LABEL: func.func @main
// SIZE1-SAME: (%[[X:.+]]: tensor<1x32x128xf32>, %[[W:.+]]: tensor<128xf32>, %[[DX:.+]]: tensor<1x32x128xf32>, %[[DW:.+]]: tensor<128xf32>)
// SIZE1: %[[SX:.+]] = pallas.reshape %[[X]] : tensor<1x32x128xf32> -> tensor<32x128xf32>
// SIZE1: %[[SDX:.+]] = pallas.reshape %[[DX]] : tensor<1x32x128xf32> -> tensor<32x128xf32>
// SIZE1: %[[R:.+]]:2 = pallas.call @scale_rows_jvp(%[[SX]], %[[W]], %[[SDX]], %[[DW]])
// SIZE1-SAME: transforms = ["vmap", "jvp"]
// SIZE1: %[[O:.+]] = pallas.reshape %[[R]]#0 : tensor<32x128xf32> -> tensor<1x32x128xf32>
// SIZE1: %[[DO:.+]] = pallas.reshape %[[R]]#1 : tensor<32x128xf32> -> tensor<1x32x128xf32>
// SIZE1: return %[[O]], %[[DO]]

pallas.kernel @scale_rows(%x: !pallas.ref<8x128xf32>, %w: !pallas.ref<128xf32>,
                          %o: !pallas.ref<8x128xf32>,
                          %acc: !pallas.ref<8x128xf32, vmem>) {
  %i = pallas.program_id 0 : i32
  %v = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %s = pallas.load %w[] : !pallas.ref<128xf32> -> tensor<128xf32>
  %sb = pallas.broadcast_in_dim %s dims [1] : tensor<128xf32> -> tensor<8x128xf32>
  %p = arith.mulf %v, %sb : tensor<8x128xf32>
  pallas.store %acc[], %p : !pallas.ref<8x128xf32, vmem>, tensor<8x128xf32>
  %r = pallas.load %acc[] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
  %e = math.exp %r : tensor<8x128xf32>
  pallas.store %o[], %e : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @main(%x: tensor<32x128xf32>, %w: tensor<128xf32>) -> tensor<32x128xf32> {
  %o = pallas.call @scale_rows(%x, %w) {
      grid = array<i64: 4>, grid_names = ["i"],
      in_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>,
                  #pallas.block_spec<[128], (i) -> (0)>],
      out_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      scratch = [!pallas.ref<8x128xf32, vmem>],
      cost_estimate = #pallas.cost<flops = 10, bytes_accessed = 20, transcendentals = 30>}
      : (tensor<32x128xf32>, tensor<128xf32>) -> tensor<32x128xf32>
  return %o : tensor<32x128xf32>
}
