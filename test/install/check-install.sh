#!/usr/bin/env bash
# Tests `cmake --install` and the installed package (ctest: "install"):
#
# - the install tree holds the tools and lib/cmake/pallasc (config, version
#   file, exported targets);
# - the tree is relocatable: after moving it elsewhere, the tools run from
#   there and compile a bundled example, and a fresh CMake project finds the
#   moved package with find_package(pallasc 0.2 CONFIG REQUIRED);
# - the version file accepts 0.2 and refuses 0.1 and 0.3;
# - no installed binary has the build tree on its library search path;
# - examples/consumer builds against the moved prefix with
#   pallasc_add_kernel() and its CPU program matches its references; its
#   kernel test suite runs through pallasc_add_lit_tests() and ctest (and
#   with the installed lit.cfg.py alone), and fails on a failing test; its
#   ALL kernel is built with no consumer and pallasc_install_kernels()
#   installs the manifest and artifacts; a touched kernel rebuilds alone;
#   renaming the spec's name leaves no stale or spec-named output;
# - pallasc_add_kernel() with cuda and rocm targets: a C program links the
#   generated GPU launchers without CUDA or ROCm and gets a status.
#
#   check-install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/pallasc-install.XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() {
  echo "check-install: FAIL: $*" >&2
  exit 1
}

cmake --install "$build" --prefix "$work/prefix" >"$work/install.log" ||
  { cat "$work/install.log"; fail "cmake --install failed"; }
for f in bin/pallasc bin/pallasc-opt lib/libPallascLaunch.a \
         lib/cmake/pallasc/pallascConfig.cmake \
         lib/cmake/pallasc/PallascAddLitTests.cmake \
         share/pallasc/lit/lit.cfg.py share/pallasc/lit/lit.site.cfg.py.in \
         lib/cmake/pallasc/pallascConfigVersion.cmake \
         lib/cmake/pallasc/pallascTargets.cmake; do
  [ -e "$work/prefix/$f" ] || fail "the install tree lacks $f"
done

# Relocate: nothing may point back at the prefix it was installed into, nor
# at the build tree.
mv "$work/prefix" "$work/moved"
prefix="$work/moved"
for tool in pallasc pallasc-opt; do
  if readelf -d "$prefix/bin/$tool" | grep -E 'R(UN)?PATH' | grep -qF "$build"; then
    fail "$tool has the build tree on its library search path"
  fi
done

# The first line of --version (the toolkits and targets follow).
version=$("$prefix/bin/pallasc" --version | head -n 1)
[ "$version" = "pallasc $(sed -n 's/^project(pallasc VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")" ] ||
  fail "pallasc --version says '$version'"
"$prefix/bin/pallasc-opt" "$src/examples/add/kernel.mlir" >/dev/null ||
  fail "the installed pallasc-opt cannot parse examples/add"

# The moved compiler compiles for the host (and for the GPUs, with the
# toolkits this machine has: they come from the system, not the build).
targets=(--target cpu --target cuda:sm_80)
# (Either place will do: `ls` of both failed whenever one was missing.)
if [ -e /usr/lib/x86_64-linux-gnu/amdgcn/bitcode/ocml.bc ] ||
   [ -e /opt/rocm/amdgcn/bitcode/ocml.bc ]; then
  targets+=(--target rocm:gfx942)
fi
(cd "$work" && "$prefix/bin/pallasc" "$src/examples/add/kernel.mlir" \
   --spec "$src/examples/add/spec.json" -o out "${targets[@]}") ||
  fail "the installed pallasc cannot compile examples/add"
[ -s "$work/out/add.cpu.o" ] && [ -s "$work/out/add.sm_80.ptx" ] &&
  [ -s "$work/out/add.manifest.json" ] || fail "missing outputs: $(ls "$work/out")"
if grep -q -- "rocm:gfx942" <<<"${targets[*]}"; then
  [ -s "$work/out/add.gfx942.hsaco" ] || fail "no HSACO: $(ls "$work/out")"
fi

# find_package from a fresh project (no languages: configuring only).
mkdir -p "$work/consumer"
cat >"$work/consumer/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.20)
project(consumer LANGUAGES NONE)
find_package(pallasc ${WANT} CONFIG REQUIRED)
message(STATUS "found pallasc ${pallasc_VERSION} at ${PALLASC_EXECUTABLE}")
CMAKE
configure() {
  rm -rf "$work/consumer/build"
  cmake -S "$work/consumer" -B "$work/consumer/build" -DWANT="$1" \
    -DCMAKE_PREFIX_PATH="$prefix" >"$work/configure.log" 2>&1
}
configure 0.2 || { cat "$work/configure.log"; fail "find_package(pallasc 0.2) failed"; }
grep -qF "found pallasc 0.2." "$work/configure.log" ||
  fail "find_package found another version: $(grep found "$work/configure.log")"
grep -qF "at $prefix/bin/pallasc" "$work/configure.log" ||
  fail "PALLASC_EXECUTABLE is not in the moved prefix: $(grep found "$work/configure.log")"
