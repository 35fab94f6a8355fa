//===- HipLauncherTest.cpp - Generated ROCm launchers on a fake runtime -*- C++ -*-===//
//
// pallasc_launcher_rocm_run (what every generated `<name>_rocm` calls) over
// images and launch records built here, against the fake HIP runtime of
// FakeHipRuntime.h: the image chosen per gcnArchName, loading once per
// device, the launch's geometry, arguments and stream, the LDS attribute,
// and the status and message of each failure (no runtime, no device, no
// fitting architecture, a load failure, a refused launch).
//
//===----------------------------------------------------------------------===//

#include "test/Launch/FakeHipRuntime.h"
#include "test/Launch/LauncherTestSupport.h"

#include "src/Launch/GpuLaunchArgs.h"
#include "src/Launch/HipLauncher.h"
#include "src/Launch/Launcher.h"

#include <catch2/catch.hpp>

using namespace pallasc::launch;
using namespace pallasc::test;

namespace {

/// Two pointers over a dynamic 1-D grid, 256 threads (four wavefronts),
/// `lds` bytes of dynamic LDS.
GpuLaunchRecord addRecord(int64_t lds = 20 * 1024) {
  return twoPointerRecord(64, lds);
}

/// Images as a generated library holds them (kind: the code object
/// version; the code object is the arch's name).
struct Images : LauncherImages {
  void add(const char *arch, const GpuLaunchRecord &record, int64_t cov = 5) {
    LauncherImages::add(arch, cov, arch, record);
  }
};

/// The fake installed as the launchers' runtime for one test.
using Installed = InstalledApi<HipRuntimeApi, setRocmLauncherRuntimeForTesting>;

/// The generated `add_rocm`.
const TwoPointerEntry add{"add_rocm", pallasc_launcher_rocm_run,
                          pallasc_launcher_rocm_run_batch};

/// A test's fake, installed as the launchers', and its images.
struct Launcher {
  FakeHip fake;
  Installed installed{fake};
  Images images;
  int stream = 0; ///< its address: the stream a test passes
};

} // namespace

TEST_CASE("rocm launcher: target IDs and the image for each device",
          "[launch][rocm][launcher]") {
  AmdTargetId id;
  REQUIRE(parseAmdTargetId("gfx90a:sramecc+:xnack-", id));
  CHECK(id.processor == "gfx90a");
  REQUIRE(id.features.size() == 2);
  CHECK(id.features[0] == std::make_pair(std::string("sramecc"), true));
  CHECK(id.features[1] == std::make_pair(std::string("xnack"), false));
  CHECK_FALSE(parseAmdTargetId("sm_90a", id));
  CHECK_FALSE(parseAmdTargetId("gfx942:xnack", id));
  CHECK_FALSE(parseAmdTargetId("", id));

  GpuLaunchRecord r = addRecord();
  Images images;
  images.add("gfx942", r);        // 0
  images.add("gfx90a", r);        // 1
  images.add("gfx90a:xnack-", r); // 2
  const pallasc_gpu_image *t = images.data();
  // The base arch before the features decides; no features means "any".
  CHECK(selectRocmImage(t, 2, "gfx942:sramecc+:xnack-") == 0);
  CHECK(selectRocmImage(t, 2, "gfx942") == 0);
  CHECK(selectRocmImage(t, 2, "gfx90a:sramecc-:xnack+") == 1);
  // The image that names the device's xnack setting is the more specific.
  CHECK(selectRocmImage(t, 3, "gfx90a:sramecc+:xnack-") == 2);
  CHECK(selectRocmImage(t, 3, "gfx90a:sramecc+:xnack+") == 1);
  CHECK(selectRocmImage(t + 2, 1, "gfx90a:xnack+") == -1);
  // No code object runs across processors.
  CHECK(selectRocmImage(t, 3, "gfx950") == -1);
  CHECK(selectRocmImage(t, 3, "gfx940:sramecc+:xnack-") == -1);
  CHECK(selectRocmImage(t, 3, "") == -1);
}

