//===- CudaLauncherTest.cpp - Generated CUDA launchers on a fake driver -*- C++ -*-===//
//
// pallasc_launcher_cuda_run (what every generated `<name>_cuda` calls) over
// images and launch records built here, against the fake driver table of
// FakeCudaDriver.h: the image chosen per compute capability, loading once
// per context, the launch's geometry, arguments, stream and tensor maps, and
// the status and message of each failure (no driver, no device, no fitting
// architecture, a misaligned TMA operand, a refused launch).
//
//===----------------------------------------------------------------------===//

#include "test/Launch/FakeCudaDriver.h"
#include "test/Launch/LauncherTestSupport.h"

#include "src/Launch/CudaLauncher.h"
#include "src/Launch/GpuLaunchArgs.h"
#include "src/Launch/HostGrid.h"
#include "src/Launch/HostPlanCodec.h"
#include "src/Launch/Launcher.h"

#include <catch2/catch.hpp>

#include <cstring>

using namespace pallasc::launch;
using namespace pallasc::test;

namespace {

/// A two-pointer kernel over a dynamic 1-D grid, 256 threads, 64 KiB of
/// dynamic shared memory (past the opt-in).
GpuLaunchRecord addRecord() { return twoPointerRecord(32, 64 * 1024); }

/// The record with a TMA tensor map over input 0 appended (over output 0
/// with `output`: a TMA store's).
GpuLaunchRecord tmaRecord(bool output = false) {
  GpuLaunchRecord r = addRecord();
  GpuKernelParam map;
  map.kind = GpuKernelParam::Kind::TensorMap;
  map.tensorMap.input = 0;
  map.tensorMap.isOutput = output;
  map.tensorMap.bf16 = true;
  map.tensorMap.globalShape[0] = 128;
  map.tensorMap.globalShape[1] = 64;
  map.tensorMap.boxShape[0] = 64;
  map.tensorMap.boxShape[1] = 64;
  r.params.push_back(map);
  return r;
}

/// Images as a generated library holds them.
struct Images : LauncherImages {
  void add(const char *arch, int64_t kind, const GpuLaunchRecord &record) {
    LauncherImages::add(arch, kind, "image", record);
  }
};

/// One sm_90a cubin of `record`, its pointer alignment set to `alignment`.
Images cubinAligned(GpuLaunchRecord record, int64_t alignment) {
  record.pointerAlignment = alignment;
  Images images;
  images.add("sm_90a", kCudaImageCubin, record);
  return images;
}

/// add_cuda's message for a pointer `operand` of the sm_90a cubin at
/// `address`, not a multiple of `alignment` (`iteration`: the batch loop's
/// "batch iteration B of N: ").
std::string misaligned(const std::string &operand, int alignment,
                       uint64_t address, const std::string &iteration = "") {
  return "add_cuda: cuda, cubin sm_90a, @add: " + iteration + operand +
         " needs a " + std::to_string(alignment) +
         "-byte aligned address (the kernel's pointer_alignment), got " +
         std::to_string(address);
}

/// The fake installed as the launchers' driver for one test.
using Installed = InstalledApi<CudaDriverApi, setCudaLauncherDriverForTesting>;

/// The generated `add_cuda`.
const TwoPointerEntry add{"add_cuda", pallasc_launcher_cuda_run,
                          pallasc_launcher_cuda_run_batch};

/// A test's fake, installed as the launchers', and its images.
struct Launcher {
  FakeCuda fake;
  Installed installed{fake};
  Images images;
  int stream = 0; ///< its address: the stream a test passes
};

} // namespace

