//===- TargetRegistry.cpp - The driver's table of target kinds --*- C++ -*-===//

#include "src/Driver/TargetRegistry.h"

#include "src/Driver/Cache.h"
#include "src/Driver/CpuTarget.h"
#include "src/Driver/Driver.h"
#include "src/Driver/Timing.h"
#include "src/Runtime/HostCode.h"
#include "src/Support/CompileStage.h"
#include "src/Target/TPUArtifacts.h"
#include "chips/GpuTarget.h"

#include "passes/Pipelines/CudaPipeline.h"
#include "passes/Pipelines/RocmPipeline.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace mlir;

namespace pallasc {

namespace {

/// Appends a kind's files, manifest entries and --emit files.
template <typename Artifacts>
void append(Artifacts &from, TargetOutputs &out) {
  for (auto &f : from.files)
    out.files.push_back({f.name, std::move(f.contents)});
  llvm::append_range(out.artifacts, from.manifestEntries);
  llvm::append_range(out.emitted, from.emitted);
}

/// A finish for a kind that did all its work in `start`.
FinishTargetCompile finished(TargetOutputs done) {
  return [done = std::move(done)](TargetOutputs &out) mutable {
    for (CompiledFile &f : done.files)
      out.files.push_back(std::move(f));
    llvm::append_range(out.artifacts, done.artifacts);
    llvm::append_range(out.emitted, done.emitted);
    for (CudaArtifacts::Image &i : done.cudaImages)
      out.cudaImages.push_back(std::move(i));
    for (RocmArtifacts::Image &i : done.rocmImages)
      out.rocmImages.push_back(std::move(i));
    return success();
  };
}

/// A toolchain part and the fingerprint of the file it names.
void addFile(CompileCache &cache, Toolchain &t, const std::string &name,
             const std::string &path) {
  t.parts.push_back({name, path});
  t.parts.push_back(
      {name + " content", path.empty() ? "absent" : cache.fingerprint(path)});
}

//===----------------------------------------------------------------------===//
// tpu
//===----------------------------------------------------------------------===//

bool isTpu(const std::string &target) { return isTpuTarget(target); }

FailureOr<FinishTargetCompile> startTpu(const TargetCompileRequest &r) {
  // <name>.tpu.mlirbc + <name>.tpu.json (src/Target).
  CompileStage stage("the Mosaic lowering", "tpu");
  FailureOr<TpuArtifacts> tpu = emitTpuArtifacts(r.module, r.name, r.emitMlir);
  if (failed(tpu))
    return failure();
  TargetOutputs done;
  append(*tpu, done);
  return finished(std::move(done));
}

//===----------------------------------------------------------------------===//
// cuda:<chip>
//===----------------------------------------------------------------------===//

FailureOr<FinishTargetCompile> startCuda(const TargetCompileRequest &r) {
  // <name>.<arch>.ptx per arch (src/Target). ptxas runs on each arch's PTX
  // while the other kinds are lowered; finishing collects it.
  CudaArtifactOptions options;
  options.emitText = r.emitMlir;
  options.emitCubin = llvm::is_contained(r.options.emit, "cubin");
  options.strictFloat = r.strictFloat;
  options.spillsAreErrors = r.options.spillsAreErrors;
  options.launcherImages = r.wantLibrary;
  FailureOr<PendingCudaArtifactsPtr> started =
      startCudaArtifacts(r.module, r.name, r.options.targets, options);
  if (failed(started))
    return failure();
  return FinishTargetCompile(
      [pending = std::move(*started)](TargetOutputs &out) mutable {
        FailureOr<CudaArtifacts> cuda = finishCudaArtifacts(pending.get());
        pending.reset();
        if (failed(cuda))
          return failure();
        append(*cuda, out);
        for (CudaArtifacts::Image &i : cuda->images)
          out.cudaImages.push_back(std::move(i));
        return success();
      });
}

/// The architecture of a `<vendor>:<arch>` target.
std::string archOf(const std::string &target) {
  return target.substr(target.find(':') + 1);
}

/// Adds an image of `target`'s architecture to `images` unless it has one.
template <typename Image>
void addImageOf(const std::string &target, std::vector<Image> &images) {
  std::string arch = archOf(target);
  if (llvm::any_of(images, [&](const Image &i) { return i.arch == arch; }))
    return;
  Image image;
  image.arch = arch;
  images.push_back(std::move(image));
}

void cudaHeaderImage(const std::string &target, TargetOutputs &out) {
  addImageOf(target, out.cudaImages);
}

void cudaToolchain(CompileCache &cache, Toolchain &t) {
  addFile(cache, t, "ptxas", findPtxas());
  std::string toolkit = mlir::pallas::defaultCudaToolkitPath();
  t.parts.push_back({"cuda toolkit", toolkit});
  if (!toolkit.empty())
    addFile(cache, t, "libdevice",
            toolkit + "/nvvm/libdevice/libdevice.10.bc");
}

//===----------------------------------------------------------------------===//
// rocm:<chip>
//===----------------------------------------------------------------------===//

FailureOr<FinishTargetCompile> startRocm(const TargetCompileRequest &r) {
  // <name>.<arch>.hsaco per arch (src/Target).
  FailureOr<RocmArtifacts> rocm = emitRocmArtifacts(
      r.module, r.name, r.options.targets, r.emitMlir,
      llvm::is_contained(r.options.emit, "asm"),
      r.options.rocmCodeObjectVersion, r.strictFloat,
      r.options.spillsAreErrors, /*launcherImages=*/r.wantLibrary);
  if (failed(rocm))
    return failure();
  TargetOutputs done;
  append(*rocm, done);
  done.rocmImages = std::move(rocm->images);
  return finished(std::move(done));
}

void rocmHeaderImage(const std::string &target, TargetOutputs &out) {
  addImageOf(target, out.rocmImages);
}

void rocmToolchain(CompileCache &cache, Toolchain &t) {
  namespace fs = llvm::sys::fs;
  namespace path = llvm::sys::path;
  addFile(cache, t, "ld.lld", findLdLld());
  std::string root = mlir::pallas::defaultRocmDeviceLibsRoot();
  t.parts.push_back({"rocm device libraries", root});
  if (root.empty())
    return;
  llvm::SmallString<256> bitcode(root);
  path::append(bitcode, "amdgcn", "bitcode");
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(bitcode, ec), end; it != end && !ec;
       it.increment(ec))
    names.push_back(it->path());
  llvm::sort(names);
  for (const std::string &n : names)
    t.parts.push_back(
        {"device library " + path::filename(n).str(), cache.fingerprint(n)});
}

//===----------------------------------------------------------------------===//
// cpu
//===----------------------------------------------------------------------===//

FailureOr<FinishTargetCompile> startCpu(const TargetCompileRequest &r) {
  // <name>.cpu.o, the lowering `pallasc run` executes.
  Step step("cpu");
  CompileStage stage("the CPU lowering", "cpu");
  std::string file, object;
  ManifestArtifact entry;
  if (failed(emitCpuArtifact(r.module, r.name, file, object, entry)))
    return failure();
  TargetOutputs done;
  if (!file.empty()) {
    done.files.push_back({file, std::move(object)});
    done.artifacts.push_back(std::move(entry));
  }
  return finished(std::move(done));
}

void cpuToolchain(CompileCache &, Toolchain &t) {
  t.parts.push_back({"host triple", runtime::hostTriple()});
}

} // namespace

