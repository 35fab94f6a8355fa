//===- CacheTest.cpp - The compile cache's key and entries ----*- C++ -*-===//
//
// compileCacheKey must change with every part that can change an output
// (each toolchain part, the inputs' bytes and names, each option that
// matters) and with nothing else; an entry must decode to what was encoded
// and every damaged form of it must be rejected.
//
//===----------------------------------------------------------------------===//

#include "src/Driver/Cache.h"
#include "src/Driver/Frontend.h"

#include <catch2/catch.hpp>

#include <functional>
#include <set>

using namespace pallasc;

namespace {

Toolchain baseToolchain() {
  Toolchain t;
  t.pallascVersion = "0.1.0";
  t.llvmVersion = "22.1.8";
  t.selfFingerprints = {"aaaa", "bbbb"};
  t.parts = {{"env CUDA_HOME", "<unset>"},
             {"ptxas", "/usr/local/cuda/bin/ptxas"},
             {"ptxas content", "cccc"}};
  return t;
}

DriverOptions baseOptions() {
  DriverOptions o;
  o.kernelPath = "dir/kernel.mlir";
  o.specPath = "dir/spec.json";
  o.targets = {"cuda:sm_80", "tpu"};
  return o;
}

const char *kKernel = "pallas.kernel @k() {}";
const char *kSpec = "{\"kernel\": \"k\"}";

std::string keyOf(const DriverOptions &o, const Toolchain &t,
                  llvm::StringRef kernel = kKernel,
                  llvm::StringRef spec = kSpec,
                  llvm::StringRef outputFile = "") {
  return compileCacheKey(o, kernel, spec, t, outputFile);
}

/// The key of the base options after `change`.
std::string keyWith(const std::function<void(DriverOptions &)> &change,
                    const Toolchain &t) {
  DriverOptions o = baseOptions();
  change(o);
  return keyOf(o, t);
}

/// A --vmap of 4 over `inAxes`.
spec::Transform vmapOf(std::vector<std::optional<int64_t>> inAxes) {
  spec::Transform v;
  v.kind = spec::Transform::Kind::Vmap;
  v.inAxes = std::move(inAxes);
  v.axisSize = 4;
  v.path = "--vmap";
  return v;
}

} // namespace

TEST_CASE("cache sizes parse with K/M/G suffixes", "[cache]") {
  uint64_t b = 0;
  CHECK((parseByteSize("123", b) && b == 123));
  CHECK((parseByteSize("16K", b) && b == 16384));
  CHECK((parseByteSize("500M", b) && b == 500ull << 20));
  CHECK((parseByteSize("2G", b) && b == 2ull << 30));
  CHECK((parseByteSize("2GiB", b) && b == 2ull << 30));
  CHECK((parseByteSize("1 mb", b) && b == 1ull << 20));
  CHECK((parseByteSize("7B", b) && b == 7));
  CHECK_FALSE(parseByteSize("", b));
  CHECK_FALSE(parseByteSize("M", b));
  CHECK_FALSE(parseByteSize("-1K", b));
  CHECK_FALSE(parseByteSize("12Q", b));
  CHECK_FALSE(parseByteSize("1.5G", b));
  CHECK_FALSE(parseByteSize("99999999999999999999", b));
  CHECK_FALSE(parseByteSize("99999999999T", b));
  CHECK(formatByteSize(812) == "812 B");
  CHECK(formatByteSize(16384) == "16.0 KiB");
  CHECK(formatByteSize(3565158) == "3.4 MiB");
}

TEST_CASE("the cache key changes with each part of the toolchain",
          "[cache]") {
  DriverOptions o = baseOptions();
  Toolchain base = baseToolchain();
  std::string key = keyOf(o, base);
  CHECK(key.size() == 64);
  CHECK(keyOf(o, base) == key);

  std::vector<std::function<void(Toolchain &)>> changes = {
      [](Toolchain &t) { t.pallascVersion = "0.1.1"; },
      [](Toolchain &t) { t.llvmVersion = "22.1.9"; },
      [](Toolchain &t) { t.selfFingerprints[1] = "bbbc"; },
      [](Toolchain &t) { t.selfFingerprints.push_back("dddd"); },
      [](Toolchain &t) { t.parts[0].second = "=/opt/cuda"; },
      [](Toolchain &t) { t.parts[1].second = "/opt/cuda/bin/ptxas"; },
      [](Toolchain &t) { t.parts[2].second = "cccd"; },
      [](Toolchain &t) { t.parts.push_back({"host triple", "x86_64"}); },
      // The same bytes split differently between a name and a value.
      [](Toolchain &t) {
        t.parts[2] = {"ptxas contentc", "ccc"};
      },
  };
  std::set<std::string> keys = {key};
  for (auto &change : changes) {
    Toolchain t = baseToolchain();
    change(t);
    CHECK(keys.insert(keyOf(o, t)).second);
  }
}