for bad in 0.1 0.3; do
  if configure "$bad"; then
    fail "find_package(pallasc $bad) accepted version 0.2"
  fi
  grep -q "compatible with requested version \"$bad\"" "$work/configure.log" ||
    fail "find_package(pallasc $bad) failed for another reason: $(cat "$work/configure.log")"
done
# The consumer example (examples/consumer, copied with the kernels it uses
# so that touching them leaves the source tree alone): pallasc_add_kernel()
# from the moved prefix, built with Ninja; the CPU program matches the
# references it computes itself.
mkdir -p "$work/examples"
cp -r "$src/examples/consumer" "$src/examples/add" "$src/examples/softmax" \
  "$src/examples/scalar_prefetch" "$src/examples/matmul" "$work/examples/"
cb="$work/consumer-build"
# The build's own C++ compiler: a sanitizer build's runtime library needs
# that compiler's sanitizer runtimes (its exported target adds the flag).
cxx=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
cmake -S "$work/examples/consumer" -B "$cb" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release ${cxx:+-DCMAKE_CXX_COMPILER="$cxx"} >"$work/consumer.log" 2>&1 ||
  { cat "$work/consumer.log"; fail "the consumer example does not configure"; }
build_consumer() {
  cmake --build "$cb" >"$work/consumer.log" 2>&1 ||
    { cat "$work/consumer.log"; fail "the consumer example does not build ($1)"; }
  "$cb/consumer" >"$work/consumer.out" 2>&1 ||
    { cat "$work/consumer.out"; fail "the consumer program fails ($1)"; }
  grep -qx "consumer: ok" "$work/consumer.out" || fail "consumer: $(cat "$work/consumer.out")"
}
build_consumer "first build"
# The batched gather is vmap's batch loop (not folded into the grid), and
# the program checked it.
grep -q "vmap's batch loop: the grid runs 4 times" "$cb/pallasc/batched_gather/batched_gather.h" ||
  fail "batched_gather is not built as vmap's batch loop: $(ls "$cb/pallasc/batched_gather")"
grep -qx "batched_gather: 0 of 32768 differ" "$work/consumer.out" ||
  fail "batched_gather: $(cat "$work/consumer.out")"
# The kernel regression suite (examples/consumer/tests/kernels) through
# pallasc_add_lit_tests(): ctest runs lit on it with the moved prefix's
# tools; its numbers test passes, and the sm_90a test where ptxas is.
ctest --test-dir "$cb" -R kernel-tests -V >"$work/ctest.log" 2>&1 ||
  { cat "$work/ctest.log"; fail "the consumer's kernel tests fail"; }
grep -q "Total Discovered Tests: 2" "$work/ctest.log" &&
  grep -Eq "Passed *: [12] " "$work/ctest.log" ||
  fail "the kernel tests did not run both tests: $(cat "$work/ctest.log")"
grep -qF "$prefix/bin/pallasc" "$cb/pallasc-lit/kernel-tests/lit.site.cfg.py" ||
  fail "the suite's site config does not name the moved pallasc"
# A failing test fails the ctest test.
printf '# RUN: %%pallasc --version | %%FileCheck %%s\n# CHECK: no such version\n' \
  >"$work/examples/consumer/tests/kernels/broken.test"
if ctest --test-dir "$cb" -R kernel-tests >"$work/ctest-broken.log" 2>&1; then
  fail "a failing kernel test passes the suite: $(cat "$work/ctest-broken.log")"
fi
rm "$work/examples/consumer/tests/kernels/broken.test"
# The installed lit.cfg.py without CMake: copied beside the tests, finding
# pallasc on PATH and FileCheck in LLVM's directory.
mkdir -p "$work/plain-suite"
cp -r "$work/examples/consumer/tests/kernels/Inputs" \
  "$work/examples/consumer/tests/kernels/matmul-golden.test" "$work/plain-suite/"
sed -i 's|%S/../../../matmul|'"$work"'/examples/matmul|' "$work/plain-suite/matmul-golden.test"
cp "$prefix/share/pallasc/lit/lit.cfg.py" "$work/plain-suite/"
PATH="$prefix/bin:$PATH" "$(sed -n 's/^LLVM_EXTERNAL_LIT:[A-Z]*=//p' "$build/CMakeCache.txt")" \
  -sv "$work/plain-suite" >"$work/plain-lit.log" 2>&1 ||
  { cat "$work/plain-lit.log"; fail "the lit.cfg.py template does not run a suite"; }
grep -Eq "Passed *: 1 " "$work/plain-lit.log" ||
  fail "the template's suite: $(cat "$work/plain-lit.log")"
# A kernel with no consumer (pallasc_add_kernel(... ALL)) was built by the
# default build, and pallasc_install_kernels() installs its manifest and
# artifacts where the project asked.
for f in matmul.manifest.json matmul.cpu.o matmul.sm_90a.ptx matmul.h matmul.a; do
  [ -s "$cb/pallasc/matmul_artifacts/$f" ] ||
    fail "the ALL kernel was not built: $(ls "$cb/pallasc/matmul_artifacts")"
