//===- TPUSerialize.cpp - Mosaic serialization and backend config -*- C++ -*-===//

#include "src/Target/TPUSerialize.h"
#include "dialects/TPU/IR/TPUDialect.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Base64.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdlib>

using namespace mlir;

namespace pallasc::tpu {

/// Mosaic's downgrade rules (serde.cc) for the ops pallasc emits, applied to
/// the attribute list of `op` (named `name`) when writing `version`.
static LogicalResult downgrade(Operation *op, StringRef name,
                               NamedAttrList &attrs, int version) {
  if (name == "tpu.matmul" && version < 13) {
    // transpose_lhs_hint appeared in version 13.
    if (auto hint = dyn_cast_or_null<BoolAttr>(attrs.get("transpose_lhs_hint"));
        hint && hint.getValue())
      return op->emitError() << "tpu.matmul with transpose_lhs_hint = true "
                                "cannot be written at Mosaic version "
                             << version << " (needs 13)";
    attrs.erase("transpose_lhs_hint");
  }
  if (name == "tpu.matmul" && version >= 13 && !attrs.get("transpose_lhs_hint"))
    attrs.set("transpose_lhs_hint", BoolAttr::get(op->getContext(), false));
  bool dma = name == "tpu.enqueue_dma";
  if ((dma || name == "tpu.sem_signal") && version < 14) {
    // The subcore_id operand (the last segment) appeared in version 14.
    size_t count = dma ? 7 : 5;
    auto segments =
        dyn_cast_or_null<DenseI32ArrayAttr>(attrs.get("operandSegmentSizes"));
    if (!segments || segments.size() != count)
      return op->emitError() << name << " without its " << count
                             << " operand segment sizes";
    if (segments[count - 1] != 0)
      return op->emitError() << name << " with a subcore_id cannot be "
                                "written at Mosaic version "
                             << version << " (needs 14)";
    attrs.set("operandSegmentSizes",
              DenseI32ArrayAttr::get(op->getContext(),
                                     segments.asArrayRef().drop_back()));
  }
  return success();
}

LogicalResult serializeForMosaic(ModuleOp module, int version) {
  if (version < kMinMosaicVersion || version > kMaxMosaicVersion)
    return module.emitError() << "Mosaic IR version " << version
                              << " is not supported (pallasc writes "
                              << kMinMosaicVersion << " to "
                              << kMaxMosaicVersion << ")";
  MLIRContext *ctx = module.getContext();
  // Post-order, as Mosaic's serde: an op's regions are renamed before it.
  SmallVector<Operation *> ops;
  module.walk<WalkOrder::PostOrder>([&](Operation *op) {
    if (op != module.getOperation())
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    StringRef name = op->getName().getStringRef();
    NamedAttrList attrs(op->getAttrDictionary());
    if (failed(downgrade(op, name, attrs, version)))
      return failure();
    OperationName newName((kMangledPrefix + name).str(), ctx);
    SmallVector<Region *> regions;
    for (Region &r : op->getRegions())
      regions.push_back(&r);
    Operation *renamed = Operation::create(
        op->getLoc(), newName, op->getResultTypes(), op->getOperands(),
        std::move(attrs), /*properties=*/nullptr, op->getSuccessors(),
        regions);
    op->getBlock()->getOperations().insertAfter(Block::iterator(op), renamed);
    op->replaceAllUsesWith(renamed->getResults());
    op->erase();
  }
  module->setAttr(kVersionAttrName,
                  IntegerAttr::get(IntegerType::get(ctx, 64), version));
  return success();
}

FailureOr<std::string> writeMosaicBytecode(ModuleOp module) {
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  BytecodeWriterConfig config;
  config.setDesiredBytecodeVersion(0);
  if (failed(writeBytecodeToFile(module, os, config)))
    return module.emitError() << "cannot write the Mosaic module as MLIR "
                                 "bytecode version 0",
           failure();
  return bytes;
}

/// Python's json.dumps(kwargs, sort_keys=True, indent=0, separators=(",",
/// ":")) for a flat object of integers.
static std::string compactJsonObject(
    std::vector<std::pair<std::string, int64_t>> fields) {
  std::sort(fields.begin(), fields.end());
  std::string s = "{";
  for (size_t i = 0; i < fields.size(); ++i)
    s += (i ? ",\n\"" : "\n\"") + fields[i].first +
         "\":" + std::to_string(fields[i].second);
  return s + "\n}";
}

/// Python's str() of a float, as the flags writer uses it.
static std::string pythonFloat(double d) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format("%.17g", d);
  // Shortest repr that round-trips, as Python's repr/str.
  for (int precision = 1; precision <= 17; ++precision) {
    std::string t;
    llvm::raw_string_ostream ts(t);
    ts << llvm::format("%.*g", precision, d);
    if (std::strtod(t.c_str(), nullptr) == d) {
      s = t;
      break;
    }
  }
  if (s.find_first_of(".eEn") == std::string::npos)
    s += ".0";
  return s;
}

bool hasCommunication(ModuleOp module) {
  WalkResult r = module.walk([](Operation *op) {
    if (auto dma = dyn_cast<::mlir::tpu::EnqueueDMAOp>(op); dma && dma.getDeviceId())
      return WalkResult::interrupt();
    if (auto sig = dyn_cast<::mlir::tpu::SemaphoreSignalOp>(op); sig && sig.getDeviceId())
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return r.wasInterrupted();
}

std::string backendConfigJson(StringRef body, const BackendConfig &config) {
  std::string out = "{\"custom_call_config\": {\"body\": \"";
  out += llvm::encodeBase64(body);
  out += "\"";
  if (config.hasCommunication)
    out += ", \"has_communication\": true";
  if (config.collectiveId)
    out += ", \"collective_id\": " + std::to_string(*config.collectiveId);
  if (config.costEstimate)
    out += ", \"cost_estimate\": " +
           compactJsonObject(
               {{"flops", config.costEstimate->flops},
                {"transcendentals", config.costEstimate->transcendentals},
                {"bytes_accessed", config.costEstimate->bytesAccessed},
                {"remote_bytes_transferred",
                 config.costEstimate->remoteBytesTransferred}});
  out += ", \"serialization_format\": " +
         std::to_string(config.serializationFormat);
  if (config.needsLayoutPasses)
    out += ", \"needs_layout_passes\": true";
  out += "}";
  if (config.vmemLimitBytes)
    out += ", \"scoped_memory_configs\": [{\"memory_space\":1, \"offset\": 0, "
           "\"size\": " +
           std::to_string(*config.vmemLimitBytes) + "}]";
  if (!config.flags.empty()) {
    out += ", \"flag_configs\": [";
    for (size_t i = 0; i < config.flags.size(); ++i) {
      const BackendConfig::Flag &f = config.flags[i];
      out += "{\"flag_type\": \"" + f.name + "\", \"value\": {";
      switch (f.kind) {
      case BackendConfig::Flag::Kind::Bool:
        out += std::string("\"boolean_value\": ") + (f.b ? "true" : "false");
        break;
      case BackendConfig::Flag::Kind::Int:
        out += "\"integer_value\": " + std::to_string(f.i);
        break;
      case BackendConfig::Flag::Kind::Double:
        out += "\"double_value\": " + pythonFloat(f.d);
        break;
      }
      out += "}}";
      if (i + 1 != config.flags.size())
        out += ",";
    }
    out += "]";
  }
  out += "}";
  return out;
}

} // namespace pallasc::tpu
