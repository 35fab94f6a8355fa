//===- CpuTarget.cpp - --target cpu: a host object file ---------*- C++ -*-===//

#include "src/Driver/CpuTarget.h"

#include "dialects/Pallas/IR/GridMapping.h"
#include "dialects/Pallas/IR/PallasOps.h"
#include "src/Driver/Diagnostics.h"
#include "src/Driver/Timing.h"
#include "src/Runtime/HostCode.h"
#include "src/Launch/RuntimeSymbols.h"

#include "mlir/IR/OwningOpRef.h"

using namespace mlir;
using json = nlohmann::json;

namespace pallasc {

LogicalResult emitCpuArtifact(ModuleOp module, const std::string &name,
                              std::string &file, std::string &bytes,
                              ManifestArtifact &entry) {
  pallas::CallOp call;
  module.walk([&](pallas::CallOp c) { call = c; });
  if (!call)
    return success(); // eliminated: the manifest says so
  int64_t axes = static_cast<int64_t>(
      pallas::GridMapping::get(call).getVisibleAxes().size());
  json indexMaps = json::object();
  auto addMaps = [&](ArrayAttr specs, const char *what) {
    for (auto [i, a] : llvm::enumerate(specs))
      if (auto f = cast<pallas::BlockSpecAttr>(a).getIndexFunc())
        indexMaps[std::string(what) + "[" + std::to_string(i) + "]"] =
            "_mlir_ciface_" + f.getValue().str();
  };
  addMaps(call.getInSpecs(), "in_specs");
  addMaps(call.getOutSpecs(), "out_specs");
  std::string kernel = call.getKernel().str();

  OwningOpRef<ModuleOp> copy = module.clone();
  {
    Step step("lowering");
    if (failed(runtime::lowerForHost(*copy)))
      return failure();
  }
  Step step("codegen (LLVM)");
  std::string error;
  if (!runtime::emitHostObject(*copy, bytes, error)) {
    logError("error: --target cpu: " + error);
    return failure();
  }
  json runtimeSymbols = json::array();
  for (auto [symbol, address] : runtime::runtimeSymbols())
    runtimeSymbols.push_back(symbol);
  file = name + ".cpu.o";
  entry.target = "cpu";
  entry.file = file;
  entry.sha256 = sha256Hex(bytes);
  entry.launch = json{
      {"triple", runtime::hostTriple()},
      {"abi", "mlir-c-interface"},
      {"entry", "_mlir_ciface_" + kernel},
      {"grid_axes", axes},
      {"arguments",
       "i32 program id per kernel-visible grid axis, then i32 grid size per "
       "axis, then a pointer to a strided memref descriptor per ref (scalar "
       "prefetch, inputs, outputs, scratch) of the block's shape, which may "
       "view a larger array"},
      {"index_maps", indexMaps},
      {"runtime_symbols", runtimeSymbols},
  };
  return success();
}

} // namespace pallasc
