// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -canonicalize -cse -pallas-to-gpu="chip=sm_80 print-schedule" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SCHED
// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -canonicalize -cse -pallas-to-gpu="chip=sm_90a print-schedule" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SCHED
// RUN: pallasc-opt %s -split-input-file -pallas-gpu-prepare -pallas-to-linalg -canonicalize -cse -pallas-to-gpu="chip=sm_80" | FileCheck %s

// A loop whose trip count follows a program id (causal attention's K/V
// loop: `lax.fori_loop(0, cdiv(block_q * (pid + 1), block_k), ...)`) keeps
// its cp.async ring (GridRanges.cpp, docs/cuda.md "cp.async rings across a
// loop"): the grid bounds the program id (pid < 4, so iv * 64 + 64 <= 256),
// the checked slow paths of the K and V windows fold away, and the loads
// are views the ring streams.

// Tests that both dots read their B operand from the ring; that before the
// loop the copies of iteration 0 (8 cp.async per thread: K's and V's 64x64
// tiles) are issued only when the loop runs at all (lb < ub, ub known at
// run time only), then committed as one group whatever the trip count;
// that each iteration waits for its group, synchronizes and issues the
// next iteration's copies under iv + 1 < ub; and that no lane-by-lane load
// of K or V remains.
// SCHED: remark: pipeline: {{.*}} b ring
// SCHED: remark: pipeline: {{.*}} b ring
// CHECK-LABEL: gpu.func @causal(
// CHECK: %[[UB:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK: %[[FIRST:.*]] = arith.cmpi slt, %[[LB:.*]], %[[UB]] : index
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK-COUNT-8: nvgpu.device_async_copy
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: scf.for %[[IV:.*]] = %[[LB]] to %[[UB]]
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK: %[[NEXT:.*]] = arith.cmpi slt, %{{.*}}, %[[UB]] : index
// CHECK-NEXT: scf.if %[[NEXT]] {
// CHECK-COUNT-8: nvgpu.device_async_copy
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.commit.group
// CHECK-NOT: nvgpu.device_async_copy
// CHECK-NOT: memref.load
// CHECK: gpu.return

pallas.kernel @causal(%q_ref: !pallas.ref<64x64xf16>, %k_ref: !pallas.ref<256x64xf16>,
                      %v_ref: !pallas.ref<256x64xf16>, %o_ref: !pallas.ref<64x64xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1_i32 = arith.constant 1 : i32
  %c64_i32 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %pid = pallas.program_id 0 : i32
  %q = pallas.load %q_ref[] : !pallas.ref<64x64xf16> -> tensor<64x64xf16>
  %n = arith.addi %pid, %c1_i32 : i32
  %ub = arith.index_cast %n : i32 to index
  %acc = scf.for %iv = %c0 to %ub step %c1 iter_args(%a = %zero) -> (tensor<64x64xf32>) {
    %i = arith.index_cast %iv : index to i32
    %start = arith.muli %i, %c64_i32 : i32
    %k = pallas.load %k_ref[%start : 64, 0 : 64] : !pallas.ref<256x64xf16> -> tensor<64x64xf16>
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

// Tests that a bound the grid does not prove keeps the checks: with
// `pid + 2` iterations the last program's window starts at row 256, past
// the end of K and V, so the loads keep their slow paths and the dots copy
// their operands themselves (no ring).
// SCHED: remark: pipeline: {{.*}} b stored
// SCHED: remark: pipeline: {{.*}} b stored
// CHECK-LABEL: gpu.func @past_end(
// CHECK-NOT: nvvm.cp.async.commit.group
// CHECK: gpu.return

pallas.kernel @past_end(%q_ref: !pallas.ref<64x64xf16>, %k_ref: !pallas.ref<256x64xf16>,
                      %v_ref: !pallas.ref<256x64xf16>, %o_ref: !pallas.ref<64x64xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1_i32 = arith.constant 1 : i32
  %c64_i32 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %pid = pallas.program_id 0 : i32
  %q = pallas.load %q_ref[] : !pallas.ref<64x64xf16> -> tensor<64x64xf16>
  %c2_i32 = arith.constant 2 : i32
  %n = arith.addi %pid, %c2_i32 : i32
  %ub = arith.index_cast %n : i32 to index
  %acc = scf.for %iv = %c0 to %ub step %c1 iter_args(%a = %zero) -> (tensor<64x64xf32>) {
    %i = arith.index_cast %iv : index to i32
    %start = arith.muli %i, %c64_i32 : i32
    %k = pallas.load %k_ref[%start : 64, 0 : 64] : !pallas.ref<256x64xf16> -> tensor<64x64xf16>
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
  %o = pallas.call @past_end(%q, %k, %v) {grid = array<i64: 4>, name = "past_end",
      in_specs = [#pallas.block_spec<[64, 64], (d0) -> (d0, 0)>, #pallas.block_spec<[256, 64], (d0) -> (0, 0)>, #pallas.block_spec<[256, 64], (d0) -> (0, 0)>],
      out_specs = [#pallas.block_spec<[64, 64], (d0) -> (d0, 0)>],
      compiler_params = #pallas.compiler_params<gpu = <num_warps = 4, num_stages = 2>>}
      : (tensor<256x64xf16>, tensor<256x64xf16>, tensor<256x64xf16>) -> tensor<256x64xf16>
  return %o : tensor<256x64xf16>
}