TEST_CASE("the cache key changes with each input and option that changes "
          "an output",
          "[cache]") {
  Toolchain t = baseToolchain();
  DriverOptions base = baseOptions();
  std::set<std::string> keys = {keyOf(base, t)};
  CHECK(keys.insert(keyOf(base, t, "pallas.kernel @k() { }")).second);
  CHECK(keys.insert(keyOf(base, t, kKernel, "{\"kernel\":\"k\"}")).second);
  // The kernel's bytes moved into the spec: still another key.
  CHECK(keys.insert(keyOf(base, t, "", std::string(kKernel) + kSpec)).second);
  // -o FILE.ext renames an output.
  CHECK(keys.insert(keyOf(base, t, kKernel, kSpec, "kernel.ptx")).second);

  std::vector<std::function<void(DriverOptions &)>> changes = {
      [](DriverOptions &o) { o.kernelPath = "dir/other.mlir"; },
      [](DriverOptions &o) { o.specPath = "dir/other.json"; },
      [](DriverOptions &o) {
        o.targets = {"tpu", "cuda:sm_80"};
      },
      [](DriverOptions &o) { o.targets = {"cuda:sm_80"}; },
      [](DriverOptions &o) { o.targets.push_back("cpu"); },
      [](DriverOptions &o) { o.emit = {"mlir"}; },
      [](DriverOptions &o) { o.emit = {"cubin"}; },
      [](DriverOptions &o) { o.optLevel = 3; },
      [](DriverOptions &o) { o.rocmCodeObjectVersion = 6; },
      [](DriverOptions &o) { o.name = "renamed"; },
      [](DriverOptions &o) {
        o.extraTransforms.push_back(
            {spec::Transform::Kind::Jvp, {}, 0, {}, "--jvp"});
      },
      [](DriverOptions &o) {
        o.extraTransforms.push_back(vmapOf({0, std::nullopt}));
      },
      [](DriverOptions &o) {
        o.extraTransforms.push_back(vmapOf({0, 0}));
      },
      [](DriverOptions &o) {
        spec::Transform d;
        d.kind = spec::Transform::Kind::Dce;
        d.usedOutputs = {false};
        d.path = "--used-outputs";
        o.extraTransforms.push_back(d);
      },
  };
  for (auto &change : changes)
    CHECK(keys.insert(keyWith(change, t)).second);
}

TEST_CASE("the cache key ignores what a hit writes afresh or does not "
          "write",
          "[cache]") {
  Toolchain t = baseToolchain();
  std::string key = keyOf(baseOptions(), t);
  std::vector<std::function<void(DriverOptions &)>> same = {
      [](DriverOptions &o) { o.outputDir = "elsewhere"; },
      [](DriverOptions &o) { o.depfile = "k.d"; },
      [](DriverOptions &o) {
        o.writeDepfile = true;
        o.depTargets = {"rule"};
        o.depPhonyTargets = true;
      },
      // The directory of -o is not in the key (its file name is the
      // caller's outputFile).
      [](DriverOptions &o) { o.outputPath = "out/"; },
      [](DriverOptions &o) { o.verbosity = Verbosity::Verbose; },
      [](DriverOptions &o) { o.timing = true; },
      [](DriverOptions &o) { o.cache.directory = "/tmp/other-cache"; },
      // The manifest records the inputs' names, not their directories.
      [](DriverOptions &o) {
        o.kernelPath = "/abs/kernel.mlir";
        o.specPath = "spec.json";
      },
  };
  for (auto &change : same)
    CHECK(keyWith(change, t) == key);
}

TEST_CASE("cache entries decode to what was encoded and reject damage",
          "[cache]") {
  std::vector<CompiledFile> files = {
      {"k.manifest.json", "{\"a\": 1}\n"},
      {"k.sm_80.ptx", std::string("\0\x01\xff binary", 10)},
      {"k.empty", ""},
  };
  std::string key(64, 'a');
  std::string entry = encodeCacheEntry(key, {"k", files});
  CacheEntry decoded;
  std::vector<CompiledFile> &back = decoded.files;
  std::string why;
  REQUIRE(decodeCacheEntry(entry, key, decoded, why));
  CHECK(decoded.name == "k");
  REQUIRE(back.size() == files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    CHECK(back[i].name == files[i].name);
    CHECK(back[i].contents == files[i].contents);
  }

  SECTION("under another key") {
    CHECK_FALSE(decodeCacheEntry(entry, std::string(64, 'b'), decoded, why));
    CHECK(why == "it holds another key");
  }
  SECTION("every truncation") {
    for (size_t n = 0; n < entry.size(); ++n)
      CHECK_FALSE(decodeCacheEntry(llvm::StringRef(entry).take_front(n), key,
                                   decoded, why));
  }
  SECTION("every flipped byte") {
    for (size_t i = 0; i < entry.size(); ++i) {
      std::string damaged = entry;
      damaged[i] ^= 0x20;
      bool ok = decodeCacheEntry(damaged, key, decoded, why);
      // Only a flipped letter case in the hex hash could survive: it must
      // not, since the hash is compared as written.
      CHECK_FALSE(ok);
    }
  }
  SECTION("a file name with a directory") {
    std::string bad = encodeCacheEntry(key, {"k", {{"../k.ptx", "x"}}});
    CHECK_FALSE(decodeCacheEntry(bad, key, decoded, why));
    CHECK(why == "malformed file name");
  }
}

TEST_CASE("the JIT object key changes with the toolchain, the host, the "
          "purpose and the module",
          "[cache]") {
  Toolchain base = baseToolchain();
  const char *host = "x86_64-pc-linux-gnu cpu=znver3 features=+avx2,";
  const char *module = "module { llvm.func @f() }";
  std::string key = jitCacheKey(base, "run cpu -O3", host, module);
  CHECK(key.size() == 64);
  CHECK(jitCacheKey(base, "run cpu -O3", host, module) == key);
  // Not a compile's key for the same bytes.
  CHECK(key != keyOf(baseOptions(), base, module, ""));
  Toolchain changed = base;
  changed.selfFingerprints[0] = "aaab";
  std::set<std::string> keys = {
      key,
      jitCacheKey(changed, "run cpu -O3", host, module),
      jitCacheKey(base, "run emulate -O2", host, module),
      jitCacheKey(base, "run cpu -O3",
                  "x86_64-pc-linux-gnu cpu=znver3 features=-avx2,", module),
      jitCacheKey(base, "run cpu -O3", host, "module { llvm.func @g() }"),
  };
  CHECK(keys.size() == 5);
}
