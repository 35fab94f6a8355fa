//===- LauncherGen.cpp - --emit=header / --emit=lib ---------------*- C++ -*-===//

#include "src/Driver/LauncherGen.h"

#include "src/Driver/Diagnostics.h"
#include "src/Driver/Timing.h"
#include "src/Launch/CudaLauncher.h"
#include "src/Launch/ElementType.h"
#include "src/Launch/GpuLaunchArgs.h"
#include "src/Launch/HipLauncher.h"
#include "src/Launch/HostPlanCodec.h"
#include "src/Launch/Launcher.h"
#include "src/Runtime/CallPlan.h"
#include "src/Runtime/HostCode.h"
#include "src/Runtime/HostProgram.h"
#include "src/Version.h"

#include "passes/Conversion/PallasMGPUToGPU/TargetSupport.h"

#include "mlir/IR/OwningOpRef.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Object/ArchiveWriter.h"
#include "llvm/Support/MemoryBuffer.h"

#include <optional>

using namespace mlir;

namespace pallasc {

namespace {

using launch::HostArrayType;
using launch::HostCallPlan;
using runtime::BatchLoopProgram;
using runtime::DType;

/// The C type of an element of `dtype`: its host storage (ElementType.h),
/// 16-bit and 8-bit floats as their bits. Packed integers (2 or 4 elements
/// a byte, as XLA packs them) are the cpu launcher's bytes; the GPU targets
/// refuse them (pallas-refuse-packed-integers).
std::string cType(DType dtype) {
  const launch::ElementTypeInfo &e = launch::elementTypeInfo(dtype);
  using Kind = launch::ElementTypeInfo::Kind;
  if (e.kind == Kind::Float && e.size >= 4)
    return e.size == 4 ? "float" : "double";
  bool isSigned = e.kind == Kind::Signed && !launch::isPackedElement(dtype);
  return (isSigned ? "int" : "uint") + std::to_string(8 * e.size) + "_t";
}

/// "f32[n, 4096]": `exprs` (a symbolic call's dimension expressions, or
/// null) name the symbolic dimensions.
std::string shapeText(const HostArrayType &a,
                      const std::vector<launch::HostDimExpr> *exprs = nullptr,
                      const std::vector<launch::HostSymbol> *symbols = nullptr) {
  std::string s = std::string(runtime::dtypeName(a.type)) + "[";
  for (size_t i = 0; i < a.shape.size(); ++i)
    s += (i ? ", " : "") +
         (exprs && symbols && i < exprs->size()
              ? (*exprs)[i].str(*symbols)
              : std::to_string(a.shape[i]));
  return s + "]";
}

/// The entry point's parameters: (C declaration, comment) per parameter.
/// With `batch` (vmap's batch loop around the call): its batched arrays,
/// and a pointer to the per-iteration values of each batched bound.
std::vector<std::pair<std::string, std::string>>
entryParameters(const HostCallPlan &plan, const BatchLoopProgram *batch) {
  std::vector<std::pair<std::string, std::string>> params;
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    bool prefetch = static_cast<int64_t>(i) < plan.numScalarPrefetch;
    const HostArrayType &type = batch ? batch->inputs[i] : plan.inputs[i];
    std::string note = prefetch ? " (scalar prefetch)" : "";
    if (batch)
      note += batch->inAxes[i] == 0
                  ? " (batched: iteration b reads slice b)"
                  : " (not batched: every iteration reads all of it)";
    const launch::HostSymbolic &sym = plan.symbolic;
    params.push_back(
        {std::string("const ") + cType(type.type) + " *in" + std::to_string(i),
         "input " + std::to_string(i) + ": " +
             (sym.empty() ? shapeText(type)
                          : shapeText(type, &sym.inputs[i], &sym.symbols)) +
             note});
  }
  for (size_t j = 0; j < plan.outputs.size(); ++j) {
    std::string note;
    for (auto [in, out] : plan.aliases)
      if (out == static_cast<int64_t>(j))
        note = " (aliases input " + std::to_string(in) +
               ": starts as its values; may be the same memory)";
    if (batch)
      note += " (stacked: iteration b writes slice b)";
    const HostArrayType &type = batch ? batch->outputs[j] : plan.outputs[j];
    const launch::HostSymbolic &sym = plan.symbolic;
    params.push_back(
        {cType(type.type) + " *out" + std::to_string(j),
         "output " + std::to_string(j) + ": " +
             (sym.empty() ? shapeText(type)
                          : shapeText(type, &sym.outputs[j], &sym.symbols)) +
             note});
  }
  size_t k = 0;
  for (size_t a = 0; a < plan.grid.size(); ++a) {
    if (plan.grid[a] != -1 || (!plan.symbolic.empty() &&
                               plan.symbolic.gridIsExpr[a]))
      continue;
    std::string axisName = a < plan.gridNames.size() && !plan.gridNames[a].empty()
                               ? launcherPrefix(plan.gridNames[a])
                               : std::to_string(a);
    if (batch && batch->boundAxes[k] == 0)
      params.push_back(
          {"const int64_t *grid_" + axisName,
           std::to_string(batch->axisSize) + " sizes of grid axis " +
               std::to_string(a) +
               ", one per batch iteration (a batched dynamic bound, each in "
               "[0, 2^31))"});
    else
      params.push_back({"int64_t grid_" + axisName,
                        "the size of grid axis " + std::to_string(a) +
                            " (a dynamic bound, in [0, 2^31)" +
                            (batch ? ", every batch iteration" : "") + ")"});
    ++k;
  }
  // A symbolic call's symbols, after the bounds (checked at every call).
  for (const launch::HostSymbol &d : plan.symbolic.symbols) {
    std::string c = "symbol " + d.name + " (>= " + std::to_string(d.min);
    if (d.max >= 0)
      c += ", <= " + std::to_string(d.max);
    if (d.multipleOf > 1)
      c += ", a multiple of " + std::to_string(d.multipleOf);
    params.push_back({"int64_t " + launcherPrefix(d.name), c + ")"});
  }
  return params;
}

/// The header's sentence on vmap's batch loop ("" without one).
std::string batchText(const BatchLoopProgram *batch) {
  if (!batch)
    return "";
  return " * vmap's batch loop: the grid runs " +
         std::to_string(batch->axisSize) +
         " times, iteration b on slice b (along axis 0)\n"
         " * of each batched input and of every output, as `pallasc run "
         "--vmap` runs it.\n";
}

std::string gridText(const HostCallPlan &plan) {
  std::string s;
  for (size_t a = 0; a < plan.grid.size(); ++a)
    s += (a ? " x " : "") +
         (!plan.symbolic.empty() && plan.symbolic.gridIsExpr[a]
              ? plan.symbolic.grid[a].str(plan.symbolic.symbols)
          : plan.grid[a] == -1 ? std::string("?")
                               : std::to_string(plan.grid[a]));
  return s.empty() ? "a single step" : s;
}

std::string entryDeclaration(const std::string &entryName,
                             std::vector<std::pair<std::string, std::string>>
                                 params) {
  std::string h;
  for (auto &[decl, comment] : params)
    h += " *   " + decl.substr(decl.find_last_of(" *") + 1) + ": " + comment +
         "\n";
  h += " */\n";
  h += "pallasc_status " + entryName + "(";
  if (params.empty())
    h += "void";
  for (size_t i = 0; i < params.size(); ++i)
    h += (i ? ",\n    " : "\n    ") + params[i].first;
  h += ");\n\n";
  return h;
}

/// The images' architectures, comma-separated.
template <typename Image>
std::string archNames(const std::vector<Image> &images) {
  std::string archs;
  for (const Image &image : images)
    archs += (archs.empty() ? "" : ", ") + image.arch;
  return archs;
}

/// A GPU entry point's comment and declaration: it launches on `queue`
/// without waiting; `loading` says what was built and how the code object
/// is chosen; the stream comes last, after `params`.
std::string gpuEntryDeclaration(
    const HostCallPlan &plan, const BatchLoopProgram *batch,
    const std::string &entryName, const std::string &archs,
    const std::string &queue, const std::string &loading,
    std::vector<std::pair<std::string, std::string>> params,
    const std::string &streamComment) {
  std::string h = "/* Launches the grid (" + gridText(plan) + ") of @" +
                  plan.kernelName + " on " + queue +
                  " without waiting\n * for it. Built for " + archs + loading +
                  batchText(batch) +
                  (batch ? " * One launch per iteration, in order on the "
                           "stream.\n"
                         : "");
  params.push_back({"void *stream", streamComment});
  return h + entryDeclaration(entryName, std::move(params));
}

std::string generateHeader(const HostCallPlan &plan,
                           const BatchLoopProgram *batch,
                           const std::string &name, const std::string &sources,
                           bool cpu,
                           const std::vector<CudaArtifacts::Image> &cuda,
                           const std::vector<RocmArtifacts::Image> &rocm) {
  std::string prefix = launcherPrefix(name);
  std::string guard = "PALLASC_GENERATED_";
  for (char c : prefix)
    guard += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  guard += "_H";
  std::string h;
  h += "/* " + name + ".h: the launcher of the Pallas kernel @" +
       plan.kernelName +
       ",\n * generated by pallasc " PALLASC_VERSION_STRING " from " + sources +
       ". Do not edit.\n *\n"
       " * Link " + name + ".a and the pallasc launch runtime (CMake: "
       "pallasc::launch).\n"
       " * Every entry point returns PALLASC_OK or an error status; "
       "pallasc_last_error()\n"
       " * then says what failed. Entry points never print, exit or abort. */\n";
  h += "#ifndef " + guard + "\n#define " + guard + "\n\n";
  h += "#include <stddef.h>\n#include <stdint.h>\n\n";
  h += "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  h += "#ifndef PALLASC_STATUS_DEFINED\n#define PALLASC_STATUS_DEFINED\n";
  h += "/* The status of a pallasc launcher call (the same in every generated "
       "header). */\n";
  h += "typedef enum pallasc_status {\n";
  size_t count = 0;
  const launch::LauncherStatus *statuses = launch::launcherStatuses(count);
  for (size_t i = 0; i < count; ++i)
    h += std::string("  ") + statuses[i].name + " = " +
         std::to_string(statuses[i].value) + ", /* " + statuses[i].meaning +
         " */\n";
  h += "} pallasc_status;\n\n";
  h += "/* The message of the calling thread's last failed launcher call (\"\" "
       "if it\n * succeeded). Valid until the thread's next launcher call. */\n";
  h += "const char *pallasc_last_error(void);\n";
  h += "#endif /* PALLASC_STATUS_DEFINED */\n\n";

  auto params = entryParameters(plan, batch);
  if (cpu) {
    h += "/* Runs the grid (" + gridText(plan) + ") of @" + plan.kernelName +
         " on the host, with the semantics\n * and results of `pallasc run`. "
         "Arrays are dense, row-major, in host memory;\n * inputs are only "
         "read. 16-bit floats are passed as their bits (uint16_t).\n" +
         batchText(batch);
    h += entryDeclaration(prefix + "_cpu", params);
  }
  if (!cuda.empty())
    h += gpuEntryDeclaration(
        plan, batch, prefix + "_cuda", archNames(cuda), "a CUDA stream",
        " (cubin when ptxas ran, and PTX); the code\n * object that fits "
        "the device of the thread's current context is loaded once\n * per "
        "context (no current context: device 0's primary context is made "
        "current).\n * Arrays are dense, row-major, in device memory (TMA "
        "operands 16-byte aligned);\n * 16-bit floats as their bits "
        "(uint16_t).\n",
        params, "a CUstream (NULL: the default stream)");
  if (!rocm.empty())
    h += gpuEntryDeclaration(
        plan, batch, prefix + "_rocm", archNames(rocm), "a HIP stream",
        " (HSACO); the code object whose target fits\n * the thread's "
        "current HIP device (gcnArchName) is loaded once per device.\n"
        " * Arrays are dense, row-major, in device memory, 16-byte aligned; "
        "16-bit\n * floats as their bits (uint16_t).\n",
        params, "a hipStream_t (NULL: the default stream)");
  h += "#ifdef __cplusplus\n} /* extern \"C\" */\n#endif\n\n";
  h += "#endif /* " + guard + " */\n";
  return h;
}

/// Every definition of `m` internal (several launchers link into one
/// program).
void internalizeDefinitions(llvm::Module &m) {
  for (llvm::Function &f : m)
    if (!f.isDeclaration())
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  for (llvm::GlobalVariable &g : m.globals())
    if (!g.isDeclaration())
      g.setLinkage(llvm::GlobalValue::InternalLinkage);
}

llvm::GlobalVariable *privateConstant(llvm::Module &m, llvm::Constant *init,
                                      const std::string &name) {
  return new llvm::GlobalVariable(m, init->getType(), /*isConstant=*/true,
                                  llvm::GlobalValue::PrivateLinkage, init,
                                  name);
}

/// Stores `values` into a new stack array of `type` (null when empty).
llvm::Value *stackArray(llvm::IRBuilder<> &b, llvm::Type *type,
                        const std::vector<llvm::Value *> &values) {
  if (values.empty())
    return llvm::ConstantPointerNull::get(b.getPtrTy());
  llvm::Value *array =
      b.CreateAlloca(llvm::ArrayType::get(type, values.size()));
  for (size_t i = 0; i < values.size(); ++i)
    b.CreateStore(values[i], b.CreateConstGEP1_64(type, array, i));
  return array;
}

/// The entry point's parameter types for its dynamic bounds: i64 each, or
/// a pointer for a bound `batch` takes batched.
std::vector<llvm::Type *> boundParamTypes(llvm::LLVMContext &ctx,
                                          size_t numBounds,
                                          const BatchLoopProgram *batch) {
  std::vector<llvm::Type *> types;
  for (size_t k = 0; k < numBounds; ++k)
    types.push_back(batch && batch->boundAxes[k] == 0
                        ? static_cast<llvm::Type *>(
                              llvm::PointerType::get(ctx, 0))
                        : llvm::Type::getInt64Ty(ctx));
  return types;
}

/// What the entry point passes the runtime for its bounds (arguments
/// `first`...): without `batch`, an array of their values; with it, an
/// array of pointers (gatherGpuBatchBounds): the caller's array of a
/// batched bound, a stack slot holding an unbatched one.
llvm::Value *boundArgument(llvm::IRBuilder<> &b, llvm::Function *entry,
                           size_t first, size_t numBounds,
                           const BatchLoopProgram *batch) {
  std::vector<llvm::Value *> values;
  for (size_t k = 0; k < numBounds; ++k) {
    llvm::Value *arg = entry->getArg(first + k);
    if (batch && !arg->getType()->isPointerTy()) {
      llvm::Value *slot = b.CreateAlloca(b.getInt64Ty());
      b.CreateStore(arg, slot);
      arg = slot;
    }
    values.push_back(arg);
  }
  llvm::Type *type = batch ? static_cast<llvm::Type *>(b.getPtrTy())
                           : static_cast<llvm::Type *>(b.getInt64Ty());
  return stackArray(b, type, values);
}

/// The loop's integers (encodeGpuBatchLoop) as a constant.
llvm::Value *batchLoopConstant(llvm::Module &m, const BatchLoopProgram &batch,
                               const std::string &name, int64_t &size) {
  std::vector<int64_t> data = launch::encodeGpuBatchLoop(batch.gpuLoop());
  size = static_cast<int64_t>(data.size());
  return privateConstant(m, llvm::ConstantDataArray::get(m.getContext(), data),
                         name);
}

/// What a generated GPU entry point embeds for one architecture: its
/// launch record and its code objects (`kind` as the vendor runtime reads
/// it; `what` names the constant).
struct EmbeddedArch {
  std::string arch;
  const launch::GpuLaunchRecord *record = nullptr;
  struct Blob {
    const std::string *bytes;
    int64_t kind;
    bool nul; ///< NUL-terminated (PTX)
    const char *what;
  };
  std::vector<Blob> blobs;
};

/// Adds `entryName` to `m`: the table of pallasc_gpu_image (GpuLauncher.h),
/// one per blob of `archs` in order, each pointing at its architecture's
/// record, and the entry point calling `runSymbol` (the vendor runtime's
/// pallasc_launcher_<vendor>_run) with it. Constants are named
/// `__pallasc_<vendor>_*`.
bool addGpuEntryPoint(llvm::Module &m, const std::string &vendor,
                      const char *runSymbol, const char *runBatchSymbol,
                      const char *runSymbolicSymbol,
                      const std::string &entryName, const HostCallPlan &plan,
                      const BatchLoopProgram *batch,
                      const std::vector<EmbeddedArch> &archs,
                      std::string &error) {
  llvm::LLVMContext &ctx = m.getContext();
  internalizeDefinitions(m);
  if (m.getNamedValue(entryName)) {
    error = "the module already defines @" + entryName;
    return false;
  }
  std::string prefix = "__pallasc_" + vendor;
  llvm::Type *ptr = llvm::PointerType::get(ctx, 0);
  llvm::Type *i64 = llvm::Type::getInt64Ty(ctx);
  llvm::Type *i32 = llvm::Type::getInt32Ty(ctx);
  llvm::StructType *imageTy =
      llvm::StructType::get(ctx, {ptr, i64, ptr, i64, ptr, i64});
  std::vector<llvm::Constant *> table;
  for (size_t i = 0; i < archs.size(); ++i) {
    const EmbeddedArch &image = archs[i];
    std::string tag = prefix + "_" + std::to_string(i);
    llvm::Constant *arch = privateConstant(
        m, llvm::ConstantDataArray::getString(ctx, image.arch, true),
        tag + "_arch");
    std::string recordText = launch::encodeGpuLaunchRecord(*image.record);
    llvm::Constant *record = privateConstant(
        m, llvm::ConstantDataArray::getString(ctx, recordText, true),
        tag + "_record");
    for (const EmbeddedArch::Blob &blob : image.blobs) {
      const std::string &bytes = *blob.bytes;
      auto *data = privateConstant(
          m, llvm::ConstantDataArray::getString(ctx, bytes, blob.nul),
          tag + "_" + blob.what);
      // The loaders want code objects aligned (an ELF header).
      data->setAlignment(llvm::Align(64));
      table.push_back(llvm::ConstantStruct::get(
          imageTy, {arch, llvm::ConstantInt::get(i64, blob.kind), data,
                    llvm::ConstantInt::get(i64, bytes.size()), record,
                    llvm::ConstantInt::get(i64, recordText.size())}));
    }
  }
  llvm::GlobalVariable *tableVar = privateConstant(
      m,
      llvm::ConstantArray::get(llvm::ArrayType::get(imageTy, table.size()),
                               table),
      prefix + "_images");
  std::vector<int64_t> grid(plan.grid.begin(), plan.grid.end());
  llvm::Value *gridVar =
      grid.empty() ? static_cast<llvm::Value *>(
                         llvm::ConstantPointerNull::get(
                             llvm::cast<llvm::PointerType>(ptr)))
                   : privateConstant(
                         m, llvm::ConstantDataArray::get(ctx, grid),
                         prefix + "_grid");
  llvm::GlobalVariable *nameVar = privateConstant(
      m, llvm::ConstantDataArray::getString(ctx, entryName, true),
      prefix + "_entry_name");

  size_t numIn = plan.inputs.size(), numOut = plan.outputs.size();
  // A symbolic call's symbol values follow the bounds (as for the CPU);
  // the runtime checks them against the plan's symbolic section.
  bool symbolic = !plan.symbolic.empty();
  size_t numBounds = static_cast<size_t>(plan.numDynamicBounds()) +
                     plan.symbolic.symbols.size();
  std::vector<llvm::Type *> paramTypes(numIn + numOut, ptr);
  std::vector<llvm::Type *> boundTypes = boundParamTypes(ctx, numBounds, batch);
  paramTypes.insert(paramTypes.end(), boundTypes.begin(), boundTypes.end());
  paramTypes.push_back(ptr); // the stream
  llvm::Function *entry = llvm::Function::Create(
      llvm::FunctionType::get(i32, paramTypes, false),
      llvm::GlobalValue::ExternalLinkage, entryName, m);
  std::vector<llvm::Type *> runTypes = {ptr, ptr, i64, ptr, i64, ptr,
                                        i64, i64, ptr, i64, ptr};
  if (batch || symbolic)
    runTypes.insert(runTypes.end(), {ptr, i64});
  llvm::FunctionCallee run = m.getOrInsertFunction(
      batch ? runBatchSymbol : symbolic ? runSymbolicSymbol : runSymbol,
      llvm::FunctionType::get(i32, runTypes, false));
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
  std::vector<llvm::Value *> operands;
  for (size_t i = 0; i < numIn + numOut; ++i)
    operands.push_back(entry->getArg(i));
  std::vector<llvm::Value *> args = {
      nameVar,
      tableVar,
      llvm::ConstantInt::get(i64, table.size()),
      gridVar,
      llvm::ConstantInt::get(i64, grid.size()),
      stackArray(b, ptr, operands),
      llvm::ConstantInt::get(i64, numIn),
      llvm::ConstantInt::get(i64, numOut),
      boundArgument(b, entry, numIn + numOut, numBounds, batch),
      llvm::ConstantInt::get(i64, numBounds),
      entry->getArg(numIn + numOut + numBounds)};
  if (batch) {
    int64_t loopSize = 0;
    args.push_back(batchLoopConstant(m, *batch, prefix + "_batch_loop",
                                     loopSize));
    args.push_back(llvm::ConstantInt::get(i64, loopSize));
  } else if (symbolic) {
    // The plan's kernels are the images: every entry point index is 0.
    std::string planText =
        launch::encodeHostCallPlan(plan, [](launch::PackedFn) { return 0; });
    args.push_back(privateConstant(
        m, llvm::ConstantDataArray::getString(ctx, planText, false),
        prefix + "_plan"));
    args.push_back(llvm::ConstantInt::get(i64, planText.size()));
  }
  b.CreateRet(b.CreateCall(run, args));
  return true;
}

/// One EmbeddedArch per image of `images`: its architecture, launch record
/// and the blobs `addBlobs(image, blobs)` adds.
template <typename Image, typename AddBlobs>
std::vector<EmbeddedArch> embedded(const std::vector<Image> &images,
                                   AddBlobs addBlobs) {
  std::vector<EmbeddedArch> archs;
  for (const Image &image : images) {
    EmbeddedArch a;
    a.arch = image.arch;
    a.record = &image.record;
    addBlobs(image, a.blobs);
    archs.push_back(std::move(a));
  }
  return archs;
}

/// Per architecture, the cubin (when ptxas ran) before the PTX.
std::vector<EmbeddedArch>
cudaEmbedded(const std::vector<CudaArtifacts::Image> &images) {
  return embedded(images, [](const CudaArtifacts::Image &image, auto &blobs) {
    if (!image.cubin.empty())
      blobs.push_back({&image.cubin, launch::kCudaImageCubin, false, "cubin"});
    blobs.push_back({&image.ptx, launch::kCudaImagePtx, true, "ptx"});
  });
}

/// Per architecture, the HSACO (kind: its code object version).
std::vector<EmbeddedArch>
rocmEmbedded(const std::vector<RocmArtifacts::Image> &images) {
  return embedded(images, [](const RocmArtifacts::Image &image, auto &blobs) {
    blobs.push_back({&image.hsaco, image.codeObjectVersion, false, "hsaco"});
  });
}

/// Adds the `--target cpu` entry point to the translated module: packed
/// wrappers of `symbols`' C interfaces, the plan, and `<prefix>_cpu`. Every
/// other definition becomes internal.
bool addCpuEntryPoint(llvm::Module &m, const std::string &entryName,
                      const std::string &planText,
                      const std::vector<std::string> &symbols,
                      size_t numOperands, size_t numBounds,
                      const BatchLoopProgram *batch, std::string &error) {
  llvm::LLVMContext &ctx = m.getContext();
  internalizeDefinitions(m);
  if (m.getFunction(entryName) || m.getNamedValue(entryName)) {
    error = "the kernel module already defines @" + entryName;
    return false;
  }
  llvm::Type *ptr = llvm::PointerType::get(ctx, 0);
  llvm::Type *i64 = llvm::Type::getInt64Ty(ctx);
  llvm::Type *i32 = llvm::Type::getInt32Ty(ctx);
  llvm::FunctionType *packedTy =
      llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr}, false);

  // Packed entry points: args[i] points at argument i.
  std::vector<llvm::Constant *> table;
  for (const std::string &symbol : symbols) {
    llvm::Function *f = m.getFunction("_mlir_ciface_" + symbol);
    if (!f || f->isDeclaration() || !f->getReturnType()->isVoidTy()) {
      error = "the lowered module has no C interface for @" + symbol;
      return false;
    }
    llvm::Function *w = llvm::Function::Create(
        packedTy, llvm::GlobalValue::InternalLinkage,
        "__pallasc_packed_" + symbol, m);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", w));
    std::vector<llvm::Value *> args;
    for (llvm::Argument &a : f->args()) {
      llvm::Value *slot = b.CreateLoad(
          ptr, b.CreateConstGEP1_64(ptr, w->getArg(0), a.getArgNo()));
      args.push_back(b.CreateLoad(a.getType(), slot));
    }
    b.CreateCall(f, args);
    b.CreateRetVoid();
    table.push_back(w);
  }
  auto constant = [&](llvm::Constant *init, const std::string &gname) {
    return privateConstant(m, init, gname);
  };
  llvm::GlobalVariable *planVar = constant(
      llvm::ConstantDataArray::getString(ctx, planText, /*AddNull=*/true),
      "__pallasc_plan");
  llvm::GlobalVariable *nameVar = constant(
      llvm::ConstantDataArray::getString(ctx, entryName, true),
      "__pallasc_entry_name");
  llvm::ArrayType *tableTy = llvm::ArrayType::get(ptr, table.size());
  llvm::GlobalVariable *tableVar =
      constant(llvm::ConstantArray::get(tableTy, table), "__pallasc_functions");

  // pallasc_status <entry>(ptr operands..., i64 bounds...)
  std::vector<llvm::Type *> paramTypes(numOperands, ptr);
  std::vector<llvm::Type *> boundTypes = boundParamTypes(ctx, numBounds, batch);
  paramTypes.insert(paramTypes.end(), boundTypes.begin(), boundTypes.end());
  llvm::Function *entry = llvm::Function::Create(
      llvm::FunctionType::get(i32, paramTypes, false),
      llvm::GlobalValue::ExternalLinkage, entryName, m);
  std::vector<llvm::Type *> runTypes = {ptr, ptr, i64, ptr, i64,
                                        ptr, i64, ptr, i64};
  if (batch)
    runTypes.insert(runTypes.end(), {ptr, i64});
  llvm::FunctionCallee run = m.getOrInsertFunction(
      batch ? launch::kCpuRunBatchSymbol : launch::kCpuRunSymbol,
      llvm::FunctionType::get(i32, runTypes, false));
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
  std::vector<llvm::Value *> operandValues;
  for (size_t i = 0; i < numOperands; ++i)
    operandValues.push_back(entry->getArg(i));
  llvm::Value *operands = stackArray(b, ptr, operandValues);
  std::vector<llvm::Value *> args = {
      nameVar,
      planVar,
      llvm::ConstantInt::get(i64, planText.size()),
      tableVar,
      llvm::ConstantInt::get(i64, table.size()),
      operands,
      llvm::ConstantInt::get(i64, numOperands),
      boundArgument(b, entry, numOperands, numBounds, batch),
      llvm::ConstantInt::get(i64, numBounds)};
  if (batch) {
    int64_t loopSize = 0;
    args.push_back(
        batchLoopConstant(m, *batch, "__pallasc_batch_loop", loopSize));
    args.push_back(llvm::ConstantInt::get(i64, loopSize));
  }
  b.CreateRet(b.CreateCall(run, args));
  return true;
}

