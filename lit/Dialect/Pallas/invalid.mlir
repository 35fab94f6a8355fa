// RUN: pallasc-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

// Tests that a ref rejects an unknown memory space.

// expected-error @+1 {{unknown memory space 'shared' (expected default, any, smem, vmem, gmem, hbm or semaphore)}}
func.func @ref_unknown_memory_space(%x: !pallas.ref<8xf32, shared>) {
  return
}

// -----

// Tests that a ref rejects a non-scalar element type.

// expected-error @+1 {{ref element type must be an integer, index or float type, got 'complex<f32>'}}
func.func @ref_complex_element(%x: !pallas.ref<8xcomplex<f32>>) {
  return
}

// -----

// Tests that a ref outside memory space `any` rejects a dynamic dimension.

// expected-error @+1 {{only refs in memory space 'any' may have dynamic dimensions ('?'), got memory space 'default'}}
func.func @ref_dynamic_dim(%x: !pallas.ref<?xf32>) {
  return
}

// -----

// Tests that a whole read of a ref with a dynamic dimension is refused: a
// block value needs a static shape.

pallas.kernel @whole_dynamic(%x: !pallas.ref<?x32xf32, any>, %o: !pallas.ref<8x32xf32>) {
  // expected-error @+1 {{reads the whole of '!pallas.ref<?x32xf32, any>', whose dynamic dimensions give no static block shape; expected an indexer with a static size in every dimension (pl.ds(start, size))}}
  %v = pallas.load %x[] : !pallas.ref<?x32xf32, any> -> tensor<?x32xf32>
}

// -----

// Tests that a ref whose element count overflows int64 is rejected.

// expected-error @+1 {{ref element count overflows int64}}
func.func @ref_overflow(%x: !pallas.ref<4294967296x4294967296xf32>) {
  return
}

// -----

// Tests that a hi type needs a name.

// expected-error @+1 {{hi type needs a non-empty name}}
func.func @hi_empty_name(%x: !pallas.hi<"", tensor<4xf32>>) {
  return
}

// -----

// Tests that hi types do not nest.

// expected-error @+1 {{hi type 'outer' cannot nest another hi type}}
func.func @hi_nested(%x: !pallas.hi<"outer", !pallas.hi<"inner", f32>>) {
  return
}

//===----------------------------------------------------------------------===//
// Block spec attribute
//===----------------------------------------------------------------------===//

// -----

// Tests that an 'any' block spec without a block shape takes no index map.

// expected-error @+1 {{a block spec in memory space 'any' without a block shape covers the whole array and takes no index map}}
func.func @spec_any_with_map() attributes {s = #pallas.block_spec<[], (i) -> (), any>} {
  return
}

// -----

// Tests that an 'any' block spec without a block shape takes no buffer count.

// expected-error @+1 {{a block spec in memory space 'any' without a block shape is not pipelined and takes no buffer count}}
func.func @spec_any_with_buffers() attributes {s = #pallas.block_spec<[], any, buffers = 2>} {
  return
}

// -----

// Tests that a block spec's buffer count is positive.

// expected-error @+1 {{a block spec's buffer count must be positive, got -1}}
func.func @spec_negative_buffers() attributes {s = #pallas.block_spec<[8], buffers = -1>} {
  return
}

// -----

// Tests that a block spec takes an index map or an index function, not both.

// expected-error @+1 {{a block spec takes an index map or an index function, not both}}
func.func @spec_map_and_func() attributes {s = #pallas.block_spec<[8], (i) -> (i), @f>} {
  return
}

// -----

// Tests that blocked dimensions must be positive.

// expected-error @+1 {{block dimension 1 must be positive, got 0}}
func.func @spec_zero_block() attributes {s = #pallas.block_spec<[8, 0]>} {
  return
}

// -----

// Tests that element dimensions must be positive.

// expected-error @+1 {{element block dimension 0 must be positive, got 0}}
func.func @spec_zero_element() attributes {s = #pallas.block_spec<[element(0)]>} {
  return
}

// -----

// Tests that element padding must be non-negative.

// expected-error @+1 {{element block dimension 0 has negative padding}}
func.func @spec_negative_padding() attributes {s = #pallas.block_spec<[element(8, -1, 0)]>} {
  return
}

// -----

// Tests that an index map has no symbols.

// expected-error @+1 {{index map affine_map<(d0)[s0] -> (d0 + s0)> must not have symbols}}
func.func @spec_map_symbols() attributes {s = #pallas.block_spec<[8], (i)[s] -> (i + s)>} {
  return
}

// -----

// Tests that an index map returns one index per block dimension.

// expected-error @+1 {{index map affine_map<(d0) -> (d0)> returns 1 indices but the block has rank 2}}
func.func @spec_map_results() attributes {s = #pallas.block_spec<[8, 128], (i) -> (i)>} {
  return
}

//===----------------------------------------------------------------------===//
// Kernel structure
//===----------------------------------------------------------------------===//

// -----

// Tests that a kernel returns nothing.

// expected-error @+1 {{'pallas.kernel' op a kernel returns nothing; it writes its output refs}}
pallas.kernel @returns_value(%x: !pallas.ref<8xf32>) -> i32 {
}

// -----

// Tests that kernel arguments are refs or hi aggregates.

// expected-error @+1 {{'pallas.kernel' op argument #1 has type 'tensor<8xf32>'; kernel arguments must be !pallas.ref (or !pallas.hi aggregates of refs)}}
pallas.kernel @tensor_arg(%x: !pallas.ref<8xf32>, %t: tensor<8xf32>) {
}

// -----

// Tests that a kernel needs a body (the error points past the signature).

pallas.kernel @no_body(%x: !pallas.ref<8xf32>)
// expected-error @+1 {{a pallas.kernel needs a body}}
func.func @after_no_body() {
  return
}

// -----

// Tests that the entry block of a generic kernel matches its signature.

// expected-error @+1 {{'pallas.kernel' op entry block must have 1 arguments to match function signature}}
"pallas.kernel"() <{function_type = (!pallas.ref<8xf32>) -> (), sym_name = "extra_arg"}> ({
^bb0(%x: !pallas.ref<8xf32>, %y: !pallas.ref<8xf32>):
  "pallas.return"() : () -> ()
}) : () -> ()

// -----

// Tests that pallas.return only terminates kernels.

func.func @stray_return() {
  // expected-error @+1 {{'pallas.return' op expects parent op 'pallas.kernel'}}
  pallas.return
}

// -----

// Tests that program_id takes a non-negative axis.

pallas.kernel @negative_axis(%x: !pallas.ref<8xf32>) {
  // expected-error @+1 {{'pallas.program_id' op attribute 'axis' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %i = pallas.program_id -1 : i32
}

//===----------------------------------------------------------------------===//
// Ref access
//===----------------------------------------------------------------------===//

// -----

// Tests that `fit` is a unit attribute (the out-of-range start rule), not a
// value.

pallas.kernel @fit_not_unit(%x: !pallas.ref<8xf32>) {
  %c = arith.constant 2 : i32
  // expected-error @+1 {{'pallas.load' op attribute 'fit' failed to satisfy constraint: unit attribute}}
  %v = pallas.load %x[%c : 4] {fit = 1 : i32} : !pallas.ref<8xf32> -> tensor<4xf32>
}

// -----

// Tests that an indexer start is non-negative.

pallas.kernel @negative_start(%x: !pallas.ref<8xf32>) {
  // expected-error @+1 {{indexer start must be non-negative, got -1}}
  %v = pallas.load %x[-1] : !pallas.ref<8xf32> -> f32
}

// -----

// Tests that an indexer size is non-negative (-1 is not a point index).

pallas.kernel @negative_size(%x: !pallas.ref<8xf32>) {
  // expected-error @+1 {{indexer size must be non-negative, got -1}}
  %v = pallas.load %x[0 : -1] : !pallas.ref<8xf32> -> tensor<8xf32>
}

// -----

// Tests that the generic form's indexer arrays have equal lengths.

pallas.kernel @indexer_lengths(%x: !pallas.ref<8xf32>) {
  // expected-error @+1 {{'pallas.load' op indexer arrays must have equal lengths}}
  %v = "pallas.load"(%x) <{operandSegmentSizes = array<i32: 1, 0, 0, 0>, static_starts = array<i64: 0>, static_sizes = array<i64: 8>, static_strides = array<i64>}> : (!pallas.ref<8xf32>) -> tensor<8xf32>
}

