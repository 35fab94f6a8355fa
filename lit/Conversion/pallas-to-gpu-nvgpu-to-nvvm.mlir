// RUN: pallasc-opt %s -pallas-to-cuda-pipeline="chip=sm_80 serialize=false" | FileCheck %s

// Tests pallas-nvgpu-to-nvvm inside the CUDA pipeline: the cp.async copies
// pallas-to-gpu emits for dot operands (nvgpu.device_async_copy) lower to
// nvvm.cp.async with the gpu.module's 32-bit indices (here prefetched three
// stages ahead: wait_group 2), leaving no casts
// between 32-bit and 64-bit memref descriptors behind.
// CHECK-LABEL: gpu.module @mm_kernels
// CHECK: llvm.func @mm(
// CHECK: llvm.getelementptr {{.+}} : (!llvm.ptr, i32) -> !llvm.ptr, bf16
// CHECK: llvm.addrspacecast {{.+}} : !llvm.ptr to !llvm.ptr<1>
// CHECK: nvvm.cp.async.shared.global %{{.+}}, %{{.+}}, 16, cache = cg : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.wait.group 2
// CHECK: nvvm.mma.sync
// CHECK-NOT: unrealized_conversion_cast
// CHECK-NOT: nvgpu.
pallas.kernel @mm_kernel(%a: !pallas.ref<32x32xbf16>, %b: !pallas.ref<32x32xbf16>,
                         %o: !pallas.ref<32x32xf32>, %acc: !pallas.ref<32x32xf32, vmem>) {
  %k = pallas.program_id 2 : i32
  %nk = pallas.num_programs 2 : i32
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %first = arith.cmpi eq, %k, %c0 : i32
  scf.if %first {
    %z = arith.constant dense<0.0> : tensor<32x32xf32>
    pallas.store %acc[], %z : !pallas.ref<32x32xf32, vmem>, tensor<32x32xf32>
  }
  %x = pallas.load %a[] : !pallas.ref<32x32xbf16> -> tensor<32x32xbf16>
  %y = pallas.load %b[] : !pallas.ref<32x32xbf16> -> tensor<32x32xbf16>
  %p = pallas.load %acc[] : !pallas.ref<32x32xf32, vmem> -> tensor<32x32xf32>
  %d = pallas.dot %x, %y, %p : tensor<32x32xbf16>, tensor<32x32xbf16>, tensor<32x32xf32> -> tensor<32x32xf32>
  pallas.store %acc[], %d : !pallas.ref<32x32xf32, vmem>, tensor<32x32xf32>
  %lastk = arith.subi %nk, %c1 : i32
  %last = arith.cmpi eq, %k, %lastk : i32
  scf.if %last {
    %r = pallas.load %acc[] : !pallas.ref<32x32xf32, vmem> -> tensor<32x32xf32>
    pallas.store %o[], %r : !pallas.ref<32x32xf32>, tensor<32x32xf32>
  }
}
func.func @main(%a: tensor<64x64xbf16>, %b: tensor<64x64xbf16>) -> tensor<64x64xf32> {
  %o = pallas.call @mm_kernel(%a, %b) {grid = array<i64: 2, 2, 2>, name = "mm",
      in_specs = [#pallas.block_spec<[32, 32], (d0, d1, d2) -> (d0, d2)>, #pallas.block_spec<[32, 32], (d0, d1, d2) -> (d2, d1)>],
      out_specs = [#pallas.block_spec<[32, 32], (d0, d1, d2) -> (d0, d1)>],
      scratch = [!pallas.ref<32x32xf32, vmem>],
      compiler_params = #pallas.compiler_params<tpu = <dimension_semantics = [parallel, parallel, arbitrary]>>}
      : (tensor<64x64xbf16>, tensor<64x64xbf16>) -> tensor<64x64xf32>
  return %o : tensor<64x64xf32>
}
