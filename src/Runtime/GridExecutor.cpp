//===- GridExecutor.cpp - Run a JIT-compiled kernel over its grid -*- C++ -*-===//

#include "src/Runtime/GridExecutor.h"

#include "mlir/IR/AffineExpr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>

namespace pallasc::runtime {

void fillUninitialized(uint8_t *data, int64_t count, DType dtype) {
  auto fill = [&](auto value) {
    using T = decltype(value);
    T *p = reinterpret_cast<T *>(data);
    std::fill(p, p + count, value);
  };
  switch (dtype) {
  case DType::F16:
    return fill(uint16_t(0x7e00));
  case DType::BF16:
    return fill(uint16_t(0x7fc0));
  case DType::F32:
    return fill(std::numeric_limits<float>::quiet_NaN());
  case DType::F64:
    return fill(std::numeric_limits<double>::quiet_NaN());
  case DType::I8:
    return fill(std::numeric_limits<int8_t>::min());
  case DType::I32:
    return fill(std::numeric_limits<int32_t>::min());
  case DType::I64:
    return fill(std::numeric_limits<int64_t>::min());
  // i16 is interpret mode's semaphore type: it gets 0. Unsigned types and
  // bool get their minimum, 0 / false.
  case DType::I16:
  case DType::Bool:
  case DType::U8:
  case DType::U16:
  case DType::U32:
  case DType::U64:
    std::memset(data, 0, count * dtypeSize(dtype));
    return;
  }
}

namespace {

/// A memref descriptor {allocated, aligned, offset, sizes, strides} for a
/// dense row-major buffer.
struct Descriptor {
  std::vector<int64_t> words;
  void *pointer() { return words.data(); }
};

Descriptor describe(void *base, const std::vector<int64_t> &shape) {
  Descriptor d;
  d.words.push_back(reinterpret_cast<int64_t>(base));
  d.words.push_back(reinterpret_cast<int64_t>(base));
  d.words.push_back(0);
  for (int64_t s : shape)
    d.words.push_back(s);
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    strides[i - 1] = strides[i] * shape[i];
  for (int64_t s : strides)
    d.words.push_back(s);
  return d;
}

/// A view of the block of `blockShape` (squeezed dims dropped from the
/// descriptor) inside a row-major buffer of `dims`; the offset is set per
/// step.
Descriptor describeView(void *base, const std::vector<int64_t> &dims,
                        const std::vector<int64_t> &kernelShape,
                        const std::vector<bool> &squeezed) {
  Descriptor d;
  d.words.push_back(reinterpret_cast<int64_t>(base));
  d.words.push_back(reinterpret_cast<int64_t>(base));
  d.words.push_back(0);
  for (int64_t s : kernelShape)
    d.words.push_back(s);
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;)
    strides[i - 1] = strides[i] * dims[i];
  for (size_t i = 0; i < dims.size(); ++i)
    if (!squeezed[i])
      d.words.push_back(strides[i]);
  return d;
}

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

/// Evaluates an affine index-map result at grid point `g`, with checked
/// 64-bit arithmetic: a value outside int64 is an error (the spec importer
/// rejects maps that can overflow over the grid's range; this is the last
/// line of defence).
bool evalAffine(mlir::AffineExpr e, const std::vector<int64_t> &g,
                int64_t &out, std::string &error) {
  using namespace mlir;
  if (auto c = dyn_cast<AffineConstantExpr>(e)) {
    out = c.getValue();
    return true;
  }
  if (auto d = dyn_cast<AffineDimExpr>(e)) {
    out = g[d.getPosition()];
    return true;
  }
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin) {
    error = "index map uses a symbol";
    return false;
  }
  int64_t l = 0, r = 0;
  if (!evalAffine(bin.getLHS(), g, l, error) ||
      !evalAffine(bin.getRHS(), g, r, error))
    return false;
  auto overflow = [&] {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "index map value " << e << " overflows int64 (" << l << " and "
       << r << ")";
    error = s;
    return false;
  };
  switch (e.getKind()) {
  case AffineExprKind::Add:
    return !__builtin_add_overflow(l, r, &out) || overflow();
  case AffineExprKind::Mul:
    return !__builtin_mul_overflow(l, r, &out) || overflow();
  case AffineExprKind::FloorDiv:
  case AffineExprKind::CeilDiv:
  case AffineExprKind::Mod:
    if (r == 0) {
      error = "index map divides by zero";
      return false;
    }
    if (r == -1) {
      if (e.getKind() == AffineExprKind::Mod) {
        out = 0;
        return true;
      }
      return !__builtin_sub_overflow(int64_t(0), l, &out) || overflow();
    }
    if (e.getKind() == AffineExprKind::FloorDiv)
      out = floorDiv(l, r);
    else if (e.getKind() == AffineExprKind::CeilDiv)
      out = floorDiv(l, r) + (floorMod(l, r) != 0);
    else
      out = floorMod(l, r);
    return true;
  default:
    error = "unsupported index map expression";
    return false;
  }
}

