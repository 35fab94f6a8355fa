// RUN: pallasc-opt %s -split-input-file | pallasc-opt -split-input-file | FileCheck %s
// RUN: pallasc-opt %s -split-input-file --mlir-print-op-generic | pallasc-opt -split-input-file | FileCheck %s

// Tests that !pallas.ref round-trips with every memory space, rank 0, zero-size
// dimensions and index elements; `default` is elided.

// CHECK-LABEL: pallas.kernel @ref_types
// CHECK-SAME: !pallas.ref<8x128xf32>,
// CHECK-SAME: !pallas.ref<8x128xf32>,
// CHECK-SAME: !pallas.ref<1024xbf16, any>,
// CHECK-SAME: !pallas.ref<8xi32, smem>,
// CHECK-SAME: !pallas.ref<128x128xf32, vmem>,
// CHECK-SAME: !pallas.ref<64xf16, gmem>,
// CHECK-SAME: !pallas.ref<64xi8, hbm>,
// CHECK-SAME: !pallas.ref<2xi32, semaphore>,
// CHECK-SAME: !pallas.ref<f32>,
// CHECK-SAME: !pallas.ref<0x4xindex>)
pallas.kernel @ref_types(%a: !pallas.ref<8x128xf32>,
                         %b: !pallas.ref<8x128xf32, default>,
                         %c: !pallas.ref<1024xbf16, any>,
                         %d: !pallas.ref<8xi32, smem>,
                         %e: !pallas.ref<128x128xf32, vmem>,
                         %f: !pallas.ref<64xf16, gmem>,
                         %g: !pallas.ref<64xi8, hbm>,
                         %h: !pallas.ref<2xi32, semaphore>,
                         %i: !pallas.ref<f32>,
                         %j: !pallas.ref<0x4xindex>) {
}

// -----

// Tests that !pallas.hi aggregates of refs and of tensors round-trip.

// CHECK-LABEL: pallas.kernel @hi_types
// CHECK-SAME: !pallas.hi<"qarray", !pallas.ref<64x128xi8>, !pallas.ref<64xf32>>
// CHECK-SAME: !pallas.hi<"single", !pallas.ref<8xf32, vmem>>
pallas.kernel @hi_types(
    %q: !pallas.hi<"qarray", !pallas.ref<64x128xi8>, !pallas.ref<64xf32>>,
    %s: !pallas.hi<"single", !pallas.ref<8xf32, vmem>>) {
}

// CHECK-LABEL: func.func @hi_tensor
// CHECK-SAME: !pallas.hi<"qarray", tensor<256x128xi8>, tensor<256xf32>>
func.func @hi_tensor(%q: !pallas.hi<"qarray", tensor<256x128xi8>, tensor<256xf32>>) {
  return
}

// -----

// Tests that the dialect's attributes round-trip on their own: the enums,
// the cost estimate and every block_spec form. reduce_kind and atomic_kind
// print as bare keywords inside their ops, so alone they use the
// `#pallas<mnemonic value>` form.

// CHECK-LABEL: func.func @attributes
// CHECK-SAME: a0 = #pallas.memory_space<vmem>
// CHECK-SAME: a1 = #pallas<reduce_kind argmax>
// CHECK-SAME: a2 = #pallas<atomic_kind xchg>
// CHECK-SAME: a3 = #pallas.precision<highest>
// CHECK-SAME: b0 = #pallas.block_spec<any>
// CHECK-SAME: b1 = #pallas.block_spec<[]>
// CHECK-SAME: b2 = #pallas.block_spec<[8, 128]>
// CHECK-SAME: b3 = #pallas.block_spec<[8, 128], (d0, d1) -> (d0, d1)>
// CHECK-SAME: b4 = #pallas.block_spec<[squeezed, 128], (d0) -> (d0, 0)>
// CHECK-SAME: b5 = #pallas.block_spec<[element(64), element(32, 2, 3)], (d0, d1) -> (d0 * 64, d1 * 32 - 2)>
// CHECK-SAME: b6 = #pallas.block_spec<[8], @index_map>
// CHECK-SAME: b7 = #pallas.block_spec<[8, 128], (d0) -> (d0 floordiv 2, d0 mod 2), vmem>
// CHECK-SAME: b8 = #pallas.block_spec<[8], @index_map, smem>
// CHECK-SAME: b9 = #pallas.block_spec<[4], gmem>
// CHECK-SAME: b99 = #pallas.block_spec<[4], (d0) -> (d0), hbm>
// CHECK-SAME: b9a = #pallas.block_spec<[8, 128], (d0) -> (d0, 0), vmem, buffers = 1>
// CHECK-SAME: b9b = #pallas.block_spec<[8], buffers = 3>
// CHECK-SAME: c0 = #pallas.cost<flops = 1024, bytes_accessed = 4096, transcendentals = 7>
func.func @attributes() attributes {
    a0 = #pallas.memory_space<vmem>,
    a1 = #pallas<reduce_kind argmax>,
    a2 = #pallas<atomic_kind xchg>,
    a3 = #pallas.precision<highest>,
    b0 = #pallas.block_spec<any>,
    b1 = #pallas.block_spec<[]>,
    b2 = #pallas.block_spec<[8, 128]>,
    b3 = #pallas.block_spec<[8, 128], (i, j) -> (i, j)>,
    b4 = #pallas.block_spec<[squeezed, 128], (i) -> (i, 0), default>,
    b5 = #pallas.block_spec<[element(64, 0, 0), element(32, 2, 3)],
                            (i, j) -> (i * 64, j * 32 - 2)>,
    b6 = #pallas.block_spec<[8], @index_map>,
    b7 = #pallas.block_spec<[8, 128], (i) -> (i floordiv 2, i mod 2), vmem>,
    b8 = #pallas.block_spec<[8], @index_map, smem>,
    b9 = #pallas.block_spec<[4], gmem>,
    b99 = #pallas.block_spec<[4], hbm, (i) -> (i)>,
    b9a = #pallas.block_spec<[8, 128], buffers = 1, (i) -> (i, 0), vmem>,
    b9b = #pallas.block_spec<[8], buffers = 3>,
    c0 = #pallas.cost<flops = 1024, bytes_accessed = 4096, transcendentals = 7>} {
  return
}

// -----

// Tests that program_id and num_programs round-trip.

// CHECK-LABEL: pallas.kernel @grid_queries
// CHECK: %[[I:.+]] = pallas.program_id 0 : i32
// CHECK: %[[N:.+]] = pallas.num_programs 2 : i32
// CHECK: pallas.debug_print "{} of {}" %[[I]], %[[N]] : i32, i32
pallas.kernel @grid_queries(%o: !pallas.ref<8xf32>) {
  %i = pallas.program_id 0 : i32
  %n = pallas.num_programs 2 : i32
  pallas.debug_print "{} of {}" %i, %n : i32, i32
}

