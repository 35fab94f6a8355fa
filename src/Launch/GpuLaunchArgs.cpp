//===- GpuLaunchArgs.cpp - Launch geometry and kernel arguments -*- C++ -*-===//

#include "src/Launch/GpuLaunchArgs.h"

#include <cstring>

namespace pallasc::launch {

namespace {

GpuStatus badRecord(const std::string &what) {
  return GpuStatus::failure(GpuError::InvalidLaunchRecord,
                            "the launch record " + what);
}

GpuStatus axisSize(int64_t axis, const std::vector<int64_t> &gridSizes,
                   int64_t &size) {
  if (axis < 0 || axis >= static_cast<int64_t>(gridSizes.size()))
    return badRecord("names grid axis " + std::to_string(axis) +
                     " of a grid of rank " +
                     std::to_string(gridSizes.size()));
  size = gridSizes[axis];
  return GpuStatus::success();
}

} // namespace

const char *gpuErrorName(GpuError error) {
  switch (error) {
  case GpuError::None:
    return "None";
  case GpuError::DriverNotFound:
    return "DriverNotFound";
  case GpuError::DriverTooOld:
    return "DriverTooOld";
  case GpuError::NoDevice:
    return "NoDevice";
  case GpuError::InvalidDevice:
    return "InvalidDevice";
  case GpuError::DeviceSetup:
    return "DeviceSetup";
  case GpuError::LoadFailed:
    return "LoadFailed";
  case GpuError::KernelNotFound:
    return "KernelNotFound";
  case GpuError::SharedMemoryTooLarge:
    return "SharedMemoryTooLarge";
  case GpuError::OutOfMemory:
    return "OutOfMemory";
  case GpuError::CopyFailed:
    return "CopyFailed";
  case GpuError::TensorMapFailed:
    return "TensorMapFailed";
  case GpuError::Misaligned:
    return "Misaligned";
  case GpuError::InvalidLaunchRecord:
    return "InvalidLaunchRecord";
  case GpuError::LaunchFailed:
    return "LaunchFailed";
  case GpuError::KernelFailed:
    return "KernelFailed";
  case GpuError::DriverCallFailed:
    return "DriverCallFailed";
  }
  return "unknown";
}

GpuStatus computeLaunchGeometry(const GpuLaunchRecord &record,
                                const std::vector<int64_t> &gridSizes,
                                GpuLaunchGeometry &geometry) {
  GpuLaunchGeometry g;
  for (int c = 0; c < 3; ++c) {
    for (int64_t axis : record.gridAxes[c]) {
      int64_t size = 0;
      if (GpuStatus s = axisSize(axis, gridSizes, size); !s)
        return s;
      g.grid[c] *= size;
    }
    g.block[c] = record.block[c];
  }
  g.sharedBytes = record.dynamicSharedBytes;
  geometry = g;
  return GpuStatus::success();
}

GpuStatus gridBoundValues(const GpuLaunchRecord &record,
                          const std::vector<int64_t> &gridSizes,
                          std::vector<int32_t> &values,
                          const std::vector<int64_t> &symbols) {
  values.clear();
  for (const GpuKernelParam &p : record.params) {
    if (p.kind == GpuKernelParam::Kind::Symbol) {
      if (p.index >= symbols.size())
        return badRecord("passes symbols[" + std::to_string(p.index) +
                         "] but " + std::to_string(symbols.size()) +
                         " symbol values are given");
      values.push_back(static_cast<int32_t>(symbols[p.index]));
      continue;
    }
    if (p.kind != GpuKernelParam::Kind::GridBound)
      continue;
    int64_t size = 0;
    if (GpuStatus s = axisSize(p.axis, gridSizes, size); !s)
      return s;
    values.push_back(static_cast<int32_t>(size));
  }
  return GpuStatus::success();
}

GpuStatus checkPointerAlignment(const GpuLaunchRecord &record,
                                const std::vector<uint64_t> &inputs,
                                const std::vector<uint64_t> &outputs) {
  if (record.pointerAlignment <= 1)
    return GpuStatus::success();
  uint64_t alignment = static_cast<uint64_t>(record.pointerAlignment);
  for (const GpuKernelParam &p : record.params) {
    if (p.kind != GpuKernelParam::Kind::Pointer)
      continue;
    const std::vector<uint64_t> &operands = p.isOutput ? outputs : inputs;
    if (p.index >= operands.size() || operands[p.index] % alignment == 0)
      continue;
    return GpuStatus::failure(
        GpuError::Misaligned,
        std::string(p.isOutput ? "outputs[" : "inputs[") +
            std::to_string(p.index) + "] needs a " +
            std::to_string(alignment) +
            "-byte aligned address (the kernel's pointer_alignment), got " +
            std::to_string(operands[p.index]));
  }
  return GpuStatus::success();
}

std::vector<GpuTensorMap> tensorMapParams(const GpuLaunchRecord &record) {
  std::vector<GpuTensorMap> maps;
  for (const GpuKernelParam &p : record.params)
    if (p.kind == GpuKernelParam::Kind::TensorMap)
      maps.push_back(p.tensorMap);
  return maps;
}

GpuStatus tensorMapOperand(const GpuTensorMap &map,
                           const std::vector<uint64_t> &inputs,
                           const std::vector<uint64_t> &outputs,
                           uint64_t &address) {
  const std::vector<uint64_t> &from = map.isOutput ? outputs : inputs;
  if (map.input >= from.size())
    return GpuStatus::failure(GpuError::InvalidLaunchRecord,
                              std::string("a tensor map names ") +
                                  (map.isOutput ? "outputs[" : "inputs[") +
                                  std::to_string(map.input) + "]");
  address = from[map.input];
  return GpuStatus::success();
}

GpuStatus GpuKernelArgs::pack(const GpuLaunchRecord &record,
                              const std::vector<uint64_t> &inputs,
                              const std::vector<uint64_t> &outputs,
                              const std::vector<int64_t> &gridSizes,
                              const std::vector<uint64_t> &tensorMaps,
                              const std::vector<int64_t> &symbols) {
  slots.assign(record.params.size(), 0);
  pointers.clear();
  size_t nextMap = 0;
  for (size_t i = 0; i < record.params.size(); ++i) {
    const GpuKernelParam &p = record.params[i];
    uint64_t &slot = slots[i];
    switch (p.kind) {
    case GpuKernelParam::Kind::Pointer: {
      const std::vector<uint64_t> &from = p.isOutput ? outputs : inputs;
      if (p.index >= from.size())
        return badRecord("passes " +
                         std::string(p.isOutput ? "outputs[" : "inputs[") +
                         std::to_string(p.index) + "] but the call has " +
                         std::to_string(from.size()) +
                         (p.isOutput ? " outputs" : " inputs"));
      slot = from[p.index];
      break;
    }
    case GpuKernelParam::Kind::GridBound: {
      int64_t size = 0;
      if (GpuStatus s = axisSize(p.axis, gridSizes, size); !s)
        return s;
      int32_t value = static_cast<int32_t>(size);
      std::memcpy(&slot, &value, sizeof value);
      break;
    }
    case GpuKernelParam::Kind::Symbol: {
      if (p.index >= symbols.size())
        return badRecord("passes symbols[" + std::to_string(p.index) +
                         "] but " + std::to_string(symbols.size()) +
                         " symbol values are given");
      int32_t value = static_cast<int32_t>(symbols[p.index]);
      std::memcpy(&slot, &value, sizeof value);
      break;
    }
    case GpuKernelParam::Kind::TensorMap:
      if (nextMap >= tensorMaps.size())
        return badRecord("has more tensor-map parameters than the " +
                         std::to_string(tensorMaps.size()) +
                         " tensor maps given");
      slot = tensorMaps[nextMap++];
      break;
    }
    pointers.push_back(&slot);
  }
  return GpuStatus::success();
}

int64_t GpuBatchLoop::numBoundValues() const {
  int64_t n = 0;
  for (bool batched : batchedBounds)
    n += batched ? axisSize : 1;
  return n;
}

GpuStatus gpuBatchIteration(const GpuBatchLoop &loop, int64_t b,
                            const GpuBatchOperands &all,
                            GpuBatchOperands &iteration) {
  const std::vector<uint64_t> &inputs = all.inputs, &outputs = all.outputs;
  const std::vector<int64_t> &boundValues = all.bounds;
  auto bad = [](const std::string &what) {
    return GpuStatus::failure(GpuError::InvalidLaunchRecord,
                              "the batch loop " + what);
  };
  if (loop.axisSize < 1 || b < 0 || b >= loop.axisSize)
    return bad("has no iteration " + std::to_string(b) + " of " +
               std::to_string(loop.axisSize));
  if (inputs.size() != loop.inputStrides.size() ||
      outputs.size() != loop.outputStrides.size() ||
      static_cast<int64_t>(boundValues.size()) != loop.numBoundValues())
    return bad("takes " + std::to_string(loop.inputStrides.size()) +
               " inputs, " + std::to_string(loop.outputStrides.size()) +
               " outputs and " + std::to_string(loop.numBoundValues()) +
               " bound values; the launch passes " +
               std::to_string(inputs.size()) + ", " +
               std::to_string(outputs.size()) + " and " +
               std::to_string(boundValues.size()));
  auto slices = [&](const std::vector<uint64_t> &base,
                    const std::vector<uint64_t> &strides,
                    std::vector<uint64_t> &out) {
    out.clear();
    for (size_t i = 0; i < base.size(); ++i) {
      uint64_t offset, address;
      if (__builtin_mul_overflow(static_cast<uint64_t>(b), strides[i],
                                 &offset) ||
          __builtin_add_overflow(base[i], offset, &address))
        return false;
      out.push_back(address);
    }
    return true;
  };
  if (!slices(inputs, loop.inputStrides, iteration.inputs) ||
      !slices(outputs, loop.outputStrides, iteration.outputs))
    return bad("slice " + std::to_string(b) + " overflows the address space");
  iteration.bounds.clear();
  size_t next = 0;
  for (bool batched : loop.batchedBounds) {
    iteration.bounds.push_back(boundValues[next + (batched ? b : 0)]);
    next += batched ? loop.axisSize : 1;
  }
  return GpuStatus::success();
}

std::vector<int64_t> encodeGpuBatchLoop(const GpuBatchLoop &loop) {
  std::vector<int64_t> data{loop.axisSize};
  for (uint64_t s : loop.inputStrides)
    data.push_back(static_cast<int64_t>(s));
  for (uint64_t s : loop.outputStrides)
    data.push_back(static_cast<int64_t>(s));
  for (bool batched : loop.batchedBounds)
    data.push_back(batched ? 1 : 0);
  return data;
}

GpuStatus decodeGpuBatchLoop(const int64_t *data, int64_t size,
                             int64_t numInputs, int64_t numOutputs,
                             int64_t numDynamicBounds, GpuBatchLoop &loop) {
  auto bad = [](const std::string &what) {
    return GpuStatus::failure(GpuError::InvalidLaunchRecord,
                              "the embedded batch loop " + what);
  };
  if (numInputs < 0 || numOutputs < 0 || numDynamicBounds < 0 ||
      size != 1 + numInputs + numOutputs + numDynamicBounds || !data)
    return bad("has " + std::to_string(size) + " values; a call of " +
               std::to_string(numInputs) + " inputs, " +
               std::to_string(numOutputs) + " outputs and " +
               std::to_string(numDynamicBounds) + " dynamic bounds takes " +
               std::to_string(1 + numInputs + numOutputs + numDynamicBounds));
  GpuBatchLoop l;
  l.axisSize = data[0];
  if (l.axisSize < 1)
    return bad("has axis size " + std::to_string(l.axisSize));
  int64_t k = 1;
  for (int64_t i = 0; i < numInputs + numOutputs; ++i, ++k) {
    if (data[k] < 0)
      return bad("has a negative stride");
    (i < numInputs ? l.inputStrides : l.outputStrides)
        .push_back(static_cast<uint64_t>(data[k]));
  }
  for (int64_t i = 0; i < numDynamicBounds; ++i, ++k) {
    if (data[k] != 0 && data[k] != 1)
      return bad("has a bound flag " + std::to_string(data[k]));
    l.batchedBounds.push_back(data[k] == 1);
  }
  loop = std::move(l);
  return GpuStatus::success();
}

bool gatherGpuBatchBounds(const GpuBatchLoop &loop,
                          const int64_t *const *args, int64_t numArgs,
                          std::vector<int64_t> &values, bool &badArgument,
                          std::string &error) {
  values.clear();
  badArgument = false;
  if (numArgs != static_cast<int64_t>(loop.batchedBounds.size()) ||
      (numArgs > 0 && !args)) {
    error = "the entry point passes " + std::to_string(numArgs) +
            " grid bounds; the batch loop takes " +
            std::to_string(loop.batchedBounds.size());
    return false;
  }
  for (int64_t k = 0; k < numArgs; ++k) {
    bool batched = loop.batchedBounds[k];
    if (!args[k]) {
      badArgument = batched;
      error = batched ? "batched grid bound " + std::to_string(k) +
                            " (" + std::to_string(loop.axisSize) +
                            " values, one per batch iteration) is a null "
                            "pointer"
                      : "the entry point passes no value for grid bound " +
                            std::to_string(k);
      return false;
    }
    int64_t n = batched ? loop.axisSize : 1;
    values.insert(values.end(), args[k], args[k] + n);
  }
  return true;
}

} // namespace pallasc::launch
