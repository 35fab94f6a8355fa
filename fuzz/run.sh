#!/usr/bin/env bash
# Builds the libFuzzer targets (ASan + UBSan + coverage) and runs each for
# SECONDS (default 60), seeding the corpus from examples/ and keeping it in
# fuzz/corpus-out/<target> (not committed). The pipeline target's inputs are
# a kernel, a line `// ----- spec -----`, then a grid spec (FuzzPipeline.cpp).
# Crashes are written to fuzz/findings/; add each one to lit/Robustness/ as a
# regression test.
#   fuzz/run.sh [SECONDS] [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
build=${2:-"$root/build-asan"}
bash "$root/scripts/build.sh" "$build" -DPALLASC_ENABLE_SANITIZERS=ON \
  -DPALLASC_BUILD_FUZZERS=ON
ninja -C "$build" pallasc-fuzz-spec pallasc-fuzz-kernel pallasc-fuzz-pipeline
mkdir -p "$root/fuzz/findings"
status=0
for target in spec kernel pipeline; do
  corpus="$root/fuzz/corpus-out/$target"
  mkdir -p "$corpus"
  case $target in
    spec) for f in "$root"/examples/*/spec.json; do
            cp "$f" "$corpus/$(basename "$(dirname "$f")").json"; done ;;
    kernel) for f in "$root"/examples/*/kernel.mlir; do
              cp "$f" "$corpus/$(basename "$(dirname "$f")").mlir"; done ;;
    pipeline) for d in "$root"/examples/*/; do
                # examples/consumer is a CMake project, not a kernel.
                [ -f "$d/kernel.mlir" ] && [ -f "$d/spec.json" ] || continue
                { cat "$d/kernel.mlir"; printf '\n// ----- spec -----\n'
                  cat "$d/spec.json"; } >"$corpus/$(basename "$d").txt"; done ;;
  esac
  echo "fuzz: pallasc-fuzz-$target for ${seconds}s"
  # A fresh MLIRContext per input is heavy under ASan (quarantine recycling
  # in delete): a small quarantine and a generous per-input timeout keep a
  # loaded machine from reporting slow units as hangs. Leaks are not checked
  # (MLIR's caches would read as leaks): -detect_leaks=0 also keeps libFuzzer
  # from running an input twice when it allocated more than it freed.
  if ! ASAN_OPTIONS=detect_leaks=0:quarantine_size_mb=64 \
      "$build/bin/pallasc-fuzz-$target" \
      -max_total_time="$seconds" -max_len=65536 -timeout=60 -rss_limit_mb=4096 \
      -dict="$root/fuzz/pallasc.dict" -detect_leaks=0 \
      -artifact_prefix="$root/fuzz/findings/$target-" -print_final_stats=1 \
      "$corpus" 2>"$build/fuzz-$target.log"; then
    echo "fuzz: pallasc-fuzz-$target FAILED (see $build/fuzz-$target.log)"
    tail -40 "$build/fuzz-$target.log"
    status=1
  else
    grep -E "stat::number_of_executed_units|cov:" "$build/fuzz-$target.log" | tail -2
  fi
done
exit $status
