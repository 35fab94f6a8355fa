// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu="chip=sm_80 print-layouts" -o /dev/null 2>&1 | FileCheck %s
// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -canonicalize -pallas-to-gpu="chip=gfx942 print-layouts" -o /dev/null 2>&1 | FileCheck %s --check-prefix=GFX942

// pallas-to-gpu's print-layouts: the layout assignment's result
// (LayoutAssignment.cpp, DotLayout.cpp) as one remark per tensor result of
// the kernel body after pallas-to-linalg, at the op it was lowered from.

// Tests a dot on a constant zero accumulator whose result is stored and
// summed along its rows: the loads get blocked layouts (4 warps of 32
// lanes on sm_80, 4 wavefronts of 64 on gfx942), the constant and the
// reduction's init are flexible. The summed rows would ask for whole rows
// per warp, which 32 rows cannot give 4 warps of 16-row tiles: the warps
// split 2 x 2 (M and N, DotLayout.cpp) and the dot keeps mma.sync / MFMA;
// the row sum is that layout with dimension 1 sliced away (Derived: the
// lanes and the warps that split the row hold copies).
// CHECK-DAG: :[[@LINE+12]]:8: remark: result 0: Blocked <[32, 32] regs=[1, 2, 4] lanes=[8, 16, 32, 64, 128] warps=[256, 512]>
// CHECK-DAG: :[[@LINE+12]]:8: remark: result 0: Blocked <[32, 32] regs=[1, 2, 4] lanes=[8, 16, 32, 64, 128] warps=[256, 512]>
// CHECK-DAG: :[[@LINE+12]]:8: remark: result 0: flexible
// CHECK-DAG: :[[@LINE+12]]:8: remark: result 0: MmaC <[32, 32] regs=[1, 256, 8] lanes=[2, 4, 32, 64, 128] warps=[512, 16]>
// CHECK-DAG: :[[@LINE+13]]:8: remark: result 0: Derived <[32] regs=[8] lanes=[0, 0, 1, 2, 4] warps=[16, 0]>
// GFX942-DAG: :[[@LINE+7]]:8: remark: result 0: Blocked <[32, 32] regs=[1, 2, 4] lanes=[8, 16, 32, 64, 128, 256] warps=[512, 0]>
// GFX942-DAG: :[[@LINE+7]]:8: remark: result 0: Blocked <[32, 32] regs=[1, 2, 4] lanes=[8, 16, 32, 64, 128, 256] warps=[512, 0]>
// GFX942-DAG: :[[@LINE+7]]:8: remark: result 0: flexible
// GFX942-DAG: :[[@LINE+7]]:8: remark: result 0: MfmaC <[32, 32] regs=[32, 64] lanes=[1, 2, 4, 8, 128, 256] warps=[512, 16]>
// GFX942-DAG: :[[@LINE+8]]:8: remark: result 0: Derived <[32] regs=[1, 2] lanes=[0, 0, 0, 0, 4, 8] warps=[16, 0]>
pallas.kernel @dot_reduce_kernel(%a: !pallas.ref<32x32xbf16>, %b: !pallas.ref<32x32xbf16>,
                                 %o: !pallas.ref<32x32xf32>, %s: !pallas.ref<32xf32>) {
  %x = pallas.load %a[] : !pallas.ref<32x32xbf16> -> tensor<32x32xbf16>
  %y = pallas.load %b[] : !pallas.ref<32x32xbf16> -> tensor<32x32xbf16>
  %z = arith.constant dense<0.0> : tensor<32x32xf32>
  %d = pallas.dot %x, %y, %z : tensor<32x32xbf16>, tensor<32x32xbf16>, tensor<32x32xf32> -> tensor<32x32xf32>
  pallas.store %o[], %d : !pallas.ref<32x32xf32>, tensor<32x32xf32>
  %r = pallas.reduce sum %d dims [1] : tensor<32x32xf32> -> tensor<32xf32>
  pallas.store %s[], %r : !pallas.ref<32xf32>, tensor<32xf32>
}
func.func @main(%a: tensor<32x32xbf16>, %b: tensor<32x32xbf16>) -> (tensor<32x32xf32>, tensor<32xf32>) {
  %o, %s = pallas.call @dot_reduce_kernel(%a, %b) {grid = array<i64: 1>, name = "dot_reduce",
      in_specs = [#pallas.block_spec<[32, 32], (d0) -> (0, 0)>, #pallas.block_spec<[32, 32], (d0) -> (0, 0)>],
      out_specs = [#pallas.block_spec<[32, 32], (d0) -> (0, 0)>, #pallas.block_spec<[32], (d0) -> (0)>]}
      : (tensor<32x32xbf16>, tensor<32x32xbf16>) -> (tensor<32x32xf32>, tensor<32xf32>)
  return %o, %s : tensor<32x32xf32>, tensor<32xf32>
}
