//===- GridSpec.h - The pallasc.gridspec/v1 JSON grid spec -------*- C++ -*-===//
//
// A plain C++ model of one `pallas_call`'s parameters, as read from the JSON
// grid spec (schema `pallasc.gridspec/v1`, docs/gridspec.md). The parser checks
// everything that can be checked without the kernel: schema, types, ranges,
// counts, ranks, aliasing, overflow. The checks that need the kernel (index
// map arity against a parsed map, kernel signature) are made when the spec is
// turned into a `pallas.call` (src/Spec/SpecToIR.h) and by its verifier.
//
// This header is free of nlohmann/json and of exceptions: it can be included
// from code built with -fno-exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_SPEC_GRIDSPEC_H
#define PALLASC_SRC_SPEC_GRIDSPEC_H

#include "src/Spec/SymExpr.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace pallasc::spec {

/// Memory spaces a block spec or scratch buffer may name.
enum class MemorySpace { Default, Any, Smem, Vmem, Gmem, Hbm, Semaphore };

/// The spelling used in JSON and in the IR ("default", "any", "smem", ...).
const char *memorySpaceName(MemorySpace ms);

/// Every memory space, in the order of the enum (and of the dialect's
/// #pallas.memory_space, which test/Spec/SpecToIRTest.cpp checks).
const std::vector<MemorySpace> &allMemorySpaces();

/// The `dimension_semantics` a spec may name, in the order of the dialect's
/// #pallas.dimension_semantics (SpecToIR reads them through the dialect's
/// parser of that enum; test/Spec/SpecToIRTest.cpp checks the two agree).
const std::vector<std::string> &dimensionSemanticsNames();

/// One entry of `block_shape`.
struct BlockDim {
  enum class Kind {
    Blocked,  ///< An int: the index map returns a block index.
    Squeezed, ///< null: size 1, dropped from the kernel's ref shape.
    Element,  ///< {"element": n, "padding": [lo, hi]}: element offset.
  };
  Kind kind = Kind::Blocked;
  int64_t size = 0; ///< 1 for Squeezed.
  int64_t padLow = 0, padHigh = 0;
};

/// An `index_map`.
struct IndexMap {
  enum class Kind {
    Zeros,  ///< Absent: every index is 0.
    Affine, ///< "(i, j) -> (i, j floordiv 2)": text in `text`.
    Func,   ///< "@name": a func.func in the kernel module; name in `text`
            ///< without the '@'.
  };
  Kind kind = Kind::Zeros;
  std::string text;
};

/// One of `in_specs` / `out_specs`.
struct BlockSpec {
  /// Absent `block_shape`: the whole array (filled in with the array's shape
  /// as Blocked dims by the parser, so `blockShape` always has the array's
  /// rank after a successful parse); `hasBlockShape` records whether the user
  /// wrote one.
  bool hasBlockShape = false;
  std::vector<BlockDim> blockShape;
  IndexMap indexMap;
  MemorySpace memorySpace = MemorySpace::Default;
  /// `"buffer_count": N` (Pallas' `pipeline_mode=pl.Buffered(N)`); 0 when
  /// absent.
  int64_t bufferCount = 0;
  /// JSON path of this spec, e.g. "in_specs[1]", for later diagnostics.
  std::string path;
};

/// One of `inputs` / `outputs`.
struct ArraySpec {
  /// kSymbolicDim where the dimension is a symbol expression.
  std::vector<int64_t> shape;
  /// Empty when every dimension is static; else one expression per
  /// dimension (the static ones as constants): `"shape": ["n", 4096]`.
  std::vector<DimExpr> shapeExprs;
  bool isSymbolic() const { return !shapeExprs.empty(); }
  /// Canonical dtype spelling: bool, i8, i16, i32, i64, u8, u16, u32, u64,
  /// f16, bf16, f32, f64.
  std::string dtype;
  /// `"linear": true`: a pinned buffer that must be aliased to an output.
  bool linear = false;
  std::string path; ///< e.g. "inputs[0]".
  /// A hi (aggregate) input, `{"hi": NAME, "parts": [array, ...]}`: the
  /// aggregate's name and its lo parts (`!pallas.hi<NAME, parts...>`).
  /// `shape` and `dtype` are then those of its first part of the highest
  /// rank: the array its block spec describes (pallas-hi-to-lo gives a part
  /// of lower rank the spec's leading dimensions).
  std::string hiName;
  std::vector<ArraySpec> parts;
  bool isHi() const { return !parts.empty(); }
};

/// One of `scratch_shapes`.
struct ScratchSpec {
  std::vector<int64_t> shape;
  std::string dtype;
  MemorySpace memorySpace = MemorySpace::Vmem;
  std::string path;
};

struct CostEstimate {
  int64_t flops = 0;
  int64_t bytesAccessed = 0;
  int64_t transcendentals = 0;
};

/// `compiler_params`: {"gpu": {...}, "tpu": {...}}. Unknown keys are errors.
struct CompilerParams {
  // gpu
  std::optional<int64_t> numWarps;  ///< gpu.num_warps, a power of 2 in [1, 32]
  std::optional<int64_t> numStages; ///< gpu.num_stages, >= 1
  bool strictFp = false;            ///< gpu.strict_fp: as --strict-fp
  // tpu
  std::vector<std::string> dimensionSemantics; ///< "parallel"|"arbitrary"|
                                               ///< "core_parallel"|
                                               ///< "subcore_parallel"
  std::optional<int64_t> vmemLimitBytes;       ///< tpu.vmem_limit_bytes > 0
  bool hasSideEffects = false;                 ///< tpu.has_side_effects
  std::optional<int64_t> collectiveId;         ///< tpu.collective_id >= 0
  bool empty() const {
    return !numWarps && !numStages && !strictFp && dimensionSemantics.empty() &&
           !vmemLimitBytes && !hasSideEffects && !collectiveId;
  }
};

