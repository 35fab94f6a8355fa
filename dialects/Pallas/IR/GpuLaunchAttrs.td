//===- GpuLaunchAttrs.td - pallas-to-gpu's launch record ---*- tablegen -*-===//
//
// The typed launch record pallas-to-gpu attaches to its gpu.func
// (`pallas.gpu.launch`), in a file of its own: only the dialect's
// registration, the writer and the readers include GpuLaunchAttrs.h, so a
// change here rebuilds those and not everything that includes the dialect.
//
//===----------------------------------------------------------------------===//

#ifndef PALLAS_GPU_LAUNCH_ATTRS_TD
#define PALLAS_GPU_LAUNCH_ATTRS_TD

include "dialects/Pallas/IR/PallasDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Pallas_GpuParamKind : I32EnumAttr<"GpuParamKind",
    "what one kernel parameter of a GPU launch is", [
    I32EnumAttrCase<"Pointer", 0, "pointer">,
    I32EnumAttrCase<"GridBound", 1, "i32">,
    I32EnumAttrCase<"TensorMap", 2, "tensor_map">,
    I32EnumAttrCase<"Symbol", 3, "symbol">]> {
  let cppNamespace = "::mlir::pallas";
  let genSpecializedAttr = 0;
}

def Pallas_GpuOperandGroup : I32EnumAttr<"GpuOperandGroup",
    "the list a kernel parameter's operand is taken from", [
    I32EnumAttrCase<"Inputs", 0, "inputs">,
    I32EnumAttrCase<"Outputs", 1, "outputs">,
    I32EnumAttrCase<"GridBounds", 2, "grid_bounds">,
    I32EnumAttrCase<"Symbols", 3, "symbols">]> {
  let cppNamespace = "::mlir::pallas";
  let genSpecializedAttr = 0;
}

class Pallas_GpuAttr<string name, string attrMnemonic>
    : AttrDef<Pallas_Dialect, name> {
  let mnemonic = attrMnemonic;
}

def Pallas_GpuParamAttr : Pallas_GpuAttr<"GpuParam", "gpu_param"> {
  let summary = "one kernel parameter of a GPU launch";
  let description = [{
    The kind (`pointer`: the device address of an operand; `i32`: the size
    of a dynamic pallas grid axis; `tensor_map`: the device address of a
    CUtensorMap the launcher encodes; `symbol`: the value of a shape symbol
    of a symbolic call, as i32), the operand (`inputs[i]`, `outputs[j]`,
    `grid_bounds[k]`, `symbols[s]`: the call's symbols sorted by name),
    then the kind's fields: `axis` for
    `i32`; `dtype`, `global_shape`, `box_shape`, `swizzle`, `interleave`,
    `l2_promotion` and `oob_fill` for `tensor_map`.

    ```mlir
    #pallas.gpu_param<pointer, outputs[0]>
    #pallas.gpu_param<i32, grid_bounds[0], axis = 1>
    #pallas.gpu_param<symbol, symbols[0]>
    #pallas.gpu_param<tensor_map, inputs[1], dtype = bf16,
        global_shape = [256, 512], box_shape = [64, 64], swizzle = "128B",
        interleave = "none", l2_promotion = "128B", oob_fill = "zero">
    ```
  }];
  let parameters = (ins
    "::mlir::pallas::GpuParamKind":$kind,
    "::mlir::pallas::GpuOperandGroup":$group,
    "int64_t":$index,
    OptionalParameter<"::std::optional<int64_t>">:$axis,
    OptionalParameter<"::mlir::Type">:$dtype,
    OptionalArrayRefParameter<"int64_t">:$global_shape,
    OptionalArrayRefParameter<"int64_t">:$box_shape,
    OptionalParameter<"::mlir::StringAttr">:$swizzle,
    OptionalParameter<"::mlir::StringAttr">:$interleave,
    OptionalParameter<"::mlir::StringAttr">:$l2_promotion,
    OptionalParameter<"::mlir::StringAttr">:$oob_fill
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// `inputs[3]`, `outputs[0]`, `grid_bounds[1]`: the manifest's
    /// `operand`.
    std::string getOperandName() const;
  }];
}

