// RUN: pallasc-opt %s -split-input-file -verify-diagnostics -pallas-hi-to-lo | FileCheck %s

// JAX's _pallas_call_to_lojax: !pallas.hi operands, results and kernel
// arguments become their lo parts; aliases are remapped per flattened index.
// A hi operand's block spec applies to each part of its rank as it is, and
// to a part of lower rank r as its first r dimensions and index results.

// Tests a quantized input (int8 values + per-row f32 scales): the call takes
// the two parts, the scales get the spec's first dimension ([64], (i) -> (i)),
// the kernel takes the two part refs (hi_unpack gone), and the wrapper takes
// the parts as two arguments.

// CHECK-LABEL: pallas.kernel @dequant(
// CHECK-SAME: %[[V:[^:]+]]: !pallas.ref<64x128xi8>, %[[S:[^:]+]]: !pallas.ref<64xf32>, %[[O:[^:]+]]: !pallas.ref<64x128xf32>)
// CHECK-NOT: pallas.hi_unpack
// CHECK: pallas.load %[[V]][]
// CHECK: pallas.load %[[S]][]
pallas.kernel @dequant(%q: !pallas.hi<"qarray", !pallas.ref<64x128xi8>, !pallas.ref<64xf32>>,
                       %o: !pallas.ref<64x128xf32>) {
  %vals, %scales = pallas.hi_unpack %q : !pallas.hi<"qarray", !pallas.ref<64x128xi8>, !pallas.ref<64xf32>>
  %v = pallas.load %vals[] : !pallas.ref<64x128xi8> -> tensor<64x128xi8>
  %s = pallas.load %scales[] : !pallas.ref<64xf32> -> tensor<64xf32>
  %f = arith.sitofp %v : tensor<64x128xi8> to tensor<64x128xf32>
  %sb = pallas.broadcast_in_dim %s dims [0] : tensor<64xf32> -> tensor<64x128xf32>
  %r = arith.mulf %f, %sb : tensor<64x128xf32>
  pallas.store %o[], %r : !pallas.ref<64x128xf32>, tensor<64x128xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[QV:.+]]: tensor<256x128xi8>, %[[QS:.+]]: tensor<256xf32>) -> tensor<256x128xf32>
