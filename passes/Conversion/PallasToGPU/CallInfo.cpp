//===- CallInfo.cpp - pallas-to-gpu: the recorded call and the kernel -*- C++ -*-===//
//
// What pallas-to-gpu reads: pallas-gpu-prepare's record of the pallas.call
// (`pallas.gpu.call`, a #pallas.gpu_call) and the signature of the kernel
// pallas-to-linalg lowered.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/PallasToGPU/KernelSkeleton.h"
#include "dialects/Pallas/IR/GpuCallAttrs.h"

#include "llvm/Support/MathExtras.h"

#include <cctype>
#include <numeric>

using namespace mlir;
using namespace mlir::pallas;

namespace mlir::pallas::gpu {

std::optional<int64_t>
LinearSize::highest(ArrayRef<SymbolInfo> symbols) const {
  int64_t v = constant;
  for (auto [s, c] : terms) {
    std::optional<int64_t> x =
        c > 0 ? symbols[s].max : std::optional<int64_t>(symbols[s].min);
    int64_t term;
    if (!x || llvm::MulOverflow(c, *x, term) ||
        llvm::AddOverflow(v, term, v))
      return std::nullopt;
  }
  return v;
}

int64_t LinearSize::knownDivisor(ArrayRef<SymbolInfo> symbols) const {
  uint64_t g = static_cast<uint64_t>(std::abs(constant));
  for (auto [s, c] : terms) {
    uint64_t t = static_cast<uint64_t>(std::abs(c)) *
                 static_cast<uint64_t>(symbols[s].multipleOf);
    g = std::gcd(g, t);
  }
  return g == 0 || g > (uint64_t(1) << 40) ? 1 : static_cast<int64_t>(g);
}

namespace {

/// Parses a canonical linear dimension expression (DimExpr::str() of
/// src/Spec/SymExpr.h: "n", "2*n + 8", "n - 1", "128") over `symbols`.
std::optional<LinearSize> parseLinearSize(StringRef text,
                                          ArrayRef<SymbolInfo> symbols) {
  LinearSize ls;
  std::string s;
  for (char c : text)
    if (c != ' ')
      s += c;
  size_t i = 0;
  if (s.empty())
    return std::nullopt;
  while (i < s.size()) {
    int64_t sign = 1;
    if (s[i] == '+' || s[i] == '-') {
      sign = s[i] == '-' ? -1 : 1;
      ++i;
    } else if (i != 0) {
      return std::nullopt;
    }
    int64_t coef = 1;
    bool hasNum = false;
    size_t j = i;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j])))
      ++j;
    if (j > i) {
      if (StringRef(s).substr(i, j - i).getAsInteger(10, coef))
        return std::nullopt;
      hasNum = true;
      i = j;
      if (i < s.size() && s[i] == '*')
        ++i;
      else {
        ls.constant += sign * coef;
        continue;
      }
    }
    j = i;
    while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) ||
                            s[j] == '_'))
      ++j;
    if (j == i)
      return std::nullopt;
    StringRef name = StringRef(s).substr(i, j - i);
    i = j;
    auto it = llvm::find_if(symbols,
                            [&](const SymbolInfo &x) { return x.name == name; });
    if (it == symbols.end())
      return std::nullopt;
    (void)hasNum;
    ls.terms.push_back({it - symbols.begin(), sign * coef});
  }
  return ls;
}