TEST_CASE("cuda launcher: the launch record round-trips as text",
          "[launch][cuda][launcher]") {
  GpuLaunchRecord r = tmaRecord();
  r.gridAxes[1] = {1, 2};
  GpuLaunchRecord back;
  std::string error;
  REQUIRE(decodeGpuLaunchRecord(encodeGpuLaunchRecord(r), back, error));
  CHECK(encodeGpuLaunchRecord(back) == encodeGpuLaunchRecord(r));
  CHECK(back.entry == "add");
  CHECK(back.gridAxes[1] == std::vector<int64_t>{1, 2});
  CHECK(back.dynamicSharedBytes == 64 * 1024);
  REQUIRE(back.params.size() == 4);
  CHECK(back.params[1].isOutput);
  CHECK(back.params[2].kind == GpuKernelParam::Kind::GridBound);
  CHECK(back.params[3].tensorMap.bf16);
  CHECK(back.params[3].tensorMap.globalShape[0] == 128);
  CHECK_FALSE(back.params[3].tensorMap.isOutput);
  // A tensor map over an output (a TMA store's) is written "TO".
  GpuLaunchRecord store = tmaRecord(true);
  CHECK(encodeGpuLaunchRecord(store).find(" TO 0 1 128 64 64 64 ") !=
        std::string::npos);
  REQUIRE(decodeGpuLaunchRecord(encodeGpuLaunchRecord(store), back, error));
  CHECK(back.params[3].tensorMap.isOutput);
  CHECK(encodeGpuLaunchRecord(back) == encodeGpuLaunchRecord(store));
  // Another rank than 2 is written "TR" ("TRO" over an output), the rank,
  // then the shapes.
  GpuTensorMap &four = store.params[3].tensorMap;
  four.rank = 4;
  int64_t shape[4] = {2, 128, 3, 64}, box[4] = {1, 64, 1, 64};
  for (int d = 0; d < 4; ++d) {
    four.globalShape[d] = shape[d];
    four.boxShape[d] = box[d];
  }
  CHECK(encodeGpuLaunchRecord(store).find(
            " TRO 4 0 1 2 128 3 64 1 64 1 64 ") != std::string::npos);
  REQUIRE(decodeGpuLaunchRecord(encodeGpuLaunchRecord(store), back, error));
  CHECK(back.params[3].tensorMap.rank == 4);
  CHECK(back.params[3].tensorMap.isOutput);
  CHECK(back.params[3].tensorMap.globalShape[2] == 3);
  CHECK(encodeGpuLaunchRecord(back) == encodeGpuLaunchRecord(store));
  CHECK_FALSE(decodeGpuLaunchRecord("pallasc-gpu-record-1 add 0 0 0 256 1 1 "
                                    "32 0 1 TR 6 0 1",
                                    back, error));
  CHECK(error == "the embedded launch record is malformed (parameter 0)");

  CHECK(back.pointerAlignment == 16);
  // A symbol parameter (a symbolic call's) round-trips too.
  GpuLaunchRecord withSymbol = r;
  GpuKernelParam sym;
  sym.kind = GpuKernelParam::Kind::Symbol;
  sym.index = 2;
  withSymbol.params.insert(withSymbol.params.begin() + 3, sym);
  REQUIRE(decodeGpuLaunchRecord(encodeGpuLaunchRecord(withSymbol), back,
                                error));
  REQUIRE(back.params.size() == 5);
  CHECK(back.params[3].kind == GpuKernelParam::Kind::Symbol);
  CHECK(back.params[3].index == 2);
  // The pointer alignment is embedded ("A n" last); a record without it
  // gets the default, one that is not a power of two is refused.
  std::string text = encodeGpuLaunchRecord(r);
  REQUIRE(text.size() > 5);
  CHECK(text.substr(text.size() - 5) == " A 16");
  r.pointerAlignment = 64;
  REQUIRE(decodeGpuLaunchRecord(encodeGpuLaunchRecord(r), back, error));
  CHECK(back.pointerAlignment == 64);
  REQUIRE(decodeGpuLaunchRecord(text.substr(0, text.size() - 5), back, error));
  CHECK(back.pointerAlignment == 16);
  CHECK_FALSE(decodeGpuLaunchRecord(text.substr(0, text.size() - 2) + "12",
                                    back, error));
  CHECK(error == "the embedded launch record is malformed (pointer alignment)");

  CHECK_FALSE(decodeGpuLaunchRecord("pallasc-gpu-record-1 add 99999999", back,
                                    error));
  CHECK(error == "the embedded launch record is malformed (grid axes)");
  CHECK_FALSE(decodeGpuLaunchRecord(encodeGpuLaunchRecord(r) + " x", back,
                                    error));
  CHECK(error == "the embedded launch record is malformed (trailing 'x')");
}