TEST_CASE_METHOD(
    Launcher,
    "rocm launcher: a launch on the current device, loaded once per "
    "device",
    "[launch][rocm][launcher]") {
  fake.copyParams = 3;
  fake.deviceCount = 2;
  fake.archNames = {"gfx942:sramecc+:xnack-", "gfx90a:sramecc+:xnack-"};
  images.add("gfx942", addRecord());
  images.add("gfx90a", addRecord());
  REQUIRE(add.run(images, address(0x1000), address(0x2000), 7, &stream) ==
          kLauncherOk);
  CHECK(std::string(pallasc_last_error()).empty());
  REQUIRE(fake.launches.size() == 1);
  const FakeHip::Launch &l = fake.launches[0];
  CHECK(l.grid[0] == 7);
  CHECK(l.grid[1] == 1);
  CHECK(l.block[0] == 256);
  CHECK(l.shared == 20 * 1024);
  CHECK(l.stream == &stream);
  // The manifest's parameter order: in0, out0, the bound as i32.
  CHECK(l.params[0] == 0x1000);
  CHECK(l.params[1] == 0x2000);
  CHECK(static_cast<uint32_t>(l.params[2]) == 7);
  // 20 KiB of LDS needs no attribute; gfx942's image on device 0.
  CHECK(fake.count("hipFuncSetAttribute") == 0);
  REQUIRE(fake.loads.size() == 1);
  CHECK(fake.loads[0].first == images.table[0].data);

  REQUIRE(add.run(images, address(0x1000), address(0x2000), 3, nullptr) ==
          kLauncherOk);
  CHECK(fake.count("hipModuleLoadData") == 1);
  CHECK(fake.count("hipGetDeviceProperties") == 1);
  CHECK(fake.launches.back().stream == nullptr);
  // Device 1 (hipSetDevice): its own module, the gfx90a image.
  fake.currentDevice = 1;
  REQUIRE(add.run(images, address(0x1000), address(0x2000), 3) == kLauncherOk);
  REQUIRE(fake.loads.size() == 2);
  CHECK(fake.loads[1].first == images.table[1].data);
  CHECK(fake.loads[1].second == 1);
  fake.currentDevice = 0;
  REQUIRE(add.run(images, address(0x1000), address(0x2000), 3) == kLauncherOk);
  CHECK(fake.count("hipModuleLoadData") == 2);
  CHECK(fake.launches.size() == 4);
}

TEST_CASE_METHOD(Launcher,
                 "rocm launcher: the dynamic LDS attribute past 64 KiB",
                 "[launch][rocm][launcher]") {
  fake.archNames = {"gfx950:sramecc+:xnack-"};
  images.add("gfx950", addRecord(96 * 1024));
  REQUIRE(add.run(images, address(0x1000), address(0x2000), 1) == kLauncherOk);
  CHECK(fake.attributeFunction == &pallasc::test::fakehip::function);
  CHECK(fake.funcAttribute == hip::kFuncAttributeMaxDynamicSharedMemorySize);
  CHECK(fake.funcAttributeValue == 96 * 1024);
  CHECK(fake.launches.at(0).shared == 96 * 1024);

  setRocmLauncherRuntimeForTesting(&installed.api); // forget the module
  fake.fail["hipFuncSetAttribute"] = 1;
  add.checkFails(
      images, 0x1000, 0x2000, 1, kLauncherLoadFailed,
      "add_rocm: rocm, HSACO gfx950 on gfx950:sramecc+:xnack-: the kernel "
      "needs 98304 bytes of LDS, more than this GPU allows: hipErrorFake "
      "(1)");
  CHECK(fake.launches.size() == 1);
}

