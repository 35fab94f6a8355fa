// RUN: pallasc-opt %s -split-input-file -verify-diagnostics

func.func @store_rank(%m: memref<16x128xf32, #tpu.memory_space<vmem>>,
                      %v: vector<16x128xf32>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{expected 2 indices for the memref, got 1}}
  tpu.vector_store %m[%c0], %v {strides = array<i32>} : memref<16x128xf32, #tpu.memory_space<vmem>>, vector<16x128xf32>,
  return
}

// -----

func.func @store_mask(%m: memref<16x128xf32, #tpu.memory_space<vmem>>,
                      %v: vector<16x128xf32>, %k: vector<8x128xi1>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{mask must be a vector of i1 shaped like the value}}
  tpu.vector_store %m[%c0, %c0], %v masked %k {strides = array<i32>} : memref<16x128xf32, #tpu.memory_space<vmem>>, vector<16x128xf32>, vector<8x128xi1>
  return
}

// -----

func.func @strided_strides(%m: memref<16x128xf32, #tpu.memory_space<vmem>>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{expected 2 strides, got 1}}
  %v = tpu.strided_load %m[%c0, %c0] {strides = array<i32: 2>} : memref<16x128xf32, #tpu.memory_space<vmem>>, vector<8x128xf32>
  return
}

// -----

func.func @matmul_contract(%a: vector<128x64xbf16>, %b: vector<128x128xbf16>,
                           %c: vector<128x128xf32>) {
  // expected-error @+1 {{contracting dimensions differ in size: 64 vs 128}}
  %d = tpu.matmul %a, %b, %c {dimension_numbers = #tpu.dot_dimension_numbers<[1], [0], [0], [1], [0, 0, 1, 1], [], []>} : vector<128x64xbf16>, vector<128x128xbf16>, vector<128x128xf32> -> vector<128x128xf32>
  return
}

// -----

func.func @iota_dim() {
  // expected-error @+1 {{dimension 2 out of range for rank 2}}
  %i = tpu.iota {dimensions = array<i32: 2>} : vector<8x128xi32>
  return
}

// -----

func.func @transpose_perm(%x: vector<8x128xf32>) {
  // expected-error @+1 {{invalid permutation}}
  %t = tpu.transpose %x, [0, 0] : vector<8x128xf32> -> vector<8x128xf32>
  return
}

// -----

// expected-error @+2 {{expected one of [any, vmem, smem, hbm, cmem, semaphore_mem, vmem_shared, host] for memory space, got: register}}
// expected-error @+1 {{failed to parse TPU_MemorySpaceAttr parameter}}
func.func @bad_space(%m: memref<8xf32, #tpu.memory_space<register>>) {
  return
}

// -----

func.func @dma_shapes(%x: memref<16x128xf32, #tpu.memory_space<any>>,
                      %buf: memref<8x128xf32, #tpu.memory_space<vmem>>,
                      %sem: memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>) {
  // expected-error @+1 {{'tpu.enqueue_dma' op source 'memref<16x128xf32, #tpu.memory_space<any>>' and target 'memref<8x128xf32, #tpu.memory_space<vmem>>' must have the same shape and element type}}
  tpu.enqueue_dma source(%x : memref<16x128xf32, #tpu.memory_space<any>>) target(%buf : memref<8x128xf32, #tpu.memory_space<vmem>>) target_semaphore(%sem : memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
  return
}

// -----

func.func @slice_rank(%x: memref<32x128xf32, #tpu.memory_space<any>>, %i: i32) {
  // expected-error @+1 {{'tpu.memref_slice' op needs one base index per dimension of 'memref<32x128xf32, #tpu.memory_space<any>>'}}
  %s = tpu.memref_slice %x[%i] : memref<32x128xf32, #tpu.memory_space<any>> -> memref<8x128xf32, #tpu.memory_space<any>>
  return
}

// -----

func.func @squeeze_non_unit(%x: memref<8x128xf32, #tpu.memory_space<vmem>>) {
  // expected-error @+1 {{'tpu.memref_squeeze' op result 'memref<128xf32, #tpu.memory_space<vmem>>' must be 'memref<8x128xf32, #tpu.memory_space<vmem>>' with some unit dims removed}}
  %s = tpu.memref_squeeze %x : memref<8x128xf32, #tpu.memory_space<vmem>> -> memref<128xf32, #tpu.memory_space<vmem>>
  return
}
