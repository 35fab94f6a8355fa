//===- CudaKernelTest.cpp - The CUDA launch path on a fake driver -*- C++ -*-===//
//
// Every step of launching a kernel through the launch library, against the
// fake driver table of FakeCudaDriver.h: the calls made, their arguments,
// and the status (code, driver result, message) of each failure.
//
//===----------------------------------------------------------------------===//

#include "test/Launch/FakeCudaDriver.h"

#include "src/Launch/CudaKernel.h"

#include <catch2/catch.hpp>

#include <optional>

using namespace pallasc::launch;
using pallasc::test::FakeCuda;

namespace {

GpuLaunchRecord twoPointerRecord() {
  GpuLaunchRecord r;
  r.entry = "add";
  r.gridAxes[0] = {0};
  r.block[0] = 256;
  GpuKernelParam in, out;
  in.kind = out.kind = GpuKernelParam::Kind::Pointer;
  out.isOutput = true;
  r.params = {in, out};
  return r;
}

GpuTensorMap bf16Map() {
  GpuTensorMap m;
  m.input = 1;
  m.bf16 = true;
  m.globalShape[0] = 512; // rows
  m.globalShape[1] = 256; // columns
  m.boxShape[0] = 64;
  m.boxShape[1] = 64;
  return m;
}

/// `s` is a failure with `error` and `message` (and with `driverResult`,
/// the driver's result, when given).
void checkFailed(const GpuStatus &s, GpuError error, const std::string &message,
                 std::optional<int> driverResult = std::nullopt) {
  CHECK(s.error == error);
  if (driverResult)
    CHECK(s.driverResult == *driverResult);
  CHECK(s.message == message);
}

/// A test's fake driver, the table acting on it, and a kernel to load.
struct Driver {
  FakeCuda fake;
  CudaDriverApi api = fake.api();
  CudaKernel kernel;
};

} // namespace

TEST_CASE_METHOD(Driver,
                 "cuda launch: loading a kernel, with and without the shared "
                 "memory opt-in",
                 "[launch][cuda]") {
  REQUIRE(loadCudaKernel(api, "ptx", "PTX", "add", 48 * 1024, kernel));
  CHECK(kernel.function != nullptr);
  CHECK(fake.count("cuFuncSetAttribute") == 0);

  REQUIRE(loadCudaKernel(api, "ptx", "PTX", "add", 100000, kernel));
  CHECK(fake.count("cuFuncSetAttribute") == 1);
  CHECK(fake.funcAttribute == cuda::kFuncAttrMaxDynamicSharedSizeBytes);
  CHECK(fake.funcAttributeValue == 100000);
}

TEST_CASE_METHOD(Driver,
                 "cuda launch: a shared memory limit, a code object or a "
                 "kernel the driver refuses",
                 "[launch][cuda]") {
  struct Refusal {
    const char *entryPoint; ///< the fake driver call that fails
    int result;             ///< with this result
    const char *image, *format, *kernelName;
    int64_t sharedBytes;
    GpuError error;
    const char *message;
    std::optional<int> driverResult; ///< checked when given
  };
  const Refusal refusals[] = {
      {"cuFuncSetAttribute", 1, "ptx", "PTX", "add", 300000,
       GpuError::SharedMemoryTooLarge,
       "the kernel needs 300000 bytes of shared memory, more than this GPU "
       "allows: CUDA_ERROR_FAKE (1)",
       1},
      {"cuModuleLoadDataEx", 218, "ptx", "PTX", "add", 0, GpuError::LoadFailed,
       "the CUDA driver cannot load the PTX: CUDA_ERROR_FAKE (218)\nptxas "
       "fatal: fake",
       218},
      {"cuModuleGetFunction", 500, "cubin", "cubin", "nope", 0,
       GpuError::KernelNotFound,
       "no kernel named 'nope' in the cubin: CUDA_ERROR_FAKE (500)",
       std::nullopt},
  };
  for (const Refusal &r : refusals) {
    INFO(r.entryPoint);
    fake.fail.clear();
    fake.fail[r.entryPoint] = r.result;
    checkFailed(loadCudaKernel(api, r.image, r.format, r.kernelName,
                               r.sharedBytes, kernel),
                r.error, r.message, r.driverResult);
  }
}

