#!/usr/bin/env bash
# Tests `cmake --install` and the installed package (ctest: "install"):
#
# - the install tree holds the tools and lib/cmake/pallasc (config, version
#   file, exported targets);
# - the tree is relocatable: after moving it elsewhere, the tools run from
#   there and compile a bundled example, and a fresh CMake project finds the
#   moved package with find_package(pallasc 0.2 CONFIG REQUIRED);
# - the version file accepts 0.2 and refuses 0.1 and 0.3;
# - no installed binary has the build tree on its library search path.
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
for f in bin/pallasc bin/pallasc-opt \
         lib/cmake/pallasc/pallascConfig.cmake \
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

version=$("$prefix/bin/pallasc" --version)
[ "$version" = "pallasc $(sed -n 's/^project(pallasc VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")" ] ||
  fail "pallasc --version says '$version'"
"$prefix/bin/pallasc-opt" "$src/examples/add/kernel.mlir" >/dev/null ||
  fail "the installed pallasc-opt cannot parse examples/add"

# The moved compiler compiles for the host (and for the GPUs, with the
# toolkits this machine has: they come from the system, not the build).
targets=(--target cpu --target cuda:sm_80)
if ls /usr/lib/x86_64-linux-gnu/amdgcn/bitcode/ocml.bc /opt/rocm/amdgcn/bitcode/ocml.bc >/dev/null 2>&1; then
  targets+=(--target rocm:gfx942)
fi
(cd "$work" && "$prefix/bin/pallasc" "$src/examples/add/kernel.mlir" \
   --spec "$src/examples/add/spec.json" -o out "${targets[@]}") ||
  fail "the installed pallasc cannot compile examples/add"
[ -s "$work/out/add.cpu.o" ] && [ -s "$work/out/add.sm_80.ptx" ] &&
  [ -s "$work/out/add.manifest.json" ] || fail "missing outputs: $(ls "$work/out")"

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
echo "check-install: ok ($prefix)"
