//===- MathToOcml.td - math ops to ROCm ocml calls --------*- tablegen -*-===//

#ifndef PALLASC_PASSES_CONVERSION_MATHTOOCML_TD
#define PALLASC_PASSES_CONVERSION_MATHTOOCML_TD

include "mlir/Pass/PassBase.td"

def PallasMathToOcml : Pass<"pallas-math-to-ocml", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Lower math ops to ROCm device-library (ocml) calls";
  let description = [{
    Runs in the ROCm pipeline before `convert-gpu-to-rocdl`, which would
    otherwise turn `math.tanh`, `math.tan`, `math.atan`, `math.atan2`,
    `math.sinh`, `math.cosh`, `math.asin` and `math.acos` into LLVM
    intrinsics the AMDGPU backend cannot select ("no libcall available for
    ftanh"). Those eight become calls to `__ocml_<fn>_f16/f32/f64` through
    upstream's `populateMathToROCDLConversionPatterns`; every other op keeps
    `convert-gpu-to-rocdl`'s lowering. `gpu-module-to-binary` links the
    device libraries.

    Before:
    ```mlir
    %t = math.tanh %x : f32
    ```
    After:
    ```mlir
    %t = llvm.call @__ocml_tanh_f32(%x) : (f32) -> f32
    ```
  }];
  let options = [
    Option<"chipset", "chipset", "std::string", /*default=*/"\"gfx942\"",
           "The AMD chip">
  ];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect", "::mlir::ROCDL::ROCDLDialect"
  ];
}

#endif // PALLASC_PASSES_CONVERSION_MATHTOOCML_TD
