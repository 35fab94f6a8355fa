//===- RocmArtifacts.cpp - --target rocm:<arch> -----------------*- C++ -*-===//

#include "src/Target/RocmArtifacts.h"

#include "src/Target/CudaArtifacts.h"

#include "dialects/Pallas/IR/PallasOps.h"
#include "passes/Conversion/PallasToGPU/PallasToGPU.h"
#include "passes/Pipelines/RocmPipeline.h"

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

using namespace mlir;
using json = nlohmann::json;

namespace pallasc {

bool isRocmTarget(const std::string &target) {
  return llvm::StringRef(target).starts_with("rocm:");
}

const std::vector<std::string> &supportedRocmArchs() {
  static const std::vector<std::string> archs = {"gfx90a", "gfx940",
                                                 "gfx941", "gfx942"};
  return archs;
}

std::string findLdLld() {
  if (auto p = llvm::sys::Process::GetEnv("PALLASC_LD_LLD"); p && !p->empty())
    return *p;
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
                                      llvm::StringRef arch) {
  std::string lld = findLdLld();
  if (lld.empty())
    return emitError(module.getLoc())
           << "--target rocm:" << arch
           << " needs ld.lld to link the code object (none in "
              "$PALLASC_LD_LLD, the LLVM installation or PATH; install "
              "lld-22)";
  SmallString<128> objPath, outPath, logPath;
  int fd;
  if (llvm::sys::fs::createTemporaryFile("pallasc", "o", fd, objPath))
    return emitError(module.getLoc())
           << "cannot create a temporary file for ld.lld";
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << object;
  }
  llvm::scope_exit cleanup([&] {
    llvm::sys::fs::remove(objPath);
    if (!outPath.empty())
      llvm::sys::fs::remove(outPath);
    if (!logPath.empty())
      llvm::sys::fs::remove(logPath);
  });
  if (llvm::sys::fs::createTemporaryFile("pallasc", "hsaco", outPath) ||
      llvm::sys::fs::createTemporaryFile("pallasc", "log", logPath))
    return emitError(module.getLoc())
           << "cannot create a temporary file for ld.lld";
  SmallVector<llvm::StringRef> args = {lld, "-flavor", "gnu", "-shared",
                                       objPath, "-o", outPath};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, logPath,
                                                logPath};
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(lld, args, std::nullopt, redirects, 120,
                                     0, &execError);
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

