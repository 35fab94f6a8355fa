// RUN: pallasc-opt %s --pallas-to-cpu-pipeline | FileCheck %s

// Tests that the CPU pipeline takes a kernel, its call wrapper and an index
// map all the way to the LLVM dialect, with C-interface entry points for the
// kernel (grid arguments, then memref descriptors) and the index map.

// CHECK-NOT: pallas.
// CHECK-NOT: func.func
// CHECK-DAG: llvm.func @_mlir_ciface_gather(%{{.+}}: i32, %{{.+}}: i32, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr)
// CHECK-DAG: llvm.func @_mlir_ciface_row_map(%{{.+}}: !llvm.ptr, %{{.+}}: i32, %{{.+}}: !llvm.ptr)
// CHECK-DAG: llvm.func @gather(
// CHECK-DAG: llvm.func @row_map(

func.func @row_map(%i: i32, %idx: !pallas.ref<4xi32, smem>) -> (i32, i32) {
  %row = pallas.load %idx[%i] : !pallas.ref<4xi32, smem> -> i32
  %c0 = arith.constant 0 : i32
  return %row, %c0 : i32, i32
}

pallas.kernel @gather(%idx: !pallas.ref<4xi32, smem>, %row: !pallas.ref<8xf32>,
                      %o: !pallas.ref<8xf32>) {
  %v = pallas.load %row[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %e = math.exp %v : tensor<8xf32>
  pallas.store %o[], %e : !pallas.ref<8xf32>, tensor<8xf32>
}

func.func @main(%idx: tensor<4xi32>, %t: tensor<16x8xf32>) -> tensor<4x8xf32> {
  %o = pallas.call @gather(%idx, %t) {grid = array<i64: 4>, num_scalar_prefetch = 1,
      in_specs = [#pallas.block_spec<[squeezed, 8], @row_map>],
      out_specs = [#pallas.block_spec<[squeezed, 8], (i) -> (i, 0)>]}
      : (tensor<4xi32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
