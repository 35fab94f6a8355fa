//===- HostGrid.cpp - Running a compiled kernel's grid on the host -*- C++ -*-===//

#include "src/Launch/HostGrid.h"
#include "src/Launch/RuntimeSymbols.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>

namespace pallasc::launch {

//===----------------------------------------------------------------------===//
// Uninitialized values and array types (element types: ElementType.h)
//===----------------------------------------------------------------------===//

void fillUninitialized(void *data, int64_t count, ElementType type) {
  auto fill = [&](auto value) {
    using T = decltype(value);
    T *p = static_cast<T *>(data);
    std::fill(p, p + count, value);
  };
  switch (type) {
  case ElementType::F16:
    return fill(uint16_t(0x7e00));
  case ElementType::BF16:
    return fill(uint16_t(0x7fc0));
  case ElementType::F32:
    return fill(std::numeric_limits<float>::quiet_NaN());
  case ElementType::F64:
    return fill(std::numeric_limits<double>::quiet_NaN());
  case ElementType::F8E4M3FN:
    return fill(uint8_t(0x7f));
  case ElementType::F8E5M2:
    return fill(uint8_t(0x7e));
  case ElementType::F8E4M3FNUZ:
  case ElementType::F8E5M2FNUZ:
    return fill(uint8_t(0x80));
  case ElementType::I8:
    return fill(std::numeric_limits<int8_t>::min());
  case ElementType::I32:
    return fill(std::numeric_limits<int32_t>::min());
  case ElementType::I64:
    return fill(std::numeric_limits<int64_t>::min());
  case ElementType::I16:
  case ElementType::Bool:
  case ElementType::U8:
  case ElementType::U16:
  case ElementType::U32:
  case ElementType::U64:
  case ElementType::I4:
  case ElementType::U4:
  case ElementType::I2:
  case ElementType::U2: {
    uint64_t bytes = 0;
    if (count > 0 && storageBytes(type, static_cast<uint64_t>(count), bytes))
      std::memset(data, 0, bytes);
    return;
  }
  }
}

bool HostArrayType::byteSize(uint64_t &bytes) const {
  uint64_t n = 1;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(n, static_cast<uint64_t>(d), &n))
      return false;
  return storageBytes(type, n, bytes);
}

std::string HostArrayType::describe() const {
  return formatShape(shape) + " " + elementTypeName(type);
}

//===----------------------------------------------------------------------===//
// Index maps
//===----------------------------------------------------------------------===//

namespace {
/// Floor division and the remainder that goes with it (the sign of the
/// divisor), for b != 0 and not (a, b) = (INT64_MIN, -1).
int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t floorMod(int64_t a, int64_t b) {
  int64_t m = a % b;
  return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;
}
} // namespace

bool AffineProgram::evaluate(const std::vector<int64_t> &point, int64_t &out,
                             std::string &error) const {
  int64_t stack[64];
  size_t depth = 0;
  auto overflow = [&](int64_t l, int64_t r) {
    error = "index map value overflows int64 (" + std::to_string(l) +
            " and " + std::to_string(r) + ")";
    return false;
  };
  for (size_t i = 0; i < code.size(); ++i) {
    int64_t op = code[i];
    if (op == Const || op == Dim) {
      if (i + 1 >= code.size() || depth == 64) {
        error = "malformed index map program";
        return false;
      }
      int64_t v = code[++i];
      if (op == Dim) {
        if (v < 0 || v >= static_cast<int64_t>(point.size())) {
          error = "index map uses grid index " + std::to_string(v) +
                  " of a grid of rank " + std::to_string(point.size());
          return false;
        }
        v = point[v];
      }
      stack[depth++] = v;
      continue;
    }
    if (depth < 2 || op < Add || op > Mod) {
      error = "malformed index map program";
      return false;
    }
    int64_t r = stack[--depth], l = stack[depth - 1], &result = stack[depth - 1];
    switch (op) {
    case Add:
      if (__builtin_add_overflow(l, r, &result))
        return overflow(l, r);
      break;
    case Mul:
      if (__builtin_mul_overflow(l, r, &result))
        return overflow(l, r);
      break;
    default:
      if (r == 0) {
        error = "index map divides by zero";
        return false;
      }
      if (r == -1) {
        if (op == Mod)
          result = 0;
        else if (__builtin_sub_overflow(int64_t(0), l, &result))
          return overflow(l, r);
        break;
      }
      if (op == FloorDiv)
        result = floorDiv(l, r);
      else if (op == CeilDiv)
        result = floorDiv(l, r) + (floorMod(l, r) != 0);
      else
        result = floorMod(l, r);
      break;
    }
  }
  if (depth != 1) {
    error = "malformed index map program";
    return false;
  }
  out = stack[0];
  return true;
}

std::vector<int64_t> HostBlockMapping::kernelShape() const {
  std::vector<int64_t> shape;
  for (size_t i = 0; i < blockShape.size(); ++i)
    if (kinds[i] != Kind::Squeezed)
      shape.push_back(blockShape[i]);
  return shape;
}

int64_t HostCallPlan::numDynamicBounds() const {
  int64_t n = 0;
  for (size_t i = 0; i < grid.size(); ++i)
    n += grid[i] == -1 &&
         !(i < symbolic.gridIsExpr.size() && symbolic.gridIsExpr[i]);
  return n;
}

bool HostDimExpr::evaluate(const std::vector<int64_t> &values,
                           int64_t &out) const {
  int64_t acc = constant;
  for (size_t s = 0; s < coefficients.size(); ++s) {
    int64_t term;
    if (s >= values.size() ||
        __builtin_mul_overflow(coefficients[s], values[s], &term) ||
        __builtin_add_overflow(acc, term, &acc))
      return false;
  }
  if (divisor <= 0)
    return false;
  int64_t q = acc / divisor, r = acc % divisor;
  if (r != 0 && ((r > 0) == ceil))
    q += ceil ? 1 : -1;
  out = q;
  return true;
}

