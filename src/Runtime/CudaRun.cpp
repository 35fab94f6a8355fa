//===- CudaRun.cpp - pallasc run --target cuda:<arch> ----------*- C++ -*-===//

#include "src/Runtime/CudaRun.h"

#include "dialects/Pallas/IR/PallasOps.h"
#include "passes/Conversion/PallasToGPU/PallasToGPU.h"
#include "passes/Pipelines/CudaPipeline.h"
#include "src/Driver/Diagnostics.h"
#include "src/Driver/Frontend.h"
#include "src/Driver/OutputFiles.h"
#include "src/Runtime/CudaDriver.h"
#include "src/Runtime/CudaEmulator.h"
#include "src/Runtime/CudaLaunch.h"
#include "src/Runtime/Float16.h"
#include "src/Runtime/GridExecutor.h"
#include "src/Runtime/HostProgram.h"
#include "src/Runtime/HostCode.h"
#include "src/Runtime/Launch.h"
#include "src/Runtime/Npy.h"
#include "src/Target/RocmArtifacts.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace pallasc::runtime;

/// Whether the CUDA lowering puts some dot of `module` on tf32 tensor cores:
/// f32 operands at a precision other than highest, on sm_80 or newer.
static bool usesTf32(ModuleOp module, bool amd, llvm::StringRef arch) {
  unsigned number = 0;
  if (amd || !arch.consume_front("sm_") ||
      arch.take_while(llvm::isDigit).getAsInteger(10, number) || number < 80)
    return false;
  bool found = false;
  module.walk([&](pallas::DotOp dot) {
    auto isF32 = [](Value v) {
      return cast<ShapedType>(v.getType()).getElementType().isF32();
    };
    if (isF32(dot.getLhs()) && isF32(dot.getRhs()) && isF32(dot.getResult()) &&
        dot.getPrecision() != pallas::DotPrecision::Highest)
      found = true;
  });
  return found;
}

namespace pallasc {

namespace {

/// SplitMix64, as the CPU runner seeds its inputs (the same --seed gives the
/// same inputs on both).
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return (next() >> 11) * 0x1.0p-52 - 1.0; }
};

void fillRandom(HostArray &a, uint64_t seed) {
  SplitMix64 rng{seed};
  int64_t n = a.numElements();
  uint8_t *p = a.data();
  for (int64_t i = 0; i < n; ++i) {
    switch (a.dtype) {
    case DType::F16:
      reinterpret_cast<uint16_t *>(p)[i] =
          floatToHalf(static_cast<float>(rng.uniform()));
      break;
    case DType::BF16:
      reinterpret_cast<uint16_t *>(p)[i] =
          floatToBF16(static_cast<float>(rng.uniform()));
      break;
    case DType::F32:
      reinterpret_cast<float *>(p)[i] = static_cast<float>(rng.uniform());
      break;
    case DType::F64:
      reinterpret_cast<double *>(p)[i] = rng.uniform();
      break;
    case DType::Bool:
      p[i] = rng.next() & 1;
      break;
    default: {
      uint64_t v = rng.next() % 16;
      size_t w = dtypeSize(a.dtype);
      std::memcpy(p + i * w, &v, w);
      break;
    }
    }
  }
}

bool isFloatDType(DType d) {
  return d == DType::F16 || d == DType::BF16 || d == DType::F32 ||
         d == DType::F64;
}

double elementAsDouble(const HostArray &a, int64_t i) {
  const uint8_t *p = a.data();
  switch (a.dtype) {
  case DType::F16:
    return halfToFloat(reinterpret_cast<const uint16_t *>(p)[i]);
  case DType::BF16:
    return bf16ToFloat(reinterpret_cast<const uint16_t *>(p)[i]);
  case DType::F32:
    return reinterpret_cast<const float *>(p)[i];
  case DType::F64:
    return reinterpret_cast<const double *>(p)[i];
  default: {
    int64_t v = 0;
    std::memcpy(&v, p + i * dtypeSize(a.dtype), dtypeSize(a.dtype));
    return static_cast<double>(v);
  }
  }
}

