// RUN: pallasc-opt %s -split-input-file -pallas-jvp -verify-diagnostics | FileCheck %s

//===----------------------------------------------------------------------===//
// Call level (_pallas_call_jvp_rule)
//===----------------------------------------------------------------------===//

// Tests the call-level rewrite: tangent inputs for float inputs only (the
// integer input has a zero tangent and is dropped), block specs duplicated
// (in ++ tangent-in, out ++ out), cost estimate doubled, "jvp" appended to
// transforms, the other attributes kept; @main takes (primals, tangents)
// and returns (primal outs, tangent outs); an integer output gets a
// tangent output written with zeros.

// CHECK-LABEL: pallas.kernel @scale_jvp
// CHECK-SAME: (%[[X:.+]]: !pallas.ref<8x128xf32>, %[[N:.+]]: !pallas.ref<8x128xi32>, %[[DX:.+]]: !pallas.ref<8x128xf32>, %[[O:.+]]: !pallas.ref<8x128xf32>, %[[C:.+]]: !pallas.ref<8x128xi32>, %[[DO:.+]]: !pallas.ref<8x128xf32>, %[[DC:.+]]: !pallas.ref<8x128xi32>)
// CHECK-DAG: %[[IZERO:.+]] = arith.constant dense<0> : tensor<8x128xi32>
// CHECK-DAG: %[[V:.+]] = pallas.load %[[X]][]
// CHECK-DAG: %[[DV:.+]] = pallas.load %[[DX]][]
// CHECK-DAG: %[[I:.+]] = pallas.load %[[N]][]
// CHECK: %[[F:.+]] = arith.sitofp %[[I]]
// CHECK: %[[R:.+]] = arith.mulf %[[V]], %[[F]]
// CHECK: %[[DR:.+]] = arith.mulf %[[DV]], %[[F]]
// CHECK: pallas.store %[[O]][], %[[R]]
// CHECK: pallas.store %[[DO]][], %[[DR]]
// CHECK: pallas.store %[[C]][], %[[I]]
// CHECK: pallas.store %[[DC]][], %[[IZERO]]
// CHECK-NOT: pallas.kernel @scale(
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[MX:.+]]: tensor<32x128xf32>, %[[MN:.+]]: tensor<32x128xi32>, %[[MDX:.+]]: tensor<32x128xf32>) -> (tensor<32x128xf32>, tensor<32x128xi32>, tensor<32x128xf32>, tensor<32x128xi32>)
// CHECK: %[[RES:.+]]:4 = pallas.call @scale_jvp(%[[MX]], %[[MN]], %[[MDX]])
// CHECK-SAME: compiler_params = #pallas.compiler_params<gpu = <num_warps = 4>>
// CHECK-SAME: cost_estimate = #pallas.cost<flops = 200, bytes_accessed = 400, transcendentals = 6>
// CHECK-SAME: grid = array<i64: 4>, grid_names = ["i"]
// CHECK-SAME: in_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>, #pallas.block_spec<[8, 128], (d0) -> (0, d0)>, #pallas.block_spec<[8, 128], (d0) -> (d0, 0)>]
// CHECK-SAME: name = "scale"
// CHECK-SAME: out_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>, #pallas.block_spec<[8, 128], (d0) -> (d0, 1)>, #pallas.block_spec<[8, 128], (d0) -> (d0, 0)>, #pallas.block_spec<[8, 128], (d0) -> (d0, 1)>]
// CHECK-SAME: transforms = ["hi_to_lo", "jvp"]
// CHECK-SAME: : (tensor<32x128xf32>, tensor<32x128xi32>, tensor<32x128xf32>) -> (tensor<32x128xf32>, tensor<32x128xi32>, tensor<32x128xf32>, tensor<32x128xi32>)
// CHECK: return %[[RES]]#0, %[[RES]]#1, %[[RES]]#2, %[[RES]]#3
pallas.kernel @scale(%x: !pallas.ref<8x128xf32>, %n: !pallas.ref<8x128xi32>,
                     %o: !pallas.ref<8x128xf32>, %c: !pallas.ref<8x128xi32>) {
  %v = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %i = pallas.load %n[] : !pallas.ref<8x128xi32> -> tensor<8x128xi32>
  %f = arith.sitofp %i : tensor<8x128xi32> to tensor<8x128xf32>
  %r = arith.mulf %v, %f : tensor<8x128xf32>
  pallas.store %o[], %r : !pallas.ref<8x128xf32>, tensor<8x128xf32>
  pallas.store %c[], %i : !pallas.ref<8x128xi32>, tensor<8x128xi32>
}
func.func @main(%x: tensor<32x128xf32>, %n: tensor<32x128xi32>)
    -> (tensor<32x128xf32>, tensor<32x128xi32>) {
  %o, %c = pallas.call @scale(%x, %n) {
      grid = array<i64: 4>, grid_names = ["i"],
      in_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>,
                  #pallas.block_spec<[8, 128], (i) -> (0, i)>],
      out_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>,
                   #pallas.block_spec<[8, 128], (i) -> (i, 1)>],
      cost_estimate = #pallas.cost<flops = 100, bytes_accessed = 200, transcendentals = 3>,
      compiler_params = #pallas.compiler_params<gpu = <num_warps = 4>>, name = "scale",
      transforms = ["hi_to_lo"]}
      : (tensor<32x128xf32>, tensor<32x128xi32>) -> (tensor<32x128xf32>, tensor<32x128xi32>)
  return %o, %c : tensor<32x128xf32>, tensor<32x128xi32>
}

// -----

// Tests a call that vmap has batched: vmapped_dims and the grid are kept;
// float scratch gets a tangent scratch appended after the primal scratch
// (integer scratch gets none), so accumulation in scratch differentiates.