TEST_CASE("cuda launcher: the image for each compute capability",
          "[launch][cuda][launcher]") {
  GpuLaunchRecord r = addRecord();
  Images images;
  images.add("sm_90a", kCudaImageCubin, r); // 0
  images.add("sm_90a", kCudaImagePtx, r);   // 1
  images.add("sm_80", kCudaImageCubin, r);  // 2
  images.add("sm_80", kCudaImagePtx, r);    // 3
  const pallasc_cuda_image *t = images.data();
  CHECK(selectCudaImage(t, 4, 9, 0) == 0);  // H100: the sm_90a cubin
  CHECK(selectCudaImage(t, 4, 8, 0) == 2);  // A100: the sm_80 cubin
  CHECK(selectCudaImage(t, 4, 8, 6) == 2);  // sm_86 runs sm_80 cubins
  CHECK(selectCudaImage(t, 4, 10, 0) == 3); // sm_100: sm_80 PTX, JIT
  CHECK(selectCudaImage(t, 4, 7, 5) == -1); // older than every image
  CHECK(selectCudaImage(t, 2, 10, 0) == -1); // sm_90a runs on sm_90 alone
  CHECK(selectCudaImage(t + 1, 1, 9, 0) == 0);
}

TEST_CASE_METHOD(Launcher,
                 "cuda launcher: a launch in the current context, loaded once",
                 "[launch][cuda][launcher]") {
  fake.copyParams = 3;
  static int context;
  fake.currentContext = &context;
  images.add("sm_90a", kCudaImageCubin, addRecord());
  images.add("sm_90a", kCudaImagePtx, addRecord());
  REQUIRE(add.run(images, address(0x1000), address(0x2000), 7, &stream) ==
          kLauncherOk);
  CHECK(std::string(pallasc_last_error()).empty());
  REQUIRE(fake.launches.size() == 1);
  const FakeCuda::Launch &l = fake.launches[0];
  CHECK(l.grid[0] == 7);
  CHECK(l.block[0] == 256);
  CHECK(l.shared == 64 * 1024);
  CHECK(l.stream == &stream);
  const std::vector<uint64_t> &params = fake.launchedParams[0];
  CHECK(params[0] == 0x1000);
  CHECK(params[1] == 0x2000);
  CHECK(static_cast<uint32_t>(params[2]) == 7);
  // The >48 KiB opt-in, in the caller's context (no primary context).
  CHECK(fake.funcAttributeValue == 64 * 1024);
  CHECK(fake.count("cuDevicePrimaryCtxRetain") == 0);
  CHECK(fake.count("cuCtxSynchronize") == 0); // asynchronous

  REQUIRE(add.run(images, address(0x1000), address(0x2000), 3) == kLauncherOk);
  CHECK(fake.count("cuModuleLoadDataEx") == 1);
  CHECK(fake.launches.size() == 2);
  // Another context (at the same address as a destroyed one): loaded again.
  fake.contextGeneration = 1;
  REQUIRE(add.run(images, address(0x1000), address(0x2000), 3) == kLauncherOk);
  CHECK(fake.count("cuModuleLoadDataEx") == 2);
}

