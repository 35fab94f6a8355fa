//===- RocmArtifacts.cpp - --target rocm:<arch> -----------------*- C++ -*-===//

#include "src/Target/RocmArtifacts.h"

#include "src/Target/GpuArtifacts.h"
#include "src/Target/GpuLaunchRecordReader.h"

#include "src/Support/Temporaries.h"

#include "src/Driver/Timing.h"

#include "dialects/Pallas/IR/PallasOps.h"
#include "dialects/Pallas/IR/GpuLaunchAttrs.h"
#include "passes/Pipelines/RocmPipeline.h"
#include "chips/GpuTarget.h"
#include "passes/Pipelines/ToolLookup.h"
#include "src/Support/CompileStage.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/ROCDL/Utils.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

#include <spdlog/spdlog.h>

using namespace mlir;
using json = nlohmann::json;

namespace pallasc {

bool isRocmTarget(const std::string &target) {
  const GpuTarget *t = lookupGpuTarget(target);
  return t && t->isAmd();
}

std::string findLdLld() {
  if (auto p = llvm::sys::Process::GetEnv("PALLASC_LD_LLD"); p && !p->empty())
    return *p == "none" ? "" : *p;
  if (pallas::explicitToolLookup())
    return "";
#ifdef PALLASC_LLVM_TOOLS_DIR
  std::string bundled = std::string(PALLASC_LLVM_TOOLS_DIR) + "/ld.lld";
  if (llvm::sys::fs::can_execute(bundled))
    return bundled;
#endif
  for (const char *name : {"ld.lld-22", "ld.lld"})
    if (auto found = llvm::sys::findProgramByName(name))
      return *found;
  return "";
}

namespace {

/// Runs ld.lld on `object` (a relocatable AMDGPU ELF) into a shared code
/// object, as the ROCm toolchain links kernels.
FailureOr<std::string> linkCodeObject(ModuleOp module, llvm::StringRef object,
                                      llvm::StringRef arch,
                                      llvm::StringRef target) {
  CompileStage stage("ld.lld", target);
  std::string lld = findLdLld();
  if (lld.empty())
    return emitError(module.getLoc())
           << "--target rocm:" << arch
           << " needs ld.lld to link the code object (none in "
              "$PALLASC_LD_LLD, the LLVM installation or PATH; install "
              "lld-22)";
  std::string tempError;
  ScratchDir *temp = toolTempDir(tempError);
  if (!temp)
    return emitError(module.getLoc()) << "cannot run ld.lld: " << tempError;
  SmallString<128> objPath, outPath, logPath;
  llvm::scope_exit cleanup([&] {
    for (const SmallString<128> *p : {&objPath, &outPath, &logPath})
      if (!p->empty())
        llvm::sys::fs::remove(*p);
  });
  std::string stem = arch.str();
  std::error_code ec = temp->writeFile(stem, ".o", object, objPath);
  if (!ec)
    ec = temp->createFile(stem, ".hsaco", outPath);
  if (!ec)
    ec = temp->createFile(stem, ".log", logPath);
  if (ec)
    return emitError(module.getLoc())
           << "cannot write the temporary files of ld.lld in "
           << temp->path() << ": " << ec.message();
  SmallVector<llvm::StringRef> args = {lld, "-flavor", "gnu", "-shared",
                                       objPath, "-o", outPath};
  std::string execError;
  spdlog::debug("{}: {}", target, llvm::join(args, " "));
  int rc = temp->runTool(lld, args, logPath, 120, execError);
  if (rc != 0) {
    auto log = llvm::MemoryBuffer::getFile(logPath);
    return emitError(module.getLoc())
           << "ld.lld failed to link the code object for " << arch << " ("
           << (execError.empty() ? "exit " + std::to_string(rc) : execError)
           << ")" << (log && (*log)->getBufferSize() ? ":\n" : "")
           << (log ? (*log)->getBuffer() : "");
  }
  auto buf = llvm::MemoryBuffer::getFile(outPath, /*IsText=*/false);
  if (!buf || (*buf)->getBufferSize() == 0)
    return emitError(module.getLoc())
           << "ld.lld wrote no code object for " << arch;
  return (*buf)->getBuffer().str();
}

/// The kernel's resource usage from the code object's AMDHSA metadata note
/// (what `llvm-readelf --notes` shows).
std::optional<json> readKernelNotes(ModuleOp module, llvm::StringRef hsaco,
                                    llvm::StringRef entry) {
  Builder builder(module.getContext());
  auto kernels = ROCDL::getAMDHSAKernelsELFMetadata(
      builder, ArrayRef<char>(hsaco.data(), hsaco.size()));
  if (!kernels)
    return std::nullopt;
  for (auto &kernel : *kernels) {
    if (kernel.first.getValue() != entry)
      continue;
    NamedAttrList &attrs = kernel.second;
    json j = json::object();
    auto integer = [&](llvm::StringRef key, const char *field) {
      if (auto a = dyn_cast_or_null<IntegerAttr>(attrs.get(key)))
        j[field] = a.getInt();
    };
    integer("sgpr_count", "sgpr_count");
    integer("vgpr_count", "vgpr_count");
    integer("agpr_count", "agpr_count");
    integer("sgpr_spill_count", "sgpr_spill_count");
    integer("vgpr_spill_count", "vgpr_spill_count");
    integer("group_segment_fixed_size", "lds_static_bytes");
    integer("private_segment_fixed_size", "scratch_bytes");
    integer("wavefront_size", "wavefront_size");
    integer("max_flat_workgroup_size", "max_flat_workgroup_size");
    return j;
  }
  return std::nullopt;
}

} // namespace

GpuVendorLowering rocmVendorLowering(const GpuTarget &chip,
                                     int codeObjectVersion,
                                     const std::string &deviceLibs,
                                     Location kernelLoc, bool strictFloat) {
  pallas::RocmPipelineOptions options;
  options.chip = chip.chip;
  options.abiVersion = std::to_string(codeObjectVersion * 100);
  options.deviceLibsRoot = deviceLibs;
  options.strictFloat = strictFloat;
  auto codegenFailed = [deviceLibs, kernelLoc] {
    if (deviceLibs.empty())
      emitError(kernelLoc)
          << "no ROCm device libraries were found to link (ocml/ockl "
             "bitcode under $ROCM_PATH, /opt/rocm or "
             "/usr/lib/x86_64-linux-gnu: amdgcn/bitcode); install "
             "rocm-device-libs or set ROCM_PATH";
  };
  return GpuVendorLowering{
      "AMD", "ROCDL lowering and AMDGPU code generation", "assembly",
      [options](OpPassManager &pm) {
        pallas::buildRocmDistributionPipeline(pm, options);
      },
      [options](OpPassManager &pm) {
        pallas::buildRocmCodegenPipeline(pm, options);
      },
      codegenFailed};
}

FailureOr<RocmArtifacts>
emitRocmArtifacts(ModuleOp module, const std::string &name,
                  const std::vector<std::string> &targets, bool emitText,
                  bool emitAsm, int codeObjectVersion, bool strictFloat,
                  bool spillsAreErrors, bool launcherImages) {
  RocmArtifacts out;
  if (!hasPallasCall(module))
    return out; // eliminated by pallas-dce: nothing to run
  std::string deviceLibs = pallas::defaultRocmDeviceLibsRoot();
  Location kernelLoc = kernelLocation(module);
  for (const VendorTarget &vt : vendorTargets(targets, isRocmTarget)) {
    const std::string &target = vt.target;
    const GpuTarget &chip = *vt.chip;
    Step targetStep(target);
    std::string arch = chip.chip;
    if (!chip.supportsCodeObjectVersion(codeObjectVersion)) {
      std::string versions;
      for (int v : chip.codeObjectVersions)
        versions += (versions.empty() ? "" : ", ") + std::to_string(v);
      return emitError(module.getLoc())
             << "code object version " << codeObjectVersion
             << " is not supported on " << arch << " (expected one of "
             << versions << ")";
    }
    FailureOr<LoweredGpuKernel> kernel = lowerGpuKernel(
        module, kernelLoc, target, chip,
        rocmVendorLowering(chip, codeObjectVersion, deviceLibs, kernelLoc,
                           strictFloat),
        emitText);
    if (failed(kernel))
      return failure();
    pallas::GpuLaunchAttr launch = kernel->launch;
    const std::string &entry = kernel->entry;
    const std::string &isa = kernel->object;
    if (kernel->gpuText) {
      std::string file = name + "." + arch + ".gpu.mlir";
      out.files.push_back({file, std::move(*kernel->gpuText)});
      out.emitted.push_back(file);
    }
    // Math functions come from the device libraries (ocml, ockl), linked
    // only when they were found: an unresolved one stays a call.
    if (llvm::Regex("(__ocml_|__ockl_)[a-z0-9_]*@").match(isa) ||
        llvm::Regex("s_swappc_b64").match(isa))
      return emitError(kernelLoc)
             << "the kernel calls ROCm device-library functions (ocml/ockl) "
                "that were not linked; install rocm-device-libs or set "
                "ROCM_PATH to a directory holding amdgcn/bitcode";
    std::optional<Step> assembleStep(std::in_place, "assemble");
    auto object = [&] {
      CompileStage stage("assembling the AMDGPU code", target);
      return ROCDL::assembleIsa(isa, "amdgcn-amd-amdhsa", arch, "",
                                [&] { return emitError(module.getLoc()); });
    }();
    if (failed(object))
      return failure();
    assembleStep.reset();
    std::optional<Step> linkStep(std::in_place, "link (ld.lld)");
    FailureOr<std::string> hsaco = linkCodeObject(
        module, llvm::StringRef(object->data(), object->size()), arch, target);
    if (failed(hsaco))
      return failure();
    linkStep.reset();

    ManifestArtifact entryJson;
    entryJson.target = target;
    entryJson.file = name + "." + arch + ".hsaco";
    entryJson.sha256 = sha256Hex(*hsaco);
    json launchInfo = gpuLaunchJson(launch, arch, "hip");
    launchInfo["code_object_version"] = codeObjectVersion;
    if (std::optional<json> notes = readKernelNotes(module, *hsaco, entry)) {
      launchInfo["resources"] = *notes;
      auto count = [&](const char *field) -> int64_t {
        return notes->contains(field) ? (*notes)[field].get<int64_t>() : 0;
      };
      if (count("vgpr_spill_count") > 0 || count("sgpr_spill_count") > 0) {
        std::string text;
        llvm::raw_string_ostream os(text);
        os << "kernel '" << entry << "' spills registers on " << target
           << " (AMDHSA notes): " << count("vgpr_count") << " VGPRs and "
           << count("sgpr_count") << " SGPRs used, "
           << count("vgpr_spill_count") << " VGPRs and "
           << count("sgpr_spill_count") << " SGPRs spilled, "
           << count("scratch_bytes")
           << " bytes of scratch per lane; use smaller blocks or more warps";
        if (failed(reportSpills(kernelLoc, text, spillsAreErrors)))
          return failure();
      }
    } else
      return emitError(module.getLoc())
             << "the code object for " << arch
             << " has no AMDHSA metadata for kernel " << entry;
    if (emitAsm) {
      std::string file = name + "." + arch + ".s";
      launchInfo["assembly"] = json{{"file", file}, {"sha256", sha256Hex(isa)}};
      out.files.push_back({file, isa});
      out.emitted.push_back(file);
    }
    entryJson.launch = launchInfo;
    if (launcherImages) {
      RocmArtifacts::Image image;
      image.arch = arch;
      image.hsaco = *hsaco;
      image.codeObjectVersion = codeObjectVersion;
      image.record = readGpuLaunchRecord(launch);
      out.images.push_back(std::move(image));
    }
    out.files.push_back({entryJson.file, std::move(*hsaco)});
    out.manifestEntries.push_back(std::move(entryJson));
  }
  return out;
}

} // namespace pallasc
