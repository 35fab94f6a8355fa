# Build options for pallasc.
option(PALLASC_BUILD_TESTS "Build the Catch2 unit tests and the lit suite" ON)
option(MLIR_LINK_MLIR_DYLIB "Link tools against libMLIR.so (fast links)" ON)
option(PALLASC_ENABLE_SANITIZERS "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
set(LLVM_EXTERNAL_LIT "/usr/lib/llvm-22/bin/lit" CACHE STRING "Path to lit")

if(PALLASC_ENABLE_SANITIZERS)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
