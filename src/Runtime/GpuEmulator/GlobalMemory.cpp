//===- GlobalMemory.cpp - The emulated kernel's global memory ---*- C++ -*-===//

#include "src/Runtime/GpuEmulator/GlobalMemory.h"

#include <cstdlib>
#include <cstring>

namespace pallasc::runtime {

namespace {
constexpr size_t kAlign = 256;

/// The first and one past the last index in [begin, end) of `bytes` whose
/// byte is not `value`; {end, end} when there is none.
std::pair<size_t, size_t> changedRange(const unsigned char *bytes,
                                       size_t begin, size_t end,
                                       unsigned char value) {
  size_t first = begin;
  while (first < end && bytes[first] == value)
    ++first;
  if (first == end)
    return {end, end};
  size_t last = end;
  while (bytes[last - 1] == value)
    --last;
  return {first, last};
}

std::string byteRange(long long first, long long last) {
  if (last - first == 1)
    return "byte " + std::to_string(first);
  return "bytes " + std::to_string(first) + " to " + std::to_string(last - 1);
}
} // namespace

struct EmulatedGlobalMemory::Array {
  unsigned char *base = nullptr; ///< guard, data, guard (and padding)
  size_t bytes = 0;
  size_t total = 0;
  std::string what;
  ~Array() { std::free(base); }
  unsigned char *data() const { return base + kGuardBytes; }
};

EmulatedGlobalMemory::EmulatedGlobalMemory() = default;
EmulatedGlobalMemory::~EmulatedGlobalMemory() = default;

void *EmulatedGlobalMemory::add(const void *data, size_t bytes,
                                std::string what, std::string &error) {
  static_assert(kGuardBytes % kAlign == 0);
  auto a = std::make_unique<Array>();
  size_t padded = (bytes + kAlign - 1) / kAlign * kAlign;
  if (padded < bytes || padded > SIZE_MAX - 2 * kGuardBytes) {
    error = "cannot allocate the emulated " + what;
    return nullptr;
  }
  a->total = padded + 2 * kGuardBytes;
  a->base = static_cast<unsigned char *>(std::aligned_alloc(kAlign, a->total));
  if (!a->base) {
    error = "cannot allocate the emulated " + what + " (" +
            std::to_string(bytes) + " bytes)";
    return nullptr;
  }
  a->bytes = bytes;
  a->what = std::move(what);
  std::memset(a->base, kGuardByte, kGuardBytes);
  if (bytes)
    std::memcpy(a->data(), data, bytes);
  std::memset(a->data() + bytes, kGuardByte, a->total - kGuardBytes - bytes);
  arrays.push_back(std::move(a));
  return arrays.back()->data();
}

void *EmulatedGlobalMemory::data(size_t index) const {
  return arrays[index]->data();
}

bool EmulatedGlobalMemory::check(std::string &error) const {
  for (const std::unique_ptr<Array> &a : arrays) {
    long long guard = static_cast<long long>(kGuardBytes);
    auto [bf, bl] = changedRange(a->base, 0, kGuardBytes, kGuardByte);
    auto [af, al] = changedRange(a->base, kGuardBytes + a->bytes, a->total,
                                 kGuardByte);
    if (bf != bl || af != al) {
      error = "the kernel wrote outside " + a->what + ", which has " +
              std::to_string(a->bytes) + " bytes: ";
      if (bf != bl)
        error += byteRange(static_cast<long long>(bf) - guard,
                           static_cast<long long>(bl) - guard) +
                 " (before its start)";
      if (bf != bl && af != al)
        error += " and ";
      if (af != al)
        error += byteRange(static_cast<long long>(af) - guard,
                           static_cast<long long>(al) - guard) +
                 " (past its end)";
      error += " changed; an out-of-bounds global write is a lowering bug";
      return false;
    }
  }
  return true;
}

} // namespace pallasc::runtime