/// Compares `got` with the reference; prints a summary line. False on a
/// mismatch.
bool compareOutput(size_t index, const HostArray &got, const HostArray &want,
                   double rtol, double atol) {
  int64_t n = want.numElements(), bad = 0, firstBad = -1;
  double maxAbs = 0, maxRel = 0;
  bool floats = isFloatDType(want.dtype);
  for (int64_t i = 0; i < n; ++i) {
    double g = elementAsDouble(got, i), w = elementAsDouble(want, i);
    bool ok;
    if (!floats) {
      size_t sz = dtypeSize(want.dtype);
      ok = std::memcmp(got.data() + i * sz, want.data() + i * sz, sz) == 0;
    } else if (std::isnan(w) || std::isnan(g)) {
      ok = std::isnan(w) && std::isnan(g);
    } else if (std::isinf(w) || std::isinf(g)) {
      ok = g == w;
    } else {
      double d = std::fabs(g - w);
      maxAbs = std::max(maxAbs, d);
      if (w != 0)
        maxRel = std::max(maxRel, d / std::fabs(w));
      ok = d <= atol + rtol * std::fabs(w);
    }
    if (!ok) {
      if (firstBad < 0)
        firstBad = i;
      ++bad;
    }
  }
  llvm::errs() << "check: output " << index << " (" << dtypeName(want.dtype)
               << ", " << n << " elements): ";
  if (floats)
    llvm::errs() << llvm::format("max abs err %.3g, max rel err %.3g, ",
                                 maxAbs, maxRel);
  if (bad == 0) {
    llvm::errs() << "matches the CPU result\n";
    return true;
  }
  llvm::errs() << bad << " elements differ from the CPU result; first at "
               << "flat index " << firstBad << ": "
               << elementAsDouble(got, firstBad) << " vs "
               << elementAsDouble(want, firstBad) << "\n";
  return false;
}

} // namespace

