//===- GridExecutor.cpp - Run a JIT-compiled kernel over its grid -*- C++ -*-===//
//
// The grid walk itself is the launch library's (src/Launch/HostGrid.h), the
// code generated launchers run too; this adapts pallasc run's plan, JIT and
// host arrays to it.
//
//===----------------------------------------------------------------------===//

#include "src/Runtime/GridExecutor.h"

#include "src/Launch/HostGrid.h"

namespace pallasc::runtime {

namespace {
std::vector<uint8_t> packedBuffer(const HostArray &array) {
  uint64_t bytes = 0;
  launch::storageBytes(array.dtype, array.numElements(), bytes);
  return std::vector<uint8_t>(bytes, 0);
}
} // namespace

uint8_t *PackedStorage::input(HostArray &array) {
  if (!launch::isPackedElement(array.dtype))
    return array.data();
  Packed &p = inputs.emplace_back(Packed{&array, packedBuffer(array)});
  launch::packElements(array.data(), array.numElements(), array.dtype,
                       p.bytes.data());
  return p.bytes.data();
}

uint8_t *PackedStorage::output(HostArray &array) {
  if (!launch::isPackedElement(array.dtype))
    return array.data();
  return outputs.emplace_back(Packed{&array, packedBuffer(array)}).bytes.data();
}

void PackedStorage::unpackOutputs() {
  for (Packed &p : outputs)
    launch::unpackElements(p.bytes.data(), p.array->numElements(),
                           p.array->dtype, p.array->data());
}

bool executeGrid(const launch::HostCallPlan &plan, JitModule &jit,
                 std::vector<HostArray> &inputs,
                 const std::vector<DType> &outputDTypes,
                 std::vector<HostArray> &outputs, const ExecuteOptions &options,
                 std::string &error) {
  launch::HostCallPlan host = plan;
  auto lookup = [&](const std::string &symbol, std::string &lookupError) {
    return jit.lookupCInterface(symbol, lookupError);
  };
  if (!launch::resolveEntryPoints(host, lookup, error))
    return false;
  const size_t numOut = plan.outputs.size();
  if (inputs.size() != plan.inputs.size() || outputDTypes.size() != numOut) {
    error = "the call takes " + std::to_string(plan.inputs.size()) +
            " inputs and " + std::to_string(numOut) + " outputs";
    return false;
  }
  // The output dtypes may differ from the plan's in signedness.
  for (size_t j = 0; j < numOut; ++j)
    host.outputs[j].type = outputDTypes[j];
  std::vector<int64_t> aliasOf(numOut, -1);
  for (auto [in, out] : plan.aliases)
    if (out >= 0 && out < static_cast<int64_t>(numOut) && in >= 0 &&
        in < static_cast<int64_t>(inputs.size()))
      aliasOf[out] = in;

  // The inputs and the outputs count against the limit too.
  uint64_t held = 0;
  for (const HostArray &a : inputs)
    if (__builtin_add_overflow(held, a.byteSize(), &held))
      held = UINT64_MAX;
  auto givenStorage = [&](size_t j) -> uint8_t * {
    return j < options.outputStorage.size() ? options.outputStorage[j]
                                            : nullptr;
  };
  outputs.clear();
  outputs.resize(numOut);
  for (size_t j = 0; j < numOut; ++j) {
    if (aliasOf[j] >= 0)
      continue;
    if (uint8_t *storage = givenStorage(j)) {
      outputs[j] =
          HostArray::view(outputDTypes[j], plan.outputs[j].shape, storage);
      continue;
    }
    outputs[j] = HostArray(outputDTypes[j], plan.outputs[j].shape);
    if (__builtin_add_overflow(held, outputs[j].byteSize(), &held) ||
        held > options.maxBytes) {
      error = "the run needs more than " + std::to_string(options.maxBytes) +
              " bytes (inputs and outputs), the limit";
      return false;
    }
    if (!outputs[j].allocate()) {
      error = "cannot allocate " + std::to_string(outputs[j].byteSize()) +
              " bytes for output " + std::to_string(j);
      return false;
    }
  }
  // An aliased output is its input, updated in place.
  PackedStorage packed;
  std::vector<void *> inputPtrs, outputPtrs;
  for (HostArray &a : inputs)
    inputPtrs.push_back(packed.input(a));
  for (size_t j = 0; j < numOut; ++j)
    outputPtrs.push_back(aliasOf[j] >= 0 ? inputPtrs[aliasOf[j]]
                                         : packed.output(outputs[j]));
  launch::HostGridOptions grid;
  grid.dynamicBounds = options.dynamicBounds;
  grid.maxBytes = held > options.maxBytes ? 0 : options.maxBytes - held;
  grid.gridWalkMs = options.gridWalkMs;
  if (!launch::runHostGrid(host, inputPtrs, /*inputsWritable=*/true,
                           outputPtrs, grid, error))
    return false;
  packed.unpackOutputs();
  for (size_t j = 0; j < numOut; ++j) {
    if (aliasOf[j] < 0)
      continue;
    HostArray &in = inputs[aliasOf[j]];
    if (launch::isPackedElement(in.dtype))
      launch::unpackElements(static_cast<uint8_t *>(inputPtrs[aliasOf[j]]),
                             in.numElements(), in.dtype, in.data());
    outputs[j] = std::move(in);
    outputs[j].dtype = outputDTypes[j];
  }
  return true;
}

} // namespace pallasc::runtime
