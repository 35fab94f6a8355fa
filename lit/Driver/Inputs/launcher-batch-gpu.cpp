// Runs the generated CUDA and ROCm launchers of vmap's batch loop
// (launcher-batch.test) on the unit tests' fake driver and runtime
// (test/Launch): prints each launch's grid and parameters, so the test
// checks the launches the library's embedded loop makes (one per
// iteration, on slice b of each operand, with bound b) and a failing
// launch's status and message.
#include "gather_gpu.h"

#include "src/Launch/CudaLauncher.h"
#include "src/Launch/HipLauncher.h"
#include "test/Launch/FakeCudaDriver.h"
#include "test/Launch/FakeHipRuntime.h"

#include <cinttypes>
#include <cstdio>

using namespace pallasc;

template <typename Launch>
void print(const char *what, const std::vector<Launch> &l,
           const std::vector<std::vector<uint64_t>> &params) {
  for (size_t b = 0; b < l.size(); ++b) {
    std::printf("%s launch %zu: grid %u %u %u params", what, b, l[b].grid[0],
                l[b].grid[1], l[b].grid[2]);
    for (uint64_t v : params[b])
      std::printf(" 0x%" PRIx64, v);
    std::printf("\n");
  }
}

int main() {
  auto *in0 = reinterpret_cast<const int32_t *>(uintptr_t(0x1000000));
  auto *in1 = reinterpret_cast<const float *>(uintptr_t(0x2000000));
  auto *out0 = reinterpret_cast<float *>(uintptr_t(0x4000000));
  int64_t bounds[] = {4, 16, 9};
  auto run = [&](const char *vendor, auto entry) {
    int status = entry(in0, in1, out0, bounds, nullptr);
    std::printf("%s: %d '%s'\n", vendor, status, pallasc_last_error());
  };
  {
    test::FakeCuda fake;
    fake.copyParams = 4;
    launch::CudaDriverApi api = fake.api();
    launch::setCudaLauncherDriverForTesting(&api);
    run("cuda", gather_gpu_cuda);
    print("cuda", fake.launches, fake.launchedParams);
    fake.fail["cuLaunchKernel"] = 701;
    fake.failAfter["cuLaunchKernel"] = fake.launches.size() + 1;
    run("cuda", gather_gpu_cuda);
    launch::setCudaLauncherDriverForTesting(nullptr);
  }
  {
    test::FakeHip fake;
    fake.copyParams = 4;
    launch::HipRuntimeApi api = fake.api();
    launch::setRocmLauncherRuntimeForTesting(&api);
    run("rocm", gather_gpu_rocm);
    std::vector<std::vector<uint64_t>> params;
    for (const test::FakeHip::Launch &l : fake.launches)
      params.push_back(l.params);
    print("rocm", fake.launches, params);
    launch::setRocmLauncherRuntimeForTesting(nullptr);
  }
  return 0;
}
