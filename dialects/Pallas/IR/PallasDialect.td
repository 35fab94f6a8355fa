//===- PallasDialect.td - The pallas dialect ---------------*- tablegen -*-===//

#ifndef PALLAS_DIALECT_TD
#define PALLAS_DIALECT_TD

include "mlir/IR/OpBase.td"

def Pallas_Dialect : Dialect {
  let name = "pallas";
  let summary = "Pallas kernels and the pallas_call that launches them";
  let description = [{
    The `pallas` dialect models a Pallas kernel (a function over refs to
    blocks of arrays, executed once per point of a grid) and the
    `pallas_call` that maps the call's arrays to those blocks. Block values
    are ranked tensors; elementwise math uses upstream `arith`/`math`,
    control flow uses `scf`.
  }];
  let cppNamespace = "::mlir::pallas";
  let useDefaultTypePrinterParser = 1;
  // The attributes of PallasAttrs.td, GpuLaunchAttrs.td and GpuCallAttrs.td
  // (files of their own): PallasDialect.cpp dispatches to all three.
  let useDefaultAttributePrinterParser = 0;
  // `pallas.gpu.launch` must hold a #pallas.gpu_launch, `pallas.gpu.call` a
  // #pallas.gpu_call.
  let hasOperationAttrVerify = 1;
  // Folders (broadcast/reshape of splats) produce constants: arith.constant.
  let hasConstantMaterializer = 1;
  let extraClassDeclaration = [{
    ::mlir::Attribute parseAttribute(::mlir::DialectAsmParser &parser,
                                     ::mlir::Type type) const override;
    void printAttribute(::mlir::Attribute attr,
                        ::mlir::DialectAsmPrinter &os) const override;

  private:
    /// Adds the attributes of GpuLaunchAttrs.td (GpuLaunchAttrs.cpp).
    void registerGpuLaunchAttrs();
    /// Adds the attributes of GpuCallAttrs.td (GpuCallAttrs.cpp).
    void registerGpuCallAttrs();
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

class Pallas_Op<string mnemonic, list<Trait> traits = []>
    : Op<Pallas_Dialect, mnemonic, traits>;

#endif // PALLAS_DIALECT_TD
