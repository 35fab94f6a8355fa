// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare | FileCheck %s

// Tests that the call is recorded on the module, that atomics become
// memref atomics on the ref (seen as a memref) with interpret mode's
// clamping and bounds check, that a divisibility hint becomes a mask and
// that scalar prints become gpu.printf.
// CHECK: module attributes {pallas.gpu.call = #pallas.gpu_call<kernel = @k, name = "k", grid = [1],
// CHECK-SAME: in_specs = [#pallas.block_spec<[128], (d0) -> (d0)>, #pallas.block_spec<any>], out_specs = [#pallas.block_spec<any>], input_output_aliases = [1, 0],
// CHECK-SAME: input_types = [tensor<128xf32>, tensor<16xi32>], output_types = [tensor<16xi32>]>}
// CHECK-LABEL: pallas.kernel @k(
// CHECK-SAME: %{{.+}}: !pallas.ref<128xf32>, %{{.+}}: !pallas.ref<16xi32, any>, %[[O:.+]]: !pallas.ref<16xi32, any>)
// CHECK: %[[PID:.+]] = pallas.program_id 0 : i32
// CHECK: %[[MASK:.+]] = arith.constant -64 : i32
// CHECK: %[[S:.+]] = arith.andi %[[PID]], %[[MASK]] : i32
// CHECK: %[[M:.+]] = builtin.unrealized_conversion_cast %[[O]] : !pallas.ref<16xi32, any> to memref<16xi32>
// CHECK: %[[I:.+]] = arith.index_cast %[[S]] : i32 to index
// CHECK: %[[LO:.+]] = arith.maxsi %[[I]]
// CHECK: %[[IDX:.+]] = arith.minsi %[[LO]]
// CHECK: %[[OLD:.+]] = scf.if %{{.+}} -> (i32) {
// CHECK: memref.atomic_rmw addi %{{.+}}, %[[M]][%[[IDX]]] : (i32, memref<16xi32>) -> i32
// CHECK: } else {
// CHECK: arith.constant -2147483648 : i32
// CHECK: gpu.printf "i = %d old = %d f = %f\0A", %[[PID]], %[[OLD]], %{{.+}} : i32, i32, f32
// CHECK: memref.generic_atomic_rmw %{{.+}}[%{{.+}}] : memref<16xi32> {
// CHECK: arith.cmpi eq
// CHECK: arith.select
// CHECK: memref.atomic_yield
// CHECK-NOT: pallas.atomic
// CHECK-NOT: pallas.debug_print
// CHECK-NOT: pallas.multiple_of
pallas.kernel @k(%x: !pallas.ref<128xf32>, %h: !pallas.ref<16xi32, any>, %o: !pallas.ref<16xi32, any>) {
  %c0 = arith.constant 0 : i32
  %i = pallas.program_id 0 : i32
  %s = pallas.multiple_of %i, 64 : i32
  %one = arith.constant 1 : i32
  %old = pallas.atomic_rmw add %o[%s], %one : !pallas.ref<16xi32, any>, i32
  %f = arith.constant 2.0 : f32
  pallas.debug_print "i = {} old = {} f = {}" %i, %old, %f : i32, i32, f32
  %c = pallas.atomic_cas %o[%c0], %c0, %one : !pallas.ref<16xi32, any>, i32
}
func.func @main(%x: tensor<128xf32>, %h: tensor<16xi32>) -> tensor<16xi32> {
  %o = pallas.call @k(%x, %h) {grid = array<i64: 1>, name = "k",
      in_specs = [#pallas.block_spec<[128], (d0) -> (d0)>, #pallas.block_spec<any>],
      out_specs = [#pallas.block_spec<any>], input_output_aliases = array<i64: 1, 0>}
      : (tensor<128xf32>, tensor<16xi32>) -> tensor<16xi32>
  return %o : tensor<16xi32>
}

// -----

// Tests that a block-valued atomic becomes a loop over its lanes, each a
// scalar atomic (masked lanes read, out-of-bounds lanes are dropped).
// CHECK-LABEL: pallas.kernel @kv(
// CHECK: scf.for
// CHECK: tensor.extract
// CHECK: scf.if
// CHECK: scf.if
// CHECK: memref.atomic_rmw maximumf
// CHECK: memref.load
// CHECK: tensor.insert
pallas.kernel @kv(%v: !pallas.ref<8xf32>, %m: !pallas.ref<8xi1>, %oin: !pallas.ref<8xf32, any>,
                  %o: !pallas.ref<8xf32, any>) {
  %x = pallas.load %v[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %k = pallas.load %m[] : !pallas.ref<8xi1> -> tensor<8xi1>
  %old = pallas.atomic_rmw max %o[0 : 8], %x mask %k : !pallas.ref<8xf32, any>, tensor<8xf32>
}
func.func @main(%v: tensor<8xf32>, %m: tensor<8xi1>, %o: tensor<8xf32>) -> tensor<8xf32> {
  %r = pallas.call @kv(%v, %m, %o) {grid = array<i64: 1>, name = "kv",
      in_specs = [#pallas.block_spec<[8], (d0) -> (d0)>, #pallas.block_spec<[8], (d0) -> (d0)>,
                  #pallas.block_spec<any>],
      out_specs = [#pallas.block_spec<any>], input_output_aliases = array<i64: 2, 0>}
      : (tensor<8xf32>, tensor<8xi1>, tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// Tests that every field of the call the lowering reads is recorded: grid
// names, scalar prefetch, scratch and compiler params (and that the call's
// other attributes, such as its cost estimate, are not).
// CHECK: module attributes {pallas.gpu.call = #pallas.gpu_call<kernel = @full, grid = [4, 2], grid_names = ["i", "k"], num_scalar_prefetch = 1,
// CHECK-SAME: in_specs = [#pallas.block_spec<[8], (d0, d1) -> (d0)>], out_specs = [#pallas.block_spec<[8], (d0, d1) -> (d0)>],
// CHECK-SAME: compiler_params = #pallas.compiler_params<gpu = <num_warps = 2>, tpu = <dimension_semantics = [parallel, arbitrary]>>,
// CHECK-SAME: scratch = [!pallas.ref<8xf32, vmem>], input_types = [tensor<4xi32>, tensor<32xf32>], output_types = [tensor<32xf32>]>}
// CHECK-LABEL: pallas.kernel @full(
pallas.kernel @full(%idx: !pallas.ref<4xi32, smem>, %x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>, %acc: !pallas.ref<8xf32, vmem>) {
}
func.func @full_main(%idx: tensor<4xi32>, %x: tensor<32xf32>) -> tensor<32xf32> {
  %o = pallas.call @full(%idx, %x) {grid = array<i64: 4, 2>, grid_names = ["i", "k"],
      num_scalar_prefetch = 1,
      in_specs = [#pallas.block_spec<[8], (i, k) -> (i)>],
      out_specs = [#pallas.block_spec<[8], (i, k) -> (i)>],
      scratch = [!pallas.ref<8xf32, vmem>],
      cost_estimate = #pallas.cost<flops = 1, bytes_accessed = 2, transcendentals = 0>,
      compiler_params = #pallas.compiler_params<gpu = <num_warps = 2>,
          tpu = <dimension_semantics = [parallel, arbitrary]>>}
      : (tensor<4xi32>, tensor<32xf32>) -> tensor<32xf32>
  return %o : tensor<32xf32>
}