std::string HostDimExpr::str(const std::vector<HostSymbol> &symbols) const {
  std::string s;
  for (size_t i = 0; i < coefficients.size() && i < symbols.size(); ++i) {
    int64_t c = coefficients[i];
    if (c == 0)
      continue;
    if (!s.empty())
      s += c < 0 ? " - " : " + ";
    else if (c < 0)
      s += "-";
    int64_t m = c < 0 ? -c : c;
    s += (m == 1 ? std::string() : std::to_string(m) + "*") + symbols[i].name;
  }
  if (s.empty())
    s = std::to_string(constant);
  else if (constant != 0)
    s += (constant < 0 ? " - " : " + ") +
         std::to_string(constant < 0 ? -constant : constant);
  if (divisor == 1)
    return s;
  if (ceil)
    return "cdiv(" + s + ", " + std::to_string(divisor) + ")";
  bool compound = s.find(' ') != std::string::npos;
  return (compound ? "(" + s + ")" : s) + " // " + std::to_string(divisor);
}

bool instantiateSymbols(HostCallPlan &plan, const std::vector<int64_t> &values,
                        std::string &error) {
  const HostSymbolic &sym = plan.symbolic;
  if (values.size() != sym.symbols.size()) {
    error = "the call takes " + std::to_string(sym.symbols.size()) +
            " symbol values, got " + std::to_string(values.size());
    return false;
  }
  if (sym.empty())
    return true;
  std::vector<std::string> names;
  for (size_t s = 0; s < values.size(); ++s) {
    const HostSymbol &d = sym.symbols[s];
    std::string v = d.name + " = " + std::to_string(values[s]);
    if (values[s] < d.min)
      error = v + " is less than its minimum " + std::to_string(d.min);
    else if (d.max >= 0 && values[s] > d.max)
      error = v + " is greater than its maximum " + std::to_string(d.max);
    else if (values[s] % d.multipleOf != 0)
      error = v + " is not a multiple of " + std::to_string(d.multipleOf);
    if (!error.empty())
      return false;
    names.push_back(v);
  }
  std::string at;
  for (const std::string &n : names)
    at += (at.empty() ? " (" : ", ") + n;
  at += ")";
  for (size_t i = 0; i < plan.grid.size(); ++i) {
    if (i >= sym.gridIsExpr.size() || !sym.gridIsExpr[i])
      continue;
    int64_t g;
    if (!sym.grid[i].evaluate(values, g) || g < 0 || g > INT32_MAX) {
      error = "grid axis " + std::to_string(i) + " is " +
              (sym.grid[i].evaluate(values, g) ? std::to_string(g)
                                               : std::string("past int64")) +
              at + "; bounds must be in [0, 2^31)";
      return false;
    }
    plan.grid[i] = g;
  }
  auto shapes = [&](std::vector<HostArrayType> &arrays,
                    const std::vector<std::vector<HostDimExpr>> &exprs,
                    const char *what) {
    for (size_t k = 0; k < arrays.size() && k < exprs.size(); ++k) {
      for (size_t d = 0; d < exprs[k].size(); ++d) {
        int64_t v;
        if (!exprs[k][d].evaluate(values, v) || v < 0) {
          error = std::string(what) + " " + std::to_string(k) +
                  " dimension " + std::to_string(d) + " is " +
                  (exprs[k][d].evaluate(values, v) ? std::to_string(v)
                                                   : "past int64") +
                  at;
          return false;
        }
        arrays[k].shape[d] = v;
      }
      uint64_t bytes;
      if (!arrays[k].byteSize(bytes)) {
        error = std::string(what) + " " + std::to_string(k) + " (" +
                arrays[k].describe() + ") overflows 64-bit sizes" + at;
        return false;
      }
    }
    return true;
  };
  if (!shapes(plan.inputs, sym.inputs, "input") ||
      !shapes(plan.outputs, sym.outputs, "output"))
    return false;
  // The kernel takes the values sorted by the symbols' names.
  std::vector<std::pair<std::string, int64_t>> byName;
  for (size_t s = 0; s < values.size(); ++s)
    byName.emplace_back(sym.symbols[s].name, values[s]);
  std::sort(byName.begin(), byName.end());
  plan.kernelSymbolValues.clear();
  for (const auto &nv : byName)
    plan.kernelSymbolValues.push_back(nv.second);
  plan.symbolic = HostSymbolic();
  return true;
}

int64_t HostProgramPlan::numBoundValues() const {
  int64_t n = 0;
  for (const HostProgramArgument &a : arguments)
    n += a.numBounds;
  return n;
}

bool resolveEntryPoints(HostCallPlan &plan, const EntryPointLookup &lookup,
                        std::string &error) {
  plan.kernel = lookup(plan.kernelName, error);
  if (!plan.kernel)
    return false;
  for (std::vector<HostBlockMapping> *mappings :
       {&plan.inMappings, &plan.outMappings})
    for (HostBlockMapping &m : *mappings)
      if (!m.indexWrapperName.empty() &&
          !(m.indexWrapper = lookup(m.indexWrapperName, error)))
        return false;
  return true;
}

bool resolveEntryPoints(HostProgramPlan &program,
                        const EntryPointLookup &lookup, std::string &error) {
  program.main = lookup("main", error);
  if (!program.main)
    return false;
  for (HostCallPlan &call : program.calls)
    if (!resolveEntryPoints(call, lookup, error))
      return false;
  return true;
}

//===----------------------------------------------------------------------===//
// The grid walk
//===----------------------------------------------------------------------===//

