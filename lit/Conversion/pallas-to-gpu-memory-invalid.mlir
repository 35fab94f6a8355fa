// RUN: pallasc-opt %s -split-input-file -pallas-to-gpu=chip=sm_80 -verify-diagnostics

// The memory ops' emitters (EmitMemory.cpp, MemoryEmitter: one emitter per
// memref / bufferization op, a dialect fallback for the rest) on lowered
// kernels as pallas-to-linalg leaves them: what they cannot place is a
// located diagnostic, never a crash. The positive cases are in
// pallas-to-gpu-memory.mlir.

// An allocation that is not a snapshot of a ref (only copied into and read
// whole) cannot be placed.
#call = #pallas.gpu_call<kernel = @k, name = "k", grid = [4], in_specs = [#pallas.block_spec<[128], (d0) -> (d0)>], out_specs = [#pallas.block_spec<[128], (d0) -> (d0)>], input_types = [tensor<512xf32>], output_types = [tensor<512xf32>]>
module attributes {pallas.gpu.call = #call} {
  func.func @k(%pid: i32, %n: i32, %x: memref<128xf32>, %o: memref<128xf32>) attributes {pallas.kernel, pallas.num_grid_axes = 1 : i64} {
    // expected-error @+1 {{'memref.alloc' op allocates memory inside the kernel, which the GPU lowering does not support (only snapshot copies of refs)}}
    %a = memref.alloc() : memref<128xf32>
    %c0 = arith.constant 0 : index
    %f = arith.constant 1.0 : f32
    memref.store %f, %a[%c0] : memref<128xf32>
    %v = bufferization.to_tensor %x restrict : memref<128xf32> to tensor<128xf32>
    bufferization.materialize_in_destination %v in writable %o : (tensor<128xf32>, memref<128xf32>) -> ()
    return
  }
}

// -----

// A memref op no emitter takes (the memref dialect's fallback).
#call = #pallas.gpu_call<kernel = @k, name = "k", grid = [4], in_specs = [#pallas.block_spec<[128], (d0) -> (d0)>], out_specs = [#pallas.block_spec<[128], (d0) -> (d0)>], input_types = [tensor<512xf32>], output_types = [tensor<512xf32>]>
module attributes {pallas.gpu.call = #call} {
  func.func @k(%pid: i32, %n: i32, %x: memref<128xf32>, %o: memref<128xf32>) attributes {pallas.kernel, pallas.num_grid_axes = 1 : i64} {
    // expected-error @+1 {{'memref.reinterpret_cast' op has no lowering to a GPU target}}
    %r = memref.reinterpret_cast %x to offset: [0], sizes: [64, 2], strides: [2, 1] : memref<128xf32> to memref<64x2xf32>
    %c0 = arith.constant 0 : index
    %e = memref.load %r[%c0, %c0] : memref<64x2xf32>
    memref.store %e, %o[%c0] : memref<128xf32>
    %v = bufferization.to_tensor %x restrict : memref<128xf32> to tensor<128xf32>
    bufferization.materialize_in_destination %v in writable %o : (tensor<128xf32>, memref<128xf32>) -> ()
    return
  }
}

// -----

// A read of memory that is neither a kernel argument nor a view of one.
#call = #pallas.gpu_call<kernel = @k, name = "k", grid = [4], in_specs = [#pallas.block_spec<[128], (d0) -> (d0)>], out_specs = [#pallas.block_spec<[128], (d0) -> (d0)>], input_types = [tensor<512xf32>], output_types = [tensor<512xf32>]>
module attributes {pallas.gpu.call = #call} {
  memref.global "private" @g : memref<128xf32> = dense<0.0>
  func.func @k(%pid: i32, %n: i32, %x: memref<128xf32>, %o: memref<128xf32>) attributes {pallas.kernel, pallas.num_grid_axes = 1 : i64} {
    // expected-error @+1 {{'memref.get_global' op has no lowering to a GPU target}}
    %g = memref.get_global @g : memref<128xf32>
    %c0 = arith.constant 0 : index
    %e = memref.load %g[%c0] : memref<128xf32>
    memref.store %e, %o[%c0] : memref<128xf32>
    %v = bufferization.to_tensor %x restrict : memref<128xf32> to tensor<128xf32>
    bufferization.materialize_in_destination %v in writable %o : (tensor<128xf32>, memref<128xf32>) -> ()
    return
  }
}

// -----

// A scalar store inside a tensor.generate body (lanes may diverge there).
#call = #pallas.gpu_call<kernel = @k, name = "k", grid = [4], in_specs = [#pallas.block_spec<[128], (d0) -> (d0)>], out_specs = [#pallas.block_spec<[128], (d0) -> (d0)>], input_types = [tensor<512xf32>], output_types = [tensor<512xf32>]>
module attributes {pallas.gpu.call = #call} {
  func.func @k(%pid: i32, %n: i32, %x: memref<128xf32>, %o: memref<128xf32>) attributes {pallas.kernel, pallas.num_grid_axes = 1 : i64} {
    %t = tensor.generate {
    ^bb0(%i: index):
      %f = arith.constant 1.0 : f32
      // expected-error @+1 {{'memref.store' op stores inside a generated block}}
      memref.store %f, %o[%i] : memref<128xf32>
      tensor.yield %f : f32
    } : tensor<128xf32>
    bufferization.materialize_in_destination %t in writable %o : (tensor<128xf32>, memref<128xf32>) -> ()
    return
  }
}
