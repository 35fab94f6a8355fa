//===- CudaLaunch.cpp - reading a CUDA launch record ------------*- C++ -*-===//

#include "src/Runtime/CudaLaunch.h"

using namespace mlir;

bool pallasc::runtime::readTensorMapParams(DictionaryAttr launch,
                                           size_t numInputs,
                                           std::vector<TensorMapParam> &maps,
                                           std::string &error) {
  auto params = launch.getAs<ArrayAttr>("params");
  if (!params)
    return true;
  for (Attribute a : params) {
    auto d = dyn_cast<DictionaryAttr>(a);
    auto kind = d ? d.getAs<StringAttr>("kind") : StringAttr();
    if (!kind || kind.getValue() != "tensor_map")
      continue;
    TensorMapParam m;
    auto operand = d.getAs<StringAttr>("operand");
    StringRef name = operand ? operand.getValue() : StringRef();
    auto dtype = d.getAs<StringAttr>("dtype");
    auto shape = d.getAs<ArrayAttr>("global_shape");
    auto box = d.getAs<ArrayAttr>("box_shape");
    if (!name.consume_front("inputs[") || !name.consume_back("]") ||
        name.getAsInteger(10, m.input) || m.input >= numInputs || !dtype ||
        !shape || !box || shape.size() != 2 || box.size() != 2) {
      error = "a tensor-map parameter of the launch record is malformed";
      return false;
    }
    m.bf16 = dtype.getValue() == "bf16";
    for (int i = 0; i < 2; ++i) {
      auto s = dyn_cast<IntegerAttr>(shape[i]);
      auto b = dyn_cast<IntegerAttr>(box[i]);
      if (!s || !b) {
        error = "a tensor-map parameter of the launch record is malformed";
        return false;
      }
      m.globalShape[i] = s.getInt();
      m.boxShape[i] = b.getInt();
    }
    maps.push_back(m);
  }
  return true;
}