namespace {

/// 64-byte aligned host memory, freed on destruction.
struct Buffer {
  struct Free {
    void operator()(uint8_t *p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, Free> storage;
  bool allocate(uint64_t bytes) {
    uint64_t rounded = (std::max<uint64_t>(bytes, 1) + 63) / 64 * 64;
    storage.reset(static_cast<uint8_t *>(std::aligned_alloc(64, rounded)));
    return storage != nullptr;
  }
  uint8_t *data() const { return storage.get(); }
};

/// A memref descriptor {allocated, aligned, offset, sizes, strides}.
struct Descriptor {
  std::vector<int64_t> words;
  void *pointer() { return words.data(); }
};

std::vector<int64_t> rowMajorStrides(const std::vector<int64_t> &dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;)
    strides[i - 1] = strides[i] * dims[i];
  return strides;
}

/// A dense row-major buffer of `shape` at `base`.
Descriptor describe(void *base, const std::vector<int64_t> &shape) {
  Descriptor d;
  d.words = {reinterpret_cast<int64_t>(base), reinterpret_cast<int64_t>(base),
             0};
  d.words.insert(d.words.end(), shape.begin(), shape.end());
  std::vector<int64_t> strides = rowMajorStrides(shape);
  d.words.insert(d.words.end(), strides.begin(), strides.end());
  return d;
}

/// The kernel's memref of a dense array of `shape` and `type` at `base`;
/// int4/uint4/int2/uint2 arrays are packed, and the CPU pipeline's
/// pallas-emulate-packed-integers gives their memrefs one dimension of
/// bytes: {base, base, 0, [bytes], [1]}.
Descriptor describeStorage(void *base, const std::vector<int64_t> &shape,
                           ElementType type) {
  if (!isPackedElement(type))
    return describe(base, shape);
  uint64_t bytes = 0;
  HostArrayType{type, shape}.byteSize(bytes);
  return describe(base, {static_cast<int64_t>(bytes)});
}

/// A view of a block (squeezed dims dropped) inside a row-major buffer of
/// `dims`; the offset is set per step.
Descriptor describeView(void *base, const std::vector<int64_t> &dims,
                        const std::vector<int64_t> &kernelShape,
                        const std::vector<bool> &squeezed) {
  Descriptor d;
  d.words = {reinterpret_cast<int64_t>(base), reinterpret_cast<int64_t>(base),
             0};
  d.words.insert(d.words.end(), kernelShape.begin(), kernelShape.end());
  std::vector<int64_t> strides = rowMajorStrides(dims);
  for (size_t i = 0; i < dims.size(); ++i)
    if (!squeezed[i])
      d.words.push_back(strides[i]);
  return d;
}

/// One array the kernel's blocks come from: the (padded) carry.
struct Carry {
  uint8_t *array = nullptr; ///< the unpadded array
  ElementType type = ElementType::F32;
  std::vector<int64_t> shape;
  Buffer padded; ///< storage when padding is needed
  bool isPadded = false;
  bool written = false; ///< some mapping of it writes back
  uint64_t paddedBytes = 0;
  std::vector<int64_t> dims, lo; ///< carry shape; where the array starts
  uint8_t *base() { return isPadded ? padded.data() : array; }
};

/// One block mapping during the run.
struct Mapping {
  const HostBlockMapping *spec = nullptr;
  Carry *carry = nullptr;
  bool isOutput = false;
  bool writesBack = false; ///< output, or an input the kernel writes
  bool alwaysCopy = false; ///< shares its carry with another mapping
  /// The kernel sees the block in place, as a strided view of the carry;
  /// otherwise through a block buffer.
  bool inPlace = false;
  std::vector<int64_t> carryStrides;
  std::vector<int64_t> total, lo; ///< own padded extent and low padding
  std::vector<int64_t> blockKernelShape;
  Buffer block;
  uint64_t blockBytes = 0;
  Descriptor desc;
  bool resident = false;
  std::vector<int64_t> last, start;
  std::string name;
};

/// Copies `block` at `start` between a carry of `dims` and a dense block
/// buffer, of elements of `elem` bytes, or of packed `bits`-wide elements
/// (2 or 4 bits; 0 for whole bytes), in XLA's layout for both: rows need
/// not start on a byte boundary.
void copyBlock(uint8_t *carry, const std::vector<int64_t> &dims,
               uint8_t *buffer, const std::vector<int64_t> &block,
               const std::vector<int64_t> &start, size_t elem,
               bool intoBuffer, unsigned bits = 0) {
  size_t rank = dims.size();
  if (rank == 0) {
    if (bits)
      intoBuffer ? copyPackedElements(carry, 0, buffer, 0, 1, bits)
                 : copyPackedElements(buffer, 0, carry, 0, 1, bits);
    else if (intoBuffer)
      std::memcpy(buffer, carry, elem);
    else
      std::memcpy(carry, buffer, elem);
    return;
  }
  for (int64_t b : block)
    if (b == 0)
      return;
  std::vector<int64_t> strides = rowMajorStrides(dims);
  size_t run = block[rank - 1] * elem;
  std::vector<int64_t> idx(rank, 0);
  uint8_t *out = buffer;
  uint64_t outElement = 0;
  while (true) {
    int64_t off = 0;
    for (size_t i = 0; i < rank; ++i)
      off += (start[i] + idx[i]) * strides[i];
    if (bits && intoBuffer)
      copyPackedElements(carry, off, buffer, outElement, block[rank - 1],
                         bits);
    else if (bits)
      copyPackedElements(buffer, outElement, carry, off, block[rank - 1],
                         bits);
    else if (intoBuffer)
      std::memcpy(out, carry + off * elem, run);
    else
      std::memcpy(carry + off * elem, out, run);
    out += run;
    outElement += block[rank - 1];
    size_t i = rank - 1;
    while (i-- > 0) {
      if (++idx[i] < block[i])
        break;
      idx[i] = 0;
    }
    if (i == static_cast<size_t>(-1))
      break;
  }
}

/// Bits of a packed element of `type`; 0 for the byte-sized types.
unsigned packedBits(ElementType type) {
  return isPackedElement(type) ? elementBits(type) : 0;
}

/// Copies the whole array between its place inside the carry and itself.
void copyInterior(Carry &c, bool intoCarry) {
  copyBlock(c.padded.data(), c.dims, c.array, c.shape, c.lo,
            elementSize(c.type), /*intoBuffer=*/!intoCarry,
            packedBits(c.type));
}

bool addBytes(uint64_t &total, uint64_t bytes) {
  return !__builtin_add_overflow(total, bytes, &total);
}

/// One run of a launch plan's grid on the host, in named steps: check the
/// operands, resolve the grid, plan the mappings and their carries, check
/// the memory needed, allocate, build the kernel's and the index maps'
/// arguments, walk the grid, and write the results back. Every step returns
/// false with `error` set when the run cannot go on.
class HostGridRun {
public:
  HostGridRun(const HostCallPlan &plan, const std::vector<void *> &inputs,
              bool inputsWritable, const std::vector<void *> &outputs,
              const HostGridOptions &options, std::string &error)
      : plan(plan), inputs(inputs), inputsWritable(inputsWritable),
        outputs(outputs), options(options), error(error),
        nsp(plan.numScalarPrefetch), numIn(plan.inputs.size()),
        numOut(plan.outputs.size()) {}
  HostGridRun(const HostGridRun &) = delete;
  HostGridRun &operator=(const HostGridRun &) = delete;

