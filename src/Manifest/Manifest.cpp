//===- Manifest.cpp - The pallasc.manifest/v1 JSON manifest ----*- C++ -*-===//

#include "src/Manifest/Manifest.h"

#include "dialects/Pallas/IR/PallasOps.h"
#include "src/Spec/SpecToIR.h"
#include "src/Spec/SymExpr.h"
#include "src/Version.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"

using namespace mlir;
using json = nlohmann::json;

namespace pallasc {

std::string sha256Hex(llvm::StringRef data) {
  std::array<uint8_t, 32> digest = llvm::SHA256::hash(
      llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(data.data()),
                              data.size()));
  return llvm::toHex(digest, /*LowerCase=*/true);
}

static std::string printed(Attribute attr) {
  std::string s;
  llvm::raw_string_ostream os(s);
  attr.print(os);
  return s;
}

static json shapeJson(ArrayRef<int64_t> shape) {
  json j = json::array();
  for (int64_t d : shape)
    j.push_back(d);
  return j;
}

/// A symbolic call's symbols in launch order (@main's symbol arguments):
/// [{"name", "min", "max" (if any), "multiple_of"}].
static json symbolsJson(pallas::CallOp call) {
  auto symbols =
      call.getSymbolicAttr().getAs<DictionaryAttr>("symbols");
  std::vector<std::string> order;
  if (auto main = call->getParentOfType<func::FuncOp>())
    for (unsigned i = 0; i < main.getNumArguments(); ++i)
      if (auto n = main.getArgAttrOfType<StringAttr>(i, "pallas.symbol"))
        order.push_back(n.str());
  if (order.size() != symbols.size()) {
    order.clear();
    for (NamedAttribute na : symbols)
      order.push_back(na.getName().str());
  }
  json out = json::array();
  for (const std::string &name : order) {
    auto c = symbols.getAs<DictionaryAttr>(name);
    json j = json{{"name", name}};
    for (NamedAttribute k : c)
      j[k.getName().str()] = cast<IntegerAttr>(k.getValue()).getInt();
    out.push_back(j);
  }
  return out;
}

/// The byte count of a symbolic operand as a dimension expression: the
/// element size times its static dims times its one symbolic dim
/// ("16384*n"); with several symbolic dims, their product as text
/// ("4 * (n) * (m)").
static std::string elementsOrBytesExpr(ArrayAttr dims, RankedTensorType t,
                                       int64_t factor) {
  std::vector<std::string> symbolic;
  for (auto [d, a] : llvm::enumerate(dims)) {
    if (t.isDynamicDim(d))
      symbolic.push_back(cast<StringAttr>(a).str());
    else if (llvm::MulOverflow(factor, t.getDimSize(d), factor))
      return "overflow";
  }
  spec::DimExprError error;
  std::optional<spec::DimExpr> e =
      symbolic.size() == 1
          ? spec::parseDimExpr(symbolic[0], /*allowDivision=*/false, error)
          : std::nullopt;
  bool scaled = e.has_value();
  if (e) {
    for (auto &[name, c] : e->num.terms)
      scaled = scaled && !llvm::MulOverflow(c, factor, c);
    scaled = scaled &&
             !llvm::MulOverflow(e->num.constant, factor, e->num.constant);
  }
  if (scaled)
    return e->str();
  std::string text = std::to_string(factor);
  for (const std::string &s : symbolic)
    text += " * (" + s + ")";
  return text;
}

/// Bits per element in the kernel's storage: i1 (bool) takes a byte,
/// i4/i2 are packed (2 or 4 elements per byte).
static int64_t storageBits(Type element) {
  int64_t bits = element.getIntOrFloatBitWidth();
  return bits == 1 ? 8 : bits;
}

