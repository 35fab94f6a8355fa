//===- RunTestUtils.h - Helpers for pallasc run tests ----------*- C++ -*-===//

#ifndef PALLASC_TEST_RUNTIME_RUNTESTUTILS_H
#define PALLASC_TEST_RUNTIME_RUNTESTUTILS_H

#include "src/Driver/Run.h"
#include "src/Runtime/Float16.h"
#include "src/Runtime/Npy.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace pallasc::test {

/// A temporary directory, removed at the end of the test.
class Workspace {
public:
  Workspace() {
    REQUIRE(!llvm::sys::fs::createUniqueDirectory("pallasc-run-test", dir));
  }
  ~Workspace() { llvm::sys::fs::remove_directories(dir); }
  std::string path(const std::string &name) const {
    return (dir + "/" + name).str();
  }
  std::string write(const std::string &name, const std::string &text) const {
    std::ofstream(path(name)) << text;
    return path(name);
  }

private:
  llvm::SmallString<128> dir;
};

/// Uniform random values in [-scale, scale) (integers: [0, 16)).
inline runtime::HostArray randomArray(runtime::DType dtype,
                                      std::vector<int64_t> shape,
                                      unsigned seed, double scale = 1.0) {
  using runtime::DType;
  runtime::HostArray a(dtype, std::move(shape));
  REQUIRE(a.allocate());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uni(-scale, scale);
  for (int64_t i = 0, n = a.numElements(); i < n; ++i) {
    switch (dtype) {
    case DType::F32:
      reinterpret_cast<float *>(a.data())[i] = uni(rng);
      break;
    case DType::F64:
      reinterpret_cast<double *>(a.data())[i] = uni(rng);
      break;
    case DType::F16:
      reinterpret_cast<uint16_t *>(a.data())[i] = runtime::floatToHalf(uni(rng));
      break;
    case DType::BF16:
      reinterpret_cast<uint16_t *>(a.data())[i] = runtime::floatToBF16(uni(rng));
      break;
    case DType::I32:
      reinterpret_cast<int32_t *>(a.data())[i] = rng() % 16;
      break;
    default:
      FAIL("randomArray: unsupported dtype");
    }
  }
  return a;
}

inline const float *asF32(const runtime::HostArray &a) {
  return reinterpret_cast<const float *>(a.data());
}
inline const int32_t *asI32(const runtime::HostArray &a) {
  return reinterpret_cast<const int32_t *>(a.data());
}
inline const uint16_t *asU16(const runtime::HostArray &a) {
  return reinterpret_cast<const uint16_t *>(a.data());
}

/// Runs `pallasc run` in process on a kernel file and a spec text, with the
/// given inputs (written as .npy files). Returns the outputs; checks the
/// exit code is `expectedExit` (no outputs are read otherwise).
inline std::vector<runtime::HostArray>
runKernel(const Workspace &ws, const std::string &kernelPath,
          const std::string &specText,
          const std::vector<const runtime::HostArray *> &inputs,
          RunOptions options = {}, int expectedExit = kExitSuccess,
          size_t numOutputs = 1) {
  setupLogging(Verbosity::Quiet);
  options.driver.kernelPath = kernelPath;
  options.driver.specPath = ws.write("spec.json", specText);
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string path = ws.path("in" + std::to_string(i) + ".npy");
    std::string error;
    REQUIRE(runtime::writeNpy(path, *inputs[i], error));
    options.inputs.push_back(path);
  }
  for (size_t j = 0; j < numOutputs; ++j)
    options.outputs.push_back(ws.path("out" + std::to_string(j) + ".npy"));
  int rc = runOnCpu(options);
  REQUIRE(rc == expectedExit);
  std::vector<runtime::HostArray> outputs;
  if (rc != kExitSuccess)
    return outputs;
  for (const std::string &path : options.outputs) {
    runtime::HostArray a;
    std::string error;
    REQUIRE(runtime::readNpy(path, a, error));
    outputs.push_back(std::move(a));
  }
  return outputs;
}

} // namespace pallasc::test

#endif // PALLASC_TEST_RUNTIME_RUNTESTUTILS_H
