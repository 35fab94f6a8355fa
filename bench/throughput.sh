#!/usr/bin/env bash
# Compile throughput, in one run, each pallasc number beside a
# peer measured in the same run:
#   1. cold compile of each example for cuda:ARCH: pallasc without ptxas
#      (PTXAS=none) vs `nvcc -ptx` on the equivalent CUDA kernel of
#      bench/cuda/ (no ptxas on either side), and `pallasc --emit=cubin` vs
#      `nvcc -cubin` (ptxas on both sides);
#   2. a warm cache hit (the same compile, the cache holding it) vs
#      `pallasc --version` (process start-up alone);
#   3. every example x {cuda:sm_80, cuda:sm_90a, rocm:gfx942, tpu} (the pairs
#      that compile) as one `pallasc build -j JOBS` vs the same compiles as
#      separate processes, one after another;
#   4. `pallasc run` of the flash attention example, cold (no cache) vs
#      cached: the time before executing (from --timing) and the whole
#      process.
# Prints times (median of RUNS runs; the batch: best of BATCH_RUNS) and
# ratios; asserts nothing. The ratios pallasc aims at: 1. <= 0.2 and
# <= 0.5, 2. <= 1.5, 3. >= 1.6 (on 2 quiet cores), 4. < 0.1.
#
#   bench/throughput.sh [BUILD_DIR] [ARCH] [RUNS] [JOBS]
#   (defaults: ./build, sm_90a, 5, 2; BATCH_RUNS=2)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-"$root/build"}" && pwd)
arch=${2:-sm_90a}
runs=${3:-5}
jobs=${4:-2}
batch_runs=${BATCH_RUNS:-2}
pallasc="$build/bin/pallasc"
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
[ -x "$pallasc" ] || { echo "throughput.sh: $pallasc not found; build first" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset PALLASC_CACHE_DIR PALLASC_CACHE_MAX_SIZE

# Wall time in microseconds of one execution of "$@" (output discarded).
wall_us() {
  local t0 t1
  t0=$(date +%s%N)
  "$@" > /dev/null 2>&1 || { echo "throughput.sh: failed: $*" >&2; exit 1; }
  t1=$(date +%s%N)
  echo $(( (t1 - t0) / 1000 ))
}
# Median of the numbers on stdin.
median_of() {
  grep . | sort -n | awk '{a[NR]=$1} END {m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; printf "%.0f", m}'
}
# Median wall time in seconds of RUNS executions of "$@".
median() {
  for ((i = 0; i < runs; ++i)); do wall_us "$@"; done | median_of |
    awk '{printf "%.3f", $1 / 1e6}'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", (b > 0) ? a / b : 0}'; }

examples="add:add softmax:softmax layernorm:layernorm matmul:matmul flash_attention:flash_attention scalar_prefetch:gather_rows"

echo "== 1. cold compile, cuda:$arch (median of $runs)"
if [ -x "$nvcc" ]; then
  printf '%-16s %10s %10s %7s   %12s %11s %7s\n' kernel pallasc "nvcc -ptx" ratio "--emit=cubin" "nvcc -cubin" ratio
  for pair in $examples; do
    ex=${pair%%:*}
    cu=${pair##*:}
    kernel="$root/examples/$ex/kernel.mlir"
    spec="$root/examples/$ex/spec.json"
    p=$(median env PTXAS=none "$pallasc" "$kernel" --spec "$spec" --target "cuda:$arch" -o "$work/p-$ex")
    n=$(median "$nvcc" -ptx -arch="$arch" "$root/bench/cuda/$cu.cu" -o "$work/$cu.ptx")
    pc=$(median "$pallasc" "$kernel" --spec "$spec" --target "cuda:$arch" --emit=cubin -o "$work/c-$ex")
    nc=$(median "$nvcc" -cubin -arch="$arch" "$root/bench/cuda/$cu.cu" -o "$work/$cu.cubin")
    printf '%-16s %10s %10s %7s   %12s %11s %7s\n' "$ex" "$p" "$n" "$(ratio "$p" "$n")" "$pc" "$nc" "$(ratio "$pc" "$nc")"
  done
  echo "(seconds; ratio = pallasc / nvcc; the CUDA kernels are bench/cuda/*.cu)"
else
  echo "(skipped: no nvcc at $nvcc; set NVCC)"
fi

echo
echo "== 2. warm cache hit vs pallasc --version (median of $runs)"
fa="$root/examples/flash_attention/kernel.mlir"
fa_spec="$root/examples/flash_attention/spec.json"
hit_cmd=("$pallasc" "$fa" --spec "$fa_spec" --target "cuda:$arch" --target tpu --cache-dir "$work/cache" -o "$work/hit")
"${hit_cmd[@]}" > /dev/null 2>&1
v=$(median "$pallasc" --version)
h=$(median "${hit_cmd[@]}")
printf 'pallasc --version %.3f s, cache hit (flash_attention cuda:%s + tpu) %.3f s, ratio %s\n' "$v" "$arch" "$h" "$(ratio "$h" "$v")"

echo
echo "== 3. batch build -j $jobs vs separate processes (best of $batch_runs)"
list="$work/list.json"
cmds="$work/commands.txt"
. "$root/bench/lib/build_list.sh"
write_build_list "$pallasc" "$root" "$work" "cuda:sm_80 cuda:sm_90a rocm:gfx942 tpu" "$work/batch" "$work/separate"
n=$build_list_count
separate() { while read -r line; do "$pallasc" $line; done < "$cmds"; }
best_s=0 best_b=0
for ((r = 0; r < batch_runs; ++r)); do
  rm -rf "$work/separate" "$work/batch"
  s=$(wall_us separate)
  b=$(wall_us "$pallasc" build "$list" -j "$jobs" -q)
  [ "$best_s" = 0 ] || [ "$s" -lt "$best_s" ] && best_s=$s
  [ "$best_b" = 0 ] || [ "$b" -lt "$best_b" ] && best_b=$b
done
diff -r "$work/separate" "$work/batch" > /dev/null || echo "throughput.sh: warning: the batch wrote other bytes than the separate processes" >&2
printf '%d compiles: separate processes %.3f s, pallasc build -j %d %.3f s, ratio separate/batch %s\n' \
  "$n" "$(awk -v a="$best_s" 'BEGIN {print a / 1e6}')" "$jobs" "$(awk -v a="$best_b" 'BEGIN {print a / 1e6}')" "$(ratio "$best_s" "$best_b")"

echo
echo "== 4. pallasc run, flash_attention: cold vs cached JIT object (median of $runs)"
run_cmd=("$pallasc" run "$fa" --spec "$fa_spec" --random-inputs 1 --timing)
# The milliseconds before executing: the --timing line's phases up to
# "execution" (front end, cache lookup, lowering, JIT / cached object).
before_ms() {
  "$@" 2>&1 >/dev/null | sed -n 's/^pallasc run: \(.*\), execution.*/\1/p' |
    tr ',' '\n' | awk '{for (i = 1; i < NF; ++i) if ($(i+1) == "ms") s += $i} END {printf "%.0f", s}'
}
"${run_cmd[@]}" --cache-dir "$work/runcache" > /dev/null 2>&1
cold_b=$(for ((i = 0; i < runs; ++i)); do before_ms "${run_cmd[@]}" --no-cache; echo; done | median_of)
hot_b=$(for ((i = 0; i < runs; ++i)); do before_ms "${run_cmd[@]}" --cache-dir "$work/runcache"; echo; done | median_of)
cold_w=$(median "${run_cmd[@]}" --no-cache)
hot_w=$(median "${run_cmd[@]}" --cache-dir "$work/runcache")
printf 'before executing: cold %s ms, cached %s ms, ratio %s\n' "$cold_b" "$hot_b" "$(ratio "$hot_b" "$cold_b")"
printf 'whole process:    cold %s s, cached %s s, ratio %s (execution itself is the same in both)\n' "$cold_w" "$hot_w" "$(ratio "$hot_w" "$cold_w")"
