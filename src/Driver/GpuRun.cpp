//===- GpuRun.cpp - pallasc run --target cuda|rocm:<arch> --------*- C++ -*-===//

#include "src/Driver/GpuRun.h"

#include "dialects/Pallas/IR/GpuLaunchAttrs.h"
#include "dialects/Pallas/IR/PallasOps.h"
#include "passes/Pipelines/CudaPipeline.h"
#include "passes/Pipelines/RocmPipeline.h"
#include "src/Driver/Cache.h"
#include "src/Driver/Diagnostics.h"
#include "src/Driver/Frontend.h"
#include "src/Driver/OutputFiles.h"
#include "src/Driver/Run.h"
#include "src/Driver/TargetRegistry.h"
#include "src/Launch/CudaKernel.h"
#include "src/Launch/CudaLauncher.h"
#include "src/Launch/GpuLauncher.h"
#include "src/Launch/Launcher.h"
#include "src/Launch/GpuLaunchArgs.h"
#include "src/Runtime/GpuEmulator/GlobalMemory.h"
#include "src/Runtime/GpuEmulator/GpuEmulator.h"
#include "src/Runtime/Compare.h"
#include "src/Runtime/GridExecutor.h"
#include "src/Runtime/HostCode.h"
#include "src/Runtime/HostProgram.h"
#include "src/Runtime/CallPlan.h"
#include "src/Runtime/Npy.h"
#include "src/Runtime/RandomInputs.h"
#include "src/Target/CudaArtifacts.h"
#include "src/Target/GpuArtifacts.h"
#include "src/Target/GpuLaunchRecordReader.h"
#include "src/Target/RocmArtifacts.h"
#include "chips/GpuTarget.h"
#include "passes/Conversion/PallasMGPUToGPU/TargetSupport.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace pallasc::runtime;

