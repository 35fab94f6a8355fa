#!/usr/bin/env bash
# Times `pallasc run` (JIT-compiled kernels driven over their grid) on the
# examples at realistic sizes, beside the same computations written as plain
# C++ loops compiled with -O3 (bench/cpu_reference.cpp), in one script run.
#
#   bench/cpu_run.sh [BUILD_DIR]        (default: ./build)
#
# For each kernel: the grid walk time reported by `pallasc run --timing` (the
# kernel called at every grid point, blocks passed in place; best of 3, wall
# clock; inputs from --random-inputs, no output files), the C++ loop's time
# (best of 3, warm), GFLOP/s or GB/s for both, and the ratio pallasc / C++
# (below 1: pallasc is faster). Also shown: the whole execution phase
# (allocating and NaN-filling the outputs, first touch of their pages, the
# grid walk) and the whole `pallasc run` process (parse, lower, JIT, run).
# Single-threaded on both sides.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$root/build"}
pallasc="$build/bin/pallasc"
cxx=${CXX:-clang++-22}
[ -x "$pallasc" ] || { echo "cpu_run.sh: $pallasc not found; build first" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$cxx" -O3 -march=native -std=c++17 "$root/bench/cpu_reference.cpp" \
  -o "$work/cpu_reference"

# spec NAME KERNEL GRID INPUTS OUTPUTS IN_SPECS OUT_SPECS [EXTRA]
spec() {
  cat > "$work/$1.json" <<JSON
{"schema": "pallasc.gridspec/v1", "kernel": "$2", "grid": $3,
 "inputs": $4, "outputs": $5, "in_specs": $6, "out_specs": $7 $8}
JSON
}
f32() { echo "{\"shape\": $1, \"dtype\": \"f32\"}"; }

ex="$root/examples"
# add: 4096 x 4096 f32, 32 x 256 blocks.
b='{"block_shape": [32, 256], "index_map": "(i, j) -> (i, j)"}'
spec add add_kernel "[128, 16]" "[$(f32 '[4096, 4096]'), $(f32 '[4096, 4096]')]" \
  "[$(f32 '[4096, 4096]')]" "[$b, $b]" "[$b]" ""
# softmax: 4096 rows of 1000 in 1024-wide masked blocks (the example), and
# 4096 rows of 4096.
b='{"block_shape": [null, 1024], "index_map": "(i) -> (i, 0)"}'
spec softmax softmax_kernel "[4096]" "[$(f32 '[4096, 1000]')]" \
  "[$(f32 '[4096, 1000]')]" "[$b]" "[$b]" ""
b='{"block_shape": [null, 4096], "index_map": "(i) -> (i, 0)"}'
spec softmax4096 softmax_kernel "[4096]" "[$(f32 '[4096, 4096]')]" \
  "[$(f32 '[4096, 4096]')]" "[$b]" "[$b]" ""
# layernorm: 16384 x 1024, 8 rows per step.
b='{"block_shape": [8, 1024], "index_map": "(i) -> (i, 0)"}'
v='{"block_shape": [1024], "index_map": "(i) -> (0)"}'
spec layernorm layernorm_kernel "[2048]" \
  "[$(f32 '[16384, 1024]'), $(f32 '[1024]'), $(f32 '[1024]')]" \
  "[$(f32 '[16384, 1024]')]" "[$b, $v, $v]" "[$b]" ""
# matmul: 2048 x 2048 x 2048, bf16 in, f32 out, 128 x 128 blocks.
spec matmul matmul_kernel "[16, 16, 16]" \
  '[{"shape": [2048, 2048], "dtype": "bf16"}, {"shape": [2048, 2048], "dtype": "bf16"}]' \
  "[$(f32 '[2048, 2048]')]" \
  '[{"block_shape": [128, 128], "index_map": "(m, n, k) -> (m, k)"}, {"block_shape": [128, 128], "index_map": "(m, n, k) -> (k, n)"}]' \
  '[{"block_shape": [128, 128], "index_map": "(m, n, k) -> (m, n)"}]' \
  ', "scratch_shapes": [{"shape": [128, 128], "dtype": "f32"}]'
# flash attention: the example's size, 8 heads x 1024 x 64 f16.
cp "$ex/flash_attention/spec.json" "$work/flash.json"

# name kernel-file reference-name bytes-or-flops unit
benches=(
  "add $ex/add/kernel.mlir add $((3 * 4 * 4096 * 4096)) GB/s"
  "softmax $ex/softmax/kernel.mlir softmax $((2 * 4 * 4096 * 1000)) GB/s"
  "softmax4096 $root/bench/kernels/softmax_4096.mlir softmax4096 $((2 * 4 * 4096 * 4096)) GB/s"
  "layernorm $ex/layernorm/kernel.mlir layernorm $((2 * 4 * 16384 * 1024)) GB/s"
  "matmul $ex/matmul/kernel.mlir matmul $((2 * 2048 * 2048 * 2048)) GFLOP/s"
  "flash $ex/flash_attention/kernel.mlir flash $((4 * 8 * 1024 * 1024 * 64)) GFLOP/s"
)

printf '%-12s %-15s %10s %10s %10s %10s %7s %9s %8s\n' kernel size "pallasc ms" rate "C++ ms" rate ratio "exec ms" "total s"
for entry in "${benches[@]}"; do
  read -r name kernel ref work_amount unit <<< "$entry"
  best=""
  exec_best=""
  total=""
  for _ in 1 2 3; do
    start=$(date +%s.%N)
    line=$("$pallasc" run "$kernel" --spec "$work/$name.json" --random-inputs 1 \
             --timing 2>&1 >/dev/null | grep '^pallasc run:')
    end=$(date +%s.%N)
    ms=$(sed -E 's/.*grid walk ([0-9.]+) ms.*/\1/' <<< "$line")
    ems=$(sed -E 's/.*execution ([0-9.]+) ms.*/\1/' <<< "$line")
    exec_best=$(awk -v a="${exec_best:-1e30}" -v b="$ems" 'BEGIN { print (b < a) ? b : a }')
    t=$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')
    best=$(awk -v a="${best:-1e30}" -v b="$ms" 'BEGIN { print (b < a) ? b : a }')
    total=$(awk -v a="${total:-1e30}" -v b="$t" 'BEGIN { print (b < a) ? b : a }')
  done
  cms=$("$work/cpu_reference" "$ref" | awk '{ print $2 }')
  size=$(sed -n 's/.*"inputs": \[{"shape": \(\[[0-9, ]*\]\).*/\1/p' "$work/$name.json" | head -1)
  [ -n "$size" ] || size="[8, 1024, 64]"
  awk -v n="$name" -v s="$size" -v p="$best" -v c="$cms" -v w="$work_amount" \
      -v u="$unit" -v t="$total" -v e="$exec_best" 'BEGIN {
    scale = (u == "GB/s") ? 1e6 : 1e6;  # bytes or flops per ms -> G per s
    printf "%-12s %-15s %10.2f %6.2f %-3s %10.2f %6.2f %-3s %7.2f %9.2f %8.2f\n",
           n, s, p, w / p / scale, (u == "GB/s" ? "GB" : "GF"), c,
           w / c / scale, (u == "GB/s" ? "GB" : "GF"), p / c, e, t }'
done
echo "(rate: GB/s of array traffic or GFLOP/s; ratio: pallasc grid walk / C++ loop)"