// -----

// Tests that platform_index round-trips, with and without a default.

// CHECK-LABEL: pallas.kernel @platform_queries
// CHECK: pallas.platform_index {{\[}}["cuda"], ["rocm", "cpu"]] default : i32
// CHECK: pallas.platform_index {{\[}}["mosaic"]] : i32
pallas.kernel @platform_queries(%o: !pallas.ref<8xf32>) {
  %i = pallas.platform_index [["cuda"], ["rocm", "cpu"]] default : i32
  %j = pallas.platform_index [["mosaic"]] : i32
  pallas.debug_print "{} {}" %i, %j : i32, i32
}

// -----

// Tests every form of the load indexer: whole ref, static slices, strides,
// dynamic starts, integer (point) indices down to a scalar, masks and
// mask + other.

// CHECK-LABEL: pallas.kernel @load
// CHECK-SAME: (%[[X:[^:]+]]: !pallas.ref<8x128xf32>, %[[S:[^:]+]]: !pallas.ref<8xi32, smem>, %[[Z:[^:]+]]: !pallas.ref<f32>)
// CHECK: %[[C:.+]] = arith.constant 2 : i32
// CHECK: pallas.load %[[X]][] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
// CHECK: pallas.load %[[X]][0 : 8, 0 : 128] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
// CHECK: pallas.load %[[X]][0 : 4 : 2, 64 : 32 : 2] : !pallas.ref<8x128xf32> -> tensor<4x32xf32>
// CHECK: pallas.load %[[X]][%[[C]] : 4, %[[C]] : 64 : 2] : !pallas.ref<8x128xf32> -> tensor<4x64xf32>
// CHECK: pallas.load %[[X]][3, 0 : 128] : !pallas.ref<8x128xf32> -> tensor<128xf32>
// CHECK: pallas.load %[[X]][%[[C]], 0 : 128] : !pallas.ref<8x128xf32> -> tensor<128xf32>
// CHECK: pallas.load %[[X]][3, 5] : !pallas.ref<8x128xf32> -> f32
// CHECK: pallas.load %[[S]][%[[C]]] : !pallas.ref<8xi32, smem> -> i32
// CHECK: pallas.load %[[S]][0 : 0] : !pallas.ref<8xi32, smem> -> tensor<0xi32>
// CHECK: pallas.load %[[Z]][] : !pallas.ref<f32> -> tensor<f32>
// CHECK: %[[M:.+]] = arith.cmpi
// CHECK: %[[OTHER:.+]] = arith.constant dense<0xFF800000> : tensor<128xf32>
// CHECK: pallas.load %[[X]][1, 0 : 128] mask %[[M]] : !pallas.ref<8x128xf32> -> tensor<128xf32>
// CHECK: pallas.load %[[X]][1, 0 : 128] mask %[[M]] other %[[OTHER]] : !pallas.ref<8x128xf32> -> tensor<128xf32>
// CHECK: %[[T:.+]] = arith.constant true
// CHECK: pallas.load %[[S]][7] mask %[[T]] : !pallas.ref<8xi32, smem> -> i32
// CHECK: pallas.load %[[X]][%[[C]] : 4, 0 : 128] {fit} : !pallas.ref<8x128xf32> -> tensor<4x128xf32>
// CHECK: pallas.load %[[X]][1, 0 : 128] mask %[[M]] other %[[OTHER]] {eviction_policy = "evict_last"} : !pallas.ref<8x128xf32> -> tensor<128xf32>
// CHECK: pallas.load %[[X]][] {eviction_policy = "evict_first"} : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
pallas.kernel @load(%x: !pallas.ref<8x128xf32>, %s: !pallas.ref<8xi32, smem>,
                    %z: !pallas.ref<f32>) {
  %c = arith.constant 2 : i32
  %0 = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %1 = pallas.load %x[0 : 8, 0 : 128 : 1] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %2 = pallas.load %x[0 : 4 : 2, 64 : 32 : 2] : !pallas.ref<8x128xf32> -> tensor<4x32xf32>
  %3 = pallas.load %x[%c : 4, %c : 64 : 2] : !pallas.ref<8x128xf32> -> tensor<4x64xf32>
  %4 = pallas.load %x[3, 0 : 128] : !pallas.ref<8x128xf32> -> tensor<128xf32>
  %5 = pallas.load %x[%c, 0 : 128] : !pallas.ref<8x128xf32> -> tensor<128xf32>
  %6 = pallas.load %x[3, 5] : !pallas.ref<8x128xf32> -> f32
  %7 = pallas.load %s[%c] : !pallas.ref<8xi32, smem> -> i32
  %8 = pallas.load %s[0 : 0] : !pallas.ref<8xi32, smem> -> tensor<0xi32>
  %9 = pallas.load %z[] : !pallas.ref<f32> -> tensor<f32>
  %iota = pallas.iota 0 : tensor<128xi32>
  %n = arith.constant dense<100> : tensor<128xi32>
  %m = arith.cmpi slt, %iota, %n : tensor<128xi32>
  %ninf = arith.constant dense<0xFF800000> : tensor<128xf32>
  %10 = pallas.load %x[1, 0 : 128] mask %m : !pallas.ref<8x128xf32> -> tensor<128xf32>
  %11 = pallas.load %x[1, 0 : 128] mask %m other %ninf : !pallas.ref<8x128xf32> -> tensor<128xf32>
  %t = arith.constant true
  %12 = pallas.load %s[7] mask %t : !pallas.ref<8xi32, smem> -> i32
  %fit = pallas.load %x[%c : 4, 0 : 128] {fit} : !pallas.ref<8x128xf32> -> tensor<4x128xf32>
  %13 = pallas.load %x[1, 0 : 128] mask %m other %ninf {eviction_policy = "evict_last"} : !pallas.ref<8x128xf32> -> tensor<128xf32>
  %14 = pallas.load %x[] {eviction_policy = "evict_first"} : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
}

// -----

// Tests store and swap with whole-ref, sliced, dynamic, scalar and masked
// indexers.

