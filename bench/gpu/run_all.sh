#!/usr/bin/env bash
# Every example on an NVIDIA GPU, checked against the CPU result, then
# timed beside the references measured in the same run: cuBLAS (bf16 GEMM,
# f32 out) for the matmul, a device-to-device copy of the same bytes for the
# bandwidth-bound kernels.
#
#   bench/gpu/run_all.sh [BUILD_DIR] [ARCH]
#   (defaults: ./build-gpu, built here if missing; ARCH from nvidia-smi:
#    sm_90a on Hopper, else sm_<major><minor>)
#
# Exits non-zero, loudly, on the first mismatch with the CPU result.
#   1. correctness: each example at its own size, `pallasc run --target
#      cuda:ARCH --check` (every output compared with interpret mode);
#   2. speed: the same kernels at sizes that fill the GPU (only the grid and
#      the arrays grow; the kernels and blocks are the examples'), `--bench`
#      (mean of 50 launches after a checked one at the smaller size).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-"$root/build-gpu"}
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
fail() { echo "run_all.sh: FAILED: $*" >&2; exit 1; }

command -v nvidia-smi > /dev/null || fail "nvidia-smi not found: no NVIDIA GPU here"
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' ')
if [ $# -ge 2 ]; then
  arch=$2
elif [ "${cap%%.*}" = 9 ]; then
  arch=sm_90a
else
  arch=sm_${cap/./}
fi
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "== GPU: $gpu (compute capability $cap), target cuda:$arch"

# Build pallasc (all cores: this machine is the GPU host).
if [ ! -x "$build/bin/pallasc" ]; then
  echo "== building pallasc in $build"
  if [ ! -f "$build/build.ninja" ]; then
    cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
      -DLLVM_USE_LINKER=lld -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
      -DPALLASC_BUILD_TESTS=OFF > /dev/null
  fi
  ninja -C "$build" pallasc > /dev/null || fail "build"
fi
pallasc="$build/bin/pallasc"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$nvcc" -O3 -arch="${arch%a}" "$root/bench/gpu/reference.cu" -lcublas \
  -o "$work/reference" || fail "building bench/gpu/reference.cu"

ex="$root/examples"
run() { # run NAME KERNEL SPEC [flags...]: checked, then timed
  local name=$1 kernel=$2 spec=$3
  shift 3
  "$pallasc" run "$kernel" --spec "$spec" --random-inputs 1 \
    --target "cuda:$arch" "$@" 2>&1 | tee "$work/$name.log" ||
    fail "$name (see above)"
  grep -q "differ" "$work/$name.log" && fail "$name differs from the CPU result"
  return 0
}

echo
echo "== 1. correctness: every example vs the CPU result (interpret mode)"
for e in add softmax layernorm matmul flash_attention scalar_prefetch; do
  echo "-- $e"
  run "$e" "$ex/$e/kernel.mlir" "$ex/$e/spec.json" --check
done

echo
echo "== 2. speed (mean of 50 launches), references in the same run"
spec() { # spec FILE: the JSON on stdin
  cat > "$work/$1.json"
}
# add: 8192 x 8192 f32.
spec add <<'JSON'
{"schema": "pallasc.gridspec/v1", "kernel": "add_kernel", "name": "add",
 "grid": [256, 32],
 "inputs": [{"shape": [8192, 8192], "dtype": "f32"}, {"shape": [8192, 8192], "dtype": "f32"}],
 "outputs": [{"shape": [8192, 8192], "dtype": "f32"}],
 "in_specs": [{"block_shape": [32, 256], "index_map": "(i, j) -> (i, j)"},
              {"block_shape": [32, 256], "index_map": "(i, j) -> (i, j)"}],
 "out_specs": [{"block_shape": [32, 256], "index_map": "(i, j) -> (i, j)"}],
 "cost_estimate": {"flops": 67108864, "bytes_accessed": 805306368, "transcendentals": 0}}
JSON
# softmax: 65536 rows of 1000 f32.
spec softmax <<'JSON'
{"schema": "pallasc.gridspec/v1", "kernel": "softmax_kernel", "name": "softmax",
 "grid": [65536],
 "inputs": [{"shape": [65536, 1000], "dtype": "f32"}],
 "outputs": [{"shape": [65536, 1000], "dtype": "f32"}],
 "in_specs": [{"block_shape": [null, 1024], "index_map": "(i) -> (i, 0)"}],
 "out_specs": [{"block_shape": [null, 1024], "index_map": "(i) -> (i, 0)"}],
 "cost_estimate": {"flops": 262144000, "bytes_accessed": 524288000, "transcendentals": 65536000},
 "compiler_params": {"gpu": {"num_warps": 4}}}
JSON
# layernorm: 65536 rows of 1024 f32.
spec layernorm <<'JSON'
{"schema": "pallasc.gridspec/v1", "kernel": "layernorm_kernel", "name": "layernorm",
 "grid": [8192],
 "inputs": [{"shape": [65536, 1024], "dtype": "f32"}, {"shape": [1024], "dtype": "f32"},
            {"shape": [1024], "dtype": "f32"}],
 "outputs": [{"shape": [65536, 1024], "dtype": "f32"}],
 "in_specs": [{"block_shape": [8, 1024], "index_map": "(i) -> (i, 0)"},
              {"block_shape": [1024], "index_map": "(i) -> (0)"},
              {"block_shape": [1024], "index_map": "(i) -> (0)"}],
 "out_specs": [{"block_shape": [8, 1024], "index_map": "(i) -> (i, 0)"}],
 "cost_estimate": {"flops": 536870912, "bytes_accessed": 536879104, "transcendentals": 65536}}
JSON
# matmul: 4096^3 bf16 -> f32 (the issue's comparison point with cuBLAS).
spec matmul <<'JSON'
{"schema": "pallasc.gridspec/v1", "kernel": "matmul_kernel", "name": "matmul",
 "grid": [32, 32, 32],
 "inputs": [{"shape": [4096, 4096], "dtype": "bf16"}, {"shape": [4096, 4096], "dtype": "bf16"}],
 "outputs": [{"shape": [4096, 4096], "dtype": "f32"}],
 "in_specs": [{"block_shape": [128, 128], "index_map": "(m, n, k) -> (m, k)"},
              {"block_shape": [128, 128], "index_map": "(m, n, k) -> (k, n)"}],
 "out_specs": [{"block_shape": [128, 128], "index_map": "(m, n, k) -> (m, n)"}],
 "scratch_shapes": [{"shape": [128, 128], "dtype": "f32", "memory_space": "vmem"}],
 "cost_estimate": {"flops": 137438953472, "bytes_accessed": 134217728, "transcendentals": 0},
 "compiler_params": {"gpu": {"num_warps": 4, "num_stages": 3},
                     "tpu": {"dimension_semantics": ["parallel", "parallel", "arbitrary"]}}}
JSON
# flash attention: 256 (batch * heads) x 1024 x 64 f16.
spec flash_attention <<'JSON'
{"schema": "pallasc.gridspec/v1", "kernel": "mha_forward_kernel", "name": "flash_attention",
 "grid": [256, 8],
 "inputs": [{"shape": [256, 1024, 64], "dtype": "f16"}, {"shape": [256, 1024, 64], "dtype": "f16"},
            {"shape": [256, 1024, 64], "dtype": "f16"}],
 "outputs": [{"shape": [256, 1024, 64], "dtype": "f16"}],
 "in_specs": [{"block_shape": [null, 128, 64], "index_map": "(b, i) -> (b, i, 0)"},
              {"block_shape": [null, 1024, 64], "index_map": "(b, i) -> (b, 0, 0)"},
              {"block_shape": [null, 1024, 64], "index_map": "(b, i) -> (b, 0, 0)"}],
 "out_specs": [{"block_shape": [null, 128, 64], "index_map": "(b, i) -> (b, i, 0)"}],
 "cost_estimate": {"flops": 68719476736, "bytes_accessed": 134217728, "transcendentals": 268435456},
 "compiler_params": {"gpu": {"num_warps": 4, "num_stages": 2}}}
JSON

summary=()
for e in add softmax layernorm; do
  echo "-- $e"
  run "$e-big" "$ex/$e/kernel.mlir" "$work/$e.json" --bench 50 --bench-copy
  k=$(grep "^bench: $e\|^bench: ${e}_" "$work/$e-big.log" | head -1 | sed 's/.*TFLOP\/s, \([0-9.]*\) GB\/s/\1/')
  c=$(grep "device-to-device copy" "$work/$e-big.log" | sed 's/.* \([0-9.]*\) GB\/s/\1/')
  summary+=("$(printf '%-16s %10s GB/s   copy %10s GB/s   %5.1f%% of copy' "$e" "$k" "$c" "$(awk -v a="$k" -v b="$c" 'BEGIN {print 100 * a / b}')")")
done
echo "-- matmul"
run matmul-big "$ex/matmul/kernel.mlir" "$work/matmul.json" --bench 50
k=$(grep "^bench: matmul" "$work/matmul-big.log" | sed 's/.*ms, \([0-9.]*\) TFLOP\/s.*/\1/')
"$work/reference" gemm 4096 4096 4096 | tee "$work/cublas.log"
c=$(sed 's/.* ms \([0-9.]*\) TFLOP\/s/\1/' "$work/cublas.log")
summary+=("$(printf '%-16s %10s TFLOP/s cuBLAS %8s TFLOP/s %5.1f%% of cuBLAS' matmul "$k" "$c" "$(awk -v a="$k" -v b="$c" 'BEGIN {print 100 * a / b}')")")
echo "-- flash_attention"
run flash_attention-big "$ex/flash_attention/kernel.mlir" "$work/flash_attention.json" --bench 50
k=$(grep "^bench: flash_attention" "$work/flash_attention-big.log" | sed 's/.*ms, \([0-9.]*\) TFLOP\/s.*/\1/')
summary+=("$(printf '%-16s %10s TFLOP/s' flash_attention "$k")")

echo
echo "== summary ($gpu, cuda:$arch; all examples matched the CPU result)"
printf '%s\n' "${summary[@]}"