  bool run() {
    if (!checkOperands() || !resolveGrid() || !resolveAliases() ||
        !planMappings() || !planCarries() || !checkMemory() ||
        !allocateAndInitialize())
      return false;
    buildKernelArguments();
    buildWrapperArguments();
    if (!walkGrid())
      return false;
    cutWrittenArrays();
    return true;
  }

private:
  bool checkOperands();
  bool resolveGrid();
  bool resolveAliases();
  bool planMappings();
  bool planMapping(size_t k);
  bool planCarries();
  bool planCarry(size_t g);
  bool checkMemory();
  bool allocate(Buffer &b, uint64_t bytes, const std::string &what);
  bool allocateAndInitialize();
  bool describeMappings();
  void buildKernelArguments();
  void buildWrapperArguments();
  bool walkGrid();
  bool computeBlockStarts(const std::vector<int64_t> &point);
  void moveBlocks();
  void copyOutResidentBlocks();
  void cutWrittenArrays();

  /// Whether input mapping `k` gets a private copy of its array.
  bool needsPrivateCopy(size_t k) const {
    size_t i = k + nsp;
    return !inputAliased[i] && !inputsWritable && mappings[k].writesBack;
  }

  const HostCallPlan &plan;
  const std::vector<void *> &inputs;
  const bool inputsWritable;
  const std::vector<void *> &outputs;
  const HostGridOptions &options;
  std::string &error;
  const int64_t nsp;
  const size_t numIn, numOut;

  /// The grid, with dynamic bounds filled in, and its number of points.
  std::vector<int64_t> grid;
  uint64_t steps = 1;
  /// Which input each output is aliased to.
  std::vector<int64_t> aliasOf;
  std::vector<bool> inputAliased;
  std::vector<uint64_t> inputBytes, outputBytes;
  /// Memory needed, checked before allocating anything.
  uint64_t needed = 0;
  bool overflow = false;

  /// Mappings: inputs then outputs, as interpret mode orders its carries.
  std::deque<Carry> carries;
  std::vector<Mapping> mappings;
  std::vector<std::vector<size_t>> groups; ///< mapping indices per carry
  std::vector<uint8_t *> groupArrays;
  std::vector<const HostArrayType *> groupTypes;
  std::vector<Buffer> privateInputs;
  std::vector<size_t> mappingElem;
  std::vector<unsigned> mappingBits;
  std::deque<Buffer> scratch;

  /// The kernel's arguments (pointers into the members below).
  std::vector<size_t> visibleAxes;
  std::vector<int32_t> gridArgs;
  std::deque<Descriptor> descs;
  std::vector<void *> descPtrs;
  std::vector<void *> kernelArgs;
  std::vector<int64_t> symbolArgs;

