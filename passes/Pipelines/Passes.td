//===- Passes.td - the passes only the pipelines use ------*- tablegen -*-===//
//
// Passes of passes/Pipelines: the GPU codegen pipelines use them, and
// pallasc-opt registers them for the lit tests (registerPallasPipelinesPasses).
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_PIPELINES_PASSES_TD
#define PALLASC_PASSES_PIPELINES_PASSES_TD

include "mlir/Pass/PassBase.td"

def PallasVerify : Pass<"pallas-verify", "::mlir::ModuleOp"> {
  let summary = "Runs MLIR's verifier on the module (fails on invalid IR)";
  let description = [{
    The GPU codegen pipelines end with it before serialization, so a driver
    that turns the per-pass verification off (the default, see
    `--verify-each`) still verifies what LLVM's translation receives
    (Verify.cpp).
  }];
}

def PallasExpandViews : Pass<"pallas-expand-views"> {
  let summary = "expand-strided-metadata applied to the view ops alone";
  let description = [{
    Upstream's expand-strided-metadata patterns, applied from the view ops
    (subview, expand/collapse_shape, extract_strided_metadata,
    extract_aligned_pointer_as_index) instead of over the whole module: the
    same rewrites, a fraction of the time on large kernels (ExpandViews.cpp).
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect"];
}

def PallasGpuModuleToPtx : Pass<"pallas-gpu-module-to-ptx",
                                 "::mlir::ModuleOp"> {
  let summary = "Serializes each gpu.module with an #nvvm.target to PTX in a "
                "gpu.binary (gpu-module-to-binary format=isa, libdevice linked "
                "only when called, pallasc's LLVM pipeline)";
  let description = [{
    Each gpu.module with an `#nvvm.target` becomes a gpu.binary holding its
    PTX, as gpu-module-to-binary with format `isa` writes it, but with
    libdevice linked only into modules that call it and pallasc's LLVM
    optimization pipeline (PtxSerialize.cpp). The CUDA codegen pipeline ends
    with it.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::NVVM::NVVMDialect"];
  let options = [
    Option<"toolkitPath", "toolkit", "std::string", /*default=*/"",
           "CUDA toolkit directory whose nvvm/libdevice is linked "
           "(default: CUDA_HOME, CUDA_ROOT, CUDA_PATH)">
  ];
}

def PallasGpuBindSymbols : Pass<"pallas-gpu-bind-symbols",
                                 "::mlir::ModuleOp"> {
  let summary = "Replaces each pallas.symbol_value in a GPU kernel with the "
                "kernel's parameter of that symbol";
  let description = [{
    pallas-to-linalg keeps `pallas.symbol_value` on the GPU targets, marked
    with its symbol's index `s` among the call's symbols sorted by name
    (`pallas.symbol_index`); pallas-to-gpu copies it, as scalar code, into
    the kernel `gpu.func`, whose launch record (`pallas.gpu.launch`) lists the
    `#pallas.gpu_param<symbol, symbols[s]>` parameters (an `i32` each, checked
    by the launcher to fit). This pass replaces the op with that parameter,
    widened to the op's type (BindSymbols.cpp).

    Before:
    ```mlir
    gpu.func @k(%x: memref<8xf32>, %o: memref<8xf32>, %g: i32, %n: i32) kernel
        attributes {pallas.gpu.launch = #pallas.gpu_launch<..., params = [
          ..., #pallas.gpu_param<i32, grid_bounds[0], axis = 0>,
          #pallas.gpu_param<symbol, symbols[0]>]>} {
      %v = pallas.symbol_value "n" {pallas.symbol_index = 0 : i64} : index
    ```
    After: `%v = arith.index_castui %n : i32 to index`.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def PallasRefusePackedIntegers : Pass<"pallas-refuse-packed-integers",
                                       "::mlir::ModuleOp"> {
  let summary = "Refuses a kernel with i4/i2 values (int4, uint4, int2, "
                "uint2) on a target without a packed lowering";
  let description = [{
    int4/uint4 (`i4`) and int2/uint2 (`i2`) arrays are stored packed, 2 or
    4 elements per byte with the first in the low bits, as XLA and ml_dtypes
    pack them (docs/gridspec.md). The GPU pipelines have no lowering of
    packed storage yet: they start with this pass, which fails at the first
    value (an op result or a block argument: a ref, a tensor or a scalar)
    whose element type is `i4` or `i2`, naming the dtype and the `target`,
    instead of computing with a widened copy. A module without such values
    is untouched, and so is every module for target `cpu`, whose pipeline
    lowers packed storage (pallas-emulate-packed-integers;
    RefusePackedIntegers.cpp).
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "the target named in the message (cpu, cuda:sm_90a, rocm:gfx942)">
  ];
}

def PallasEmulatePackedIntegers : Pass<"pallas-emulate-packed-integers",
                                       "::mlir::ModuleOp"> {
  let summary = "Stores i4/i2 memrefs packed in bytes, as XLA packs int4, "
                "uint4, int2 and uint2 (the host pipeline)";
  let description = [{
    The CPU pipeline runs it after bufferization and linalg-to-loops. Every
    memref of `i4` or `i2` elements (the kernel's ref arguments, scratch,
    allocations, views) becomes a one-dimensional memref of bytes holding
    the elements packed, 2 or 4 per byte, element 0 in the low bits, with no
    padding between rows (docs/gridspec.md#arrays); the runtime passes those
    arrays' blocks packed so. A load becomes a byte load, a shift right and a
    truncation; a store a read-modify-write of its byte under a mask
    (upstream's narrow-type emulation). Arithmetic stays in `i4`/`i2`.

    Before:
    ```mlir
    func.func @k(%x: memref<8x128xi4>) -> i4 {
      %v = memref.load %x[%i, %j] : memref<8x128xi4>
    ```
    After: `%x: memref<512xi8>`, `memref.load %x[(i * 128 + j) floordiv 2]`,
    `arith.shrsi` by `(j mod 2) * 4`, `arith.trunci` to `i4`.

    A copy between packed memrefs of different layouts becomes a loop of
    element loads and stores first. A view that is not whole rows of static
    sizes is refused at its location (EmulatePackedIntegers.cpp).
  }];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

#endif // PALLASC_PASSES_PIPELINES_PASSES_TD
