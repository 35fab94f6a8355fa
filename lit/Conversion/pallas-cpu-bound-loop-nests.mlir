// RUN: pallasc-opt %s -pallas-cpu-bound-loop-nests | FileCheck %s --check-prefix=DEF
// (passes/Conversion/PallasToLinalg/BoundLoopNests.cpp)
// RUN: pallasc-opt %s -pallas-cpu-bound-loop-nests=segment-depth=1 | FileCheck %s --check-prefix=ONE
// RUN: pallasc-opt %s -pallas-cpu-bound-loop-nests=segment-depth=2 | FileCheck %s --check-prefix=TWO
// RUN: not pallasc-opt %s -pallas-cpu-bound-loop-nests=segment-depth=0 2>&1 | FileCheck %s --check-prefix=ZERO

// Levels count the enclosing loops that carry a tensor (a loop over indices
// only does not count); the inits of levels segment-depth + 1,
// 2 * segment-depth + 1, ... are copied, unless their buffer type is known
// at once (function argument, tensor.empty, constant, to_tensor). Nests no
// deeper than segment-depth (the default, 8, here) are left as they are.

// ZERO: error: pallas-cpu-bound-loop-nests: segment-depth must be at least 1, got 0

// DEF-LABEL: func.func @nest
// DEF-NOT: bufferization.alloc_tensor

// ONE-LABEL: func.func @nest
// ONE: scf.for {{.*}} iter_args(%[[A:.+]] = %arg0)
// ONE: scf.for {{.*}} iter_args(%[[I:.+]] = %{{.+}}) -> (index)
// ONE: %[[CA:.+]] = bufferization.alloc_tensor() copy(%[[A]]) {memory_space = 0 : i64} : tensor<8xf32>
// ONE: scf.for {{.*}} iter_args(%[[B:.+]] = %[[CA]])
// ONE: %[[CB:.+]] = bufferization.alloc_tensor() copy(%[[B]]) {memory_space = 0 : i64} : tensor<8xf32>
// ONE: scf.for {{.*}} iter_args(%[[C:.+]] = %[[CB]])
// ONE: arith.addf %[[C]]
// ONE-NOT: bufferization.alloc_tensor

// TWO-LABEL: func.func @nest
// TWO: scf.for {{.*}} iter_args(%[[A:.+]] = %arg0)
// TWO: scf.for {{.*}} iter_args(%[[B:.+]] = %[[A]])
// TWO: %[[CB:.+]] = bufferization.alloc_tensor() copy(%[[B]]) {memory_space = 0 : i64} : tensor<8xf32>
// TWO: scf.for {{.*}} iter_args(%[[C:.+]] = %[[CB]])
// TWO-NOT: bufferization.alloc_tensor
func.func @nest(%x: tensor<8xf32>, %n: index) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> (tensor<8xf32>) {
    %k = scf.for %j = %c0 to %n step %c1 iter_args(%s = %c0) -> (index) {
      %t = arith.addi %s, %j : index
      scf.yield %t : index
    }
    %q = scf.for %j = %c0 to %k step %c1 iter_args(%b = %a) -> (tensor<8xf32>) {
      %p = scf.for %l = %c0 to %n step %c1 iter_args(%c = %b) -> (tensor<8xf32>) {
        %d = arith.addf %c, %c : tensor<8xf32>
        scf.yield %d : tensor<8xf32>
      }
      scf.yield %p : tensor<8xf32>
    }
    scf.yield %q : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// Inner inits with a known buffer type are not copied; an scf.while that
// carries a tensor is a level too.

// ONE-LABEL: func.func @leaves
// ONE: scf.for {{.*}} iter_args(%[[A:.+]] = %arg0)
// ONE: %[[E:.+]] = tensor.empty() : tensor<8xf32>
// ONE: scf.for {{.*}} iter_args(%{{.+}} = %[[E]], %{{.+}} = %arg0, %{{.+}} = %{{.+}})
// ONE: %[[CA:.+]] = bufferization.alloc_tensor() copy(%[[A]]) {memory_space = 0 : i64} : tensor<8xf32>
// ONE: scf.while (%{{.+}} = %[[CA]]) : (tensor<8xf32>)
// ONE-NOT: bufferization.alloc_tensor
// ONE: return

// TWO-LABEL: func.func @leaves
// TWO-NOT: bufferization.alloc_tensor
// TWO: return
func.func @leaves(%x: tensor<8xf32>, %n: index) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant dense<1.0> : tensor<8xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> (tensor<8xf32>) {
    %e = tensor.empty() : tensor<8xf32>
    %q:3 = scf.for %j = %c0 to %n step %c1 iter_args(%b = %e, %f = %x, %g = %cst)
        -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
      %d = arith.addf %b, %f : tensor<8xf32>
      %h = arith.addf %d, %g : tensor<8xf32>
      scf.yield %h, %f, %g : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
    }
    %w = scf.while (%v = %a) : (tensor<8xf32>) -> tensor<8xf32> {
      %z = tensor.extract %v[%c0] : tensor<8xf32>
      %more = arith.cmpf olt, %z, %z : f32
      scf.condition(%more) %v : tensor<8xf32>
    } do {
    ^bb0(%v: tensor<8xf32>):
      %s = arith.addf %v, %q#0 : tensor<8xf32>
      scf.yield %s : tensor<8xf32>
    }
    scf.yield %w : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}
