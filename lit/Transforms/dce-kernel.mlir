// RUN: pallasc-opt %s -split-input-file -pallas-dce | FileCheck %s

// pallas-dce without used-outputs: every result of the wrapper is used; the
// kernel's dead work goes (loads read their ref, stores write it: dead loads
// and pure ops are erased, stores and debug prints stay).

// Tests kernel-body DCE: a dead load, dead arithmetic and a dead scf.if whose
// body is pure go; the stores, the debug print and the loop that stores stay.

// CHECK-LABEL: pallas.kernel @body(
// CHECK-SAME: %[[X:[^:]+]]: !pallas.ref<8xf32>, %[[O:[^:]+]]: !pallas.ref<8xf32>)
// CHECK-NEXT: %[[A:.+]] = pallas.load %[[X]][]
// CHECK-NEXT: pallas.debug_print "x = {}" %[[A]]
// CHECK-NOT: math.exp
// CHECK-NOT: scf.if
// CHECK: scf.for
// CHECK-NEXT: pallas.store %[[O]][], %[[A]]
// CHECK-NEXT: }
// CHECK-NEXT: }
pallas.kernel @body(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  %a = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %again = pallas.load %x[0 : 4] : !pallas.ref<8xf32> -> tensor<4xf32>
  %e = math.exp %a : tensor<8xf32>
  %t = arith.constant true
  scf.if %t {
    %n = arith.negf %e : tensor<8xf32>
  }
  pallas.debug_print "x = {}" %a : tensor<8xf32>
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c2 step %c1 {
    pallas.store %o[], %a : !pallas.ref<8xf32>, tensor<8xf32>
  }
}

// CHECK-LABEL: func.func @main(
// CHECK: pallas.call @body(
// CHECK-SAME: transforms = ["dce"]
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @body(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
      out_specs = [#pallas.block_spec<[8]>]} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that an input the kernel never reads is dropped from the call and the
// kernel (a scalar-prefetch operand, which index maps may read, stays).

// CHECK-LABEL: pallas.kernel @ignores(
// CHECK-SAME: %{{[^:]+}}: !pallas.ref<2xi32, smem>, %[[Y:[^:]+]]: !pallas.ref<8xf32>, %[[O:[^:]+]]: !pallas.ref<8xf32>)
pallas.kernel @ignores(%idx: !pallas.ref<2xi32, smem>, %x: !pallas.ref<8xf32>,
                       %y: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  %a = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %b = pallas.load %y[] : !pallas.ref<8xf32> -> tensor<8xf32>
  pallas.store %o[], %b : !pallas.ref<8xf32>, tensor<8xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[IDX:.+]]: tensor<2xi32>, %{{.+}}: tensor<8xf32>, %[[Y:.+]]: tensor<8xf32>)
// CHECK: pallas.call @ignores(%[[IDX]], %[[Y]])
// CHECK-SAME: in_specs = [#pallas.block_spec<[8], (d0) -> (d0)>]
// CHECK-SAME: : (tensor<2xi32>, tensor<8xf32>) -> tensor<8xf32>
func.func @main(%idx: tensor<2xi32>, %x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @ignores(%idx, %x, %y) {grid = array<i64: 1>, num_scalar_prefetch = 1,
      in_specs = [#pallas.block_spec<[8], (i) -> (0)>, #pallas.block_spec<[8], (i) -> (i)>],
      out_specs = [#pallas.block_spec<[8]>]} : (tensor<2xi32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that a call output nothing uses is dropped even without used-outputs.

// CHECK-LABEL: func.func @main(
// CHECK: %[[O:.+]] = pallas.call @two(
// CHECK-SAME: -> tensor<8xf32>
// CHECK: return %[[O]]
pallas.kernel @two(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>, %p: !pallas.ref<8xf32>) {
  %a = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  pallas.store %o[], %a : !pallas.ref<8xf32>, tensor<8xf32>
  pallas.store %p[], %a : !pallas.ref<8xf32>, tensor<8xf32>
}
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o:2 = pallas.call @two(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
      out_specs = [#pallas.block_spec<[8]>, #pallas.block_spec<[8]>]}
      : (tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
  return %o#0 : tensor<8xf32>
}

// -----

// Tests that DMAs stay (they write their dst and semaphore) while a dead load
// goes, and that the `any` input they read stays an operand of the call.

// CHECK-LABEL: pallas.kernel @dma(
// CHECK-SAME: %[[X:[^:]+]]: !pallas.ref<32x128xf32, any>, %[[O:[^:]+]]: !pallas.ref<8x128xf32>, %[[BUF:[^:]+]]: !pallas.ref<8x128xf32, vmem>, %[[SEM:[^:]+]]: !pallas.ref<2xi32, semaphore>)
// CHECK-NEXT: pallas.dma_start %[[X]][0 : 8, 0 : 128], %[[BUF]][], %[[SEM]][0]
// CHECK-NEXT: pallas.dma_wait %[[X]][0 : 8, 0 : 128], %[[BUF]][], %[[SEM]][0]
// CHECK-NEXT: %[[V:.+]] = pallas.load %[[BUF]][]
// CHECK-NEXT: pallas.store %[[O]][], %[[V]]
// CHECK-NEXT: }
pallas.kernel @dma(%x: !pallas.ref<32x128xf32, any>, %o: !pallas.ref<8x128xf32>,
                   %buf: !pallas.ref<8x128xf32, vmem>, %sem: !pallas.ref<2xi32, semaphore>) {
  pallas.dma_start %x[0 : 8, 0 : 128], %buf[], %sem[0]
      : !pallas.ref<32x128xf32, any>, !pallas.ref<8x128xf32, vmem>, !pallas.ref<2xi32, semaphore>
  pallas.dma_wait %x[0 : 8, 0 : 128], %buf[], %sem[0]
      : !pallas.ref<32x128xf32, any>, !pallas.ref<8x128xf32, vmem>, !pallas.ref<2xi32, semaphore>
  %dead = pallas.load %buf[0 : 4, 0 : 128] : !pallas.ref<8x128xf32, vmem> -> tensor<4x128xf32>
  %v = pallas.load %buf[] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
  pallas.store %o[], %v : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[XA:.+]]: tensor<32x128xf32>)
// CHECK: pallas.call @dma(%[[XA]])
func.func @main(%x: tensor<32x128xf32>) -> tensor<32x128xf32> {
  %o = pallas.call @dma(%x) {grid = array<i64: 4>, in_specs = [#pallas.block_spec<any>],
      out_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      scratch = [!pallas.ref<8x128xf32, vmem>, !pallas.ref<2xi32, semaphore>]}
      : (tensor<32x128xf32>) -> tensor<32x128xf32>
  return %o : tensor<32x128xf32>
}
