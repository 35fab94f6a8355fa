// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -canonicalize -cse -pallas-to-gpu="chip=sm_90a print-schedule" -o /dev/null 2>&1 | FileCheck %s --check-prefix=WG
// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -canonicalize -cse -pallas-to-gpu="chip=sm_80 print-schedule" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MMA
// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -canonicalize -cse -pallas-to-gpu="chip=sm_90a" | FileCheck %s

// A masked K load whose mask is true for every element (JAX's attention.mha:
// `pl.load(k_ref, ..., mask=jnp.arange(64) < 64, other=0.)` over a head
// dimension that fills the block) is the loaded block itself
// (TrueMasks.cpp): on sm_90a it streams through the loop's cp.async ring
// beside V, as Triton streams both. On sm_80 (mma.sync) K keeps its stored
// tile: streaming it there costs attention spills (docs/cuda.md).

// Tests that on sm_90a both dots read B from the ring and the prologue
// copies K's and V's 64x64 tiles (4 + 4 cp.async per thread) in one group,
// and the loop issues as many for the next iteration; on sm_80 only V's.
// WG: remark: pipeline: {{.*}} a stored b ring
// WG: remark: pipeline: {{.*}} a registers b ring
// MMA: remark: pipeline: {{.*}} a stored b stored
// MMA: remark: pipeline: {{.*}} a stored b ring
// CHECK-LABEL: gpu.func @causal(
// CHECK: scf.if
// CHECK-COUNT-8: nvgpu.device_async_copy
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: scf.for
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK: scf.if
// CHECK-COUNT-8: nvgpu.device_async_copy
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.commit.group
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: gpu.return

