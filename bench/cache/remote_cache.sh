#!/usr/bin/env bash
# pallasc's compile cache shared through an HTTP server (--cache-dir
# http://...): nginx with WebDAV from Debian (nginx-light), bound to
# 127.0.0.1, as a CI team would run it (docs/cache.md).
#
#   bench/cache/remote_cache.sh [PALLASC] [RUNS]
#
# Each run compiles every example for cpu, cuda:sm_80, cuda:sm_90a,
# and rocm:gfx942 with one `pallasc build`, three ways:
#   local     no cache;
#   populate  --cache-dir http://...: every job a miss, then a PUT;
#   machine2  the same URL, nothing local (another CI machine): every job a
#             hit; its outputs are checked byte for byte against `local`'s.
# Prints a Markdown table of the medians. nginx is stopped on exit.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
pallasc=$(realpath "${1:-$root/build/bin/pallasc}")
runs=${2:-3}
. "$root/bench/lib/nginx_dav.sh"
work=$(mktemp -d)
cleanup() {
  nginx_stop
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

nginx_start "$work/nginx" || exit 1
port=$nginx_port
url="http://127.0.0.1:$port/pallasc"

# The build list: every example for every target kind.
python3 - "$root" "$work/list.json" <<'PY'
import json, os, sys
root, out = sys.argv[1:3]
jobs = []
for name in sorted(os.listdir(os.path.join(root, "examples"))):
    d = os.path.join(root, "examples", name)
    if os.path.exists(os.path.join(d, "kernel.mlir")):
        jobs.append({"kernel": os.path.join(d, "kernel.mlir"),
                     "spec": os.path.join(d, "spec.json"),
                     "targets": ["cpu", "cuda:sm_80", "cuda:sm_90a",
                                 "rocm:gfx942"],
                     "out_dir": name})
json.dump(jobs, open(out, "w"))
PY

build() { # NAME OUTDIR [cache flags...]: prints the wall seconds
  local name=$1 out=$2; shift 2
  local start end
  start=$(date +%s.%N)
  (cd "$work" && mkdir -p "$out" && env -u PALLASC_CACHE_DIR "$pallasc" build list.json -o "$out" -q "$@") \
    >"$work/$name.log" 2>&1 || { cat "$work/$name.log" >&2; echo "remote_cache: the $name build failed" >&2; exit 1; }
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}

declare -A secs
for r in $(seq "$runs"); do
  rm -rf "$work/nginx/cache" "$work"/out-*; mkdir -p "$work/nginx/cache"
  l=$(build local out-local --no-cache)
  p=$(build populate out-populate --cache-dir "$url")
  m=$(build machine2 out-machine2 --cache-dir "$url")
  secs[local]+="$l "; secs[populate]+="$p "; secs[machine2]+="$m "
  diff -r "$work/out-local" "$work/out-machine2" >/dev/null ||
    { echo "remote_cache: the cached outputs differ from the local compile's" >&2; exit 1; }
  grep -q warning "$work/machine2.log" && { cat "$work/machine2.log" >&2; exit 1; }
  echo "run $r: local $l s, populate $p s, machine2 $m s" >&2
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
entries=$(find "$work/nginx/cache" -type f | wc -l)
bytes=$(du -sb "$work/nginx/cache" | cut -f1)
jobs=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))))" "$work/list.json")
echo "| pallasc build of $jobs examples x 4 targets | wall s (median of $runs) | vs no cache |"
echo "|---|---|---|"
l=$(echo "${secs[local]}" | median); p=$(echo "${secs[populate]}" | median); m=$(echo "${secs[machine2]}" | median)
printf "| no cache | %.2f | 1.00x |\n" "$l"
printf "| --cache-dir %s, empty server (compile + PUT) | %.2f | %.2fx |\n" "http://..." "$p" "$(echo "$p / $l" | bc -l)"
printf "| same URL, another machine (every job a GET hit) | %.2f | %.2fx |\n" "$m" "$(echo "$m / $l" | bc -l)"
echo
echo "server: nginx WebDAV on 127.0.0.1:$port, $entries entries, $bytes bytes; outputs of the hits byte-identical to the uncached build"