// CHECK-LABEL: pallas.kernel @acc_jvp
// CHECK-SAME: (%[[X:.+]]: !pallas.ref<8xf32>, %[[DX:.+]]: !pallas.ref<8xf32>, %[[O:.+]]: !pallas.ref<8xf32>, %[[DO:.+]]: !pallas.ref<8xf32>, %[[ACC:.+]]: !pallas.ref<8xf32, vmem>, %[[CNT:.+]]: !pallas.ref<1xi32, smem>, %[[DACC:.+]]: !pallas.ref<8xf32, vmem>)
// CHECK: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<8xf32>
// CHECK: scf.if
// CHECK:   pallas.store %[[ACC]][]
// CHECK:   pallas.store %[[DACC]][], %[[ZERO]]
// CHECK: }
// CHECK: %[[V:.+]] = pallas.load %[[X]][]
// CHECK: %[[DV:.+]] = pallas.load %[[DX]][]
// CHECK: %[[A:.+]] = pallas.load %[[ACC]][]
// CHECK: %[[DA:.+]] = pallas.load %[[DACC]][]
// CHECK: %[[S:.+]] = arith.addf %[[A]], %[[V]]
// CHECK: %[[DS:.+]] = arith.addf %[[DA]], %[[DV]]
// CHECK: pallas.store %[[ACC]][], %[[S]]
// CHECK: pallas.store %[[DACC]][], %[[DS]]
// CHECK: pallas.load %[[CNT]][0]
// CHECK-NEXT: pallas.store %[[CNT]][0]
// CHECK-NEXT: pallas.store %[[O]][], %[[S]]
// CHECK-NEXT: pallas.store %[[DO]][], %[[DS]]
// CHECK-LABEL: func.func @main
// CHECK: pallas.call @acc_jvp
// CHECK-SAME: grid = array<i64: 4, 4>, grid_names = ["", "j"]
// CHECK-SAME: scratch = [!pallas.ref<8xf32, vmem>, !pallas.ref<1xi32, smem>, !pallas.ref<8xf32, vmem>]
// CHECK-SAME: transforms = ["vmap", "jvp"], vmapped_dims = array<i64: 0>
pallas.kernel @acc(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>,
                   %acc: !pallas.ref<8xf32, vmem>, %cnt: !pallas.ref<1xi32, smem>) {
  %j = pallas.program_id 0 : i32
  %c0 = arith.constant 0 : i32
  %first = arith.cmpi eq, %j, %c0 : i32
  scf.if %first {
    %z = arith.constant dense<0.0> : tensor<8xf32>
    pallas.store %acc[], %z : !pallas.ref<8xf32, vmem>, tensor<8xf32>
  }
  %v = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %a = pallas.load %acc[] : !pallas.ref<8xf32, vmem> -> tensor<8xf32>
  %n = arith.addf %a, %v : tensor<8xf32>
  pallas.store %acc[], %n : !pallas.ref<8xf32, vmem>, tensor<8xf32>
  %k = pallas.load %cnt[0] : !pallas.ref<1xi32, smem> -> i32
  pallas.store %cnt[0], %j : !pallas.ref<1xi32, smem>, i32
  pallas.store %o[], %n : !pallas.ref<8xf32>, tensor<8xf32>
}
func.func @main(%x: tensor<32xf32>) -> tensor<8xf32> {
  %o = pallas.call @acc(%x) {grid = array<i64: 4, 4>, vmapped_dims = array<i64: 0>,
      grid_names = ["", "j"],
      in_specs = [#pallas.block_spec<[8], (b, j) -> (j)>],
      out_specs = [#pallas.block_spec<[8], (b, j) -> (0)>],
      scratch = [!pallas.ref<8xf32, vmem>, !pallas.ref<1xi32, smem>],
      transforms = ["vmap"]}
      : (tensor<32xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests a wrapper with two calls of one kernel: an input whose tangent is a
// symbolic zero (a constant) gets no tangent operand (JAX's
// nonzero_tangents), tangents flow from the first call into the second, and
// a non-float result of @main gets a zero tangent.

// CHECK-LABEL: pallas.kernel @double_jvp_0
// CHECK-SAME: (%{{.+}}: !pallas.ref<8xf32>, %{{.+}}: !pallas.ref<8xf32>, %{{.+}}: !pallas.ref<8xf32>, %{{.+}}: !pallas.ref<8xf32>, %{{.+}}: !pallas.ref<8xf32>, %{{.+}}: !pallas.ref<8xf32>)
// CHECK-LABEL: pallas.kernel @double_jvp
// CHECK-SAME: (%[[X:.+]]: !pallas.ref<8xf32>, %[[Y:.+]]: !pallas.ref<8xf32>, %[[DX:.+]]: !pallas.ref<8xf32>, %[[O:.+]]: !pallas.ref<8xf32>, %[[DO:.+]]: !pallas.ref<8xf32>)
// CHECK: %[[A:.+]] = pallas.load %[[X]][]
// CHECK: %[[DA:.+]] = pallas.load %[[DX]][]
// CHECK: %[[B:.+]] = pallas.load %[[Y]][]
// CHECK-NOT: pallas.load
// CHECK: arith.mulf %[[A]], %[[B]]
// CHECK: %[[DP:.+]] = arith.mulf %[[DA]], %[[B]]
// CHECK-NOT: arith.addf
// CHECK: pallas.store %[[DO]][], %[[DP]]
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[MX:.+]]: tensor<8xf32>, %[[MN:.+]]: i32, %[[MDX:.+]]: tensor<8xf32>) -> (tensor<8xf32>, i32, tensor<8xf32>, i32)
// CHECK-DAG: %[[IZ:.+]] = arith.constant 0 : i32
// CHECK-DAG: %[[TWO:.+]] = arith.constant dense<2.000000e+00>
// CHECK: %[[R1:.+]]:2 = pallas.call @double_jvp(%[[MX]], %[[TWO]], %[[MDX]])
// CHECK: %[[R2:.+]]:2 = pallas.call @double_jvp_0(%[[R1]]#0, %[[MX]], %[[R1]]#1, %[[MDX]])
// CHECK: return %[[R2]]#0, %[[MN]], %[[R2]]#1, %[[IZ]]
#s = #pallas.block_spec<[8], (i) -> (i)>
pallas.kernel @double(%x: !pallas.ref<8xf32>, %y: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  %a = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %b = pallas.load %y[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %p = arith.mulf %a, %b : tensor<8xf32>
  pallas.store %o[], %p : !pallas.ref<8xf32>, tensor<8xf32>
}
func.func @main(%x: tensor<8xf32>, %n: i32) -> (tensor<8xf32>, i32) {
  %two = arith.constant dense<2.0> : tensor<8xf32>
  %o1 = pallas.call @double(%x, %two) {grid = array<i64: 1>, in_specs = [#s, #s], out_specs = [#s]}
      : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %o2 = pallas.call @double(%o1, %x) {grid = array<i64: 1>, in_specs = [#s, #s], out_specs = [#s]}
      : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %o2, %n : tensor<8xf32>, i32
}

//===----------------------------------------------------------------------===//
// arith
//===----------------------------------------------------------------------===//

// -----

// Tests the rules of addf, subf, mulf (product rule), divf
// ((dx - dy * ans) / y) and negf.

// CHECK-LABEL: pallas.kernel @arith_jvp
// CHECK-SAME: (%[[X:.+]]: !pallas.ref<8xf32>, %[[Y:.+]]: !pallas.ref<8xf32>, %[[DX:.+]]: !pallas.ref<8xf32>, %[[DY:.+]]: !pallas.ref<8xf32>, %[[O:.+]]: !pallas.ref<8xf32>, %[[DO:.+]]: !pallas.ref<8xf32>)
// CHECK: %[[A:.+]] = pallas.load %[[X]][]
// CHECK: %[[DA:.+]] = pallas.load %[[DX]][]
// CHECK: %[[B:.+]] = pallas.load %[[Y]][]
// CHECK: %[[DB:.+]] = pallas.load %[[DY]][]
// CHECK: %[[SUM:.+]] = arith.addf %[[A]], %[[B]]
// CHECK: %[[DSUM:.+]] = arith.addf %[[DA]], %[[DB]]
// CHECK: %[[PROD:.+]] = arith.mulf %[[A]], %[[B]]
// CHECK: %[[T1:.+]] = arith.mulf %[[DA]], %[[B]]
// CHECK: %[[T2:.+]] = arith.mulf %[[A]], %[[DB]]
// CHECK: %[[DPROD:.+]] = arith.addf %[[T1]], %[[T2]]
// CHECK: %[[DIFF:.+]] = arith.subf %[[SUM]], %[[PROD]]
// CHECK: %[[DDIFF:.+]] = arith.subf %[[DSUM]], %[[DPROD]]
// CHECK: %[[Q:.+]] = arith.divf %[[DIFF]], %[[B]]
// CHECK: %[[T3:.+]] = arith.mulf %[[DB]], %[[Q]]
// CHECK: %[[T4:.+]] = arith.subf %[[DDIFF]], %[[T3]]
// CHECK: %[[DQ:.+]] = arith.divf %[[T4]], %[[B]]
// CHECK: %[[N:.+]] = arith.negf %[[Q]]
// CHECK: %[[DN:.+]] = arith.negf %[[DQ]]
// CHECK: pallas.store %[[O]][], %[[N]]
// CHECK: pallas.store %[[DO]][], %[[DN]]
#s = #pallas.block_spec<[8], (i) -> (i)>
pallas.kernel @arith(%x: !pallas.ref<8xf32>, %y: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  %a = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %b = pallas.load %y[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %sum = arith.addf %a, %b : tensor<8xf32>
  %prod = arith.mulf %a, %b : tensor<8xf32>
  %diff = arith.subf %sum, %prod : tensor<8xf32>
  %quot = arith.divf %diff, %b : tensor<8xf32>
  %neg = arith.negf %quot : tensor<8xf32>
  pallas.store %o[], %neg : !pallas.ref<8xf32>, tensor<8xf32>
}
func.func @main(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @arith(%x, %y) {grid = array<i64: 1>, in_specs = [#s, #s], out_specs = [#s]}
      : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests the tie rule of maximumf (JAX's _balanced_eq): each operand's
// tangent is weighted by (operand == ans) / (other == ans ? 2 : 1).

// CHECK-LABEL: pallas.kernel @max_jvp
// CHECK-DAG: %[[TWO:.+]] = arith.constant dense<2.000000e+00>
// CHECK-DAG: %[[ZERO:.+]] = arith.constant dense<0.000000e+00>
// CHECK-DAG: %[[ONE:.+]] = arith.constant dense<1.000000e+00>
// CHECK: %[[M:.+]] = arith.maximumf %[[A:.+]], %[[B:.+]] :
// CHECK: %[[AEQ:.+]] = arith.cmpf oeq, %[[A]], %[[M]]
// CHECK: %[[BEQ:.+]] = arith.cmpf oeq, %[[B]], %[[M]]
// CHECK: %[[WA1:.+]] = arith.select %[[AEQ]], %[[ONE]], %[[ZERO]]
// CHECK: %[[WA2:.+]] = arith.select %[[BEQ]], %[[TWO]], %[[ONE]]
// CHECK: %[[WA:.+]] = arith.divf %[[WA1]], %[[WA2]]
// CHECK: %[[TA:.+]] = arith.mulf %[[DA:.+]], %[[WA]]
// CHECK: %[[WB1:.+]] = arith.select %[[BEQ]], %[[ONE]], %[[ZERO]]
// CHECK: %[[WB2:.+]] = arith.select %[[AEQ]], %[[TWO]], %[[ONE]]
// CHECK: %[[WB:.+]] = arith.divf %[[WB1]], %[[WB2]]
// CHECK: %[[TB:.+]] = arith.mulf %[[DB:.+]], %[[WB]]
// CHECK: %[[DM:.+]] = arith.addf %[[TA]], %[[TB]]
// CHECK: pallas.store %{{.+}}[], %[[DM]]
#s = #pallas.block_spec<[8], (i) -> (i)>
pallas.kernel @max(%x: !pallas.ref<8xf32>, %y: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  %a = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %b = pallas.load %y[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %m = arith.maximumf %a, %b : tensor<8xf32>
  pallas.store %o[], %m : !pallas.ref<8xf32>, tensor<8xf32>
}
func.func @main(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @max(%x, %y) {grid = array<i64: 1>, in_specs = [#s, #s], out_specs = [#s]}
      : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests truncf/extf (linear), fptosi/sitofp and cmpf (no tangent), select
// (selects the tangents, a zero materialized for the branch without one) and
// remf (dx - dy * trunc(x / y)).

// CHECK-LABEL: pallas.kernel @convert_jvp
// CHECK: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<8xf32>
// CHECK: %[[A:.+]] = pallas.load %arg0[]
// CHECK: %[[DA:.+]] = pallas.load %arg2[]
// CHECK: %[[B:.+]] = pallas.load %arg1[]
// CHECK: %[[DB:.+]] = pallas.load %arg3[]
// CHECK: %[[H:.+]] = arith.truncf %[[A]]
// CHECK: %[[DH:.+]] = arith.truncf %[[DA]] : tensor<8xf32> to tensor<8xf16>
// CHECK: %[[E:.+]] = arith.extf %[[H]]
// CHECK: %[[DE:.+]] = arith.extf %[[DH]] : tensor<8xf16> to tensor<8xf32>
// CHECK: %[[I:.+]] = arith.fptosi %[[A]]
// CHECK: %[[F:.+]] = arith.sitofp %[[I]]
// CHECK: %[[C:.+]] = arith.cmpf ogt, %[[A]], %[[B]]
// CHECK: %[[S:.+]] = arith.select %[[C]], %[[E]], %[[F]]
// CHECK: %[[DS:.+]] = arith.select %[[C]], %[[DE]], %[[ZERO]]
// CHECK: arith.remf %[[S]], %[[B]]
// CHECK: %[[Q:.+]] = arith.divf %[[S]], %[[B]]
// CHECK: %[[T:.+]] = math.trunc %[[Q]]
// CHECK: %[[P:.+]] = arith.mulf %[[DB]], %[[T]]
// CHECK: %[[DR:.+]] = arith.subf %[[DS]], %[[P]]
// CHECK: pallas.store %arg5[], %[[DR]]
#s = #pallas.block_spec<[8], (i) -> (i)>
pallas.kernel @convert(%x: !pallas.ref<8xf32>, %y: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  %a = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %b = pallas.load %y[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %h = arith.truncf %a : tensor<8xf32> to tensor<8xf16>
  %e = arith.extf %h : tensor<8xf16> to tensor<8xf32>
  %i = arith.fptosi %a : tensor<8xf32> to tensor<8xi32>
  %f = arith.sitofp %i : tensor<8xi32> to tensor<8xf32>
  %c = arith.cmpf ogt, %a, %b : tensor<8xf32>
  %s = arith.select %c, %e, %f : tensor<8xi1>, tensor<8xf32>
  %r = arith.remf %s, %b : tensor<8xf32>
  pallas.store %o[], %r : !pallas.ref<8xf32>, tensor<8xf32>
}
func.func @main(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @convert(%x, %y) {grid = array<i64: 1>, in_specs = [#s, #s], out_specs = [#s]}
      : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

//===----------------------------------------------------------------------===//
// math
//===----------------------------------------------------------------------===//

// -----

// Tests exp (dx * ans), log (dx / x), sqrt (dx * (0.5 / ans)), rsqrt
// (dx * (-0.5 * (ans / x))) and tanh ((dx + dx * ans) * (1 - ans)).

// CHECK-LABEL: pallas.kernel @exp_log_jvp
// CHECK-DAG: %[[ONE:.+]] = arith.constant dense<1.000000e+00>
// CHECK-DAG: %[[MHALF:.+]] = arith.constant dense<-5.000000e-01>
// CHECK-DAG: %[[HALF:.+]] = arith.constant dense<5.000000e-01>
// CHECK: %[[X:.+]] = pallas.load %arg0[]
// CHECK: %[[DX:.+]] = pallas.load %arg1[]
// CHECK: %[[EXP:.+]] = math.exp %[[X]]
// CHECK: %[[DEXP:.+]] = arith.mulf %[[DX]], %[[EXP]]
// CHECK: %[[LOG:.+]] = math.log %[[EXP]]
// CHECK: %[[DLOG:.+]] = arith.divf %[[DEXP]], %[[EXP]]
// CHECK: %[[SQRT:.+]] = math.sqrt %[[LOG]]
// CHECK: %[[K1:.+]] = arith.divf %[[HALF]], %[[SQRT]]
// CHECK: %[[DSQRT:.+]] = arith.mulf %[[DLOG]], %[[K1]]
// CHECK: %[[RSQRT:.+]] = math.rsqrt %[[SQRT]]
// CHECK: %[[K2:.+]] = arith.divf %[[RSQRT]], %[[SQRT]]
// CHECK: %[[K3:.+]] = arith.mulf %[[MHALF]], %[[K2]]
// CHECK: %[[DRSQRT:.+]] = arith.mulf %[[DSQRT]], %[[K3]]
// CHECK: %[[TANH:.+]] = math.tanh %[[RSQRT]]
// CHECK: %[[K4:.+]] = arith.mulf %[[DRSQRT]], %[[TANH]]
// CHECK: %[[K5:.+]] = arith.addf %[[DRSQRT]], %[[K4]]
// CHECK: %[[K6:.+]] = arith.subf %[[ONE]], %[[TANH]]
// CHECK: %[[DTANH:.+]] = arith.mulf %[[K5]], %[[K6]]
// CHECK: pallas.store %arg3[], %[[DTANH]]
#s = #pallas.block_spec<[8], (i) -> (i)>
pallas.kernel @exp_log(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  %a = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %e = math.exp %a : tensor<8xf32>
  %l = math.log %e : tensor<8xf32>
  %s = math.sqrt %l : tensor<8xf32>
  %r = math.rsqrt %s : tensor<8xf32>
  %t = math.tanh %r : tensor<8xf32>
  pallas.store %o[], %t : !pallas.ref<8xf32>, tensor<8xf32>
}
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @exp_log(%x) {grid = array<i64: 1>, in_specs = [#s], out_specs = [#s]}
      : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests sin, cos, tan, atan, erf, exp2, expm1, log1p and log2.

// CHECK-LABEL: pallas.kernel @trig_jvp
// CHECK-DAG: %[[LN2:.+]] = arith.constant dense<0.693147182>
// CHECK-DAG: %[[ERFK:.+]] = arith.constant dense<1.12837923>
// CHECK-DAG: %[[ONE:.+]] = arith.constant dense<1.000000e+00>
// CHECK: %[[X:.+]] = pallas.load %arg0[]
// CHECK: %[[DX:.+]] = pallas.load %arg1[]
// CHECK: %[[SIN:.+]] = math.sin %[[X]]
// CHECK: %[[C1:.+]] = math.cos %[[X]]
// CHECK: %[[DSIN:.+]] = arith.mulf %[[DX]], %[[C1]]
// CHECK: %[[COS:.+]] = math.cos %[[SIN]]
// CHECK: %[[S1:.+]] = math.sin %[[SIN]]
// CHECK: %[[P1:.+]] = arith.mulf %[[DSIN]], %[[S1]]
// CHECK: %[[DCOS:.+]] = arith.negf %[[P1]]
// CHECK: %[[TAN:.+]] = math.tan %[[COS]]
// CHECK: %[[SQ:.+]] = arith.mulf %[[TAN]], %[[TAN]]
// CHECK: %[[K:.+]] = arith.addf %[[ONE]], %[[SQ]]
// CHECK: %[[DTAN:.+]] = arith.mulf %[[DCOS]], %[[K]]
// CHECK: %[[ATAN:.+]] = math.atan %[[TAN]]
// CHECK: %[[SQ2:.+]] = arith.mulf %[[TAN]], %[[TAN]]
// CHECK: %[[K2:.+]] = arith.addf %[[ONE]], %[[SQ2]]
// CHECK: %[[DATAN:.+]] = arith.divf %[[DTAN]], %[[K2]]
// CHECK: %[[ERF:.+]] = math.erf %[[ATAN]]
// CHECK: %[[SQ3:.+]] = arith.mulf %[[ATAN]], %[[ATAN]]
// CHECK: %[[NSQ:.+]] = arith.negf %[[SQ3]]
// CHECK: %[[G:.+]] = math.exp %[[NSQ]]
// CHECK: %[[P2:.+]] = arith.mulf %[[DATAN]], %[[G]]
// CHECK: %[[DERF:.+]] = arith.mulf %[[ERFK]], %[[P2]]
// CHECK: %[[EXP2:.+]] = math.exp2 %[[ERF]]
// CHECK: %[[K3:.+]] = arith.mulf %[[EXP2]], %[[LN2]]
// CHECK: %[[DEXP2:.+]] = arith.mulf %[[DERF]], %[[K3]]
// CHECK: %[[EXPM1:.+]] = math.expm1 %[[EXP2]]
// CHECK: %[[K4:.+]] = arith.addf %[[EXPM1]], %[[ONE]]
// CHECK: %[[DEXPM1:.+]] = arith.mulf %[[DEXP2]], %[[K4]]
// CHECK: %[[LOG1P:.+]] = math.log1p %[[EXPM1]]
// CHECK: %[[K5:.+]] = arith.addf %[[EXPM1]], %[[ONE]]
// CHECK: %[[DLOG1P:.+]] = arith.divf %[[DEXPM1]], %[[K5]]
// CHECK: %[[LOG2:.+]] = math.log2 %[[LOG1P]]
// CHECK: %[[K6:.+]] = arith.mulf %[[LOG1P]], %[[LN2]]
// CHECK: %[[DLOG2:.+]] = arith.divf %[[DLOG1P]], %[[K6]]
// CHECK: pallas.store %arg3[], %[[DLOG2]]
#s = #pallas.block_spec<[8], (i) -> (i)>
pallas.kernel @trig(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  %a = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %s = math.sin %a : tensor<8xf32>
  %c = math.cos %s : tensor<8xf32>
  %t = math.tan %c : tensor<8xf32>
  %at = math.atan %t : tensor<8xf32>
  %er = math.erf %at : tensor<8xf32>
  %e2 = math.exp2 %er : tensor<8xf32>
  %em = math.expm1 %e2 : tensor<8xf32>
  %lp = math.log1p %em : tensor<8xf32>
  %l2 = math.log2 %lp : tensor<8xf32>
  pallas.store %o[], %l2 : !pallas.ref<8xf32>, tensor<8xf32>
}
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @trig(%x) {grid = array<i64: 1>, in_specs = [#s], out_specs = [#s]}
      : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests the logistic function 1 / (1 + exp(-x)) spelled with arith/math
// ops: the constant numerator and addend contribute nothing.

// CHECK-LABEL: pallas.kernel @logistic_jvp
// CHECK: %[[X:.+]] = pallas.load %arg0[]
// CHECK: %[[DX:.+]] = pallas.load %arg1[]
// CHECK: %[[ONE:.+]] = arith.constant dense<1.000000e+00>
// CHECK: %[[N:.+]] = arith.negf %[[X]]
// CHECK: %[[DN:.+]] = arith.negf %[[DX]]
// CHECK: %[[E:.+]] = math.exp %[[N]]
// CHECK: %[[DE:.+]] = arith.mulf %[[DN]], %[[E]]
// CHECK: %[[D:.+]] = arith.addf %[[ONE]], %[[E]]
// CHECK: %[[R:.+]] = arith.divf %[[ONE]], %[[D]]
// CHECK: %[[P:.+]] = arith.mulf %[[DE]], %[[R]]
// CHECK: %[[NP:.+]] = arith.negf %[[P]]
// CHECK: %[[DR:.+]] = arith.divf %[[NP]], %[[D]]
// CHECK: pallas.store %arg3[], %[[DR]]
#s = #pallas.block_spec<[8], (i) -> (i)>
pallas.kernel @logistic(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  %a = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %one = arith.constant dense<1.0> : tensor<8xf32>
  %n = arith.negf %a : tensor<8xf32>
  %e = math.exp %n : tensor<8xf32>
  %d = arith.addf %one, %e : tensor<8xf32>
  %r = arith.divf %one, %d : tensor<8xf32>
  pallas.store %o[], %r : !pallas.ref<8xf32>, tensor<8xf32>
}
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @logistic(%x) {grid = array<i64: 1>, in_specs = [#s], out_specs = [#s]}
      : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests powf (y * x^(y - 1) and log(x, 0 -> 1) * ans), atan2
// ((dx * y - dy * x) / (x^2 + y^2)), absf (x >= 0 ? dx : -dx), fma and
// floor (a zero tangent).

// CHECK-LABEL: pallas.kernel @binary_math_jvp
// CHECK-DAG: %[[ZERO:.+]] = arith.constant dense<0.000000e+00>
// CHECK-DAG: %[[ONE:.+]] = arith.constant dense<1.000000e+00>
// CHECK: %[[X:.+]] = pallas.load %arg0[]
// CHECK: %[[DX:.+]] = pallas.load %arg2[]
// CHECK: %[[Y:.+]] = pallas.load %arg1[]
// CHECK: %[[DY:.+]] = pallas.load %arg3[]
// CHECK: %[[POW:.+]] = math.powf %[[X]], %[[Y]]
// CHECK: %[[YM1:.+]] = arith.subf %[[Y]], %[[ONE]]
// CHECK: %[[XP:.+]] = math.powf %[[X]], %[[YM1]]
// CHECK: %[[JAC:.+]] = arith.mulf %[[Y]], %[[XP]]
// CHECK: %[[T1:.+]] = arith.mulf %[[DX]], %[[JAC]]
// CHECK: %[[ISZ:.+]] = arith.cmpf oeq, %[[X]], %[[ZERO]]
// CHECK: %[[SAFE:.+]] = arith.select %[[ISZ]], %[[ONE]], %[[X]]
// CHECK: %[[LOG:.+]] = math.log %[[SAFE]]
// CHECK: %[[L:.+]] = arith.mulf %[[LOG]], %[[POW]]
// CHECK: %[[T2:.+]] = arith.mulf %[[DY]], %[[L]]
// CHECK: %[[DPOW:.+]] = arith.addf %[[T1]], %[[T2]]
// CHECK: %[[ATAN2:.+]] = math.atan2 %[[POW]], %[[Y]]
// CHECK: %[[P2:.+]] = arith.mulf %[[POW]], %[[POW]]
// CHECK: %[[Y2:.+]] = arith.mulf %[[Y]], %[[Y]]
// CHECK: %[[DEN:.+]] = arith.addf %[[P2]], %[[Y2]]
// CHECK: %[[N1:.+]] = arith.mulf %[[DPOW]], %[[Y]]
// CHECK: %[[N2:.+]] = arith.mulf %[[DY]], %[[POW]]
// CHECK: %[[NUM:.+]] = arith.subf %[[N1]], %[[N2]]
// CHECK: %[[DATAN2:.+]] = arith.divf %[[NUM]], %[[DEN]]
// CHECK: %[[ABS:.+]] = math.absf %[[ATAN2]]
// CHECK: %[[NN:.+]] = arith.cmpf oge, %[[ATAN2]], %[[ZERO]]
// CHECK: %[[NEG:.+]] = arith.negf %[[DATAN2]]
// CHECK: %[[DABS:.+]] = arith.select %[[NN]], %[[DATAN2]], %[[NEG]]
// CHECK: %[[FMA:.+]] = math.fma %[[ABS]], %[[X]], %[[Y]]
// CHECK: %[[F1:.+]] = arith.mulf %[[DABS]], %[[X]]
// CHECK: %[[F2:.+]] = arith.mulf %[[ABS]], %[[DX]]
// CHECK: %[[F3:.+]] = arith.addf %[[F1]], %[[F2]]
// CHECK: %[[DFMA:.+]] = arith.addf %[[F3]], %[[DY]]
// CHECK: math.floor %[[FMA]]
// CHECK-NEXT: arith.addf
// CHECK-NEXT: pallas.store %arg4[]
// CHECK-NEXT: pallas.store %arg5[], %[[DFMA]]
#s = #pallas.block_spec<[8], (i) -> (i)>
pallas.kernel @binary_math(%x: !pallas.ref<8xf32>, %y: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  %a = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %b = pallas.load %y[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %p = math.powf %a, %b : tensor<8xf32>
  %t = math.atan2 %p, %b : tensor<8xf32>
  %abs = math.absf %t : tensor<8xf32>
  %f = math.fma %abs, %a, %b : tensor<8xf32>
  %fl = math.floor %f : tensor<8xf32>
  %r = arith.addf %f, %fl : tensor<8xf32>
  pallas.store %o[], %r : !pallas.ref<8xf32>, tensor<8xf32>
}
func.func @main(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @binary_math(%x, %y) {grid = array<i64: 1>, in_specs = [#s, #s], out_specs = [#s]}
      : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

//===----------------------------------------------------------------------===//
// pallas block ops
//===----------------------------------------------------------------------===//

// -----

// Tests dot: d(A.B + C) = dA.B + A.dB + dC, chained through the accumulator,
// with the transposes and precision of the primal dot.

// CHECK-LABEL: pallas.kernel @dot_jvp
// CHECK: %[[A:.+]] = pallas.load %arg0[]
// CHECK: %[[DA:.+]] = pallas.load %arg3[]
// CHECK: %[[B:.+]] = arith.extf
// CHECK: %[[DB:.+]] = arith.extf
// CHECK: %[[C:.+]] = pallas.load %arg2[]
// CHECK: %[[DC:.+]] = pallas.load %arg5[]
// CHECK: %[[D:.+]] = pallas.dot %[[A]], %[[B]], %[[C]] {precision = #pallas.precision<highest>, transpose_rhs}
// CHECK: %[[T:.+]] = pallas.dot %[[DA]], %[[B]], %[[DC]] {precision = #pallas.precision<highest>, transpose_rhs}
// CHECK: %[[DD:.+]] = pallas.dot %[[A]], %[[DB]], %[[T]] {precision = #pallas.precision<highest>, transpose_rhs}
// CHECK: pallas.store %arg6[], %[[D]]
// CHECK: pallas.store %arg7[], %[[DD]]
#s = #pallas.block_spec<[8, 16], (i) -> (0, 0)>
#a = #pallas.block_spec<[8, 8], (i) -> (0, 0)>
pallas.kernel @dot(%x: !pallas.ref<8x16xf32>, %y: !pallas.ref<8x16xbf16>,
                   %c: !pallas.ref<8x8xf32>, %o: !pallas.ref<8x8xf32>) {
  %a = pallas.load %x[] : !pallas.ref<8x16xf32> -> tensor<8x16xf32>
  %b = pallas.load %y[] : !pallas.ref<8x16xbf16> -> tensor<8x16xbf16>
  %bf = arith.extf %b : tensor<8x16xbf16> to tensor<8x16xf32>
  %acc = pallas.load %c[] : !pallas.ref<8x8xf32> -> tensor<8x8xf32>
  %d = pallas.dot %a, %bf, %acc {transpose_rhs, precision = #pallas.precision<highest>}
      : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  pallas.store %o[], %d : !pallas.ref<8x8xf32>, tensor<8x8xf32>
}
func.func @main(%x: tensor<8x16xf32>, %y: tensor<8x16xbf16>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %o = pallas.call @dot(%x, %y, %c) {grid = array<i64: 1>, in_specs = [#s, #s, #a], out_specs = [#a]}
      : (tensor<8x16xf32>, tensor<8x16xbf16>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %o : tensor<8x8xf32>
}

// -----

// Tests reductions: sum is linear; min uses JAX's _reduce_chooser_jvp_rule
// (the tangent averaged over the positions equal to the result); argmax has
// no tangent (its tangent output is written with zeros).

// CHECK-LABEL: pallas.kernel @reduce_jvp
// CHECK-DAG: %[[IZERO:.+]] = arith.constant dense<0> : tensor<4xi32>
// CHECK-DAG: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<4x8xf32>
// CHECK-DAG: %[[ONE:.+]] = arith.constant dense<1.000000e+00> : tensor<4x8xf32>
// CHECK: %[[X:.+]] = pallas.load %arg0[]
// CHECK: %[[DX:.+]] = pallas.load %arg1[]
// CHECK: %[[SUM:.+]] = pallas.reduce sum %[[X]] dims [1]
// CHECK: %[[DSUM:.+]] = pallas.reduce sum %[[DX]] dims [1]
// CHECK: %[[MIN:.+]] = pallas.reduce min %[[X]] dims [1]
// CHECK: %[[MINB:.+]] = pallas.broadcast_in_dim %[[MIN]] dims [0] : tensor<4xf32> -> tensor<4x8xf32>
// CHECK: %[[EQ:.+]] = arith.cmpf oeq, %[[X]], %[[MINB]]
// CHECK: %[[WHERE:.+]] = arith.select %[[EQ]], %[[ONE]], %[[ZERO]]
// CHECK: %[[COUNT:.+]] = pallas.reduce sum %[[WHERE]] dims [1]
// CHECK: %[[SEL:.+]] = arith.mulf %[[DX]], %[[WHERE]]
// CHECK: %[[NUM:.+]] = pallas.reduce sum %[[SEL]] dims [1]
// CHECK: %[[DMIN:.+]] = arith.divf %[[NUM]], %[[COUNT]]
// CHECK: %[[ARG:.+]] = pallas.reduce argmax %[[X]] dims [1]
// CHECK: pallas.store %arg2[], %[[SUM]]
// CHECK: pallas.store %arg5[], %[[DSUM]]
// CHECK: pallas.store %arg3[], %[[MIN]]
// CHECK: pallas.store %arg6[], %[[DMIN]]
// CHECK: pallas.store %arg4[], %[[ARG]]
// CHECK: pallas.store %arg7[], %[[IZERO]]
#s = #pallas.block_spec<[4, 8], (i) -> (i, 0)>
#r = #pallas.block_spec<[4], (i) -> (i)>
pallas.kernel @reduce(%x: !pallas.ref<4x8xf32>, %s: !pallas.ref<4xf32>,
                      %m: !pallas.ref<4xf32>, %a: !pallas.ref<4xi32>) {
  %v = pallas.load %x[] : !pallas.ref<4x8xf32> -> tensor<4x8xf32>
  %sum = pallas.reduce sum %v dims [1] : tensor<4x8xf32> -> tensor<4xf32>
  %min = pallas.reduce min %v dims [1] : tensor<4x8xf32> -> tensor<4xf32>
  %arg = pallas.reduce argmax %v dims [1] : tensor<4x8xf32> -> tensor<4xi32>
  pallas.store %s[], %sum : !pallas.ref<4xf32>, tensor<4xf32>
  pallas.store %m[], %min : !pallas.ref<4xf32>, tensor<4xf32>
  pallas.store %a[], %arg : !pallas.ref<4xi32>, tensor<4xi32>
}
func.func @main(%x: tensor<8x8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xi32>) {
  %s, %m, %a = pallas.call @reduce(%x) {grid = array<i64: 2>, in_specs = [#s], out_specs = [#r, #r, #r]}
      : (tensor<8x8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xi32>)
  return %s, %m, %a : tensor<8xf32>, tensor<8xf32>, tensor<8xi32>
}

// -----

// Tests the linear block ops (transpose, reshape, cumsum, broadcast_in_dim),
// pallas.select (selects the tangents), iota, program_id and multiple_of (no
// tangent) and debug_print (kept once).

// CHECK-LABEL: pallas.kernel @shapes_jvp
// CHECK: %[[X:.+]] = pallas.load %arg0[]
// CHECK: %[[DX:.+]] = pallas.load %arg1[]
// CHECK: pallas.transpose %[[X]] [1, 0]
// CHECK: %[[DT:.+]] = pallas.transpose %[[DX]] [1, 0]
// CHECK: pallas.reshape
// CHECK: %[[DR:.+]] = pallas.reshape %[[DT]] : tensor<8x4xf32> -> tensor<32xf32>
// CHECK: pallas.cumsum
// CHECK: %[[DC:.+]] = pallas.cumsum %[[DR]] dim 0 reverse
// CHECK: %[[BACK:.+]] = pallas.reshape
// CHECK: %[[DBACK:.+]] = pallas.reshape %[[DC]]
// CHECK: pallas.reduce sum
// CHECK: %[[DROW:.+]] = pallas.reduce sum %[[DBACK]]
// CHECK: %[[B:.+]] = pallas.broadcast_in_dim
// CHECK: %[[DB:.+]] = pallas.broadcast_in_dim %[[DROW]] dims [0]
// CHECK: pallas.iota
// CHECK: %[[PID:.+]] = pallas.program_id 0
// CHECK: pallas.multiple_of %[[PID]], 4
// CHECK: %[[M:.+]] = arith.cmpi slt
// CHECK: pallas.select %[[M]], %[[B]], %[[BACK]]
// CHECK: %[[DSEL:.+]] = pallas.select %[[M]], %[[DB]], %[[DBACK]]
// CHECK: pallas.debug_print "pid = {}" %[[PID]]
// CHECK-NOT: pallas.debug_print
// CHECK: pallas.store %arg3[], %[[DSEL]]
#s = #pallas.block_spec<[4, 8], (i) -> (i, 0)>
#t = #pallas.block_spec<[8, 4], (i) -> (0, i)>
pallas.kernel @shapes(%x: !pallas.ref<4x8xf32>, %o: !pallas.ref<8x4xf32>) {
  %v = pallas.load %x[] : !pallas.ref<4x8xf32> -> tensor<4x8xf32>
  %t = pallas.transpose %v [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %r = pallas.reshape %t : tensor<8x4xf32> -> tensor<32xf32>
  %c = pallas.cumsum %r dim 0 reverse : tensor<32xf32>
  %back = pallas.reshape %c : tensor<32xf32> -> tensor<8x4xf32>
  %row = pallas.reduce sum %back dims [1] : tensor<8x4xf32> -> tensor<8xf32>
  %b = pallas.broadcast_in_dim %row dims [0] : tensor<8xf32> -> tensor<8x4xf32>
  %i = pallas.iota 1 : tensor<8x4xi32>
  %pid = pallas.program_id 0 : i32
  %pid4 = pallas.multiple_of %pid, 4 : i32
  %pb = pallas.broadcast_in_dim %pid4 dims [] : i32 -> tensor<8x4xi32>
  %m = arith.cmpi slt, %i, %pb : tensor<8x4xi32>
  %sel = pallas.select %m, %b, %back : tensor<8x4xi1>, tensor<8x4xf32>
  pallas.debug_print "pid = {}" %pid : i32
  pallas.store %o[], %sel : !pallas.ref<8x4xf32>, tensor<8x4xf32>
}
func.func @main(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %o = pallas.call @shapes(%x) {grid = array<i64: 2>, in_specs = [#s], out_specs = [#t]}
      : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %o : tensor<8x8xf32>
}

// -----

// Tests ref accesses: a masked load with `other` reads the tangent ref with
// the same indexer and mask and a zero `other`; swap swaps the tangent into
// the tangent ref; atomic add adds the tangent into the tangent ref; store
// writes the tangent ref.

// CHECK-LABEL: pallas.kernel @refs_jvp
// CHECK-SAME: (%[[X:.+]]: !pallas.ref<16xf32>, %[[DX:.+]]: !pallas.ref<16xf32>, %[[O:.+]]: !pallas.ref<16xf32>, %[[ACC:.+]]: !pallas.ref<16xf32>, %[[DO:.+]]: !pallas.ref<16xf32>, %[[DACC:.+]]: !pallas.ref<16xf32>)
// CHECK: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<8xf32>
// CHECK: %[[C4:.+]] = arith.constant 4 : i32
// CHECK: %[[M:.+]] = arith.cmpi slt
// CHECK: %[[OTHER:.+]] = arith.constant dense<1.000000e+00>
// CHECK: %[[V:.+]] = pallas.load %[[X]][%[[C4]] : 8] mask %[[M]] other %[[OTHER]]
// CHECK: %[[DV:.+]] = pallas.load %[[DX]][%[[C4]] : 8] mask %[[M]] other %[[ZERO]]
// CHECK: %[[OLD:.+]] = pallas.swap %[[O]][0 : 8], %[[V]] mask %[[M]]
// CHECK: %[[DOLD:.+]] = pallas.swap %[[DO]][0 : 8], %[[DV]] mask %[[M]]
// CHECK: %[[PREV:.+]] = pallas.atomic_rmw add %[[ACC]][8 : 8], %[[OLD]]
// CHECK: %[[DPREV:.+]] = pallas.atomic_rmw add %[[DACC]][8 : 8], %[[DOLD]]
// CHECK: pallas.store %[[O]][%[[C4]] : 8], %[[PREV]]
// CHECK: pallas.store %[[DO]][%[[C4]] : 8], %[[DPREV]]
#s = #pallas.block_spec<[16], (i) -> (i)>
pallas.kernel @refs(%x: !pallas.ref<16xf32>, %o: !pallas.ref<16xf32>, %acc: !pallas.ref<16xf32>) {
  %c4 = arith.constant 4 : i32
  %i = pallas.iota 0 : tensor<8xi32>
  %n = arith.constant dense<6> : tensor<8xi32>
  %m = arith.cmpi slt, %i, %n : tensor<8xi32>
  %other = arith.constant dense<1.0> : tensor<8xf32>
  %v = pallas.load %x[%c4 : 8] mask %m other %other : !pallas.ref<16xf32> -> tensor<8xf32>
  %old = pallas.swap %o[0 : 8], %v mask %m : !pallas.ref<16xf32>, tensor<8xf32>
  %prev = pallas.atomic_rmw add %acc[8 : 8], %old : !pallas.ref<16xf32>, tensor<8xf32>
  pallas.store %o[%c4 : 8], %prev : !pallas.ref<16xf32>, tensor<8xf32>
}
func.func @main(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %o, %a = pallas.call @refs(%x) {grid = array<i64: 1>, in_specs = [#s], out_specs = [#s, #s]}
      : (tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>)
  return %o, %a : tensor<16xf32>, tensor<16xf32>
}

//===----------------------------------------------------------------------===//
// scf
//===----------------------------------------------------------------------===//

// -----

// Tests scf.for: the accumulator starts from a constant (a zero tangent),
// becomes differentiated in the body, so its tangent is carried as an extra
// iter_arg (zero-initialized); the integer counter carries none.

// CHECK-LABEL: pallas.kernel @loop_jvp
// CHECK: %[[ZERO:.+]] = arith.constant dense<0.000000e+00>
// CHECK: %[[X:.+]] = pallas.load %arg0[]
// CHECK: %[[DX:.+]] = pallas.load %arg1[]
// CHECK: %[[INIT:.+]] = arith.constant dense<0.000000e+00>
// CHECK: %[[C0:.+]] = arith.constant 0 : index
// CHECK: %[[R:.+]]:3 = scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %[[INIT]], %[[N:.+]] = %[[C0]], %[[DACC:.+]] = %[[ZERO]]) -> (tensor<8xf32>, index, tensor<8xf32>)
// CHECK:   %[[SQ:.+]] = arith.mulf %[[X]], %[[X]]
// CHECK:   %[[T1:.+]] = arith.mulf %[[DX]], %[[X]]
// CHECK:   %[[T2:.+]] = arith.mulf %[[X]], %[[DX]]
// CHECK:   %[[DSQ:.+]] = arith.addf %[[T1]], %[[T2]]
// CHECK:   %[[NEXT:.+]] = arith.addf %[[ACC]], %[[SQ]]
// CHECK:   %[[DNEXT:.+]] = arith.addf %[[DACC]], %[[DSQ]]
// CHECK:   %[[N1:.+]] = arith.addi %[[N]]
// CHECK:   scf.yield %[[NEXT]], %[[N1]], %[[DNEXT]]
// CHECK: pallas.store %arg2[], %[[R]]#0
// CHECK: pallas.store %arg3[], %[[R]]#2
#s = #pallas.block_spec<[8], (i) -> (i)>
pallas.kernel @loop(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  %v = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %zero = arith.constant dense<0.0> : tensor<8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r:2 = scf.for %k = %c0 to %c4 step %c1 iter_args(%acc = %zero, %n = %c0) -> (tensor<8xf32>, index) {
    %sq = arith.mulf %v, %v : tensor<8xf32>
    %next = arith.addf %acc, %sq : tensor<8xf32>
    %n1 = arith.addi %n, %c1 : index
    scf.yield %next, %n1 : tensor<8xf32>, index
  }
  pallas.store %o[], %r#0 : !pallas.ref<8xf32>, tensor<8xf32>
}
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @loop(%x) {grid = array<i64: 1>, in_specs = [#s], out_specs = [#s]}
      : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests scf.if with results: a result gets a tangent result when either
// branch yields a nonzero tangent; the other branch yields a zero.

// CHECK-LABEL: pallas.kernel @branch_jvp
// CHECK: %[[ZERO:.+]] = arith.constant dense<0.000000e+00>
// CHECK: %[[PID:.+]] = pallas.program_id 0
// CHECK: %[[X:.+]] = pallas.load %arg0[]
// CHECK: %[[DX:.+]] = pallas.load %arg1[]
// CHECK: %[[R:.+]]:3 = scf.if %{{.+}} -> (tensor<8xf32>, i32, tensor<8xf32>) {
// CHECK:   %[[E:.+]] = math.exp %[[X]]
// CHECK:   %[[DE:.+]] = arith.mulf %[[DX]], %[[E]]
// CHECK:   scf.yield %[[E]], %[[PID]], %[[DE]]
// CHECK: } else {
// CHECK:   %[[ONE:.+]] = arith.constant dense<1.000000e+00>
// CHECK:   scf.yield %[[ONE]], %{{.+}}, %[[ZERO]]
// CHECK: }
// CHECK: pallas.store %arg2[], %[[R]]#0
// CHECK: pallas.store %arg3[], %[[R]]#2
#s = #pallas.block_spec<[8], (i) -> (i)>
pallas.kernel @branch(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  %pid = pallas.program_id 0 : i32
  %c0 = arith.constant 0 : i32
  %first = arith.cmpi eq, %pid, %c0 : i32
  %v = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %r, %i = scf.if %first -> (tensor<8xf32>, i32) {
    %e = math.exp %v : tensor<8xf32>
    scf.yield %e, %pid : tensor<8xf32>, i32
  } else {
    %one = arith.constant dense<1.0> : tensor<8xf32>
    scf.yield %one, %c0 : tensor<8xf32>, i32
  }
  pallas.store %o[], %r : !pallas.ref<8xf32>, tensor<8xf32>
}
func.func @main(%x: tensor<16xf32>) -> tensor<16xf32> {
  %o = pallas.call @branch(%x) {grid = array<i64: 2>, in_specs = [#s], out_specs = [#s]}
      : (tensor<16xf32>) -> tensor<16xf32>
  return %o : tensor<16xf32>
}

// -----

// Tests scf.while: the carried value starts constant and becomes
// differentiated in the `do` region, so the tangent is carried through both
// regions and returned as an extra result.

// CHECK-LABEL: pallas.kernel @while_jvp
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[X:.+]] = pallas.load %arg0[0]
// CHECK: %[[DX:.+]] = pallas.load %arg1[0]
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[R:.+]]:2 = scf.while (%[[A:.+]] = %[[ONE]], %[[DA:.+]] = %[[ZERO]]) : (f32, f32) -> (f32, f32) {
// CHECK:   scf.condition(%{{.+}}) %[[A]], %[[DA]] : f32, f32
// CHECK: } do {
// CHECK: ^bb0(%[[B:.+]]: f32, %[[DB:.+]]: f32):
// CHECK:   %[[NEXT:.+]] = arith.mulf %[[B]], %[[X]]
// CHECK:   %[[T1:.+]] = arith.mulf %[[DB]], %[[X]]
// CHECK:   %[[T2:.+]] = arith.mulf %[[B]], %[[DX]]
// CHECK:   %[[DNEXT:.+]] = arith.addf %[[T1]], %[[T2]]
// CHECK:   scf.yield %[[NEXT]], %[[DNEXT]]
// CHECK: }
// CHECK: pallas.store %arg2[0], %[[R]]#0
// CHECK: pallas.store %arg3[0], %[[R]]#1
#s = #pallas.block_spec<[8], (i) -> (i)>
pallas.kernel @while(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  %v = pallas.load %x[0] : !pallas.ref<8xf32> -> f32
  %one = arith.constant 1.0 : f32
  %limit = arith.constant 100.0 : f32
  %r = scf.while (%a = %one) : (f32) -> f32 {
    %go = arith.cmpf olt, %a, %limit : f32
    scf.condition(%go) %a : f32
  } do {
  ^bb0(%b: f32):
    %next = arith.mulf %b, %v : f32
    scf.yield %next : f32
  }
  pallas.store %o[0], %r : !pallas.ref<8xf32>, f32
}
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @while(%x) {grid = array<i64: 1>, in_specs = [#s], out_specs = [#s]}
      : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

//===----------------------------------------------------------------------===//
// tensor
//===----------------------------------------------------------------------===//

// -----

// Tests tensor.extract, from_elements, splat (linear), empty (a zero
// tangent) and insert (linear in the scalar and the destination).

// CHECK-LABEL: pallas.kernel @tensors_jvp
// CHECK: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<8xf32>
// CHECK: %[[X:.+]] = pallas.load %arg0[]
// CHECK: %[[DX:.+]] = pallas.load %arg1[]
// CHECK: %[[E0:.+]] = tensor.extract %[[X]][%[[C0:.+]]]
// CHECK: %[[DE0:.+]] = tensor.extract %[[DX]][%[[C0]]]
// CHECK: %[[E1:.+]] = tensor.extract %[[X]][%[[C1:.+]]]
// CHECK: %[[DE1:.+]] = tensor.extract %[[DX]][%[[C1]]]
// CHECK: tensor.from_elements %[[E0]], %[[E1]]
// CHECK: %[[DP:.+]] = tensor.from_elements %[[DE0]], %[[DE1]]
// CHECK: tensor.splat %[[E1]]
// CHECK: %[[DS:.+]] = tensor.splat %[[DE1]]
// CHECK: %[[EMPTY:.+]] = tensor.empty()
// CHECK: tensor.insert %[[E0]] into %[[EMPTY]][%[[C0]]]
// CHECK: %[[DI:.+]] = tensor.insert %[[DE0]] into %[[ZERO]][%[[C0]]]
// CHECK: tensor.extract
// CHECK: %[[DPE:.+]] = tensor.extract %[[DP]][%[[C1]]]
// CHECK: pallas.broadcast_in_dim
// CHECK: %[[DPB:.+]] = pallas.broadcast_in_dim %[[DPE]] dims []
// CHECK: arith.addf
// CHECK: %[[DA:.+]] = arith.addf %[[DS]], %[[DI]]
// CHECK: arith.addf
// CHECK: %[[DR:.+]] = arith.addf %[[DA]], %[[DPB]]
// CHECK: pallas.store %arg3[], %[[DR]]
#s = #pallas.block_spec<[8], (i) -> (i)>
pallas.kernel @tensors(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  %v = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e0 = tensor.extract %v[%c0] : tensor<8xf32>
  %e1 = tensor.extract %v[%c1] : tensor<8xf32>
  %p = tensor.from_elements %e0, %e1 : tensor<2xf32>
  %s = tensor.splat %e1 : tensor<8xf32>
  %empty = tensor.empty() : tensor<8xf32>
  %ins = tensor.insert %e0 into %empty[%c0] : tensor<8xf32>
  %pe = tensor.extract %p[%c1] : tensor<2xf32>
  %pb = pallas.broadcast_in_dim %pe dims [] : f32 -> tensor<8xf32>
  %a = arith.addf %s, %ins : tensor<8xf32>
  %r = arith.addf %a, %pb : tensor<8xf32>
  pallas.store %o[], %r : !pallas.ref<8xf32>, tensor<8xf32>
}
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @tensors(%x) {grid = array<i64: 1>, in_specs = [#s], out_specs = [#s]}
      : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

// -----

// Tests that a call with input_output_aliases is rejected (JAX).

#s = #pallas.block_spec<[8], (i) -> (i)>
pallas.kernel @inc(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  %v = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  pallas.store %o[], %v : !pallas.ref<8xf32>, tensor<8xf32>
}
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{pallas-jvp: JVP with aliasing not supported (input_output_aliases: 0 -> 0)}}
  %o = pallas.call @inc(%x) {grid = array<i64: 1>, in_specs = [#s], out_specs = [#s],
      input_output_aliases = array<i64: 0, 0>}
      : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that a call with dynamic grid bounds is rejected (JAX).

#s = #pallas.block_spec<[8], (i) -> (i)>
pallas.kernel @copy(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  %v = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  pallas.store %o[], %v : !pallas.ref<8xf32>, tensor<8xf32>
}
func.func @main(%n: index, %x: tensor<64xf32>) -> tensor<64xf32> {
  // expected-error @+1 {{pallas-jvp: interpret with dynamic grid bounds unsupported: the grid has 1 dynamic bound(s); JVP needs a static grid}}
  %o = pallas.call @copy[%n](%x) {grid = array<i64: -1>, in_specs = [#s], out_specs = [#s]}
      : (tensor<64xf32>) -> tensor<64xf32>
  return %o : tensor<64xf32>
}

// -----

// Tests that a call with scalar prefetch is rejected (JAX raises
// NotImplementedError).

pallas.kernel @gather(%idx: !pallas.ref<4xi32, smem>, %x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  %v = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  pallas.store %o[], %v : !pallas.ref<8xf32>, tensor<8xf32>
}
func.func @main(%idx: tensor<4xi32>, %x: tensor<32xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{pallas-jvp: JVP of a pallas_call with scalar prefetch is not supported (num_scalar_prefetch = 1)}}
  %o = pallas.call @gather(%idx, %x) {grid = array<i64: 4>, num_scalar_prefetch = 1,
      in_specs = [#pallas.block_spec<[8], (i) -> (i)>],
      out_specs = [#pallas.block_spec<[8], (i) -> (i)>]}
      : (tensor<4xi32>, tensor<32xf32>) -> tensor<32xf32>
  return %o : tensor<32xf32>
}

// -----

// Tests that hi operands must be lowered by pallas-hi-to-lo first.

pallas.kernel @deq(%q: !pallas.hi<"qarray", !pallas.ref<8xi8>, !pallas.ref<1xf32>>,
                   %o: !pallas.ref<8xf32>) {
}
func.func @main(%q: !pallas.hi<"qarray", tensor<8xi8>, tensor<1xf32>>) -> tensor<8xf32> {
  // expected-error @+1 {{pallas-jvp: input 0 has hi type '!pallas.hi<"qarray", tensor<8xi8>, tensor<1xf32>>'; run pallas-hi-to-lo before pallas-jvp}}
  %o = pallas.call @deq(%q) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8], (i) -> (i)>],
      out_specs = [#pallas.block_spec<[8], (i) -> (i)>]}
      : (!pallas.hi<"qarray", tensor<8xi8>, tensor<1xf32>>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that doubling a cost estimate that would overflow int64 is an error.

#s = #pallas.block_spec<[8], (i) -> (i)>
pallas.kernel @big(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  %v = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  pallas.store %o[], %v : !pallas.ref<8xf32>, tensor<8xf32>
}
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{pallas-jvp: doubling the cost estimate overflows int64}}
  %o = pallas.call @big(%x) {grid = array<i64: 1>, in_specs = [#s], out_specs = [#s],
      cost_estimate = #pallas.cost<flops = 9223372036854775807, bytes_accessed = 0, transcendentals = 0>}
      : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that an op without a differentiation rule is named, at its location.

#s = #pallas.block_spec<[8], (i) -> (i)>
pallas.kernel @copysign(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  %v = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  // expected-error @+1 {{pallas-jvp: no differentiation rule for 'math.copysign'}}
  %c = math.copysign %v, %v : tensor<8xf32>
  pallas.store %o[], %c : !pallas.ref<8xf32>, tensor<8xf32>
}
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @copysign(%x) {grid = array<i64: 1>, in_specs = [#s], out_specs = [#s]}
      : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that an op with regions and no rule is named.

#s = #pallas.block_spec<[8], (i) -> (i)>
pallas.kernel @region_op(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  %v = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  // expected-error @+1 {{pallas-jvp: no differentiation rule for 'scf.execute_region'}}
  %r = scf.execute_region -> tensor<8xf32> {
    scf.yield %v : tensor<8xf32>
  }
  pallas.store %o[], %r : !pallas.ref<8xf32>, tensor<8xf32>
}
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @region_op(%x) {grid = array<i64: 1>, in_specs = [#s], out_specs = [#s]}
      : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that atomics other than add on float refs have no rule.

#s = #pallas.block_spec<[8], (i) -> (i)>
pallas.kernel @atomic_max(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  %v = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  // expected-error @+1 {{pallas-jvp: no differentiation rule for 'pallas.atomic_rmw' with kind 'max' on a floating-point ref (only 'add' is differentiable)}}
  %old = pallas.atomic_rmw max %o[], %v : !pallas.ref<8xf32>, tensor<8xf32>
}
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @atomic_max(%x) {grid = array<i64: 1>, in_specs = [#s], out_specs = [#s]}
      : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that a TPU async copy has no JVP rule (it is not differentiated).

#s = #pallas.block_spec<[8, 128], (i) -> (i, 0)>
pallas.kernel @dma(%x: !pallas.ref<32x128xf32, any>, %o: !pallas.ref<8x128xf32>,
                   %buf: !pallas.ref<8x128xf32, vmem>, %sem: !pallas.ref<2xi32, semaphore>) {
  // expected-error @+1 {{pallas-jvp: no differentiation rule for 'pallas.dma_start' (TPU async copies are not differentiated)}}
  pallas.dma_start %x[0 : 8, 0 : 128], %buf[], %sem[0]
      : !pallas.ref<32x128xf32, any>, !pallas.ref<8x128xf32, vmem>, !pallas.ref<2xi32, semaphore>
  pallas.dma_wait %x[0 : 8, 0 : 128], %buf[], %sem[0]
      : !pallas.ref<32x128xf32, any>, !pallas.ref<8x128xf32, vmem>, !pallas.ref<2xi32, semaphore>
  %v = pallas.load %buf[] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
  pallas.store %o[], %v : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @main(%x: tensor<32x128xf32>) -> tensor<32x128xf32> {
  %o = pallas.call @dma(%x) {grid = array<i64: 4>, in_specs = [#pallas.block_spec<any>], out_specs = [#s],
      scratch = [!pallas.ref<8x128xf32, vmem>, !pallas.ref<2xi32, semaphore>]}
      : (tensor<32x128xf32>) -> tensor<32x128xf32>
  return %o : tensor<32x128xf32>
}

// -----

// Tests that a kernel closing over a ref is rejected.

#s = #pallas.block_spec<[8], (i) -> (i)>
pallas.ref_global @counts : !pallas.ref<8xf32>
pallas.kernel @closure(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  // expected-error @+1 {{pallas-jvp: no differentiation rule for 'pallas.get_global': the kernel closes over the ref @counts}}
  %c = pallas.get_global @counts : !pallas.ref<8xf32>
  %v = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  pallas.store %c[], %v : !pallas.ref<8xf32>, tensor<8xf32>
  pallas.store %o[], %v : !pallas.ref<8xf32>, tensor<8xf32>
}
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @closure(%x) {grid = array<i64: 1>, in_specs = [#s], out_specs = [#s]}
      : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that writing a differentiated value into an input ref whose tangent
// is a symbolic zero (so it has no tangent ref) is an error, not a silently
// lost tangent.

#s = #pallas.block_spec<[8], (i) -> (i)>
pallas.kernel @write_input(%x: !pallas.ref<8xf32>, %y: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  %v = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  // expected-error @+1 {{pallas-jvp: 'pallas.store' writes a value with a nonzero tangent into a ref that has no tangent (an input whose tangent is zero)}}
  pallas.store %y[], %v : !pallas.ref<8xf32>, tensor<8xf32>
  pallas.store %o[], %v : !pallas.ref<8xf32>, tensor<8xf32>
}
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c = arith.constant dense<1.0> : tensor<8xf32>
  %o = pallas.call @write_input(%x, %c) {grid = array<i64: 1>, in_specs = [#s, #s], out_specs = [#s]}
      : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}