FailureOr<RocmArtifacts>
emitRocmArtifacts(ModuleOp module, const std::string &name,
                  const std::vector<std::string> &targets, bool emitText,
                  bool emitAsm, int codeObjectVersion, bool strictFloat) {
  RocmArtifacts out;
  bool hasCall = false;
  module.walk([&](pallas::CallOp) { hasCall = true; });
  if (!hasCall)
    return out; // eliminated by pallas-dce: nothing to run
  if (codeObjectVersion < 4 || codeObjectVersion > 6)
    return emitError(module.getLoc())
           << "code object version " << codeObjectVersion
           << " is not supported (expected 4, 5 or 6)";
  std::string deviceLibs = pallas::defaultRocmDeviceLibsRoot();
  Location kernelLoc = module.getLoc();
  module.walk([&](pallas::KernelOp k) { kernelLoc = k.getLoc(); });
  std::vector<std::string> seen;
  for (const std::string &target : targets) {
    if (!isRocmTarget(target) || llvm::is_contained(seen, target))
      continue;
    seen.push_back(target);
    std::string arch = target.substr(5);
    if (!llvm::is_contained(supportedRocmArchs(), arch))
      return emitError(module.getLoc())
             << "unsupported AMD architecture '" << arch << "' in --target "
             << target << " (expected one of "
             << llvm::join(supportedRocmArchs(), ", ")
             << ": CDNA2/CDNA3 with wave64 and MFMA)";
    pallas::RocmPipelineOptions options;
    options.chip = arch;
    options.abiVersion = std::to_string(codeObjectVersion * 100);
    options.deviceLibsRoot = deviceLibs;
    options.strictFloat = strictFloat;

    OwningOpRef<ModuleOp> copy(module.clone());
    PassManager distribute(module.getContext());
    pallas::buildRocmDistributionPipeline(distribute, options);
    if (failed(distribute.run(*copy)))
      return failure();
    DictionaryAttr launch;
    std::string entry;
    copy->walk([&](mlir::gpu::GPUFuncOp f) {
      launch = f->getAttrOfType<DictionaryAttr>(pallas::kGpuLaunchAttrName);
      entry = f.getName().str();
    });
    if (!launch)
      return emitError(module.getLoc())
             << "the AMD lowering produced no kernel";
    // LDS: 64 KiB per workgroup on CDNA2/CDNA3.
    constexpr int64_t kLdsBytes = 65536;
    int64_t lds =
        launch.getAs<IntegerAttr>("dynamic_shared_memory_bytes").getInt();
    if (lds > kLdsBytes)
      return emitError(kernelLoc)
             << "the kernel needs " << lds << " bytes of LDS (scratch "
             << "buffers and the lowering's workspace) but " << arch
             << " has " << kLdsBytes
             << " per workgroup; use smaller blocks or scratch buffers";
    if (emitText) {
      std::string text;
      llvm::raw_string_ostream os(text);
      copy->print(os);
      std::string file = name + "." + arch + ".gpu.mlir";
      out.files.push_back({file, text});
      out.emitted.push_back(file);
    }
    PassManager codegen(module.getContext());
    pallas::buildRocmCodegenPipeline(codegen, options);
    if (failed(codegen.run(*copy))) {
      if (deviceLibs.empty())
        return emitError(kernelLoc)
               << "no ROCm device libraries were found to link (ocml/ockl "
                  "bitcode under $ROCM_PATH, /opt/rocm or "
                  "/usr/lib/x86_64-linux-gnu: amdgcn/bitcode); install "
                  "rocm-device-libs or set ROCM_PATH";
      return failure();
    }
    std::string isa;
    copy->walk([&](mlir::gpu::BinaryOp binary) {
      for (Attribute a : binary.getObjectsAttr())
        if (auto obj = dyn_cast<mlir::gpu::ObjectAttr>(a))
          isa = obj.getObject().str();
    });
    if (isa.empty())
      return emitError(module.getLoc())
             << "the AMD lowering produced no assembly";
    // Math functions come from the device libraries (ocml, ockl), linked
    // only when they were found: an unresolved one stays a call.
    if (llvm::Regex("(__ocml_|__ockl_)[a-z0-9_]*@").match(isa) ||
        llvm::Regex("s_swappc_b64").match(isa))
      return emitError(kernelLoc)
             << "the kernel calls ROCm device-library functions (ocml/ockl) "
                "that were not linked; install rocm-device-libs or set "
                "ROCM_PATH to a directory holding amdgcn/bitcode";
    auto object = ROCDL::assembleIsa(isa, "amdgcn-amd-amdhsa", arch, "",
                                     [&] { return emitError(module.getLoc()); });
    if (failed(object))
      return failure();
    FailureOr<std::string> hsaco = linkCodeObject(
        *copy, llvm::StringRef(object->data(), object->size()), arch);
    if (failed(hsaco))
      return failure();

    ManifestArtifact entryJson;
    entryJson.target = target;
    entryJson.file = name + "." + arch + ".hsaco";
    entryJson.sha256 = sha256Hex(*hsaco);
    json launchInfo = gpuLaunchJson(launch, arch, "hip");
    launchInfo["code_object_version"] = codeObjectVersion;
    if (std::optional<json> notes = readKernelNotes(module, *hsaco, entry))
      launchInfo["resources"] = *notes;
    else
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
    out.files.push_back({entryJson.file, std::move(*hsaco)});
    out.manifestEntries.push_back(std::move(entryJson));
  }
  return out;
}

} // namespace pallasc
