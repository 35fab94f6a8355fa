//===- FuzzSpec.cpp - libFuzzer target: the grid spec parser ---*- C++ -*-===//
//
// Any byte string must parse or fail with at least one error: never crash,
// hang, or return a spec together with errors.
//
//===----------------------------------------------------------------------===//

#include "src/Spec/GridSpec.h"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  std::vector<pallasc::spec::SpecError> errors;
  std::optional<pallasc::spec::GridSpec> spec =
      pallasc::spec::parseGridSpec(text, errors);
  if (spec.has_value() == !errors.empty())
    abort(); // Contract: success iff no errors.
  return 0;
}
