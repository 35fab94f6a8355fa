// RUN: pallasc-opt %s -split-input-file --pallas-to-linalg -verify-diagnostics

// Tests that a closed-over ref must be discharged first.
pallas.ref_global @counts : !pallas.ref<8xi32>
pallas.kernel @closed(%o: !pallas.ref<8xi32>) {
  // expected-error @+1 {{reads a closed-over ref; run pallas-discharge-state before pallas-to-linalg}}
  %c = pallas.get_global @counts : !pallas.ref<8xi32>
  %v = pallas.load %c[] : !pallas.ref<8xi32> -> tensor<8xi32>
  pallas.store %o[], %v : !pallas.ref<8xi32>, tensor<8xi32>
}

// -----

// Tests that hi-typed kernel arguments must be flattened first.
// expected-error @+1 {{argument #0 has type '!pallas.hi<"q", !pallas.ref<8xi8>, !pallas.ref<1xf32>>'; run pallas-hi-to-lo before pallas-to-linalg}}
pallas.kernel @hi(%q: !pallas.hi<"q", !pallas.ref<8xi8>, !pallas.ref<1xf32>>) {
}

// -----

// Tests that program_id is rejected in an index map.
func.func @index_map(%i: i32, %idx: !pallas.ref<16xi32, smem>) -> i32 {
  // expected-error @+1 {{is only meaningful inside a kernel}}
  %p = pallas.program_id 0 : i32
  %row = pallas.load %idx[%p] : !pallas.ref<16xi32, smem> -> i32
  return %row : i32
}

// -----

// Tests that a kernel reads only the symbols of its call (recorded here as
// pallasc run's host program records them).
pallas.kernel @reads_m(%o: !pallas.ref<8xf32>) attributes {pallas.symbols = ["n"]} {
  // expected-error @+1 {{'pallas.symbol_value' op reads symbol 'm', which the kernel's call does not declare (its symbols: n)}}
  %m = pallas.symbol_value "m" : i32
  %f = arith.sitofp %m : i32 to f32
  %v = pallas.broadcast_in_dim %f dims [] : f32 -> tensor<8xf32>
  pallas.store %o[], %v : !pallas.ref<8xf32>, tensor<8xf32>
}
