//===- PallasTypes.td - pallas types -----------------------*- tablegen -*-===//

#ifndef PALLAS_TYPES_TD
#define PALLAS_TYPES_TD

include "dialects/Pallas/IR/PallasAttrs.td"
include "mlir/IR/AttrTypeBase.td"

class Pallas_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Pallas_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Pallas_RefType : Pallas_Type<"Ref", "ref"> {
  let summary = "a mutable reference to a block of an array";
  let description = [{
    Pallas' `Ref`: a statically shaped buffer the kernel reads and writes
    with `pallas.load`/`pallas.store`. The memory space is omitted when it
    is `default`.

    ```mlir
    !pallas.ref<128x64xbf16>
    !pallas.ref<128x128xf32, vmem>
    !pallas.ref<8xi32, smem>
    ```
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t">:$shape,
    "::mlir::Type":$elementType,
    "::mlir::pallas::MemorySpace":$memorySpace
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    TypeBuilderWithInferredContext<(ins "::llvm::ArrayRef<int64_t>":$shape,
        "::mlir::Type":$elementType,
        CArg<"::mlir::pallas::MemorySpace",
             "::mlir::pallas::MemorySpace::Default">:$memorySpace), [{
      return $_get(elementType.getContext(), shape, elementType, memorySpace);
    }]>
  ];
  let extraClassDeclaration = [{
    int64_t getRank() const { return getShape().size(); }
    int64_t getNumElements() const;
    /// The tensor type of the whole ref's value.
    ::mlir::RankedTensorType getValueType() const {
      return ::mlir::RankedTensorType::get(getShape(), getElementType());
    }
    RefType withMemorySpace(MemorySpace ms) const {
      return RefType::get(getContext(), getShape(), getElementType(), ms);
    }
    RefType withShape(::llvm::ArrayRef<int64_t> shape) const {
      return RefType::get(getContext(), shape, getElementType(),
                          getMemorySpace());
    }
  }];
}

def Pallas_HiType : Pallas_Type<"Hi", "hi"> {
  let summary = "an aggregate (hijax) value made of several lo values";
  let description = [{
    A high-level type made of lo parts, e.g. a quantized array stored as
    int8 values and f32 scales. `pallas-hi-to-lo` flattens operands, results
    and kernel arguments of this type into their parts, in order.

    ```mlir
    !pallas.hi<"qarray", tensor<256x128xi8>, tensor<256xf32>>
    !pallas.hi<"qarray", !pallas.ref<64x128xi8>, !pallas.ref<64xf32>>
    ```
  }];
  let parameters = (ins StringRefParameter<"name of the aggregate">:$name,
                        ArrayRefParameter<"::mlir::Type", "parts">:$parts);
  let assemblyFormat = "`<` $name `,` $parts `>`";
  let genVerifyDecl = 1;
}

def Pallas_AnyRef : Type<CPred<"::llvm::isa<::mlir::pallas::RefType>($_self)">,
                         "pallas ref", "::mlir::pallas::RefType">;

#endif // PALLAS_TYPES_TD
