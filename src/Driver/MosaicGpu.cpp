//===- MosaicGpu.cpp - Mosaic GPU kernels in the driver --------*- C++ -*-===//

#include "src/Driver/MosaicGpu.h"

#include "src/Driver/Diagnostics.h"
#include "src/Driver/Driver.h"
#include "src/Spec/SpecToIR.h"

#include "dialects/PallasMGPU/IR/MgpuDialect.h"
#include "passes/Conversion/PallasMGPUToGPU/TargetSupport.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace pallasc {

namespace {

pallas_mgpu::KernelOp findKernel(ModuleOp module, llvm::StringRef name) {
  for (auto k : module.getOps<pallas_mgpu::KernelOp>())
    if (name.empty() || k.getSymName() == name)
      return k;
  return nullptr;
}

std::string shapeText(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

/// The array type an argument of the kernel holds (a memref in global
/// memory) as the manifest and the launcher describe operands.
RankedTensorType arrayType(Type t) {
  auto m = cast<MemRefType>(t);
  return RankedTensorType::get(m.getShape(), m.getElementType());
}

} // namespace

LogicalResult checkMosaicGpuTargets(ModuleOp module,
                                    const DriverOptions &options) {
  if (!pallas_mgpu::hasMosaicGpuOps(module))
    return success();
  for (const std::string &t : options.targets)
    if (failed(pallas_mgpu::checkMosaicGpuTarget(module, t)))
      return failure();
  if (!options.symbolShapes || !options.runTarget.empty())
    return success();
  // pallasc run without --target: the CPU.
  Operation *kernel = findKernel(module, "");
  if (!kernel)
    module.walk([&](Operation *op) {
      if (!kernel && op->getDialect() &&
          op->getDialect()->getNamespace() == "pallas_mgpu")
        kernel = op;
    });
  kernel->emitError()
      << "'" << kernel->getName()
      << "' is a Mosaic GPU (plgpu.kernel) op: pallasc run runs it with "
         "--target cuda:sm_90a --emulate (on this machine's CPU threads) or "
         "--target cuda:sm_90a (on an H100), not on the CPU";
  return failure();
}

LogicalResult checkMosaicGpuSpec(ModuleOp module, const spec::GridSpec &spec,
                                 const DriverOptions &options) {
  std::vector<spec::SpecError> errors;
  auto error = [&](const std::string &path, const std::string &message) {
    errors.push_back({path, message});
  };
  pallas_mgpu::KernelOp kernel = findKernel(module, spec.kernel);
  if (!kernel) {
    error("kernel", spec::noKernelMessage<pallas_mgpu::KernelOp>(
                        module, "pallas_mgpu.kernel", spec.kernel));
    reportSpecErrors(options.specPath, errors);
    return failure();
  }
  const char *why = " (a Mosaic GPU kernel takes whole arrays in global "
                    "memory)";
  llvm::ArrayRef<Type> args = kernel.getArgumentTypes();
  int64_t numOutputs = kernel.getNumOutputs();
  int64_t numInputs = static_cast<int64_t>(args.size()) - numOutputs;
  auto checkArrays = [&](const std::vector<spec::ArraySpec> &arrays,
                         llvm::ArrayRef<Type> types, const char *what) {
    if (arrays.size() != types.size()) {
      error(what, std::string("has ") + std::to_string(arrays.size()) +
                      " entries but the kernel @" + spec.kernel.c_str() +
                      " takes " + std::to_string(types.size()) + " " + what);
      return;
    }
    for (auto [a, t] : llvm::zip(arrays, types)) {
      auto m = cast<MemRefType>(t);
      std::string dtype = spec::typeToDtype(m.getElementType());
      if (a.isHi())
        error(a.path, "is a hi aggregate, which a Mosaic GPU kernel does "
                      "not take");
      else if (a.shape != std::vector<int64_t>(m.getShape()) ||
               a.dtype != dtype)
        error(a.path, "is " + a.dtype + shapeText(a.shape) +
                          " but the kernel's argument is " + dtype +
                          shapeText(m.getShape()));
    }
  };
  checkArrays(spec.inputs, args.take_front(numInputs), "inputs");
  checkArrays(spec.outputs, args.drop_front(numInputs), "outputs");
  if (spec.grid != std::vector<int64_t>(kernel.getGrid()))
    error("grid", "is " + shapeText(spec.grid) + " but the kernel's mesh has "
                  "the grid " + shapeText(kernel.getGrid()));
  auto checkBlocks = [&](const std::vector<spec::BlockSpec> &specs) {
    for (const spec::BlockSpec &b : specs) {
      // `any` has no block shape nor index map (the spec parser says so).
      if (b.memorySpace != spec::MemorySpace::Any)
        error(b.path + ".memory_space",
              std::string("is '") + spec::memorySpaceName(b.memorySpace) +
                  "'; a Mosaic GPU kernel's operands are 'any'" + why);
    }
  };
  checkBlocks(spec.inSpecs);
  checkBlocks(spec.outSpecs);
  if (spec.numScalarPrefetch)
    error("num_scalar_prefetch", "is not supported for a Mosaic GPU kernel");
  if (!spec.scratchShapes.empty())
    error("scratch_shapes", "is not supported for a Mosaic GPU kernel (its "
                            "scratch is allocated in the kernel: "
                            "pallas_mgpu.alloc_smem)");
  if (!spec.inputOutputAliases.empty())
    error("input_output_aliases", "is not supported for a Mosaic GPU kernel "
                                  "yet");
  if (!spec.transforms.empty())
    error(spec.transforms.front().path.empty()
              ? std::string("transforms")
              : spec.transforms.front().path,
          "the call-level transforms (vmap, jvp, dce, discharge_state, "
          "hi_to_lo) are not supported for a Mosaic GPU kernel");
  if (errors.empty())
    return success();
  reportSpecErrors(options.specPath, errors);
  return failure();
}

std::optional<ManifestMosaicGpuCall>
mosaicGpuManifestCall(ModuleOp module, const spec::GridSpec &spec) {
  pallas_mgpu::KernelOp kernel = findKernel(module, spec.kernel);
  if (!kernel)
    return std::nullopt;
  ManifestMosaicGpuCall call;
  call.kernel = kernel.getSymName().str();
  call.grid.assign(kernel.getGrid().begin(), kernel.getGrid().end());
  call.cluster.assign(kernel.getCluster().begin(), kernel.getCluster().end());
  for (Attribute a : kernel.getGridNames())
    call.gridNames.push_back(cast<StringAttr>(a).str());
  for (Attribute a : kernel.getClusterNames())
    call.clusterNames.push_back(cast<StringAttr>(a).str());
  call.numThreads = kernel.getNumThreads();
  if (auto name = kernel.getThreadName())
    call.threadName = name->str();
  llvm::ArrayRef<Type> args = kernel.getArgumentTypes();
  size_t numInputs = args.size() - kernel.getNumOutputs();
  for (auto [i, t] : llvm::enumerate(args))
    (i < numInputs ? call.inputs : call.outputs).push_back(arrayType(t));
  call.metadata = spec.metadata;
  return call;
}

} // namespace pallasc
