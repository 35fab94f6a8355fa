//===- GpuEmulator.cpp - Run a distributed GPU kernel on CPU threads -*- C++ -*-===//

#include "src/Runtime/GpuEmulator/GpuEmulator.h"
#include "src/Runtime/GpuEmulator/HostKernel.h"
#include "src/Runtime/GpuEmulator/Intrinsics.h"
#include "src/Runtime/GpuEmulator/Scheduler.h"
#include "src/Runtime/HostCode.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <functional>
#include <sys/mman.h>
#include <vector>

using namespace mlir;

namespace pallasc::runtime {

namespace emulator {
std::vector<EmulatorSymbol> emulatorSymbols() {
  std::vector<EmulatorSymbol> symbols;
  addThreadIntrinsics(symbols);
  addMatrixIntrinsics(symbols);
  addTmaIntrinsics(symbols);
  return symbols;
}
} // namespace emulator

using namespace emulator;

namespace {

/// A memref descriptor for a static-shape, row-major buffer.
std::vector<int64_t> descriptor(void *data, ArrayRef<int64_t> shape) {
  std::vector<int64_t> d = {reinterpret_cast<int64_t>(data),
                            reinterpret_cast<int64_t>(data), 0};
  for (int64_t s : shape)
    d.push_back(s);
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    strides[i - 1] = strides[i] * shape[i];
  for (int64_t s : strides)
    d.push_back(s);
  return d;
}

} // namespace

struct EmulatedGpuKernel::Impl {
  launch::GpuLaunchRecord record;
  SmallVector<SmallVector<int64_t>> paramShapes;
  std::unique_ptr<JitModule> jit;
  PackedFn kernel = nullptr;
  /// The cluster shape compiled into the kernel (nvvm.cluster_dim).
  int64_t cluster[3] = {1, 1, 1};
};

EmulatedGpuKernel::EmulatedGpuKernel(std::unique_ptr<Impl> impl)
    : impl(std::move(impl)) {}
EmulatedGpuKernel::~EmulatedGpuKernel() = default;

std::unique_ptr<EmulatedGpuKernel>
EmulatedGpuKernel::compile(ModuleOp module,
                           const launch::GpuLaunchRecord &record,
                           std::string &error, JitObjectCache *objects) {
  auto impl = std::make_unique<Impl>();
  impl->record = record;
  module.walk([&](mlir::gpu::GPUFuncOp f) {
    for (Type t : f.getArgumentTypes())
      if (auto m = dyn_cast<MemRefType>(t))
        impl->paramShapes.emplace_back(m.getShape());
    if (auto c = f->getAttrOfType<DenseI32ArrayAttr>(
            NVVM::NVVMDialect::getClusterDimAttrName()))
      for (auto [i, n] : llvm::enumerate(c.asArrayRef()))
        if (i < 3)
          impl->cluster[i] = n;
  });
  int warpSize = static_cast<int>(record.warpSize);
  if (warpSize != 32 && warpSize != 64) {
    error = "the emulator runs 32- or 64-thread warps, not " +
            std::to_string(record.warpSize);
    return nullptr;
  }
  JitOptions jitOptions;
  // What the CPU runner's kernels call too (bf16 truncation, ...), and the
  // intrinsics.
  std::vector<EmulatorSymbol> symbols = emulatorSymbols();
  for (const EmulatorSymbol &s : symbols)
    jitOptions.extraSymbols.push_back({s.name, s.address});
  jitOptions.optimize = [](llvm::Module &m, llvm::TargetMachine &) {
    return makeOptimizingTransformer(2, 0, nullptr)(&m);
  };
  jitOptions.codeGenOptLevel = llvm::CodeGenOptLevel::Default;
  std::unique_ptr<JitModule> jit;
  if (objects)
    jit = JitModule::loadCached(*objects, jitOptions);
  if (!jit) {
    if (failed(buildHostKernel(module, error)))
      return nullptr;
    if (failed(lowerHostKernel(module))) {
      error = "cannot lower the kernel for the host";
      return nullptr;
    }
    std::string object;
    jit = JitModule::create(module, error, jitOptions,
                            objects ? &object : nullptr);
    if (!jit) {
      error = "cannot JIT the emulated kernel: " + error;
      return nullptr;
    }
    if (objects && !object.empty())
      objects->store(object);
  }
  impl->kernel = jit->lookupCInterface("pallasc_emu_kernel", error);
  if (!impl->kernel) {
    error = "the emulated kernel has no entry: " + error;
    return nullptr;
  }
  impl->jit = std::move(jit);
  return std::unique_ptr<EmulatedGpuKernel>(
      new EmulatedGpuKernel(std::move(impl)));
}

bool EmulatedGpuKernel::run(ArrayRef<void *> buffers,
                            ArrayRef<int32_t> scalars, const int64_t grid[3],
                            std::string &error, bool reversed) {
  const launch::GpuLaunchRecord &record = impl->record;
  int64_t threads = record.block[0];
  int64_t smemBytes = record.dynamicSharedBytes;
  int warpSize = static_cast<int>(record.warpSize);
  if (impl->paramShapes.size() != buffers.size()) {
    error = "the kernel takes " + std::to_string(impl->paramShapes.size()) +
            " arrays, " + std::to_string(buffers.size()) + " were given";
    return false;
  }
  PackedFn kernel = impl->kernel;

  // Shared memory below 2 GiB: the lowering computes 32-bit shared
  // addresses (ldmatrix) from it. Aligned to 2^18 bytes: a wgmma matrix
  // descriptor keeps address bits 4..17, the offset into it. One per block
  // of a cluster (they run together), 2^18-byte aligned each.
  size_t smemSize = std::max<int64_t>(16, (smemBytes + 4095) / 4096 * 4096);
  constexpr size_t kSmemAlign = size_t(1) << 18;
  int64_t clusterBlocks =
      impl->cluster[0] * impl->cluster[1] * impl->cluster[2];
  size_t smemStride = (smemSize + kSmemAlign - 1) / kSmemAlign * kSmemAlign;
  size_t mapSize = smemStride * clusterBlocks + kSmemAlign;
  void *mapping = mmap(nullptr, mapSize, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
  if (mapping == MAP_FAILED) {
    error = "cannot map the emulated shared memory";
    return false;
  }
  void *smem = reinterpret_cast<void *>(
      (reinterpret_cast<uintptr_t>(mapping) + kSmemAlign - 1) &
      ~(kSmemAlign - 1));

  // Packed arguments: descriptors for arrays, values for scalars, then the
  // shared memory descriptor.
  std::vector<std::vector<int64_t>> descs;
  for (auto [p, shape] : llvm::zip(buffers, impl->paramShapes))
    descs.push_back(descriptor(p, shape));
  std::vector<void *> descPtrs;
  for (auto &d : descs)
    descPtrs.push_back(d.data());
  std::vector<int32_t> scalarValues(scalars.begin(), scalars.end());
  std::vector<void *> packed;
  for (void *&p : descPtrs)
    packed.push_back(&p);
  for (int32_t &s : scalarValues)
    packed.push_back(&s);
  // Tensor maps: the emulator's description of each (the launch record's).
  // The arrays are the inputs, then the outputs (a TMA store's tensor map
  // is over an output).
  size_t numInputs = 0;
  for (const launch::GpuKernelParam &p : record.params)
    if (p.kind == launch::GpuKernelParam::Kind::Pointer && !p.isOutput)
      ++numInputs;
  std::vector<EmuTensorMap> maps;
  for (const launch::GpuKernelParam &p : record.params) {
    if (p.kind != launch::GpuKernelParam::Kind::TensorMap)
      continue;
    size_t array = p.tensorMap.input + (p.tensorMap.isOutput ? numInputs : 0);
    if (array >= buffers.size()) {
      error = "a tensor-map parameter of the launch record is malformed";
      return false;
    }
    EmuTensorMap m;
    m.base = static_cast<char *>(buffers[array]);
    m.rank = p.tensorMap.rank;
    for (int d = 0; d < m.rank; ++d) {
      m.dims[d] = p.tensorMap.globalShape[d];
      m.box[d] = p.tensorMap.boxShape[d];
    }
    maps.push_back(m);
  }
  std::vector<void *> mapPtrs;
  for (EmuTensorMap &m : maps)
    mapPtrs.push_back(&m);
  for (void *&p : mapPtrs)
    packed.push_back(&p);
  // Each block of a cluster: the same arguments, its own shared memory.
  std::vector<char *> smems;
  std::vector<std::vector<int64_t>> smemDescs;
  for (int64_t r = 0; r < clusterBlocks; ++r) {
    smems.push_back(static_cast<char *>(smem) + r * smemStride);
    smemDescs.push_back(
        descriptor(smems.back(), {static_cast<int64_t>(smemSize)}));
  }
  std::vector<void *> smemPtrs;
  for (auto &d : smemDescs)
    smemPtrs.push_back(d.data());
  std::vector<std::vector<void *>> blockPacked(clusterBlocks, packed);
  std::vector<void **> blockArgs;
  for (int64_t r = 0; r < clusterBlocks; ++r) {
    blockPacked[r].push_back(&smemPtrs[r]);
    blockArgs.push_back(blockPacked[r].data());
  }

  bool ok = runGrid(kernel, blockArgs, grid, impl->cluster, threads,
                    warpSize, smems, smemSize, error, reversed);
  munmap(mapping, mapSize);
  return ok;
}

bool emulateGpuKernel(ModuleOp module, const launch::GpuLaunchRecord &record,
                      ArrayRef<void *> buffers, ArrayRef<int32_t> scalars,
                      const int64_t grid[3], std::string &error,
                      JitObjectCache *objects) {
  // The counts are checked before the (slow) compile.
  size_t numParams = 0;
  module.walk([&](mlir::gpu::GPUFuncOp f) {
    for (Type t : f.getArgumentTypes())
      numParams += isa<MemRefType>(t);
  });
  if (numParams != buffers.size() &&
      (record.warpSize == 32 || record.warpSize == 64)) {
    error = "the kernel takes " + std::to_string(numParams) + " arrays, " +
            std::to_string(buffers.size()) + " were given";
    return false;
  }
  std::unique_ptr<EmulatedGpuKernel> kernel =
      EmulatedGpuKernel::compile(module, record, error, objects);
  return kernel && kernel->run(buffers, scalars, grid, error);
}

} // namespace pallasc::runtime
