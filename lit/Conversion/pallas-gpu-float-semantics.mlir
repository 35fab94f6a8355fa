// RUN: pallasc-opt %s -pass-pipeline='builtin.module(gpu.module(pallas-gpu-float-semantics{approx-div=true}))' | FileCheck %s --check-prefix=CUDA
// RUN: pallasc-opt %s -pass-pipeline='builtin.module(gpu.module(pallas-gpu-float-semantics))' | FileCheck %s --check-prefix=ROCM --implicit-check-not=call_intrinsic
// RUN: pallasc-opt %s -pass-pipeline='builtin.module(gpu.module(pallas-gpu-float-semantics{strict=true approx-div=true}))' | FileCheck %s --check-prefix=STRICT --implicit-check-not=contract --implicit-check-not=call_intrinsic

// Pallas' Triton semantics: float adds, subtracts and multiplies may be
// contracted into FMAs; f32 division is div.full.f32 on NVIDIA (vectors
// unrolled), IEEE on AMD; other element types and integer ops are left as
// they are. --strict-fp changes nothing.

// CUDA-LABEL: gpu.func @k
// CUDA: arith.mulf %{{.+}}, %{{.+}} fastmath<contract> : f32
// CUDA: arith.addf %{{.+}}, %{{.+}} fastmath<contract> : f32
// CUDA: arith.subf %{{.+}}, %{{.+}} fastmath<nnan,contract> : vector<4xf16>
// CUDA: arith.addi %{{.+}}, %{{.+}} : i32
// CUDA: %[[Q:.+]] = llvm.call_intrinsic "llvm.nvvm.div.full"(%{{.+}}, %{{.+}}) : (f32, f32) -> f32
// CUDA: %[[E0:.+]] = vector.extract %[[V:.+]][0] : f32 from vector<2xf32>
// CUDA: %[[D0:.+]] = vector.extract %[[W:.+]][0] : f32 from vector<2xf32>
// CUDA: %[[R0:.+]] = llvm.call_intrinsic "llvm.nvvm.div.full"(%[[E0]], %[[D0]]) : (f32, f32) -> f32
// CUDA: vector.insert %[[R0]], %{{.+}} [0] : f32 into vector<2xf32>
// CUDA: llvm.call_intrinsic "llvm.nvvm.div.full"
// CUDA: vector.insert %{{.+}}, %{{.+}} [1] : f32 into vector<2xf32>
// CUDA: arith.divf %{{.+}}, %{{.+}} : f16
// CUDA: arith.divf %{{.+}}, %{{.+}} : f64
// CUDA-NOT: arith.divf

// ROCM-LABEL: gpu.func @k
// ROCM: arith.mulf %{{.+}}, %{{.+}} fastmath<contract> : f32
// ROCM: arith.addf %{{.+}}, %{{.+}} fastmath<contract> : f32
// ROCM: arith.divf %{{.+}}, %{{.+}} : f32
// ROCM: arith.divf %{{.+}}, %{{.+}} : vector<2xf32>

// STRICT-LABEL: gpu.func @k
// STRICT: arith.mulf %{{.+}}, %{{.+}} : f32
// STRICT: arith.addf %{{.+}}, %{{.+}} : f32
// STRICT: arith.subf %{{.+}}, %{{.+}} fastmath<nnan> : vector<4xf16>
// STRICT: arith.divf %{{.+}}, %{{.+}} : f32
gpu.module @m {
  gpu.func @k(%a: f32, %b: f32, %c: f32, %h: vector<4xf16>, %i: i32,
              %v: vector<2xf32>, %w: vector<2xf32>, %s: f16, %d: f64,
              %out: memref<8xf32>) kernel {
    %p = arith.mulf %a, %b : f32
    %q = arith.addf %p, %c : f32
    %r = arith.subf %h, %h fastmath<nnan> : vector<4xf16>
    %j = arith.addi %i, %i : i32
    %x = arith.divf %q, %a : f32
    %y = arith.divf %v, %w : vector<2xf32>
    %z = arith.divf %s, %s : f16
    %e = arith.divf %d, %d : f64
    %c0 = arith.constant 0 : index
    memref.store %x, %out[%c0] : memref<8xf32>
    gpu.return
  }
}