// CHECK-NEXT: %[[R:.+]] = pallas.call @dequant(%[[QV]], %[[QS]])
// CHECK-SAME: in_specs = [#pallas.block_spec<[64, 128], (d0) -> (d0, 0)>, #pallas.block_spec<[64], (d0) -> (d0)>]
// CHECK-SAME: transforms = ["hi_to_lo"]
// CHECK-SAME: : (tensor<256x128xi8>, tensor<256xf32>) -> tensor<256x128xf32>
// CHECK-NEXT: return %[[R]]
func.func @main(%q: !pallas.hi<"qarray", tensor<256x128xi8>, tensor<256xf32>>) -> tensor<256x128xf32> {
  %o = pallas.call @dequant(%q) {grid = array<i64: 4>,
      in_specs = [#pallas.block_spec<[64, 128], (i) -> (i, 0)>],
      out_specs = [#pallas.block_spec<[64, 128], (i) -> (i, 0)>]}
      : (!pallas.hi<"qarray", tensor<256x128xi8>, tensor<256xf32>>) -> tensor<256x128xf32>
  return %o : tensor<256x128xf32>
}

// -----

// Tests _get_index_mapping on aliases: hi input 1 (lo inputs 1, 2) aliased to
// hi output 0 (lo outputs 0, 1) gives the pairs (1, 0) and (2, 1); lo input 2
// (now lo input 3) aliased to output 1 (now lo output 2) gives (3, 2); a
// pinned hi input pins every part. A hi result of the wrapper is returned as
// its parts.

// CHECK-LABEL: pallas.kernel @update(
// CHECK-SAME: !pallas.ref<8xf32>, %{{[^:]+}}: !pallas.ref<8xi8>, %{{[^:]+}}: !pallas.ref<8xf32>, %{{[^:]+}}: !pallas.ref<8xf32>, %{{[^:]+}}: !pallas.ref<8xi8>, %{{[^:]+}}: !pallas.ref<8xf32>, %{{[^:]+}}: !pallas.ref<8xf32>)
pallas.kernel @update(%x: !pallas.ref<8xf32>,
                      %q_in: !pallas.hi<"q", !pallas.ref<8xi8>, !pallas.ref<8xf32>>,
                      %acc_in: !pallas.ref<8xf32>,
                      %q_out: !pallas.hi<"q", !pallas.ref<8xi8>, !pallas.ref<8xf32>>,
                      %acc_out: !pallas.ref<8xf32>) {
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:[^:]+]]: tensor<16xf32>, %[[QV:[^:]+]]: tensor<16xi8>, %[[QS:[^:]+]]: tensor<16xf32>, %[[ACC:[^:]+]]: tensor<16xf32>) -> (tensor<16xi8>, tensor<16xf32>, tensor<16xf32>)
// CHECK: %[[R:.+]]:3 = pallas.call @update(%[[X]], %[[QV]], %[[QS]], %[[ACC]])
// CHECK-SAME: in_specs = [#pallas.block_spec<[8], (d0) -> (d0)>, #pallas.block_spec<[8], (d0) -> (d0)>, #pallas.block_spec<[8], (d0) -> (d0)>, #pallas.block_spec<[8], (d0) -> (d0)>]
// CHECK-SAME: input_output_aliases = array<i64: 1, 0, 2, 1, 3, 2>
// CHECK-SAME: out_specs = [#pallas.block_spec<[8], (d0) -> (d0)>, #pallas.block_spec<[8], (d0) -> (d0)>, #pallas.block_spec<[8], (d0) -> (d0)>]
// CHECK-SAME: pinned_inputs = array<i64: 1, 2>
// CHECK-NEXT: return %[[R]]#0, %[[R]]#1, %[[R]]#2
func.func @main(%x: tensor<16xf32>, %q: !pallas.hi<"q", tensor<16xi8>, tensor<16xf32>>,
                %acc: tensor<16xf32>) -> (!pallas.hi<"q", tensor<16xi8>, tensor<16xf32>>, tensor<16xf32>) {
  %o:2 = pallas.call @update(%x, %q, %acc) {grid = array<i64: 2>,
      in_specs = [#pallas.block_spec<[8], (i) -> (i)>, #pallas.block_spec<[8], (i) -> (i)>,
                  #pallas.block_spec<[8], (i) -> (i)>],
      out_specs = [#pallas.block_spec<[8], (i) -> (i)>, #pallas.block_spec<[8], (i) -> (i)>],
      input_output_aliases = array<i64: 1, 0, 2, 1>, pinned_inputs = array<i64: 1>}
      : (tensor<16xf32>, !pallas.hi<"q", tensor<16xi8>, tensor<16xf32>>, tensor<16xf32>)
        -> (!pallas.hi<"q", tensor<16xi8>, tensor<16xf32>>, tensor<16xf32>)
  return %o#0, %o#1 : !pallas.hi<"q", tensor<16xi8>, tensor<16xf32>>, tensor<16xf32>
}

// -----

// Tests that a hi value the wrapper builds from lo values (hi_pack) reaches
// the call as those values, that an 'any' spec stays 'any' for every part,
// and that a squeezed dimension is kept in a lower-rank part's prefix.

// CHECK-LABEL: pallas.kernel @k(
// CHECK-SAME: !pallas.ref<4x8xf32, any>, %{{[^:]+}}: !pallas.ref<4xf32, any>, %{{[^:]+}}: !pallas.ref<16xi8>, %{{[^:]+}}: !pallas.ref<f32>, %{{[^:]+}}: !pallas.ref<16xf32>)
pallas.kernel @k(%w: !pallas.hi<"pair", !pallas.ref<4x8xf32, any>, !pallas.ref<4xf32, any>>,
                 %r: !pallas.hi<"row", !pallas.ref<16xi8>, !pallas.ref<f32>>,
                 %o: !pallas.ref<16xf32>) {
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[A:[^:]+]]: tensor<4x8xf32>, %[[B:[^:]+]]: tensor<4xf32>, %[[RV:[^:]+]]: tensor<2x16xi8>, %[[RS:[^:]+]]: tensor<2xf32>)
// CHECK-NOT: pallas.hi_pack
// CHECK: pallas.call @k(%[[A]], %[[B]], %[[RV]], %[[RS]])
// CHECK-SAME: in_specs = [#pallas.block_spec<any>, #pallas.block_spec<any>, #pallas.block_spec<[squeezed, 16], (d0) -> (d0, 0)>, #pallas.block_spec<[squeezed], (d0) -> (d0)>]
func.func @main(%a: tensor<4x8xf32>, %b: tensor<4xf32>,
                %row: !pallas.hi<"row", tensor<2x16xi8>, tensor<2xf32>>) -> tensor<32xf32> {
  %w = pallas.hi_pack %a, %b : tensor<4x8xf32>, tensor<4xf32>
      -> !pallas.hi<"pair", tensor<4x8xf32>, tensor<4xf32>>
  %o = pallas.call @k(%w, %row) {grid = array<i64: 2>,
      in_specs = [#pallas.block_spec<any>, #pallas.block_spec<[squeezed, 16], (i) -> (i, 0)>],
      out_specs = [#pallas.block_spec<[16], (i) -> (i)>]}
      : (!pallas.hi<"pair", tensor<4x8xf32>, tensor<4xf32>>, !pallas.hi<"row", tensor<2x16xi8>, tensor<2xf32>>)
        -> tensor<32xf32>
  return %o : tensor<32xf32>
}

// -----

// Tests that an @func index map applies to a lower-rank part through a copy
// returning its first results.

// CHECK-LABEL: func.func @rows(
// CHECK-SAME: -> (i32, i32)
// CHECK-LABEL: func.func @rows_part1(
// CHECK-SAME: %[[I:.+]]: i32) -> i32
// CHECK-NEXT: %{{.+}} = arith.constant 0 : i32
// CHECK-NEXT: return %[[I]] : i32
func.func @rows(%i: i32) -> (i32, i32) {
  %c0 = arith.constant 0 : i32
  return %i, %c0 : i32, i32
}
pallas.kernel @k(%q: !pallas.hi<"q", !pallas.ref<8x4xi8>, !pallas.ref<8xf32>>, %o: !pallas.ref<8xf32>) {
}
// CHECK-LABEL: func.func @main(
// CHECK: in_specs = [#pallas.block_spec<[8, 4], @rows>, #pallas.block_spec<[8], @rows_part1>]
func.func @main(%q: !pallas.hi<"q", tensor<16x4xi8>, tensor<16xf32>>) -> tensor<16xf32> {
  %o = pallas.call @k(%q) {grid = array<i64: 2>,
      in_specs = [#pallas.block_spec<[8, 4], @rows>],
      out_specs = [#pallas.block_spec<[8], (i) -> (i)>]}
      : (!pallas.hi<"q", tensor<16x4xi8>, tensor<16xf32>>) -> tensor<16xf32>
  return %o : tensor<16xf32>
}

// -----

// Tests that a call without hi types is unchanged but for the transform.

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.+]]: tensor<8xf32>) -> tensor<8xf32>
// CHECK: pallas.call @lo(%[[X]])
// CHECK-SAME: transforms = ["hi_to_lo"]
pallas.kernel @lo(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %o = pallas.call @lo(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
      out_specs = [#pallas.block_spec<[8]>]} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests JAX's error for an index map that involves hi values.

// expected-note @+1 {{index map @packed here}}
func.func @packed(%i: i32) -> (i32, i32) {
  %c0 = arith.constant 0 : i32
  %p = pallas.hi_pack %i, %c0 : i32, i32 -> !pallas.hi<"idx", i32, i32>
  %a, %b = pallas.hi_unpack %p : !pallas.hi<"idx", i32, i32>
  return %a, %b : i32, i32
}
pallas.kernel @k(%q: !pallas.hi<"q", !pallas.ref<8x4xi8>, !pallas.ref<8x1xf32>>, %o: !pallas.ref<8xf32>) {
}
func.func @main(%q: !pallas.hi<"q", tensor<16x4xi8>, tensor<16x1xf32>>) -> tensor<16xf32> {
  // expected-error @+1 {{pallas_call does not support hijax for index_map}}
  %o = pallas.call @k(%q) {grid = array<i64: 2>,
      in_specs = [#pallas.block_spec<[8, 4], @packed>],
      out_specs = [#pallas.block_spec<[8], (i) -> (i)>]}
      : (!pallas.hi<"q", tensor<16x4xi8>, tensor<16x1xf32>>) -> tensor<16xf32>
  return %o : tensor<16xf32>
}

// -----

// Tests that a part of higher rank than its operand's block spec cannot be
// lowered (JAX: "Cannot lower block spec ... on <type>").

pallas.kernel @k(%q: !pallas.hi<"q", !pallas.ref<8xi8>, !pallas.ref<8x2xf32>>, %o: !pallas.ref<8xf32>) {
}
func.func @main(%q: !pallas.hi<"q", tensor<16xi8>, tensor<16x2xf32>>) -> tensor<16xf32> {
  // expected-error @+1 {{cannot lower block spec #pallas.block_spec<[8], (d0) -> (d0)> on '!pallas.hi<"q", tensor<16xi8>, tensor<16x2xf32>>' (input 0): part 1 has rank 2, more than the spec's 1}}
  %o = pallas.call @k(%q) {grid = array<i64: 2>,
      in_specs = [#pallas.block_spec<[8], (i) -> (i)>],
      out_specs = [#pallas.block_spec<[8], (i) -> (i)>]}
      : (!pallas.hi<"q", tensor<16xi8>, tensor<16x2xf32>>) -> tensor<16xf32>
  return %o : tensor<16xf32>
}

// -----

// Tests that the kernel's part refs must be the blocks the lowered specs give.

pallas.kernel @k(%q: !pallas.hi<"q", !pallas.ref<8x4xi8>, !pallas.ref<4xf32>>, %o: !pallas.ref<8xf32>) {
}
func.func @main(%q: !pallas.hi<"q", tensor<16x4xi8>, tensor<16xf32>>) -> tensor<16xf32> {
  // expected-error @+1 {{kernel @k argument #0 part 1 has type '!pallas.ref<4xf32>' but the lowered block spec #pallas.block_spec<[8], (d0) -> (d0)> gives '!pallas.ref<8xf32>'}}
  %o = pallas.call @k(%q) {grid = array<i64: 2>,
      in_specs = [#pallas.block_spec<[8, 4], (i) -> (i, 0)>],
      out_specs = [#pallas.block_spec<[8], (i) -> (i)>]}
      : (!pallas.hi<"q", tensor<16x4xi8>, tensor<16xf32>>) -> tensor<16xf32>
  return %o : tensor<16xf32>
}

// -----

// Tests that every part of a hi operand must be a ranked tensor (its block
// spec is lowered per part).

pallas.kernel @k(%q: !pallas.hi<"q", !pallas.ref<8xi8>, !pallas.ref<8xf32>>, %o: !pallas.ref<8xf32>) {
}
func.func @main(%q: !pallas.hi<"q", tensor<16xi8>, tensor<*xf32>>) -> tensor<16xf32> {
  // expected-error @+1 {{input 0: part 1 of '!pallas.hi<"q", tensor<16xi8>, tensor<*xf32>>' is not a ranked tensor}}
  %o = pallas.call @k(%q) {grid = array<i64: 2>,
      in_specs = [#pallas.block_spec<[8], (i) -> (i)>],
      out_specs = [#pallas.block_spec<[8], (i) -> (i)>]}
      : (!pallas.hi<"q", tensor<16xi8>, tensor<*xf32>>) -> tensor<16xf32>
  return %o : tensor<16xf32>
}