/// One array the kernel's blocks come from: the (padded) carry.
struct Carry {
  HostArray *array = nullptr;   ///< the unpadded array
  HostArray padded;             ///< storage when padding is needed
  bool isPadded = false;
  std::vector<int64_t> dims, lo; ///< carry shape; where the array starts
  uint8_t *base() { return isPadded ? padded.data() : array->data(); }
};

/// One block mapping during the run.
struct Mapping {
  const BlockMapping *spec = nullptr;
  Carry *carry = nullptr;
  bool isOutput = false;
  bool writesBack = false; ///< output, or an input the kernel writes
  bool alwaysCopy = false; ///< shares its carry with another mapping
  /// The kernel sees the block in place, as a strided view of the carry (no
  /// copies); otherwise through a block buffer.
  bool inPlace = false;
  std::vector<int64_t> carryStrides; ///< row-major strides of the carry
  std::vector<int64_t> total, lo; ///< own padded extent and low padding
  HostArray block;
  Descriptor desc;
  bool resident = false;
  std::vector<int64_t> last, start;
  std::string name;
};

/// Copies `block` at `start` between a carry and a dense block buffer.
void copyBlock(uint8_t *carry, const std::vector<int64_t> &dims,
               uint8_t *buffer, const std::vector<int64_t> &block,
               const std::vector<int64_t> &start, size_t elem,
               bool intoBuffer) {
  size_t rank = dims.size();
  if (rank == 0) {
    if (intoBuffer)
      std::memcpy(buffer, carry, elem);
    else
      std::memcpy(carry, buffer, elem);
    return;
  }
  for (int64_t b : block)
    if (b == 0)
      return;
  std::vector<int64_t> strides(rank, 1);
  for (size_t i = rank; i-- > 1;)
    strides[i - 1] = strides[i] * dims[i];
  size_t run = block[rank - 1] * elem;
  std::vector<int64_t> idx(rank, 0);
  uint8_t *out = buffer;
  while (true) {
    int64_t off = 0;
    for (size_t i = 0; i < rank; ++i)
      off += (start[i] + idx[i]) * strides[i];
    if (intoBuffer)
      std::memcpy(out, carry + off * elem, run);
    else
      std::memcpy(carry + off * elem, out, run);
    out += run;
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

/// Copies the whole array between its place inside the carry and itself.
void copyInterior(Carry &c, bool intoCarry) {
  copyBlock(c.padded.data(), c.dims, c.array->data(), c.array->shape, c.lo,
            dtypeSize(c.array->dtype), /*intoBuffer=*/!intoCarry);
}

bool addBytes(uint64_t &total, uint64_t bytes) {
  return !__builtin_add_overflow(total, bytes, &total);
}

} // namespace

bool executeGrid(const LaunchPlan &plan, JitModule &jit,
                 std::vector<HostArray> &inputs,
                 const std::vector<DType> &outputDTypes,
                 std::vector<HostArray> &outputs,
                 const ExecuteOptions &options, std::string &error) {
  const int64_t nsp = plan.numScalarPrefetch;
  const size_t numIn = plan.inputs.size(), numOut = plan.outputs.size();

  // The grid, with dynamic bounds filled in.
  std::vector<int64_t> grid = plan.grid;
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
  uint64_t steps = 1;
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

  // Which array each output lives in: its own, or its aliased input's.
  std::vector<int64_t> aliasOf(numOut, -1);
  for (auto [in, out] : plan.aliases) {
    if (in < nsp) {
      error = "input " + std::to_string(in) +
              " is a scalar-prefetch operand aliased to an output, which the "
              "CPU runtime does not support";
      return false;
    }
    aliasOf[out] = in;
  }

  // Memory needed beyond the inputs, checked before allocating anything.
  uint64_t needed = 0;
  bool overflow = false;
  for (const HostArray &a : inputs)
    overflow |= !addBytes(needed, a.byteSize());
  auto givenStorage = [&](size_t j) -> uint8_t * {
    return j < options.outputStorage.size() ? options.outputStorage[j]
                                            : nullptr;
  };
  for (size_t j = 0; j < numOut; ++j)
    if (aliasOf[j] < 0 && !givenStorage(j))
      overflow |= !addBytes(needed, HostArray(outputDTypes[j],
                                              plan.outputs[j].shape)
                                        .byteSize());
  for (const ArrayType &s : plan.scratch)
    overflow |= !addBytes(needed, HostArray(s.dtype, s.shape).byteSize());

  // Mappings: inputs then outputs, as interpret mode orders its carries.
  std::deque<Carry> carries;
  std::vector<Mapping> mappings(numIn - nsp + numOut);
  std::vector<Carry *> inputCarry(numIn, nullptr);
  for (size_t k = 0; k < mappings.size(); ++k) {
    Mapping &m = mappings[k];
    bool isOut = k >= numIn - nsp;
    size_t index = isOut ? k - (numIn - nsp) : k + nsp;
    m.isOutput = isOut;
    m.spec = isOut ? &plan.outMappings[index] : &plan.inMappings[k];
    m.name = (isOut ? "output " : "input ") + std::to_string(index);
    size_t kernelArg = isOut ? numIn + index : index;
    m.writesBack = isOut || (kernelArg < plan.kernelWrites.size() &&
                             plan.kernelWrites[kernelArg]);
    const ArrayType &type = isOut ? plan.outputs[index] : plan.inputs[index];
    size_t rank = type.shape.size();
    if (m.spec->wholeArray) {
      m.total = type.shape;
      m.lo.assign(rank, 0);
      continue;
    }
    if (m.spec->blockShape.size() != rank) {
      error = m.name + " has rank " + std::to_string(rank) +
              " but its block shape has rank " +
              std::to_string(m.spec->blockShape.size());
      return false;
    }
    for (size_t d = 0; d < rank; ++d) {
      int64_t b = m.spec->blockShape[d];
      bool element = m.spec->kinds[d] == BlockMapping::Kind::Element;
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
  }

  // Carries: one per array; an aliased output shares its input's.
  auto carryFor = [&](size_t k) -> Mapping & { return mappings[k]; };
  std::vector<std::vector<size_t>> groups; // mapping indices per carry
  std::vector<HostArray *> groupArrays;
  std::vector<int64_t> outGroup(numOut, -1);
  for (size_t k = 0; k < numIn - nsp; ++k) {
    groups.push_back({k});
    groupArrays.push_back(&inputs[k + nsp]);
  }
  outputs.clear();
  outputs.resize(numOut);
  for (size_t j = 0; j < numOut; ++j) {
    size_t k = numIn - nsp + j;
    if (aliasOf[j] >= 0) {
      groups[aliasOf[j] - nsp].push_back(k);
    } else {
      groups.push_back({k});
      groupArrays.push_back(&outputs[j]);
    }
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    const std::vector<size_t> &members = groups[g];
    Mapping &first = carryFor(members[0]);
    size_t rank = first.total.size();
    Carry &c = carries.emplace_back();
    c.array = groupArrays[g];
    c.lo.assign(rank, 0);
    c.dims.assign(rank, 0);
    bool anyWhole = false;
    for (size_t k : members) {
      Mapping &m = mappings[k];
      anyWhole |= m.spec->wholeArray;
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
    const ArrayType &type = first.isOutput
                                ? plan.outputs[members[0] - (numIn - nsp)]
                                : plan.inputs[members[0] + nsp];
    c.isPadded = c.dims != type.shape;
    if (c.isPadded && anyWhole) {
      error = mappings[members[0]].name +
              " is used whole (memory space any) and blocked with padding "
              "through an alias, which the CPU runtime does not support";
      return false;
    }
    DType dtype = first.isOutput
                      ? outputDTypes[members[0] - (numIn - nsp)]
                      : inputs[members[0] + nsp].dtype;
    if (c.isPadded) {
      c.padded = HostArray(dtype, c.dims);
      overflow |= !addBytes(needed, c.padded.byteSize());
    }
    for (size_t k : members) {
      Mapping &m = mappings[k];
      if (m.spec->wholeArray)
        continue;
      m.inPlace = !m.alwaysCopy;
      m.carryStrides.assign(rank, 1);
      for (size_t d = rank; d-- > 1;)
        m.carryStrides[d - 1] = m.carryStrides[d] * c.dims[d];
      m.block = HostArray(dtype, m.spec->kernelShape());
      if (!m.inPlace)
        overflow |= !addBytes(needed, m.block.byteSize());
    }
  }
  if (overflow || needed > options.maxBytes) {
    error = "the run needs " +
            (overflow ? std::string("more than 2^64")
                      : std::to_string(needed)) +
            " bytes (arrays, padded copies, blocks, scratch), over the limit "
            "of " +
            std::to_string(options.maxBytes) + " bytes";
    return false;
  }

  // Allocate and initialize.
  auto allocate = [&](HostArray &a, const std::string &what) {
    if (!a.allocate()) {
      error = "cannot allocate " + std::to_string(a.byteSize()) +
              " bytes for " + what;
      return false;
    }
    return true;
  };
  for (size_t j = 0; j < numOut; ++j) {
    if (aliasOf[j] >= 0)
      continue;
    if (uint8_t *storage = givenStorage(j)) {
      outputs[j] =
          HostArray::view(outputDTypes[j], plan.outputs[j].shape, storage);
    } else {
      outputs[j] = HostArray(outputDTypes[j], plan.outputs[j].shape);
      if (!allocate(outputs[j], "output " + std::to_string(j)))
        return false;
    }
    fillUninitialized(outputs[j].data(), outputs[j].numElements(),
                      outputs[j].dtype);
  }
  for (Carry &c : carries) {
    if (!c.isPadded)
      continue;
    if (!allocate(c.padded, "a padded array"))
      return false;
    fillUninitialized(c.padded.data(), c.padded.numElements(),
                      c.padded.dtype);
    copyInterior(c, /*intoCarry=*/true);
  }
  for (Mapping &m : mappings) {
    if (m.spec->wholeArray) {
      m.desc = describe(m.carry->base(), m.carry->array->shape);
      continue;
    }
    if (m.inPlace) {
      std::vector<bool> squeezed;
      for (BlockMapping::Kind k : m.spec->kinds)
        squeezed.push_back(k == BlockMapping::Kind::Squeezed);
      m.desc = describeView(m.carry->base(), m.carry->dims, m.block.shape,
                            squeezed);
      continue;
    }
    if (!allocate(m.block, "a block of " + m.name))
      return false;
    m.desc = describe(m.block.data(), m.block.shape);
  }
  std::vector<HostArray> scratch;
  for (const ArrayType &s : plan.scratch) {
    HostArray &a = scratch.emplace_back(s.dtype, s.shape);
    if (!allocate(a, "a scratch buffer"))
      return false;
    fillUninitialized(a.data(), a.numElements(), a.dtype);
  }

  // Kernel arguments: program ids and grid sizes of the kernel-visible
  // axes, then prefetch, input, output and scratch memrefs.
  std::string lookupError;
  JitModule::PackedFn kernel = jit.lookupCInterface(plan.kernel, lookupError);
  if (!kernel) {
    error = lookupError;
    return false;
  }
  std::vector<size_t> visibleAxes;
  for (size_t i = 0; i < grid.size(); ++i)
    if (std::find(plan.vmappedDims.begin(), plan.vmappedDims.end(),
                  static_cast<int64_t>(i)) == plan.vmappedDims.end())
      visibleAxes.push_back(i);
  std::vector<int32_t> gridArgs(2 * visibleAxes.size());
  for (size_t a = 0; a < visibleAxes.size(); ++a)
    gridArgs[visibleAxes.size() + a] =
        static_cast<int32_t>(grid[visibleAxes[a]]);
  std::deque<Descriptor> descs;
  std::vector<void *> descPtrs;
  for (int64_t i = 0; i < nsp; ++i) {
    descs.push_back(describe(inputs[i].data(), inputs[i].shape));
    descPtrs.push_back(descs.back().pointer());
  }
  for (Mapping &m : mappings)
    descPtrs.push_back(m.desc.pointer());
  for (HostArray &s : scratch) {
    descs.push_back(describe(s.data(), s.shape));
    descPtrs.push_back(descs.back().pointer());
  }
  std::vector<void *> kernelArgs;
  for (int32_t &v : gridArgs)
    kernelArgs.push_back(&v);
  for (void *&p : descPtrs)
    kernelArgs.push_back(&p);

  // Index-map wrappers: (grid i32..., prefetch memrefs..., out memref).
  std::vector<JitModule::PackedFn> wrappers(mappings.size(), nullptr);
  std::vector<int32_t> gridI32(grid.size());
  std::vector<int64_t> mapOut(16);
  Descriptor outDesc;
  std::vector<void *> wrapperArgs;
  void *outDescPtr = nullptr;
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
  for (size_t k = 0; k < mappings.size(); ++k) {
    if (mappings[k].spec->indexWrapper.empty())
      continue;
    wrappers[k] =
        jit.lookupCInterface(mappings[k].spec->indexWrapper, lookupError);
    if (!wrappers[k]) {
      error = lookupError;
      return false;
    }
  }

  // The grid walk.
  auto walkStart = std::chrono::steady_clock::now();
  std::vector<int64_t> point(grid.size(), 0);
  std::vector<int64_t> raw;
  for (uint64_t step = 0; step < steps; ++step) {
    for (size_t i = 0; i < grid.size(); ++i)
      gridI32[i] = static_cast<int32_t>(point[i]);
    for (size_t a = 0; a < visibleAxes.size(); ++a)
      gridArgs[a] = static_cast<int32_t>(point[visibleAxes[a]]);

    // Block starts, in carry coordinates.
    for (size_t k = 0; k < mappings.size(); ++k) {
      Mapping &m = mappings[k];
      if (m.spec->wholeArray)
        continue;
      size_t rank = m.total.size();
      raw.assign(rank, 0);
      if (wrappers[k]) {
        wrappers[k](wrapperArgs.data());
        for (size_t d = 0; d < rank; ++d)
          raw[d] = mapOut[d];
      } else if (m.spec->indexMap) {
        for (size_t d = 0; d < rank; ++d)
          if (!evalAffine(m.spec->indexMap.getResult(d), point, raw[d],
                          error)) {
            error = m.name + ": " + error;
            return false;
          }
      }
      m.start.resize(rank);
      for (size_t d = 0; d < rank; ++d) {
        int64_t b = m.spec->blockShape[d];
        int64_t s = raw[d];
        if (m.spec->kinds[d] == BlockMapping::Kind::Blocked &&
            __builtin_mul_overflow(raw[d], b, &s)) {
          error = m.name + ": the block start of dimension " +
                  std::to_string(d) + " (block index " +
                  std::to_string(raw[d]) + " times block size " +
                  std::to_string(b) + ") overflows int64";
          return false;
        }
        s = std::clamp<int64_t>(s, 0, m.total[d] - b);
        m.start[d] = s + (m.carry->lo[d] - m.lo[d]);
      }
    }
    // In-place blocks: point the view at the block.
    for (Mapping &m : mappings) {
      if (!m.inPlace)
        continue;
      int64_t offset = 0;
      for (size_t d = 0; d < m.start.size(); ++d)
        offset += m.start[d] * m.carryStrides[d];
      m.desc.words[2] = offset;
    }
    // Copied blocks: copy out those that leave, then copy in the new ones.
    for (Mapping &m : mappings) {
      if (m.spec->wholeArray || m.inPlace || !m.resident || !m.writesBack)
        continue;
      if (m.alwaysCopy || m.start != m.last)
        copyBlock(m.carry->base(), m.carry->dims, m.block.data(),
                  m.spec->blockShape, m.last, dtypeSize(m.block.dtype),
                  /*intoBuffer=*/false);
    }
    for (Mapping &m : mappings) {
      if (m.spec->wholeArray || m.inPlace)
        continue;
      if (m.resident && !m.alwaysCopy && m.start == m.last)
        continue;
      copyBlock(m.carry->base(), m.carry->dims, m.block.data(),
                m.spec->blockShape, m.start, dtypeSize(m.block.dtype),
                /*intoBuffer=*/true);
      m.last = m.start;
      m.resident = true;
    }

    kernel(kernelArgs.data());

    for (size_t i = grid.size(); i-- > 0;) {
      if (++point[i] < grid[i])
        break;
      point[i] = 0;
    }
  }
  for (Mapping &m : mappings)
    if (!m.spec->wholeArray && !m.inPlace && m.resident && m.writesBack)
      copyBlock(m.carry->base(), m.carry->dims, m.block.data(),
                m.spec->blockShape, m.last, dtypeSize(m.block.dtype),
                /*intoBuffer=*/false);

  if (options.gridWalkMs)
    *options.gridWalkMs = std::chrono::duration<double, std::milli>(
                              std::chrono::steady_clock::now() - walkStart)
                              .count();

  // Cut the outputs out of their carries.
  for (Carry &c : carries)
    if (c.isPadded)
      copyInterior(c, /*intoCarry=*/false);
  for (size_t j = 0; j < numOut; ++j) {
    if (aliasOf[j] < 0)
      continue;
    outputs[j] = std::move(inputs[aliasOf[j]]);
    outputs[j].dtype = outputDTypes[j];
  }
  return true;
}

} // namespace pallasc::runtime