// -----

// Tests that each dynamic start has an operand.

pallas.kernel @indexer_dyn_count(%x: !pallas.ref<8xf32>) {
  // expected-error @+1 {{'pallas.load' op indexer has 1 dynamic starts but 0 start operands}}
  %v = "pallas.load"(%x) <{operandSegmentSizes = array<i32: 1, 0, 0, 0>, static_starts = array<i64: -9223372036854775808>, static_sizes = array<i64: 4>, static_strides = array<i64: 1>}> : (!pallas.ref<8xf32>) -> tensor<4xf32>
}

// -----

// Tests that an indexer has one entry per ref dimension.

pallas.kernel @indexer_rank(%x: !pallas.ref<8x128xf32>) {
  // expected-error @+1 {{'pallas.load' op indexer has 1 entries but the ref '!pallas.ref<8x128xf32>' has rank 2}}
  %v = pallas.load %x[0 : 8] : !pallas.ref<8x128xf32> -> tensor<8xf32>
}

// -----

// Tests that the generic form cannot give a negative size other than the
// point marker.

pallas.kernel @indexer_generic_size(%x: !pallas.ref<8xf32>) {
  // expected-error @+1 {{'pallas.load' op indexer size in dimension 0 must be non-negative, got -2}}
  %v = "pallas.load"(%x) <{operandSegmentSizes = array<i32: 1, 0, 0, 0>, static_starts = array<i64: 0>, static_sizes = array<i64: -2>, static_strides = array<i64: 1>}> : (!pallas.ref<8xf32>) -> f32
}

// -----

// Tests that strides are positive.

pallas.kernel @indexer_zero_stride(%x: !pallas.ref<8xf32>) {
  // expected-error @+1 {{'pallas.load' op indexer stride in dimension 0 must be positive, got 0}}
  %v = pallas.load %x[0 : 4 : 0] : !pallas.ref<8xf32> -> tensor<4xf32>
}

// -----

// Tests that an integer index has no stride.

pallas.kernel @indexer_point_stride(%x: !pallas.ref<8xf32>) {
  // expected-error @+1 {{'pallas.load' op integer index in dimension 0 cannot have a stride}}
  %v = "pallas.load"(%x) <{operandSegmentSizes = array<i32: 1, 0, 0, 0>, static_starts = array<i64: 0>, static_sizes = array<i64: -1>, static_strides = array<i64: 2>}> : (!pallas.ref<8xf32>) -> f32
}

// -----

// Tests that a static slice stays inside the ref.

pallas.kernel @indexer_out_of_bounds(%x: !pallas.ref<8x128xf32>) {
  // expected-error @+1 {{'pallas.load' op indexer reads past the end of dimension 1 (size 128): start 64, size 64, stride 2}}
  %v = pallas.load %x[0, 64 : 64 : 2] : !pallas.ref<8x128xf32> -> tensor<64xf32>
}

// -----

// Tests that a static integer index stays inside the ref.

pallas.kernel @indexer_point_out_of_bounds(%x: !pallas.ref<8xi32, smem>) {
  // expected-error @+1 {{'pallas.load' op indexer reads past the end of dimension 0 (size 8): start 8, size 1, stride 1}}
  %v = pallas.load %x[8] : !pallas.ref<8xi32, smem> -> i32
}

// -----

// Tests that the loaded type has the ref's element type.

pallas.kernel @load_element_type(%x: !pallas.ref<8xf32>) {
  // expected-error @+1 {{'pallas.load' op result element type 'f16' does not match the ref element type 'f32'}}
  %v = pallas.load %x[] : !pallas.ref<8xf32> -> tensor<8xf16>
}

// -----

// Tests that a scalar result needs an all-integer indexer.

pallas.kernel @load_scalar_of_block(%x: !pallas.ref<8xf32>) {
  // expected-error @+1 {{'pallas.load' op result is a scalar but the indexer selects a block of shape [4]}}
  %v = pallas.load %x[0 : 4] : !pallas.ref<8xf32> -> f32
}

// -----

// Tests that the loaded block has the indexer's shape.

pallas.kernel @load_shape(%x: !pallas.ref<8x128xf32>) {
  // expected-error @+1 {{'pallas.load' op result has type 'tensor<8x128xf32>' but the indexer selects a block of shape [128]}}
  %v = pallas.load %x[0, 0 : 128] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
}

// -----

// Tests that 'other' needs a 'mask'.

