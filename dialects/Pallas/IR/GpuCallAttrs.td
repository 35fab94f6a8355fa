//===- GpuCallAttrs.td - pallas-gpu-prepare's call record --*- tablegen -*-===//
//
// The typed record of the pallas.call that pallas-gpu-prepare attaches to
// the module (`pallas.gpu.call`) for pallas-to-gpu, in a file of its own:
// only the dialect's registration, GridMapping.cpp, the writer and the
// reader include GpuCallAttrs.h, so a change here rebuilds those and not
// everything that includes the dialect.
//
//===----------------------------------------------------------------------===//

#ifndef PALLAS_GPU_CALL_ATTRS_TD
#define PALLAS_GPU_CALL_ATTRS_TD

include "dialects/Pallas/IR/PallasDialect.td"
include "mlir/IR/AttrTypeBase.td"

def Pallas_GpuCallAttr : AttrDef<Pallas_Dialect, "GpuCall"> {
  let mnemonic = "gpu_call";
  let summary = "the record of the pallas.call a GPU module lowers";
  let description = [{
    What pallas-gpu-prepare records on the module (`pallas.gpu.call`) for
    pallas-to-gpu, which runs after pallas-to-linalg has replaced the
    pallas.call: the kernel's symbol, the call's name (the kernel's when
    absent), its grid mapping (grid, grid names, vmapped axes, scalar
    prefetch count, block specs, input/output aliases, compiler params),
    the kernel's scratch refs and the types of the call's inputs (scalar
    prefetch first) and outputs. The verifier checks the rules the lowering
    relies on (docs/dialect.md, "GPU call record"), those of pallas.call's
    verifier that do not need the operands.

    ```mlir
    #pallas.gpu_call<kernel = @add, grid = [4],
        in_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
        out_specs = [#pallas.block_spec<[8, 128], (i) -> (i, 0)>],
        input_types = [tensor<32x128xf32>],
        output_types = [tensor<32x128xf32>]>
    ```
  }];
  let parameters = (ins
    "::mlir::FlatSymbolRefAttr":$kernel,
    OptionalParameter<"::mlir::StringAttr", "the call's name">:$name,
    ArrayRefParameter<"int64_t", "one bound per axis, -1 dynamic">:$grid,
    OptionalArrayRefParameter<"::mlir::StringAttr">:$grid_names,
    OptionalArrayRefParameter<"int64_t">:$vmapped_dims,
    DefaultValuedParameter<"int64_t", "0">:$num_scalar_prefetch,
    ArrayRefParameter<"::mlir::pallas::BlockSpecAttr">:$in_specs,
    ArrayRefParameter<"::mlir::pallas::BlockSpecAttr">:$out_specs,
    OptionalArrayRefParameter<"int64_t",
                              "flat (input, output) pairs">:$input_output_aliases,
    OptionalParameter<"::mlir::pallas::CompilerParamsAttr">:$compiler_params,
    OptionalArrayRefParameter<"::mlir::pallas::RefType">:$scratch,
    ArrayRefParameter<"::mlir::RankedTensorType">:$input_types,
    ArrayRefParameter<"::mlir::RankedTensorType">:$output_types
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The call's name: `name`, or the kernel's symbol when absent.
    ::llvm::StringRef getCallName() const {
      return getName() ? getName().getValue()
                       : getKernel().getValue();
    }
  }];
}

#endif // PALLAS_GPU_CALL_ATTRS_TD