/// One entry of `transforms`.
struct Transform {
  enum class Kind { Vmap, Jvp, Dce, DischargeState, HiToLo };
  Kind kind = Kind::Jvp;
  // vmap: {"in_axes": [int|null, ...], "axis_size": n | "expr"}
  std::vector<std::optional<int64_t>> inAxes;
  int64_t axisSize = 0; ///< 0 when the axis size is symbolic (axisExpr)
  // dce: {"used_outputs": [bool, ...]}
  std::vector<bool> usedOutputs;
  std::string path; ///< e.g. "transforms[0]".
  /// vmap's symbolic axis size: a linear expression over the declared
  /// symbols (docs/transforms.md#symbolic-axis-size); axisSize is then 0.
  std::optional<DimExpr> axisExpr;
};

/// Sentinel in `GridSpec::grid` for a "dynamic" bound.
constexpr int64_t kDynamicGridDim = -1;
/// Sentinel in `GridSpec::grid` for an entry that is a symbol expression
/// (in `GridSpec::gridExprs`).
constexpr int64_t kSymbolicGridDim = -2;
/// Sentinel in `ArraySpec::shape` for a symbolic dimension (in
/// `ArraySpec::shapeExprs`); MLIR's ShapedType::kDynamic.
constexpr int64_t kSymbolicDim = INT64_MIN;

struct GridSpec {
  std::string kernel;          ///< symbol of the pallas.kernel
  std::string name;            ///< artifact name; defaults to `kernel`
  /// The declared shape symbols, in the order of the "symbols" object
  /// (docs/gridspec.md#symbols).
  std::vector<SymbolSpec> symbols;
  std::vector<int64_t> grid; ///< kDynamicGridDim for "dynamic",
                             ///< kSymbolicGridDim for an expression
  /// Empty when no grid entry is an expression; else one per grid entry
  /// (meaningful where `grid` holds kSymbolicGridDim).
  std::vector<DimExpr> gridExprs;
  std::vector<std::string> gridNames; ///< empty or grid.size() entries
  int64_t numScalarPrefetch = 0;
  std::vector<ArraySpec> inputs;  ///< includes the scalar-prefetch operands
                                  ///< first (as pallas_call does)
  std::vector<ArraySpec> outputs;
  std::vector<BlockSpec> inSpecs; ///< one per non-prefetch input
  std::vector<BlockSpec> outSpecs; ///< one per output
  std::vector<ScratchSpec> scratchShapes;
  /// (input index, output index), sorted by input index.
  std::vector<std::pair<int64_t, int64_t>> inputOutputAliases;
  std::optional<CostEstimate> costEstimate;
  CompilerParams compilerParams;
  std::map<std::string, std::string> metadata;
  std::vector<Transform> transforms;
};

/// A located error: `path` is a JSON path ("in_specs[1].block_shape[0]") or
/// empty; `line`/`column` are 1-based positions for syntax errors (0 if
/// unknown).
struct SpecError {
  std::string path;
  std::string message;
  int line = 0, column = 0;
};

/// 1-based line and column of byte `offset` of `text` (offset == size: just
/// past the end), for the located errors of a JSON document.
void lineColumn(const std::string &text, size_t offset, int &line,
                int &column);

/// Parses and validates a grid spec. On failure returns std::nullopt and
/// appends at least one error to `errors`. Never throws, never aborts, and
/// bounds its work and memory by the input size on hostile input.
std::optional<GridSpec> parseGridSpec(const std::string &text,
                                      std::vector<SpecError> &errors);

/// Where `spec` first uses a symbol (the grid, then the inputs, then the
/// outputs): the symbol and the JSON path ("inputs[0].shape[0]"); nullopt
/// when every shape and grid entry is static.
std::optional<std::pair<std::string, std::string>>
firstSymbolUse(const GridSpec &spec);

/// Infers the value of each symbol of `spec` from the concrete shapes of its
/// inputs (`shapes[i]` for `spec.inputs[i]`, named `sources[i]` in messages,
/// e.g. the .npy file): a dimension that is one symbol's linear function
/// gives it, every other symbolic dimension must then agree, and every value
/// must satisfy its symbol's constraints. On failure returns false with a
/// message naming the operand, the dimension and the symbol, and in
/// `errorSource` the source it is about (empty: the spec itself, as for a
/// symbol that no input dimension determines).
bool inferSymbols(const GridSpec &spec,
                  const std::vector<std::vector<int64_t>> &shapes,
                  const std::vector<std::string> &sources,
                  std::map<std::string, int64_t> &values,
                  std::string &errorSource, std::string &error);

/// `spec` at the symbols' `values` (every symbol used must have one): each
/// symbolic dimension and grid entry evaluated, a static spec equal to the
/// one written with those sizes. False with a message when a size leaves
/// int64.
bool instantiateSymbols(GridSpec &spec,
                        const std::map<std::string, int64_t> &values,
                        std::string &error);

/// Parses a dtype spelling (accepting aliases such as "float32", "bfloat16",
/// "int8", "uint8", "bool_") to its canonical form; nullopt if unknown.
std::optional<std::string> canonicalDtype(const std::string &dtype);

/// Whether `s` is an identifier as the spec's names must be: a letter or
/// `_`, then letters, digits, `_`, `$` or `.`.
bool isIdentifier(const std::string &s);

/// Size in bytes of one element of a canonical dtype (bool = 1).
int64_t dtypeByteWidth(const std::string &canonicalDtype);

} // namespace pallasc::spec

#endif // PALLASC_SRC_SPEC_GRIDSPEC_H
