#!/usr/bin/env bash
# Tests the Bazel rules (ctest: "bazel", label bazel): installs this build
# into a temporary prefix and, with Debian's Bazel 4.2 offline, builds and
# tests examples/bazel with the installed rules (PREFIX/share/pallasc/bazel
# in place of the checkout's bazel/):
#
# - pallasc_kernel() compiles examples/add (cpu) and examples/matmul (cpu,
#   cuda:sm_90a, rocm:gfx942) through the registered pallasc toolchain;
#   kernels_test runs both CPU entry points against references;
# - matmul_artifacts holds the manifest and the three per-target artifacts;
# - the compile action ran pallasc with PALLASC_EXPLICIT_TOOLS=1 and each
#   tool declared (aquery).
#
# Skips (exit 77, with a message) in a sanitizer build (pallasc is not the
# point there and the CPU time is better spent elsewhere) and when bazel
# (apt-get install bazel-bootstrap: scripts/setup.sh) or Debian's rules_cc
# and rules_java are absent.
#
#   check-bazel.sh BUILD_DIR SOURCE_DIR [sanitizers]
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
if [ "${3:-}" = sanitizers ]; then
  echo "check-bazel: SKIP: a sanitizer build (the Bazel rules are tested in the plain build)"
  exit 77
fi
if ! command -v bazel >/dev/null 2>&1; then
  echo "check-bazel: SKIP: bazel is not installed (scripts/setup.sh installs bazel-bootstrap)"
  exit 77
fi
for d in /usr/share/bazel/rules/cc /usr/share/bazel/rules/java; do
  if [ ! -d "$d" ]; then
    echo "check-bazel: SKIP: $d is missing (apt-get install bazel-rules-cc bazel-rules-java)"
    exit 77
  fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/pallasc-bazel.XXXXXX")
bazel_cmd=(bazel --nohome_rc --output_user_root="$work/root"
           --max_idle_secs=60)
cleanup() {
  (cd "$src/examples/bazel" && "${bazel_cmd[@]}" shutdown) >/dev/null 2>&1 || true
  chmod -R u+w "$work" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
# A signal exits through the EXIT trap too (bash alone would die without it).
trap 'exit 130' INT TERM HUP

fail() {
  echo "check-bazel: FAIL: $*" >&2
  exit 1
}

cmake --install "$build" --prefix "$work/prefix" >"$work/install.log" ||
  { cat "$work/install.log"; fail "cmake --install failed"; }
rules="$work/prefix/share/pallasc/bazel"
for f in WORKSPACE BUILD.bazel defs.bzl deps.bzl pallasc.bazelrc; do
  [ -e "$rules/$f" ] || fail "the install tree lacks share/pallasc/bazel/$f"
done

flags=(--repo_env=PALLASC_PREFIX="$work/prefix"
       --override_repository=pallasc="$rules"
       --symlink_prefix=/ --noshow_progress)
cd "$src/examples/bazel"
"${bazel_cmd[@]}" test "${flags[@]}" //... >"$work/test.log" 2>&1 ||
  { cat "$work/test.log"; fail "bazel test //... failed"; }
grep -q "//:kernels_test .*PASSED" "$work/test.log" ||
  { cat "$work/test.log"; fail "kernels_test did not pass"; }

"${bazel_cmd[@]}" build "${flags[@]}" //:matmul_artifacts >"$work/artifacts.log" 2>&1 ||
  { cat "$work/artifacts.log"; fail "bazel build //:matmul_artifacts failed"; }
bin=$("${bazel_cmd[@]}" info "${flags[@]}" bazel-bin 2>/dev/null)
for f in matmul.manifest.json matmul.cpu.o matmul.sm_90a.ptx matmul.gfx942.hsaco \
         matmul.h matmul.a; do
  [ -s "$bin/$f" ] || fail "bazel-bin lacks $f"
done

# The compile action: explicit tools, each declared (a path or none).
"${bazel_cmd[@]}" aquery "${flags[@]}" 'mnemonic("Pallasc", //:matmul_pallasc)' \
  >"$work/aquery.log" 2>&1 || { cat "$work/aquery.log"; fail "bazel aquery failed"; }
for var in PALLASC_EXPLICIT_TOOLS PTXAS CUDA_HOME PALLASC_LD_LLD ROCM_PATH; do
  grep -q "$var=" "$work/aquery.log" ||
    { cat "$work/aquery.log"; fail "the Pallasc action does not set $var"; }
done
echo "check-bazel: PASS"