TEST_CASE_METHOD(Driver, "cuda launch: tensor-map encoding", "[launch][cuda]") {
  CudaTensorMapImage image;
  REQUIRE(encodeCudaTensorMap(api, bf16Map(), 0x7f0000, image));
  // Innermost dimension first; the row stride in bytes.
  CHECK(fake.encode.dataType == cuda::kTensorMapDataTypeBFloat16);
  CHECK(fake.encode.rank == 2);
  CHECK(fake.encode.address == 0x7f0000);
  CHECK(fake.encode.dim[0] == 256);
  CHECK(fake.encode.dim[1] == 512);
  CHECK(fake.encode.stride == 512);
  CHECK(fake.encode.box[0] == 64);
  CHECK(fake.encode.box[1] == 64);
  CHECK(fake.encode.elementStrides[0] == 1);
  CHECK(fake.encode.elementStrides[1] == 1);
  CHECK(fake.encode.interleave == cuda::kTensorMapInterleaveNone);
  CHECK(fake.encode.swizzle == cuda::kTensorMapSwizzle128B);
  CHECK(fake.encode.l2 == cuda::kTensorMapL2Promotion128B);
  CHECK(fake.encode.oob == cuda::kTensorMapFloatOobFillNone);
  CHECK(image.bytes[0] == 0xab);

  GpuTensorMap f16 = bf16Map();
  f16.bf16 = false;
  REQUIRE(encodeCudaTensorMap(api, f16, 0x7f0000, image));
  CHECK(fake.encode.dataType == cuda::kTensorMapDataTypeFloat16);
}

TEST_CASE("cuda launch: a tensor map of rank 4", "[launch][cuda]") {
  // attention_mgpu's [batch, seq, heads, head_dim] operands, boxes of one
  // batch and head: dimensions innermost first, strides of the outer ones.
  GpuTensorMap m;
  m.rank = 4;
  int64_t shape[4] = {2, 128, 3, 64}, box[4] = {1, 64, 1, 64};
  for (int d = 0; d < 4; ++d) {
    m.globalShape[d] = shape[d];
    m.boxShape[d] = box[d];
  }
  CudaTensorMapEncoding e = cudaTensorMapEncoding(m, 0x7f0000);
  CHECK(e.rank == 4);
  CHECK(e.globalDim[0] == 64);
  CHECK(e.globalDim[1] == 3);
  CHECK(e.globalDim[2] == 128);
  CHECK(e.globalDim[3] == 2);
  CHECK(e.globalStrides[0] == 64 * 2);
  CHECK(e.globalStrides[1] == 3 * 64 * 2);
  CHECK(e.globalStrides[2] == 128 * 3 * 64 * 2);
  CHECK(e.boxDim[0] == 64);
  CHECK(e.boxDim[1] == 1);
  CHECK(e.boxDim[2] == 64);
  CHECK(e.boxDim[3] == 1);
  CHECK(e.elementStrides[3] == 1);
}

TEST_CASE_METHOD(Driver,
                 "cuda launch: tensor maps of misaligned or rejected arrays",
                 "[launch][cuda]") {
  CudaTensorMapImage image;
  GpuStatus s = encodeCudaTensorMap(api, bf16Map(), 0x7f0008, image);
  checkFailed(s, GpuError::Misaligned,
              "the tensor map of inputs[1] needs a 16-byte aligned "
              "address (TMA), got 8323080");
  CHECK(fake.count("cuTensorMapEncodeTiled") == 0);

  fake.fail["cuTensorMapEncodeTiled"] = 1;
  s = encodeCudaTensorMap(api, bf16Map(), 0x7f0000, image);
  checkFailed(s, GpuError::TensorMapFailed,
              "cannot encode a tensor map: CUDA_ERROR_FAKE (1)");
}

TEST_CASE_METHOD(Driver,
                 "cuda launch: the launch passes the geometry and arguments",
                 "[launch][cuda]") {
  REQUIRE(loadCudaKernel(api, "ptx", "PTX", "add", 0, kernel));
  GpuLaunchRecord r = twoPointerRecord();
  r.dynamicSharedBytes = 4096;
  GpuLaunchGeometry g;
  REQUIRE(computeLaunchGeometry(r, {40}, g));
  GpuKernelArgs args;
  REQUIRE(args.pack(r, {0x1000}, {0x2000}, {40}, {}));
  int stream;
  REQUIRE(launchCudaKernel(api, kernel, g, args, &stream));
  REQUIRE(fake.launches.size() == 1);
  const FakeCuda::Launch &l = fake.launches[0];
  CHECK(l.grid[0] == 40);
  CHECK(l.grid[1] == 1);
  CHECK(l.grid[2] == 1);
  CHECK(l.block[0] == 256);
  CHECK(l.shared == 4096);
  CHECK(l.stream == &stream);
  CHECK(l.params == args.data());
  CHECK(*static_cast<uint64_t *>(l.params[1]) == 0x2000);

  // No blocks: nothing is launched.
  REQUIRE(computeLaunchGeometry(r, {0}, g));
  REQUIRE(launchCudaKernel(api, kernel, g, args));
  CHECK(fake.launches.size() == 1);

  REQUIRE(computeLaunchGeometry(r, {40}, g));
  fake.fail["cuLaunchKernel"] = 701;
  GpuStatus s = launchCudaKernel(api, kernel, g, args);
  checkFailed(s, GpuError::LaunchFailed,
              "kernel launch failed: CUDA_ERROR_FAKE (701)", 701);
}

