//===- CudaArtifacts.cpp - --target cuda:<arch>: PTX + launch --*- C++ -*-===//

#include "src/Target/CudaArtifacts.h"

#include "src/Target/GpuArtifacts.h"
#include "src/Target/GpuLaunchRecordReader.h"

#include "src/Driver/Timing.h"
#include "src/Support/Temporaries.h"

#include "dialects/Pallas/IR/PallasOps.h"
#include "dialects/Pallas/IR/GpuLaunchAttrs.h"
#include "passes/Conversion/PallasMGPUToGPU/TargetSupport.h"
#include "passes/Pipelines/CudaPipeline.h"
#include "chips/GpuTarget.h"
#include "passes/Pipelines/ToolLookup.h"
#include "src/Support/CompileStage.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

#include <spdlog/spdlog.h>

#include <deque>

using namespace mlir;
using json = nlohmann::json;

namespace pallasc {

bool isCudaTarget(const std::string &target) {
  const GpuTarget *t = lookupGpuTarget(target);
  return t && t->isNvidia();
}

std::string findPtxas() {
  // PTXAS=none (or empty) turns the ptxas check off.
  if (auto p = llvm::sys::Process::GetEnv("PTXAS"))
    return (p->empty() || *p == "none") ? "" : *p;
  if (pallas::explicitToolLookup())
    return "";
  std::vector<std::string> candidates;
  if (auto home = llvm::sys::Process::GetEnv("CUDA_HOME"); home && !home->empty())
    candidates.push_back(*home + "/bin/ptxas");
  candidates.push_back("/usr/local/cuda/bin/ptxas");
  for (const std::string &c : candidates)
    if (llvm::sys::fs::can_execute(c))
      return c;
  if (auto found = llvm::sys::findProgramByName("ptxas"))
    return *found;
  return "";
}

std::optional<PtxasUsage> parsePtxasVerbose(llvm::StringRef text,
                                            llvm::StringRef entry) {
  // ptxas prints, per entry:
  //   ptxas info    : Compiling entry function 'add' for 'sm_90'
  //   ptxas info    : Function properties for add
  //       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
  //   ptxas info    : Used 80 registers, used 0 barriers, 1 bytes smem
  SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n');
  bool inEntry = entry.empty();
  std::optional<PtxasUsage> usage;
  llvm::Regex props("([0-9]+) bytes stack frame, ([0-9]+) bytes spill "
                    "stores, ([0-9]+) bytes spill loads");
  llvm::Regex used("Used ([0-9]+) registers");
  llvm::Regex barriers("used ([0-9]+) barriers");
  llvm::Regex smem("([0-9]+) bytes smem");
  for (llvm::StringRef line : lines) {
    if (line.contains("Compiling entry function") ||
        line.contains("Function properties for")) {
      inEntry = entry.empty() || line.contains(("'" + entry + "'").str()) ||
                line.ends_with((" " + entry).str());
      continue;
    }
    if (!inEntry)
      continue;
    SmallVector<llvm::StringRef> m;
    if (props.match(line, &m)) {
      if (!usage)
        usage = PtxasUsage();
      m[1].getAsInteger(10, usage->stackFrame);
      m[2].getAsInteger(10, usage->spillStores);
      m[3].getAsInteger(10, usage->spillLoads);
    }
    if (used.match(line, &m)) {
      if (!usage)
        usage = PtxasUsage();
      m[1].getAsInteger(10, usage->registers);
      if (barriers.match(line, &m))
        m[1].getAsInteger(10, usage->barriers);
      if (smem.match(line, &m))
        m[1].getAsInteger(10, usage->sharedStatic);
    }
  }
  return usage;
}

/// One cuda:<arch> of a compile between startCudaArtifacts (lowered, ptxas
/// started) and finishCudaArtifacts (ptxas collected).
struct PendingCudaTarget {
  std::string target, arch, entry;
  /// Uniqued in the context: outlives the module copy.
  pallas::GpuLaunchAttr launch;
  std::string ptx;
  std::optional<CudaArtifacts::File> gpuText; ///< --emit=mlir
  // ptxas, when found: its files in the tool directory and the process.
  SmallString<128> ptxPath, logPath, cubinPath;
  RunningTool ptxas;
  bool ranPtxas = false;

