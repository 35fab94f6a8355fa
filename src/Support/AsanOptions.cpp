//===- AsanOptions.cpp - AddressSanitizer defaults for our tools -*- C++ -*-===//
//
// Linked into every executable of a sanitizer build
// (PALLASC_ENABLE_SANITIZERS). Our code is instrumented but libLLVM/libMLIR
// are not: LLVM's BumpPtrAllocator, inlined into our code, poisons the unused
// part of its slabs, and the uninstrumented library code then writes into
// slabs our side poisoned ("use-after-poison" false positives). Turning off
// user poisoning keeps every real ASan check (heap, stack, globals,
// use-after-free, leaks) and drops only those annotations.
//
//===----------------------------------------------------------------------===//

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}
#endif
#endif