TEST_CASE("cuda launcher: a symbolic call's symbol, checked, and its grid "
          "expression", "[launch][cuda][launcher]") {
  // The kernel of a symbolic call: the grid bound, then the symbol n.
  GpuLaunchRecord r = addRecord();
  GpuKernelParam sym;
  sym.kind = GpuKernelParam::Kind::Symbol;
  r.params.push_back(sym);
  // Its plan: f32[n] in and out, grid cdiv(n, 8), n a multiple of 2.
  HostCallPlan plan;
  plan.kernelName = "k";
  plan.grid = {-1};
  plan.inputs = {HostArrayType{ElementType::F32, {-1}}};
  plan.outputs = plan.inputs;
  HostBlockMapping m;
  m.blockShape = {8};
  m.kinds = {HostBlockMapping::Kind::Blocked};
  m.padLow = m.padHigh = {0};
  plan.inMappings = plan.outMappings = {m};
  plan.kernelWrites = {false};
  HostSymbol n;
  n.name = "n";
  n.multipleOf = 2;
  makeSymbolicRows(plan, n, 8);
  std::string text = encodeHostCallPlan(plan, [](PackedFn) { return 0; });

  FakeCuda fake;
  fake.copyParams = 4;
  static int context;
  fake.currentContext = &context;
  Installed installed(fake);
  Images images;
  images.add("sm_90a", kCudaImagePtx, r);
  int64_t grid[] = {-1};
  void *operands[] = {address(0x1000), address(0x2000)};
  auto launch = [&](int64_t value) {
    return pallasc_launcher_cuda_run_symbolic(
        "k_cuda", images.data(), 1, grid, 1, operands, 1, 1, &value, 1,
        nullptr, text.data(), static_cast<int64_t>(text.size()));
  };
  int status = launch(42);
  INFO(pallasc_last_error());
  REQUIRE(status == kLauncherOk);
  REQUIRE(fake.launches.size() == 1);
  CHECK(fake.launches[0].grid[0] == 6);
  CHECK(static_cast<uint32_t>(fake.launchedParams[0][2]) == 6);
  CHECK(static_cast<uint32_t>(fake.launchedParams[0][3]) == 42);
  // A value breaking a constraint: nothing launches.
  CHECK(launch(7) == kLauncherInvalidArgument);
  CHECK(std::string(pallasc_last_error()) ==
        "k_cuda: n = 7 is not a multiple of 2");
  CHECK(fake.launches.size() == 1);
}

TEST_CASE_METHOD(
    Launcher,
    "cuda launcher: without a current context, device 0's primary one",
    "[launch][cuda][launcher]") {
  images.add("sm_90a", kCudaImagePtx, addRecord());
  REQUIRE(add.run(images, address(0x1000), address(0x2000), 1) == kLauncherOk);
  CHECK(fake.count("cuDevicePrimaryCtxRetain") == 1);
  CHECK(fake.currentContext != nullptr);
}

TEST_CASE("cuda launcher: no driver, no device", "[launch][cuda][launcher]") {
  // This machine's real driver, when it has none: NO_DRIVER with dlopen's
  // reason. (With a driver the call gets further; only check the form.)
  {
    Images images;
    images.add("sm_90a", kCudaImagePtx, addRecord());
    add.checkRealApi(images, "add_cuda: cuda: cannot load the CUDA driver "
                             "(libcuda.so.1): ");
  }
  FakeCuda fake;
  fake.fail["cuInit"] = 100;
  Installed installed(fake);
  Images images;
  images.add("sm_90a", kCudaImagePtx, addRecord());
  add.checkFails(
      images, 0x1000, 0x2000, 1, kLauncherNoDevice,
      "add_cuda: cuda: the CUDA driver cannot initialize (CUDA_ERROR_FAKE "
      "(100))");
  fake.fail.clear();
  fake.deviceCount = 0;
  add.checkFails(images, 0x1000, 0x2000, 1, kLauncherNoDevice,
                 "add_cuda: cuda: no CUDA device is available (0 devices)");
  CHECK(fake.launches.empty());
}

TEST_CASE_METHOD(Launcher,
                 "cuda launcher: no embedded architecture fits the device",
                 "[launch][cuda][launcher]") {
  fake.major = 8;
  fake.minor = 6;
  images.add("sm_90a", kCudaImageCubin, addRecord());
  images.add("sm_90a", kCudaImagePtx, addRecord());
  add.checkFails(
      images, 0x1000, 0x2000, 1, kLauncherNoFittingArch,
      "add_cuda: cuda: no embedded code object runs on this device (compute "
      "capability 8.6, sm_86); embedded: cubin sm_90a, PTX sm_90a; compile "
      "with --target cuda:sm_86 (or an older architecture, as PTX)");
  CHECK(fake.count("cuModuleLoadDataEx") == 0);
}

