//===- NVGPUToNVVM.td - pallas-nvgpu-to-nvvm pass definition --- -*- tablegen -*-===//
//
// Included from passes/Conversion/Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_CONVERSION_NVGPUTONVVM_TD
#define PALLASC_PASSES_CONVERSION_NVGPUTONVVM_TD

include "mlir/Pass/PassBase.td"

def PallasNVGPUToNVVM : Pass<"pallas-nvgpu-to-nvvm", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Lower the nvgpu ops pallas-to-gpu emits (cp.async) to NVVM, "
                "with the gpu.module's index width";
  let description = [{
    Runs after `convert-gpu-to-nvvm`. Upstream's `convert-nvgpu-to-nvvm`
    always converts memrefs with 64-bit indices, while `pallas-to-gpu`
    gives small kernels 32-bit ones (`dlti.dl_spec` on the `gpu.module`),
    leaving casts between mismatched descriptors; this pass applies the same
    upstream patterns (`populateNVGPUToNVVMConversionPatterns`) with a type
    converter built from the module's data layout. It also prints the global
    loads that carry a `pallas.load`'s `eviction_policy` (their location is
    fused with the metadata `"pallas.eviction_policy=POLICY"`) as inline
    PTX, `ld.global.L1::evict_first` / `L1::evict_last`.
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect"
  ];
}

#endif // PALLASC_PASSES_CONVERSION_NVGPUTONVVM_TD
