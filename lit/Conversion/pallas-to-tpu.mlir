// RUN: pallasc-opt %s -split-input-file -pallas-to-tpu | FileCheck %s

// Tests the kernel signature and attributes, and the matmul lowering
// (as Pallas' Mosaic lowering: zero accumulator, then acc + dot).
// CHECK-LABEL: func.func @mm(
// CHECK-SAME: %[[I:.+]]: i32, %[[J:.+]]: i32, %[[K:.+]]: i32,
// CHECK-SAME: %[[A:.+]]: memref<128x128xbf16, #tpu.memory_space<vmem>>, %[[B:.+]]: memref<128x128xbf16, #tpu.memory_space<vmem>>,
// CHECK-SAME: %[[O:.+]]: memref<128x128xf32, #tpu.memory_space<vmem>>, %[[ACC:.+]]: memref<128x128xf32, #tpu.memory_space<vmem>>)
// CHECK-SAME: dimension_semantics = [#tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<arbitrary>]
// CHECK-SAME: iteration_bounds = array<i64: 8, 8, 4>, scalar_prefetch = 0 : i64, scratch_operands = 1 : i64, tpu.core_type = #tpu.core_type<tc>
// CHECK-SAME: window_params = [{transform_indices = @transform_0, window_bounds = array<i64: 128, 128>}, {transform_indices = @transform_1, window_bounds = array<i64: 128, 128>}, {transform_indices = @transform_2, window_bounds = array<i64: 128, 128>}]
// CHECK: %[[C4:.+]] = arith.constant 4 : i32
// CHECK: arith.cmpi eq, %[[K]], %[[C4]] : i32
// CHECK: %[[X:.+]] = vector.load %[[A]][%{{.+}}, %{{.+}}] : memref<128x128xbf16, #tpu.memory_space<vmem>>, vector<128x128xbf16>
// CHECK: %[[Y:.+]] = vector.load %[[B]]
// CHECK: %[[P:.+]] = vector.load %[[ACC]]
// CHECK: %[[Z:.+]] = arith.constant dense<0.000000e+00> : vector<128x128xf32>
// CHECK: %[[D:.+]] = tpu.matmul %[[X]], %[[Y]], %[[Z]] {dimension_numbers = #tpu.dot_dimension_numbers<[1], [0], [0], [1], [0, 0, 1, 1], [], []>, transpose_lhs_hint = false}
// CHECK: %[[S:.+]] = arith.addf %[[P]], %[[D]] : vector<128x128xf32>
// CHECK: tpu.vector_store %[[ACC]][%{{.+}}, %{{.+}}], %[[S]] {strides = array<i32>} : memref<128x128xf32, #tpu.memory_space<vmem>>, vector<128x128xf32>,
// CHECK: return
// CHECK-LABEL: func.func @transform_0(
// CHECK-SAME: %[[TI:.+]]: i32, %{{.+}}: i32, %[[TK:.+]]: i32) -> (i32, i32)
// CHECK-NEXT: return %[[TI]], %[[TK]] : i32, i32
// CHECK-LABEL: func.func @transform_1(
// CHECK-LABEL: func.func @transform_2(
// CHECK-NOT: pallas
pallas.kernel @mm_kernel(%a: !pallas.ref<128x128xbf16>, %b: !pallas.ref<128x128xbf16>,
                         %o: !pallas.ref<128x128xf32>, %acc: !pallas.ref<128x128xf32, vmem>) {
  %k = pallas.program_id 2 : i32
  %nk = pallas.num_programs 2 : i32
  %last = arith.cmpi eq, %k, %nk : i32
  %x = pallas.load %a[] : !pallas.ref<128x128xbf16> -> tensor<128x128xbf16>
  %y = pallas.load %b[] : !pallas.ref<128x128xbf16> -> tensor<128x128xbf16>
  %p = pallas.load %acc[] : !pallas.ref<128x128xf32, vmem> -> tensor<128x128xf32>
  %d = pallas.dot %x, %y, %p : tensor<128x128xbf16>, tensor<128x128xbf16>, tensor<128x128xf32> -> tensor<128x128xf32>
  pallas.store %acc[], %d : !pallas.ref<128x128xf32, vmem>, tensor<128x128xf32>
  scf.if %last {
    pallas.store %o[], %d : !pallas.ref<128x128xf32>, tensor<128x128xf32>
  }
}
func.func @main(%a: tensor<1024x512xbf16>, %b: tensor<512x1024xbf16>) -> tensor<1024x1024xf32> {
  %0 = pallas.call @mm_kernel(%a, %b) {grid = array<i64: 8, 8, 4>, name = "mm",
      in_specs = [#pallas.block_spec<[128, 128], (d0, d1, d2) -> (d0, d2)>, #pallas.block_spec<[128, 128], (d0, d1, d2) -> (d2, d1)>],
      out_specs = [#pallas.block_spec<[128, 128], (d0, d1, d2) -> (d0, d1)>], scratch = [!pallas.ref<128x128xf32, vmem>],
      compiler_params = #pallas.compiler_params<tpu = <dimension_semantics = [parallel, parallel, arbitrary]>>}
      : (tensor<1024x512xbf16>, tensor<512x1024xbf16>) -> tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}

// -----

// Tests squeezed dims (kept as 1 in the memref, shape_cast away), masked
// loads (a select with `other`), masked stores, 2-D iota, a reduction to a
// scalar, and the default dimension semantics (arbitrary).
// CHECK-LABEL: func.func @softmax(
// CHECK-SAME: %{{.+}}: i32, %[[X:.+]]: memref<1x8x1024xf32, #tpu.memory_space<vmem>>, %[[O:.+]]: memref<1x8x1024xf32, #tpu.memory_space<vmem>>)
// CHECK-SAME: dimension_semantics = [#tpu.dimension_semantics<arbitrary>]
// CHECK-SAME: window_bounds = array<i64: 1, 8, 1024>
// CHECK: %[[COLS:.+]] = tpu.iota {dimensions = array<i32: 1>} : vector<8x1024xi32>
// CHECK: %[[MASK:.+]] = arith.cmpi slt, %[[COLS]]
// CHECK: %[[NINF:.+]] = arith.constant dense<0xFF800000> : vector<8x1024xf32>
// CHECK: %[[L:.+]] = vector.load %[[X]][%{{.+}}, %{{.+}}, %{{.+}}] : memref<1x8x1024xf32, #tpu.memory_space<vmem>>, vector<1x8x1024xf32>
// CHECK: %[[L2:.+]] = vector.shape_cast %[[L]] : vector<1x8x1024xf32> to vector<8x1024xf32>
// CHECK: %[[V:.+]] = arith.select %[[MASK]], %[[L2]], %[[NINF]] : vector<8x1024xi1>, vector<8x1024xf32>
// CHECK: %[[MINF:.+]] = arith.constant dense<0xFF800000> : vector<8xf32>
// CHECK: %[[M:.+]] = vector.multi_reduction <maximumf>, %[[V]], %[[MINF]] [1] : vector<8x1024xf32> to vector<8xf32>
// CHECK: %[[MC:.+]] = vector.shape_cast %[[M]] : vector<8xf32> to vector<8x1xf32>
// CHECK: vector.broadcast %[[MC]] : vector<8x1xf32> to vector<8x1024xf32>
// CHECK: %[[E:.+]] = math.exp
// CHECK: %[[E3:.+]] = vector.shape_cast %[[E]] : vector<8x1024xf32> to vector<1x8x1024xf32>
// CHECK: %[[R:.+]] = vector.multi_reduction <add>, %[[E3]], %{{.+}} [1, 2] : vector<1x8x1024xf32> to vector<1xf32>
// CHECK: %[[T:.+]] = vector.extract %[[R]][0] : f32 from vector<1xf32>
// CHECK: vector.broadcast %[[T]] : f32 to vector<8x1024xf32>
// CHECK: %[[Y:.+]] = vector.shape_cast %{{.+}} : vector<8x1024xf32> to vector<1x8x1024xf32>
// CHECK: %[[YM:.+]] = vector.shape_cast %[[MASK]] : vector<8x1024xi1> to vector<1x8x1024xi1>
// CHECK: tpu.vector_store %[[O]][%{{.+}}, %{{.+}}, %{{.+}}], %[[Y]] masked %[[YM]] {strides = array<i32>} : memref<1x8x1024xf32, #tpu.memory_space<vmem>>, vector<1x8x1024xf32>, vector<1x8x1024xi1>
// CHECK-LABEL: func.func @transform_0(
// CHECK-SAME: %[[TI:.+]]: i32) -> (i32, i32, i32)
// CHECK: %[[Z0:.+]] = arith.constant 0 : i32
// CHECK: %[[Z1:.+]] = arith.constant 0 : i32
// CHECK: return %[[TI]], %[[Z0]], %[[Z1]] : i32, i32, i32
pallas.kernel @softmax_kernel(%x: !pallas.ref<8x1024xf32>, %o: !pallas.ref<8x1024xf32>) {
  %cols = pallas.iota 1 : tensor<8x1024xi32>
  %n = arith.constant dense<1000> : tensor<8x1024xi32>
  %mask = arith.cmpi slt, %cols, %n : tensor<8x1024xi32>
  %ninf = arith.constant dense<0xFF800000> : tensor<8x1024xf32>
  %v = pallas.load %x[0 : 8, 0 : 1024] mask %mask other %ninf : !pallas.ref<8x1024xf32> -> tensor<8x1024xf32>
  %m = pallas.reduce max %v dims [1] : tensor<8x1024xf32> -> tensor<8xf32>
  %mb = pallas.broadcast_in_dim %m dims [0] : tensor<8xf32> -> tensor<8x1024xf32>
  %s = arith.subf %v, %mb : tensor<8x1024xf32>
  %e = math.exp %s : tensor<8x1024xf32>
  %t = pallas.reduce sum %e dims [0, 1] : tensor<8x1024xf32> -> tensor<f32>
  %tb = pallas.broadcast_in_dim %t dims [] : tensor<f32> -> tensor<8x1024xf32>
  %y = arith.divf %e, %tb : tensor<8x1024xf32>
  pallas.store %o[0 : 8, 0 : 1024], %y mask %mask : !pallas.ref<8x1024xf32>, tensor<8x1024xf32>
}
func.func @main(%a: tensor<512x8x1000xf32>) -> tensor<512x8x1000xf32> {
  %0 = pallas.call @softmax_kernel(%a) {grid = array<i64: 512>, name = "softmax",
      in_specs = [#pallas.block_spec<[squeezed, 8, 1024], (d0) -> (d0, 0, 0)>],
      out_specs = [#pallas.block_spec<[squeezed, 8, 1024], (d0) -> (d0, 0, 0)>]}
      : (tensor<512x8x1000xf32>) -> tensor<512x8x1000xf32>
  return %0 : tensor<512x8x1000xf32>
}

// -----

// Tests scalar prefetch: SMEM memref arguments after the grid indices, an
// `@func` index map lowered into its transform function (the prefetch ref
// read with memref.load), and an SMEM scalar load in the kernel.
// CHECK-LABEL: func.func @gather(
// CHECK-SAME: %[[I:.+]]: i32, %[[IDX:.+]]: memref<16xi32, #tpu.memory_space<smem>>, %[[ROW:.+]]: memref<8x512xf32, #tpu.memory_space<vmem>>, %{{.+}}: memref<8x512xf32, #tpu.memory_space<vmem>>)
// CHECK-SAME: scalar_prefetch = 1 : i64
// CHECK: %[[II:.+]] = arith.index_cast %[[I]] : i32 to index
// CHECK: %[[R:.+]] = memref.load %[[IDX]][%[[II]]] : memref<16xi32, #tpu.memory_space<smem>>
// CHECK: arith.sitofp %[[R]] : i32 to f32
// CHECK-LABEL: func.func @transform_0(
// CHECK-SAME: %[[TI:.+]]: i32, %[[TIDX:.+]]: memref<16xi32, #tpu.memory_space<smem>>) -> (i32, i32)
// CHECK: %[[TII:.+]] = arith.index_cast %[[TI]] : i32 to index
// CHECK: %[[TR:.+]] = memref.load %[[TIDX]][%[[TII]]]
// CHECK: return %[[TR]], %{{.+}} : i32, i32
// CHECK-LABEL: func.func @transform_1(
// CHECK-SAME: %{{.+}}: i32, %{{.+}}: memref<16xi32, #tpu.memory_space<smem>>) -> (i32, i32)
// CHECK-NOT: @row_map
func.func @row_map(%i: i32, %idx: !pallas.ref<16xi32, smem>) -> (i32, i32) {
  %r = pallas.load %idx[%i] : !pallas.ref<16xi32, smem> -> i32
  %c0 = arith.constant 0 : i32
  return %r, %c0 : i32, i32
}
pallas.kernel @gather_kernel(%idx: !pallas.ref<16xi32, smem>, %row: !pallas.ref<8x512xf32>, %o: !pallas.ref<8x512xf32>) {
  %i = pallas.program_id 0 : i32
  %r = pallas.load %idx[%i] : !pallas.ref<16xi32, smem> -> i32
  %f = arith.sitofp %r : i32 to f32
  %fb = pallas.broadcast_in_dim %f dims [] : f32 -> tensor<8x512xf32>
  %v = pallas.load %row[] : !pallas.ref<8x512xf32> -> tensor<8x512xf32>
  %s = arith.addf %v, %fb : tensor<8x512xf32>
  pallas.store %o[], %s : !pallas.ref<8x512xf32>, tensor<8x512xf32>
}
func.func @main(%idx: tensor<16xi32>, %t: tensor<256x512xf32>) -> tensor<128x512xf32> {
  %0 = pallas.call @gather_kernel(%idx, %t) {grid = array<i64: 16>, name = "gather", num_scalar_prefetch = 1 : i64,
      in_specs = [#pallas.block_spec<[8, 512], @row_map>],
      out_specs = [#pallas.block_spec<[8, 512], (d0) -> (d0, 0)>]}
      : (tensor<16xi32>, tensor<256x512xf32>) -> tensor<128x512xf32>
  return %0 : tensor<128x512xf32>
}

// -----

// Tests a vmapped grid dim: an i32 argument and a parallel dimension the
// kernel does not see (program_id 0 is the second index), transform
// functions over the whole grid, and num_programs of a static axis folded
// to a constant as Pallas does.
// CHECK-LABEL: func.func @pid(
// CHECK-SAME: %{{.+}}: i32, %[[I:.+]]: i32, %{{.+}}: memref<1x8x128xf32, #tpu.memory_space<vmem>>
// CHECK-SAME: dimension_semantics = [#tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<arbitrary>]
// CHECK-SAME: iteration_bounds = array<i64: 3, 4>
// CHECK: %[[N:.+]] = arith.constant 4 : i32
// CHECK: arith.addi %[[I]], %[[N]] : i32
// CHECK-LABEL: func.func @transform_0(
// CHECK-SAME: %[[B:.+]]: i32, %[[J:.+]]: i32) -> (i32, i32, i32)
// CHECK: return %[[B]], %[[J]], %{{.+}} : i32, i32, i32
pallas.kernel @pid_kernel(%x: !pallas.ref<8x128xf32>, %o: !pallas.ref<8x128xf32>) {
  %i = pallas.program_id 0 : i32
  %n = pallas.num_programs 0 : i32
  %s = arith.addi %i, %n : i32
  %f = arith.sitofp %s : i32 to f32
  %fb = pallas.broadcast_in_dim %f dims [] : f32 -> tensor<8x128xf32>
  %v = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %r = arith.addf %v, %fb : tensor<8x128xf32>
  pallas.store %o[], %r : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @main(%x: tensor<3x32x128xf32>) -> tensor<3x32x128xf32> {
  %0 = pallas.call @pid_kernel(%x) {grid = array<i64: 3, 4>, name = "pid", vmapped_dims = array<i64: 0>,
      in_specs = [#pallas.block_spec<[squeezed, 8, 128], (d0, d1) -> (d0, d1, 0)>],
      out_specs = [#pallas.block_spec<[squeezed, 8, 128], (d0, d1) -> (d0, d1, 0)>],
      compiler_params = #pallas.compiler_params<tpu = <dimension_semantics = [arbitrary]>>}
      : (tensor<3x32x128xf32>) -> tensor<3x32x128xf32>
  return %0 : tensor<3x32x128xf32>
}

// -----

// Tests a dynamic grid bound: iteration_bounds holds MLIR's dynamic size and
// num_programs reads it with tpu.iteration_bound.
// CHECK-LABEL: func.func @dyn(
// CHECK-SAME: iteration_bounds = array<i64: -9223372036854775808>
// CHECK: %[[N:.+]] = tpu.iteration_bound 0 : i32
// CHECK: arith.sitofp %[[N]] : i32 to f32
pallas.kernel @dyn_kernel(%x: !pallas.ref<8x128xf32>, %o: !pallas.ref<8x128xf32>) {
  %n = pallas.num_programs 0 : i32
  %f = arith.sitofp %n : i32 to f32
  %fb = pallas.broadcast_in_dim %f dims [] : f32 -> tensor<8x128xf32>
  pallas.store %o[], %fb : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @main(%n: index, %x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %0 = pallas.call @dyn_kernel[%n](%x) {grid = array<i64: -1>, name = "dyn",
      in_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>],
      out_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>]}
      : (tensor<64x128xf32>) -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}

// -----

// Tests window params: `{}` and no transform function for an `any` operand,
// an element window with its padding, single buffering for a VMEM block
// that never moves, and SMEM / semaphore scratch.
// CHECK-LABEL: func.func @win(
// CHECK-SAME: %{{.+}}: i32, %{{.+}}: memref<32x128xf32, #tpu.memory_space<any>>, %{{.+}}: memref<16x128xf32, #tpu.memory_space<vmem>>, %{{.+}}: memref<128xf32, #tpu.memory_space<vmem>>, %{{.+}}: memref<16x128xf32, #tpu.memory_space<vmem>>, %{{.+}}: memref<4xi32, #tpu.memory_space<smem>>, %{{.+}}: memref<2x!tpu.semaphore, #tpu.memory_space<semaphore_mem>>)
// CHECK-SAME: scratch_operands = 2 : i64
// CHECK-SAME: window_params = [{}, {transform_indices = @transform_1, window_bounds = array<i64: 16, 128>, window_kind = #tpu.element_window<[2, 0], [2, 0]>}, {pipeline_mode = #tpu.pipeline_mode<synchronous>, transform_indices = @transform_2, window_bounds = array<i64: 128>}, {transform_indices = @transform_3, window_bounds = array<i64: 16, 128>}]
// CHECK-NOT: func.func @transform_0
// CHECK-LABEL: func.func @transform_1(
// CHECK: %[[C:.+]] = arith.constant 16 : i32
// CHECK: arith.muli %{{.+}}, %[[C]] : i32
pallas.kernel @win_kernel(%h: !pallas.ref<32x128xf32, any>, %x: !pallas.ref<16x128xf32>, %w: !pallas.ref<128xf32>,
                          %o: !pallas.ref<16x128xf32>, %s: !pallas.ref<4xi32, smem>, %sem: !pallas.ref<2xi32, semaphore>) {
  %v = pallas.load %x[] : !pallas.ref<16x128xf32> -> tensor<16x128xf32>
  pallas.store %o[], %v : !pallas.ref<16x128xf32>, tensor<16x128xf32>
}
func.func @main(%h: tensor<32x128xf32>, %x: tensor<64x128xf32>, %w: tensor<128xf32>) -> tensor<64x128xf32> {
  %0 = pallas.call @win_kernel(%h, %x, %w) {grid = array<i64: 4>, name = "win",
      in_specs = [#pallas.block_spec<any>,
                  #pallas.block_spec<[element(16, 2, 2), element(128)], (d0) -> (d0 * 16, 0)>,
                  #pallas.block_spec<[128], (d0) -> (0)>],
      out_specs = [#pallas.block_spec<[16, 128], (d0) -> (d0, 0)>],
      scratch = [!pallas.ref<4xi32, smem>, !pallas.ref<2xi32, semaphore>]}
      : (tensor<32x128xf32>, tensor<64x128xf32>, tensor<128xf32>) -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}

// -----

// Tests index maps to i32 arithmetic: floordiv and mod of non-negative
// expressions are plain divsi / remsi; of possibly negative ones they are
// corrected towards -inf and into [0, divisor).
// CHECK-LABEL: func.func @transform_0(
// CHECK-SAME: %[[I:.+]]: i32, %[[J:.+]]: i32) -> (i32, i32)
// CHECK: %[[Q:.+]] = arith.divsi %[[I]], %{{.+}} : i32
// CHECK: %[[R:.+]] = arith.remsi %[[J]], %{{.+}} : i32
// CHECK: %[[A:.+]] = arith.addi %[[Q]], %[[R]] : i32
// CHECK: %[[D:.+]] = arith.addi %[[J]], %{{.+}} : i32
// CHECK: %[[M:.+]] = arith.remsi %[[D]], %[[C4:.+]] : i32
// CHECK: %[[NEG:.+]] = arith.cmpi slt, %[[M]], %{{.+}} : i32
// CHECK: %[[FIX:.+]] = arith.addi %[[M]], %[[C4]] : i32
// CHECK: %[[MOD:.+]] = arith.select %[[NEG]], %[[FIX]], %[[M]] : i32
// CHECK: return %[[A]], %[[MOD]] : i32, i32
// CHECK-LABEL: func.func @transform_1(
// CHECK: arith.divsi
// CHECK: arith.remsi
// CHECK: arith.cmpi slt
// CHECK: arith.subi
// CHECK: arith.select
pallas.kernel @map_kernel(%x: !pallas.ref<8x128xf32>, %o: !pallas.ref<8x128xf32>) {
  %v = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  pallas.store %o[], %v : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @main(%x: tensor<64x512xf32>) -> tensor<64x512xf32> {
  %0 = pallas.call @map_kernel(%x) {grid = array<i64: 8, 4>, name = "maps",
      in_specs = [#pallas.block_spec<[8, 128], (d0, d1) -> (d0 floordiv 2 + d1 mod 3, (d1 - 1) mod 4)>],
      out_specs = [#pallas.block_spec<[8, 128], (d0, d1) -> (d0, (d1 - d0) floordiv 2)>]}
      : (tensor<64x512xf32>) -> tensor<64x512xf32>
  return %0 : tensor<64x512xf32>
}

// -----

// Tests the block ops: strided loads and stores, transpose, reshape, select
// with a scalar condition, swap, argmax/argmin (1-D via a [1, n] vector),
// 1-D iota, multiple_of, debug_print, bool refs (i32 in memory), a batched
// transposed dot at highest precision and a scalar read from VMEM.
// CHECK-LABEL: func.func @misc(
// CHECK-SAME: %[[X:[^:]+]]: memref<16x128xf32, #tpu.memory_space<vmem>>, %[[B:[^:]+]]: memref<8x128xi32, #tpu.memory_space<vmem>>
// CHECK-SAME: pipeline_mode = #tpu.pipeline_mode<synchronous>
// CHECK: %[[S:.+]] = tpu.strided_load %[[X]][%{{.+}}, %{{.+}}] {strides = array<i32: 2, 1>} : memref<16x128xf32, #tpu.memory_space<vmem>>, vector<8x128xf32>
// CHECK: %[[T:.+]] = tpu.transpose %[[S]], [1, 0] : vector<8x128xf32> -> vector<128x8xf32>
// CHECK: %[[R:.+]] = vector.shape_cast %[[T]] : vector<128x8xf32> to vector<8x128xf32>
// CHECK: %[[R2:.+]] = vector.shape_cast %[[R]] : vector<8x128xf32> to vector<128x8xf32>
// CHECK: %[[SEL:.+]] = arith.select %{{.+}}, %[[R2]], %[[T]] : vector<128x8xf32>
// CHECK: vector.load
// CHECK: tpu.vector_store %{{.+}}, %[[SEL]]
// CHECK: %[[AM:.+]] = tpu.reduce_index %[[S]] {axis = 1 : i32, kind = #tpu.reduction_kind<arg_max>} : vector<8x128xf32> -> vector<8xi32>
// CHECK: %[[IO:.+]] = tpu.iota {dimensions = array<i32: 1>} : vector<1x128xi32>
// CHECK: vector.shape_cast %[[IO]] : vector<1x128xi32> to vector<128xi32>
// CHECK: tpu.reduce_index %[[R]] {axis = 0 : i32, kind = #tpu.reduction_kind<arg_min>} : vector<8x128xf32> -> vector<128xi32>
// CHECK: %[[ROW:.+]] = vector.load %[[X]][%{{.+}}, %{{.+}}] : memref<16x128xf32, #tpu.memory_space<vmem>>, vector<1x128xf32>
// CHECK: %[[ROW1:.+]] = vector.shape_cast %[[ROW]] : vector<1x128xf32> to vector<128xf32>
// CHECK: %[[ROW2:.+]] = vector.shape_cast %[[ROW1]] : vector<128xf32> to vector<1x128xf32>
// CHECK: %[[A1:.+]] = tpu.reduce_index %[[ROW2]] {axis = 1 : i32, kind = #tpu.reduction_kind<arg_max>} : vector<1x128xf32> -> vector<1xi32>
// CHECK: %[[A0:.+]] = vector.extract %[[A1]][0] : i32 from vector<1xi32>
// CHECK: %[[M:.+]] = tpu.assume_multiple %[[A0]], 8 : i32
// CHECK: tpu.log "argmax = $0" {formatted = true} : [%[[M]]] : i32
// CHECK: %[[BL:.+]] = vector.load %[[B]]{{.*}} vector<8x128xi32>
// CHECK: %[[BB:.+]] = arith.cmpi ne, %[[BL]], %{{.+}} : vector<8x128xi32>
// CHECK: tpu.log "hello"
// CHECK: %[[BS:.+]] = arith.extui %[[BB]] : vector<8x128xi1> to vector<8x128xi32>
// CHECK: tpu.vector_store %{{.+}}, %[[BS]]
// CHECK: tpu.matmul %{{.+}} {dimension_numbers = #tpu.dot_dimension_numbers<[2], [2], [1], [1], [0, 0, 0, 1, 1, 1], [0], [0]>, precision = #tpu.contract_precision<fp32>, transpose_lhs_hint = false} : vector<2x64x32xbf16>, vector<2x64x32xbf16>, vector<2x64x64xf32> -> vector<2x64x64xf32>
// CHECK: %[[ONE:.+]] = vector.load %[[X]][%{{.+}}, %{{.+}}] : memref<16x128xf32, #tpu.memory_space<vmem>>, vector<1x1xf32>
// CHECK: vector.extract %[[ONE]][0, 0] : f32 from vector<1x1xf32>
// CHECK: tpu.strided_store %[[X]][%{{.+}}, %{{.+}}], %[[S]] {strides = array<i32: 2, 1>} : memref<16x128xf32, #tpu.memory_space<vmem>>, vector<8x128xf32>
pallas.kernel @misc_kernel(%x: !pallas.ref<16x128xf32>, %b: !pallas.ref<8x128xi1>, %q: !pallas.ref<2x64x32xbf16>,
                           %o: !pallas.ref<128x8xf32>, %ob: !pallas.ref<8x128xi1>, %oi: !pallas.ref<8x128xi32>) {
  %s = pallas.load %x[0 : 8 : 2, 0 : 128] : !pallas.ref<16x128xf32> -> tensor<8x128xf32>
  %t = pallas.transpose %s [1, 0] : tensor<8x128xf32> -> tensor<128x8xf32>
  %r = pallas.reshape %t : tensor<128x8xf32> -> tensor<8x128xf32>
  %r2 = pallas.reshape %r : tensor<8x128xf32> -> tensor<128x8xf32>
  %c = arith.constant 1 : i1
  %sel = pallas.select %c, %r2, %t : i1, tensor<128x8xf32>
  %old = pallas.swap %o[], %sel : !pallas.ref<128x8xf32>, tensor<128x8xf32>
  %am = pallas.reduce argmax %s dims [1] : tensor<8x128xf32> -> tensor<8xi32>
  %row = pallas.iota 0 : tensor<128xi32>
  %am1 = pallas.reduce argmin %r dims [0] : tensor<8x128xf32> -> tensor<128xi32>
  %v1 = pallas.load %x[3, 0 : 128] : !pallas.ref<16x128xf32> -> tensor<128xf32>
  %a1 = pallas.reduce argmax %v1 dims [0] : tensor<128xf32> -> tensor<i32>
  %e = tensor.extract %a1[] : tensor<i32>
  %m = pallas.multiple_of %e, 8 : i32
  pallas.debug_print "argmax = {}" %m : i32
  %bb = pallas.load %b[] : !pallas.ref<8x128xi1> -> tensor<8x128xi1>
  pallas.debug_print "hello"
  pallas.store %ob[], %bb : !pallas.ref<8x128xi1>, tensor<8x128xi1>
  %amb = pallas.broadcast_in_dim %am dims [0] : tensor<8xi32> -> tensor<8x128xi32>
  pallas.store %oi[], %amb : !pallas.ref<8x128xi32>, tensor<8x128xi32>
  %qv = pallas.load %q[] : !pallas.ref<2x64x32xbf16> -> tensor<2x64x32xbf16>
  %bd = pallas.dot %qv, %qv {transpose_rhs, precision = #pallas.precision<highest>} : tensor<2x64x32xbf16>, tensor<2x64x32xbf16> -> tensor<2x64x64xf32>
  %sc = pallas.load %x[1, 2] : !pallas.ref<16x128xf32> -> f32
  pallas.store %x[1 : 8 : 2, 0 : 128], %s : !pallas.ref<16x128xf32>, tensor<8x128xf32>
}
func.func @main(%x: tensor<16x128xf32>, %b: tensor<8x128xi1>, %q: tensor<2x64x32xbf16>) -> (tensor<128x8xf32>, tensor<8x128xi1>, tensor<8x128xi32>) {
  %0:3 = pallas.call @misc_kernel(%x, %b, %q) {grid = array<i64: 1>, name = "misc",
      in_specs = [#pallas.block_spec<[16, 128], (d0) -> (0, 0)>, #pallas.block_spec<[8, 128], (d0) -> (0, 0)>, #pallas.block_spec<[2, 64, 32], (d0) -> (0, 0, 0)>],
      out_specs = [#pallas.block_spec<[128, 8], (d0) -> (0, 0)>, #pallas.block_spec<[8, 128], (d0) -> (0, 0)>, #pallas.block_spec<[8, 128], (d0) -> (0, 0)>]}
      : (tensor<16x128xf32>, tensor<8x128xi1>, tensor<2x64x32xbf16>) -> (tensor<128x8xf32>, tensor<8x128xi1>, tensor<8x128xi32>)
  return %0#0, %0#1, %0#2 : tensor<128x8xf32>, tensor<8x128xi1>, tensor<8x128xi32>
}

// -----

// Tests the DMA lowering, as Pallas lowers pltpu.make_async_copy(...).start()
// / .wait(): the semaphore scratch handed to DMAs is a DMA semaphore, each op
// slices (and squeezes) its semaphore, then its source; a whole-ref operand is
// passed as is, an integer index is squeezed away.
// CHECK-LABEL: func.func @dma(
// CHECK-SAME: %[[I:[^:]+]]: i32, %[[X:[^:]+]]: memref<32x128xf32, #tpu.memory_space<any>>, %[[H:[^:]+]]: memref<4x8x128xf32, #tpu.memory_space<hbm>>, %{{[^:]+}}: memref<8x128xf32, #tpu.memory_space<vmem>>, %[[BUF:[^:]+]]: memref<8x128xf32, #tpu.memory_space<vmem>>, %[[SEMS:[^:]+]]: memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
// CHECK: %[[ROW:.+]] = arith.muli %[[I]], %{{.+}} : i32
// CHECK: %[[C1:.+]] = arith.constant 1 : i32
// CHECK: %[[S1:.+]] = tpu.memref_slice %[[SEMS]][%[[C1]]] : memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
// CHECK: %[[SEM:.+]] = tpu.memref_squeeze %[[S1]] : memref<1x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>> -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
// CHECK: %[[C0:.+]] = arith.constant 0 : i32
// CHECK: %[[XS:.+]] = tpu.memref_slice %[[X]][%[[ROW]], %[[C0]]] : memref<32x128xf32, #tpu.memory_space<any>> -> memref<8x128xf32, #tpu.memory_space<any>>
// CHECK: tpu.enqueue_dma source(%[[XS]] : memref<8x128xf32, #tpu.memory_space<any>>) target(%[[BUF]] : memref<8x128xf32, #tpu.memory_space<vmem>>) target_semaphore(%[[SEM]] : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
// CHECK: tpu.memref_slice %[[SEMS]]
// CHECK: tpu.memref_squeeze
// CHECK: %[[XW:.+]] = tpu.memref_slice %[[X]][%[[ROW]], %{{.+}}]
// CHECK: tpu.wait_dma2 semaphore(%{{.+}} : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) src(%[[XW]] : memref<8x128xf32, #tpu.memory_space<any>>) dst(%[[BUF]] : memref<8x128xf32, #tpu.memory_space<vmem>>)
// CHECK: vector.load %[[BUF]]
// CHECK: %[[HS:.+]] = tpu.memref_slice %[[H]][%[[I]], %{{.+}}, %{{.+}}] : memref<4x8x128xf32, #tpu.memory_space<hbm>> -> memref<1x8x128xf32, #tpu.memory_space<hbm>>
// CHECK: %[[HQ:.+]] = tpu.memref_squeeze %[[HS]] : memref<1x8x128xf32, #tpu.memory_space<hbm>> -> memref<8x128xf32, #tpu.memory_space<hbm>>
// CHECK: tpu.enqueue_dma source(%[[BUF]] : memref<8x128xf32, #tpu.memory_space<vmem>>) target(%[[HQ]] : memref<8x128xf32, #tpu.memory_space<hbm>>)
pallas.kernel @dma_kernel(%x: !pallas.ref<32x128xf32, any>, %h: !pallas.ref<4x8x128xf32, hbm>,
                          %o: !pallas.ref<8x128xf32>, %buf: !pallas.ref<8x128xf32, vmem>,
                          %sem: !pallas.ref<2xi32, semaphore>) {
  %i = pallas.program_id 0 : i32
  %c8 = arith.constant 8 : i32
  %row = arith.muli %i, %c8 : i32
  pallas.dma_start %x[%row : 8, 0 : 128], %buf[], %sem[1]
      : !pallas.ref<32x128xf32, any>, !pallas.ref<8x128xf32, vmem>, !pallas.ref<2xi32, semaphore>
  pallas.dma_wait %x[%row : 8, 0 : 128], %buf[], %sem[1]
      : !pallas.ref<32x128xf32, any>, !pallas.ref<8x128xf32, vmem>, !pallas.ref<2xi32, semaphore>
  %v = pallas.load %buf[] : !pallas.ref<8x128xf32, vmem> -> tensor<8x128xf32>
  pallas.store %o[], %v : !pallas.ref<8x128xf32>, tensor<8x128xf32>
  pallas.dma_start %buf[], %h[%i, 0 : 8, 0 : 128], %sem[0]
      : !pallas.ref<8x128xf32, vmem>, !pallas.ref<4x8x128xf32, hbm>, !pallas.ref<2xi32, semaphore>
}
func.func @main(%x: tensor<32x128xf32>, %h: tensor<4x8x128xf32>) -> tensor<32x128xf32> {
  %0 = pallas.call @dma_kernel(%x, %h) {grid = array<i64: 4>, name = "dma",
      in_specs = [#pallas.block_spec<any>, #pallas.block_spec<[4, 8, 128], (d0) -> (0, 0, 0), hbm>],
      out_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>],
      scratch = [!pallas.ref<8x128xf32, vmem>, !pallas.ref<2xi32, semaphore>]}
      : (tensor<32x128xf32>, tensor<4x8x128xf32>) -> tensor<32x128xf32>
  return %0 : tensor<32x128xf32>
}

// -----

// Tests pipeline buffer counts (pl.Buffered(n)): 1 is synchronous, 2
// double_buffered, none gives no pipeline_mode; a block that never moves is
// synchronous whatever its count (as Pallas forces Buffered(1) there).
// CHECK-LABEL: func.func @buffered(
// CHECK-SAME: window_params = [{pipeline_mode = #tpu.pipeline_mode<synchronous>, transform_indices = @transform_0, window_bounds = array<i64: 8, 128>}, {pipeline_mode = #tpu.pipeline_mode<double_buffered>, transform_indices = @transform_1, window_bounds = array<i64: 8, 128>}, {pipeline_mode = #tpu.pipeline_mode<synchronous>, transform_indices = @transform_2, window_bounds = array<i64: 8, 128>}, {transform_indices = @transform_3, window_bounds = array<i64: 8, 128>}]
pallas.kernel @buffered_kernel(%x: !pallas.ref<8x128xf32>, %y: !pallas.ref<8x128xf32>,
                               %w: !pallas.ref<8x128xf32>, %o: !pallas.ref<8x128xf32>) {
  %a = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %b = pallas.load %y[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %c = pallas.load %w[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %s = arith.addf %a, %b : tensor<8x128xf32>
  %t = arith.addf %s, %c : tensor<8x128xf32>
  pallas.store %o[], %t : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @main(%x: tensor<32x128xf32>, %y: tensor<32x128xf32>, %w: tensor<8x128xf32>) -> tensor<32x128xf32> {
  %0 = pallas.call @buffered_kernel(%x, %y, %w) {grid = array<i64: 4>, name = "buffered",
      in_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0), buffers = 1>,
                  #pallas.block_spec<[8, 128], (d0) -> (d0, 0), buffers = 2>,
                  #pallas.block_spec<[8, 128], (d0) -> (0, 0), buffers = 3>],
      out_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>]}
      : (tensor<32x128xf32>, tensor<32x128xf32>, tensor<8x128xf32>) -> tensor<32x128xf32>
  return %0 : tensor<32x128xf32>
}