done
cmake --install "$cb" --prefix "$work/consumer-prefix" >"$work/consumer-install.log" 2>&1 ||
  { cat "$work/consumer-install.log"; fail "the consumer does not install"; }
for f in matmul.manifest.json matmul.cpu.o matmul.sm_90a.ptx matmul.h matmul.a; do
  cmp -s "$cb/pallasc/matmul_artifacts/$f" "$work/consumer-prefix/share/consumer/kernels/$f" ||
    fail "pallasc_install_kernels did not install $f: $(ls -R "$work/consumer-prefix")"
done
# Nothing to do on a second build; touching one kernel reruns pallasc for
# that kernel only.
ninja -C "$cb" -n | grep -q "pallasc: " && fail "a second build reruns pallasc: $(ninja -C "$cb" -n)"
touch "$work/examples/add/kernel.mlir"
plan=$(ninja -C "$cb" -n)
grep -q "pallasc: vector_add" <<<"$plan" || fail "touching add/kernel.mlir does not rebuild vector_add: $plan"
grep -q "pallasc: row_softmax" <<<"$plan" && fail "touching add/kernel.mlir rebuilds row_softmax: $plan"
grep -q "pallasc: batched_gather" <<<"$plan" && fail "touching add/kernel.mlir rebuilds batched_gather: $plan"
# Renaming the spec's `name` rebuilds (the spec changed) with the rule's
# names: no file named after the spec appears, and the program still runs.
sed -i 's/"name": "add"/"name": "renamed_add"/' "$work/examples/add/spec.json"
build_consumer "after renaming the spec"
grep -q "pallasc: vector_add" "$work/consumer.log" || fail "renaming the spec did not rebuild vector_add"
if ls "$cb/pallasc/vector_add" | grep -q renamed; then
  fail "stale or spec-named outputs: $(ls "$cb/pallasc/vector_add")"
fi
# The GPU launchers through the package: pallasc_add_kernel() with a cuda
# target and (where the ROCm device libraries are) another with a rocm
# target alone; a C program links both without either toolkit and gets a
# status, not a crash (no GPU here: NO_DRIVER, or NO_DEVICE with a driver
# but no device).
gpu="$work/gpu-consumer"
mkdir -p "$gpu"
rocm=0
grep -q -- "rocm:gfx942" <<<"${targets[*]}" && rocm=1
cat >"$gpu/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.20)
project(gpu_consumer LANGUAGES C CXX)
find_package(pallasc 0.2 CONFIG REQUIRED)
pallasc_add_kernel(gpu_add KERNEL "$work/examples/add/kernel.mlir"
  SPEC "$work/examples/add/spec.json" TARGETS cuda:sm_80)
add_executable(gpu main.c)
target_link_libraries(gpu PRIVATE gpu_add)
if($rocm)
  pallasc_add_kernel(amd_add KERNEL "$work/examples/add/kernel.mlir"
    SPEC "$work/examples/add/spec.json" TARGETS rocm:gfx942)
  target_link_libraries(gpu PRIVATE amd_add)
  target_compile_definitions(gpu PRIVATE WITH_ROCM=1)
endif()
CMAKE
cat >"$gpu/main.c" <<'C'
#include "gpu_add.h"
#ifdef WITH_ROCM
#include "amd_add.h"
#endif
#include <stdio.h>
#include <string.h>
static int check(const char *what, pallasc_status s, const char *entry) {
  const char *m = pallasc_last_error();
  printf("%s: %d %s\n", what, (int)s, m);
  if (s == PALLASC_OK)
    return 0;
  return !((s == PALLASC_ERROR_NO_DRIVER || s == PALLASC_ERROR_NO_DEVICE) &&
           strncmp(m, entry, strlen(entry)) == 0);
}
int main(void) {
  int bad = check("cuda", gpu_add_cuda(0, 0, 0, NULL), "gpu_add_cuda: ");
#ifdef WITH_ROCM
  bad |= check("rocm", amd_add_rocm(0, 0, 0, NULL), "amd_add_rocm: ");
#endif
  return bad;
}
C
cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
cmake -S "$gpu" -B "$gpu/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  ${cc:+-DCMAKE_C_COMPILER="$cc"} ${cxx:+-DCMAKE_CXX_COMPILER="$cxx"} >"$work/gpu.log" 2>&1 &&
  cmake --build "$gpu/build" >>"$work/gpu.log" 2>&1 ||
  { cat "$work/gpu.log"; fail "the GPU launchers do not build through the package"; }
"$gpu/build/gpu" >"$work/gpu.out" 2>&1 ||
  { cat "$work/gpu.out"; fail "the GPU launcher program fails"; }
[ "$rocm" = 0 ] || grep -q "^rocm: " "$work/gpu.out" || fail "no rocm launcher ran: $(cat "$work/gpu.out")"
echo "check-install: $(tr '\n' ';' <"$work/gpu.out")"
echo "check-install: $(head -4 "$work/consumer.out" | tr '\n' ';')"
echo "check-install: ok ($prefix)"
