//===- FakeCallLog.h - The call log the fake GPU APIs share ------*- C++
//-*-===//
//
// What FakeCuda (FakeCudaDriver.h) and FakeHip (FakeHipRuntime.h) both do
// with each call of an entry point: record its name, and return success or
// the failure a test set for it.
//
//===----------------------------------------------------------------------===//

#ifndef PALLASC_TEST_LAUNCH_FAKEGPUAPI_H
#define PALLASC_TEST_LAUNCH_FAKEGPUAPI_H

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace pallasc::test {

/// The devices a fake API has, the calls it was asked, and the results a
/// test sets: `Self` is the fake, `Result` the API's status type, `kSuccess`
/// its success.
template <typename Self, typename Result, Result kSuccess> struct FakeGpuApi {
  int deviceCount = 1;

  /// The fake whose entry points are installed (its api() makes it so).
  static inline Self *current = nullptr;

  /// An entry point's call of `name` on the current fake (record()).
  static Result call(const char *name) { return current->record(name); }

  std::map<std::string, Result> fail;
  /// Calls of an entry point that succeed before `fail` makes it fail
  /// (absent: from the first).
  std::map<std::string, size_t> failAfter;

  // Recorded calls.
  std::vector<std::string> calls;

  size_t count(const std::string &call) const {
    size_t n = 0;
    for (const std::string &c : calls)
      n += c == call;
    return n;
  }

  /// Records a call of `name`; returns fail[name] once failAfter[name]
  /// calls have succeeded, else success.
  Result record(const char *name) {
    calls.push_back(name);
    auto it = fail.find(name);
    auto after = failAfter.find(name);
    if (after != failAfter.end() && count(name) <= after->second)
      return kSuccess;
    return it == fail.end() ? kSuccess : it->second;
  }
};

} // namespace pallasc::test

#endif // PALLASC_TEST_LAUNCH_FAKEGPUAPI_H