TEST_CASE_METHOD(Launcher,
                 "cuda launcher: load failure names the image and the device",
                 "[launch][cuda][launcher]") {
  fake.fail["cuModuleLoadDataEx"] = 218;
  images.add("sm_90a", kCudaImagePtx, addRecord());
  add.checkFails(
      images, 0x1000, 0x2000, 1, kLauncherLoadFailed,
      "add_cuda: cuda, PTX sm_90a on sm_90: the CUDA driver cannot load "
      "the PTX: CUDA_ERROR_FAKE (218)\nptxas fatal: fake");
}

TEST_CASE_METHOD(Launcher,
                 "cuda launcher: TMA tensor maps, and a misaligned operand",
                 "[launch][cuda][launcher]") {
  fake.copyParams = 4;
  images.add("sm_90a", kCudaImageCubin, tmaRecord());
  REQUIRE(add.run(images, address(0x1000), address(0x2000), 2, &stream) ==
          kLauncherOk);
  // Encoded over input 0, uploaded, passed, freed: all on the stream.
  CHECK(fake.encode.address == 0x1000);
  CHECK(fake.encode.dim[0] == 64);
  CHECK(fake.encode.dim[1] == 128);
  REQUIRE(fake.uploads.size() == 1);
  CHECK(fake.uploads[0].second.size() == 128);
  REQUIRE(fake.launches.size() == 1);
  CHECK(fake.launchedParams[0][3] == fake.uploads[0].first);
  CHECK(fake.asyncFrees == std::vector<CUdeviceptr>{fake.uploads[0].first});
  CHECK(fake.live.empty());
  for (void *s : fake.asyncStreams)
    CHECK(s == &stream);

  // Input 0 is a pointer parameter too: the pointer check refuses it first.
  add.checkFails(images, 0x1008, 0x2000, 2, kLauncherMisaligned,
                 misaligned("inputs[0]", 16, 4104));
  CHECK(fake.launches.size() == 1);
  // A record asking less of its pointers still gets TMA's 16 bytes.
  Images loose = cubinAligned(tmaRecord(), 8);
  add.checkFails(
      loose, 0x1008, 0x2000, 2, kLauncherMisaligned,
      "add_cuda: cuda, cubin sm_90a, @add: the tensor map of inputs[0] "
      "needs a 16-byte aligned address (TMA), got 4104");
  CHECK(fake.launches.size() == 1);

  // A TMA store's tensor map is encoded over its output.
  Images stores;
  stores.add("sm_90a", kCudaImageCubin, tmaRecord(true));
  REQUIRE(add.run(stores, address(0x1000), address(0x2000), 2, &stream) ==
          kLauncherOk);
  CHECK(fake.encode.address == 0x2000);
  CHECK(fake.launches.size() == 2);
  Images looseStores = cubinAligned(tmaRecord(true), 8);
  add.checkFails(looseStores, 0x1000, 0x2008, 2, kLauncherMisaligned,
                 "add_cuda: cuda, cubin sm_90a, @add: the tensor map of "
                 "outputs[0] needs a 16-byte aligned address (TMA), got 8200");
}

TEST_CASE_METHOD(Launcher,
                 "cuda launcher: every pointer operand is checked against the "
                 "record's alignment",
                 "[launch][cuda][launcher]") {
  images.add("sm_90a", kCudaImageCubin, addRecord());
  REQUIRE(add.run(images, address(0x1010), address(0x2030), 2) == kLauncherOk);
  REQUIRE(fake.launches.size() == 1);
  // An input and an output off by 8 and 4 bytes: refused before launching,
  // naming the kernel, the operand, its address and the alignment.
  add.checkFails(images, 0x1008, 0x2000, 2, kLauncherMisaligned,
                 misaligned("inputs[0]", 16, 4104));
  add.checkFails(images, 0x1000, 0x2004, 2, kLauncherMisaligned,
                 misaligned("outputs[0]", 16, 8196));
  CHECK(fake.launches.size() == 1);
  // The alignment is the record's: 64 refuses what 16 accepts.
  Images strict = cubinAligned(addRecord(), 64);
  add.checkFails(strict, 0x1010, 0x2000, 2, kLauncherMisaligned,
                 misaligned("inputs[0]", 64, 4112));
  CHECK(fake.launches.size() == 1);
}