// CHECK-LABEL: pallas.kernel @store_swap
// CHECK-SAME: (%[[X:[^:]+]]: !pallas.ref<8x128xf32, vmem>, %[[S:[^:]+]]: !pallas.ref<8xi32, smem>)
// CHECK-DAG: %[[V:.+]] = arith.constant dense<1.000000e+00> : tensor<8x128xf32>
// CHECK-DAG: %[[R:.+]] = arith.constant dense<2.000000e+00> : tensor<128xf32>
// CHECK-DAG: %[[M:.+]] = arith.constant dense<true> : tensor<128xi1>
// CHECK-DAG: %[[I:.+]] = arith.constant 3 : i32
// CHECK: pallas.store %[[X]][], %[[V]] : !pallas.ref<8x128xf32, vmem>, tensor<8x128xf32>
// CHECK: pallas.store %[[X]][%[[I]], 0 : 128], %[[R]] : !pallas.ref<8x128xf32, vmem>, tensor<128xf32>
// CHECK: pallas.store %[[X]][0, 0 : 128], %[[R]] mask %[[M]] : !pallas.ref<8x128xf32, vmem>, tensor<128xf32>
// CHECK: pallas.store %[[S]][%[[I]]], %[[I]] : !pallas.ref<8xi32, smem>, i32
// CHECK: %[[OLD:.+]] = pallas.swap %[[X]][0 : 8, 0 : 128], %[[V]] : !pallas.ref<8x128xf32, vmem>, tensor<8x128xf32>
// CHECK: pallas.swap %[[X]][1, 0 : 64 : 2], %[[R2:.+]] mask %[[M2:.+]] : !pallas.ref<8x128xf32, vmem>, tensor<64xf32>
// CHECK: pallas.swap %[[S]][0], %[[I]] : !pallas.ref<8xi32, smem>, i32
// CHECK: pallas.store %[[X]][%[[I]] : 2, 0 : 128], %{{.+}} {fit} : !pallas.ref<8x128xf32, vmem>, tensor<2x128xf32>
// CHECK: pallas.swap %[[X]][%[[I]], 0 : 128], %[[R]] {fit} : !pallas.ref<8x128xf32, vmem>, tensor<128xf32>
pallas.kernel @store_swap(%x: !pallas.ref<8x128xf32, vmem>, %s: !pallas.ref<8xi32, smem>) {
  %v = arith.constant dense<1.0> : tensor<8x128xf32>
  %r = arith.constant dense<2.0> : tensor<128xf32>
  %m = arith.constant dense<true> : tensor<128xi1>
  %i = arith.constant 3 : i32
  pallas.store %x[], %v : !pallas.ref<8x128xf32, vmem>, tensor<8x128xf32>
  pallas.store %x[%i, 0 : 128], %r : !pallas.ref<8x128xf32, vmem>, tensor<128xf32>
  pallas.store %x[0, 0 : 128], %r mask %m : !pallas.ref<8x128xf32, vmem>, tensor<128xf32>
  pallas.store %s[%i], %i : !pallas.ref<8xi32, smem>, i32
  %old = pallas.swap %x[0 : 8, 0 : 128], %v : !pallas.ref<8x128xf32, vmem>, tensor<8x128xf32>
  %r2 = arith.constant dense<3.0> : tensor<64xf32>
  %m2 = arith.constant dense<false> : tensor<64xi1>
  %old2 = pallas.swap %x[1, 0 : 64 : 2], %r2 mask %m2 : !pallas.ref<8x128xf32, vmem>, tensor<64xf32>
  %old3 = pallas.swap %s[0], %i : !pallas.ref<8xi32, smem>, i32
  %v2 = arith.constant dense<4.0> : tensor<2x128xf32>
  pallas.store %x[%i : 2, 0 : 128], %v2 {fit} : !pallas.ref<8x128xf32, vmem>, tensor<2x128xf32>
  %old4 = pallas.swap %x[%i, 0 : 128], %r {fit} : !pallas.ref<8x128xf32, vmem>, tensor<128xf32>
}

// -----

// Tests atomic_rmw with every kind (integer and float), a mask and a
// dynamic index, and atomic_cas on a scalar and a block.

// CHECK-LABEL: pallas.kernel @atomics
// CHECK-SAME: (%[[H:[^:]+]]: !pallas.ref<256xi32>, %[[F:[^:]+]]: !pallas.ref<256xf32>)
// CHECK: pallas.atomic_rmw add %[[H]][%[[B:.+]]], %[[ONE:.+]] : !pallas.ref<256xi32>, i32
// CHECK: pallas.atomic_rmw max %[[H]][0], %[[ONE]] : !pallas.ref<256xi32>, i32
// CHECK: pallas.atomic_rmw min %[[H]][0], %[[ONE]] : !pallas.ref<256xi32>, i32
// CHECK: pallas.atomic_rmw and %[[H]][0], %[[ONE]] : !pallas.ref<256xi32>, i32
// CHECK: pallas.atomic_rmw or %[[H]][0], %[[ONE]] : !pallas.ref<256xi32>, i32
// CHECK: pallas.atomic_rmw xor %[[H]][0], %[[ONE]] : !pallas.ref<256xi32>, i32
// CHECK: pallas.atomic_rmw xchg %[[H]][0], %[[ONE]] : !pallas.ref<256xi32>, i32
// CHECK: pallas.atomic_rmw add %[[F]][0 : 128 : 2], %[[FV:.+]] mask %[[M:.+]] : !pallas.ref<256xf32>, tensor<128xf32>
// CHECK: pallas.atomic_rmw max %[[F]][], %[[FW:.+]] : !pallas.ref<256xf32>, tensor<256xf32>
// CHECK: pallas.atomic_cas %[[H]][0], %[[ZERO:.+]], %[[ONE]] : !pallas.ref<256xi32>, i32
// CHECK: pallas.atomic_cas %[[H]][%[[B]] : 4], %[[C4:.+]], %[[V4:.+]] : !pallas.ref<256xi32>, tensor<4xi32>
pallas.kernel @atomics(%h: !pallas.ref<256xi32>, %f: !pallas.ref<256xf32>) {
  %b = pallas.program_id 0 : i32
  %one = arith.constant 1 : i32
  %zero = arith.constant 0 : i32
  %0 = pallas.atomic_rmw add %h[%b], %one : !pallas.ref<256xi32>, i32
  %1 = pallas.atomic_rmw max %h[0], %one : !pallas.ref<256xi32>, i32
  %2 = pallas.atomic_rmw min %h[0], %one : !pallas.ref<256xi32>, i32
  %3 = pallas.atomic_rmw and %h[0], %one : !pallas.ref<256xi32>, i32
  %4 = pallas.atomic_rmw or %h[0], %one : !pallas.ref<256xi32>, i32
  %5 = pallas.atomic_rmw xor %h[0], %one : !pallas.ref<256xi32>, i32
  %6 = pallas.atomic_rmw xchg %h[0], %one : !pallas.ref<256xi32>, i32
  %fv = arith.constant dense<1.0> : tensor<128xf32>
  %m = arith.constant dense<true> : tensor<128xi1>
  %7 = pallas.atomic_rmw add %f[0 : 128 : 2], %fv mask %m : !pallas.ref<256xf32>, tensor<128xf32>
  %fw = arith.constant dense<1.0> : tensor<256xf32>
  %8 = pallas.atomic_rmw max %f[], %fw : !pallas.ref<256xf32>, tensor<256xf32>
  %9 = pallas.atomic_cas %h[0], %zero, %one : !pallas.ref<256xi32>, i32
  %c4 = arith.constant dense<0> : tensor<4xi32>
  %v4 = arith.constant dense<1> : tensor<4xi32>
  %10 = pallas.atomic_cas %h[%b : 4], %c4, %v4 : !pallas.ref<256xi32>, tensor<4xi32>
}