TEST_CASE("rocm launcher: no runtime, no device", "[launch][rocm][launcher]") {
  // This machine's real runtime, when it has none: NO_DRIVER with dlopen's
  // reason. (With ROCm the call gets further; only check the form.)
  {
    Images images;
    images.add("gfx942", addRecord());
    add.checkRealApi(images, "add_rocm: rocm: cannot load the HIP runtime "
                             "(libamdhip64.so): ");
  }
  FakeHip fake;
  fake.fail["hipInit"] = 100;
  Installed installed(fake);
  Images images;
  images.add("gfx942", addRecord());
  add.checkFails(
      images, 0x1000, 0x2000, 1, kLauncherNoDevice,
      "add_rocm: rocm: the HIP runtime cannot initialize (hipErrorNoDevice "
      "(100))");
  fake.fail.clear();
  fake.deviceCount = 0;
  add.checkFails(images, 0x1000, 0x2000, 1, kLauncherNoDevice,
                 "add_rocm: rocm: no AMD GPU is available (0 devices)");
  fake.deviceCount = 1;
  fake.fail["hipGetDeviceProperties"] = 101;
  add.checkFails(images, 0x1000, 0x2000, 1, kLauncherNoDevice,
                 "add_rocm: rocm: cannot read the properties of HIP device 0: "
                 "hipErrorFake (101)");
  CHECK(fake.launches.empty());
}

TEST_CASE("rocm launcher: no embedded architecture fits the device",
          "[launch][rocm][launcher]") {
  // ROCm before 6.0: hipDeviceProp_t's older layout (api() reads it, so it
  // is set before the fake is installed).
  FakeHip fake;
  fake.archNameOffset = hip::kPropsR0000ArchNameOffset;
  fake.archNames = {"gfx90a:sramecc+:xnack-"};
  Installed installed(fake);
  Images images;
  images.add("gfx942", addRecord());
  images.add("gfx950", addRecord());
  add.checkFails(
      images, 0x1000, 0x2000, 1, kLauncherNoFittingArch,
      "add_rocm: rocm: no embedded code object runs on this device (HIP "
      "device 0, gfx90a:sramecc+:xnack-); embedded: HSACO gfx942, HSACO "
      "gfx950; compile with --target rocm:gfx90a");
  CHECK(fake.count("hipModuleLoadData") == 0);
}

TEST_CASE_METHOD(Launcher,
                 "rocm launcher: a load failure names the image and the device",
                 "[launch][rocm][launcher]") {
  fake.fail["hipModuleLoadData"] = 200;
  images.add("gfx942", addRecord(), /*code object version=*/6);
  add.checkFails(
      images, 0x1000, 0x2000, 1, kLauncherLoadFailed,
      "add_rocm: rocm, HSACO gfx942 on gfx942:sramecc+:xnack-: the HIP "
      "runtime cannot load the HSACO: hipErrorFake (200) (code object "
      "version 6 needs ROCm 6.3 or newer; --code-object-version 5 suits "
      "older runtimes)");
  // Not cached: a later call tries again.
  fake.fail.clear();
  CHECK(add.run(images, address(0x1000), address(0x2000), 1) == kLauncherOk);
  CHECK(fake.count("hipModuleLoadData") == 2);

  FakeHip other;
  other.fail["hipModuleGetFunction"] = 500;
  Installed again(other);
  add.checkFails(
      images, 0x1000, 0x2000, 1, kLauncherLoadFailed,
      "add_rocm: rocm, HSACO gfx942 on gfx942:sramecc+:xnack-: no kernel "
      "named 'add' in the HSACO: hipErrorFake (500)");
}

TEST_CASE_METHOD(Launcher,
                 "rocm launcher: a refused launch, a bad bound, a bad record",
                 "[launch][rocm][launcher]") {
  images.add("gfx942", addRecord());
  fake.fail["hipModuleLaunchKernel"] = 98;
  add.checkFails(images, 0x1000, 0x2000, 2, kLauncherLaunchFailed,
                 "add_rocm: rocm, HSACO gfx942, @add: kernel launch failed: "
                 "hipErrorFake (98)");
  fake.fail.clear();
  add.checkFails(
      images, 0x1000, 0x2000, -1, kLauncherInvalidArgument,
      "add_rocm: dynamic grid bound 0 is -1; bounds must be in [0, 2^31)");
  // An empty grid launches nothing.
  size_t launched = fake.launches.size();
  CHECK(add.run(images, address(0x1000), address(0x2000), 0) == kLauncherOk);
  CHECK(fake.launches.size() == launched);

  Images bad;
  bad.add("gfx942", addRecord());
  bad.records[0] = "pallasc-gpu-record-1 add x";
  add.checkFails(bad, 0x1000, 0x2000, 1, kLauncherInvalidPlan,
                 "add_rocm: rocm, HSACO gfx942 on gfx942:sramecc+:xnack-: the "
                 "embedded launch record is malformed (grid axes)");
  CHECK(pallasc_launcher_rocm_run("add_rocm", nullptr, 0, nullptr, 0, nullptr,
                                  0, 0, nullptr, 0, nullptr) ==
        kLauncherInvalidPlan);
  CHECK(std::string(pallasc_last_error()) ==
        "add_rocm: no embedded ROCm code object");
}