def Pallas_GpuLaunchAttr : Pallas_GpuAttr<"GpuLaunch", "gpu_launch"> {
  let summary = "the launch record of a GPU kernel";
  let description = [{
    What pallas-to-gpu records on its gpu.func (`pallas.gpu.launch`) for
    the manifest's `launch` object and the generated launchers: the entry
    symbol, the launch grid (x, y, z; -1 where a dynamic pallas axis makes
    it known only at launch), the pallas grid axes folded into x, y and z
    (innermost first), the block (threads per x, y, z), the warps per block
    and the threads per warp (wavefront), the sequential pallas axes (loops
    inside the kernel), the vmapped axes, the dynamic shared memory (LDS)
    per block and the part of it the scratch buffers take, then the kernel
    parameters in launch order. The verifier checks what the launchers rely
    on (docs/dialect.md, "GPU launch record").

    ```mlir
    #pallas.gpu_launch<entry = "add", grid = [4, 2, 1],
        grid_axes = [[0], [1], []], block = [128, 1, 1], num_warps = 4,
        warp_size = 32, sequential_axes = [], vmapped_axes = [],
        dynamic_shared_memory_bytes = 0, scratch_shared_memory_bytes = 0,
        params = [#pallas.gpu_param<pointer, inputs[0]>,
                  #pallas.gpu_param<pointer, outputs[0]>]>
    ```
  }];
  let parameters = (ins
    StringRefParameter<"the kernel's symbol">:$entry,
    ArrayRefParameter<"int64_t", "blocks along x, y, z">:$grid,
    ArrayRefParameter<"int64_t", "pallas axes folded into x">:$grid_axes_x,
    ArrayRefParameter<"int64_t", "pallas axes folded into y">:$grid_axes_y,
    ArrayRefParameter<"int64_t", "pallas axes folded into z">:$grid_axes_z,
    ArrayRefParameter<"int64_t", "threads along x, y, z">:$block,
    "int64_t":$num_warps,
    "int64_t":$warp_size,
    ArrayRefParameter<"int64_t", "sequential pallas axes">:$sequential_axes,
    ArrayRefParameter<"int64_t", "vmapped pallas axes">:$vmapped_axes,
    "int64_t":$dynamic_shared_memory_bytes,
    "int64_t":$scratch_shared_memory_bytes,
    ArrayRefParameter<"::mlir::pallas::GpuParamAttr",
                      "kernel parameters in launch order">:$params
  );
  let assemblyFormat = [{
    `<` `entry` `=` $entry `,`
        `grid` `=` custom<GpuList>($grid) `,`
        `grid_axes` `=` custom<GpuGridAxes>($grid_axes_x, $grid_axes_y,
                                            $grid_axes_z) `,`
        `block` `=` custom<GpuList>($block) `,`
        `num_warps` `=` $num_warps `,`
        `warp_size` `=` $warp_size `,`
        `sequential_axes` `=` custom<GpuList>($sequential_axes) `,`
        `vmapped_axes` `=` custom<GpuList>($vmapped_axes) `,`
        `dynamic_shared_memory_bytes` `=` $dynamic_shared_memory_bytes `,`
        `scratch_shared_memory_bytes` `=` $scratch_shared_memory_bytes `,`
        `params` `=` custom<GpuList>($params) `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The pallas grid axes folded into launch dimension `c` (0 x, 1 y,
    /// 2 z), innermost first.
    ::llvm::ArrayRef<int64_t> getGridAxes(unsigned c) const {
      return c == 0 ? getGridAxesX() : c == 1 ? getGridAxesY()
                                              : getGridAxesZ();
    }
  }];
}

#endif // PALLAS_GPU_LAUNCH_ATTRS_TD