// -----

// Tests dot without and with an accumulator, with transposes, precisions,
// a batch dimension and integer operands.

// CHECK-LABEL: func.func @dot
// CHECK-SAME: (%[[A:[^:]+]]: tensor<128x64xbf16>, %[[B:[^:]+]]: tensor<64x128xbf16>, %[[ACC:[^:]+]]: tensor<128x128xf32>, %[[Q:[^:]+]]: tensor<64x32xf32>, %[[BA:[^:]+]]: tensor<2x8x16xf16>, %[[I8:[^:]+]]: tensor<16x32xi8>)
// CHECK: pallas.dot %[[A]], %[[B]] : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
// CHECK: pallas.dot %[[A]], %[[B]], %[[ACC]] : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32> -> tensor<128x128xf32>
// CHECK: pallas.dot %[[Q]], %[[Q]] {transpose_rhs} : tensor<64x32xf32>, tensor<64x32xf32> -> tensor<64x64xf32>
// CHECK: pallas.dot %[[Q]], %[[Q]] {transpose_lhs} : tensor<64x32xf32>, tensor<64x32xf32> -> tensor<32x32xf32>
// CHECK: pallas.dot %[[A]], %[[B]] {precision = #pallas.precision<high>, transpose_lhs, transpose_rhs} : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<64x64xf32>
// CHECK: pallas.dot %[[Q]], %[[Q]] {precision = #pallas.precision<highest>, transpose_rhs} : tensor<64x32xf32>, tensor<64x32xf32> -> tensor<64x64xf32>
// CHECK: pallas.dot %[[Q]], %[[Q]] {transpose_rhs} : tensor<64x32xf32>, tensor<64x32xf32> -> tensor<64x64xf32>
// CHECK: pallas.dot %[[BA]], %[[BA]] {transpose_rhs} : tensor<2x8x16xf16>, tensor<2x8x16xf16> -> tensor<2x8x8xf32>
// CHECK: pallas.dot %[[I8]], %[[I8]] {transpose_rhs} : tensor<16x32xi8>, tensor<16x32xi8> -> tensor<16x16xi32>
func.func @dot(%a: tensor<128x64xbf16>, %b: tensor<64x128xbf16>,
               %acc: tensor<128x128xf32>, %q: tensor<64x32xf32>,
               %ba: tensor<2x8x16xf16>, %i8: tensor<16x32xi8>) {
  %0 = pallas.dot %a, %b : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
  %1 = pallas.dot %a, %b, %acc : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32> -> tensor<128x128xf32>
  %2 = pallas.dot %q, %q {transpose_rhs} : tensor<64x32xf32>, tensor<64x32xf32> -> tensor<64x64xf32>
  %3 = pallas.dot %q, %q {transpose_lhs} : tensor<64x32xf32>, tensor<64x32xf32> -> tensor<32x32xf32>
  %4 = pallas.dot %a, %b {transpose_lhs, transpose_rhs, precision = #pallas.precision<high>} : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<64x64xf32>
  %5 = pallas.dot %q, %q {transpose_rhs, precision = #pallas.precision<highest>} : tensor<64x32xf32>, tensor<64x32xf32> -> tensor<64x64xf32>
  %6 = pallas.dot %q, %q {transpose_rhs, precision = #pallas.precision<default>} : tensor<64x32xf32>, tensor<64x32xf32> -> tensor<64x64xf32>
  %7 = pallas.dot %ba, %ba {transpose_rhs} : tensor<2x8x16xf16>, tensor<2x8x16xf16> -> tensor<2x8x8xf32>
  %8 = pallas.dot %i8, %i8 {transpose_rhs} : tensor<16x32xi8>, tensor<16x32xi8> -> tensor<16x16xi32>
  return
}

// -----

// Tests reduce with every kind, several dimensions and a reduction to a
// rank-0 tensor.

// CHECK-LABEL: func.func @reduce
// CHECK-SAME: (%[[V:[^:]+]]: tensor<8x1024xf32>)
// CHECK: pallas.reduce sum %[[V]] dims [1] : tensor<8x1024xf32> -> tensor<8xf32>
// CHECK: pallas.reduce max %[[V]] dims [0] : tensor<8x1024xf32> -> tensor<1024xf32>
// CHECK: pallas.reduce min %[[V]] dims [0, 1] : tensor<8x1024xf32> -> tensor<f32>
// CHECK: pallas.reduce argmax %[[V]] dims [1] : tensor<8x1024xf32> -> tensor<8xi32>
// CHECK: pallas.reduce argmin %[[V]] dims [0] : tensor<8x1024xf32> -> tensor<1024xi64>
// CHECK: pallas.reduce sum %[[V]] dims [] : tensor<8x1024xf32> -> tensor<8x1024xf32>
func.func @reduce(%v: tensor<8x1024xf32>) {
  %0 = pallas.reduce sum %v dims [1] : tensor<8x1024xf32> -> tensor<8xf32>
  %1 = pallas.reduce max %v dims [0] : tensor<8x1024xf32> -> tensor<1024xf32>
  %2 = pallas.reduce min %v dims [0, 1] : tensor<8x1024xf32> -> tensor<f32>
  %3 = pallas.reduce argmax %v dims [1] : tensor<8x1024xf32> -> tensor<8xi32>
  %4 = pallas.reduce argmin %v dims [0] : tensor<8x1024xf32> -> tensor<1024xi64>
  %5 = pallas.reduce sum %v dims [] : tensor<8x1024xf32> -> tensor<8x1024xf32>
  return
}

// -----

// Tests the shape ops: broadcast_in_dim (tensor and scalar operands), iota,
// reshape, transpose, select (block and scalar conditions) and cumsum.

// CHECK-LABEL: func.func @shape_ops
// CHECK-SAME: (%[[M:[^:]+]]: tensor<8xf32>, %[[S:[^:]+]]: f32, %[[X:[^:]+]]: tensor<8x128xf32>, %[[C:[^:]+]]: tensor<8x128xi1>, %[[B:[^:]+]]: i1)
// CHECK: pallas.broadcast_in_dim %[[M]] dims [0] : tensor<8xf32> -> tensor<8x1024xf32>
// CHECK: pallas.broadcast_in_dim %[[S]] dims [] : f32 -> tensor<8x128xf32>
// CHECK: pallas.broadcast_in_dim %[[X]] dims [1, 2] : tensor<8x128xf32> -> tensor<4x8x128xf32>
// CHECK: pallas.iota 1 : tensor<8x1024xi32>
// CHECK: pallas.iota 0 : tensor<16xindex>
// CHECK: pallas.reshape %[[X]] : tensor<8x128xf32> -> tensor<1024xf32>
// CHECK: pallas.transpose %[[X]] [1, 0] : tensor<8x128xf32> -> tensor<128x8xf32>
// CHECK: %[[Y:.+]] = arith.negf %[[X]]
// CHECK: pallas.select %[[C]], %[[X]], %[[Y]] : tensor<8x128xi1>, tensor<8x128xf32>
// CHECK: pallas.select %[[B]], %[[X]], %[[Y]] : i1, tensor<8x128xf32>
// CHECK: pallas.select %[[B]], %[[S]], %[[S]] : i1, f32
// CHECK: pallas.cumsum %[[X]] dim 0 : tensor<8x128xf32>
// CHECK: pallas.cumsum %[[X]] dim 1 reverse : tensor<8x128xf32>
func.func @shape_ops(%m: tensor<8xf32>, %s: f32, %x: tensor<8x128xf32>,
                     %c: tensor<8x128xi1>, %b: i1) {
  %0 = pallas.broadcast_in_dim %m dims [0] : tensor<8xf32> -> tensor<8x1024xf32>
  %1 = pallas.broadcast_in_dim %s dims [] : f32 -> tensor<8x128xf32>
  %2 = pallas.broadcast_in_dim %x dims [1, 2] : tensor<8x128xf32> -> tensor<4x8x128xf32>
  %3 = pallas.iota 1 : tensor<8x1024xi32>
  %4 = pallas.iota 0 : tensor<16xindex>
  %5 = pallas.reshape %x : tensor<8x128xf32> -> tensor<1024xf32>
  %6 = pallas.transpose %x [1, 0] : tensor<8x128xf32> -> tensor<128x8xf32>
  %y = arith.negf %x : tensor<8x128xf32>
  %7 = pallas.select %c, %x, %y : tensor<8x128xi1>, tensor<8x128xf32>
  %8 = pallas.select %b, %x, %y : i1, tensor<8x128xf32>
  %9 = pallas.select %b, %s, %s : i1, f32
  %10 = pallas.cumsum %x dim 0 : tensor<8x128xf32>
  %11 = pallas.cumsum %x dim 1 reverse : tensor<8x128xf32>
  return
}

// -----

// Tests the multiple_of and max_contiguous hints and debug_print with and
// without values.

// CHECK-LABEL: func.func @hints
// CHECK-SAME: (%[[I:[^:]+]]: i32, %[[O:[^:]+]]: tensor<128xi32>, %[[X:[^:]+]]: tensor<4xf32>)
// CHECK: pallas.multiple_of %[[I]], 128 : i32
// CHECK: pallas.multiple_of %[[O]], 16 : tensor<128xi32>
// CHECK: pallas.max_contiguous %[[O]], [128] : tensor<128xi32>
// CHECK: pallas.debug_print "hello"
// CHECK: pallas.debug_print "i = {}, x = {}" %[[I]], %[[X]] : i32, tensor<4xf32>
// CHECK: pallas.debug_print "values:" %[[I]], %[[X]] : i32, tensor<4xf32>
func.func @hints(%i: i32, %o: tensor<128xi32>, %x: tensor<4xf32>) {
  %0 = pallas.multiple_of %i, 128 : i32
  %1 = pallas.multiple_of %o, 16 : tensor<128xi32>
  %2 = pallas.max_contiguous %o, [128] : tensor<128xi32>
  pallas.debug_print "hello"
  pallas.debug_print "i = {}, x = {}" %i, %x : i32, tensor<4xf32>
  pallas.debug_print "values:" %i, %x : i32, tensor<4xf32>
  return
}

// -----

// Tests ref_global and get_global.

// CHECK: pallas.ref_global @counts : !pallas.ref<256xi32>
// CHECK: pallas.ref_global @table : !pallas.ref<16x16xf32, vmem>
// CHECK-LABEL: pallas.kernel @closes_over
// CHECK: %[[C:.+]] = pallas.get_global @counts : !pallas.ref<256xi32>
// CHECK: pallas.get_global @table : !pallas.ref<16x16xf32, vmem>
// CHECK: pallas.atomic_rmw add %[[C]][0]
pallas.ref_global @counts : !pallas.ref<256xi32>
pallas.ref_global @table : !pallas.ref<16x16xf32, vmem>
pallas.kernel @closes_over(%o: !pallas.ref<8xf32>) {
  %c = pallas.get_global @counts : !pallas.ref<256xi32>
  %t = pallas.get_global @table : !pallas.ref<16x16xf32, vmem>
  %one = arith.constant 1 : i32
  %0 = pallas.atomic_rmw add %c[0], %one : !pallas.ref<256xi32>, i32
}

// -----

// Tests hi_pack and hi_unpack on refs and on tensors.

// CHECK-LABEL: pallas.kernel @hi_ops
// CHECK-SAME: (%[[Q:[^:]+]]: !pallas.hi<"qarray", !pallas.ref<64xi8>, !pallas.ref<1xf32>>)
// CHECK: %[[P:.+]]:2 = pallas.hi_unpack %[[Q]] : !pallas.hi<"qarray", !pallas.ref<64xi8>, !pallas.ref<1xf32>>
// CHECK: %[[V:.+]] = pallas.load %[[P]]#0[] : !pallas.ref<64xi8> -> tensor<64xi8>
// CHECK: %[[S:.+]] = pallas.load %[[P]]#1[] : !pallas.ref<1xf32> -> tensor<1xf32>
// CHECK: %[[H:.+]] = pallas.hi_pack %[[V]], %[[S]] : tensor<64xi8>, tensor<1xf32> -> !pallas.hi<"qarray", tensor<64xi8>, tensor<1xf32>>
// CHECK: pallas.hi_unpack %[[H]] : !pallas.hi<"qarray", tensor<64xi8>, tensor<1xf32>>
pallas.kernel @hi_ops(%q: !pallas.hi<"qarray", !pallas.ref<64xi8>, !pallas.ref<1xf32>>) {
  %v, %s = pallas.hi_unpack %q : !pallas.hi<"qarray", !pallas.ref<64xi8>, !pallas.ref<1xf32>>
  %tv = pallas.load %v[] : !pallas.ref<64xi8> -> tensor<64xi8>
  %ts = pallas.load %s[] : !pallas.ref<1xf32> -> tensor<1xf32>
  %h = pallas.hi_pack %tv, %ts : tensor<64xi8>, tensor<1xf32> -> !pallas.hi<"qarray", tensor<64xi8>, tensor<1xf32>>
  %a, %b = pallas.hi_unpack %h : !pallas.hi<"qarray", tensor<64xi8>, tensor<1xf32>>
}

// -----

// Tests a minimal pallas.call: static grid, affine index maps, defaults
// omitted.

// CHECK-LABEL: pallas.kernel @add
// CHECK: pallas.load
// CHECK: arith.addf
// CHECK: pallas.store
// CHECK-NOT: pallas.return
// CHECK-LABEL: func.func @call_add
// CHECK-SAME: (%[[X:[^:]+]]: tensor<32x128xf32>, %[[Y:[^:]+]]: tensor<32x128xf32>)
// CHECK: %[[O:.+]] = pallas.call @add(%[[X]], %[[Y]])
// CHECK-SAME: grid = array<i64: 4>
// CHECK-SAME: in_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>, #pallas.block_spec<[8, 128], (d0) -> (d0, 0)>]
// CHECK-SAME: out_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>]
// CHECK-SAME: : (tensor<32x128xf32>, tensor<32x128xf32>) -> tensor<32x128xf32>
// CHECK: return %[[O]]
pallas.kernel @add(%x: !pallas.ref<8x128xf32>, %y: !pallas.ref<8x128xf32>,
                   %o: !pallas.ref<8x128xf32>) {
  %a = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %b = pallas.load %y[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  %s = arith.addf %a, %b : tensor<8x128xf32>
  pallas.store %o[], %s : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @call_add(%x: tensor<32x128xf32>, %y: tensor<32x128xf32>) -> tensor<32x128xf32> {
  %o = pallas.call @add(%x, %y) {
      grid = array<i64: 4>, num_scalar_prefetch = 0,
      in_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>,
                  #pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      out_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>]}
      : (tensor<32x128xf32>, tensor<32x128xf32>) -> tensor<32x128xf32>
  return %o : tensor<32x128xf32>
}

// -----

// Tests a pallas.call with dynamic grid bounds, grid names, scratch, an
// 'any' operand, squeezed and padded element block dims; default-valued
// attributes are not printed.

// CHECK-LABEL: func.func @call_dynamic
// CHECK-SAME: (%[[N:[^:]+]]: index, %[[M:[^:]+]]: index, %[[X:[^:]+]]: tensor<16x1024xf32>, %[[W:[^:]+]]: tensor<1024xf32>)
// CHECK: pallas.call @rows[%[[N]], %[[M]]](%[[X]], %[[W]])
// CHECK-SAME: {grid = array<i64: -1, 2, -1>, grid_names = ["row", "half", ""], in_specs = [#pallas.block_spec<[squeezed, element(512, 1, 1)], (d0, d1, d2) -> (d0, d1 * 512)>, #pallas.block_spec<any>], out_specs = [#pallas.block_spec<[squeezed, 512], (d0, d1, d2) -> (d0, d1), vmem>], scratch = [!pallas.ref<512xf32, vmem>, !pallas.ref<1xi32, smem>]}
// CHECK-SAME: : (tensor<16x1024xf32>, tensor<1024xf32>) -> tensor<16x1024xf32>
pallas.kernel @rows(%x: !pallas.ref<512xf32>, %w: !pallas.ref<1024xf32, any>,
                    %o: !pallas.ref<512xf32, vmem>,
                    %acc: !pallas.ref<512xf32, vmem>, %flag: !pallas.ref<1xi32, smem>) {
  %r = pallas.program_id 0 : i32
  %h = pallas.num_programs 2 : i32
}
func.func @call_dynamic(%n: index, %m: index, %x: tensor<16x1024xf32>,
                        %w: tensor<1024xf32>) -> tensor<16x1024xf32> {
  %o = pallas.call @rows[%n, %m](%x, %w) {
      grid = array<i64: -1, 2, -1>, grid_names = ["row", "half", ""],
      in_specs = [#pallas.block_spec<[squeezed, element(512, 1, 1)], (r, h, k) -> (r, h * 512)>,
                  #pallas.block_spec<any>],
      out_specs = [#pallas.block_spec<[squeezed, 512], (r, h, k) -> (r, h), vmem>],
      scratch = [!pallas.ref<512xf32, vmem>, !pallas.ref<1xi32, smem>]}
      : (tensor<16x1024xf32>, tensor<1024xf32>) -> tensor<16x1024xf32>
  return %o : tensor<16x1024xf32>
}

// -----

// Tests a pallas.call with scalar prefetch operands read by @func index maps
// (i32 and index grid indices).

// CHECK-LABEL: func.func @gather_map
// CHECK-LABEL: pallas.kernel @gather
// CHECK-SAME: !pallas.ref<4xi32, smem>, %{{.*}}: !pallas.ref<8x128xf32>, %{{.*}}: !pallas.ref<8x128xf32>)
// CHECK-LABEL: func.func @call_gather
// CHECK-SAME: (%[[IDX:[^:]+]]: tensor<4xi32>, %[[X:[^:]+]]: tensor<64x128xf32>)
// CHECK: pallas.call @gather(%[[IDX]], %[[X]])
// CHECK-SAME: grid = array<i64: 4>
// CHECK-SAME: in_specs = [#pallas.block_spec<[8, 128], @gather_map>]
// CHECK-SAME: num_scalar_prefetch = 1 : i64
// CHECK-SAME: out_specs = [#pallas.block_spec<[8, 128], @out_map>]
// CHECK-SAME: : (tensor<4xi32>, tensor<64x128xf32>) -> tensor<32x128xf32>
func.func @gather_map(%i: i32, %idx: !pallas.ref<4xi32, smem>) -> (i32, i32) {
  %c0 = arith.constant 0 : i32
  %row = pallas.load %idx[%i] : !pallas.ref<4xi32, smem> -> i32
  return %row, %c0 : i32, i32
}
func.func @out_map(%i: index, %idx: !pallas.ref<4xi32, smem>) -> (index, index) {
  %c0 = arith.constant 0 : index
  return %i, %c0 : index, index
}
pallas.kernel @gather(%idx: !pallas.ref<4xi32, smem>, %x: !pallas.ref<8x128xf32>,
                      %o: !pallas.ref<8x128xf32>) {
}
func.func @call_gather(%idx: tensor<4xi32>, %x: tensor<64x128xf32>) -> tensor<32x128xf32> {
  %o = pallas.call @gather(%idx, %x) {
      grid = array<i64: 4>, num_scalar_prefetch = 1,
      in_specs = [#pallas.block_spec<[8, 128], @gather_map>],
      out_specs = [#pallas.block_spec<[8, 128], @out_map>]}
      : (tensor<4xi32>, tensor<64x128xf32>) -> tensor<32x128xf32>
  return %o : tensor<32x128xf32>
}

// -----

// Tests a pallas.call with aliases, a pinned input, vmapped_dims, a cost
// estimate, compiler params (dimension_semantics: one entry per
// kernel-visible axis), metadata, a name and the transforms applied.

// CHECK-LABEL: func.func @call_everything
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x32x128xf32>, %[[ACC:[^:]+]]: tensor<4x32x128xf32>)
// CHECK: %[[R:.+]]:2 = pallas.call @update(%[[X]], %[[ACC]])
// CHECK-SAME: compiler_params = #pallas.compiler_params<gpu = <num_warps = 4, num_stages = 3>, tpu = <dimension_semantics = [arbitrary]>>
// CHECK-SAME: cost_estimate = #pallas.cost<flops = 4096, bytes_accessed = 131072, transcendentals = 0>
// CHECK-SAME: grid = array<i64: 4, 4>
// CHECK-SAME: grid_names = ["", "i"]
// CHECK-SAME: input_output_aliases = array<i64: 1, 0>
// CHECK-SAME: metadata = {owner = "team-x"}
// CHECK-SAME: name = "update_acc"
// CHECK-SAME: pinned_inputs = array<i64: 1>
// CHECK-SAME: transforms = ["vmap"]
// CHECK-SAME: vmapped_dims = array<i64: 0>
// CHECK-SAME: : (tensor<4x32x128xf32>, tensor<4x32x128xf32>) -> (tensor<4x32x128xf32>, tensor<4x32x128xf32>)
// CHECK: return %[[R]]#0, %[[R]]#1
pallas.kernel @update(%x: !pallas.ref<8x128xf32>, %acc_in: !pallas.ref<8x128xf32>,
                      %acc: !pallas.ref<8x128xf32>, %y: !pallas.ref<8x128xf32>) {
  %i = pallas.program_id 0 : i32
}
func.func @call_everything(%x: tensor<4x32x128xf32>, %acc: tensor<4x32x128xf32>)
    -> (tensor<4x32x128xf32>, tensor<4x32x128xf32>) {
  %r:2 = pallas.call @update(%x, %acc) {
      grid = array<i64: 4, 4>, grid_names = ["", "i"],
      in_specs = [#pallas.block_spec<[squeezed, 8, 128], (b, i) -> (b, i, 0)>,
                  #pallas.block_spec<[squeezed, 8, 128], (b, i) -> (b, i, 0)>],
      out_specs = [#pallas.block_spec<[squeezed, 8, 128], (b, i) -> (b, i, 0)>,
                   #pallas.block_spec<[squeezed, 8, 128], (b, i) -> (b, i, 0)>],
      input_output_aliases = array<i64: 1, 0>, pinned_inputs = array<i64: 1>,
      vmapped_dims = array<i64: 0>,
      cost_estimate = #pallas.cost<flops = 4096, bytes_accessed = 131072, transcendentals = 0>,
      compiler_params = #pallas.compiler_params<
          gpu = <num_warps = 4, num_stages = 3>,
          tpu = <dimension_semantics = [arbitrary]>>,
      metadata = {owner = "team-x"}, name = "update_acc", transforms = ["vmap"]}
      : (tensor<4x32x128xf32>, tensor<4x32x128xf32>) -> (tensor<4x32x128xf32>, tensor<4x32x128xf32>)
  return %r#0, %r#1 : tensor<4x32x128xf32>, tensor<4x32x128xf32>
}

// -----

// Tests a pallas.call over hi operands and results (checked after
// pallas-hi-to-lo) and a call with no inputs.

// CHECK-LABEL: func.func @call_hi
// CHECK: pallas.call @dequant(%{{.*}}) {
// CHECK-SAME: : (!pallas.hi<"qarray", tensor<256x128xi8>, tensor<256xf32>>) -> !pallas.hi<"qarray", tensor<256x128xi8>, tensor<256xf32>>
// CHECK-LABEL: func.func @call_no_inputs
// CHECK: pallas.call @fill() {
// CHECK-SAME: grid = array<i64>
// CHECK-SAME: in_specs = []
// CHECK-SAME: () -> tensor<8xf32>
pallas.kernel @dequant(%q: !pallas.hi<"qarray", !pallas.ref<64x128xi8>, !pallas.ref<64xf32>>,
                       %o: !pallas.hi<"qarray", !pallas.ref<64x128xi8>, !pallas.ref<64xf32>>) {
}
func.func @call_hi(%q: !pallas.hi<"qarray", tensor<256x128xi8>, tensor<256xf32>>)
    -> !pallas.hi<"qarray", tensor<256x128xi8>, tensor<256xf32>> {
  %o = pallas.call @dequant(%q) {
      grid = array<i64: 4>,
      in_specs = [#pallas.block_spec<[64, 128], (i) -> (i, 0)>],
      out_specs = [#pallas.block_spec<[64, 128], (i) -> (i, 0)>]}
      : (!pallas.hi<"qarray", tensor<256x128xi8>, tensor<256xf32>>)
      -> !pallas.hi<"qarray", tensor<256x128xi8>, tensor<256xf32>>
  return %o : !pallas.hi<"qarray", tensor<256x128xi8>, tensor<256xf32>>
}
pallas.kernel @fill(%o: !pallas.ref<8xf32>) {
}
func.func @call_no_inputs() -> tensor<8xf32> {
  %o = pallas.call @fill() {grid = array<i64>, in_specs = [],
                            out_specs = [#pallas.block_spec<[8]>]} : () -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests the generic form of pallas.kernel with its explicit terminator and
// argument attributes.

// CHECK-LABEL: pallas.kernel @generic_kernel
// CHECK-SAME: (%{{.*}}: !pallas.ref<8xf32> {pallas.role = "input"})
// CHECK-SAME: attributes {pallas.note = "kept"}
// CHECK-NOT: pallas.return
"pallas.kernel"() <{function_type = (!pallas.ref<8xf32>) -> (), sym_name = "generic_kernel",
                    arg_attrs = [{pallas.role = "input"}]}> ({
^bb0(%x: !pallas.ref<8xf32>):
  "pallas.return"() : () -> ()
}) {pallas.note = "kept"} : () -> ()

// -----

// Tests that dma_start / dma_wait round-trip with dynamic and static slices,
// a whole-ref indexer, integer (dropped) dims and a rank-0 semaphore.

// CHECK-LABEL: pallas.kernel @dma
// CHECK: pallas.dma_start %{{.+}}[%[[I:.+]] : 8, 0 : 128], %{{.+}}[], %{{.+}}[1] : !pallas.ref<32x128xf32, any>, !pallas.ref<8x128xf32, vmem>, !pallas.ref<2xi32, semaphore>
// CHECK: pallas.dma_wait %{{.+}}[%[[I]] : 8, 0 : 128], %{{.+}}[], %{{.+}}[1] : !pallas.ref<32x128xf32, any>, !pallas.ref<8x128xf32, vmem>, !pallas.ref<2xi32, semaphore>
// CHECK: pallas.dma_start %{{.+}}[], %{{.+}}[3, 0 : 8, 0 : 128], %{{.+}}[] : !pallas.ref<8x128xf32, vmem>, !pallas.ref<4x8x128xf32, hbm>, !pallas.ref<i32, semaphore>
pallas.kernel @dma(%x: !pallas.ref<32x128xf32, any>, %buf: !pallas.ref<8x128xf32, vmem>,
                   %sems: !pallas.ref<2xi32, semaphore>, %h: !pallas.ref<4x8x128xf32, hbm>,
                   %sem: !pallas.ref<i32, semaphore>) {
  %i = pallas.program_id 0 : i32
  pallas.dma_start %x[%i : 8, 0 : 128], %buf[], %sems[1]
      : !pallas.ref<32x128xf32, any>, !pallas.ref<8x128xf32, vmem>, !pallas.ref<2xi32, semaphore>
  pallas.dma_wait %x[%i : 8, 0 : 128], %buf[], %sems[1]
      : !pallas.ref<32x128xf32, any>, !pallas.ref<8x128xf32, vmem>, !pallas.ref<2xi32, semaphore>
  pallas.dma_start %buf[], %h[3, 0 : 8, 0 : 128], %sem[]
      : !pallas.ref<8x128xf32, vmem>, !pallas.ref<4x8x128xf32, hbm>, !pallas.ref<i32, semaphore>
}

// -----

// Tests that pallas.gather round-trips with and without mask and other.

// CHECK-LABEL: pallas.kernel @gather
// CHECK: pallas.gather %{{.+}}[%[[R:.+]], %[[C:.+]]] mask %{{.+}} other %{{.+}} : !pallas.ref<64x128xf32>, tensor<8x16xi32>, tensor<8x16xi32> -> tensor<8x16xf32>
// CHECK: pallas.gather %{{.+}}[%[[R]], %[[C]]] : !pallas.ref<64x128xf32>, tensor<8x16xi32>, tensor<8x16xi32> -> tensor<8x16xf32>
// CHECK: pallas.gather %{{.+}}[%{{.+}}] : !pallas.ref<16xi32, smem>, tensor<4xi32> -> tensor<4xi32>
pallas.kernel @gather(%t: !pallas.ref<64x128xf32>, %s: !pallas.ref<16xi32, smem>) {
  %r = pallas.iota 0 : tensor<8x16xi32>
  %c = pallas.iota 1 : tensor<8x16xi32>
  %m = arith.constant dense<true> : tensor<8x16xi1>
  %z = arith.constant dense<0.0> : tensor<8x16xf32>
  %v = pallas.gather %t[%r, %c] mask %m other %z
      : !pallas.ref<64x128xf32>, tensor<8x16xi32>, tensor<8x16xi32> -> tensor<8x16xf32>
  %w = pallas.gather %t[%r, %c]
      : !pallas.ref<64x128xf32>, tensor<8x16xi32>, tensor<8x16xi32> -> tensor<8x16xf32>
  %i = arith.constant dense<[3, 1, 4, 1]> : tensor<4xi32>
  %u = pallas.gather %s[%i] : !pallas.ref<16xi32, smem>, tensor<4xi32> -> tensor<4xi32>
}

// -----

// Tests that the multi-device ops round-trip: the device id, the barrier
// semaphore, a signal to another device, a remote copy and both of its waits.

// CHECK-LABEL: pallas.kernel @remote
// CHECK: %[[D:.+]] = pallas.device_id : i32
// CHECK: %[[B:.+]] = pallas.barrier_semaphore : !pallas.ref<i32, semaphore>
// CHECK: pallas.remote_semaphore_signal %[[B]][], %{{.+}}, %[[D]] : !pallas.ref<i32, semaphore>
// CHECK: pallas.remote_semaphore_signal %{{.+}}[1], %{{.+}}, %[[D]] : !pallas.ref<2xi32, semaphore>
// CHECK: pallas.remote_dma_start %{{.+}}[%[[D]], 0 : 4, 0 : 128], %{{.+}}[%[[D]], 0 : 4, 0 : 128], %{{.+}}[0], %{{.+}}[1], %[[D]] : !pallas.ref<2x8x128xf32, vmem>, !pallas.ref<2x8x128xf32, vmem>, !pallas.ref<2xi32, semaphore>, !pallas.ref<2xi32, semaphore>
// CHECK: pallas.remote_dma_wait send %{{.+}}[%[[D]], 0 : 4, 0 : 128], %{{.+}}[%[[D]], 0 : 4, 0 : 128], %{{.+}}[1], %[[D]] : !pallas.ref<2x8x128xf32, vmem>, !pallas.ref<2x8x128xf32, vmem>, !pallas.ref<2xi32, semaphore>
// CHECK: pallas.remote_dma_wait %{{.+}}[%[[D]], 0 : 4, 0 : 128], %{{.+}}[%[[D]], 0 : 4, 0 : 128], %{{.+}}[0], %[[D]] : !pallas.ref<2x8x128xf32, vmem>, !pallas.ref<2x8x128xf32, vmem>, !pallas.ref<2xi32, semaphore>
pallas.kernel @remote(%o: !pallas.ref<2x8x128xf32, vmem>, %sems: !pallas.ref<2xi32, semaphore>) {
  %c1 = arith.constant 1 : i32
  %d = pallas.device_id : i32
  %b = pallas.barrier_semaphore : !pallas.ref<i32, semaphore>
  pallas.remote_semaphore_signal %b[], %c1, %d : !pallas.ref<i32, semaphore>
  pallas.remote_semaphore_signal %sems[1], %c1, %d : !pallas.ref<2xi32, semaphore>
  pallas.remote_dma_start %o[%d, 0 : 4, 0 : 128], %o[%d, 0 : 4, 0 : 128], %sems[0], %sems[1], %d
      : !pallas.ref<2x8x128xf32, vmem>, !pallas.ref<2x8x128xf32, vmem>,
        !pallas.ref<2xi32, semaphore>, !pallas.ref<2xi32, semaphore>
  pallas.remote_dma_wait send %o[%d, 0 : 4, 0 : 128], %o[%d, 0 : 4, 0 : 128], %sems[1], %d
      : !pallas.ref<2x8x128xf32, vmem>, !pallas.ref<2x8x128xf32, vmem>, !pallas.ref<2xi32, semaphore>
  pallas.remote_dma_wait %o[%d, 0 : 4, 0 : 128], %o[%d, 0 : 4, 0 : 128], %sems[0], %d
      : !pallas.ref<2x8x128xf32, vmem>, !pallas.ref<2x8x128xf32, vmem>, !pallas.ref<2xi32, semaphore>
}