pallas.kernel @causal(%q_ref: !pallas.ref<64x64xf16>, %k_ref: !pallas.ref<256x64xf16>,
                      %v_ref: !pallas.ref<256x64xf16>, %o_ref: !pallas.ref<64x64xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1_i32 = arith.constant 1 : i32
  %c64_i32 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %pid = pallas.program_id 0 : i32
  %cols = pallas.iota 0 : tensor<64xi32>
  %bound = arith.constant dense<64> : tensor<64xi32>
  %in = arith.cmpi slt, %cols, %bound : tensor<64xi32>
  %row = pallas.broadcast_in_dim %in dims [1] : tensor<64xi1> -> tensor<1x64xi1>
  %mask = pallas.broadcast_in_dim %row dims [0, 1] : tensor<1x64xi1> -> tensor<64x64xi1>
  %other = arith.constant dense<0.0> : tensor<64x64xf16>
  %q = pallas.load %q_ref[] : !pallas.ref<64x64xf16> -> tensor<64x64xf16>
  %n = arith.addi %pid, %c1_i32 : i32
  %ub = arith.index_cast %n : i32 to index
  %acc = scf.for %iv = %c0 to %ub step %c1 iter_args(%a = %zero) -> (tensor<64x64xf32>) {
    %i = arith.index_cast %iv : index to i32
    %start = arith.muli %i, %c64_i32 : i32
    %k = pallas.load %k_ref[%start : 64, 0 : 64] mask %mask other %other : !pallas.ref<256x64xf16> -> tensor<64x64xf16>
    %kt = pallas.transpose %k [1, 0] : tensor<64x64xf16> -> tensor<64x64xf16>
    %s = pallas.dot %q, %kt : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
    %p = arith.truncf %s : tensor<64x64xf32> to tensor<64x64xf16>
    %v = pallas.load %v_ref[%start : 64, 0 : 64] : !pallas.ref<256x64xf16> -> tensor<64x64xf16>
    %pv = pallas.dot %p, %v : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
    %next = arith.addf %a, %pv : tensor<64x64xf32>
    scf.yield %next : tensor<64x64xf32>
  }
  %out = arith.truncf %acc : tensor<64x64xf32> to tensor<64x64xf16>
  pallas.store %o_ref[], %out : !pallas.ref<64x64xf16>, tensor<64x64xf16>
}
func.func @main(%q: tensor<256x64xf16>, %k: tensor<256x64xf16>, %v: tensor<256x64xf16>) -> tensor<256x64xf16> {
  %o = pallas.call @causal(%q, %k, %v) {grid = array<i64: 4>, name = "causal",
      in_specs = [#pallas.block_spec<[64, 64], (d0) -> (d0, 0)>, #pallas.block_spec<[256, 64], (d0) -> (0, 0)>, #pallas.block_spec<[256, 64], (d0) -> (0, 0)>],
      out_specs = [#pallas.block_spec<[64, 64], (d0) -> (d0, 0)>],
      compiler_params = #pallas.compiler_params<gpu = <num_warps = 4, num_stages = 2>>}
      : (tensor<256x64xf16>, tensor<256x64xf16>, tensor<256x64xf16>) -> tensor<256x64xf16>
  return %o : tensor<256x64xf16>
}

// -----

// Tests that a mask true for only part of the block (`arange(64) < 63`)
// keeps its select: K is a computed operand, stored at its dot, and only V
// streams through the ring.
// WG: remark: pipeline: {{.*}} a stored b stored
// WG: remark: pipeline: {{.*}} a registers b ring
// MMA: remark: pipeline: {{.*}} a stored b stored
// MMA: remark: pipeline: {{.*}} a stored b ring
// CHECK-LABEL: gpu.func @partial(
// CHECK: scf.if
// CHECK-COUNT-4: nvgpu.device_async_copy
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.commit.group
// CHECK: gpu.return

pallas.kernel @partial(%q_ref: !pallas.ref<64x64xf16>, %k_ref: !pallas.ref<256x64xf16>,
                      %v_ref: !pallas.ref<256x64xf16>, %o_ref: !pallas.ref<64x64xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1_i32 = arith.constant 1 : i32
  %c64_i32 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %pid = pallas.program_id 0 : i32
  %cols = pallas.iota 0 : tensor<64xi32>
  %bound = arith.constant dense<63> : tensor<64xi32>
  %in = arith.cmpi slt, %cols, %bound : tensor<64xi32>
  %row = pallas.broadcast_in_dim %in dims [1] : tensor<64xi1> -> tensor<1x64xi1>
  %mask = pallas.broadcast_in_dim %row dims [0, 1] : tensor<1x64xi1> -> tensor<64x64xi1>
  %other = arith.constant dense<0.0> : tensor<64x64xf16>
  %q = pallas.load %q_ref[] : !pallas.ref<64x64xf16> -> tensor<64x64xf16>
  %n = arith.addi %pid, %c1_i32 : i32
  %ub = arith.index_cast %n : i32 to index
  %acc = scf.for %iv = %c0 to %ub step %c1 iter_args(%a = %zero) -> (tensor<64x64xf32>) {
    %i = arith.index_cast %iv : index to i32
    %start = arith.muli %i, %c64_i32 : i32
    %k = pallas.load %k_ref[%start : 64, 0 : 64] mask %mask other %other : !pallas.ref<256x64xf16> -> tensor<64x64xf16>
    %kt = pallas.transpose %k [1, 0] : tensor<64x64xf16> -> tensor<64x64xf16>
    %s = pallas.dot %q, %kt : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
    %p = arith.truncf %s : tensor<64x64xf32> to tensor<64x64xf16>
    %v = pallas.load %v_ref[%start : 64, 0 : 64] : !pallas.ref<256x64xf16> -> tensor<64x64xf16>
    %pv = pallas.dot %p, %v : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
    %next = arith.addf %a, %pv : tensor<64x64xf32>
    scf.yield %next : tensor<64x64xf32>
  }
  %out = arith.truncf %acc : tensor<64x64xf32> to tensor<64x64xf16>
  pallas.store %o_ref[], %out : !pallas.ref<64x64xf16>, tensor<64x64xf16>
}
func.func @main(%q: tensor<256x64xf16>, %k: tensor<256x64xf16>, %v: tensor<256x64xf16>) -> tensor<256x64xf16> {
  %o = pallas.call @partial(%q, %k, %v) {grid = array<i64: 4>, name = "partial",
      in_specs = [#pallas.block_spec<[64, 64], (d0) -> (d0, 0)>, #pallas.block_spec<[256, 64], (d0) -> (0, 0)>, #pallas.block_spec<[256, 64], (d0) -> (0, 0)>],
      out_specs = [#pallas.block_spec<[64, 64], (d0) -> (d0, 0)>],
      compiler_params = #pallas.compiler_params<gpu = <num_warps = 4, num_stages = 2>>}
      : (tensor<256x64xf16>, tensor<256x64xf16>, tensor<256x64xf16>) -> tensor<256x64xf16>
  return %o : tensor<256x64xf16>
}

// -----

// Tests that a select of the masked load under the same mask (as JAX's
// norms write `jnp.where(mask, x, 0.)` after `pl.load(..., mask=mask)`)
// folds too, the outer select onto the load the inner one folded to: K
// still streams on sm_90a.
// WG: remark: pipeline: {{.*}} a stored b ring
// WG: remark: pipeline: {{.*}} a registers b ring
// MMA: remark: pipeline: {{.*}} a stored b stored
// MMA: remark: pipeline: {{.*}} a stored b ring
// CHECK-LABEL: gpu.func @chained(
// CHECK: scf.if
// CHECK-COUNT-8: nvgpu.device_async_copy
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.commit.group
// CHECK: gpu.return

pallas.kernel @chained(%q_ref: !pallas.ref<64x64xf16>, %k_ref: !pallas.ref<256x64xf16>,
                      %v_ref: !pallas.ref<256x64xf16>, %o_ref: !pallas.ref<64x64xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1_i32 = arith.constant 1 : i32
  %c64_i32 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %pid = pallas.program_id 0 : i32
  %cols = pallas.iota 0 : tensor<64xi32>
  %bound = arith.constant dense<64> : tensor<64xi32>
  %in = arith.cmpi slt, %cols, %bound : tensor<64xi32>
  %row = pallas.broadcast_in_dim %in dims [1] : tensor<64xi1> -> tensor<1x64xi1>
  %mask = pallas.broadcast_in_dim %row dims [0, 1] : tensor<1x64xi1> -> tensor<64x64xi1>
  %other = arith.constant dense<0.0> : tensor<64x64xf16>
  %q = pallas.load %q_ref[] : !pallas.ref<64x64xf16> -> tensor<64x64xf16>
  %n = arith.addi %pid, %c1_i32 : i32
  %ub = arith.index_cast %n : i32 to index
  %acc = scf.for %iv = %c0 to %ub step %c1 iter_args(%a = %zero) -> (tensor<64x64xf32>) {
    %i = arith.index_cast %iv : index to i32
    %start = arith.muli %i, %c64_i32 : i32
    %k = pallas.load %k_ref[%start : 64, 0 : 64] mask %mask other %other : !pallas.ref<256x64xf16> -> tensor<64x64xf16>
    %km = pallas.select %mask, %k, %other : tensor<64x64xi1>, tensor<64x64xf16>
    %kt = pallas.transpose %km [1, 0] : tensor<64x64xf16> -> tensor<64x64xf16>
    %s = pallas.dot %q, %kt : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
    %p = arith.truncf %s : tensor<64x64xf32> to tensor<64x64xf16>
    %v = pallas.load %v_ref[%start : 64, 0 : 64] : !pallas.ref<256x64xf16> -> tensor<64x64xf16>
    %pv = pallas.dot %p, %v : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
    %next = arith.addf %a, %pv : tensor<64x64xf32>
    scf.yield %next : tensor<64x64xf32>
  }
  %out = arith.truncf %acc : tensor<64x64xf32> to tensor<64x64xf16>
  pallas.store %o_ref[], %out : !pallas.ref<64x64xf16>, tensor<64x64xf16>
}
func.func @main(%q: tensor<256x64xf16>, %k: tensor<256x64xf16>, %v: tensor<256x64xf16>) -> tensor<256x64xf16> {
  %o = pallas.call @chained(%q, %k, %v) {grid = array<i64: 4>, name = "chained",
      in_specs = [#pallas.block_spec<[64, 64], (d0) -> (d0, 0)>, #pallas.block_spec<[256, 64], (d0) -> (0, 0)>, #pallas.block_spec<[256, 64], (d0) -> (0, 0)>],
      out_specs = [#pallas.block_spec<[64, 64], (d0) -> (d0, 0)>],
      compiler_params = #pallas.compiler_params<gpu = <num_warps = 4, num_stages = 2>>}
      : (tensor<256x64xf16>, tensor<256x64xf16>, tensor<256x64xf16>) -> tensor<256x64xf16>
  return %o : tensor<256x64xf16>
}