/// The byte count of a symbolic operand: elementsOrBytesExpr with the
/// element size as the factor, or for packed i4/i2 the element count
/// rounded up to whole bytes ("(4*n + 1) / 2", integer division).
static std::string bytesExpr(ArrayAttr dims, RankedTensorType t) {
  int64_t bits = storageBits(t.getElementType());
  if (bits >= 8)
    return elementsOrBytesExpr(dims, t, bits / 8);
  int64_t perByte = 8 / bits;
  std::string elements = elementsOrBytesExpr(dims, t, 1);
  if (elements == "overflow")
    return elements;
  return "(" + elements + " + " + std::to_string(perByte - 1) + ") / " +
         std::to_string(perByte);
}

static json blockJson(pallas::BlockSpecAttr spec) {
  json j = json::object();
  j["memory_space"] = pallas::stringifyMemorySpace(spec.getMemorySpace()).str();
  if (spec.getBufferCount())
    j["buffer_count"] = spec.getBufferCount();
  if (spec.isWholeArray()) {
    j["block_shape"] = nullptr;
    j["index_map"] = nullptr;
    return j;
  }
  json dims = json::array();
  for (unsigned i = 0, e = spec.getRank(); i < e; ++i) {
    switch (spec.getKind(i)) {
    case pallas::BlockDimKind::Blocked:
      dims.push_back(spec.getSizes()[i]);
      break;
    case pallas::BlockDimKind::Squeezed:
      dims.push_back(nullptr);
      break;
    case pallas::BlockDimKind::Element:
      dims.push_back(json{{"element", spec.getSizes()[i]},
                          {"padding", json::array({spec.getPadLow()[i],
                                                   spec.getPadHigh()[i]})}});
      break;
    }
  }
  j["block_shape"] = dims;
  if (spec.getIndexFunc())
    j["index_map"] = "@" + spec.getIndexFunc().getValue().str();
  else if (spec.getIndexMap()) {
    std::string text;
    llvm::raw_string_ostream os(text);
    spec.getIndexMap().print(os);
    j["index_map"] = text;
  }
  else
    j["index_map"] = nullptr;
  return j;
}

/// The bytes of an array of `shape` in the kernel's storage: elements
/// times the element's bytes, packed i4/i2 rounded up to whole bytes; or
/// nullopt when that leaves int64 (the manifest never holds a wrapped
/// count).
static std::optional<int64_t> checkedBytes(ArrayRef<int64_t> shape,
                                           Type element) {
  int64_t bits = storageBits(element);
  int64_t bytes = bits >= 8 ? bits / 8 : 1;
  for (int64_t d : shape)
    if (ShapedType::isDynamic(d) || llvm::MulOverflow(bytes, d, bytes))
      return std::nullopt;
  if (bits < 8)
    bytes = llvm::divideCeil(bytes, 8 / bits);
  return bytes;
}

static json typeJson(Type type) {
  json j = json::object();
  if (auto t = dyn_cast<RankedTensorType>(type)) {
    j["shape"] = shapeJson(t.getShape());
    j["dtype"] = spec::typeToDtype(t.getElementType());
    if (auto bytes = checkedBytes(t.getShape(), t.getElementType()))
      j["bytes"] = *bytes;
  } else if (auto r = dyn_cast<pallas::RefType>(type)) {
    j["shape"] = shapeJson(r.getShape());
    j["dtype"] = spec::typeToDtype(r.getElementType());
    j["memory_space"] =
        pallas::stringifyMemorySpace(r.getMemorySpace()).str();
    if (auto bytes = checkedBytes(r.getShape(), r.getElementType()))
      j["bytes"] = *bytes;
  } else {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << type;
    j["type"] = s;
  }
  return j;
}

