// RUN: pallasc-opt %s -split-input-file -pallas-jvp | FileCheck %s

// The tangent rules of pallas-jvp that jvp.mlir does not reach: the rest of
// the math functions, the other float min/max flavours, the remaining
// zero-tangent ops, max_contiguous and the tensor shape ops (see the rules
// table in docs/transforms.md).

// Tests sinh, cosh, cbrt, log10, erfc and fpowi, chained so that each rule
// scales the previous tangent: sinh' = cosh, cosh' = sinh, cbrt' = (1/3) /
// ans^2, log10' = 1 / (x ln 10), erfc' = -2/sqrt(pi) exp(-x^2), fpowi' =
// (n == 0 ? 0 : n x^(n-1)).

// CHECK-LABEL: pallas.kernel @more_math_jvp
// CHECK-DAG: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<8xf32>
// CHECK-DAG: %[[IONE:.+]] = arith.constant dense<1> : tensor<8xi32>
// CHECK-DAG: %[[IZERO:.+]] = arith.constant dense<0> : tensor<8xi32>
// CHECK-DAG: %[[ERFCK:.+]] = arith.constant dense<-1.12837923> : tensor<8xf32>
// CHECK-DAG: %[[LN10:.+]] = arith.constant dense<2.30258512> : tensor<8xf32>
// CHECK-DAG: %[[THIRD:.+]] = arith.constant dense<0.333333343> : tensor<8xf32>
// CHECK: %[[X:.+]] = pallas.load %arg0[]
// CHECK: %[[DX:.+]] = pallas.load %arg1[]
// CHECK: %[[SH:.+]] = math.sinh %[[X]]
// CHECK: %[[C1:.+]] = math.cosh %[[X]]
// CHECK: %[[DSH:.+]] = arith.mulf %[[DX]], %[[C1]]
// CHECK: %[[CH:.+]] = math.cosh %[[SH]]
// CHECK: %[[S1:.+]] = math.sinh %[[SH]]
// CHECK: %[[DCH:.+]] = arith.mulf %[[DSH]], %[[S1]]
// CHECK: %[[CB:.+]] = math.cbrt %[[CH]]
// CHECK: %[[SQ:.+]] = arith.mulf %[[CB]], %[[CB]]
// CHECK: %[[K1:.+]] = arith.divf %[[THIRD]], %[[SQ]]
// CHECK: %[[DCB:.+]] = arith.mulf %[[DCH]], %[[K1]]
// CHECK: %[[LG:.+]] = math.log10 %[[CB]]
// CHECK: %[[K2:.+]] = arith.mulf %[[CB]], %[[LN10]]
// CHECK: %[[DLG:.+]] = arith.divf %[[DCB]], %[[K2]]
// CHECK: %[[EC:.+]] = math.erfc %[[LG]]
// CHECK: %[[SQ2:.+]] = arith.mulf %[[LG]], %[[LG]]
// CHECK: %[[NSQ:.+]] = arith.negf %[[SQ2]]
// CHECK: %[[G:.+]] = math.exp %[[NSQ]]
// CHECK: %[[P:.+]] = arith.mulf %[[DLG]], %[[G]]
// CHECK: %[[DEC:.+]] = arith.mulf %[[ERFCK]], %[[P]]
// CHECK: %[[N:.+]] = arith.constant dense<3> : tensor<8xi32>
// CHECK: %[[PW:.+]] = math.fpowi %[[EC]], %[[N]]
// CHECK: %[[ISZ:.+]] = arith.cmpi eq, %[[N]], %[[IZERO]]
// CHECK: %[[NM1:.+]] = arith.subi %[[N]], %[[IONE]]
// CHECK: %[[XP:.+]] = math.fpowi %[[EC]], %[[NM1]]
// CHECK: %[[NF:.+]] = arith.sitofp %[[N]]
// CHECK: %[[J:.+]] = arith.mulf %[[NF]], %[[XP]]
// CHECK: %[[JS:.+]] = arith.select %[[ISZ]], %[[ZERO]], %[[J]]
// CHECK: %[[DPW:.+]] = arith.mulf %[[DEC]], %[[JS]]
// CHECK: pallas.store %arg2[], %[[PW]]
// CHECK: pallas.store %arg3[], %[[DPW]]
#s = #pallas.block_spec<[8], (i) -> (i)>
pallas.kernel @more_math(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  %a = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %sh = math.sinh %a : tensor<8xf32>
  %ch = math.cosh %sh : tensor<8xf32>
  %cb = math.cbrt %ch : tensor<8xf32>
  %lg = math.log10 %cb : tensor<8xf32>
  %ec = math.erfc %lg : tensor<8xf32>
  %n = arith.constant dense<3> : tensor<8xi32>
  %pw = math.fpowi %ec, %n : tensor<8xf32>, tensor<8xi32>
  pallas.store %o[], %pw : !pallas.ref<8xf32>, tensor<8xf32>
}
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @more_math(%x) {grid = array<i64: 1>, in_specs = [#s], out_specs = [#s]}
      : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests minimumf, maxnumf and minnumf (JAX's _balanced_eq, as for maximumf:
// each side's tangent where it equals the result, halved on a tie), an
// operand with a zero tangent contributing no term (uitofp; ceil, round and
// roundeven), and max_contiguous passing the tangent through (no op).

// CHECK-LABEL: pallas.kernel @choosers_jvp
// CHECK-DAG: %[[TWO:.+]] = arith.constant dense<2.000000e+00> : tensor<8xf32>
// CHECK-DAG: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<8xf32>
// CHECK-DAG: %[[ONE:.+]] = arith.constant dense<1.000000e+00> : tensor<8xf32>
// CHECK: %[[A:.+]] = pallas.load %arg0[]
// CHECK: %[[DA:.+]] = pallas.load %arg3[]
// CHECK: %[[B:.+]] = pallas.load %arg1[]
// CHECK: %[[DB:.+]] = pallas.load %arg4[]
// CHECK: %[[I:.+]] = pallas.load %arg2[]
// CHECK: %[[MN:.+]] = arith.minimumf %[[A]], %[[B]]
// CHECK: %[[AEQ:.+]] = arith.cmpf oeq, %[[A]], %[[MN]]
// CHECK: %[[BEQ:.+]] = arith.cmpf oeq, %[[B]], %[[MN]]
// CHECK: %[[AW:.+]] = arith.select %[[AEQ]], %[[ONE]], %[[ZERO]]
// CHECK: %[[AD:.+]] = arith.select %[[BEQ]], %[[TWO]], %[[ONE]]
// CHECK: %[[AK:.+]] = arith.divf %[[AW]], %[[AD]]
// CHECK: %[[TA:.+]] = arith.mulf %[[DA]], %[[AK]]
// CHECK: %[[BW:.+]] = arith.select %[[BEQ]], %[[ONE]], %[[ZERO]]
// CHECK: %[[BD:.+]] = arith.select %[[AEQ]], %[[TWO]], %[[ONE]]
// CHECK: %[[BK:.+]] = arith.divf %[[BW]], %[[BD]]
// CHECK: %[[TB:.+]] = arith.mulf %[[DB]], %[[BK]]
// CHECK: %[[DMN:.+]] = arith.addf %[[TA]], %[[TB]]
// CHECK: %[[U:.+]] = arith.uitofp %[[I]]
// CHECK: %[[MX:.+]] = arith.maxnumf %[[MN]], %[[U]]
// CHECK: %[[MEQ:.+]] = arith.cmpf oeq, %[[MN]], %[[MX]]
// CHECK: %[[UEQ:.+]] = arith.cmpf oeq, %[[U]], %[[MX]]
// CHECK: %[[MW:.+]] = arith.select %[[MEQ]], %[[ONE]], %[[ZERO]]
// CHECK: %[[MD:.+]] = arith.select %[[UEQ]], %[[TWO]], %[[ONE]]
// CHECK: %[[MK:.+]] = arith.divf %[[MW]], %[[MD]]
// CHECK: %[[DMX:.+]] = arith.mulf %[[DMN]], %[[MK]]
// CHECK-NOT: arith.mulf
// CHECK: math.ceil
// CHECK-NEXT: math.round
// CHECK-NEXT: math.roundeven
// CHECK-NEXT: arith.addf
// CHECK-NEXT: %[[Z:.+]] = arith.addf
// CHECK-NEXT: %[[M2:.+]] = arith.minnumf %[[MX]], %[[Z]]
// CHECK: %[[XEQ:.+]] = arith.cmpf oeq, %[[MX]], %[[M2]]
// CHECK: %[[ZEQ:.+]] = arith.cmpf oeq, %[[Z]], %[[M2]]
// CHECK: %[[XW:.+]] = arith.select %[[XEQ]], %[[ONE]], %[[ZERO]]
// CHECK: %[[XD:.+]] = arith.select %[[ZEQ]], %[[TWO]], %[[ONE]]
// CHECK: %[[XK:.+]] = arith.divf %[[XW]], %[[XD]]
// CHECK: %[[DM2:.+]] = arith.mulf %[[DMX]], %[[XK]]
// CHECK-NEXT: %[[H:.+]] = pallas.max_contiguous %[[M2]], [8]
// CHECK-NEXT: pallas.store %arg5[], %[[H]]
// CHECK-NEXT: pallas.store %arg6[], %[[DM2]]
#s = #pallas.block_spec<[8], (i) -> (i)>
pallas.kernel @choosers(%x: !pallas.ref<8xf32>, %y: !pallas.ref<8xf32>, %n: !pallas.ref<8xi32>, %o: !pallas.ref<8xf32>) {
  %a = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %b = pallas.load %y[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %i = pallas.load %n[] : !pallas.ref<8xi32> -> tensor<8xi32>
  %mn = arith.minimumf %a, %b : tensor<8xf32>
  %u = arith.uitofp %i : tensor<8xi32> to tensor<8xf32>
  %mx = arith.maxnumf %mn, %u : tensor<8xf32>
  %c = math.ceil %a : tensor<8xf32>
  %r = math.round %b : tensor<8xf32>
  %re = math.roundeven %mx : tensor<8xf32>
  %cr = arith.addf %c, %r : tensor<8xf32>
  %zero = arith.addf %cr, %re : tensor<8xf32>
  %m2 = arith.minnumf %mx, %zero : tensor<8xf32>
  %h = pallas.max_contiguous %m2, [8] : tensor<8xf32>
  pallas.store %o[], %h : !pallas.ref<8xf32>, tensor<8xf32>
}
func.func @main(%x: tensor<8xf32>, %y: tensor<8xf32>, %n: tensor<8xi32>) -> tensor<8xf32> {
  %o = pallas.call @choosers(%x, %y, %n) {grid = array<i64: 1>, in_specs = [#s, #s, #s], out_specs = [#s]}
      : (tensor<8xf32>, tensor<8xf32>, tensor<8xi32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests the tensor shape ops: extract_slice, expand_shape, collapse_shape,
// cast and reshape apply to the tangent as they do to the primal (sizes,
// shape operand primal); concat and insert_slice take the tangents of their
// data operands.

// CHECK-LABEL: pallas.kernel @shapes_jvp
// CHECK: %[[A:.+]] = pallas.load %arg0[]
// CHECK: %[[DA:.+]] = pallas.load %arg2[]
// CHECK: %[[B:.+]] = pallas.load %arg1[]
// CHECK: %[[DB:.+]] = pallas.load %arg3[]
// CHECK: %[[LO:.+]] = tensor.extract_slice %[[A]][0] [4] [1]
// CHECK: %[[DLO:.+]] = tensor.extract_slice %[[DA]][0] [4] [1]
// CHECK: %[[E:.+]] = tensor.expand_shape %[[LO]] {{\[\[}}0, 1]] output_shape [2, 2]
// CHECK: %[[DE:.+]] = tensor.expand_shape %[[DLO]] {{\[\[}}0, 1]] output_shape [2, 2]
// CHECK: %[[F:.+]] = tensor.collapse_shape %[[E]] {{\[\[}}0, 1]]
// CHECK: %[[DF:.+]] = tensor.collapse_shape %[[DE]] {{\[\[}}0, 1]]
// CHECK: %[[D:.+]] = tensor.cast %[[F]] : tensor<4xf32> to tensor<?xf32>
// CHECK: %[[DD:.+]] = tensor.cast %[[DF]] : tensor<4xf32> to tensor<?xf32>
// CHECK: %[[C:.+]] = tensor.cast %[[D]] : tensor<?xf32> to tensor<4xf32>
// CHECK: %[[DC:.+]] = tensor.cast %[[DD]] : tensor<?xf32> to tensor<4xf32>
// CHECK: %[[SHAPE:.+]] = arith.constant dense<4> : tensor<1xindex>
// CHECK: %[[R:.+]] = tensor.reshape %[[C]](%[[SHAPE]])
// CHECK: %[[DR:.+]] = tensor.reshape %[[DC]](%[[SHAPE]])
// CHECK: %[[CAT:.+]] = tensor.concat dim(0) %[[R]], %[[R]]
// CHECK: %[[DCAT:.+]] = tensor.concat dim(0) %[[DR]], %[[DR]]
// CHECK: %[[INS:.+]] = tensor.insert_slice %[[LO]] into %[[B]][4] [4] [1]
// CHECK: %[[DINS:.+]] = tensor.insert_slice %[[DLO]] into %[[DB]][4] [4] [1]
// CHECK: %[[S:.+]] = arith.addf %[[CAT]], %[[INS]]
// CHECK: %[[DS:.+]] = arith.addf %[[DCAT]], %[[DINS]]
// CHECK: pallas.store %arg4[], %[[S]]
// CHECK: pallas.store %arg5[], %[[DS]]
#s = #pallas.block_spec<[8], (i) -> (i)>
pallas.kernel @shapes(%x: !pallas.ref<8xf32>, %y: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  %a = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %b = pallas.load %y[] : !pallas.ref<8xf32> -> tensor<8xf32>
  %lo = tensor.extract_slice %a[0] [4] [1] : tensor<8xf32> to tensor<4xf32>
  %e = tensor.expand_shape %lo [[0, 1]] output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
  %f = tensor.collapse_shape %e [[0, 1]] : tensor<2x2xf32> into tensor<4xf32>
  %d = tensor.cast %f : tensor<4xf32> to tensor<?xf32>
  %c = tensor.cast %d : tensor<?xf32> to tensor<4xf32>
  %shape = arith.constant dense<[4]> : tensor<1xindex>
  %r = tensor.reshape %c(%shape) : (tensor<4xf32>, tensor<1xindex>) -> tensor<4xf32>
  %cat = tensor.concat dim(0) %r, %r : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
  %ins = tensor.insert_slice %lo into %b[4] [4] [1] : tensor<4xf32> into tensor<8xf32>
  %sum = arith.addf %cat, %ins : tensor<8xf32>
  pallas.store %o[], %sum : !pallas.ref<8xf32>, tensor<8xf32>
}
func.func @main(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @shapes(%x, %y) {grid = array<i64: 1>, in_specs = [#s, #s], out_specs = [#s]}
      : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}