TEST_CASE_METHOD(Driver, "cuda device: opening, and machines without a device",
                 "[launch][cuda]") {
  std::unique_ptr<CudaDevice> dev;
  REQUIRE(CudaDevice::open(api, 0, dev));
  CHECK(dev->arch() == "sm_90");
  CHECK(dev->name() == "Fake H100");
  CHECK(fake.contextRetained);
  dev.reset();
  CHECK_FALSE(fake.contextRetained);

  fake.deviceCount = 0;
  GpuStatus s = CudaDevice::open(api, 0, dev);
  checkFailed(s, GpuError::NoDevice, "no CUDA device is available (0 devices)");

  fake.deviceCount = 2;
  s = CudaDevice::open(api, 2, dev);
  checkFailed(s, GpuError::InvalidDevice,
              "CUDA device 2 does not exist (2 found)");

  fake.fail["cuInit"] = 100;
  s = CudaDevice::open(api, 0, dev);
  checkFailed(s, GpuError::NoDevice,
              "no CUDA device is available (CUDA_ERROR_FAKE (100))", 100);

  fake.fail.clear();
  fake.fail["cuCtxSetCurrent"] = 1;
  s = CudaDevice::open(api, 1, dev);
  checkFailed(s, GpuError::DeviceSetup, "cannot set up CUDA device 1");
  CHECK_FALSE(dev);
  // The context retained before the failure was released.
  CHECK_FALSE(fake.contextRetained);
}

TEST_CASE_METHOD(Driver, "cuda device: memory, tensor maps, launch and timing",
                 "[launch][cuda]") {
  std::unique_ptr<CudaDevice> dev;
  REQUIRE(CudaDevice::open(api, 0, dev));
  REQUIRE(dev->load("ptx", "add", 64 * 1024));
  CHECK(fake.funcAttributeValue == 64 * 1024);
  uint64_t a, b;
  REQUIRE(dev->alloc(1000, a));
  REQUIRE(dev->alloc(0, b));
  float host[4] = {1, 2, 3, 4};
  REQUIRE(dev->upload(a, host, sizeof host));
  REQUIRE(fake.uploads.size() == 1);
  CHECK(fake.uploads[0].first == a);
  CHECK(fake.uploads[0].second.size() == sizeof host);
  // Tensor maps are encoded and copied to device memory.
  uint64_t map;
  REQUIRE(dev->tensorMap(bf16Map(), a, map));
  CHECK(fake.encode.address == a);
  REQUIRE(fake.uploads.size() == 2);
  CHECK(fake.uploads[1].first == map);
  CHECK(fake.uploads[1].second.size() == 128);

  GpuLaunchRecord r = twoPointerRecord();
  GpuLaunchGeometry g;
  REQUIRE(computeLaunchGeometry(r, {8}, g));
  GpuKernelArgs args;
  REQUIRE(args.pack(r, {a}, {b}, {8}, {}));
  REQUIRE(dev->launch(g, args));
  CHECK(fake.count("cuCtxSynchronize") == 1);
  double ms = -1;
  REQUIRE(dev->timeLaunches(g, args, 4, ms));
  CHECK(ms == Approx(2.5));
  CHECK(fake.launches.size() == 1 + 1 + 4);

  fake.fail["cuCtxSynchronize"] = 700;
  GpuStatus s = dev->launch(g, args);
  checkFailed(s, GpuError::KernelFailed,
              "the kernel failed: CUDA_ERROR_FAKE (700)");

  fake.fail["cuMemAlloc"] = 2;
  s = dev->alloc(1 << 20, a);
  checkFailed(s, GpuError::OutOfMemory,
              "cannot allocate 1048576 bytes on the GPU: "
              "CUDA_ERROR_OUT_OF_MEMORY (2)");
  fake.fail["cuMemcpyDtoH"] = 1;
  s = dev->download(host, b, sizeof host);
  checkFailed(s, GpuError::CopyFailed,
              "copy from the GPU failed: CUDA_ERROR_FAKE (1)");

  // Closing the device frees what it allocated.
  CHECK(fake.live.size() == 3);
  dev.reset();
  CHECK(fake.live.empty());
  CHECK(fake.count("cuModuleUnload") == 1);
}

TEST_CASE("cuda driver: loading libcuda on this machine", "[launch][cuda]") {
  CudaDriverApi api;
  GpuStatus s = loadCudaDriverApi(api);
  if (s) {
    CHECK(api.cuLaunchKernel != nullptr);
    CHECK(api.cuTensorMapEncodeTiled != nullptr);
    return;
  }
  // Without an NVIDIA driver (CI): a clear status, nothing bound.
  CHECK((s.error == GpuError::DriverNotFound ||
         s.error == GpuError::DriverTooOld));
  CHECK(s.message.find("libcuda.so.1") != std::string::npos);
  CHECK(api.cuInit == nullptr);
}
