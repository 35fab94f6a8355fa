// RUN: pallasc-opt %s -split-input-file -pallas-gpu-bind-symbols -verify-diagnostics

// Tests the errors of pallas-gpu-bind-symbols: a symbol read in a GPU kernel
// with no launch record or no index (pallas-to-linalg not run), a symbol
// index with no `symbol` parameter, and a symbol read left outside a GPU
// kernel.

gpu.module @kernels {
  gpu.func @no_index(%x: memref<8xf32>) kernel {
    // expected-error @+1 {{'pallas.symbol_value' op reads symbol 'n', which kernel @no_index has no parameter for (no pallas.symbol_index: run pallas-to-linalg first)}}
    %n = pallas.symbol_value "n" : i32
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @no_param(%x: memref<8xf32>) kernel {
    // expected-error @+1 {{'pallas.symbol_value' op reads symbol 'm', which kernel @no_param has no parameter for}}
    %m = pallas.symbol_value "m" {pallas.symbol_index = 1 : i64} : index
    gpu.return
  }
}

// -----

pallas.kernel @not_lowered(%x: !pallas.ref<8xf32>) {
  // expected-error @+1 {{'pallas.symbol_value' op reads symbol 'n' outside a GPU kernel}}
  %n = pallas.symbol_value "n" : i32
}
