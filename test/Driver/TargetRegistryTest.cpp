//===- TargetRegistryTest.cpp - The driver's table of target kinds -*- C++ -*-===//

#include "src/Driver/TargetRegistry.h"

#include "src/Driver/Frontend.h"

#include <catch2/catch.hpp>

#include <set>
#include <string>

using namespace pallasc;

TEST_CASE("every --target spelling has exactly one kind", "[driver][targets]") {
  auto kindOf = [](const std::string &target) -> std::string {
    const TargetKind *kind = findTargetKind(target);
    return kind ? kind->name : "none";
  };
  CHECK(kindOf("tpu") == "tpu");
  CHECK(kindOf("cpu") == "cpu");
  CHECK(kindOf("cuda:sm_80") == "cuda");
  CHECK(kindOf("cuda:sm_90a") == "cuda");
  CHECK(kindOf("rocm:gfx942") == "rocm");
  CHECK(kindOf("cuda:sm_91") == "none");
  CHECK(kindOf("rocm:sm_80") == "none");
  CHECK(kindOf("cuda") == "none");
  CHECK(kindOf("TPU") == "none");
  CHECK(kindOf("") == "none");
  // The spellings the fuzzer compiles for each belong to one kind only.
  for (const std::string &target : everyTarget()) {
    int matching = 0;
    for (const TargetKind &kind : targetKinds())
      matching += kind.matches(target);
    INFO(target);
    CHECK(matching == 1);
  }
}

TEST_CASE("target kinds: artifacts in table order, distinct output extensions",
          "[driver][targets]") {
  std::vector<std::string> names;
  std::set<std::string> extensions;
  for (const TargetKind &kind : targetKinds()) {
    names.push_back(kind.name);
    CHECK(kind.start != nullptr);
    for (const TargetOutputExtension &out : kind.outputs) {
      INFO(out.extension);
      CHECK(extensions.insert(out.extension).second);
      CHECK(std::string(out.howToWrite).rfind("add --target ", 0) == 0);
    }
  }
  // The manifest lists the kinds' artifacts in this order.
  CHECK(names == std::vector<std::string>{"tpu", "cuda", "rocm", "cpu"});
  std::vector<std::string> targets = {"rocm:gfx942", "cpu"};
  CHECK_FALSE(hasTargetOf(targetKinds()[0], targets));
  CHECK(hasTargetOf(targetKinds()[2], targets));
  CHECK(hasTargetOf(targetKinds()[3], targets));
}

TEST_CASE("target kinds: what pallasc run runs, the flags only a kind uses",
          "[driver][targets]") {
  std::string error;
  const TargetKind *cuda = findRunTargetKind("cuda:sm_90a", error);
  REQUIRE(cuda);
  CHECK(std::string(cuda->name) == "cuda");
  CHECK(cuda->run.emulateOnly == nullptr);
  const TargetKind *rocm = findRunTargetKind("rocm:gfx942", error);
  REQUIRE(rocm);
  CHECK(std::string(rocm->run.emulateOnly) ==
        "AMD GPUs (no HIP runtime support)");
  // Not run (tpu), run without --target (cpu), unknown: each lists every
  // target pallasc run --target takes, which are every cuda and rocm chip.
  for (const char *bad : {"tpu", "cpu", "cuda:sm_50", "hip:gfx942", ""}) {
    INFO(bad);
    error.clear();
    CHECK_FALSE(findRunTargetKind(bad, error));
    CHECK(error.find("'" + std::string(bad) + "'") != std::string::npos);
    CHECK(error.find("pallasc run --target takes one of cuda:sm_75, ") !=
          std::string::npos);
    CHECK(error.find(", rocm:gfx942, ") != std::string::npos);
  }
  CHECK(runTargetSpellings() == "cuda:<arch> or rocm:<arch>");
  CHECK(runTargetSpellings(/*onDevice=*/true) == "cuda:<arch>");
  // Every kind's names are in validTargetNames, in table order.
  std::string all = validTargetNames();
  CHECK(all.rfind("tpu, cuda:sm_75, ", 0) == 0);
  CHECK(all.size() > 5);
  CHECK(all.substr(all.size() - 5) == ", cpu");
  // Each vendor flag belongs to one kind, and --emit kinds are --emit=KIND.
  std::set<std::string> flags;
  for (const TargetKind &kind : targetKinds())
    for (const TargetFlag &f : kind.flags) {
      INFO(f.flag);
      CHECK(flags.insert(f.flag).second);
      if (f.emitKind)
        CHECK(std::string(f.flag) == "--emit=" + std::string(f.emitKind));
    }
  CHECK(flags == std::set<std::string>{"--emit=cubin", "--emit=asm",
                                       "--code-object-version"});
}
