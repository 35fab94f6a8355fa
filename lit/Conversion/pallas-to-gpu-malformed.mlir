// RUN: pallasc-opt %s -split-input-file -pallas-to-gpu=chip=sm_80 -verify-diagnostics

// pallas-to-gpu reads the call pallas-gpu-prepare records on the module
// (`pallas.gpu.call`, a #pallas.gpu_call, whose malformed forms
// lit/Dialect/Pallas/gpu-call-invalid.mlir tests). A missing record, or one
// that does not fit the lowered kernel, is a diagnostic, never a crash.

// expected-error @+1 {{no pallas.call was recorded; run pallas-gpu-prepare on a module holding one}}
module {
}

// -----

// A lowered kernel without its grid-axis count (pallas-to-linalg's
// pallas.num_grid_axes).
module attributes {pallas.gpu.call = #pallas.gpu_call<kernel = @k, grid = [4], in_specs = [], out_specs = [], input_types = [], output_types = []>} {
  // expected-error @+1 {{'func.func' op has no integer 'pallas.num_grid_axes' (pallas-to-linalg records it)}}
  func.func @k() attributes {pallas.kernel} {
    return
  }
}
