// Tests pallas-gpu-module-to-ptx (passes/Pipelines/PtxSerialize.cpp), the CUDA
// codegen pipeline's last pass: each gpu.module with an #nvvm.target becomes
// a gpu.binary holding its PTX (as gpu-module-to-binary{format=isa});
// libdevice is linked only into a module
// that calls it; the SLP vectorizer runs where it can pack: scalar f16 on
// sm_80, f32 pairs only on a chip with f32x2 arithmetic (sm_100a).
// RUN: pallasc-opt %s --split-input-file --pallas-gpu-module-to-ptx="toolkit=%cuda_home" | FileCheck %s
// REQUIRES: ptxas

// CHECK-LABEL: gpu.binary @plain [#gpu.object<#nvvm.target<chip = "sm_80">, properties = {O = 2 : i32}, assembly = "
// CHECK-SAME: .target sm_80
// CHECK-SAME: .visible .entry scale(
// CHECK-SAME: mul.rn.f32
// CHECK-NOT: gpu.module @plain
gpu.module @plain [#nvvm.target<chip = "sm_80">] {
  llvm.func @scale(%p: !llvm.ptr<1>, %s: f32) attributes {nvvm.kernel} {
    %x = llvm.load %p : !llvm.ptr<1> -> f32
    %y = llvm.fmul %x, %s : f32
    llvm.store %y, %p : f32, !llvm.ptr<1>
    llvm.return
  }
}

// -----

// A call of libdevice's expf is resolved (linked and inlined): no extern
// declaration is left in the PTX.
// CHECK-LABEL: gpu.binary @libdevice
// CHECK-NOT: __nv_expf
// CHECK-SAME: ex2.approx
// CHECK-NOT: __nv_expf
// CHECK-SAME: ">]
gpu.module @libdevice [#nvvm.target<chip = "sm_80">] {
  llvm.func @__nv_expf(f32) -> f32
  llvm.func @exp(%p: !llvm.ptr<1>) attributes {nvvm.kernel} {
    %x = llvm.load %p : !llvm.ptr<1> -> f32
    %y = llvm.call @__nv_expf(%x) : (f32) -> f32
    llvm.store %y, %p : f32, !llvm.ptr<1>
    llvm.return
  }
}

// -----

// Two adjacent scalar f16 additions: SLP packs them (sm_80's registers hold
// two f16 lanes).
// CHECK-LABEL: gpu.binary @half_pair
// CHECK-SAME: add.rn.f16x2
gpu.module @half_pair [#nvvm.target<chip = "sm_80">] {
  llvm.func @add2(%p: !llvm.ptr<1>, %q: !llvm.ptr<1>) attributes {nvvm.kernel} {
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %p1 = llvm.getelementptr %p[%c1] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f16
    %q1 = llvm.getelementptr %q[%c1] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f16
    %a0 = llvm.load %p {alignment = 4 : i64} : !llvm.ptr<1> -> f16
    %a1 = llvm.load %p1 : !llvm.ptr<1> -> f16
    %b0 = llvm.load %q {alignment = 4 : i64} : !llvm.ptr<1> -> f16
    %b1 = llvm.load %q1 : !llvm.ptr<1> -> f16
    %s0 = llvm.fadd %a0, %b0 : f16
    %s1 = llvm.fadd %a1, %b1 : f16
    llvm.store %s0, %p {alignment = 4 : i64} : f16, !llvm.ptr<1>
    llvm.store %s1, %p1 : f16, !llvm.ptr<1>
    llvm.return
  }
}

// -----

// Two f32 additions of lanes of vectors: two add.rn.f32 on sm_90a (no
// f32x2), one add.rn.f32x2 on sm_100a.
// CHECK-LABEL: gpu.binary @float_pair_sm90a
// CHECK-NOT: f32x2
// CHECK-SAME: add.rn.f32
// CHECK-SAME: add.rn.f32
// CHECK-NOT: f32x2
// CHECK-SAME: ">]
gpu.module @float_pair_sm90a [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx80">] {
  llvm.func @add2(%p: !llvm.ptr<1>, %q: !llvm.ptr<1>) attributes {nvvm.kernel} {
    %a = llvm.load %p {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
    %b = llvm.load %q {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
    %c0 = llvm.mlir.constant(0 : i32) : i32
    %c1 = llvm.mlir.constant(1 : i32) : i32
    %a0 = llvm.extractelement %a[%c0 : i32] : vector<4xf32>
    %a1 = llvm.extractelement %a[%c1 : i32] : vector<4xf32>
    %b0 = llvm.extractelement %b[%c0 : i32] : vector<4xf32>
    %b1 = llvm.extractelement %b[%c1 : i32] : vector<4xf32>
    %s0 = llvm.fadd %a0, %b0 : f32
    %s1 = llvm.fadd %a1, %b1 : f32
    %u = llvm.mlir.undef : vector<2xf32>
    %v0 = llvm.insertelement %s0, %u[%c0 : i32] : vector<2xf32>
    %v1 = llvm.insertelement %s1, %v0[%c1 : i32] : vector<2xf32>
    llvm.store %v1, %p {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<1>
    llvm.return
  }
}

// -----

// CHECK-LABEL: gpu.binary @float_pair_sm100a
// CHECK-SAME: add.rn.f32x2
gpu.module @float_pair_sm100a [#nvvm.target<O = 3, chip = "sm_100a", features = "+ptx86">] {
  llvm.func @add2(%p: !llvm.ptr<1>, %q: !llvm.ptr<1>) attributes {nvvm.kernel} {
    %a = llvm.load %p {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
    %b = llvm.load %q {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
    %c0 = llvm.mlir.constant(0 : i32) : i32
    %c1 = llvm.mlir.constant(1 : i32) : i32
    %a0 = llvm.extractelement %a[%c0 : i32] : vector<4xf32>
    %a1 = llvm.extractelement %a[%c1 : i32] : vector<4xf32>
    %b0 = llvm.extractelement %b[%c0 : i32] : vector<4xf32>
    %b1 = llvm.extractelement %b[%c1 : i32] : vector<4xf32>
    %s0 = llvm.fadd %a0, %b0 : f32
    %s1 = llvm.fadd %a1, %b1 : f32
    %u = llvm.mlir.undef : vector<2xf32>
    %v0 = llvm.insertelement %s0, %u[%c0 : i32] : vector<2xf32>
    %v1 = llvm.insertelement %s1, %v0[%c1 : i32] : vector<2xf32>
    llvm.store %v1, %p {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<1>
    llvm.return
  }
}
