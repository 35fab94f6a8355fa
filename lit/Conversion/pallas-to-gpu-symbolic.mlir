// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu=chip=sm_80 -canonicalize -cse | FileCheck %s
// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu=chip=gfx942 -canonicalize -cse | FileCheck %s --check-prefix=GFX942

// This file: a symbolic call (docs/gridspec.md#symbols, issue 36) on the GPU
// (KernelFunction.cpp, BlockViews.cpp). Each symbol is an i32 kernel
// parameter after the dynamic grid bounds (the launch record's `symbol`
// params); a symbolic operand's argument is a pointer (its dynamic dims
// given as 1, for the bare-pointer calling convention) that the kernel
// reinterprets at the sizes its shape expressions give. Blocks are clamped
// and masked at the dynamic edge exactly as at a static ragged one: loads
// past it read an index made safe, stores past it are dropped.

// Tests rows = n (grid cdiv(n, 8), 8-row blocks): the block start is
// clamped to cdiv(n, 8) * 8 - 8, each group's row is compared with n, and
// the stores are under that check; the 16-byte vector accesses stay.
// CHECK-LABEL: gpu.func @rmsnorm(
// CHECK-SAME: %[[X:[^:]+]]: memref<1x128xf32>, %{{[^:]+}}: memref<128xf32>, %[[O:[^:]+]]: memref<1x128xf32>, %{{[^:]+}}: i32, %[[NARG:[^:]+]]: i32)
// CHECK-SAME: params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, inputs[1]>, #pallas.gpu_param<pointer, outputs[0]>, #pallas.gpu_param<i32, grid_bounds[0], axis = 0>, #pallas.gpu_param<symbol, symbols[0]>]
// CHECK: %[[N:.+]] = arith.index_castui %[[NARG]] : i32 to index
// CHECK: %[[XV:.+]] = memref.reinterpret_cast %[[X]] to offset: [0], sizes: [%[[N]], 128], strides: [128, 1] : memref<1x128xf32> to memref<?x128xf32>
// CHECK: %[[OV:.+]] = memref.reinterpret_cast %[[O]] to offset: [0], sizes: [%[[N]], 128], strides: [128, 1] : memref<1x128xf32> to memref<?x128xf32>
// CHECK: %[[CD:.+]] = arith.ceildivsi %[[N]], %c8 : index
// CHECK: %[[T:.+]] = arith.muli %[[CD]], %c8 : index
// CHECK: %[[LAST:.+]] = arith.subi %[[T]], %c8 : index
// CHECK: arith.minsi %{{.+}}, %[[LAST]] : index
// CHECK: memref.collapse_shape %[[XV]]
// CHECK: %[[OK:.+]] = arith.cmpi slt, %{{.+}}, %[[N]] : index
// CHECK: %[[SAFE:.+]] = arith.select %[[OK]]
// CHECK: vector.load %{{.+}}[%[[SAFE]]] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
// CHECK: memref.collapse_shape %[[OV]]
// CHECK: scf.if %[[OK]] {
// CHECK: vector.store %{{.+}} {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
// GFX942-LABEL: gpu.func @rmsnorm(
// GFX942-SAME: params = [#pallas.gpu_param<pointer, inputs[0]>, #pallas.gpu_param<pointer, inputs[1]>, #pallas.gpu_param<pointer, outputs[0]>, #pallas.gpu_param<i32, grid_bounds[0], axis = 0>, #pallas.gpu_param<symbol, symbols[0]>]
// GFX942: memref.reinterpret_cast
// GFX942: arith.cmpi slt
pallas.kernel @rmsnorm(%x: !pallas.ref<8x128xf32>, %w: !pallas.ref<128xf32>,
                       %o: !pallas.ref<8x128xf32>) {
  %a = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %b = pallas.load %w[] : !pallas.ref<128xf32> -> tensor<128xf32>
  %bb = pallas.broadcast_in_dim %b dims [1] : tensor<128xf32> -> tensor<8x128xf32>
  %c = arith.mulf %a, %bb : tensor<8x128xf32>
  pallas.store %o[], %c : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @main(%x: tensor<?x128xf32>, %w: tensor<128xf32>,
                %n: index {pallas.symbol = "n"}) -> tensor<?x128xf32> {
  %c8 = arith.constant 8 : index
  %g = arith.ceildivsi %n, %c8 : index
  %o = pallas.call @rmsnorm[%g](%x, %w) sizes(%n) {
      grid = array<i64: -1>,
      in_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>,
                  #pallas.block_spec<[128], (i) -> (0)>],
      out_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      symbolic = {symbols = {n = {min = 1, max = 1048576, multiple_of = 1}},
                  grid = ["cdiv(n, 8)"],
                  inputs = [["n", "128"], ["128"]],
                  outputs = [["n", "128"]]}}
      : (tensor<?x128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
  return %o : tensor<?x128xf32>
}

// -----

// Tests the specialization: n declared a multiple of 8 (the block's rows)
// makes every block lie inside the array, so no access compares with n and
// the stores are unguarded.
// CHECK-LABEL: gpu.func @rmsnorm8(
// CHECK: %[[N:.+]] = arith.index_castui
// CHECK: memref.reinterpret_cast %{{.+}} to offset: [0], sizes: [%[[N]], 128]
// CHECK-NOT: arith.cmpi
// CHECK-NOT: scf.if
// CHECK: vector.store
// CHECK-NOT: arith.cmpi
// CHECK: gpu.return
pallas.kernel @rmsnorm8(%x: !pallas.ref<8x128xf32>, %o: !pallas.ref<8x128xf32>) {
  %a = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %c = arith.mulf %a, %a : tensor<8x128xf32>
  pallas.store %o[], %c : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @main(%x: tensor<?x128xf32>,
                %n: index {pallas.symbol = "n"}) -> tensor<?x128xf32> {
  %c8 = arith.constant 8 : index
  %g = arith.divsi %n, %c8 : index
  %o = pallas.call @rmsnorm8[%g](%x) sizes(%n) {
      grid = array<i64: -1>,
      in_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      out_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      symbolic = {symbols = {n = {min = 8, multiple_of = 8}},
                  grid = ["n // 8"],
                  inputs = [["n", "128"]],
                  outputs = [["n", "128"]]}}
      : (tensor<?x128xf32>) -> tensor<?x128xf32>
  return %o : tensor<?x128xf32>
}

// -----

// Tests a symbolic inner dimension (columns = m): the row pitch is m, so
// accesses index the 2-D memref (no flattening), and both edges are masked.
// CHECK-LABEL: gpu.func @cols(
// CHECK: %[[M:.+]] = arith.index_castui
// CHECK: memref.reinterpret_cast %{{.+}} to offset: [0], sizes: [16, %[[M]]], strides: [%[[M]], 1] : memref<16x1xf32> to memref<16x?xf32>
// CHECK-NOT: memref.collapse_shape
// CHECK: arith.cmpi slt, %{{.+}}, %[[M]] : index
// CHECK: memref.load %{{.+}} : memref<16x?xf32>
// CHECK: memref.store %{{.+}} : memref<16x?xf32>
pallas.kernel @cols(%x: !pallas.ref<16x32xf32>, %o: !pallas.ref<16x32xf32>) {
  %a = pallas.load %x[] : !pallas.ref<16x32xf32> -> tensor<16x32xf32>
  %c = arith.addf %a, %a : tensor<16x32xf32>
  pallas.store %o[], %c : !pallas.ref<16x32xf32>, tensor<16x32xf32>
}
func.func @main(%x: tensor<16x?xf32>,
                %m: index {pallas.symbol = "m"}) -> tensor<16x?xf32> {
  %c32 = arith.constant 32 : index
  %g = arith.ceildivsi %m, %c32 : index
  %o = pallas.call @cols[%g](%x) sizes(%m) {
      grid = array<i64: -1>,
      in_specs = [#pallas.block_spec<[16, 32], (j) -> (0, j)>],
      out_specs = [#pallas.block_spec<[16, 32], (j) -> (0, j)>],
      symbolic = {symbols = {m = {min = 1, multiple_of = 1}},
                  grid = ["cdiv(m, 32)"],
                  inputs = [["16", "m"]],
                  outputs = [["16", "m"]]}}
      : (tensor<16x?xf32>) -> tensor<16x?xf32>
  return %o : tensor<16x?xf32>
}