/// Reads `pallas.gpu.symbolic` (pallas.call's verified `symbolic`).
LogicalResult readSymbolic(ModuleOp module, CallInfo &info) {
  auto sym = module->getAttrOfType<DictionaryAttr>(kGpuSymbolicAttrName);
  if (!sym)
    return success();
  auto bad = [&]() {
    return module.emitError()
           << "'" << kGpuSymbolicAttrName
           << "' is not a pallas.call `symbolic` dictionary: " << sym;
  };
  auto symbols = sym.getAs<DictionaryAttr>("symbols");
  if (!symbols)
    return bad();
  for (NamedAttribute s : symbols) {
    SymbolInfo si;
    si.name = s.getName().getValue().str();
    auto c = dyn_cast<DictionaryAttr>(s.getValue());
    if (!c)
      return bad();
    if (auto v = c.getAs<IntegerAttr>("min"))
      si.min = v.getInt();
    if (auto v = c.getAs<IntegerAttr>("max"))
      si.max = v.getInt();
    if (auto v = c.getAs<IntegerAttr>("multiple_of"))
      si.multipleOf = std::max<int64_t>(1, v.getInt());
    info.symbols.push_back(si);
  }
  auto operands = [&](StringRef key, ArrayRef<RankedTensorType> types,
                      SmallVector<SmallVector<std::optional<LinearSize>>> &out)
      -> LogicalResult {
    auto arr = sym.getAs<ArrayAttr>(key);
    if (!arr || arr.size() != types.size())
      return bad();
    for (auto [t, a] : llvm::zip(types, arr)) {
      auto dims = dyn_cast<ArrayAttr>(a);
      if (!dims || static_cast<int64_t>(dims.size()) != t.getRank())
        return bad();
      SmallVector<std::optional<LinearSize>> per;
      for (auto [d, e] : llvm::enumerate(dims)) {
        if (!t.isDynamicDim(d)) {
          per.push_back(std::nullopt);
          continue;
        }
        auto text = dyn_cast<StringAttr>(e);
        std::optional<LinearSize> ls =
            text ? parseLinearSize(text.getValue(), info.symbols)
                 : std::nullopt;
        if (!ls)
          return module.emitError()
                 << "symbolic." << key << ": dimension " << d << " ("
                 << e << ") is not a linear expression over the symbols";
        per.push_back(ls);
      }
      out.push_back(std::move(per));
    }
    return success();
  };
  return failure(failed(operands("inputs", info.inputs, info.inputDims)) ||
                 failed(operands("outputs", info.outputs, info.outputDims)));
}

} // namespace

/// Reads pallas-gpu-prepare's record of the call (a #pallas.gpu_call,
/// verified when it was built or parsed); a missing record or one of
/// another kind is a diagnostic on the module.
LogicalResult readCall(ModuleOp module, CallInfo &info) {
  Attribute recorded = module->getAttr(kGpuCallAttrName);
  if (!recorded)
    return module.emitError()
           << "no pallas.call was recorded; run pallas-gpu-prepare on a "
              "module holding one";
  auto call = dyn_cast<GpuCallAttr>(recorded);
  if (!call)
    return module.emitError() << "the recorded pallas.call ('"
                              << kGpuCallAttrName
                              << "') must be a #pallas.gpu_call, got "
                              << recorded;
  info.mapping = GridMapping::get(call);
  info.kernel = call.getKernel().getValue().str();
  info.name = call.getCallName().str();
  info.scratch.assign(call.getScratch().begin(), call.getScratch().end());
  info.inputs.assign(call.getInputTypes().begin(), call.getInputTypes().end());
  info.outputs.assign(call.getOutputTypes().begin(),
                      call.getOutputTypes().end());
  if (CompilerParamsAttr params = call.getCompilerParams()) {
    if (params.getNumWarps())
      info.numWarps = *params.getNumWarps();
    if (params.getNumStages())
      info.numStages = *params.getNumStages();
  }
  if (failed(readSymbolic(module, info)))
    return failure();
  for (RankedTensorType t :
       llvm::concat<const RankedTensorType>(info.inputs, info.outputs))
    if (!t.hasStaticShape() && info.symbols.empty())
      return module.emitError()
             << "operand of type " << t
             << " has dynamic dimensions but the call is not symbolic";
  return success();
}

LogicalResult checkKernelSignature(func::FuncOp kernel, const CallInfo &info,
                                   int64_t &visibleAxes) {
  const GridMapping &mapping = info.mapping;
  int64_t rank = mapping.getRank();
  int64_t numIn = info.numInputs(), numOut = info.numOutputs();
  auto axesAttr = kernel->getAttrOfType<IntegerAttr>(kNumGridAxesAttrName);
  if (!axesAttr)
    return kernel.emitOpError() << "has no integer '" << kNumGridAxesAttrName
                                << "' (pallas-to-linalg records it)";
  visibleAxes = axesAttr.getInt();
  if (visibleAxes != static_cast<int64_t>(mapping.getVisibleAxes().size()))
    return kernel.emitOpError() << "sees " << visibleAxes
                                << " grid axes but the "
                                << "call has " << rank << " with "
                                << mapping.getVmappedAxes().size()
                                << " vmapped";
  int64_t expectedArgs = 2 * visibleAxes + numIn + numOut +
                         static_cast<int64_t>(info.scratch.size());
  if (kernel.getNumArguments() != expectedArgs)
    return kernel.emitOpError() << "has " << kernel.getNumArguments()
                                << " arguments; the call implies "
                                << expectedArgs;
  for (RefType s : info.scratch)
    if (s.getMemorySpace() == MemorySpace::Semaphore)
      return kernel.emitOpError()
             << "uses a semaphore scratch buffer, which the GPU lowering "
                "does not support";
  return success();
}

} // namespace mlir::pallas::gpu
