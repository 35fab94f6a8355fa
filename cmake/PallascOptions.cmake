# Build options for pallasc.
option(PALLASC_BUILD_TESTS "Build the Catch2 unit tests and the lit suite" ON)
option(MLIR_LINK_MLIR_DYLIB "Link tools against libMLIR.so (fast links)" ON)
option(PALLASC_BUILD_FUZZERS "Build the libFuzzer targets in fuzz/ (clang)" OFF)
option(PALLASC_ENABLE_SANITIZERS "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
# cmake/PallascStaticLLVM.cmake: ON by default except under the sanitizers
# (whose build links every executable again and gains nothing from it).
if(PALLASC_ENABLE_SANITIZERS)
  set(_pallasc_static_default OFF)
else()
  set(_pallasc_static_default ON)
endif()
option(PALLASC_STATIC_LLVM
  "Link the pallasc executable with LLVM's and MLIR's static archives (fast start-up, slower link)"
  ${_pallasc_static_default})
set(LLVM_EXTERNAL_LIT "/usr/lib/llvm-22/bin/lit" CACHE STRING "Path to lit")

if(PALLASC_ENABLE_SANITIZERS)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  # UBSan's vptr check needs RTTI on both sides; LLVM's classes have none.
  add_compile_options(-fno-sanitize=vptr)
  add_link_options(-fsanitize=address,undefined)
  # ASan defaults for every executable (see the file); add it to each
  # add_executable / add_llvm_executable of a tool, test or fuzzer.
  set(PALLASC_SANITIZER_SOURCES
      ${PROJECT_SOURCE_DIR}/src/Support/AsanOptions.cpp)
  if(PALLASC_BUILD_FUZZERS)
    # Coverage for libFuzzer in every library the fuzz targets link.
    add_compile_options(-fsanitize=fuzzer-no-link)
  endif()
endif()
