// pallas-refuse-packed-integers, which the GPU pipelines start with: the
// first i4 or i2 value (int4/uint4/int2/uint2, packed storage with no
// lowering on those targets yet) is refused at its location, naming the
// dtype and the target; a kernel without one is untouched. For target cpu
// (the default) it refuses nothing: the CPU pipeline lowers packed storage
// (pallas-emulate-packed-integers, emulate-packed-integers.mlir).
// RUN: pallasc-opt %s --split-input-file --pallas-refuse-packed-integers=target=cuda:sm_90a --verify-diagnostics --mlir-print-ir-after-failure=false -o /dev/null
// RUN: not pallasc-opt %s --split-input-file --pallas-refuse-packed-integers=target=cuda:sm_90a -o /dev/null 2>&1 | FileCheck %s --check-prefix=CUDA
// RUN: not pallasc-opt %s --split-input-file --pallas-refuse-packed-integers=target=rocm:gfx942 -o /dev/null 2>&1 | FileCheck %s --check-prefix=ROCM
// RUN: pallasc-opt %s --split-input-file --pallas-refuse-packed-integers | FileCheck %s --check-prefix=CPU
// CUDA: refuse-packed-integers.mlir:22:25: error: dtype int4/uint4 ('i4', packed 2 per byte) is not supported on target 'cuda:sm_90a' yet
// CUDA: error: dtype int2/uint2 ('i2', packed 4 per byte) is not supported on target 'cuda:sm_90a' yet
// ROCM: error: dtype int4/uint4 ('i4', packed 2 per byte) is not supported on target 'rocm:gfx942' yet
// CPU-LABEL: pallas.kernel @int4_ref
// CPU: arith.sitofp %{{.*}} : tensor<8x128xi4> to tensor<8x128xf32>
// CPU-LABEL: pallas.kernel @int2_value
// CPU-LABEL: pallas.kernel @int4_scalar
// CPU-LABEL: pallas.kernel @bytes

// The kernel's int4 ref argument comes before the ops that use it.
// expected-error @+1 {{dtype int4/uint4 ('i4', packed 2 per byte) is not supported on target 'cuda:sm_90a' yet: '!pallas.ref<8x128xi4>' has no packed lowering there; compile for --target cpu or tpu, or widen it to int8 in the caller}}
pallas.kernel @int4_ref(%x_ref: !pallas.ref<8x128xi4>,
                        %o_ref: !pallas.ref<8x128xf32>) {
  %x = pallas.load %x_ref[] : !pallas.ref<8x128xi4> -> tensor<8x128xi4>
  %f = arith.sitofp %x : tensor<8x128xi4> to tensor<8x128xf32>
  pallas.store %o_ref[], %f : !pallas.ref<8x128xf32>, tensor<8x128xf32>
}

// -----

// An int2 value computed inside a kernel of wider refs: refused at the op.
pallas.kernel @int2_value(%x_ref: !pallas.ref<8x128xi8>,
                          %o_ref: !pallas.ref<8x128xi8>) {
  %x = pallas.load %x_ref[] : !pallas.ref<8x128xi8> -> tensor<8x128xi8>
  // expected-error @+1 {{dtype int2/uint2 ('i2', packed 4 per byte) is not supported on target 'cuda:sm_90a' yet: 'tensor<8x128xi2>' has no packed lowering there}}
  %t = arith.trunci %x : tensor<8x128xi8> to tensor<8x128xi2>
  %e = arith.extsi %t : tensor<8x128xi2> to tensor<8x128xi8>
  pallas.store %o_ref[], %e : !pallas.ref<8x128xi8>, tensor<8x128xi8>
}

// -----

// A scalar i4 is refused too.
pallas.kernel @int4_scalar(%o_ref: !pallas.ref<8x128xi8>) {
  // expected-error @+1 {{dtype int4/uint4 ('i4', packed 2 per byte) is not supported on target 'cuda:sm_90a' yet: 'i4' has no packed lowering there}}
  %c = arith.constant 7 : i4
  %w = arith.extsi %c : i4 to i8
  %v = tensor.splat %w : tensor<8x128xi8>
  pallas.store %o_ref[], %v : !pallas.ref<8x128xi8>, tensor<8x128xi8>
}

// -----

// i1 (bool), i8 and wider are untouched.
pallas.kernel @bytes(%x_ref: !pallas.ref<8x128xi8>, %o_ref: !pallas.ref<8x128xi1>) {
  %x = pallas.load %x_ref[] : !pallas.ref<8x128xi8> -> tensor<8x128xi8>
  %z = arith.constant dense<0> : tensor<8x128xi8>
  %b = arith.cmpi ne, %x, %z : tensor<8x128xi8>
  pallas.store %o_ref[], %b : !pallas.ref<8x128xi1>, tensor<8x128xi1>
}