int runOnCuda(const RunOptions &options, const CudaRunOptions &cuda) {
  const std::string &specPath = options.driver.specPath;
  std::string arch = cuda.target.substr(cuda.target.find(':') + 1);
  // rocm:<arch>: the AMD lowering (wave64, MFMA), on the emulator only (no
  // HIP runtime is linked).
  bool amd = llvm::StringRef(cuda.target).starts_with("rocm:");
  if (amd && !cuda.emulate) {
    logError("error: pallasc run cannot launch on AMD GPUs (no HIP runtime "
             "support); add --emulate to run the AMD lowering on CPU "
             "threads");
    return kExitUsageError;
  }
  if (amd && !llvm::is_contained(supportedRocmArchs(), arch)) {
    logError("error: unsupported AMD architecture '" + arch +
             "' (expected one of " + llvm::join(supportedRocmArchs(), ", ") +
             ")");
    return kExitUsageError;
  }
  MLIRContext context(makeDriverRegistry());
  configureDriverContext(context);
  DiagnosticRouter router(&context);
  FrontendResult fe;
  if (int rc = runFrontend(options.driver, context, router, fe))
    return rc;

  // The GPU runners launch one call on @main's arguments; what else the
  // transforms can leave in @main (vmap's per-batch loop, reshapes,
  // broadcasts of aliased inputs) runs only on the CPU.
  bool hasCall = false;
  fe.module->walk([&](pallas::CallOp) { hasCall = true; });
  if (hasCall && !isDirectCall(*fe.module)) {
    logError(specPath + ": error: after the transforms, @main does more than "
                        "one pallas.call on its arguments (e.g. vmap's "
                        "per-batch loop or a broadcast of an aliased input); "
                        "pallasc run --target " +
             cuda.target +
             " launches a single call: run it on the CPU (without --target)");
    return kExitUserError;
  }
  OwningOpRef<ModuleOp> cpuModule(fe.module->clone());
  LaunchPlan plan;
  std::string error;
  if (!planLaunch(*cpuModule, plan, error)) {
    logError(specPath + ": error: " + error);
    return kExitUserError;
  }
  if (plan.eliminated) {
    logError(specPath + ": error: the call was eliminated by pallas-dce; "
                        "there is no kernel to run");
    return kExitUserError;
  }
  if (!options.randomSeed && options.inputs.size() != plan.inputs.size()) {
    logError("error: the call takes " + std::to_string(plan.inputs.size()) +
             " inputs but " + std::to_string(options.inputs.size()) +
             " --input files were given");
    return kExitUserError;
  }
  if (!options.outputs.empty() &&
      options.outputs.size() != plan.outputs.size()) {
    logError("error: the call has " + std::to_string(plan.outputs.size()) +
             " outputs but " + std::to_string(options.outputs.size()) +
             " --output files were given");
    return kExitUserError;
  }
  if (static_cast<int64_t>(options.gridBounds.size()) !=
      plan.numDynamicBounds()) {
    logError("error: the grid has " + std::to_string(plan.numDynamicBounds()) +
             " dynamic bounds but " +
             std::to_string(options.gridBounds.size()) +
             " --grid-bound values were given");
    return kExitUserError;
  }

  // Inputs, then outputs as interpret mode starts them (uninitialized, or
  // the aliased input).
  std::vector<HostArray> inputs(plan.inputs.size());
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    const ArrayType &want = plan.inputs[i];
    if (options.randomSeed) {
      inputs[i] = HostArray(want.dtype, want.shape);
      if (!inputs[i].allocate()) {
        logError("error: cannot allocate input " + std::to_string(i));
        return kExitUserError;
      }
      fillRandom(inputs[i], *options.randomSeed * 0x100000001b3ull + i);
      continue;
    }
    if (!readNpy(options.inputs[i], inputs[i], error)) {
      logError(error);
      return kExitUserError;
    }
    if (inputs[i].shape != want.shape ||
        dtypeSize(inputs[i].dtype) != dtypeSize(want.dtype)) {
      logError(options.inputs[i] + ": error: input " + std::to_string(i) +
               " is " + inputs[i].describe() + " but the call expects " +
               want.describe());
      return kExitUserError;
    }
  }
  std::vector<DType> outputDTypes;
  std::vector<int64_t> aliasOf(plan.outputs.size(), -1);
  for (auto [in, out] : plan.aliases)
    aliasOf[out] = in;
  std::vector<HostArray> outputs(plan.outputs.size());
  for (size_t j = 0; j < plan.outputs.size(); ++j) {
    DType d = plan.outputs[j].dtype;
    if (fe.spec.outputs.size() == plan.outputs.size())
      if (std::optional<DType> s = parseDType(fe.spec.outputs[j].dtype))
        if (dtypeSize(*s) == dtypeSize(d))
          d = *s;
    outputDTypes.push_back(d);
    outputs[j] = HostArray(d, plan.outputs[j].shape);
    if (!outputs[j].allocate()) {
      logError("error: cannot allocate output " + std::to_string(j));
      return kExitUserError;
    }
    if (aliasOf[j] >= 0)
      std::memcpy(outputs[j].data(), inputs[aliasOf[j]].data(),
                  outputs[j].byteSize());
    else
      fillUninitialized(outputs[j].data(), outputs[j].numElements(),
                        outputs[j].dtype);
  }

  // The CUDA lowering.
  OwningOpRef<ModuleOp> gpuModule(fe.module->clone());
  pallas::CudaPipelineOptions pipeline;
  pipeline.chip = arch;
  {
    PassManager pm(&context);
    pallas::buildCudaDistributionPipeline(pm, pipeline);
    if (failed(pm.run(*gpuModule)))
      return kExitUserError;
  }
  DictionaryAttr launch;
  std::string entry;
  gpuModule->walk([&](mlir::gpu::GPUFuncOp f) {
    launch = f->getAttrOfType<DictionaryAttr>(pallas::kGpuLaunchAttrName);
    entry = f.getName().str();
  });
  if (!launch) {
    logError("error: the CUDA lowering produced no kernel");
    return kExitInternalError;
  }
  int64_t threads =
      cast<IntegerAttr>(launch.getAs<ArrayAttr>("block")[0]).getInt();
  int64_t smemBytes =
      launch.getAs<IntegerAttr>("dynamic_shared_memory_bytes").getInt();
  // Grid sizes with the dynamic bounds filled in.
  std::vector<int64_t> gridSize(plan.grid.begin(), plan.grid.end());
  {
    size_t next = 0;
    for (int64_t &g : gridSize)
      if (g < 0)
        g = options.gridBounds[next++];
  }
  int64_t grid[3] = {1, 1, 1};
  auto axes = launch.getAs<ArrayAttr>("grid_axes");
  for (int c = 0; c < 3; ++c)
    for (Attribute a : cast<ArrayAttr>(axes[c]))
      grid[c] *= gridSize[cast<IntegerAttr>(a).getInt()];
  std::vector<int32_t> scalars;
  for (Attribute p : launch.getAs<ArrayAttr>("params")) {
    auto d = cast<DictionaryAttr>(p);
    if (d.getAs<StringAttr>("kind").getValue() == "i32")
      scalars.push_back(static_cast<int32_t>(
          gridSize[d.getAs<IntegerAttr>("axis").getInt()]));
  }
  std::vector<void *> hostBuffers;
  for (HostArray &a : inputs)
    hostBuffers.push_back(a.data());
  for (HostArray &a : outputs)
    hostBuffers.push_back(a.data());

  if (cuda.emulate) {
    if (!emulateCudaKernel(*gpuModule, hostBuffers, scalars, grid, error)) {
      logError("error: emulating the " + std::string(amd ? "AMD" : "CUDA") +
               " kernel: " + error);
      return kExitInternalError;
    }
  } else {
    PassManager pm(&context);
    pallas::buildCudaCodegenPipeline(pm, pipeline);
    if (failed(pm.run(*gpuModule)))
      return kExitUserError;
    std::string ptx;
    gpuModule->walk([&](mlir::gpu::BinaryOp binary) {
      for (Attribute a : binary.getObjectsAttr())
        if (auto obj = dyn_cast<mlir::gpu::ObjectAttr>(a))
          ptx = obj.getObject().str();
    });
    std::unique_ptr<CudaDevice> dev = CudaDevice::open(cuda.device, error);
    if (!dev) {
      logError("error: " + error);
      return kExitUserError;
    }
    if (!dev->load(ptx, entry, smemBytes, error)) {
      logError("error: " + error + " (compiled for " + arch + ", device " +
               dev->name() + " is " + dev->arch() + ")");
      return kExitUserError;
    }
    std::vector<uint64_t> devBuffers;
    size_t totalBytes = 0;
    auto hostArray = [&](size_t k) -> HostArray & {
      return k < inputs.size() ? inputs[k] : outputs[k - inputs.size()];
    };
    for (size_t k = 0; k < hostBuffers.size(); ++k) {
      uint64_t p;
      size_t bytes = hostArray(k).byteSize();
      totalBytes += bytes;
      if (!dev->alloc(bytes, p, error) ||
          !dev->upload(p, hostBuffers[k], bytes, error)) {
        logError("error: " + error);
        return kExitUserError;
      }
      devBuffers.push_back(p);
    }
    // Tensor maps (TMA on sm_90a), as the launch record describes them.
    std::vector<TensorMapParam> mapParams;
    if (!readTensorMapParams(launch, inputs.size(), mapParams, error)) {
      logError("error: " + error);
      return kExitInternalError;
    }
    std::vector<uint64_t> tensorMaps;
    for (const TensorMapParam &m : mapParams) {
      uint64_t map;
      if (!dev->tensorMap(devBuffers[m.input], m.bf16, m.globalShape,
                          m.boxShape, map, error)) {
        logError("error: " + error);
        return kExitUserError;
      }
      tensorMaps.push_back(map);
    }
    std::vector<void *> params;
    for (uint64_t &p : devBuffers)
      params.push_back(&p);
    for (int32_t &s : scalars)
      params.push_back(&s);
    for (uint64_t &m : tensorMaps)
      params.push_back(&m);
    double ms = 0;
    if (!dev->launch(grid, threads, smemBytes, params, 0, ms, error)) {
      logError("error: " + error);
      return kExitUserError;
    }
    for (size_t j = 0; j < outputs.size(); ++j)
      if (!dev->download(outputs[j].data(), devBuffers[inputs.size() + j],
                         outputs[j].byteSize(), error)) {
        logError("error: " + error);
        return kExitUserError;
      }
    if (cuda.benchReps > 0) {
      if (!dev->launch(grid, threads, smemBytes, params, cuda.benchReps, ms,
                       error)) {
        logError("error: " + error);
        return kExitUserError;
      }
      double flops = 0, bytes = static_cast<double>(totalBytes);
      fe.module->walk([&](pallas::CallOp call) {
        if (auto cost = call.getCostEstimateAttr()) {
          flops = static_cast<double>(cost.getFlops());
          if (cost.getBytesAccessed() > 0)
            bytes = static_cast<double>(cost.getBytesAccessed());
        }
      });
      llvm::outs() << llvm::format(
          "bench: %s on %s (%s): %.4f ms, %.2f TFLOP/s, %.1f GB/s\n",
          entry.c_str(), dev->name().c_str(), arch.c_str(), ms,
          flops / (ms * 1e-3) / 1e12, bytes / (ms * 1e-3) / 1e9);
      if (cuda.benchCopy) {
        uint64_t src, dst;
        double copyMs = 0;
        size_t half = static_cast<size_t>(bytes / 2);
        if (!dev->alloc(half, src, error) || !dev->alloc(half, dst, error) ||
            !dev->timeCopy(dst, src, half, cuda.benchReps, copyMs, error)) {
          logError("error: " + error);
          return kExitUserError;
        }
        // A copy reads and writes: 2 * half bytes move.
        llvm::outs() << llvm::format(
            "bench: device-to-device copy of %.1f MB: %.4f ms, %.1f GB/s\n",
            half / 1e6, copyMs, 2 * half / (copyMs * 1e-3) / 1e9);
      }
    }
  }

  if (cuda.check) {
    if (failed(lowerForHost(*cpuModule))) {
      logError("error: cannot lower the kernel for the CPU reference");
      return kExitInternalError;
    }
    std::unique_ptr<JitModule> jit = JitModule::create(*cpuModule, error);
    if (!jit) {
      logError("error: " + error);
      return kExitInternalError;
    }
    std::vector<HostArray> refInputs(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      refInputs[i] = HostArray(inputs[i].dtype, inputs[i].shape);
      if (!refInputs[i].allocate()) {
        logError("error: cannot allocate the reference inputs");
        return kExitUserError;
      }
      std::memcpy(refInputs[i].data(), inputs[i].data(),
                  inputs[i].byteSize());
    }
    std::vector<HostArray> reference;
    ExecuteOptions exec;
    exec.dynamicBounds = options.gridBounds;
    if (!executeGrid(plan, *jit, refInputs, outputDTypes, reference, exec,
                     error)) {
      logError(specPath + ": error: " + error);
      return kExitUserError;
    }
    bool ok = true;
    for (size_t j = 0; j < outputs.size(); ++j)
      ok &= compareOutput(j, outputs[j], reference[j], cuda.rtol, cuda.atol);
    if (!ok) {
      logError("error: the " + std::string(cuda.emulate ? "emulated " : "") +
               std::string(amd ? "AMD" : "CUDA") +
               " result differs from the CPU result");
      if (usesTf32(*fe.module, amd, arch))
        logError("note: f32 dots at the default or high precision run on "
                 "tf32 tensor cores (10-bit mantissa), the CPU reference in "
                 "exact f32; widen --rtol/--atol for them, or give the dot "
                 "precision = #pallas.precision<highest> for exact f32");
      return kExitUserError;
    }
  }

  if (!options.outputs.empty()) {
    OutputFiles files(".");
    for (size_t j = 0; j < outputs.size(); ++j)
      if (failed(files.stageAt(options.outputs[j], encodeNpy(outputs[j]))))
        return kExitUserError;
    if (failed(files.commit()))
      return kExitUserError;
  }
  return kExitSuccess;
}

} // namespace pallasc
