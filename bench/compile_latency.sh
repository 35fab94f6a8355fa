#!/usr/bin/env bash
# Compile latency of the CUDA target: a whole `pallasc` run per example
# (parse, call-level transforms, pallas-to-gpu, NVVM, PTX, manifest) beside
# `nvcc -ptx` on an equivalent hand-written CUDA C++ kernel (bench/cuda/),
# for the same architecture, in the same script run. Median wall time of
# RUNS runs each; the ratio is pallasc / nvcc (the goal: at most 0.2,
# well under nvcc).
#
#   bench/compile_latency.sh [BUILD_DIR] [ARCH] [RUNS]
#   (defaults: ./build, sm_90, 10)
#
# `pallasc` validates its PTX with `ptxas -v` when ptxas is installed (and
# records registers/spills in the manifest); `nvcc -ptx` does not assemble.
# The comparable column is therefore pallasc with PTXAS=none; the default
# run (with ptxas) is shown beside it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$root/build"}
arch=${2:-sm_90}
runs=${3:-10}
pallasc="$build/bin/pallasc"
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
[ -x "$pallasc" ] || { echo "compile_latency.sh: $pallasc not found; build first" >&2; exit 1; }
[ -x "$nvcc" ] || { echo "compile_latency.sh: nvcc not found at $nvcc (set NVCC)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Median wall time in seconds of RUNS executions of "$@".
median() {
  local times=()
  for ((i = 0; i < runs; ++i)); do
    local t0 t1
    t0=$(date +%s%N)
    "$@" > /dev/null 2>&1 || { echo "compile_latency.sh: failed: $*" >&2; exit 1; }
    t1=$(date +%s%N)
    times+=($(( (t1 - t0) / 1000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; printf "%.3f", m / 1e6}'
}

printf '%-16s %12s %14s %12s %8s\n' kernel "pallasc (s)" "+ptxas -v (s)" "nvcc -ptx (s)" ratio
for pair in add:add softmax:softmax layernorm:layernorm matmul:matmul \
            flash_attention:flash_attention scalar_prefetch:gather_rows; do
  ex=${pair%%:*}
  cu=${pair##*:}
  kernel="$root/examples/$ex/kernel.mlir"
  spec="$root/examples/$ex/spec.json"
  p=$(median env PTXAS=none "$pallasc" "$kernel" --spec "$spec" --target "cuda:$arch" -o "$work/p-$ex")
  pv=$(median "$pallasc" "$kernel" --spec "$spec" --target "cuda:$arch" -o "$work/v-$ex")
  n=$(median "$nvcc" -ptx -arch="$arch" "$root/bench/cuda/$cu.cu" -o "$work/$cu.ptx")
  printf '%-16s %12s %14s %12s %8s\n' "$ex" "$p" "$pv" "$n" "$(awk -v a="$p" -v b="$n" 'BEGIN {printf "%.3f", a / b}')"
done
echo "(median of $runs runs each; ratio = pallasc without ptxas / nvcc -ptx; arch $arch)"