TEST_CASE_METHOD(Launcher, "cuda launcher: a refused launch, a bad bound",
                 "[launch][cuda][launcher]") {
  images.add("sm_90a", kCudaImageCubin, tmaRecord());
  fake.fail["cuLaunchKernel"] = 701;
  add.checkFails(images, 0x1000, 0x2000, 2, kLauncherLaunchFailed,
                 "add_cuda: cuda, cubin sm_90a, @add: kernel launch failed: "
                 "CUDA_ERROR_FAKE (701)");
  // The tensor maps are freed on the failure path too.
  CHECK(fake.live.empty());
  fake.fail.clear();
  add.checkFails(
      images, 0x1000, 0x2000, -1, kLauncherInvalidArgument,
      "add_cuda: dynamic grid bound 0 is -1; bounds must be in [0, 2^31)");
}

TEST_CASE_METHOD(Launcher,
                 "cuda launcher: vmap's batch loop, one launch per iteration",
                 "[launch][cuda][launcher]") {
  fake.copyParams = 3;
  images.add("sm_90a", kCudaImageCubin, addRecord());
  // A batched bound: iteration b launches bounds[b] blocks on slice b.
  int64_t bounds[] = {4, 16, 9};
  REQUIRE(add.runBatch(images, address(0x10000), address(0x80000), bounds,
                       twoPointerLoop(3, 0x400, 0x1000, true),
                       &stream) == kLauncherOk);
  CHECK(std::string(pallasc_last_error()).empty());
  REQUIRE(fake.launches.size() == 3);
  for (int b = 0; b < 3; ++b) {
    INFO("iteration " << b);
    CHECK(fake.launches[b].grid[0] == bounds[b]);
    CHECK(fake.launches[b].stream == &stream);
    const std::vector<uint64_t> &params = fake.launchedParams[b];
    CHECK(params[0] == static_cast<uint64_t>(0x10000 + b * 0x400));
    CHECK(params[1] == static_cast<uint64_t>(0x80000 + b * 0x1000));
    CHECK(static_cast<uint32_t>(params[2]) == bounds[b]);
  }
  CHECK(fake.count("cuModuleLoadDataEx") == 1);

  // An unbatched input (stride 0) and bound: the same every iteration.
  int64_t one = 5;
  REQUIRE(add.runBatch(images, address(0x10000), address(0x80000), &one,
                       twoPointerLoop(2, 0, 0x1000, false)) == kLauncherOk);
  REQUIRE(fake.launches.size() == 5);
  CHECK(fake.launchedParams[3][0] == 0x10000);
  CHECK(fake.launchedParams[4][0] == 0x10000);
  CHECK(fake.launchedParams[4][1] == 0x81000);
  CHECK(fake.launches[4].grid[0] == 5);
}

TEST_CASE_METHOD(Launcher,
                 "cuda launcher: a batch loop's tensor maps are encoded per "
                 "iteration",
                 "[launch][cuda][launcher]") {
  fake.copyParams = 4;
  images.add("sm_90a", kCudaImageCubin, tmaRecord());
  int64_t bound = 2;
  REQUIRE(add.runBatch(images, address(0x10000), address(0x80000), &bound,
                       twoPointerLoop(3, 0x4000, 0x1000, false)) ==
          kLauncherOk);
  REQUIRE(fake.launches.size() == 3);
  CHECK(fake.encodedAddresses ==
        std::vector<uint64_t>{0x10000, 0x14000, 0x18000});
  // Each launch gets its own uploaded map, freed after it.
  REQUIRE(fake.uploads.size() == 3);
  for (int b = 0; b < 3; ++b)
    CHECK(fake.launchedParams[b][3] == fake.uploads[b].first);
  CHECK(fake.asyncFrees.size() == 3);
  CHECK(fake.live.empty());

  // A slice stride that leaves iteration 1's slice misaligned: the status,
  // and the iteration named; every slice is checked before the first
  // launch, so nothing launched.
  add.checkBatchFails(
      images, &bound, twoPointerLoop(3, 0x4008, 0x1000, false),
      kLauncherMisaligned,
      misaligned("inputs[0]", 16, 0x14008, "batch iteration 1 of 3: "));
  CHECK(fake.launches.size() == 3);
  // Past the pointer alignment (a record asking 8), the encode-time TMA
  // check still names the iteration; iteration 0 was launched.
  Images loose = cubinAligned(tmaRecord(), 8);
  add.checkBatchFails(
      loose, &bound, twoPointerLoop(3, 0x4008, 0x1000, false),
      kLauncherMisaligned,
      "add_cuda: cuda, cubin sm_90a, @add: batch iteration 1 of 3: the "
      "tensor map of inputs[0] needs a 16-byte aligned address (TMA), got " +
          std::to_string(0x14008));
  CHECK(fake.launches.size() == 4);
}