func.func @load_other_without_mask(%x: !pallas.ref<8xf32>, %o: tensor<8xf32>) {
  // expected-error @+1 {{'pallas.load' op 'other' requires a 'mask'}}
  %v = "pallas.load"(%x, %o) <{operandSegmentSizes = array<i32: 1, 0, 0, 1>, static_starts = array<i64>, static_sizes = array<i64>, static_strides = array<i64>}> : (!pallas.ref<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return
}

// -----

// Tests that an eviction policy is one of JAX's three.

func.func @load_bad_eviction_policy(%x: !pallas.ref<8xf32>) {
  // expected-error @+1 {{'pallas.load' op eviction_policy 'evict_soon' is not one of 'evict_first', 'evict_last', 'evict_normal'}}
  %v = pallas.load %x[] {eviction_policy = "evict_soon"} : !pallas.ref<8xf32> -> tensor<8xf32>
  return
}

// -----

// Tests that a load's mask has the result's shape.

func.func @load_mask_shape(%x: !pallas.ref<8xf32>, %m: tensor<4xi1>) {
  // expected-error @+1 {{'pallas.load' op failed to verify that mask is i1 with the result's shape}}
  %v = "pallas.load"(%x, %m) <{operandSegmentSizes = array<i32: 1, 0, 1, 0>, static_starts = array<i64>, static_sizes = array<i64>, static_strides = array<i64>}> : (!pallas.ref<8xf32>, tensor<4xi1>) -> tensor<8xf32>
  return
}

// -----

// Tests that the stored value has the indexer's shape.

func.func @store_shape(%x: !pallas.ref<8x128xf32>, %v: tensor<8x64xf32>) {
  // expected-error @+1 {{'pallas.store' op stored value has type 'tensor<8x64xf32>' but the indexer selects a block of shape [8, 128]}}
  pallas.store %x[], %v : !pallas.ref<8x128xf32>, tensor<8x64xf32>
  return
}

// -----

// Tests that the stored value has the ref's element type.

func.func @store_element_type(%x: !pallas.ref<8xf32>, %v: i32) {
  // expected-error @+1 {{'pallas.store' op stored value element type 'i32' does not match the ref element type 'f32'}}
  pallas.store %x[0], %v : !pallas.ref<8xf32>, i32
  return
}

// -----

// Tests that the swapped value has the indexer's shape.

func.func @swap_shape(%x: !pallas.ref<8xf32>, %v: tensor<4xf32>) {
  // expected-error @+1 {{'pallas.swap' op swapped value has type 'tensor<4xf32>' but the indexer selects a block of shape [8]}}
  %o = pallas.swap %x[], %v : !pallas.ref<8xf32>, tensor<4xf32>
  return
}

// -----

// Tests that swap returns the value's type.

func.func @swap_result_type(%x: !pallas.ref<8xf32>, %v: tensor<8xf32>) {
  // expected-error @+1 {{'pallas.swap' op failed to verify that value and result have the same type}}
  %o = "pallas.swap"(%x, %v) <{operandSegmentSizes = array<i32: 1, 0, 1, 0>, static_starts = array<i64>, static_sizes = array<i64>, static_strides = array<i64>}> : (!pallas.ref<8xf32>, tensor<8xf32>) -> tensor<8xf16>
  return
}

// -----

// Tests that bitwise atomics need integers.

func.func @atomic_xor_float(%x: !pallas.ref<8xf32>, %v: f32) {
  // expected-error @+1 {{'pallas.atomic_rmw' op atomic 'xor' needs an integer element type, got 'f32'}}
  %o = pallas.atomic_rmw xor %x[0], %v : !pallas.ref<8xf32>, f32
  return
}

// -----

// Tests that an atomic update has the indexer's shape.

func.func @atomic_rmw_shape(%x: !pallas.ref<8xi32>, %v: tensor<4xi32>) {
  // expected-error @+1 {{'pallas.atomic_rmw' op value has type 'tensor<4xi32>' but the indexer selects a block of shape [8]}}
  %o = pallas.atomic_rmw add %x[], %v : !pallas.ref<8xi32>, tensor<4xi32>
  return
}

// -----

// Tests that an unknown atomic kind is rejected.

func.func @atomic_unknown_kind(%x: !pallas.ref<8xi32>, %v: i32) {
  // expected-error @+2 {{expected ::mlir::pallas::AtomicKind to be one of: add, max, min, and, or, xor, xchg}}
  // expected-error @+1 {{failed to parse Pallas_AtomicKindAttr parameter 'value' which is to be a `::mlir::pallas::AtomicKind`}}
  %o = pallas.atomic_rmw nand %x[0], %v : !pallas.ref<8xi32>, i32
  return
}

// -----

// Tests that compare-and-swap checks its element type.

func.func @atomic_cas_element_type(%x: !pallas.ref<8xi32>, %c: i64, %v: i64) {
  // expected-error @+1 {{'pallas.atomic_cas' op value element type 'i64' does not match the ref element type 'i32'}}
  %o = pallas.atomic_cas %x[0], %c, %v : !pallas.ref<8xi32>, i64
  return
}

// -----

// Tests that compare-and-swap's cmp has the value's type.

func.func @atomic_cas_cmp_type(%x: !pallas.ref<8xi32>, %c: i64, %v: i32) {
  // expected-error @+1 {{'pallas.atomic_cas' op failed to verify that cmp has the value's type}}
  %o = "pallas.atomic_cas"(%x, %c, %v) <{static_starts = array<i64: 0>, static_sizes = array<i64: -1>, static_strides = array<i64: 1>}> : (!pallas.ref<8xi32>, i64, i32) -> i32
  return
}

//===----------------------------------------------------------------------===//
// Block computations
//===----------------------------------------------------------------------===//

// -----

// Tests that dot operands are 2-D or batched 3-D.

func.func @dot_rank(%a: tensor<8xf32>) {
  // expected-error @+1 {{'pallas.dot' op operands and result must all be 2-D, or 3-D with a leading batch dimension; got 'tensor<8xf32>', 'tensor<8xf32>' -> 'tensor<8xf32>'}}
  %d = pallas.dot %a, %a : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  return
}

// -----

// Tests that dot's contracting dimensions agree (after transposes).

func.func @dot_contracting(%a: tensor<8x16xf32>, %b: tensor<32x8xf32>) {
  // expected-error @+1 {{'pallas.dot' op contracting dimensions differ: 16 vs 32}}
  %d = pallas.dot %a, %b : tensor<8x16xf32>, tensor<32x8xf32> -> tensor<8x8xf32>
  return
}

// -----

// Tests that dot's result is rows x columns of the (transposed) operands.

func.func @dot_result(%a: tensor<8x16xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+1 {{'pallas.dot' op result has type 'tensor<8x16xf32>' but expected 8x8 rows x columns}}
  %d = pallas.dot %a, %b {transpose_rhs} : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  return
}

// -----

// Tests that dot's batch dimensions agree.

func.func @dot_batch(%a: tensor<2x8x16xf32>, %b: tensor<3x16x8xf32>) {
  // expected-error @+1 {{'pallas.dot' op batch dimensions differ}}
  %d = pallas.dot %a, %b : tensor<2x8x16xf32>, tensor<3x16x8xf32> -> tensor<2x8x8xf32>
  return
}

// -----

// Tests that dot's accumulator has the result's type.

func.func @dot_acc(%a: tensor<8x16xbf16>, %b: tensor<16x8xbf16>, %c: tensor<8x8xbf16>) {
  // expected-error @+1 {{'pallas.dot' op accumulator type 'tensor<8x8xbf16>' differs from the result type 'tensor<8x8xf32>'}}
  %d = pallas.dot %a, %b, %c : tensor<8x16xbf16>, tensor<16x8xbf16>, tensor<8x8xbf16> -> tensor<8x8xf32>
  return
}

// -----

// Tests that dot does not mix float and integer types.

func.func @dot_mixed(%a: tensor<8x16xi8>, %b: tensor<16x8xi8>) {
  // expected-error @+1 {{'pallas.dot' op operands and result must be all float or all integer}}
  %d = pallas.dot %a, %b : tensor<8x16xi8>, tensor<16x8xi8> -> tensor<8x8xf32>
  return
}

// -----

// Tests that an unknown dot precision is rejected.

func.func @dot_precision(%a: tensor<8x8xf32>) {
  // expected-error @+2 {{expected ::mlir::pallas::DotPrecision to be one of: default, high, highest}}
  // expected-error @+1 {{failed to parse Pallas_DotPrecisionAttr parameter 'value' which is to be a `::mlir::pallas::DotPrecision`}}
  %d = pallas.dot %a, %a {precision = #pallas.precision<low>} : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  return
}

// -----

// Tests that reduction dimensions are in range.

func.func @reduce_dim_range(%v: tensor<8x128xf32>) {
  // expected-error @+1 {{'pallas.reduce' op reduction dimension 2 is out of range for rank 2}}
  %r = pallas.reduce sum %v dims [2] : tensor<8x128xf32> -> tensor<8x128xf32>
  return
}

// -----

// Tests that reduction dimensions are not repeated.

func.func @reduce_dim_repeated(%v: tensor<8x128xf32>) {
  // expected-error @+1 {{'pallas.reduce' op reduction dimension 1 repeated}}
  %r = pallas.reduce sum %v dims [1, 1] : tensor<8x128xf32> -> tensor<8xf32>
  return
}

// -----

// Tests that argmax reduces exactly one dimension.

func.func @reduce_argmax_dims(%v: tensor<8x128xf32>) {
  // expected-error @+1 {{'pallas.reduce' op argmax/argmin reduce exactly one dimension}}
  %r = pallas.reduce argmax %v dims [0, 1] : tensor<8x128xf32> -> tensor<i32>
  return
}

// -----

// Tests that the reduced dimensions are removed from the result.

func.func @reduce_shape(%v: tensor<8x128xf32>) {
  // expected-error @+1 {{'pallas.reduce' op result shape must be [8] (the input's without the reduced dims), got 'tensor<8x1xf32>'}}
  %r = pallas.reduce max %v dims [1] : tensor<8x128xf32> -> tensor<8x1xf32>
  return
}

// -----

// Tests that argmin returns integer indices.

func.func @reduce_argmin_type(%v: tensor<8x128xf32>) {
  // expected-error @+1 {{'pallas.reduce' op argmax/argmin return integer indices}}
  %r = pallas.reduce argmin %v dims [1] : tensor<8x128xf32> -> tensor<8xf32>
  return
}

// -----

// Tests that sum keeps the element type.

func.func @reduce_sum_type(%v: tensor<8x128xf32>) {
  // expected-error @+1 {{'pallas.reduce' op result element type must match the input}}
  %r = pallas.reduce sum %v dims [1] : tensor<8x128xf32> -> tensor<8xf16>
  return
}

// -----

// Tests that an unknown reduction kind is rejected.

func.func @reduce_unknown_kind(%v: tensor<8x128xf32>) {
  // expected-error @+2 {{expected ::mlir::pallas::ReduceKind to be one of: sum, max, min, argmax, argmin}}
  // expected-error @+1 {{failed to parse Pallas_ReduceKindAttr parameter 'value' which is to be a `::mlir::pallas::ReduceKind`}}
  %r = pallas.reduce prod %v dims [1] : tensor<8x128xf32> -> tensor<8xf32>
  return
}

// -----

// Tests that broadcast_in_dim keeps the element type.

func.func @broadcast_element_type(%v: tensor<8xf32>) {
  // expected-error @+1 {{'pallas.broadcast_in_dim' op element types of operand and result differ}}
  %b = pallas.broadcast_in_dim %v dims [0] : tensor<8xf32> -> tensor<8x4xf16>
  return
}

// -----

// Tests that broadcast_in_dim maps every operand dimension.

func.func @broadcast_dims_count(%v: tensor<8x4xf32>) {
  // expected-error @+1 {{'pallas.broadcast_in_dim' op dims has 1 entries but the operand has rank 2}}
  %b = pallas.broadcast_in_dim %v dims [0] : tensor<8x4xf32> -> tensor<8x4x2xf32>
  return
}

// -----

// Tests that broadcast_in_dim dims are result dimensions.

func.func @broadcast_dims_range(%v: tensor<8xf32>) {
  // expected-error @+1 {{'pallas.broadcast_in_dim' op dims[0] = 2 is out of range for the result rank 2}}
  %b = pallas.broadcast_in_dim %v dims [2] : tensor<8xf32> -> tensor<8x8xf32>
  return
}

// -----

// Tests that broadcast_in_dim dims are strictly increasing.

func.func @broadcast_dims_order(%v: tensor<8x8xf32>) {
  // expected-error @+1 {{'pallas.broadcast_in_dim' op dims must be strictly increasing}}
  %b = pallas.broadcast_in_dim %v dims [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
  return
}

// -----

// Tests that only size-1 dimensions broadcast.

func.func @broadcast_size(%v: tensor<4xf32>) {
  // expected-error @+1 {{'pallas.broadcast_in_dim' op operand dimension 0 (size 4) cannot broadcast to result dimension 1 (size 8)}}
  %b = pallas.broadcast_in_dim %v dims [1] : tensor<4xf32> -> tensor<2x8xf32>
  return
}

// -----

// Tests that iota's dimension is in range.

func.func @iota_dimension() {
  // expected-error @+1 {{'pallas.iota' op dimension 1 is out of range for 'tensor<8xi32>'}}
  %i = pallas.iota 1 : tensor<8xi32>
  return
}

// -----

// Tests that iota yields integers.

func.func @iota_float() {
  // expected-error @+1 {{'pallas.iota' op result #0 must be ranked tensor of signless integer or index values, but got 'tensor<8xf32>'}}
  %i = pallas.iota 0 : tensor<8xf32>
  return
}

// -----

// Tests that reshape keeps the element type.

func.func @reshape_element_type(%v: tensor<8x4xf32>) {
  // expected-error @+1 {{'pallas.reshape' op element types differ}}
  %r = pallas.reshape %v : tensor<8x4xf32> -> tensor<32xi32>
  return
}

// -----

// Tests that reshape keeps the element count.

func.func @reshape_count(%v: tensor<8x4xf32>) {
  // expected-error @+1 {{'pallas.reshape' op cannot reshape 'tensor<8x4xf32>' to 'tensor<16xf32>': element counts differ}}
  %r = pallas.reshape %v : tensor<8x4xf32> -> tensor<16xf32>
  return
}

// -----

// Tests that a transpose permutation has one entry per dimension.

func.func @transpose_size(%v: tensor<8x4xf32>) {
  // expected-error @+1 {{'pallas.transpose' op permutation has 1 entries but the operand has rank 2}}
  %t = pallas.transpose %v [0] : tensor<8x4xf32> -> tensor<8x4xf32>
  return
}

// -----

// Tests that a transpose permutation is a permutation.

func.func @transpose_not_permutation(%v: tensor<8x4xf32>) {
  // expected-error @+1 {{'pallas.transpose' op permutation must be a permutation of [0, rank)}}
  %t = pallas.transpose %v [1, 1] : tensor<8x4xf32> -> tensor<4x4xf32>
  return
}

// -----

// Tests that a transpose result is the permuted shape.

func.func @transpose_result(%v: tensor<8x4xf32>) {
  // expected-error @+1 {{'pallas.transpose' op result must have shape [4, 8], got 'tensor<8x4xf32>'}}
  %t = pallas.transpose %v [1, 0] : tensor<8x4xf32> -> tensor<8x4xf32>
  return
}

// -----

// Tests that select's condition is i1.

func.func @select_cond_type(%c: i32, %a: f32) {
  // expected-error @+1 {{'pallas.select' op condition must be i1 or a tensor of i1, got 'i32'}}
  %s = pallas.select %c, %a, %a : i32, f32
  return
}

// -----

// Tests that a block condition has the result's shape.

func.func @select_cond_shape(%c: tensor<4xi1>, %a: tensor<8xf32>) {
  // expected-error @+1 {{'pallas.select' op condition shape does not match the result 'tensor<8xf32>'}}
  %s = pallas.select %c, %a, %a : tensor<4xi1>, tensor<8xf32>
  return
}

// -----

// Tests that cumsum's dimension is in range.

func.func @cumsum_dim(%v: tensor<8xf32>) {
  // expected-error @+1 {{'pallas.cumsum' op dim 1 is out of range for 'tensor<8xf32>'}}
  %c = pallas.cumsum %v dim 1 : tensor<8xf32>
  return
}

// -----

// Tests that multiple_of takes a positive divisor.

func.func @multiple_of_zero(%i: i32) {
  // expected-error @+1 {{'pallas.multiple_of' op attribute 'divisor' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %m = pallas.multiple_of %i, 0 : i32
  return
}

// -----

// Tests that max_contiguous gives one value per dimension.

func.func @max_contiguous_count(%v: tensor<8x128xi32>) {
  // expected-error @+1 {{'pallas.max_contiguous' op needs one value per dimension (2), got 1}}
  %m = pallas.max_contiguous %v, [128] : tensor<8x128xi32>
  return
}

// -----

// Tests that max_contiguous values are positive.

func.func @max_contiguous_zero(%v: tensor<128xi32>) {
  // expected-error @+1 {{'pallas.max_contiguous' op values must be positive}}
  %m = pallas.max_contiguous %v, [0] : tensor<128xi32>
  return
}

// -----

// Tests that debug_print's placeholders match its values.

func.func @debug_print_count(%i: i32) {
  // expected-error @+1 {{'pallas.debug_print' op format has 2 '{}' placeholders but 1 values are printed}}
  pallas.debug_print "{} and {}" %i : i32
  return
}

//===----------------------------------------------------------------------===//
// Globals and hi types
//===----------------------------------------------------------------------===//

// -----

// Tests that get_global names a ref_global.

func.func @not_a_global() {
  return
}
pallas.kernel @get_missing(%o: !pallas.ref<8xf32>) {
  // expected-error @+1 {{'pallas.get_global' op 'not_a_global' does not name a pallas.ref_global}}
  %g = pallas.get_global @not_a_global : !pallas.ref<8xf32>
}

// -----

// Tests that get_global has the global's type.

pallas.ref_global @counts : !pallas.ref<256xi32>
pallas.kernel @get_wrong_type(%o: !pallas.ref<8xf32>) {
  // expected-error @+1 {{'pallas.get_global' op result type '!pallas.ref<256xi32, smem>' differs from the global's type '!pallas.ref<256xi32>'}}
  %g = pallas.get_global @counts : !pallas.ref<256xi32, smem>
}

// -----

// Tests that a ref_global holds a ref.

// expected-error @+1 {{'pallas.ref_global' op attribute 'type' failed to satisfy constraint: type attribute of pallas ref}}
pallas.ref_global @not_a_ref : tensor<8xf32>

// -----

// Tests that hi_pack's operands are the hi type's parts.

func.func @hi_pack_parts(%v: tensor<64xi8>, %s: tensor<2xf32>) {
  // expected-error @+1 {{'pallas.hi_pack' op operand types must be the parts of the hi type}}
  %q = pallas.hi_pack %v, %s : tensor<64xi8>, tensor<2xf32> -> !pallas.hi<"qarray", tensor<64xi8>, tensor<1xf32>>
  return
}

// -----

// Tests that hi_unpack's results are the hi type's parts.

func.func @hi_unpack_parts(%q: !pallas.hi<"qarray", tensor<64xi8>, tensor<1xf32>>) {
  // expected-error @+1 {{'pallas.hi_unpack' op result types must be the parts of the hi type}}
  %v, %s = "pallas.hi_unpack"(%q) : (!pallas.hi<"qarray", tensor<64xi8>, tensor<1xf32>>) -> (tensor<64xi8>, f32)
  return
}

//===----------------------------------------------------------------------===//
// pallas.call: grid and operands
//===----------------------------------------------------------------------===//

// -----

// Tests that a grid bound is non-negative or -1.

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @grid_negative(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op grid[0] = -2: a grid bound must be non-negative or -1 (dynamic)}}
  %o = pallas.call @k(%x) {grid = array<i64: -2>, in_specs = [#pallas.block_spec<[8]>],
                          out_specs = [#pallas.block_spec<[8]>]} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that each dynamic grid bound has an operand.

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @grid_dynamic_count(%n: index, %x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op grid has 2 dynamic bounds but 1 bound operands are given}}
  %o = pallas.call @k[%n](%x) {grid = array<i64: -1, -1>, in_specs = [#pallas.block_spec<[8]>],
                              out_specs = [#pallas.block_spec<[8]>]} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that a static grid takes no bound operands.

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @grid_static_with_bound(%n: index, %x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op grid has 0 dynamic bounds but 1 bound operands are given}}
  %o = pallas.call @k[%n](%x) {grid = array<i64: 4>, in_specs = [#pallas.block_spec<[8]>],
                              out_specs = [#pallas.block_spec<[8]>]} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that grid_names names every grid axis.

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @grid_names_count(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op grid_names has 1 entries but the grid has rank 2}}
  %o = pallas.call @k(%x) {grid = array<i64: 2, 2>, grid_names = ["i"],
                          in_specs = [#pallas.block_spec<[8]>],
                          out_specs = [#pallas.block_spec<[8]>]} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that num_scalar_prefetch is at most the number of inputs.

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @prefetch_too_many(%x: tensor<8xi32>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op num_scalar_prefetch = 2 is out of range for 1 inputs}}
  %o = pallas.call @k(%x) {grid = array<i64: 1>, num_scalar_prefetch = 2, in_specs = [],
                          out_specs = [#pallas.block_spec<[8]>]} : (tensor<8xi32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that num_scalar_prefetch is non-negative.

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @prefetch_negative(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op num_scalar_prefetch = -1 is out of range for 1 inputs}}
  %o = pallas.call @k(%x) {grid = array<i64: 1>, num_scalar_prefetch = -1,
                          in_specs = [#pallas.block_spec<[8]>],
                          out_specs = [#pallas.block_spec<[8]>]} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that there is one in_spec per non-prefetch input.

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @in_specs_count(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op has 2 in_specs but 1 non-prefetch inputs}}
  %o = pallas.call @k(%x) {grid = array<i64: 1>,
                          in_specs = [#pallas.block_spec<[8]>, #pallas.block_spec<[8]>],
                          out_specs = [#pallas.block_spec<[8]>]} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that there is one out_spec per output.

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @out_specs_count(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op has 0 out_specs but 1 outputs}}
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
                          out_specs = []} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that scalar-prefetch operands are static integer tensors.

pallas.kernel @k(%s: !pallas.ref<4xf32, smem>, %x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @prefetch_float(%s: tensor<4xf32>, %x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op scalar-prefetch input 0 must be a statically shaped integer tensor, got 'tensor<4xf32>'}}
  %o = pallas.call @k(%s, %x) {grid = array<i64: 1>, num_scalar_prefetch = 1,
                              in_specs = [#pallas.block_spec<[8]>],
                              out_specs = [#pallas.block_spec<[8]>]} : (tensor<4xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that blocked operands are statically shaped tensors.

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @operand_dynamic(%x: tensor<?xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op input 0 must be a statically shaped tensor, got 'tensor<?xf32>'}}
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
                          out_specs = [#pallas.block_spec<[8]>]} : (tensor<?xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that outputs are statically shaped tensors.

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @output_scalar(%x: tensor<8xf32>) -> f32 {
  // expected-error @+1 {{'pallas.call' op output 0 must be a statically shaped tensor, got 'f32'}}
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
                          out_specs = [#pallas.block_spec<[8]>]} : (tensor<8xf32>) -> f32
  return %o : f32
}

// -----

// Tests that a block spec has the operand's rank.

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @block_rank(%x: tensor<4x8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op input 0 has rank 2 but its block spec has 1 dimensions}}
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8], (i) -> (i)>],
                          out_specs = [#pallas.block_spec<[8]>]} : (tensor<4x8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that an output's block spec has the output's rank.

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @out_block_rank(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op output 0 has rank 1 but its block spec has 2 dimensions}}
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
                          out_specs = [#pallas.block_spec<[1, 8]>]} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that an index map takes one index per grid axis.

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @index_map_arity(%x: tensor<32xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'pallas.call' op input 0: index map affine_map<(d0, d1) -> (d0)> takes 2 grid indices but the grid has rank 1}}
  %o = pallas.call @k(%x) {grid = array<i64: 4>, in_specs = [#pallas.block_spec<[8], (i, j) -> (i)>],
                          out_specs = [#pallas.block_spec<[8], (i) -> (i)>]} : (tensor<32xf32>) -> tensor<32xf32>
  return %o : tensor<32xf32>
}

// -----

// Tests that scratch entries are refs.

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>, %s: !pallas.ref<8xf32, vmem>) {
}
func.func @scratch_not_ref(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op scratch[0] must be a !pallas.ref}}
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
                          out_specs = [#pallas.block_spec<[8]>],
                          scratch = [tensor<8xf32>]} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

//===----------------------------------------------------------------------===//
// pallas.call: aliases, pinned inputs, vmapped dims, cost
//===----------------------------------------------------------------------===//

// -----

// Tests that input_output_aliases holds pairs.

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @alias_odd(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op input_output_aliases must hold (input, output) pairs}}
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
                          out_specs = [#pallas.block_spec<[8]>],
                          input_output_aliases = array<i64: 0>} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that an aliased input index is in range.

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @alias_input_range(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op input_output_aliases contains the mapping '1:0' with input index 1 outside the range [0, 1)}}
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
                          out_specs = [#pallas.block_spec<[8]>],
                          input_output_aliases = array<i64: 1, 0>} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that an aliased output index is in range.

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @alias_output_range(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op input_output_aliases contains the mapping '0:-1' with output index -1 outside the range [0, 1)}}
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
                          out_specs = [#pallas.block_spec<[8]>],
                          input_output_aliases = array<i64: 0, -1>} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that aliased operands have the same type.

pallas.kernel @k(%x: !pallas.ref<8xf16>, %o: !pallas.ref<8xf32>) {
}
func.func @alias_type(%x: tensor<8xf16>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op input_output_aliases contains the mapping '0:0' referring to input 0 of type tensor<8xf16> and to output 0 of a different type tensor<8xf32>}}
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
                          out_specs = [#pallas.block_spec<[8]>],
                          input_output_aliases = array<i64: 0, 0>} : (tensor<8xf16>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that an output is aliased to at most one input.

pallas.kernel @k(%x: !pallas.ref<8xf32>, %y: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @alias_duplicate_output(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op output 0 is aliased to more than one input}}
  %o = pallas.call @k(%x, %y) {grid = array<i64: 1>,
                              in_specs = [#pallas.block_spec<[8]>, #pallas.block_spec<[8]>],
                              out_specs = [#pallas.block_spec<[8]>],
                              input_output_aliases = array<i64: 0, 0, 1, 0>} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that an input is aliased to at most one output.

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>, %p: !pallas.ref<8xf32>) {
}
func.func @alias_duplicate_input(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  // expected-error @+1 {{'pallas.call' op input 0 is aliased to more than one output}}
  %o:2 = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
                            out_specs = [#pallas.block_spec<[8]>, #pallas.block_spec<[8]>],
                            input_output_aliases = array<i64: 0, 0, 0, 1>} : (tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
  return %o#0, %o#1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// Tests that a pinned input index is in range.

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @pinned_range(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op pinned input 3 is out of range}}
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
                          out_specs = [#pallas.block_spec<[8]>],
                          pinned_inputs = array<i64: 3>} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that a pinned (linear) input must be aliased to an output.

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @pinned_without_alias(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op input pinned buffers without input_output_aliases: input 0}}
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
                          out_specs = [#pallas.block_spec<[8]>],
                          pinned_inputs = array<i64: 0>} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that vmapped_dims are increasing grid axes.

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @vmapped_dims_order(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op vmapped_dims must be increasing grid axes in [0, 2)}}
  %o = pallas.call @k(%x) {grid = array<i64: 2, 2>, in_specs = [#pallas.block_spec<[8]>],
                          out_specs = [#pallas.block_spec<[8]>],
                          vmapped_dims = array<i64: 1, 0>} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that vmapped_dims are grid axes.

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @vmapped_dims_range(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op vmapped_dims must be increasing grid axes in [0, 1)}}
  %o = pallas.call @k(%x) {grid = array<i64: 4>, in_specs = [#pallas.block_spec<[8]>],
                          out_specs = [#pallas.block_spec<[8]>],
                          vmapped_dims = array<i64: 1>} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that cost estimate entries are non-negative.

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @cost_negative(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op cost estimate entries must be non-negative}}
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
                          out_specs = [#pallas.block_spec<[8]>],
                          cost_estimate = #pallas.cost<flops = -1, bytes_accessed = 0, transcendentals = 0>} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

//===----------------------------------------------------------------------===//
// pallas.call against its kernel
//===----------------------------------------------------------------------===//

// -----

// Tests that the kernel symbol exists.

func.func @unknown_kernel(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op 'missing' does not name a pallas.kernel}}
  %o = pallas.call @missing(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
                                out_specs = [#pallas.block_spec<[8]>]} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that the kernel symbol names a pallas.kernel, not a function.

func.func @not_a_kernel() {
  return
}
func.func @call_func(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op 'not_a_kernel' does not name a pallas.kernel}}
  %o = pallas.call @not_a_kernel(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
                                     out_specs = [#pallas.block_spec<[8]>]} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that the kernel takes one ref per prefetch, input, output and
// scratch operand.

// expected-note @+1 {{kernel defined here}}
pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @kernel_arg_count(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op kernel @k takes 2 refs but the call passes 3 (0 scalar-prefetch + 1 inputs + 1 outputs + 1 scratch)}}
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
                          out_specs = [#pallas.block_spec<[8]>],
                          scratch = [!pallas.ref<8xf32, vmem>]} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that a kernel input ref has the block shape (squeezed dims dropped).

// expected-note @+1 {{kernel argument declared here}}
pallas.kernel @k(%x: !pallas.ref<1x128xf32>, %o: !pallas.ref<128xf32>) {
}
func.func @kernel_input_shape(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  // expected-error @+1 {{'pallas.call' op kernel @k argument #0 (input 0) has type '!pallas.ref<1x128xf32>' but the call's spec gives '!pallas.ref<128xf32>'}}
  %o = pallas.call @k(%x) {grid = array<i64: 8>,
                          in_specs = [#pallas.block_spec<[squeezed, 128], (i) -> (i, 0)>],
                          out_specs = [#pallas.block_spec<[squeezed, 128], (i) -> (i, 0)>]} : (tensor<8x128xf32>) -> tensor<8x128xf32>
  return %o : tensor<8x128xf32>
}

// -----

// Tests that a kernel input ref has the operand's dtype.

// expected-note @+1 {{kernel argument declared here}}
pallas.kernel @k(%x: !pallas.ref<8xbf16>, %o: !pallas.ref<8xf32>) {
}
func.func @kernel_input_dtype(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op kernel @k argument #0 (input 0) has type '!pallas.ref<8xbf16>' but the call's spec gives '!pallas.ref<8xf32>'}}
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
                          out_specs = [#pallas.block_spec<[8]>]} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that a kernel ref has its block spec's memory space.

// expected-note @+1 {{kernel argument declared here}}
pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @kernel_memory_space(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op kernel @k argument #0 (input 0) has type '!pallas.ref<8xf32>' but the call's spec gives '!pallas.ref<8xf32, vmem>'}}
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8], vmem>],
                          out_specs = [#pallas.block_spec<[8]>]} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that an 'any' operand is seen whole by the kernel.

// expected-note @+1 {{kernel argument declared here}}
pallas.kernel @k(%x: !pallas.ref<8xf32, any>, %o: !pallas.ref<8xf32>) {
}
func.func @kernel_any_shape(%x: tensor<32xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op kernel @k argument #0 (input 0) has type '!pallas.ref<8xf32, any>' but the call's spec gives '!pallas.ref<32xf32, any>'}}
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<any>],
                          out_specs = [#pallas.block_spec<[8]>]} : (tensor<32xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that a kernel output ref has the output's block type.

// expected-note @+1 {{kernel argument declared here}}
pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf16>) {
}
func.func @kernel_output_dtype(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op kernel @k argument #1 (output 0) has type '!pallas.ref<8xf16>' but the call's spec gives '!pallas.ref<8xf32>'}}
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
                          out_specs = [#pallas.block_spec<[8]>]} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that scalar-prefetch refs are SMEM refs of the operand's shape.

// expected-note @+1 {{kernel argument declared here}}
pallas.kernel @k(%s: !pallas.ref<4xi32>, %x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @kernel_prefetch_space(%s: tensor<4xi32>, %x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op kernel @k argument #0 (scalar prefetch 0) has type '!pallas.ref<4xi32>' but the call's spec gives '!pallas.ref<4xi32, smem>'}}
  %o = pallas.call @k(%s, %x) {grid = array<i64: 1>, num_scalar_prefetch = 1,
                              in_specs = [#pallas.block_spec<[8]>],
                              out_specs = [#pallas.block_spec<[8]>]} : (tensor<4xi32>, tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that scratch refs match the call's scratch types.

// expected-note @+1 {{kernel argument declared here}}
pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>, %s: !pallas.ref<8xf32, smem>) {
}
func.func @kernel_scratch(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op kernel @k argument #2 (scratch 0) has type '!pallas.ref<8xf32, smem>' but the call's spec gives '!pallas.ref<8xf32, vmem>'}}
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
                          out_specs = [#pallas.block_spec<[8]>],
                          scratch = [!pallas.ref<8xf32, vmem>]} : (tensor<8xf32>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that a hi input is received as a hi aggregate.

pallas.kernel @k(%q: !pallas.ref<8xi8>, %o: !pallas.ref<8xf32>) {
}
func.func @kernel_hi_input(%q: !pallas.hi<"qarray", tensor<8xi8>, tensor<1xf32>>) -> tensor<8xf32> {
  // expected-error @+1 {{'pallas.call' op kernel argument #0 must be a !pallas.hi aggregate for hi input 0}}
  %o = pallas.call @k(%q) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
                          out_specs = [#pallas.block_spec<[8]>]} : (!pallas.hi<"qarray", tensor<8xi8>, tensor<1xf32>>) -> tensor<8xf32>
  return %o : tensor<8xf32>
}

// -----

// Tests that a hi output is written through a hi aggregate.

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xi8>) {
}
func.func @kernel_hi_output(%x: tensor<8xf32>) -> !pallas.hi<"qarray", tensor<8xi8>, tensor<1xf32>> {
  // expected-error @+1 {{'pallas.call' op kernel argument #1 must be a !pallas.hi aggregate for hi output 0}}
  %o = pallas.call @k(%x) {grid = array<i64: 1>, in_specs = [#pallas.block_spec<[8]>],
                          out_specs = [#pallas.block_spec<[8]>]} : (tensor<8xf32>) -> !pallas.hi<"qarray", tensor<8xi8>, tensor<1xf32>>
  return %o : !pallas.hi<"qarray", tensor<8xi8>, tensor<1xf32>>
}

// -----

// Tests that program_id's axis exists in the call's grid.

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  // expected-error @+1 {{'pallas.program_id' op axis 1 is out of range: the grid of this call has 1 axes}}
  %i = pallas.program_id 1 : i32
}
func.func @program_id_axis(%x: tensor<32xf32>) -> tensor<32xf32> {
  // expected-note @+1 {{called from here}}
  %o = pallas.call @k(%x) {grid = array<i64: 4>, in_specs = [#pallas.block_spec<[8], (i) -> (i)>],
                          out_specs = [#pallas.block_spec<[8], (i) -> (i)>]} : (tensor<32xf32>) -> tensor<32xf32>
  return %o : tensor<32xf32>
}

// -----

// Tests that vmapped grid axes are invisible to num_programs.

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
  // expected-error @+1 {{'pallas.num_programs' op axis 1 is out of range: the grid of this call has 1 axes}}
  %n = pallas.num_programs 1 : i32
}
func.func @num_programs_vmapped(%x: tensor<2x32xf32>) -> tensor<2x32xf32> {
  // expected-note @+1 {{called from here}}
  %o = pallas.call @k(%x) {grid = array<i64: 2, 4>, vmapped_dims = array<i64: 0>,
                          in_specs = [#pallas.block_spec<[squeezed, 8], (b, i) -> (b, i)>],
                          out_specs = [#pallas.block_spec<[squeezed, 8], (b, i) -> (b, i)>]} : (tensor<2x32xf32>) -> tensor<2x32xf32>
  return %o : tensor<2x32xf32>
}

//===----------------------------------------------------------------------===//
// pallas.call: @func index maps
//===----------------------------------------------------------------------===//

// -----

// Tests that an index function names a func.func.

pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @index_func_missing(%x: tensor<32xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'pallas.call' op input 0: index map @nowhere does not name a func.func}}
  %o = pallas.call @k(%x) {grid = array<i64: 4>, in_specs = [#pallas.block_spec<[8], @nowhere>],
                          out_specs = [#pallas.block_spec<[8], (i) -> (i)>]} : (tensor<32xf32>) -> tensor<32xf32>
  return %o : tensor<32xf32>
}

// -----

// Tests that an index function takes the grid indices and prefetch refs.

func.func @map(%i: i32) -> i32 {
  return %i : i32
}
pallas.kernel @k(%s: !pallas.ref<4xi32, smem>, %x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @index_func_arity(%s: tensor<4xi32>, %x: tensor<32xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'pallas.call' op input 1: index map @map takes 1 arguments but 2 are passed (1 grid indices + 1 scalar-prefetch refs)}}
  %o = pallas.call @k(%s, %x) {grid = array<i64: 4>, num_scalar_prefetch = 1,
                              in_specs = [#pallas.block_spec<[8], @map>],
                              out_specs = [#pallas.block_spec<[8], (i) -> (i)>]} : (tensor<4xi32>, tensor<32xf32>) -> tensor<32xf32>
  return %o : tensor<32xf32>
}

// -----

// Tests that an index function's grid indices are i32 or index.

func.func @map(%i: f32) -> i32 {
  %c = arith.constant 0 : i32
  return %c : i32
}
pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @index_func_grid_type(%x: tensor<32xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'pallas.call' op output 0: index map @map argument 0 must be i32 or index}}
  %o = pallas.call @k(%x) {grid = array<i64: 4>, in_specs = [#pallas.block_spec<[8], (i) -> (i)>],
                          out_specs = [#pallas.block_spec<[8], @map>]} : (tensor<32xf32>) -> tensor<32xf32>
  return %o : tensor<32xf32>
}

// -----

// Tests that an index function receives the kernel's scalar-prefetch refs.

func.func @map(%i: i32, %s: !pallas.ref<4xi32>) -> i32 {
  return %i : i32
}
pallas.kernel @k(%s: !pallas.ref<4xi32, smem>, %x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @index_func_prefetch_type(%s: tensor<4xi32>, %x: tensor<32xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'pallas.call' op input 1: index map @map argument 1 must be '!pallas.ref<4xi32, smem>' (scalar-prefetch ref 0)}}
  %o = pallas.call @k(%s, %x) {grid = array<i64: 4>, num_scalar_prefetch = 1,
                              in_specs = [#pallas.block_spec<[8], @map>],
                              out_specs = [#pallas.block_spec<[8], (i) -> (i)>]} : (tensor<4xi32>, tensor<32xf32>) -> tensor<32xf32>
  return %o : tensor<32xf32>
}

// -----

// Tests that an index function returns one index per array dimension.

func.func @map(%i: i32) -> (i32, i32) {
  return %i, %i : i32, i32
}
pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @index_func_results(%x: tensor<32xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'pallas.call' op input 0: index map @map returns 2 indices but the array has rank 1}}
  %o = pallas.call @k(%x) {grid = array<i64: 4>, in_specs = [#pallas.block_spec<[8], @map>],
                          out_specs = [#pallas.block_spec<[8], (i) -> (i)>]} : (tensor<32xf32>) -> tensor<32xf32>
  return %o : tensor<32xf32>
}

// -----

// Tests that an index function returns i32 or index values.

func.func @map(%i: index) -> i64 {
  %c = arith.index_cast %i : index to i64
  return %c : i64
}
pallas.kernel @k(%x: !pallas.ref<8xf32>, %o: !pallas.ref<8xf32>) {
}
func.func @index_func_result_type(%x: tensor<32xf32>) -> tensor<32xf32> {
  // expected-error @+1 {{'pallas.call' op input 0: index map @map must return i32 or index values}}
  %o = pallas.call @k(%x) {grid = array<i64: 4>, in_specs = [#pallas.block_spec<[8], @map>],
                          out_specs = [#pallas.block_spec<[8], (i) -> (i)>]} : (tensor<32xf32>) -> tensor<32xf32>
  return %o : tensor<32xf32>
}

// -----

//===----------------------------------------------------------------------===//
// DMA
//===----------------------------------------------------------------------===//

// Tests that a DMA's slices must have the same shape.

pallas.kernel @dma_shape(%x: !pallas.ref<32x128xf32, any>, %buf: !pallas.ref<8x128xf32, vmem>,
                         %sem: !pallas.ref<2xi32, semaphore>) {
  // expected-error @+1 {{'pallas.dma_start' op src slice has shape [16, 128] but dst slice has shape [8, 128]}}
  pallas.dma_start %x[0 : 16, 0 : 128], %buf[], %sem[0]
      : !pallas.ref<32x128xf32, any>, !pallas.ref<8x128xf32, vmem>, !pallas.ref<2xi32, semaphore>
}

// -----

// Tests that a DMA's slices must have the same element type.

pallas.kernel @dma_dtype(%x: !pallas.ref<32x128xbf16, any>, %buf: !pallas.ref<8x128xf32, vmem>,
                         %sem: !pallas.ref<2xi32, semaphore>) {
  // expected-error @+1 {{'pallas.dma_wait' op src element type 'bf16' does not match dst element type 'f32'}}
  pallas.dma_wait %x[0 : 8, 0 : 128], %buf[], %sem[0]
      : !pallas.ref<32x128xbf16, any>, !pallas.ref<8x128xf32, vmem>, !pallas.ref<2xi32, semaphore>
}

// -----

// Tests that the semaphore must be a ref in the semaphore memory space.

pallas.kernel @dma_sem_space(%x: !pallas.ref<32x128xf32, any>, %buf: !pallas.ref<8x128xf32, vmem>,
                             %sem: !pallas.ref<2xi32, smem>) {
  // expected-error @+1 {{'pallas.dma_start' op sem must be a ref in the semaphore memory space, got '!pallas.ref<2xi32, smem>'}}
  pallas.dma_start %x[0 : 8, 0 : 128], %buf[], %sem[0]
      : !pallas.ref<32x128xf32, any>, !pallas.ref<8x128xf32, vmem>, !pallas.ref<2xi32, smem>
}

// -----

// Tests that the semaphore indexer picks one semaphore.

pallas.kernel @dma_sem_slice(%x: !pallas.ref<32x128xf32, any>, %buf: !pallas.ref<8x128xf32, vmem>,
                             %sem: !pallas.ref<2xi32, semaphore>) {
  // expected-error @+1 {{'pallas.dma_start' op sem indexer must pick one semaphore with an integer index per dimension of '!pallas.ref<2xi32, semaphore>', but it selects shape [2]}}
  pallas.dma_start %x[0 : 8, 0 : 128], %buf[], %sem[]
      : !pallas.ref<32x128xf32, any>, !pallas.ref<8x128xf32, vmem>, !pallas.ref<2xi32, semaphore>
}

// -----

// Tests that a semaphore ref is not DMA data.

pallas.kernel @dma_sem_data(%s: !pallas.ref<2xi32, semaphore>, %buf: !pallas.ref<2xi32, vmem>,
                            %sem: !pallas.ref<2xi32, semaphore>) {
  // expected-error @+1 {{'pallas.dma_start' op src '!pallas.ref<2xi32, semaphore>' is a semaphore ref; DMAs copy data refs}}
  pallas.dma_start %s[], %buf[], %sem[0]
      : !pallas.ref<2xi32, semaphore>, !pallas.ref<2xi32, vmem>, !pallas.ref<2xi32, semaphore>
}

// -----

// Tests that DMA slices have no stride.

pallas.kernel @dma_stride(%x: !pallas.ref<32x128xf32, any>, %buf: !pallas.ref<8x128xf32, vmem>,
                          %sem: !pallas.ref<2xi32, semaphore>) {
  // expected-error @+1 {{'pallas.dma_start' op src slice has a stride; DMA slices are contiguous (pl.ds without stride)}}
  pallas.dma_start %x[0 : 8 : 2, 0 : 128], %buf[], %sem[0]
      : !pallas.ref<32x128xf32, any>, !pallas.ref<8x128xf32, vmem>, !pallas.ref<2xi32, semaphore>
}

// -----

// Tests that each indexer is checked against its own ref, naming it.

pallas.kernel @dma_oob(%x: !pallas.ref<32x128xf32, any>, %buf: !pallas.ref<8x128xf32, vmem>,
                       %sem: !pallas.ref<2xi32, semaphore>) {
  // expected-error @+1 {{'pallas.dma_start' op sem indexer reads past the end of dimension 0 (size 2): start 2, size 1, stride 1}}
  pallas.dma_start %x[0 : 8, 0 : 128], %buf[], %sem[2]
      : !pallas.ref<32x128xf32, any>, !pallas.ref<8x128xf32, vmem>, !pallas.ref<2xi32, semaphore>
}

// -----

// Tests that pallas.gather takes one index tensor per ref dimension.

pallas.kernel @gather_count(%t: !pallas.ref<64x128xf32>) {
  %r = pallas.iota 0 : tensor<8xi32>
  // expected-error @+1 {{'pallas.gather' op needs one index tensor per dimension of '!pallas.ref<64x128xf32>' (2), got 1}}
  %v = pallas.gather %t[%r] : !pallas.ref<64x128xf32>, tensor<8xi32> -> tensor<8xf32>
}

// -----

// Tests that pallas.gather's index tensors have the result's shape.

pallas.kernel @gather_shape(%t: !pallas.ref<64xf32>) {
  %r = pallas.iota 0 : tensor<8xi32>
  // expected-error @+1 {{'pallas.gather' op index tensor #0 has type 'tensor<8xi32>' but the result has shape [4]}}
  %v = pallas.gather %t[%r] : !pallas.ref<64xf32>, tensor<8xi32> -> tensor<4xf32>
}

// -----

// Tests that pallas.gather reads the ref's element type.

pallas.kernel @gather_type(%t: !pallas.ref<64xf32>) {
  %r = pallas.iota 0 : tensor<8xi32>
  // expected-error @+1 {{'pallas.gather' op result element type 'f16' does not match the ref element type 'f32'}}
  %v = pallas.gather %t[%r] : !pallas.ref<64xf32>, tensor<8xi32> -> tensor<8xf16>
}

// -----

// Tests that pallas.gather's indices are i32 tensors.

pallas.kernel @gather_i64(%t: !pallas.ref<64xf32>) {
  %r = pallas.iota 0 : tensor<8xi64>
  // expected-error @+1 {{operand #1 must be variadic of ranked tensor of 32-bit signless integer values}}
  %v = pallas.gather %t[%r] : !pallas.ref<64xf32>, tensor<8xi64> -> tensor<8xf32>
}

// -----

// Tests that pallas.platform_index rejects a platform name JAX does not use.

func.func @platform_index_unknown() -> i32 {
  // expected-error @+1 {{unknown platform 'gpu' in group 1, expected one of cpu, cuda, rocm, tpu, mosaic}}
  %i = pallas.platform_index [["cuda"], ["gpu"]] default : i32
  return %i : i32
}

// -----

// Tests that pallas.platform_index rejects a platform named in two groups.

func.func @platform_index_twice() -> i32 {
  // expected-error @+1 {{platform 'cuda' is named in two groups}}
  %i = pallas.platform_index [["cuda"], ["rocm", "cuda"]] : i32
  return %i : i32
}

// -----

// Tests that pallas.platform_index rejects an empty group.

func.func @platform_index_empty_group() -> i32 {
  // expected-error @+1 {{group 0 must be a non-empty array of platform names}}
  %i = pallas.platform_index [[]] default : i32
  return %i : i32
}

// -----

// Tests that pallas.platform_index needs a group or a default.

func.func @platform_index_nothing() -> i32 {
  // expected-error @+1 {{needs at least one group of platform names or a default}}
  %i = pallas.platform_index [] : i32
  return %i : i32
}

// -----

// Tests that a remote copy's send semaphore is one semaphore of a semaphore
// ref.

pallas.kernel @remote_send_sem(%o: !pallas.ref<2x8x128xf32, vmem>, %sems: !pallas.ref<2xi32, semaphore>,
                               %d: !pallas.ref<i32, smem>) {
  %c0 = arith.constant 0 : i32
  // expected-error @+1 {{'pallas.remote_dma_start' op send_sem indexer must pick one semaphore with an integer index per dimension of '!pallas.ref<2xi32, semaphore>', but it selects shape [2]}}
  pallas.remote_dma_start %o[0, 0 : 8, 0 : 128], %o[1, 0 : 8, 0 : 128], %sems[0], %sems[], %c0
      : !pallas.ref<2x8x128xf32, vmem>, !pallas.ref<2x8x128xf32, vmem>,
        !pallas.ref<2xi32, semaphore>, !pallas.ref<2xi32, semaphore>
}

// -----

// Tests that a remote copy's send semaphore is in semaphore memory.

pallas.kernel @remote_send_space(%o: !pallas.ref<2x8x128xf32, vmem>, %sems: !pallas.ref<2xi32, semaphore>,
                                 %s: !pallas.ref<2xi32, smem>) {
  %c0 = arith.constant 0 : i32
  // expected-error @+1 {{'pallas.remote_dma_start' op send_sem must be a ref in the semaphore memory space, got '!pallas.ref<2xi32, smem>'}}
  pallas.remote_dma_start %o[0, 0 : 8, 0 : 128], %o[1, 0 : 8, 0 : 128], %sems[0], %s[1], %c0
      : !pallas.ref<2x8x128xf32, vmem>, !pallas.ref<2x8x128xf32, vmem>,
        !pallas.ref<2xi32, semaphore>, !pallas.ref<2xi32, smem>
}

// -----

// Tests that a remote wait checks its slices as dma_wait does.

pallas.kernel @remote_wait_shape(%o: !pallas.ref<2x8x128xf32, vmem>, %sems: !pallas.ref<2xi32, semaphore>) {
  %c0 = arith.constant 0 : i32
  // expected-error @+1 {{'pallas.remote_dma_wait' op src slice has shape [8, 128] but dst slice has shape [4, 128]}}
  pallas.remote_dma_wait send %o[0, 0 : 8, 0 : 128], %o[1, 0 : 4, 0 : 128], %sems[0], %c0
      : !pallas.ref<2x8x128xf32, vmem>, !pallas.ref<2x8x128xf32, vmem>, !pallas.ref<2xi32, semaphore>
}

// -----

// Tests that a remote signal needs a semaphore ref.

pallas.kernel @remote_signal_space(%s: !pallas.ref<2xi32, smem>) {
  %c1 = arith.constant 1 : i32
  // expected-error @+1 {{'pallas.remote_semaphore_signal' op needs a ref in the semaphore memory space (pltpu.SemaphoreType.REGULAR scratch), got '!pallas.ref<2xi32, smem>'}}
  pallas.remote_semaphore_signal %s[0], %c1, %c1 : !pallas.ref<2xi32, smem>
}

// -----

// Tests that the barrier semaphore is one i32 semaphore.

pallas.kernel @barrier_type() {
  // expected-error @+1 {{'pallas.barrier_semaphore' op result must be !pallas.ref<i32, semaphore> (one semaphore), got '!pallas.ref<2xi32, semaphore>'}}
  %b = pallas.barrier_semaphore : !pallas.ref<2xi32, semaphore>
}