/// `objects`: (member name, object) pairs.
bool writeArchive(const std::vector<std::pair<std::string, std::string>> &objects,
                  std::string &archive, std::string &error) {
  std::vector<llvm::NewArchiveMember> members;
  for (const auto &[memberName, object] : objects) {
    members.emplace_back(llvm::MemoryBufferRef(object, memberName));
    members.back().MemberName = memberName;
  }
  auto buffer = llvm::writeArchiveToBuffer(
      members, llvm::SymtabWritingMode::NormalSymtab,
      llvm::object::Archive::K_GNU, /*Deterministic=*/true, /*Thin=*/false,
      [&](llvm::Error e) { llvm::consumeError(std::move(e)); });
  if (!buffer) {
    error = llvm::toString(buffer.takeError());
    return false;
  }
  archive = (*buffer)->getBuffer().str();
  return true;
}

} // namespace

std::string launcherPrefix(const std::string &name) {
  std::string s = name;
  for (char &c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      c = '_';
  return s;
}

LogicalResult
emitLaunchers(ModuleOp module, const std::string &name,
              const std::string &sources, bool wantHeader, bool wantLibrary,
              bool cpu, const std::vector<CudaArtifacts::Image> &cudaImages,
              const std::vector<RocmArtifacts::Image> &rocmImages,
              LauncherFiles &files) {
  Step step("launcher");
  auto fail = [&](const std::string &message) {
    logError("error: --emit=" + std::string(wantLibrary ? "lib" : "header") +
             ": " + message);
    return failure();
  };
  OwningOpRef<ModuleOp> copy = module.clone();
  HostCallPlan plan;
  std::string error;
  // vmap's batch loop around one call runs as the GPU runners run it: the
  // call's grid once per iteration, on slice b of the batched operands.
  std::optional<BatchLoopProgram> loop;
  // A Mosaic GPU kernel has no pallas.call: planLaunch plans its whole
  // operands over the mesh's grid.
  if (!pallas_mgpu::hasMosaicGpuOps(*copy) && !runtime::isDirectCall(*copy)) {
    if (!runtime::isBatchLoop(*copy))
      return fail("the call's wrapper holds more than one pallas.call on its "
                  "arguments (reshapes or broadcasts around the call, e.g. "
                  "vmap's axis_size 1 or a broadcast of an aliased input), "
                  "which generated launchers do not run; they run a single "
                  "call or vmap's batch loop around one; `pallasc run` runs "
                  "this on the CPU");
    loop.emplace();
    if (!runtime::planBatchLoop(*copy, *loop, error))
      return fail("cannot generate a launcher for this batch loop: " + error);
    plan = loop->call;
  } else if (!runtime::planLaunch(*copy, plan, error)) {
    return fail(error);
  }
  const BatchLoopProgram *batch = loop ? &*loop : nullptr;
  if (plan.eliminated)
    return fail("the call was eliminated by pallas-dce (none of its outputs "
                "is used): there is nothing to launch");
  if (wantHeader)
    files.header =
        generateHeader(plan, batch, name, sources, cpu, cudaImages,
                       rocmImages);
  if (!wantLibrary)
    return success();

  std::vector<std::pair<std::string, std::string>> members;
  // The GPU entry points: no host code of the kernel, an empty module
  // augmented with the images and the call into the vendor runtime.
  auto addGpu = [&](const std::string &vendor, const char *runSymbol,
                    const char *runBatchSymbol, const char *runSymbolicSymbol,
                    const std::vector<EmbeddedArch> &archs) {
    OwningOpRef<ModuleOp> empty =
        ModuleOp::create(UnknownLoc::get(module.getContext()));
    std::string object;
    if (!runtime::emitHostObject(
            *empty, object, error, [&](llvm::Module &m, std::string &e) {
              return addGpuEntryPoint(m, vendor, runSymbol, runBatchSymbol,
                                      runSymbolicSymbol,
                                      launcherPrefix(name) + "_" + vendor,
                                      plan, batch, archs, e);
            }))
      return false;
    members.push_back({name + "." + vendor + ".o", std::move(object)});
    return true;
  };
  if (!cudaImages.empty() &&
      !addGpu("cuda", launch::kCudaRunSymbol, launch::kCudaRunBatchSymbol,
              launch::kCudaRunSymbolicSymbol, cudaEmbedded(cudaImages)))
    return fail("(cuda) " + error);
  if (!rocmImages.empty() &&
      !addGpu("rocm", launch::kRocmRunSymbol, launch::kRocmRunBatchSymbol,
              launch::kRocmRunSymbolicSymbol, rocmEmbedded(rocmImages)))
    return fail("(rocm) " + error);
  if (cpu) {
    // The plan, with the entry points as indices into the table.
    std::vector<std::string> symbols;
    auto lookup = [&](const std::string &symbol, std::string &) {
      symbols.push_back(symbol);
      return reinterpret_cast<launch::PackedFn>(
          static_cast<uintptr_t>(symbols.size()));
    };
    launch::HostCallPlan host = plan;
    if (!launch::resolveEntryPoints(host, lookup, error))
      return fail("(cpu) " + error);
    std::string planText = launch::encodeHostCallPlan(
        host, [](launch::PackedFn f) {
          return static_cast<size_t>(reinterpret_cast<uintptr_t>(f)) - 1;
        });

    // The loop runs in the runtime (pallasc_launcher_cpu_run_batch); the
    // pipeline drops @main (the wrapper holding the call) as for a direct
    // call.
    if (failed(runtime::lowerForHost(*copy)))
      return failure();
    std::string object;
    size_t numOperands = plan.inputs.size() + plan.outputs.size();
    // A symbolic call's symbol values follow the bounds.
    size_t numBounds = static_cast<size_t>(plan.numDynamicBounds()) +
                       plan.symbolic.symbols.size();
    std::string entryName = launcherPrefix(name) + "_cpu";
    if (!runtime::emitHostObject(
            *copy, object, error, [&](llvm::Module &m, std::string &e) {
              return addCpuEntryPoint(m, entryName, planText, symbols,
                                      numOperands, numBounds, batch, e);
            }))
      return fail("(cpu) " + error);
    // The member name of earlier versions (one member).
    members.push_back({name + ".launcher.o", std::move(object)});
  }
  if (!writeArchive(members, files.library, error))
    return fail("cannot write the archive: " + error);
  return success();
}

} // namespace pallasc