TEST_CASE_METHOD(Launcher,
                 "rocm launcher: vmap's batch loop, one launch per iteration",
                 "[launch][rocm][launcher]") {
  fake.copyParams = 3;
  images.add("gfx942", addRecord());
  std::vector<int64_t> loop = twoPointerLoop(3, 0x400, 0x1000, true);
  int64_t values[] = {4, 16, 9};
  auto run = [&] {
    return add.runBatch(images, address(0x10000), address(0x80000), values,
                        loop, &stream);
  };
  REQUIRE(run() == kLauncherOk);
  REQUIRE(fake.launches.size() == 3);
  for (int b = 0; b < 3; ++b) {
    INFO("iteration " << b);
    CHECK(fake.launches[b].grid[0] == values[b]);
    CHECK(fake.launches[b].stream == &stream);
    CHECK(fake.launches[b].params[0] == static_cast<uint64_t>(0x10000 + b * 0x400));
    CHECK(fake.launches[b].params[1] == static_cast<uint64_t>(0x80000 + b * 0x1000));
    CHECK(static_cast<uint32_t>(fake.launches[b].params[2]) == values[b]);
  }
  // The second launch fails: the status, the iteration, nothing after it.
  fake.fail["hipModuleLaunchKernel"] = 98;
  fake.failAfter["hipModuleLaunchKernel"] = 4;
  CHECK(run() == kLauncherLaunchFailed);
  CHECK(std::string(pallasc_last_error()) ==
        "add_rocm: rocm, HSACO gfx942, @add: batch iteration 1 of 3: kernel "
        "launch failed: hipErrorFake (98)");
  CHECK(fake.launches.size() == 5);
  add.checkBatchFails(images, values, {}, kLauncherInvalidPlan,
                      "add_rocm: the entry point passes no batch loop");
}

TEST_CASE_METHOD(Launcher,
                 "rocm launcher: every pointer operand is checked against the "
                 "record's alignment, per batch iteration",
                 "[launch][rocm][launcher]") {
  images.add("gfx942", addRecord());
  REQUIRE(add.run(images, address(0x1010), address(0x2000), 2) == kLauncherOk);
  REQUIRE(fake.launches.size() == 1);
  // A direct call: the operand, its address, the alignment; nothing
  // launched.
  add.checkFails(
      images, 0x1000, 0x200c, 2, kLauncherMisaligned,
      "add_rocm: rocm, HSACO gfx942, @add: outputs[0] needs a 16-byte "
      "aligned address (the kernel's pointer_alignment), got 8204");
  add.checkFails(
      images, 0x1001, 0x2000, 2, kLauncherMisaligned,
      "add_rocm: rocm, HSACO gfx942, @add: inputs[0] needs a 16-byte "
      "aligned address (the kernel's pointer_alignment), got 4097");
  CHECK(fake.launches.size() == 1);

  // A batch loop whose input slices are 0x408 bytes apart: iteration 1's
  // slice is misaligned, and every slice is checked before the first
  // launch.
  int64_t value = 2;
  add.checkBatchFails(images, &value, twoPointerLoop(3, 0x408, 0x1000, false),
                      kLauncherMisaligned,
                      "add_rocm: rocm, HSACO gfx942, @add: batch iteration 1 "
                      "of 3: inputs[0] needs a 16-byte aligned address (the "
                      "kernel's pointer_alignment), got " +
                          std::to_string(0x10408));
  CHECK(fake.launches.size() == 1);
  REQUIRE(add.runBatch(images, address(0x10000), address(0x80000), &value,
                       twoPointerLoop(3, 0x410, 0x1000, false)) == kLauncherOk);
  CHECK(fake.launches.size() == 4);
}