/// Converts a dictionary attribute (metadata, batch_loop) to JSON.
static json attrJson(Attribute attr) {
  if (auto dict = dyn_cast<DictionaryAttr>(attr)) {
    json j = json::object();
    for (NamedAttribute na : dict)
      j[na.getName().str()] = attrJson(na.getValue());
    return j;
  }
  if (auto arr = dyn_cast<ArrayAttr>(attr)) {
    json j = json::array();
    for (Attribute a : arr)
      j.push_back(attrJson(a));
    return j;
  }
  if (auto s = dyn_cast<StringAttr>(attr))
    return s.str();
  if (auto b = dyn_cast<BoolAttr>(attr))
    return b.getValue();
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return i.getInt();
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
  if (auto ints = dyn_cast<DenseI64ArrayAttr>(attr))
    return shapeJson(ints.asArrayRef());
  return printed(attr);
}

/// The manifest's `compiler_params`: the keys the spec gave, each part only
/// when it has one (keys in sorted order, as before the params were typed).
/// `strict_fp` is not listed (it selects the compile options, see
/// docs/manifest.md).
static json compilerParamsJson(pallas::CompilerParamsAttr params) {
  json j = json::object();
  if (!params)
    return j;
  json gpu = json::object(), tpu = json::object();
  if (params.getNumStages())
    gpu["num_stages"] = *params.getNumStages();
  if (params.getNumWarps())
    gpu["num_warps"] = *params.getNumWarps();
  if (!params.getDimensionSemantics().empty()) {
    json sem = json::array();
    for (pallas::DimensionSemantics s : params.getDimensionSemantics())
      sem.push_back(pallas::stringifyDimensionSemantics(s).str());
    tpu["dimension_semantics"] = sem;
  }
  if (params.isSideEffecting())
    tpu["has_side_effects"] = true;
  else if (params.getHasSideEffects() ==
           pallas::SideEffectType::DataflowSideEffecting)
    tpu["has_side_effects"] = "dataflow_side_effecting";
  if (params.getVmemLimitBytes())
    tpu["vmem_limit_bytes"] = *params.getVmemLimitBytes();
  if (params.getCollectiveId())
    tpu["collective_id"] = *params.getCollectiveId();
  if (!gpu.empty())
    j["gpu"] = gpu;
  if (!tpu.empty())
    j["tpu"] = tpu;
  return j;
}

static json sourceJson(const ManifestSource &s) {
  return json{{"file", s.file}, {"sha256", s.sha256}};
}

/// The call fields of a Mosaic GPU kernel's manifest (docs/manifest.md,
/// "Mosaic GPU kernels"): those of a pallas.call with whole operands in
/// global memory, and the mesh in `mosaic_gpu`.
static json mosaicGpuCallJson(json m, const ManifestMosaicGpuCall &call) {
  m["eliminated"] = false;
  m["kernel"] = call.kernel;
  m["grid"] = call.grid;
  m["grid_names"] = call.gridNames;
  m["vmapped_dims"] = json::array();
  m["num_scalar_prefetch"] = 0;
  json operands = json::array();
  auto add = [&](Type type, const std::string &role, size_t i) {
    json op = typeJson(type);
    op["name"] = role + "s[" + std::to_string(i) + "]";
    op["role"] = role;
    op["memory_space"] = "any";
    op["block_shape"] = nullptr;
    op["index_map"] = nullptr;
    if (role == "input")
      op["pinned"] = false;
    op["index"] = operands.size();
    operands.push_back(std::move(op));
  };
  for (auto [i, t] : llvm::enumerate(call.inputs))
    add(t, "input", i);
  for (auto [i, t] : llvm::enumerate(call.outputs))
    add(t, "output", i);
  m["operands"] = operands;
  m["input_output_aliases"] = json::object();
  m["cost_estimate"] = nullptr;
  m["compiler_params"] = json::object();
  json metadata = json::object();
  for (const auto &[k, v] : call.metadata)
    metadata[k] = v;
  m["metadata"] = metadata;
  m["transforms"] = json::array();
  m["mosaic_gpu"] = json{{"cluster", call.cluster},
                         {"cluster_names", call.clusterNames},
                         {"num_threads", call.numThreads},
                         {"thread_name", call.threadName.empty()
                                             ? json(nullptr)
                                             : json(call.threadName)}};
  return m;
}

