//===- TPUArtifacts.cpp - --target tpu: Mosaic module + config -*- C++ -*-===//

#include "src/Target/TPUArtifacts.h"

#include "src/Driver/Timing.h"

#include "src/Target/TPUSerialize.h"

#include "dialects/Pallas/IR/GridMapping.h"
#include "dialects/Pallas/IR/PallasOps.h"
#include "dialects/TPU/IR/TPUDialect.h"
#include "passes/Pipelines/TpuPipeline.h"
#include "src/Spec/SpecToIR.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using json = nlohmann::json;

namespace pallasc {

bool isTpuTarget(llvm::StringRef target) { return target == "tpu"; }

/// File locations keep only the file name, so the artifact does not depend
/// on where the build ran.
static void stripLocationDirectories(ModuleOp module) {
  AttrTypeReplacer replacer;
  replacer.addReplacement([](FileLineColLoc loc) -> Attribute {
    StringRef file = loc.getFilename().getValue();
    return FileLineColLoc::get(loc.getContext(),
                               llvm::sys::path::filename(file),
                               loc.getLine(), loc.getColumn());
  });
  replacer.recursivelyReplaceElementsIn(module, /*replaceAttrs=*/false,
                                        /*replaceLocs=*/true,
                                        /*replaceTypes=*/false);
}

/// The launch description of the custom call, from the call before
/// lowering.
static json launchJson(pallas::CallOp call, const std::string &kernelName,
                       int version, const std::string &configFile) {
  json j = json::object();
  j["custom_call_target"] = "tpu_custom_call";
  j["kernel_name"] = kernelName;
  j["mosaic_version"] = version;
  j["backend_config"] = configFile;
  // A symbolic call's grid entry that is an expression is a dynamic bound
  // computed from the symbols: the manifest names the expression.
  DictionaryAttr symbolic = call.getSymbolicAttr();
  json grid = json::array();
  for (auto [axis, g] : llvm::enumerate(call.getGrid())) {
    std::string expr;
    if (symbolic)
      expr = cast<StringAttr>(symbolic.getAs<ArrayAttr>("grid")[axis]).str();
    grid.push_back(!expr.empty() ? json(expr)
                   : g < 0       ? json("dynamic")
                                 : json(g));
  }
  j["iteration_bounds"] = grid;
  // Operands of the custom call: dynamic grid bounds (i32), then inputs.
  j["num_dynamic_grid_bounds"] = call.getDynamicGridBounds().size();
  // Then, when a result has a symbolic dimension, one i32 shape tensor per
  // result (mlir.custom_call's result_shapes: `indices_of_shape_operands`).
  if (symbolic &&
      llvm::any_of(call.getResultTypes(), [](Type t) {
        return !cast<ShapedType>(t).hasStaticShape();
      })) {
    json shapes = json::array();
    for (Attribute out : symbolic.getAs<ArrayAttr>("outputs")) {
      json shape = json::array();
      for (Attribute d : cast<ArrayAttr>(out)) {
        StringRef text = cast<StringAttr>(d).getValue();
        int64_t value;
        if (!text.getAsInteger(10, value))
          shape.push_back(value);
        else
          shape.push_back(text.str());
      }
      shapes.push_back(shape);
    }
    j["result_shape_operands"] = shapes;
  }
  pallas::CompilerParamsAttr params = call.getCompilerParamsAttr();
  j["has_side_effects"] = params && params.isSideEffecting();
  json aliases = json::object();
  pallas::GridMapping mapping = pallas::GridMapping::get(call);
  for (auto [in, out] : mapping.getAliases())
    aliases[std::to_string(in)] = out;
  j["input_output_aliases"] = aliases;
  return j;
}

FailureOr<TpuArtifacts> emitTpuArtifacts(ModuleOp module,
                                         const std::string &name,
                                         bool emitText) {
  MLIRContext *ctx = module.getContext();
  SmallVector<pallas::CallOp> calls;
  module.walk([&](pallas::CallOp c) { calls.push_back(c); });
  if (calls.empty()) {
    // dce eliminated the call: nothing runs, so there is no kernel to write
    // (the manifest says `eliminated`).
    auto wrapper = module.lookupSymbol<func::FuncOp>(spec::kCallWrapperName);
    if (wrapper && wrapper->hasAttr(kEliminatedAttrName))
      return TpuArtifacts();
  }
  if (calls.size() != 1) {
    module.emitError() << "--target tpu needs exactly one pallas.call; the "
                          "module holds "
                       << calls.size();
    return failure();
  }
  pallas::CallOp call = calls.front();

  tpu::BackendConfig config;
  if (auto cost = call.getCostEstimateAttr())
    config.costEstimate = tpu::BackendConfig::Cost{
        cost.getFlops(), cost.getTranscendentals(), cost.getBytesAccessed(), 0};
  if (auto params = call.getCompilerParamsAttr()) {
    if (params.getVmemLimitBytes())
      config.vmemLimitBytes = *params.getVmemLimitBytes();
    config.collectiveId = params.getCollectiveId();
  }
  std::string kernelName =
      call.getName() && !call.getName()->empty() ? call.getName()->str()
                                                 : call.getKernel().str();
  const int version = tpu::kDefaultMosaicVersion;

  Step targetStep("tpu");
  // Lower a copy: the manifest is written from the original call.
  OwningOpRef<ModuleOp> mosaic = cast<ModuleOp>(module->clone());
  {
    Step step("lowering");
    PassManager pm(ctx);
    setUpLoweringPipeline(pm);
    pallas::buildTpuPipeline(pm);
    if (failed(pm.run(*mosaic)))
      return failure();
    // Once at the end unless --verify-each (setUpLoweringPipeline).
    if (!verifyEachPass() && failed(verify(*mosaic)))
      return failure();
  }
  stripLocationDirectories(*mosaic);
  // As Mosaic's private_has_communication: a remote copy or signal.
  config.hasCommunication = tpu::hasCommunication(*mosaic);
  // As Pallas' TPU lowering: a kernel with a barrier semaphore names it.
  if (!config.collectiveId) {
    WalkResult barrier = mosaic->walk([](mlir::tpu::GetBarrierSemaphoreOp op) {
      op.emitError() << "pltpu.get_barrier_semaphore() needs the call's "
                        "compiler_params.tpu.collective_id "
                        "(pltpu.CompilerParams(collective_id=...))";
      return WalkResult::interrupt();
    });
    if (barrier.wasInterrupted())
      return failure();
  }

  TpuArtifacts out;
  if (emitText) {
    std::string text;
    llvm::raw_string_ostream os(text);
    mosaic->print(os);
    std::string file = name + ".tpu.mlir";
    out.files.push_back({file, text});
    out.emitted.push_back(file);
  }

  Step serializeStep("serialization");
  // mosaic-serde creates unregistered stable_mosaic.* ops.
  bool allowed = ctx->allowsUnregisteredDialects();
  ctx->allowUnregisteredDialects(true);
  LogicalResult serialized = tpu::serializeForMosaic(*mosaic, version);
  FailureOr<std::string> bytecode =
      succeeded(serialized) ? tpu::writeMosaicBytecode(*mosaic)
                            : FailureOr<std::string>(failure());
  mosaic = nullptr;
  ctx->allowUnregisteredDialects(allowed);
  if (failed(bytecode))
    return failure();

  std::string moduleFile = name + ".tpu.mlirbc";
  std::string configFile = name + ".tpu.json";
  std::string configText = tpu::backendConfigJson(*bytecode, config);
  out.files.push_back({moduleFile, *bytecode});
  out.files.push_back({configFile, configText});

  json launch = launchJson(call, kernelName, version, configFile);
  ManifestArtifact moduleEntry{"tpu", moduleFile, sha256Hex(*bytecode),
                               launch};
  moduleEntry.launch["kind"] = "mosaic_module";
  ManifestArtifact configEntry{"tpu", configFile, sha256Hex(configText),
                               launch};
  configEntry.launch["kind"] = "backend_config";
  out.manifestEntries.push_back(moduleEntry);
  out.manifestEntries.push_back(configEntry);
  return out;
}

} // namespace pallasc