const std::vector<TargetKind> &targetKinds() {
  static const std::vector<TargetKind> kinds = {
      {"tpu", isTpu, startTpu, nullptr, {{".mlirbc", "add --target tpu"}},
       /*hasLauncher=*/false, nullptr, "tpu", [] { return std::string("tpu"); },
       /*run=*/{}, /*flags=*/{}},
      {"cuda", isCudaTarget, startCuda, cudaToolchain,
       {{".ptx", "add --target cuda:<arch>"},
        {".cubin", "add --target cuda:<arch> --emit=cubin"}},
       /*hasLauncher=*/true, cudaHeaderImage, "cuda:<arch>",
       [] { return validGpuTargetNames(GpuVendor::Nvidia); },
       /*run=*/{/*runnable=*/true, /*emulateOnly=*/nullptr},
       /*flags=*/{{"--emit=cubin", "cubin"}}},
      {"rocm", isRocmTarget, startRocm, rocmToolchain,
       {{".hsaco", "add --target rocm:<arch>"},
        {".s", "add --target rocm:<arch> --emit=asm"}},
       /*hasLauncher=*/true, rocmHeaderImage, "rocm:<arch>",
       [] { return validGpuTargetNames(GpuVendor::Amd); },
       /*run=*/{/*runnable=*/true, "AMD GPUs (no HIP runtime support)"},
       /*flags=*/{{"--emit=asm", "asm"}, {"--code-object-version", nullptr}}},
      {"cpu", isCpuTarget, startCpu, cpuToolchain,
       {{".o", "add --target cpu"}}, /*hasLauncher=*/true, nullptr, "cpu",
       [] { return std::string("cpu"); },
       // `pallasc run` without --target.
       /*run=*/{}, /*flags=*/{}},
  };
  return kinds;
}

const TargetKind *findTargetKind(const std::string &target) {
  for (const TargetKind &kind : targetKinds())
    if (kind.matches(target))
      return &kind;
  return nullptr;
}

bool hasTargetOf(const TargetKind &kind,
                 const std::vector<std::string> &targets) {
  return llvm::any_of(targets, kind.matches);
}

std::string validTargetNames() {
  std::string names;
  for (const TargetKind &kind : targetKinds())
    names += (names.empty() ? "" : ", ") + kind.validNames();
  return names;
}

const TargetKind *findRunTargetKind(const std::string &target,
                                    std::string &error) {
  const TargetKind *kind = findTargetKind(target);
  if (kind && kind->run.runnable)
    return kind;
  std::string names;
  for (const TargetKind &k : targetKinds())
    if (k.run.runnable)
      names += (names.empty() ? "" : ", ") + k.validNames();
  error = (kind ? "pallasc run cannot run '" + target + "'"
                : "unknown target '" + target + "'") +
          "; pallasc run --target takes one of " + names +
          " (without --target it runs on the CPU)";
  return nullptr;
}

std::string runTargetSpellings(bool onDevice) {
  std::string spellings;
  for (const TargetKind &k : targetKinds())
    if (k.run.runnable && (!onDevice || !k.run.emulateOnly))
      spellings += (spellings.empty() ? "" : " or ") + std::string(k.spelling);
  return spellings;
}

} // namespace pallasc
