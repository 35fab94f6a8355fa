//===- GpuLaunchRecordReader.cpp - Reading pallas-to-gpu's launch record -*- C++ -*-===//

#include "src/Target/GpuLaunchRecordReader.h"

using namespace mlir;
using namespace mlir::pallas;

namespace pallasc {

launch::GpuLaunchRecord readGpuLaunchRecord(GpuLaunchAttr launch) {
  using Param = launch::GpuKernelParam;
  launch::GpuLaunchRecord r;
  r.entry = launch.getEntry().str();
  for (int c = 0; c < 3; ++c) {
    r.block[c] = launch.getBlock()[c];
    r.gridAxes[c].assign(launch.getGridAxes(c).begin(),
                         launch.getGridAxes(c).end());
  }
  r.warpSize = launch.getWarpSize();
  r.dynamicSharedBytes = launch.getDynamicSharedMemoryBytes();
  for (GpuParamAttr a : launch.getParams()) {
    Param p;
    switch (a.getKind()) {
    case GpuParamKind::Pointer:
      p.kind = Param::Kind::Pointer;
      p.index = static_cast<size_t>(a.getIndex());
      p.isOutput = a.getGroup() == GpuOperandGroup::Outputs;
      break;
    case GpuParamKind::GridBound:
      // index and isOutput stay unset: the bound is the axis'.
      p.kind = Param::Kind::GridBound;
      p.axis = *a.getAxis();
      break;
    case GpuParamKind::Symbol:
      p.kind = Param::Kind::Symbol;
      p.index = static_cast<size_t>(a.getIndex());
      break;
    case GpuParamKind::TensorMap:
      p.kind = Param::Kind::TensorMap;
      p.index = static_cast<size_t>(a.getIndex());
      p.tensorMap.input = p.index;
      p.tensorMap.isOutput = a.getGroup() == GpuOperandGroup::Outputs;
      p.tensorMap.bf16 = a.getDtype().isBF16();
      p.tensorMap.rank = static_cast<int>(a.getGlobalShape().size());
      for (int i = 0; i < p.tensorMap.rank; ++i) {
        p.tensorMap.globalShape[i] = a.getGlobalShape()[i];
        p.tensorMap.boxShape[i] = a.getBoxShape()[i];
      }
      break;
    }
    r.params.push_back(p);
  }
  return r;
}

} // namespace pallasc