FailureOr<json> buildManifest(ModuleOp module, const ManifestInputs &in) {
  json m = json::object();
  m["schema"] = "pallasc.manifest/v1";
  m["pallasc_version"] = PALLASC_VERSION_STRING;
  m["name"] = in.name;
  m["sources"] = json{{"kernel", sourceJson(in.kernel)},
                      {"spec", sourceJson(in.spec)}};
  json artifacts = json::array();
  for (const ManifestArtifact &a : in.artifacts)
    artifacts.push_back(json{{"target", a.target},
                             {"file", a.file},
                             {"sha256", a.sha256},
                             {"launch", a.launch}});
  m["targets"] = artifacts;
  json emitted = json::array();
  for (const std::string &f : in.emitted)
    emitted.push_back(f);
  m["emitted"] = emitted;

  if (in.mosaicGpu)
    return mosaicGpuCallJson(std::move(m), *in.mosaicGpu);

  SmallVector<pallas::CallOp> calls;
  module.walk([&](pallas::CallOp call) { calls.push_back(call); });
  if (calls.size() > 1) {
    module.emitError() << "the module holds " << calls.size()
                       << " pallas.call ops; a manifest describes one";
    return failure();
  }
  if (calls.empty()) {
    auto wrapper =
        module.lookupSymbol<func::FuncOp>(spec::kCallWrapperName);
    if (!wrapper || !wrapper->hasAttr(kEliminatedAttrName)) {
      module.emitError() << "the module holds no pallas.call";
      return failure();
    }
    m["eliminated"] = true;
    if (auto applied = wrapper->getAttrOfType<ArrayAttr>("pallas.transforms"))
      m["transforms"] = attrJson(applied);
    else
      m["transforms"] = json::array();
    m["operands"] = json::array();
    return m;
  }

  pallas::CallOp call = calls.front();
  m["eliminated"] = false;
  m["kernel"] = call.getKernel().str();
  DictionaryAttr symbolic = call.getSymbolicAttr();
  auto gridExprOf = [&](size_t axis) -> std::string {
    if (!symbolic)
      return "";
    return cast<StringAttr>(symbolic.getAs<ArrayAttr>("grid")[axis]).str();
  };
  json grid = json::array();
  for (auto [a, g] : llvm::enumerate(call.getGrid())) {
    std::string e = gridExprOf(a);
    grid.push_back(!e.empty() ? json(e) : g == -1 ? json("dynamic") : json(g));
  }
  m["grid"] = grid;
  if (symbolic)
    m["symbols"] = symbolsJson(call);
  json names = json::array();
  if (auto gn = call.getGridNames())
    for (Attribute a : *gn)
      names.push_back(cast<StringAttr>(a).str());
  m["grid_names"] = names;
  json vmapped = json::array();
  for (int64_t d : call.getVmappedDims())
    vmapped.push_back(d);
  m["vmapped_dims"] = vmapped;
  m["num_scalar_prefetch"] = call.getNumScalarPrefetch();

  json operands = json::array();
  int64_t launchIndex = 0;
  std::string overflowing; // the first operand whose byte count leaves int64
  auto add = [&](json op) {
    if (overflowing.empty() && op.contains("shape") && !op.contains("bytes"))
      overflowing = op["name"].get<std::string>();
    op["index"] = launchIndex++;
    operands.push_back(std::move(op));
  };
  // A symbolic call's bounds that are expressions are no launch arguments.
  int64_t numBoundArgs = 0;
  for (auto [a, g] : llvm::enumerate(call.getGrid()))
    numBoundArgs += g == -1 && gridExprOf(a).empty();
  for (int64_t i = 0; i < numBoundArgs; ++i) {
    json op = json{{"role", "grid_bound"}, {"name", "grid_bounds[" +
                                                        std::to_string(i) +
                                                        "]"}};
    op["dtype"] = "index";
    add(op);
  }
  // Each operand's shape expression, and its byte count as one.
  auto symbolicShape = [&](json &op, StringRef key, size_t i, Type type) {
    if (!symbolic)
      return;
    auto dims = cast<ArrayAttr>(symbolic.getAs<ArrayAttr>(key)[i]);
    auto t = dyn_cast<RankedTensorType>(type);
    if (!t || t.hasStaticShape())
      return;
    json shape = json::array();
    for (auto [d, a] : llvm::enumerate(dims))
      shape.push_back(t.isDynamicDim(d) ? json(cast<StringAttr>(a).str())
                                        : json(t.getDimSize(d)));
    op["shape"] = shape;
    op["bytes"] = bytesExpr(dims, t);
  };
  int64_t nsp = call.getNumScalarPrefetch();
  llvm::DenseSet<int64_t> pinned(call.getPinnedInputs().begin(),
                                 call.getPinnedInputs().end());
  for (auto [i, v] : llvm::enumerate(call.getInputs())) {
    json op = typeJson(v.getType());
    int64_t idx = i;
    op["name"] = "inputs[" + std::to_string(idx) + "]";
    if (idx < nsp) {
      op["role"] = "index";
      op["memory_space"] = "smem";
    } else {
      op["role"] = "input";
      op.update(blockJson(
          cast<pallas::BlockSpecAttr>(call.getInSpecs()[idx - nsp])));
    }
    op["pinned"] = pinned.contains(idx);
    symbolicShape(op, "inputs", i, v.getType());
    add(op);
  }
  for (auto [i, v] : llvm::enumerate(call.getOutputs())) {
    json op = typeJson(v.getType());
    op["name"] = "outputs[" + std::to_string(i) + "]";
    op["role"] = "output";
    op.update(blockJson(cast<pallas::BlockSpecAttr>(call.getOutSpecs()[i])));
    symbolicShape(op, "outputs", i, v.getType());
    add(op);
  }
  for (auto [i, t] : llvm::enumerate(call.getScratch())) {
    json op = typeJson(cast<TypeAttr>(t).getValue());
    op["name"] = "scratch[" + std::to_string(i) + "]";
    op["role"] = "scratch";
    add(op);
  }
  // The symbols' values follow every other launch argument (the CPU entry
  // point's `int64_t n` parameters).
  if (symbolic)
    for (const json &sym : m["symbols"])
      add(json{{"role", "symbol"},
               {"name", sym["name"]},
               {"dtype", "i64"}});
  if (!overflowing.empty())
    return call.emitOpError()
           << "cannot be described in the manifest: the size in bytes of "
           << overflowing << " overflows int64";
  m["operands"] = operands;

  json aliases = json::object();
  for (auto [inIdx, outIdx] : call.getAliasPairs())
    aliases[std::to_string(inIdx)] = outIdx;
  m["input_output_aliases"] = aliases;

  if (auto cost = call.getCostEstimateAttr())
    m["cost_estimate"] = json{{"flops", cost.getFlops()},
                              {"bytes_accessed", cost.getBytesAccessed()},
                              {"transcendentals", cost.getTranscendentals()}};
  else
    m["cost_estimate"] = nullptr;
  m["compiler_params"] = compilerParamsJson(call.getCompilerParamsAttr());
  m["metadata"] =
      call.getMetadataAttr() ? attrJson(call.getMetadataAttr()) : json::object();
  m["transforms"] = attrJson(call.getTransforms());
  // pallas-vmap's explicit-loop fallback: the call above runs once per batch
  // element (see docs/manifest.md, "batch_loop").
  if (auto loop = call->getAttrOfType<DictionaryAttr>(kBatchLoopAttrName))
    m["batch_loop"] = attrJson(loop);
  return m;
}

std::string manifestToString(const json &manifest) {
  // `replace` keeps dump() from throwing on invalid UTF-8 in user strings.
  return manifest.dump(2, ' ', /*ensure_ascii=*/false,
                       json::error_handler_t::replace) +
         "\n";
}

} // namespace pallasc
