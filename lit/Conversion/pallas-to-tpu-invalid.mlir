// RUN: pallasc-opt %s -split-input-file -pallas-to-tpu -verify-diagnostics

// The TPU block-shape rules of Pallas' Mosaic lowering
// (_check_block_mappings), with the operand named.

pallas.kernel @k(%x: !pallas.ref<100x128xf32>, %o: !pallas.ref<100x128xf32>) {
  %v = pallas.load %x[] : !pallas.ref<100x128xf32> -> tensor<100x128xf32>
  pallas.store %o[], %v : !pallas.ref<100x128xf32>, tensor<100x128xf32>
}
func.func @main(%x: tensor<1000x128xf32>) -> tensor<1000x128xf32> {
  // expected-error @+1 {{in_specs[0]: block shape [100, 128] for f32 array [1000, 128]: the last two dims must be divisible by 8 and 128, or equal the array's}}
  %0 = pallas.call @k(%x) {grid = array<i64: 10>,
      in_specs = [#pallas.block_spec<[100, 128], (d0) -> (d0, 0)>],
      out_specs = [#pallas.block_spec<[100, 128], (d0) -> (d0, 0)>]}
      : (tensor<1000x128xf32>) -> tensor<1000x128xf32>
  return %0 : tensor<1000x128xf32>
}

// -----

pallas.kernel @k(%x: !pallas.ref<1024xf32>, %o: !pallas.ref<1024xf32>) {
  %v = pallas.load %x[] : !pallas.ref<1024xf32> -> tensor<1024xf32>
  pallas.store %o[], %v : !pallas.ref<1024xf32>, tensor<1024xf32>
}
func.func @main(%x: tensor<4096x1000xf32>) -> tensor<4096x1000xf32> {
  // expected-error @+1 {{in_specs[0]: block shape [null, 1024] for f32 array [4096, 1000]: the last two dims must be divisible by 8 and 128, or equal the array's}}
  %0 = pallas.call @k(%x) {grid = array<i64: 4096>,
      in_specs = [#pallas.block_spec<[squeezed, 1024], (d0) -> (d0, 0)>],
      out_specs = [#pallas.block_spec<[squeezed, 1024], (d0) -> (d0, 0)>]}
      : (tensor<4096x1000xf32>) -> tensor<4096x1000xf32>
  return %0 : tensor<4096x1000xf32>
}

// -----

pallas.kernel @k(%x: !pallas.ref<8x128xf32>, %w: !pallas.ref<96xbf16>, %o: !pallas.ref<8x128xf32>) {
  %v = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  pallas.store %o[], %v : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @main(%x: tensor<64x128xf32>, %w: tensor<960xbf16>) -> tensor<64x128xf32> {
  // expected-error @+1 {{in_specs[1]: block shape [96] for bf16 array [960]: a rank-1 block must equal the array's size, be a multiple of 1024, or be a power of 2 of at least 256 (128 * 32 / 16)}}
  %0 = pallas.call @k(%x, %w) {grid = array<i64: 8>,
      in_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>, #pallas.block_spec<[96], (d0) -> (d0)>],
      out_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>]}
      : (tensor<64x128xf32>, tensor<960xbf16>) -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}

// -----

pallas.kernel @k(%x: !pallas.ref<16x128xf32>, %o: !pallas.ref<16x128xf32>) {
  %v = pallas.load %x[] : !pallas.ref<16x128xf32> -> tensor<16x128xf32>
  pallas.store %o[], %v : !pallas.ref<16x128xf32>, tensor<16x128xf32>
}
func.func @main(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  // expected-error @+1 {{out_specs[0]: block shape [element(16), 128] for f32 array [64, 128]: when one block dim is an element dim, all must be element or squeezed dims on TPU}}
  %0 = pallas.call @k(%x) {grid = array<i64: 4>,
      in_specs = [#pallas.block_spec<[16, 128], (d0) -> (d0, 0)>],
      out_specs = [#pallas.block_spec<[element(16), 128], (d0) -> (d0 * 16, 0)>]}
      : (tensor<64x128xf32>) -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}

// -----

pallas.kernel @k(%x: !pallas.ref<8x128xf32, gmem>, %o: !pallas.ref<8x128xf32>) {
  %v = pallas.load %x[] : !pallas.ref<8x128xf32, gmem> -> tensor<8x128xf32>
  pallas.store %o[], %v : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @main(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  // expected-error @+1 {{in_specs[0]: memory space gmem is GPU-only; TPU kernels use vmem, smem, any, hbm or semaphore}}
  %0 = pallas.call @k(%x) {grid = array<i64: 8>,
      in_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0), gmem>],
      out_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>]}
      : (tensor<64x128xf32>) -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}

// -----

pallas.kernel @k(%x: !pallas.ref<8x128xf32>, %o: !pallas.ref<8x128xf32>) {
  %v = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  pallas.store %o[], %v : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @main(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  // expected-error @+1 {{'pallas.call' op compiler_params.tpu.dimension_semantics has 2 entries but the kernel sees 1 grid axes (grid rank 1, 0 vmapped); give one per kernel-visible axis}}
  %0 = pallas.call @k(%x) {grid = array<i64: 8>,
      in_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>],
      out_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>],
      compiler_params = #pallas.compiler_params<tpu = <dimension_semantics = [parallel, parallel]>>}
      : (tensor<64x128xf32>) -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}

// -----

// Ops without a Mosaic lowering are errors naming the op.

pallas.kernel @k(%x: !pallas.ref<8x128xi32>, %o: !pallas.ref<8x128xi32>) {
  %v = pallas.load %x[] : !pallas.ref<8x128xi32> -> tensor<8x128xi32>
  // expected-error @+1 {{'pallas.atomic_rmw' has no Mosaic lowering: TPU kernels have no atomics}}
  %old = pallas.atomic_rmw add %o[], %v : !pallas.ref<8x128xi32>, tensor<8x128xi32>
}
func.func @main(%x: tensor<64x128xi32>) -> tensor<64x128xi32> {
  %0 = pallas.call @k(%x) {grid = array<i64: 8>,
      in_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>],
      out_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>]}
      : (tensor<64x128xi32>) -> tensor<64x128xi32>
  return %0 : tensor<64x128xi32>
}

// -----

pallas.kernel @k(%x: !pallas.ref<8x128xf32>, %o: !pallas.ref<8x128xf32>) {
  %v = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  // expected-error @+1 {{'pallas.cumsum' has no Mosaic lowering in Pallas' TPU backend}}
  %c = pallas.cumsum %v dim 1 : tensor<8x128xf32>
  pallas.store %o[], %c : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @main(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %0 = pallas.call @k(%x) {grid = array<i64: 8>,
      in_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>],
      out_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>]}
      : (tensor<64x128xf32>) -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}

// -----

pallas.kernel @k(%x: !pallas.ref<16x128xbf16>, %o: !pallas.ref<16x128xbf16>) {
  %v = pallas.load %x[] : !pallas.ref<16x128xbf16> -> tensor<16x128xbf16>
  %m = arith.constant dense<true> : tensor<16x128xi1>
  // expected-error @+1 {{masked store of 'bf16' to out_specs[0]; Mosaic supports masked stores of 32-bit data only}}
  pallas.store %o[0 : 16, 0 : 128], %v mask %m : !pallas.ref<16x128xbf16>, tensor<16x128xbf16>
}
func.func @main(%x: tensor<64x128xbf16>) -> tensor<64x128xbf16> {
  %0 = pallas.call @k(%x) {grid = array<i64: 4>,
      in_specs = [#pallas.block_spec<[16, 128], (d0) -> (d0, 0)>],
      out_specs = [#pallas.block_spec<[16, 128], (d0) -> (d0, 0)>]}
      : (tensor<64x128xbf16>) -> tensor<64x128xbf16>
  return %0 : tensor<64x128xbf16>
}

// -----

pallas.kernel @k(%h: !pallas.ref<64x128xf32, any>, %o: !pallas.ref<8x128xf32>) {
  // expected-error @+1 {{'pallas.load' reads in_specs[0] in memory space any; Mosaic allows loads only from VMEM and SMEM refs (an ANY/HBM ref is only reachable by DMA)}}
  %v = pallas.load %h[0 : 8, 0 : 128] : !pallas.ref<64x128xf32, any> -> tensor<8x128xf32>
  pallas.store %o[], %v : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @main(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %0 = pallas.call @k(%x) {grid = array<i64: 8>,
      in_specs = [#pallas.block_spec<any>],
      out_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>]}
      : (tensor<64x128xf32>) -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}

// -----

pallas.kernel @k(%x: !pallas.ref<128x128xf32>, %o: !pallas.ref<128x128xf32>) {
  %v = pallas.load %x[] : !pallas.ref<128x128xf32> -> tensor<128x128xf32>
  // expected-error @+1 {{'pallas.dot' with precision high has no Mosaic lowering (use default or highest)}}
  %d = pallas.dot %v, %v {precision = #pallas.precision<high>} : tensor<128x128xf32>, tensor<128x128xf32> -> tensor<128x128xf32>
  pallas.store %o[], %d : !pallas.ref<128x128xf32>, tensor<128x128xf32>
}
func.func @main(%x: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %0 = pallas.call @k(%x) {grid = array<i64: 1>,
      in_specs = [#pallas.block_spec<[128, 128], (d0) -> (0, 0)>],
      out_specs = [#pallas.block_spec<[128, 128], (d0) -> (0, 0)>]}
      : (tensor<128x128xf32>) -> tensor<128x128xf32>
  return %0 : tensor<128x128xf32>
}

// -----

pallas.kernel @k(%x: !pallas.ref<128x128xf16>, %o: !pallas.ref<128x128xf16>) {
  %v = pallas.load %x[] : !pallas.ref<128x128xf16> -> tensor<128x128xf16>
  // expected-error @+1 {{'pallas.dot' with a 'f16' result has no Mosaic lowering (tpu.matmul accumulates in f32, bf16 or integers)}}
  %d = pallas.dot %v, %v : tensor<128x128xf16>, tensor<128x128xf16> -> tensor<128x128xf16>
  pallas.store %o[], %d : !pallas.ref<128x128xf16>, tensor<128x128xf16>
}
func.func @main(%x: tensor<128x128xf16>) -> tensor<128x128xf16> {
  %0 = pallas.call @k(%x) {grid = array<i64: 1>,
      in_specs = [#pallas.block_spec<[128, 128], (d0) -> (0, 0)>],
      out_specs = [#pallas.block_spec<[128, 128], (d0) -> (0, 0)>]}
      : (tensor<128x128xf16>) -> tensor<128x128xf16>
  return %0 : tensor<128x128xf16>
}

// -----

pallas.kernel @k(%x: !pallas.ref<8x128xf32>, %o: !pallas.ref<8x128xf32>) {
  %c = arith.constant 1.0 : f32
  // expected-error @+1 {{'pallas.store' stores a scalar to out_specs[0] in VMEM; Mosaic cannot store scalars to VMEM (store a block of shape [1, ...] instead)}}
  pallas.store %o[0, 0], %c : !pallas.ref<8x128xf32>, f32
}
func.func @main(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %0 = pallas.call @k(%x) {grid = array<i64: 8>,
      in_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>],
      out_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>]}
      : (tensor<64x128xf32>) -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}

// -----

pallas.kernel @k(%idx: !pallas.ref<16xi32, smem>, %x: !pallas.ref<8x128xi32>, %o: !pallas.ref<8x128xi32>) {
  // expected-error @+1 {{'pallas.load' reads a block of inputs[0] (scalar prefetch) in SMEM; Mosaic can only load scalars from SMEM}}
  %v = pallas.load %idx[0 : 8] : !pallas.ref<16xi32, smem> -> tensor<8xi32>
}
func.func @main(%idx: tensor<16xi32>, %x: tensor<64x128xi32>) -> tensor<64x128xi32> {
  %0 = pallas.call @k(%idx, %x) {grid = array<i64: 8>, num_scalar_prefetch = 1 : i64,
      in_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>],
      out_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>]}
      : (tensor<16xi32>, tensor<64x128xi32>) -> tensor<64x128xi32>
  return %0 : tensor<64x128xi32>
}

// -----

pallas.kernel @k(%x: !pallas.ref<8x128xf32>, %o: !pallas.ref<8x128xf32>) {
  %v = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  // expected-error @+1 {{'pallas.debug_print' of a block has no lowering in pallasc's TPU path (print scalars)}}
  pallas.debug_print "v = {}" %v : tensor<8x128xf32>
}
func.func @main(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %0 = pallas.call @k(%x) {grid = array<i64: 8>,
      in_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>],
      out_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>]}
      : (tensor<64x128xf32>) -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}

// -----

pallas.kernel @k(%x: !pallas.ref<8x128xi16>, %o: !pallas.ref<8x128xi16>) {
  %v = pallas.load %x[] : !pallas.ref<8x128xi16> -> tensor<8x128xi16>
  // expected-error @+1 {{'pallas.reduce sum' over 'i16' has no Mosaic lowering (floats and i32 only)}}
  %s = pallas.reduce sum %v dims [1] : tensor<8x128xi16> -> tensor<8xi16>
}
func.func @main(%x: tensor<64x128xi16>) -> tensor<64x128xi16> {
  %0 = pallas.call @k(%x) {grid = array<i64: 8>,
      in_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>],
      out_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>]}
      : (tensor<64x128xi16>) -> tensor<64x128xi16>
  return %0 : tensor<64x128xi16>
}

// -----

// Pallas' TPU lowering has no DMAs of booleans (stored as i32 in Mosaic).
pallas.kernel @k(%x: !pallas.ref<32x128xi1, any>, %o: !pallas.ref<8x128xi1>,
                 %buf: !pallas.ref<8x128xi1, vmem>, %sem: !pallas.ref<2xi32, semaphore>) {
  // expected-error @+1 {{'pallas.dma_start' copies in_specs[0] of booleans; Pallas' TPU lowering has no DMAs of bool data}}
  pallas.dma_start %x[0 : 8, 0 : 128], %buf[], %sem[0]
      : !pallas.ref<32x128xi1, any>, !pallas.ref<8x128xi1, vmem>, !pallas.ref<2xi32, semaphore>
}
func.func @main(%x: tensor<32x128xi1>) -> tensor<32x128xi1> {
  %0 = pallas.call @k(%x) {grid = array<i64: 4>,
      in_specs = [#pallas.block_spec<any>],
      out_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>],
      scratch = [!pallas.ref<8x128xi1, vmem>, !pallas.ref<2xi32, semaphore>]}
      : (tensor<32x128xi1>) -> tensor<32x128xi1>
  return %0 : tensor<32x128xi1>
}

// -----

// Tests that pallas.gather is rejected by name (Mosaic has no general gather).

pallas.kernel @k(%t: !pallas.ref<8x128xf32>, %o: !pallas.ref<8x128xf32>) {
  %r = pallas.iota 1 : tensor<8x128xi32>
  %c = pallas.iota 0 : tensor<8x128xi32>
  // expected-error @+1 {{'pallas.gather' has no Mosaic lowering}}
  %v = pallas.gather %t[%c, %r] : !pallas.ref<8x128xf32>, tensor<8x128xi32>, tensor<8x128xi32> -> tensor<8x128xf32>
  pallas.store %o[], %v : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @main(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %0 = pallas.call @k(%x) {grid = array<i64: 1>,
      in_specs = [#pallas.block_spec<[8, 128], (d0) -> (0, 0)>],
      out_specs = [#pallas.block_spec<[8, 128], (d0) -> (0, 0)>]}
      : (tensor<8x128xf32>) -> tensor<8x128xf32>
  return %0 : tensor<8x128xf32>
}

// -----

// pl.Buffered(3): Mosaic pipelines with one or two buffers.
pallas.kernel @k(%x: !pallas.ref<8x128xf32>, %o: !pallas.ref<8x128xf32>) {
  %v = pallas.load %x[] : !pallas.ref<8x128xf32> -> tensor<8x128xf32>
  pallas.store %o[], %v : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @main(%x: tensor<32x128xf32>) -> tensor<32x128xf32> {
  // expected-error @+1 {{out_specs[0]: buffer_count 3 (pipeline_mode=pl.Buffered(3)): the TPU pipeline supports only single (1) and double (2) buffering, as JAX's Mosaic lowering}}
  %0 = pallas.call @k(%x) {grid = array<i64: 4>,
      in_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0)>],
      out_specs = [#pallas.block_spec<[8, 128], (d0) -> (d0, 0), buffers = 3>]}
      : (tensor<32x128xf32>) -> tensor<32x128xf32>
  return %0 : tensor<32x128xf32>
}

// -----

// Tests that a symbol the TPU runtime cannot find as an input dimension of
// its own (here only 2*n is) is refused.
pallas.kernel @twice(%x: !pallas.ref<8x128xf32>, %o: !pallas.ref<8x128xf32>) {
  %n = pallas.symbol_value "n" : i32
  %f = arith.sitofp %n : i32 to f32
  %b = pallas.broadcast_in_dim %f dims [] : f32 -> tensor<8x128xf32>
  pallas.store %o[], %b : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}
func.func @main(%x: tensor<?x128xf32>, %n: index {pallas.symbol = "n"}) -> tensor<?x128xf32> {
  %c2 = arith.constant 2 : index
  %n2 = arith.muli %n, %c2 : index
  %c8 = arith.constant 8 : index
  %g = arith.ceildivsi %n2, %c8 : index
  // expected-error @+1 {{the kernel reads a symbol's value, which the TPU runtime takes from an input dimension that is exactly each symbol, but no input dimension is 'n'}}
  %o = pallas.call @twice[%g](%x) sizes(%n2) {
      grid = array<i64: -1>,
      in_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      out_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
      symbolic = {symbols = {n = {min = 1}}, grid = ["cdiv(2*n, 8)"],
                  inputs = [["2*n", "128"]], outputs = [["2*n", "128"]]}}
      : (tensor<?x128xf32>) -> tensor<?x128xf32>
  return %o : tensor<?x128xf32>
}