  /// The index-map wrappers' arguments.
  std::vector<int32_t> gridI32;
  std::vector<int64_t> mapOut;
  Descriptor outDesc;
  void *outDescPtr = nullptr;
  std::vector<void *> wrapperArgs;
};

bool HostGridRun::checkOperands() {
  if (inputs.size() != numIn || outputs.size() != numOut ||
      nsp < 0 || nsp > static_cast<int64_t>(numIn) ||
      plan.inMappings.size() != numIn - nsp ||
      plan.outMappings.size() != numOut || !plan.kernel) {
    error = "the launch plan does not match its operands";
    return false;
  }
  return true;
}

bool HostGridRun::resolveGrid() {
  grid = plan.grid;
  size_t nextBound = 0;
  for (size_t i = 0; i < grid.size(); ++i) {
    if (grid[i] != -1)
      continue;
    if (nextBound >= options.dynamicBounds.size()) {
      error = "grid axis " + std::to_string(i) +
              " has a dynamic bound; give its value with --grid-bound";
      return false;
    }
    grid[i] = options.dynamicBounds[nextBound++];
  }
  if (nextBound != options.dynamicBounds.size()) {
    error = std::to_string(options.dynamicBounds.size()) +
            " grid bounds given but the grid has " +
            std::to_string(plan.numDynamicBounds()) + " dynamic bounds";
    return false;
  }
  for (size_t i = 0; i < grid.size(); ++i) {
    if (grid[i] < 0 || grid[i] > std::numeric_limits<int32_t>::max()) {
      error = "grid axis " + std::to_string(i) + " has bound " +
              std::to_string(grid[i]) + "; bounds must be in [0, 2^31)";
      return false;
    }
    if (__builtin_mul_overflow(steps, static_cast<uint64_t>(grid[i]), &steps)) {
      error = "the grid has more than 2^64 points";
      return false;
    }
  }
  return true;
}

bool HostGridRun::resolveAliases() {
  aliasOf.assign(numOut, -1);
  inputAliased.assign(numIn, false);
  for (auto [in, out] : plan.aliases) {
    if (in < 0 || in >= static_cast<int64_t>(numIn) || out < 0 ||
        out >= static_cast<int64_t>(numOut)) {
      error = "the launch plan aliases an operand it does not have";
      return false;
    }
    if (in < nsp) {
      error = "input " + std::to_string(in) +
              " is a scalar-prefetch operand aliased to an output, which the "
              "CPU runtime does not support";
      return false;
    }
    aliasOf[out] = in;
    inputAliased[in] = true;
  }
  inputBytes.resize(numIn);
  outputBytes.resize(numOut);
  for (size_t i = 0; i < numIn; ++i)
    if (!plan.inputs[i].byteSize(inputBytes[i])) {
      error = "input " + std::to_string(i) + " is too large";
      return false;
    }
  for (size_t j = 0; j < numOut; ++j)
    if (!plan.outputs[j].byteSize(outputBytes[j])) {
      error = "output " + std::to_string(j) + " is too large";
      return false;
    }
  return true;
}

bool HostGridRun::planMappings() {
  for (const HostArrayType &s : plan.scratch) {
    uint64_t bytes = 0;
    overflow |= !s.byteSize(bytes) || !addBytes(needed, bytes);
  }
  mappings.resize(numIn - nsp + numOut);
  for (size_t k = 0; k < mappings.size(); ++k)
    if (!planMapping(k))
      return false;
  return true;
}

/// Mapping `k`'s operand, whether it writes back, and its padded extent.
bool HostGridRun::planMapping(size_t k) {
  Mapping &m = mappings[k];
  bool isOut = k >= numIn - nsp;
  size_t index = isOut ? k - (numIn - nsp) : k + nsp;
  m.isOutput = isOut;
  m.spec = isOut ? &plan.outMappings[index] : &plan.inMappings[k];
  m.name = (isOut ? "output " : "input ") + std::to_string(index);
  size_t kernelArg = isOut ? numIn + index : index;
  m.writesBack = isOut || (kernelArg < plan.kernelWrites.size() &&
                           plan.kernelWrites[kernelArg]);
  const HostArrayType &type = isOut ? plan.outputs[index] : plan.inputs[index];
  size_t rank = type.shape.size();
  if (m.spec->wholeArray) {
    m.total = type.shape;
    m.lo.assign(rank, 0);
    return true;
  }
  if (m.spec->blockShape.size() != rank || m.spec->kinds.size() != rank ||
      m.spec->padLow.size() != rank || m.spec->padHigh.size() != rank) {
    error = m.name + " has rank " + std::to_string(rank) +
            " but its block shape has rank " +
            std::to_string(m.spec->blockShape.size());
    return false;
  }
  if (!m.spec->indexWrapper && !m.spec->indexMap.empty() &&
      m.spec->indexMap.size() != rank) {
    error = m.name + ": the index map has " +
            std::to_string(m.spec->indexMap.size()) +
            " results for an array of rank " + std::to_string(rank);
    return false;
  }
  for (size_t d = 0; d < rank; ++d) {
    int64_t b = m.spec->blockShape[d];
    bool element = m.spec->kinds[d] == HostBlockMapping::Kind::Element;
    int64_t lo = element ? m.spec->padLow[d] : 0;
    int64_t hi = element ? m.spec->padHigh[d] : 0;
    int64_t extent = lo + type.shape[d] + hi;
    if (b <= 0 || extent <= 0) {
      error = m.name + ": dimension " + std::to_string(d) +
              " has block size " + std::to_string(b) + " and extent " +
              std::to_string(extent) +
              "; the CPU runtime needs non-empty blocks and arrays";
      return false;
    }
    m.total.push_back((extent + b - 1) / b * b);
    m.lo.push_back(lo);
  }
  return true;
}

/// Carries: one per array; an aliased output shares its input's. The array
/// of an aliased pair is the output's storage (starting as the input's
/// values); an input the kernel writes, when the inputs may not be written,
/// is a private copy.
bool HostGridRun::planCarries() {
  privateInputs.reserve(numIn);
  for (size_t k = 0; k < numIn - nsp; ++k) {
    groups.push_back({k});
    groupArrays.push_back(static_cast<uint8_t *>(inputs[k + nsp]));
    groupTypes.push_back(&plan.inputs[k + nsp]);
  }
  for (size_t j = 0; j < numOut; ++j) {
    size_t k = numIn - nsp + j;
    if (aliasOf[j] >= 0) {
      groups[aliasOf[j] - nsp].push_back(k);
      groupArrays[aliasOf[j] - nsp] = static_cast<uint8_t *>(outputs[j]);
    } else {
      groups.push_back({k});
      groupArrays.push_back(static_cast<uint8_t *>(outputs[j]));
      groupTypes.push_back(&plan.outputs[j]);
    }
  }
  for (size_t k = 0; k < numIn - nsp; ++k)
    if (needsPrivateCopy(k))
      overflow |= !addBytes(needed, inputBytes[k + nsp]);
  for (size_t g = 0; g < groups.size(); ++g)
    if (!planCarry(g))
      return false;
  return true;
}

/// Carry `g`: its extent (the union of its mappings' padded extents), its
/// padding, and how each of its mappings sees its blocks.
bool HostGridRun::planCarry(size_t g) {
  const std::vector<size_t> &members = groups[g];
  Mapping &first = mappings[members[0]];
  size_t rank = first.total.size();
  Carry &c = carries.emplace_back();
  c.array = groupArrays[g];
  c.type = groupTypes[g]->type;
  c.shape = groupTypes[g]->shape;
  c.lo.assign(rank, 0);
  c.dims.assign(rank, 0);
  bool anyWhole = false;
  for (size_t k : members) {
    Mapping &m = mappings[k];
    anyWhole |= m.spec->wholeArray;
    c.written |= m.writesBack;
    if (m.total.size() != rank) {
      error = m.name + " is aliased to an operand of a different rank";
      return false;
    }
    for (size_t d = 0; d < rank; ++d)
      c.lo[d] = std::max(c.lo[d], m.lo[d]);
  }
  for (size_t k : members) {
    Mapping &m = mappings[k];
    m.carry = &c;
    m.alwaysCopy = members.size() > 1;
    for (size_t d = 0; d < rank; ++d)
      c.dims[d] = std::max(c.dims[d], c.lo[d] - m.lo[d] + m.total[d]);
  }
  c.isPadded = c.dims != c.shape;
  if (c.isPadded && anyWhole) {
    error = first.name +
            " is used whole (memory space any) and blocked with padding "
            "through an alias, which the CPU runtime does not support";
    return false;
  }
  ElementType type = groupTypes[g]->type;
  if (c.isPadded) {
    HostArrayType padded{type, c.dims};
    overflow |= !padded.byteSize(c.paddedBytes) ||
                !addBytes(needed, c.paddedBytes);
  }
  for (size_t k : members) {
    Mapping &m = mappings[k];
    if (m.spec->wholeArray)
      continue;
    // Packed (int4/uint4/int2/uint2) blocks are copied into a dense packed
    // buffer, as XLA packs an array of the block's shape: a view into the
    // carry would need rows that start on byte boundaries.
    m.inPlace = !m.alwaysCopy && !isPackedElement(type);
    m.carryStrides = rowMajorStrides(c.dims);
    m.blockKernelShape = m.spec->kernelShape();
    HostArrayType block{type, m.blockKernelShape};
    overflow |= !block.byteSize(m.blockBytes);
    if (!m.inPlace)
      overflow |= !addBytes(needed, m.blockBytes);
  }
  return true;
}

bool HostGridRun::checkMemory() {
  if (overflow || needed > options.maxBytes) {
    error = "the run needs " +
            (overflow ? std::string("more than 2^64")
                      : std::to_string(needed)) +
            " bytes (padded copies, blocks, scratch), over the limit of " +
            std::to_string(options.maxBytes) + " bytes";
    return false;
  }
  return true;
}

bool HostGridRun::allocate(Buffer &b, uint64_t bytes, const std::string &what) {
  if (!b.allocate(bytes)) {
    error = "cannot allocate " + std::to_string(bytes) + " bytes for " + what;
    return false;
  }
  return true;
}

/// Private input copies, the outputs' initial values, the padded carries,
/// the block buffers and the scratch buffers.
bool HostGridRun::allocateAndInitialize() {
  for (size_t k = 0; k < numIn - nsp; ++k) {
    if (!needsPrivateCopy(k))
      continue;
    size_t i = k + nsp;
    Buffer &copy = privateInputs.emplace_back();
    if (!allocate(copy, inputBytes[i], "a copy of input " + std::to_string(i)))
      return false;
    std::memcpy(copy.data(), inputs[i], inputBytes[i]);
    carries[k].array = copy.data();
  }
  for (size_t j = 0; j < numOut; ++j) {
    if (aliasOf[j] >= 0) {
      if (outputs[j] != inputs[aliasOf[j]])
        std::memmove(outputs[j], inputs[aliasOf[j]], outputBytes[j]);
      continue;
    }
    int64_t count = 1;
    for (int64_t d : plan.outputs[j].shape)
      count *= d;
    fillUninitialized(outputs[j], count, plan.outputs[j].type);
  }
  for (size_t g = 0; g < carries.size(); ++g) {
    Carry &c = carries[g];
    if (!c.isPadded)
      continue;
    if (!allocate(c.padded, c.paddedBytes, "a padded array"))
      return false;
    int64_t count = 1;
    for (int64_t d : c.dims)
      count *= d;
    fillUninitialized(c.padded.data(), count, groupTypes[g]->type);
    copyInterior(c, /*intoCarry=*/true);
  }
  mappingElem.resize(mappings.size());
  mappingBits.resize(mappings.size());
  for (size_t g = 0; g < groups.size(); ++g)
    for (size_t k : groups[g]) {
      mappingElem[k] = elementSize(groupTypes[g]->type);
      mappingBits[k] = packedBits(groupTypes[g]->type);
    }
  if (!describeMappings())
    return false;
  for (const HostArrayType &s : plan.scratch) {
    uint64_t bytes = 0;
    s.byteSize(bytes);
    Buffer &b = scratch.emplace_back();
    if (!allocate(b, bytes, "a scratch buffer"))
      return false;
    int64_t count = 1;
    for (int64_t d : s.shape)
      count *= d;
    fillUninitialized(b.data(), count, s.type);
  }
  return true;
}

/// Each mapping's descriptor: the whole array, a view into its carry, or its
/// own block buffer.
bool HostGridRun::describeMappings() {
  for (Mapping &m : mappings) {
    if (m.spec->wholeArray) {
      m.desc = describeStorage(m.carry->base(), m.carry->shape, m.carry->type);
      continue;
    }
    if (m.inPlace) {
      std::vector<bool> squeezed;
      for (HostBlockMapping::Kind kind : m.spec->kinds)
        squeezed.push_back(kind == HostBlockMapping::Kind::Squeezed);
      m.desc = describeView(m.carry->base(), m.carry->dims, m.blockKernelShape,
                            squeezed);
      continue;
    }
    if (!allocate(m.block, m.blockBytes, "a block of " + m.name))
      return false;
    m.desc = describeStorage(m.block.data(), m.blockKernelShape, m.carry->type);
  }
  return true;
}

/// Kernel arguments: program ids and grid sizes of the kernel-visible axes,
/// then prefetch, input, output and scratch memrefs, then a symbolic call's
/// symbol values (sorted by name).
void HostGridRun::buildKernelArguments() {
  for (size_t i = 0; i < grid.size(); ++i)
    if (std::find(plan.vmappedDims.begin(), plan.vmappedDims.end(),
                  static_cast<int64_t>(i)) == plan.vmappedDims.end())
      visibleAxes.push_back(i);
  gridArgs.assign(2 * visibleAxes.size(), 0);
  for (size_t a = 0; a < visibleAxes.size(); ++a)
    gridArgs[visibleAxes.size() + a] =
        static_cast<int32_t>(grid[visibleAxes[a]]);
  for (int64_t i = 0; i < nsp; ++i) {
    descs.push_back(
        describeStorage(inputs[i], plan.inputs[i].shape, plan.inputs[i].type));
    descPtrs.push_back(descs.back().pointer());
  }
  for (Mapping &m : mappings)
    descPtrs.push_back(m.desc.pointer());
  size_t s = 0;
  for (Buffer &b : scratch) {
    descs.push_back(describeStorage(b.data(), plan.scratch[s].shape,
                                    plan.scratch[s].type));
    ++s;
    descPtrs.push_back(descs.back().pointer());
  }
  for (int32_t &v : gridArgs)
    kernelArgs.push_back(&v);
  for (void *&p : descPtrs)
    kernelArgs.push_back(&p);
  symbolArgs = plan.kernelSymbolValues;
  for (int64_t &v : symbolArgs)
    kernelArgs.push_back(&v);
}

/// Index-map wrappers' arguments: (grid i32..., prefetch memrefs..., out
/// memref).
void HostGridRun::buildWrapperArguments() {
  gridI32.assign(grid.size(), 0);
  size_t maxRank = 1;
  for (Mapping &m : mappings)
    maxRank = std::max(maxRank, m.total.size());
  mapOut.assign(maxRank, 0);
  outDesc = describe(mapOut.data(), {static_cast<int64_t>(maxRank)});
  outDescPtr = outDesc.pointer();
  for (int32_t &v : gridI32)
    wrapperArgs.push_back(&v);
  for (int64_t i = 0; i < nsp; ++i)
    wrapperArgs.push_back(&descPtrs[i]);
  wrapperArgs.push_back(&outDescPtr);
}

bool HostGridRun::walkGrid() {
  auto walkStart = std::chrono::steady_clock::now();
  std::vector<int64_t> point(grid.size(), 0);
  for (uint64_t step = 0; step < steps; ++step) {
    for (size_t i = 0; i < grid.size(); ++i)
      gridI32[i] = static_cast<int32_t>(point[i]);
    for (size_t a = 0; a < visibleAxes.size(); ++a)
      gridArgs[a] = static_cast<int32_t>(point[visibleAxes[a]]);
    if (!computeBlockStarts(point))
      return false;
    moveBlocks();

    plan.kernel(kernelArgs.data());
    std::string kernelError;
    if (runtime::takeKernelError(kernelError)) {
      std::string at;
      for (size_t i = 0; i < point.size(); ++i)
        at += (i ? ", " : "") + std::to_string(point[i]);
      error = "the program at grid point (" + at + ") stopped: " + kernelError;
      return false;
    }

    for (size_t i = grid.size(); i-- > 0;) {
      if (++point[i] < grid[i])
        break;
      point[i] = 0;
    }
  }
  copyOutResidentBlocks();
  if (options.gridWalkMs)
    *options.gridWalkMs = std::chrono::duration<double, std::milli>(
                              std::chrono::steady_clock::now() - walkStart)
                              .count();
  return true;
}

/// Each blocked mapping's block start at `point`, in carry coordinates.
bool HostGridRun::computeBlockStarts(const std::vector<int64_t> &point) {
  std::vector<int64_t> raw;
  for (Mapping &m : mappings) {
    if (m.spec->wholeArray)
      continue;
    size_t rank = m.total.size();
    raw.assign(rank, 0);
    if (m.spec->indexWrapper) {
      m.spec->indexWrapper(wrapperArgs.data());
      for (size_t d = 0; d < rank; ++d)
        raw[d] = mapOut[d];
    } else if (!m.spec->indexMap.empty()) {
      for (size_t d = 0; d < rank; ++d)
        if (!m.spec->indexMap[d].evaluate(point, raw[d], error)) {
          error = m.name + ": " + error;
          return false;
        }
    }
    m.start.resize(rank);
    for (size_t d = 0; d < rank; ++d) {
      int64_t b = m.spec->blockShape[d];
      int64_t start = raw[d];
      if (m.spec->kinds[d] == HostBlockMapping::Kind::Blocked &&
          __builtin_mul_overflow(raw[d], b, &start)) {
        error = m.name + ": the block start of dimension " +
                std::to_string(d) + " (block index " +
                std::to_string(raw[d]) + " times block size " +
                std::to_string(b) + ") overflows int64";
        return false;
      }
      // As interpret mode indexes the carry: a negative start wraps once
      // (by the carry's extent), then it is clamped so the block fits.
      if (start < 0)
        start += m.total[d];
      start = std::clamp<int64_t>(start, 0, m.total[d] - b);
      m.start[d] = start + (m.carry->lo[d] - m.lo[d]);
    }
  }
  return true;
}

/// Points the in-place views at their blocks; copies out the copied blocks
/// that leave, then copies in the new ones.
void HostGridRun::moveBlocks() {
  for (Mapping &m : mappings) {
    if (!m.inPlace)
      continue;
    int64_t offset = 0;
    for (size_t d = 0; d < m.start.size(); ++d)
      offset += m.start[d] * m.carryStrides[d];
    m.desc.words[2] = offset;
  }
  for (size_t k = 0; k < mappings.size(); ++k) {
    Mapping &m = mappings[k];
    if (m.spec->wholeArray || m.inPlace || !m.resident || !m.writesBack)
      continue;
    if (m.alwaysCopy || m.start != m.last)
      copyBlock(m.carry->base(), m.carry->dims, m.block.data(),
                m.spec->blockShape, m.last, mappingElem[k],
                /*intoBuffer=*/false, mappingBits[k]);
  }
  for (size_t k = 0; k < mappings.size(); ++k) {
    Mapping &m = mappings[k];
    if (m.spec->wholeArray || m.inPlace)
      continue;
    if (m.resident && !m.alwaysCopy && m.start == m.last)
      continue;
    copyBlock(m.carry->base(), m.carry->dims, m.block.data(),
              m.spec->blockShape, m.start, mappingElem[k],
              /*intoBuffer=*/true, mappingBits[k]);
    m.last = m.start;
    m.resident = true;
  }
}

/// After the last step: the copied blocks still resident go back.
void HostGridRun::copyOutResidentBlocks() {
  for (size_t k = 0; k < mappings.size(); ++k) {
    Mapping &m = mappings[k];
    if (!m.spec->wholeArray && !m.inPlace && m.resident && m.writesBack)
      copyBlock(m.carry->base(), m.carry->dims, m.block.data(),
                m.spec->blockShape, m.last, mappingElem[k],
                /*intoBuffer=*/false, mappingBits[k]);
  }
}

/// Cuts the written arrays out of their padded carries.
void HostGridRun::cutWrittenArrays() {
  for (size_t g = 0; g < carries.size(); ++g)
    if (carries[g].isPadded && carries[g].written)
      copyInterior(carries[g], /*intoCarry=*/false);
}

} // namespace

bool runHostGrid(const HostCallPlan &plan, const std::vector<void *> &inputs,
                 bool inputsWritable, const std::vector<void *> &outputs,
                 const HostGridOptions &options, std::string &error) {
  HostGridRun run(plan, inputs, inputsWritable, outputs, options, error);
  return run.run();
}

//===----------------------------------------------------------------------===//
// Host programs
//===----------------------------------------------------------------------===//

namespace {

/// The C interface's descriptor of a rank-1 memref.
struct Memref1D {
  int64_t *allocated;
  int64_t *aligned;
  int64_t offset;
  int64_t size;
  int64_t stride;
};

/// What the launch callback reads while `@main` runs.
struct ActiveProgram {
  const HostProgramPlan *program = nullptr;
  const HostGridOptions *options = nullptr;
  bool failed = false;
  std::string error;
  double walkMs = 0;
};

thread_local ActiveProgram *activeProgram = nullptr;

} // namespace

extern "C" void pallasc_launcher_cpu_launch(int64_t call, void *pointersArg) {
  ActiveProgram *run = activeProgram;
  if (!run || run->failed)
    return;
  if (call < 0 || call >= static_cast<int64_t>(run->program->calls.size())) {
    run->failed = true;
    run->error = "the host program launches pallas.call #" +
                 std::to_string(call) + ", which its plan does not have";
    return;
  }
  const HostCallPlan &plan = run->program->calls[call];
  auto *pointers = static_cast<Memref1D *>(pointersArg);
  const int64_t *slot = pointers->aligned + pointers->offset;
  HostGridOptions options;
  options.maxBytes = run->options->maxBytes;
  double walkMs = 0;
  options.gridWalkMs = &walkMs;
  for (int64_t i = 0; i < plan.numDynamicBounds(); ++i)
    options.dynamicBounds.push_back(*slot++);
  auto address = [](int64_t p) {
    return reinterpret_cast<void *>(static_cast<intptr_t>(p));
  };
  std::vector<void *> inputs, outputs;
  for (size_t i = 0; i < plan.inputs.size(); ++i)
    inputs.push_back(address(*slot++));
  for (size_t j = 0; j < plan.outputs.size(); ++j)
    outputs.push_back(address(*slot++));
  std::string error;
  // The compiled @main copied every input into a fresh buffer of its own.
  if (!runHostGrid(plan, inputs, /*inputsWritable=*/true, outputs, options,
                   error)) {
    run->failed = true;
    run->error = "pallas.call #" + std::to_string(call) + " (@" +
                 plan.kernelName + "): " + error;
  }
  run->walkMs += walkMs;
}

bool runHostProgram(const HostProgramPlan &program,
                    const std::vector<const void *> &inputs,
                    const std::vector<int64_t> &boundValues,
                    const std::vector<void *> &outputs,
                    const HostGridOptions &options, std::string &error) {
  if (!program.main || inputs.size() != program.inputs.size() ||
      outputs.size() != program.outputs.size() ||
      static_cast<int64_t>(boundValues.size()) != program.numBoundValues()) {
    error = "the host program takes " + std::to_string(program.inputs.size()) +
            " inputs, " + std::to_string(program.numBoundValues()) +
            " bound values and " + std::to_string(program.outputs.size()) +
            " outputs";
    return false;
  }
  // Arguments: bounds by value (index is i64), batched bounds and arrays as
  // pointers to descriptors, then the results' descriptors.
  std::deque<Descriptor> descriptors;
  std::deque<int64_t> scalars;
  std::vector<int64_t> batchedBounds(boundValues);
  std::deque<void *> pointers;
  std::vector<void *> args;
  size_t nextBound = 0, nextInput = 0;
  for (const HostProgramArgument &a : program.arguments) {
    switch (a.kind) {
    case HostProgramArgument::Kind::Bound:
      scalars.push_back(boundValues[nextBound++]);
      args.push_back(&scalars.back());
      break;
    case HostProgramArgument::Kind::BatchedBound:
      descriptors.push_back(
          describe(batchedBounds.data() + nextBound, {a.numBounds}));
      nextBound += a.numBounds;
      pointers.push_back(descriptors.back().pointer());
      args.push_back(&pointers.back());
      break;
    case HostProgramArgument::Kind::Array:
      descriptors.push_back(
          describeStorage(const_cast<void *>(inputs[nextInput]),
                          program.inputs[nextInput].shape,
                          program.inputs[nextInput].type));
      ++nextInput;
      pointers.push_back(descriptors.back().pointer());
      args.push_back(&pointers.back());
      break;
    }
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    descriptors.push_back(describeStorage(outputs[j], program.outputs[j].shape,
                                          program.outputs[j].type));
    pointers.push_back(descriptors.back().pointer());
    args.push_back(&pointers.back());
  }

  ActiveProgram run;
  run.program = &program;
  run.options = &options;
  ActiveProgram *outer = activeProgram;
  activeProgram = &run;
  program.main(args.data());
  activeProgram = outer;
  if (options.gridWalkMs)
    *options.gridWalkMs = run.walkMs;
  if (run.failed) {
    error = run.error;
    return false;
  }
  return true;
}

} // namespace pallasc::launch