TEST_CASE_METHOD(Launcher,
                 "cuda launcher: a batch loop's slices are checked against the "
                 "pointer alignment before the first launch",
                 "[launch][cuda][launcher]") {
  images.add("sm_90a", kCudaImageCubin, addRecord());
  int64_t bounds[] = {4, 16, 9};
  // Output slices 0x1008 bytes apart: slice 0 is aligned, slice 1 is not.
  add.checkBatchFails(
      images, bounds, twoPointerLoop(3, 0x400, 0x1008, true),
      kLauncherMisaligned,
      misaligned("outputs[0]", 16, 0x81008, "batch iteration 1 of 3: "));
  CHECK(fake.launches.empty());
  // Slices a multiple of 16 apart launch (and a batched array's base is
  // checked as iteration 0's slice).
  REQUIRE(add.runBatch(images, address(0x10000), address(0x80000), bounds,
                       twoPointerLoop(3, 0x400, 0x1010, true)) == kLauncherOk);
  CHECK(fake.launches.size() == 3);
  add.checkBatchFails(
      images, bounds, twoPointerLoop(3, 0x400, 0x1010, true),
      kLauncherMisaligned,
      misaligned("inputs[0]", 16, 0x10004, "batch iteration 0 of 3: "),
      0x10004);
  CHECK(fake.launches.size() == 3);
}

TEST_CASE_METHOD(Launcher,
                 "cuda launcher: a batch loop's failures name the iteration",
                 "[launch][cuda][launcher]") {
  fake.copyParams = 3;
  images.add("sm_90a", kCudaImageCubin, addRecord());
  int64_t bounds[] = {4, 16, 9, 1};
  // The third launch fails: two launched, the status and the iteration.
  fake.fail["cuLaunchKernel"] = 701;
  fake.failAfter["cuLaunchKernel"] = 2;
  add.checkBatchFails(
      images, bounds, twoPointerLoop(4, 0x400, 0x1000, true),
      kLauncherLaunchFailed,
      "add_cuda: cuda, cubin sm_90a, @add: batch iteration 2 of 4: kernel "
      "launch failed: CUDA_ERROR_FAKE (701)");
  CHECK(fake.launches.size() == 3);
  fake.fail.clear();

  // A bound out of range in one iteration: nothing launches.
  int64_t bad[] = {4, -16, 9};
  add.checkBatchFails(
      images, bad, twoPointerLoop(3, 0x400, 0x1000, true),
      kLauncherInvalidArgument,
      "add_cuda: dynamic grid bound 0 is -16 in batch iteration 1 of 3; "
      "bounds must be in [0, 2^31)");
  CHECK(fake.launches.size() == 3);
  // A null batched bound; a loop that does not fit the call.
  add.checkBatchFails(
      images, nullptr, twoPointerLoop(3, 0x400, 0x1000, true),
      kLauncherInvalidArgument,
      "add_cuda: batched grid bound 0 (3 values, one per batch iteration) "
      "is a null pointer");
  std::vector<int64_t> shortLoop = {3, 0x400};
  add.checkBatchFails(
      images, bounds, shortLoop, kLauncherInvalidPlan,
      "add_cuda: the embedded batch loop has 2 values; a call of 1 inputs, "
      "1 outputs and 1 dynamic bounds takes 4");
  CHECK(fake.launches.size() == 3);
}
