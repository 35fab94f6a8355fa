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
