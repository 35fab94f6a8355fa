//===- GpuLaunchRecord.cpp - Reading pallas-to-gpu's launch record -*- C++ -*-===//

#include "src/Target/GpuLaunchRecord.h"

using namespace mlir;

namespace pallasc {

namespace {

bool readInt(Attribute a, int64_t &out) {
  auto i = dyn_cast_or_null<IntegerAttr>(a);
  if (!i)
    return false;
  out = i.getInt();
  return true;
}

bool readInts(Attribute a, std::vector<int64_t> &out) {
  auto array = dyn_cast_or_null<ArrayAttr>(a);
  if (!array)
    return false;
  out.clear();
  for (Attribute e : array) {
    int64_t v;
    if (!readInt(e, v))
      return false;
    out.push_back(v);
  }
  return true;
}

/// "inputs[3]" / "outputs[0]".
bool readOperand(DictionaryAttr param, bool &isOutput, size_t &index) {
  auto operand = param.getAs<StringAttr>("operand");
  StringRef name = operand ? operand.getValue() : StringRef();
  if (name.consume_front("inputs["))
    isOutput = false;
  else if (name.consume_front("outputs["))
    isOutput = true;
  else
    return false;
  return name.consume_back("]") && !name.getAsInteger(10, index);
}

bool readTensorMap(DictionaryAttr d, launch::GpuKernelParam &p) {
  auto dtype = d.getAs<StringAttr>("dtype");
  std::vector<int64_t> shape, box;
  if (!readOperand(d, p.isOutput, p.index) || p.isOutput || !dtype ||
      !readInts(d.get("global_shape"), shape) ||
      !readInts(d.get("box_shape"), box) || shape.size() != 2 ||
      box.size() != 2)
    return false;
  p.tensorMap.input = p.index;
  p.tensorMap.bf16 = dtype.getValue() == "bf16";
  for (int i = 0; i < 2; ++i) {
    p.tensorMap.globalShape[i] = shape[i];
    p.tensorMap.boxShape[i] = box[i];
  }
  return true;
}

} // namespace

bool readGpuLaunchRecord(DictionaryAttr launch, launch::GpuLaunchRecord &record,
                         std::string &error) {
  using Param = launch::GpuKernelParam;
  launch::GpuLaunchRecord r;
  auto malformed = [&](const char *field) {
    error = std::string("the launch record's ") + field +
            " is missing or malformed";
    return false;
  };
  if (!launch)
    return malformed("dictionary");
  auto entry = launch.getAs<StringAttr>("entry");
  if (!entry)
    return malformed("entry");
  r.entry = entry.str();
  std::vector<int64_t> block;
  if (!readInts(launch.get("block"), block) || block.size() != 3)
    return malformed("block");
  for (int c = 0; c < 3; ++c)
    r.block[c] = block[c];
  auto axes = launch.getAs<ArrayAttr>("grid_axes");
  if (!axes || axes.size() != 3)
    return malformed("grid_axes");
  for (int c = 0; c < 3; ++c)
    if (!readInts(axes[c], r.gridAxes[c]))
      return malformed("grid_axes");
  if (Attribute ws = launch.get("warp_size"); ws && !readInt(ws, r.warpSize))
    return malformed("warp_size");
  if (!readInt(launch.get("dynamic_shared_memory_bytes"),
               r.dynamicSharedBytes))
    return malformed("dynamic_shared_memory_bytes");
  if (Attribute ps = launch.get("params")) {
    auto params = dyn_cast<ArrayAttr>(ps);
    if (!params)
      return malformed("params");
    for (Attribute a : params) {
      auto d = dyn_cast<DictionaryAttr>(a);
      auto kind = d ? d.getAs<StringAttr>("kind") : StringAttr();
      if (!kind)
        return malformed("params");
      Param p;
      if (kind.getValue() == "pointer") {
        p.kind = Param::Kind::Pointer;
        if (!readOperand(d, p.isOutput, p.index))
          return malformed("params");
      } else if (kind.getValue() == "i32") {
        p.kind = Param::Kind::GridBound;
        if (!readInt(d.get("axis"), p.axis))
          return malformed("params");
      } else if (kind.getValue() == "tensor_map") {
        p.kind = Param::Kind::TensorMap;
        if (!readTensorMap(d, p)) {
          error = "a tensor-map parameter of the launch record is malformed";
          return false;
        }
      } else {
        return malformed("params");
      }
      r.params.push_back(p);
    }
  }
  record = std::move(r);
  return true;
}

} // namespace pallasc