/// Whether the GPU lowering puts some dot of `module` on tf32 tensor cores:
/// f32 operands at a precision other than highest, on a chip with tf32
/// matrix instructions.
static bool usesTf32(ModuleOp module, const pallasc::GpuTarget &target) {
  if (!target.findMatrixInstr(pallasc::MatrixInstrKind::MmaSync,
                              pallasc::MatrixElemType::TF32))
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

/// Compares `got` with the reference (src/Runtime/Compare.h), `what` (by
/// default the CPU result); prints a summary line. False on a mismatch.
bool compareOutput(size_t index, const HostArray &got, const HostArray &want,
                   double rtol, double atol,
                   const char *what = "the CPU result") {
  ArrayComparison c = compareArrays(got, want, rtol, atol);
  llvm::errs() << "check: output " << index << " (" << dtypeName(want.dtype)
               << ", " << c.elements << " elements): ";
  if (isFloat(want.dtype))
    llvm::errs() << llvm::format("max abs err %.3g, max rel err %.3g, ",
                                 c.maxAbsError, c.maxRelError);
  if (c.matches()) {
    llvm::errs() << "matches " << what << "\n";
    return true;
  }
  llvm::errs() << c.differing << " elements differ from " << what << "; "
               << "first at " << formatIndex(want.shape, c.firstDiffering)
               << " (flat index " << c.firstDiffering
               << "): " << formatElement(got, c.firstDiffering) << " vs "
               << formatElement(want, c.firstDiffering) << "\n";
  return false;
}

/// A failed launch-library step, as `pallasc run` reports it: the message,
/// with a hint where running on the emulator instead would help.
std::string describeGpuFailure(const launch::GpuStatus &status) {
  switch (status.error) {
  case launch::GpuError::DriverNotFound:
    return status.message +
           " (use --emulate to run the CUDA lowering on the CPU instead)";
  case launch::GpuError::NoDevice:
    return status.message +
           "; use --emulate to run the CUDA lowering on the CPU instead";
  default:
    return status.message;
  }
}

/// What the run launches, described as a generated entry point describes
/// it to the launcher runtime (GpuLauncher.h): the kernel's image with its
/// launch record as text, the pallas grid, the operands' addresses (device
/// addresses, or host ones under the emulator), the --grid-bound values and,
/// for vmap's batch loop, the loop as encodeGpuBatchLoop embeds it.
struct RunCall {
  RunCall(const std::string &entry, const std::string &arch, bool amd,
          const launch::GpuLaunchRecord &record,
          const launch::HostCallPlan &plan, bool batched,
          const launch::GpuBatchLoop &batch,
          const std::vector<int64_t> &boundValues,
          const std::vector<int64_t> &symbols)
      : entry(entry), arch(arch), vendor(amd ? "ROCm" : "CUDA"),
        recordText(launch::encodeGpuLaunchRecord(record)), grid(plan.grid),
        boundValues(boundValues), symbols(symbols), batched(batched),
        batch(batch) {
    image.arch = this->arch.c_str();
    // (ROCm: the code object version, 5 as the runner builds it.)
    image.kind = amd ? 5 : launch::kCudaImagePtx;
    image.record = recordText.data();
    image.recordSize = static_cast<int64_t>(recordText.size());
  }

  /// The record as the launcher runtime reads it back from the image.
  bool record(launch::GpuLaunchRecord &out, std::string &error) const {
    return launch::gpuImageRecord(image, out, error);
  }

  /// The launches on operands at `inputs` / `outputs`: gpuLauncherLaunches,
  /// the expansion generated launchers run (one launch for a direct call,
  /// one per batch iteration). A bound outside [0, 2^31) is reported here,
  /// naming the grid axis and the iteration, and so is an operand (a batch
  /// iteration's slice) misaligned for `record`, as the launchers refuse it
  /// (checkPointerAlignment). Returns 0 or the exit code of a failure (the
  /// message logged).
  int launches(const launch::GpuLaunchRecord &record,
               const std::vector<uint64_t> &inputs,
               const std::vector<uint64_t> &outputs,
               std::vector<launch::GpuLauncherLaunch> &out) const {
    std::vector<void *> operands;
    for (uint64_t p : inputs)
      operands.push_back(reinterpret_cast<void *>(p));
    for (uint64_t p : outputs)
      operands.push_back(reinterpret_cast<void *>(p));
    launch::GpuLauncherCall call;
    call.entry = entry.c_str();
    call.images = &image;
    call.numImages = 1;
    call.grid = grid.data();
    call.gridRank = static_cast<int64_t>(grid.size());
    call.operands = operands.data();
    call.numInputs = static_cast<int64_t>(inputs.size());
    call.numOutputs = static_cast<int64_t>(outputs.size());
    std::vector<int64_t> loop;
    std::vector<const int64_t *> boundArgs;
    if (batched) {
      // Each bound argument points at its value, or at its axisSize values
      // (one per iteration): the --grid-bound list in that order.
      loop = launch::encodeGpuBatchLoop(batch);
      size_t next = 0;
      for (bool batchedBound : batch.batchedBounds) {
        boundArgs.push_back(boundValues.data() + next);
        next += batchedBound ? batch.axisSize : 1;
      }
      call.batchLoop = loop.data();
      call.batchLoopSize = static_cast<int64_t>(loop.size());
      call.boundArgs = boundArgs.data();
    } else {
      call.bounds = boundValues.data();
    }
    call.numBounds = static_cast<int64_t>(batched ? boundArgs.size()
                                                  : boundValues.size());
    launch::launcherClearError();
    if (launch::gpuLauncherLaunches(call, vendor, out,
                                    /*checkBounds=*/false)) {
      logError("error: " + std::string(pallasc_last_error()));
      return kExitInternalError;
    }
    for (size_t b = 0; b < out.size(); ++b)
      for (size_t a = 0; a < grid.size(); ++a) {
        int64_t v = out[b].gridSizes[a];
        if (grid[a] >= 0 || (v >= 0 && v <= INT32_MAX))
          continue;
        logError("error: grid axis " + std::to_string(a) + " has bound " +
                 std::to_string(v) +
                 (batch.axisSize > 1 ? " in iteration " + std::to_string(b) +
                                           " of the batch loop"
                                     : std::string()) +
                 "; bounds must be in [0, 2^31)");
        return kExitUserError;
      }
    for (size_t b = 0; b < out.size(); ++b)
      if (launch::GpuStatus s = launch::checkPointerAlignment(
              record, out[b].inputs, out[b].outputs);
          !s) {
        logError("error: @" + record.entry + ": " + iterationPrefix(b) +
                 s.message);
        return kExitUserError;
      }
    return 0;
  }

  /// "batch iteration 1 of 3: " before the message of a failed launch of a
  /// batch loop, "" for a direct call.
  std::string iterationPrefix(size_t b) const {
    return batched ? "batch iteration " + std::to_string(b) + " of " +
                         std::to_string(batch.axisSize) + ": "
                   : std::string();
  }

  std::string entry, arch;
  const char *vendor;
  std::string recordText;
  pallasc_gpu_image image{};
  std::vector<int64_t> grid;
  std::vector<int64_t> boundValues;
  /// A symbolic call's symbol values (sorted by name), each in [1, 2^31).
  std::vector<int64_t> symbols;
  bool batched;
  launch::GpuBatchLoop batch;
};

/// Runs the distributed kernel on an NVIDIA GPU through the launch library:
/// codegen, load, operands to the device, tensor maps, launch, outputs
/// back, and with --bench the timings.
int launchOnCuda(ModuleOp gpuModule, const GpuVendorLowering &vendor,
                 const GpuRunOptions &gpu, const std::string &arch,
                 const std::string &entry,
                 const launch::GpuLaunchRecord &record, const RunCall &run,
                 ModuleOp callModule,
                 std::vector<HostArray> &inputs,
                 std::vector<HostArray> &outputs) {
  auto fail = [](const launch::GpuStatus &s) {
    logError("error: " + describeGpuFailure(s));
    return kExitUserError;
  };
  FailureOr<std::string> object =
      generateGpuObject(gpuModule, gpu.target, vendor);
  if (failed(object))
    return kExitUserError;
  const std::string &ptx = *object;
  launch::CudaDriverApi api;
  if (launch::GpuStatus s = launch::loadCudaDriverApi(api); !s)
    return fail(s);
  std::unique_ptr<launch::CudaDevice> dev;
  if (launch::GpuStatus s = launch::CudaDevice::open(api, gpu.device, dev); !s)
    return fail(s);
  if (launch::GpuStatus s = dev->load(ptx, entry, record.dynamicSharedBytes);
      !s) {
    logError("error: " + s.message + " (compiled for " + arch + ", device " +
             dev->name() + " is " + dev->arch() + ")");
    return kExitUserError;
  }
  std::vector<uint64_t> devInputs, devOutputs;
  size_t totalBytes = 0;
  auto upload = [&](HostArray &a, std::vector<uint64_t> &to) {
    uint64_t p;
    size_t bytes = a.byteSize();
    totalBytes += bytes;
    if (launch::GpuStatus s = dev->alloc(bytes, p); !s)
      return s;
    if (launch::GpuStatus s = dev->upload(p, a.data(), bytes); !s)
      return s;
    to.push_back(p);
    return launch::GpuStatus::success();
  };
  for (HostArray &a : inputs)
    if (launch::GpuStatus s = upload(a, devInputs); !s)
      return fail(s);
  for (HostArray &a : outputs)
    if (launch::GpuStatus s = upload(a, devOutputs); !s)
      return fail(s);
  // One launch per iteration of the batch loop (one for a direct call),
  // through the code generated launchers launch with, each waited for.
  std::vector<launch::GpuLauncherLaunch> launches;
  if (int rc = run.launches(record, devInputs, devOutputs, launches))
    return rc;
  for (size_t b = 0; b < launches.size(); ++b) {
    launch::GpuStatus s = launch::launchCudaIteration(
        dev->driver(), dev->loadedKernel(), record, launches[b], nullptr);
    if (s)
      s = dev->synchronize();
    if (!s) {
      logError("error: " + run.iterationPrefix(b) + describeGpuFailure(s));
      return kExitUserError;
    }
  }
  for (size_t j = 0; j < outputs.size(); ++j)
    if (launch::GpuStatus s = dev->download(outputs[j].data(), devOutputs[j],
                                            outputs[j].byteSize());
        !s)
      return fail(s);
  if (gpu.benchReps <= 0)
    return kExitSuccess;
  // --bench (a direct call: one launch) times the launch with tensor maps
  // that stay in device memory for every repetition.
  launch::GpuLaunchGeometry geometry;
  if (launch::GpuStatus s = launch::computeLaunchGeometry(
          record, launches[0].gridSizes, geometry);
      !s)
    return fail(s);
  std::vector<uint64_t> tensorMaps;
  for (const launch::GpuTensorMap &m : launch::tensorMapParams(record)) {
    uint64_t map, operand;
    if (launch::GpuStatus s = launch::tensorMapOperand(
            m, launches[0].inputs, launches[0].outputs, operand);
        !s)
      return fail(s);
    if (launch::GpuStatus s = dev->tensorMap(m, operand, map); !s)
      return fail(s);
    tensorMaps.push_back(map);
  }
  launch::GpuKernelArgs args;
  if (launch::GpuStatus s =
          args.pack(record, launches[0].inputs, launches[0].outputs,
                    launches[0].gridSizes, tensorMaps, run.symbols);
      !s)
    return fail(s);
  double ms = 0;
  if (launch::GpuStatus s =
          dev->timeLaunches(geometry, args, gpu.benchReps, ms);
      !s)
    return fail(s);
  double flops = 0, bytes = static_cast<double>(totalBytes);
  callModule->walk([&](pallas::CallOp call) {
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
  if (gpu.benchCopy) {
    uint64_t src, dst;
    double copyMs = 0;
    size_t half = static_cast<size_t>(bytes / 2);
    launch::GpuStatus s = dev->alloc(half, src);
    if (s)
      s = dev->alloc(half, dst);
    if (s)
      s = dev->timeCopy(dst, src, half, gpu.benchReps, copyMs);
    if (!s)
      return fail(s);
    // A copy reads and writes: 2 * half bytes move.
    llvm::outs() << llvm::format(
        "bench: device-to-device copy of %.1f MB: %.4f ms, %.1f GB/s\n",
        half / 1e6, copyMs, 2 * half / (copyMs * 1e-3) / 1e9);
  }
  return kExitSuccess;
}

/// What a GPU run launches: one call on @main's arguments, or vmap's batch
/// loop around one call (one launch per iteration).
struct GpuRunPlan {
  /// The front end's module, kept for the CPU reference of --check.
  OwningOpRef<ModuleOp> cpuModule;
  launch::HostCallPlan plan;
  BatchLoopProgram loop;
  bool batched = false;
  /// A direct call is a loop of one iteration.
  launch::GpuBatchLoop batch;

  /// What @main takes and returns: the batched arrays of the loop, or the
  /// call's own.
  const std::vector<launch::HostArrayType> &inputs() const {
    return batched ? loop.inputs : plan.inputs;
  }
  const std::vector<launch::HostArrayType> &outputs() const {
    return batched ? loop.outputs : plan.outputs;
  }
  int64_t numBoundValues() const {
    return batched ? loop.numBoundValues() : plan.numDynamicBounds();
  }
};

/// Plans the launches of the front end's `module`. Returns an ExitCode.
int planGpuRun(ModuleOp module, const RunOptions &options,
               const GpuRunOptions &gpu, GpuRunPlan &run) {
  const std::string &specPath = options.driver.specPath;
  // The GPU runners launch one call on @main's arguments, or vmap's batch
  // loop around one call (one launch per iteration); what else the
  // transforms can leave in @main (reshapes, broadcasts of aliased inputs,
  // several calls) runs only on the CPU.
  bool hasCall = false;
  module->walk([&](pallas::CallOp) { hasCall = true; });
  run.batched = hasCall && !isDirectCall(module);
  if (run.batched && !isBatchLoop(module)) {
    logError(specPath + ": error: after the transforms, @main does more than "
                        "one pallas.call on its arguments (e.g. a broadcast "
                        "of an aliased input, or vmap's reshapes of "
                        "axis_size 1); pallasc run --target " +
             gpu.target +
             " launches a single call or vmap's batch loop around one: run "
             "it on the CPU (without --target)");
    return kExitUserError;
  }
  run.cpuModule = OwningOpRef<ModuleOp>(module.clone());
  std::string error;
  if (run.batched) {
    if (!planBatchLoop(*run.cpuModule, run.loop, error)) {
      logError(specPath + ": error: pallasc run --target " + gpu.target +
               " cannot run this batch loop: " + error +
               "; `pallasc run` without --target runs it on the CPU");
      return kExitUserError;
    }
    run.plan = run.loop.call;
  } else if (!planLaunch(*run.cpuModule, run.plan, error)) {
    logError(specPath + ": error: " + error);
    return kExitUserError;
  }
  if (run.plan.eliminated) {
    logError(specPath + ": error: the call was eliminated by pallas-dce; "
                        "there is no kernel to run");
    return kExitUserError;
  }
  if (run.batched && gpu.benchReps > 0) {
    logError(specPath + ": error: --bench times one launch, and vmap's batch "
                        "loop launches the kernel once per batch element; "
                        "bench the unbatched call");
    return kExitUsageError;
  }
  if (run.batched) {
    run.batch = run.loop.gpuLoop();
  } else {
    run.batch.inputStrides.assign(run.plan.inputs.size(), 0);
    run.batch.outputStrides.assign(run.plan.outputs.size(), 0);
    run.batch.batchedBounds.assign(run.plan.numDynamicBounds(), false);
  }
  return kExitSuccess;
}

/// The inputs (read or generated), then the outputs as interpret mode
/// starts them (uninitialized, or the aliased input) with their dtypes.
/// Returns an ExitCode.
int makeGpuRunArrays(const RunOptions &options, const spec::GridSpec &spec,
                     const GpuRunPlan &run, std::vector<HostArray> &inputs,
                     std::vector<HostArray> &outputs,
                     std::vector<DType> &outputDTypes) {
  const std::vector<launch::HostArrayType> &wantInputs = run.inputs();
  const std::vector<launch::HostArrayType> &wantOutputs = run.outputs();
  std::string error;
  inputs.resize(wantInputs.size());
  for (size_t i = 0; i < wantInputs.size(); ++i) {
    const launch::HostArrayType &want = wantInputs[i];
    if (options.randomSeed) {
      inputs[i] = HostArray(want.type, want.shape);
      if (!inputs[i].allocate()) {
        logError("error: cannot allocate input " + std::to_string(i));
        return kExitUserError;
      }
      fillRandomInput(inputs[i], *options.randomSeed, i);
      continue;
    }
    auto check = [&](DType dtype, const std::vector<int64_t> &shape,
                     std::string &message) {
      if (shape == want.shape && dtypeSize(dtype) == dtypeSize(want.type))
        return true;
      message = options.inputs[i] + ": error: input " + std::to_string(i) +
                " is " + HostArray(dtype, shape).describe() +
                " but the call expects " + want.describe();
      return false;
    };
    if (!readNpy(options.inputs[i], inputs[i], error, UINT64_MAX, check)) {
      logError(error);
      return kExitUserError;
    }
  }
  // (An aliased input of a batch loop is batched at 0 as its output is:
  // the whole stacked output starts as the whole input.)
  std::vector<int64_t> aliasOf(wantOutputs.size(), -1);
  for (auto [in, out] : run.plan.aliases)
    aliasOf[out] = in;
  outputs.resize(wantOutputs.size());
  for (size_t j = 0; j < wantOutputs.size(); ++j) {
    DType d = wantOutputs[j].type;
    if (spec.outputs.size() == wantOutputs.size())
      if (std::optional<DType> s = parseDType(spec.outputs[j].dtype))
        if (dtypeSize(*s) == dtypeSize(d))
          d = *s;
    outputDTypes.push_back(d);
    outputs[j] = HostArray(d, wantOutputs[j].shape);
    if (!outputs[j].allocate()) {
      logError("error: cannot allocate output " + std::to_string(j));
      return kExitUserError;
    }
    if (aliasOf[j] >= 0)
      std::memcpy(outputs[j].data(), inputs[aliasOf[j]].data(),
                  outputs[j].byteSize());
    else
      launch::fillUninitialized(outputs[j].data(), outputs[j].numElements(),
                                outputs[j].dtype);
  }
  return kExitSuccess;
}

/// The emulator runs the distributed kernel, one step before the artifact:
/// builds the artifact first, exactly as `pallasc --target T` does (code
/// generation, device libraries, ptxas / ld.lld), and refuses to emulate a
/// kernel that cannot be built, so a check that passes under --emulate is a
/// kernel that compiles. Returns an ExitCode.
int buildBeforeEmulating(ModuleOp module, const std::string &name,
                         const std::string &target, bool amd,
                         bool strictFloat) {
  std::vector<std::string> targets = {target};
  CudaArtifactOptions cudaOptions;
  cudaOptions.strictFloat = strictFloat;
  bool built =
      amd ? succeeded(emitRocmArtifacts(module, name, targets,
                                        /*emitText=*/false,
                                        /*emitAsm=*/false,
                                        /*codeObjectVersion=*/5, strictFloat))
          : succeeded(emitCudaArtifacts(module, name, targets, cudaOptions));
  if (!built) {
    logError("error: not emulating: the kernel does not compile for " +
             target + " (above), and --emulate runs only what the " +
             "target's artifact would run");
    return kExitUserError;
  }
  return kExitSuccess;
}

/// Runs the distributed kernel on the emulator's CPU threads, one launch
/// per iteration of the batch loop, on copies of the arrays between guard
/// regions; the outputs receive the results. With `reversedOutputs`, the
/// kernel first runs from the same inputs on the emulator's reversed
/// schedule (EmulatedGpuKernel::run), whose results it receives (allocated
/// here, like `outputs`). Returns an ExitCode.
int emulateGpuRun(const RunOptions &options, ModuleOp gpuModule,
                  const launch::GpuLaunchRecord &record, const RunCall &run,
                  bool amd, std::vector<HostArray> &inputs,
                  std::vector<HostArray> &outputs,
                  std::vector<HostArray> *reversedOutputs = nullptr) {
  std::string error;
  std::unique_ptr<JitObjectCache> objects =
      openJitObjectCache(options.driver, gpuModule, "run emulate -O2");
  std::unique_ptr<EmulatedGpuKernel> kernel =
      EmulatedGpuKernel::compile(gpuModule, record, error, objects.get());
  // The kernel's global memory: copies of the arrays between guard
  // regions, so that a write out of bounds is reported, and the inputs
  // stay as given for the CPU reference (a kernel may write its input
  // refs: on a GPU that writes the device copy, never the host's).
  EmulatedGlobalMemory global;
  std::vector<uint64_t> hostInputs, hostOutputs;
  auto copyIn = [&](std::vector<HostArray> &arrays, const char *kind,
                    std::vector<uint64_t> &addresses) {
    for (size_t i = 0; i < arrays.size(); ++i) {
      void *p = global.add(arrays[i].data(), arrays[i].byteSize(),
                           kind + std::to_string(i) + " (" +
                               arrays[i].describe() + ")",
                           error);
      if (!p)
        return false;
      addresses.push_back(reinterpret_cast<uintptr_t>(p));
    }
    return true;
  };
  if (!copyIn(inputs, "input ", hostInputs) ||
      !copyIn(outputs, "output ", hostOutputs)) {
    logError("error: " + error);
    return kExitUserError;
  }
  // One launch per iteration of the batch loop, on the slices' host
  // addresses, as the launchers do on device addresses.
  std::vector<launch::GpuLauncherLaunch> launches;
  if (kernel)
    if (int rc = run.launches(record, hostInputs, hostOutputs, launches))
      return rc;
  auto runLaunches = [&](bool reversed) {
    for (size_t b = 0; kernel && b < launches.size(); ++b) {
      const launch::GpuLauncherLaunch &l = launches[b];
      launch::GpuLaunchGeometry geometry;
      std::vector<int32_t> scalars;
      launch::GpuStatus s =
          launch::computeLaunchGeometry(record, l.gridSizes, geometry);
      if (s)
        s = launch::gridBoundValues(record, l.gridSizes, scalars,
                                    run.symbols);
      if (!s) {
        logError("error: " + s.message);
        return kExitInternalError;
      }
      std::vector<void *> hostBuffers;
      for (uint64_t p : l.inputs)
        hostBuffers.push_back(reinterpret_cast<void *>(p));
      for (uint64_t p : l.outputs)
        hostBuffers.push_back(reinterpret_cast<void *>(p));
      if (!kernel->run(hostBuffers, scalars, geometry.grid, error,
                       reversed))
        kernel.reset();
    }
    if (kernel && !global.check(error))
      kernel.reset();
    return kExitSuccess;
  };
  if (reversedOutputs) {
    // The reversed schedule first, then every array back as given (the
    // outputs' initial contents included) for the run in order.
    if (int rc = runLaunches(/*reversed=*/true))
      return rc;
    if (!kernel)
      error += " (on the second schedule of --check: the blocks and threads "
               "in reverse order)";
    reversedOutputs->clear();
    for (size_t j = 0; kernel && j < outputs.size(); ++j) {
      HostArray &r = reversedOutputs->emplace_back(outputs[j].dtype,
                                                   outputs[j].shape);
      if (!r.allocate()) {
        logError("error: cannot allocate the second schedule's outputs");
        return kExitUserError;
      }
      if (r.byteSize())
        std::memcpy(r.data(), global.data(inputs.size() + j), r.byteSize());
    }
    for (size_t i = 0; kernel && i < inputs.size(); ++i)
      if (inputs[i].byteSize())
        std::memcpy(global.data(i), inputs[i].data(), inputs[i].byteSize());
    for (size_t j = 0; kernel && j < outputs.size(); ++j)
      if (outputs[j].byteSize())
        std::memcpy(global.data(inputs.size() + j), outputs[j].data(),
                    outputs[j].byteSize());
  }
  if (int rc = runLaunches(/*reversed=*/false))
    return rc;
  if (!kernel) {
    logError("error: emulating the " + std::string(amd ? "AMD" : "CUDA") +
             " kernel: " + error);
    return kExitInternalError;
  }
  for (size_t j = 0; j < outputs.size(); ++j)
    if (outputs[j].byteSize())
      std::memcpy(outputs[j].data(), global.data(inputs.size() + j),
                  outputs[j].byteSize());
  return kExitSuccess;
}

/// --check: computes the CPU reference (the call on the grid executor, or
/// the whole @main, the batch loop, compiled for the host, as `pallasc run`
/// runs them) and compares every output with it. Returns an ExitCode.
int checkAgainstCpu(const RunOptions &options, const GpuRunOptions &gpu,
                    ModuleOp module, const GpuTarget &target, bool amd,
                    const GpuRunPlan &run,
                    const std::vector<HostArray> &inputs,
                    const std::vector<HostArray> &outputs,
                    const std::vector<DType> &outputDTypes) {
  const std::string &specPath = options.driver.specPath;
  std::string error;
  OwningOpRef<ModuleOp> refModule(module.clone());
  launch::HostProgramPlan program;
  if (run.batched && !prepareHostProgram(*refModule, program, error)) {
    logError(specPath + ": error: " + error);
    return kExitUserError;
  }
  JitOptions jitOptions;
  if (run.batched)
    jitOptions.extraSymbols = {launcherSymbol()};
  HostJitTimes times;
  int rc = kExitSuccess;
  std::unique_ptr<JitModule> jit =
      compileForHost(options.driver, run.batched ? *refModule : *run.cpuModule,
                     jitOptions, times, rc);
  if (!jit) {
    logError("error: cannot compile the kernel for the CPU reference");
    return rc;
  }
  std::vector<HostArray> refInputs(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    refInputs[i] = HostArray(inputs[i].dtype, inputs[i].shape);
    if (!refInputs[i].allocate()) {
      logError("error: cannot allocate the reference inputs");
      return kExitUserError;
    }
    std::memcpy(refInputs[i].data(), inputs[i].data(), inputs[i].byteSize());
  }
  std::vector<HostArray> reference;
  ExecuteOptions exec;
  exec.dynamicBounds = options.gridBounds;
  if (run.batched
          ? !runHostProgram(program, *jit, refInputs, options.gridBounds,
                            outputDTypes, reference, exec, error)
          : !executeGrid(run.plan, *jit, refInputs, outputDTypes, reference,
                         exec, error)) {
    logError(specPath + ": error: " + error);
    return kExitUserError;
  }
  bool ok = true;
  for (size_t j = 0; j < outputs.size(); ++j)
    ok &= compareOutput(j, outputs[j], reference[j], gpu.rtol, gpu.atol);
  if (!ok) {
    logError("error: the " + std::string(gpu.emulate ? "emulated " : "") +
             std::string(amd ? "AMD" : "CUDA") +
             " result differs from the CPU result");
    if (usesTf32(module, target))
      logError("note: f32 dots at the default or high precision run on "
               "tf32 tensor cores (10-bit mantissa), the CPU reference in "
               "exact f32; widen --rtol/--atol for them, or give the dot "
               "precision = #pallas.precision<highest> (and pass "
               "--strict-fp) for exact f32");
    return kExitUserError;
  }
  return kExitSuccess;
}

/// The chip `gpu.target` names; refuses a kind that runs on the emulator
/// only (src/Driver/TargetRegistry: rocm, as no HIP runtime is linked)
/// without --emulate. Null after printing an error.
const GpuTarget *resolveRunTarget(const GpuRunOptions &gpu) {
  std::string targetError;
  const GpuTarget *target = parseGpuTarget(gpu.target, targetError);
  if (!target) {
    logError("error: " + targetError);
    return nullptr;
  }
  const TargetKind *kind = findTargetKind(gpu.target);
  if (kind && kind->run.emulateOnly && !gpu.emulate) {
    logError("error: pallasc run cannot launch on " +
             std::string(kind->run.emulateOnly) +
             "; add --emulate to run the " + target->vendorName() +
             " lowering on CPU threads");
    return nullptr;
  }
  return target;
}

} // namespace

int runOnGpu(const RunOptions &options, const GpuRunOptions &gpu) {
  const GpuTarget *target = resolveRunTarget(gpu);
  if (!target)
    return kExitUsageError;
  std::string arch = target->chip;
  // rocm:<arch>: the AMD lowering (CDNA: wave64, MFMA; RDNA: wave32, WMMA).
  bool amd = target->isAmd();
  RunFrontend setup;
  // A symbolic spec is compiled once, symbolic (as for the CPU), and runs
  // at the symbols' values the inputs' shapes give: the kernel takes them
  // as parameters (docs/run.md#symbolic-shapes).
  DriverOptions driver = options.driver;
  driver.runTarget = gpu.target;
  if (int rc = startRun(options, driver, setup))
    return rc;
  FrontendResult &fe = setup.fe;
  const std::map<std::string, int64_t> &symbolValues = setup.symbolValues;

  // A Mosaic GPU kernel: sm_90a only, and no CPU reference: --check runs
  // the emulator on a second schedule instead (docs/run.md).
  bool mosaicGpu = pallas_mgpu::hasMosaicGpuOps(*fe.module);
  if (mosaicGpu) {
    if (failed(pallas_mgpu::checkMosaicGpuTarget(*fe.module, gpu.target)))
      return kExitUserError;
    if (gpu.check && !gpu.emulate) {
      logError(options.driver.specPath +
               ": error: --check on a Mosaic GPU kernel (plgpu.kernel) needs "
               "--emulate: it has no CPU reference, and its check runs the "
               "emulator on two schedules; on a GPU, compare the outputs "
               "(--expect) with JAX's Mosaic GPU interpret mode or the op's "
               "reference function");
      return kExitUsageError;
    }
  }

  GpuRunPlan runPlan;
  if (int rc = planGpuRun(*fe.module, options, gpu, runPlan))
    return rc;
  std::vector<int64_t> symbols;
  if (!runPlan.plan.symbolic.empty()) {
    std::string error;
    for (const launch::HostSymbol &s : runPlan.plan.symbolic.symbols) {
      int64_t v = symbolValues.at(s.name);
      // The kernel takes each symbol as an i32.
      if (v > INT32_MAX) {
        logError(options.driver.specPath + ": error: " + s.name + " = " +
                 std::to_string(v) + " does not fit the GPU kernel's 32-bit "
                 "symbol parameter");
        return kExitUserError;
      }
      symbols.push_back(v);
    }
    if (!launch::instantiateSymbols(runPlan.plan, symbols, error)) {
      logError(options.driver.specPath + ": error: " + error);
      return kExitUserError;
    }
  }
  if (int rc = checkRunArguments(options, runPlan.inputs(), runPlan.outputs(),
                                 runPlan.numBoundValues(),
                                 /*describe=*/false))
    return rc;
  std::vector<HostArray> inputs, outputs;
  std::vector<DType> outputDTypes;
  if (int rc = makeGpuRunArrays(options, fe.spec, runPlan, inputs, outputs,
                                outputDTypes))
    return rc;

  // The golden files (--expect), read and checked before any heavy work.
  GoldenOutputs golden;
  if (options.expect.any() &&
      failed(golden.load(options.expect, runPlan.outputs(), outputDTypes,
                         UINT64_MAX)))
    return kExitUserError;

  // --strict-fp, or the kernel's compiler_params.gpu.strict_fp.
  bool strictFloat =
      options.driver.strictFloat || fe.spec.compilerParams.strictFp;
  if (gpu.emulate)
    if (int rc = buildBeforeEmulating(*fe.module, fe.spec.name, gpu.target,
                                      amd, strictFloat))
      return rc;

  // The GPU lowering, up to the distributed kernel and its launch record:
  // the compile sequence the target's artifact is built with (GpuArtifacts).
  Location kernelLoc = kernelLocation(*fe.module);
  GpuVendorLowering vendor =
      amd ? rocmVendorLowering(*target, /*codeObjectVersion=*/5,
                               pallas::defaultRocmDeviceLibsRoot(), kernelLoc,
                               strictFloat)
          : cudaVendorLowering(*target, strictFloat, mosaicGpu);
  FailureOr<DistributedGpuKernel> distributed =
      distributeGpuKernel(*fe.module, kernelLoc, gpu.target, *target, vendor);
  if (failed(distributed))
    return kExitUserError;
  ModuleOp gpuModule = *distributed->module;
  const std::string &entry = distributed->entry;
  pallas::GpuLaunchAttr launchAttr = distributed->launch;
  launch::GpuLaunchRecord compiled = readGpuLaunchRecord(launchAttr);
  // The launch as a generated launcher makes it: everything below uses the
  // record as the launcher runtime decodes it from its embedded text.
  RunCall run(entry, arch, amd, compiled, runPlan.plan, runPlan.batched,
              runPlan.batch, options.gridBounds, symbols);
  launch::GpuLaunchRecord record;
  std::string error;
  if (!run.record(record, error)) {
    logError("error: " + error);
    return kExitInternalError;
  }
  // --check of a Mosaic GPU kernel: the same kernel emulated on a second
  // schedule, which must give the same bits.
  std::vector<HostArray> reversed;
  bool scheduleCheck = mosaicGpu && gpu.check;
  if (gpu.emulate) {
    if (int rc = emulateGpuRun(options, gpuModule, record, run, amd, inputs,
                               outputs, scheduleCheck ? &reversed : nullptr))
      return rc;
  } else if (int rc = launchOnCuda(gpuModule, vendor, gpu, arch, entry,
                                   record, run, *fe.module, inputs,
                                   outputs)) {
    return rc;
  }

  if (scheduleCheck) {
    llvm::errs() << "check: a Mosaic GPU kernel has no CPU reference: "
                    "compared with the emulator's second schedule (blocks "
                    "and threads in reverse order), bit for bit; this finds "
                    "races and barrier misuse, not a wrong lowering (compare "
                    "with JAX's interpret mode through --expect)\n";
    bool ok = true;
    for (size_t j = 0; j < outputs.size(); ++j)
      ok &= compareOutput(j, outputs[j], reversed[j], 0, 0,
                          "the second schedule");
    if (!ok) {
      logError("error: the emulated CUDA result depends on the schedule: "
               "the kernel has a race (shared or global memory read before "
               "the barrier or wait that orders it after its write)");
      return kExitUserError;
    }
  } else if (gpu.check) {
    if (int rc = checkAgainstCpu(options, gpu, *fe.module, *target, amd,
                                 runPlan, inputs, outputs, outputDTypes))
      return rc;
  }

  return commitRunOutputs(options, setup.files, outputs, golden);
}

} // namespace pallasc
