//===- GlobalMemory.h - The emulated kernel's global memory -----*- C++ -*-===//
//
// What `--emulate` gives a kernel as global memory: each array in its own
// allocation, 256-byte aligned as cudaMalloc / hipMalloc return, between
// two guard regions filled with 0xFF bytes (NaN for every float type, -1
// for the integers, so an out-of-bounds read shows up in --check). After
// the launches, check() reports any guard byte the kernel changed: a write
// past either end of an array. The arrays are copies: a kernel that writes
// its input refs (allowed: on a GPU they write through to the input's
// device buffer) leaves the caller's inputs as they were, as a GPU run does.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_SRC_RUNTIME_GPUEMULATOR_GLOBALMEMORY_H
#define PALLASC_SRC_RUNTIME_GPUEMULATOR_GLOBALMEMORY_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace pallasc::runtime {

class EmulatedGlobalMemory {
public:
  /// The bytes of each guard region (a multiple of the 256-byte alignment).
  static constexpr size_t kGuardBytes = 4096;
  /// The byte every guard byte holds.
  static constexpr unsigned char kGuardByte = 0xFF;

  EmulatedGlobalMemory();
  ~EmulatedGlobalMemory();
  EmulatedGlobalMemory(const EmulatedGlobalMemory &) = delete;
  EmulatedGlobalMemory &operator=(const EmulatedGlobalMemory &) = delete;

  /// Adds an array of `bytes` bytes holding a copy of `data`, named `what`
  /// in check()'s messages (e.g. "input 0 ([8, 128] f32)"). Returns its
  /// address, or null with `error` set when it cannot be allocated.
  void *add(const void *data, size_t bytes, std::string what,
            std::string &error);

  /// The address of the array added `index`-th.
  void *data(size_t index) const;

  /// True when no guard byte changed; else false with `error` naming the
  /// first array written outside its bytes and the bytes changed (relative
  /// to its start: negative before it).
  bool check(std::string &error) const;

private:
  struct Array;
  std::vector<std::unique_ptr<Array>> arrays;
};

} // namespace pallasc::runtime

#endif // PALLASC_SRC_RUNTIME_GPUEMULATOR_GLOBALMEMORY_H
