// RUN: pallasc-opt %s -split-input-file --mlir-very-unsafe-disable-verifier-on-parsing --verify-each=0 --mlir-print-ir-after-failure=false -pallas-to-gpu=chip=sm_80 -verify-diagnostics

// With the verifier off (the dialect refuses anything but a #pallas.gpu_call
// under `pallas.gpu.call`; lit/Dialect/Pallas/gpu-call-invalid.mlir),
// pallas-to-gpu still names a record of another kind instead of crashing.

// expected-error @+1 {{the recorded pallas.call ('pallas.gpu.call') must be a #pallas.gpu_call, got 1 : i64}}
module attributes {pallas.gpu.call = 1} {
}

// -----

// expected-error @+1 {{the recorded pallas.call ('pallas.gpu.call') must be a #pallas.gpu_call, got {grid = array<i64: 4>, kernel = @k}}}
module attributes {pallas.gpu.call = {kernel = @k, grid = array<i64: 4>}} {
}