  PendingCudaTarget() = default;
  PendingCudaTarget(PendingCudaTarget &&) = default;
  ~PendingCudaTarget() {
    ptxas = RunningTool(); // killed and reaped before its files go
    for (const SmallString<128> *p : {&ptxPath, &logPath, &cubinPath})
      if (!p->empty())
        llvm::sys::fs::remove(*p);
  }
};

struct PendingCudaArtifacts {
  std::string name;
  Location moduleLoc, kernelLoc;
  bool emitCubin, keepCubin, spillsAreErrors, launcherImages;
  unsigned ptxasSeconds; ///< each ptxas' time limit
  std::deque<PendingCudaTarget> targets; ///< never moved: ptxas runs on their files
};

void PendingCudaArtifactsDeleter::operator()(PendingCudaArtifacts *p) const {
  delete p;
}

GpuVendorLowering cudaVendorLowering(const GpuTarget &chip, bool strictFloat,
                                     bool mosaicGpu) {
  pallas::CudaPipelineOptions options;
  options.chip = chip.chip;
  options.toolkitPath = pallas::defaultCudaToolkitPath();
  options.strictFloat = strictFloat;
  return GpuVendorLowering{
      "CUDA", "NVVM lowering and PTX generation", "PTX",
      [options, mosaicGpu](OpPassManager &pm) {
        if (mosaicGpu)
          pallas::buildMosaicGpuDistributionPipeline(pm, options);
        else
          pallas::buildCudaDistributionPipeline(pm, options);
      },
      [options](OpPassManager &pm) {
        pallas::buildCudaCodegenPipeline(pm, options);
      },
      nullptr};
}

/// The time limit of each ptxas run: $PALLASC_PTXAS_TIMEOUT seconds (a
/// whole number from 1 to 86400), default 120; an error for another value.
static FailureOr<unsigned> ptxasTimeoutSeconds(Location loc) {
  auto v = llvm::sys::Process::GetEnv("PALLASC_PTXAS_TIMEOUT");
  if (!v)
    return 120u;
  unsigned seconds = 0;
  if (llvm::StringRef(*v).getAsInteger(10, seconds) || seconds < 1 ||
      seconds > 86400)
    return emitError(loc) << "PALLASC_PTXAS_TIMEOUT must be a whole number "
                             "of seconds from 1 to 86400, got '"
                          << *v << "'";
  return seconds;
}

FailureOr<PendingCudaArtifactsPtr>
startCudaArtifacts(ModuleOp module, const std::string &name,
                   const std::vector<std::string> &targets,
                   const CudaArtifactOptions &options) {
  bool mosaicGpu = mlir::pallas_mgpu::hasMosaicGpuOps(module);
  if (!hasPallasCall(module) && !mosaicGpu)
    return PendingCudaArtifactsPtr(); // eliminated by pallas-dce: nothing to run
  std::string ptxas = findPtxas();
  if (options.emitCubin && ptxas.empty())
    return emitError(module.getLoc())
           << "--emit=cubin needs ptxas (none in $PTXAS, $CUDA_HOME/bin, "
              "/usr/local/cuda/bin or PATH)";
  unsigned ptxasSeconds = 120;
  if (!ptxas.empty()) {
    FailureOr<unsigned> limit = ptxasTimeoutSeconds(module.getLoc());
    if (failed(limit))
      return failure();
    ptxasSeconds = *limit;
  }
  Location kernelLoc = kernelLocation(module);
  PendingCudaArtifactsPtr pending(new PendingCudaArtifacts{
      name, module.getLoc(), kernelLoc, options.emitCubin,
      // A launcher embeds the cubin whenever ptxas runs.
      options.emitCubin || options.launcherImages, options.spillsAreErrors,
      options.launcherImages, ptxasSeconds, {}});
  for (const VendorTarget &vt : vendorTargets(targets, isCudaTarget)) {
    const std::string &target = vt.target;
    const GpuTarget &chip = *vt.chip;
    Step targetStep(target);
    PendingCudaTarget &t = pending->targets.emplace_back();
    t.target = target;
    t.arch = chip.chip;
    FailureOr<LoweredGpuKernel> kernel =
        lowerGpuKernel(module, kernelLoc, target, chip,
                       cudaVendorLowering(chip, options.strictFloat, mosaicGpu),
                       options.emitText);
    if (failed(kernel))
      return failure();
    t.launch = kernel->launch;
    t.entry = kernel->entry;
    t.ptx = std::move(kernel->object);
    if (kernel->gpuText)
      t.gpuText =
          CudaArtifacts::File{name + "." + t.arch + ".gpu.mlir",
                              std::move(*kernel->gpuText)};
    // Math functions come from libdevice, linked only with a toolkit: an
    // unresolved one is declared `.extern .func (...) __nv_<name>`.
    if (llvm::Regex("\\.extern \\.func[^;]*__nv_").match(t.ptx))
      return emitError(module.getLoc())
             << "the kernel calls CUDA math functions (libdevice) but no CUDA "
                "toolkit was found to link them; set CUDA_HOME to the "
                "toolkit root (the directory holding nvvm/libdevice)";
    if (ptxas.empty())
      continue;
    // ptxas runs while the next targets are lowered; finishCudaArtifacts
    // collects it.
    Step step("ptxas start");
    std::string tempError;
    ScratchDir *temp = toolTempDir(tempError);
    if (!temp)
      return emitError(module.getLoc()) << "cannot run ptxas: " << tempError;
    std::string stem = name + "." + t.arch;
    std::error_code ec = temp->writeFile(stem, ".ptx", t.ptx, t.ptxPath);
    if (!ec)
      ec = temp->createFile(stem, ".log", t.logPath);
    if (!ec && pending->keepCubin)
      ec = temp->createFile(stem, ".cubin", t.cubinPath);
    if (ec)
      return emitError(module.getLoc())
             << "cannot write the temporary files of ptxas in " << temp->path()
             << ": " << ec.message();
    std::string archFlag = "-arch=" + t.arch;
    SmallVector<llvm::StringRef> args = {
        ptxas, archFlag, "-v", t.ptxPath, "-o",
        pending->keepCubin ? llvm::StringRef(t.cubinPath) : "/dev/null"};
    spdlog::debug("{}: {}", target, llvm::join(args, " "));
    t.ptxas = temp->startTool(ptxas, args, t.logPath);
    t.ranPtxas = true;
  }
  return pending;
}

FailureOr<CudaArtifacts> finishCudaArtifacts(PendingCudaArtifacts *pending) {
  CudaArtifacts out;
  if (!pending)
    return out;
  for (PendingCudaTarget &t : pending->targets) {
    if (t.gpuText) {
      out.emitted.push_back(t.gpuText->name);
      out.files.push_back(std::move(*t.gpuText));
    }
    ManifestArtifact entryJson;
    entryJson.target = t.target;
    entryJson.file = pending->name + "." + t.arch + ".ptx";
    entryJson.sha256 = sha256Hex(t.ptx);
    json launchInfo = gpuLaunchJson(t.launch, t.arch, "cuda");
    std::string cubinImage;
    if (t.ranPtxas) {
      Step targetStep(t.target);
      Step step("ptxas");
      std::string execError;
      CompileStage stage("ptxas", t.target);
      int rc = t.ptxas.wait(pending->ptxasSeconds, execError);
      if (rc == RunningTool::kTimedOut)
        return emitError(pending->moduleLoc)
               << "ptxas timed out on the generated PTX for " << t.arch
               << ": it ran longer than " << pending->ptxasSeconds
               << " s and was stopped (the limit is set by "
                  "PALLASC_PTXAS_TIMEOUT, in seconds)";
      auto log = llvm::MemoryBuffer::getFile(t.logPath);
      std::string logText = log ? (*log)->getBuffer().str() : "";
      std::string cubin;
      if (pending->keepCubin) {
        auto buf = llvm::MemoryBuffer::getFile(t.cubinPath, /*IsText=*/false);
        if (buf)
          cubin = (*buf)->getBuffer().str();
        if (rc == 0 && cubin.empty())
          return emitError(pending->moduleLoc)
                 << "ptxas wrote no cubin for " << t.arch;
      }
      if (rc != 0)
        return emitError(pending->moduleLoc)
               << "ptxas rejected the generated PTX for " << t.arch << " ("
               << (execError.empty() ? "exit " + std::to_string(rc)
                                     : execError)
               << "):\n"
               << logText;
      if (auto usage = parsePtxasVerbose(logText, t.entry)) {
        launchInfo["ptxas"] = json{{"registers", usage->registers},
                                   {"spill_stores_bytes", usage->spillStores},
                                   {"spill_loads_bytes", usage->spillLoads},
                                   {"stack_frame_bytes", usage->stackFrame},
                                   {"barriers", usage->barriers}};
        if (usage->spillStores > 0 || usage->spillLoads > 0) {
          std::string text;
          llvm::raw_string_ostream os(text);
          os << "kernel '" << t.entry << "' spills registers on " << t.target
             << " (ptxas -v): " << usage->registers << " registers, "
             << usage->spillStores << " bytes of spill stores, "
             << usage->spillLoads << " bytes of spill loads; use smaller "
             << "blocks or more warps";
          if (failed(reportSpills(pending->kernelLoc, text,
                                  pending->spillsAreErrors)))
            return failure();
        }
      }
      if (pending->launcherImages)
        cubinImage = cubin;
      if (pending->emitCubin) {
        std::string file = pending->name + "." + t.arch + ".cubin";
        launchInfo["cubin"] = json{{"file", file}, {"sha256", sha256Hex(cubin)}};
        out.files.push_back({file, std::move(cubin)});
        out.emitted.push_back(file);
      }
    }
    entryJson.launch = launchInfo;
    if (pending->launcherImages) {
      CudaArtifacts::Image image;
      image.arch = t.arch;
      image.cubin = std::move(cubinImage);
      image.ptx = t.ptx;
      image.record = readGpuLaunchRecord(t.launch);
      out.images.push_back(std::move(image));
    }
    out.files.push_back({entryJson.file, t.ptx});
    out.manifestEntries.push_back(std::move(entryJson));
  }
  return out;
}

FailureOr<CudaArtifacts>
emitCudaArtifacts(ModuleOp module, const std::string &name,
                  const std::vector<std::string> &targets,
                  const CudaArtifactOptions &options) {
  FailureOr<PendingCudaArtifactsPtr> pending =
      startCudaArtifacts(module, name, targets, options);
  if (failed(pending))
    return failure();
  return finishCudaArtifacts(pending->get());
}

} // namespace pallasc
