//===- Passes.td - pallasc call-level transforms -----------*- tablegen -*-===//
//
// The call-level transformations JAX applies to pallas_call
// (docs/transforms.md). Each rewrites the module's pallas.call, its kernel and the
// wrapper func.func @main together.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_PASSES_TRANSFORMS_PASSES_TD
#define PALLASC_PASSES_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def PallasVmap : Pass<"pallas-vmap", "::mlir::ModuleOp"> {
  let summary = "Batches a pallas_call (JAX's _pallas_call_batching_rule, "
                "jax/_src/pallas/pallas_call.py)";
  let description = [{
    Prepends a grid dimension of `axis-size`, inserts a squeezed block
    dimension at each batched operand's batch axis (its index map receives the
    new grid index there), batches outputs at axis 0, and records the new grid
    axis in `vmapped_dims` so the kernel's `program_id` keeps its meaning.
    With `axis-expr` (symbolic calls only) the new grid axis is dynamic,
    bounded by that expression of the wrapper's symbol arguments, and the
    batched shape entries and `symbolic.grid` carry the expression.
  }];
  let options = [
    Option<"axisSize", "axis-size", "int64_t", "0", "Size of the batch axis">,
    Option<"axisExpr", "axis-expr", "std::string", "",
           "Symbolic size of the batch axis: a linear expression over the "
           "symbols of the (symbolic) calls, written without spaces "
           "(e.g. b or 2*b); replaces axis-size">,
    ListOption<"inAxes", "in-axes", "int64_t",
               "Batch axis of each call input, -1 if not batched">
  ];
  let dependentDialects = ["::mlir::pallas::PallasDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def PallasJvp : Pass<"pallas-jvp", "::mlir::ModuleOp"> {
  let summary = "Forward-mode derivative of a pallas_call (_pallas_call_jvp_rule)";
  let description = [{
    Replaces the call by one computing primal and tangent outputs: the kernel
    takes (primal inputs, tangent inputs, primal outputs, tangent outputs,
    scratch), block mappings are duplicated and the cost estimate doubled.
  }];
  let dependentDialects = ["::mlir::pallas::PallasDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def PallasDce : Pass<"pallas-dce", "::mlir::ModuleOp"> {
  let summary = "Removes unused outputs of a pallas_call and dead kernel work";
  let description = [{
    With `used-outputs` (one 0/1 per output), drops unused outputs and the
    kernel work that only fed them; eliminates the call when nothing is used,
    no ref input is live and the call has no side effects.
  }];
  let options = [
    ListOption<"usedOutputs", "used-outputs", "int64_t",
               "1 if the output is used, 0 if not (default: all used)">
  ];
  let dependentDialects = ["::mlir::pallas::PallasDialect",
                           "::mlir::func::FuncDialect"];
}

def PallasDischargeState : Pass<"pallas-discharge-state", "::mlir::ModuleOp"> {
  let summary = "Turns closed-over refs into aliased inputs and outputs";
  let description = [{
    JAX's _pallas_call_state_discharge_rule: each pallas.ref_global the
    kernel uses becomes a leading input and a leading output of the call,
    aliased to each other, in memory space `any`.
  }];
  let dependentDialects = ["::mlir::pallas::PallasDialect",
                           "::mlir::func::FuncDialect"];
}

def PallasHiToLo : Pass<"pallas-hi-to-lo", "::mlir::ModuleOp"> {
  let summary = "Flattens !pallas.hi aggregates into their lo parts";
  let description = [{
    JAX's _pallas_call_to_lojax: hi operands, results and kernel
    arguments become their parts; input_output_aliases are remapped per
    flattened index.
  }];
  let dependentDialects = ["::mlir::pallas::PallasDialect",
                           "::mlir::func::FuncDialect"];
}

def PallasLegalizeMath : Pass<"pallas-legalize-math", "::mlir::ModuleOp"> {
  let summary = "Rewrite the math ops some backends lack into ones every "
                "backend lowers, exactly, and give float -> integer "
                "conversions XLA's saturating semantics";
  let description = [{
    Runs first in the CPU, CUDA and ROCm pipelines, on the kernel's tensors
    and scalars (so `pallasc run` on the CPU, the GPU emulator and the GPU
    artifacts compute the same thing). After it, every `math` op the
    dialect accepts reaches each code generator as an op the target lowers
    (docs/dialect.md has the table). Each rewrite is exact, for every
    element type:

    - `math.sincos` → `math.sin` + `math.cos` (the GPU lowering distributes
      single-result elementwise ops);
    - `math.clampf %x to [%lo, %hi]` → `arith.minimumf(arith.maximumf(%x,
      %lo), %hi)`: a clamp that propagates NaN, as `lax.clamp` (upstream's
      own expansion applies min and max the other way round, and AMD's
      `v_med3` differs on NaN);
    - `math.isnan`, `math.isinf`, `math.isfinite`, `math.isnormal` → integer
      tests of the exponent and mantissa bits;
    - `math.ipowi` → square-and-multiply over the exponent's bits (no loop:
      one step per bit); a negative exponent gives 1 for a base of 1, ±1 for
      -1 and 0 otherwise (as XLA's integer power; 0 for a base of 0 instead
      of upstream's division by zero).
    - `arith.fptosi`, `arith.fptoui` (float -> integer, any widths) → the
      conversion guarded by comparisons and selects, with XLA's semantics
      (those of LLVM's `fptosi.sat`/`fptoui.sat`, what JAX gives on every
      backend): NaN gives 0, a value at or beyond the integer type's range
      gives its minimum or maximum, others truncate toward zero. The
      conversion itself only sees in-range values. f16, bf16 (and narrower)
      sources are extended to f32 first (exact). Without it, out-of-range
      values are poison and each backend wraps or clamps its own way.

    Before:
    ```mlir
    %s, %c = math.sincos %x : tensor<8xf32>
    ```
    After:
    ```mlir
    %s = math.sin %x : tensor<8xf32>
    %c = math.cos %x : tensor<8xf32>
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def PallasExpandFp8 : Pass<"pallas-expand-fp8", "::mlir::ModuleOp"> {
  let summary = "Compute fp8 values in f32 and expand the conversions "
                "between fp8 and wider floats into integer operations";
  let description = [{
    fp8 arrays (`f8E4M3FN`, `f8E5M2`, `f8E4M3FNUZ`, `f8E5M2FNUZ`) are
    stored as bytes; no code generator computes with them. This pass runs
    after `pallas-legalize-math` on the kernel's tensors and scalars:

    - arithmetic with fp8 operands (`arith.addf`, `arith.cmpf`, ...)
      becomes the same op in f32 between an `arith.extf` of each operand
      and an `arith.truncf` of the result (upstream's
      unsupported-float emulation), as XLA computes fp8 arithmetic;
    - `arith.extf` from fp8 becomes integer operations on the byte that
      build the f32 bits (exact; subnormals, infinities and the NaN
      encodings of each format), then an exact conversion to the result
      type;
    - `arith.truncf` to fp8 rounds an f32 (f16 and bf16 are widened
      exactly first; f64 is first rounded to odd into f32, so the value is
      rounded once) to the nearest code, ties to even, with XLA's and
      ml_dtypes' rules: NaN gives the format's NaN, a value past the
      largest finite one gives infinity in `f8E5M2` and NaN in the formats
      without infinities, and the fnuz formats have no negative zero.

    Each format's constants come from its APFloat semantics. Loads, stores,
    selects and constants of fp8 are left as they are: every backend keeps
    them as bytes.

    Before:
    ```mlir
    %y = arith.truncf %x : tensor<8xf32> to tensor<8xf8E4M3FN>
    ```
    After (abridged):
    ```mlir
    %bits = arith.bitcast %x : tensor<8xf32> to tensor<8xi32>
    ... rounding to 3 mantissa bits, rebiasing, subnormals, overflow ...
    %byte = arith.trunci %code : tensor<8xi32> to tensor<8xi8>
    %y = arith.bitcast %byte : tensor<8xi8> to tensor<8xf8E4M3FN>
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def PallasResolvePlatform : Pass<"pallas-resolve-platform", "::mlir::ModuleOp"> {
  let summary = "Replace each pallas.platform_index with the branch the "
                "target platform takes, and drop the branches not taken";
  let description = [{
    Runs first in each target's pipeline (`cpu` on the CPU, `cuda` and
    `rocm` on the GPUs, `mosaic` on TPU, as JAX's lowerings name them):
    every `pallas.platform_index` becomes an `arith.constant`, and the
    `scf.if` chains that `lax.platform_dependent` becomes are folded to the
    branch taken, so the other branches never reach the target's lowering
    (they may use ops it lacks). An index with no group for the platform and
    no default is an error at its location, naming the platform and the
    groups. A module without `pallas.platform_index` is left untouched.

    Before (`platform = cuda`):
    ```mlir
    %i = pallas.platform_index [["cuda"], ["rocm"]] default : i32
    ```
    After:
    ```mlir
    %i = arith.constant 0 : i32
    ```
  }];
  let options = [
    Option<"platform", "platform", "std::string", /*default=*/"\"cpu\"",
           "the platform compiled for: cpu, cuda, rocm or mosaic">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def PallasChunkElementwise
    : Pass<"pallas-chunk-elementwise", "::mlir::ModuleOp"> {
  let summary = "Strip-mine a large block computed elementwise from iotas "
                "and scalars into a loop over chunks of its rows";
  let description = [{
    The GPU lowerings give each thread its share of a block and unroll the
    elementwise ops over it, so a kernel that computes a large block with a
    long chain of elementwise ops (JAX's shipped `random.philox`: ~1,300
    integer ops per element, on a 256 x 256 block) becomes straight-line
    code that grows with the block, and ptxas time grows faster still.

    This pass finds each `pallas.store` (no mask) of a tensor that is
    computed only by elementwise ops (`arith`, `math`, `pallas.select`),
    splat constants, `pallas.iota` and `pallas.broadcast_in_dim` of
    scalars or of size-1 dimensions, from values that are not tensors of
    the block's shape. When the chain's size times the block's elements is
    over `max-element-ops`, the store becomes an `scf.for` over chunks of
    the value's leading dimension (the largest divisor of it whose chunk
    fits the budget): each iteration computes the chain on its chunk (the
    leading-dimension iota offset by the chunk's start) and stores it at
    that offset. The result is the same value, element for element; code
    size no longer depends on the block size. Stores whose leading slice
    starts at a dynamic offset, strided or masked stores, and chains that
    read a block from memory are left as they are.

    Before (a 256 x 256 block, a chain of 1,300 ops):
    ```mlir
    %i = pallas.iota 0 : tensor<256x256xi32>
    ... elementwise ops on tensor<256x256xi32> ...
    pallas.store %o[], %r : !pallas.ref<256x256xi32>, tensor<256x256xi32>
    ```
    After:
    ```mlir
    scf.for %c = %c0 to %c256 step %c4 {
      %i0 = pallas.iota 0 : tensor<4x256xi32>
      %i = arith.addi %i0, (%c broadcast) : tensor<4x256xi32>
      ... the same ops on tensor<4x256xi32> ...
      pallas.store %o[%c_i32 : 4, 0 : 256], %r
          : !pallas.ref<256x256xi32>, tensor<4x256xi32>
    }
    ```
  }];
  let options = [
    Option<"maxElementOps", "max-element-ops", "int64_t", "1 << 19",
           "the most element-ops (the chain's op count times the elements "
           "of its value) one block or chunk may take">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

#endif // PALLASC_PASSES_TRANSFORMS_PASSES_TD
