#!/usr/bin/env bash
# `pallasc build` against the same compiles as separate processes: every
# example x {cuda:sm_80, cuda:sm_90a, rocm:gfx942, tpu} (the pairs that
# compile; a kernel a target cannot take is left out), one job per pair,
# each into a directory of its own. Prints the wall time of
#   - the separate processes, one after another (a plain loop, or make -j1);
#   - the separate processes, JOBS at a time (xargs -P, as make -jJOBS);
#   - `pallasc build -j JOBS` (one process, JOBS worker threads);
# and the ratios separate / batch (best of RUNS runs each). It also checks
# that the batch wrote the same bytes as the separate processes.
#
#   bench/batch_build.sh [BUILD_DIR] [JOBS] [RUNS]   (defaults: ./build, 2, 3)
#
# The default run validates PTX with ptxas (as a default compile does); set
# PTXAS=none to leave it out of both sides.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$root/build"}
jobs=${2:-2}
runs=${3:-3}
build=$(cd "$build" && pwd)
pallasc="$build/bin/pallasc"
[ -x "$pallasc" ] || { echo "batch_build.sh: $pallasc not found; build first" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset PALLASC_CACHE_DIR

# The pairs that compile, as a build list and as one command line per line.
targets="cuda:sm_80 cuda:sm_90a rocm:gfx942 tpu"
list="$work/list.json"
cmds="$work/commands.txt"
. "$root/bench/lib/build_list.sh"
write_build_list "$pallasc" "$root" "$work" "$targets" OUT OUT
n=$build_list_count
[ $n -gt 0 ] || { echo "batch_build.sh: nothing compiles" >&2; exit 1; }

# Best wall time in seconds of RUNS runs of the shell command $1, with OUT
# a fresh directory each run.
best() {
  local best_us=""
  for ((i = 0; i < runs; ++i)); do
    rm -rf "$work/OUT"
    local t0 t1
    t0=$(date +%s%N)
    ( cd "$work" && eval "$1" ) > /dev/null 2>&1 || { echo "batch_build.sh: failed: $1" >&2; exit 1; }
    t1=$(date +%s%N)
    local us=$(( (t1 - t0) / 1000 ))
    if [ -z "$best_us" ] || [ "$us" -lt "$best_us" ]; then best_us=$us; fi
  done
  awk -v u="$best_us" 'BEGIN {printf "%.3f", u / 1e6}'
}

seq_s=$(best "while read -r line; do \"$pallasc\" \$line || exit 1; done < \"$cmds\"")
mv "$work/OUT" "$work/separate"
par_s=$(best "xargs -P $jobs -L 1 \"$pallasc\" < \"$cmds\"")
batch_s=$(best "\"$pallasc\" build \"$list\" -j $jobs")
diff -r "$work/separate" "$work/OUT" > /dev/null || { echo "batch_build.sh: the batch wrote other bytes than the separate processes" >&2; exit 1; }

echo "$n compiles (examples x {$targets}), best of $runs runs, $(nproc) CPUs"
printf '%-40s %8s\n' "separate processes, one at a time (s)" "$seq_s"
printf '%-40s %8s\n' "separate processes, $jobs at a time (s)" "$par_s"
printf '%-40s %8s\n' "pallasc build -j $jobs (s)" "$batch_s"
printf '%-40s %8s\n' "ratio one-at-a-time / batch" "$(awk -v a="$seq_s" -v b="$batch_s" 'BEGIN {printf "%.2fx", a / b}')"
printf '%-40s %8s\n' "ratio $jobs-at-a-time / batch" "$(awk -v a="$par_s" -v b="$batch_s" 'BEGIN {printf "%.2fx", a / b}')"
echo "(outputs of the batch identical to the separate processes': yes)"
