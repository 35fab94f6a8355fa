#!/usr/bin/env bash
# Cold build vs remote-cached rebuild of examples/bazel, through Bazel's HTTP
# cache protocol against a local nginx with WebDAV (Debian's nginx-light),
# bound to 127.0.0.1 only (docs/bazel.md, "Remote cache").
#
#   bench/bazel/remote_cache.sh PREFIX [RUNS] [WORKSPACE]
#
# WORKSPACE (default examples/bazel) may be a generated one:
#   bench/bazel/gen_variants.py /tmp/variants 500
#   bench/bazel/remote_cache.sh PREFIX 1 /tmp/variants
#
# PREFIX is a pallasc installation (cmake --install build --prefix PREFIX).
# Each run builds //... (the kernels and kernels_test) three times, each in a fresh
# output base (no local state shared, Bazel's server started anew):
#   cold      no remote cache;
#   populate  --remote_cache: everything built, then uploaded;
#   cached    --remote_cache, another fresh output base: every action a hit.
# Prints a Markdown table of the medians (wall seconds of each `bazel build`,
# the actions run locally and the remote cache hits). nginx and every Bazel
# server it started are stopped on exit, whatever happens.
set -euo pipefail
prefix=$(cd "${1:?usage: remote_cache.sh PREFIX [RUNS]}" && pwd)
runs=${2:-3}
src=$(cd "$(dirname "$0")/../.." && pwd)
workspace=$(cd "${3:-$src/examples/bazel}" && pwd)
command -v bazel >/dev/null || { echo "remote_cache: bazel is not installed (apt-get install bazel-bootstrap)" >&2; exit 1; }
. "$src/bench/lib/nginx_dav.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/pallasc-bazel-cache.XXXXXX")
roots=("$work/root-cold" "$work/root-populate" "$work/root-cached")
cleanup() {
  for root in "${roots[@]}"; do
    (cd "$workspace" &&
       bazel --nohome_rc --output_user_root="$root" shutdown) >/dev/null 2>&1 || true
  done
  nginx_stop
  chmod -R u+w "$work" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
# A signal exits through the EXIT trap too (bash alone would die without it).
trap 'exit 130' INT TERM HUP

# nginx with WebDAV on a free port of 127.0.0.1 (a master and one worker).
nginx_start "$work/nginx" || exit 1
port=$nginx_port

# One `bazel build //...` in a fresh output base: "SECONDS LOCAL HITS MISSED".
build() { # NAME [bazel flags...]
  local name=$1; shift
  local root="$work/root-$name"
  local start end
  start=$(date +%s.%N)
  (cd "$workspace" &&
     bazel --nohome_rc --output_user_root="$root" build \
       --repo_env=PALLASC_PREFIX="$prefix" --symlink_prefix=/ --noshow_progress \
       --execution_log_json_file="$work/$name.exec.json" "$@" //...) >"$work/$name.log" 2>&1 ||
    { cat "$work/$name.log" >&2; echo "remote_cache: the $name build failed" >&2; return 1; }
  end=$(date +%s.%N)
  (cd "$workspace" &&
     bazel --nohome_rc --output_user_root="$root" shutdown) >/dev/null 2>&1 || true
  chmod -R u+w "$root"; rm -rf "$root"
  local summary local_n hits
  summary=$(grep -E "^INFO: [0-9]+ processes" "$work/$name.log" | tail -n 1)
  hits=$(echo "$summary" | grep -oE "[0-9]+ remote cache hit" | grep -oE "^[0-9]+" || echo 0)
  local_n=$(echo "$summary" | grep -oE "[0-9]+ (processwrapper-sandbox|linux-sandbox|local)" |
              grep -oE "^[0-9]+" | paste -sd+ | bc 2>/dev/null || echo 0)
  echo "$(echo "$end - $start" | bc) ${local_n:-0} ${hits:-0} $(missed "$work/$name.exec.json")"
}

# The mnemonics of the spawns that were not remote cache hits, with their
# counts: "CppCompile,Pallascx500" ("-" for none).
missed() {
  python3 - "$1" <<'PY'
import json, sys
text, dec, pos, names = open(sys.argv[1]).read(), json.JSONDecoder(), 0, []
while pos < len(text):
    while pos < len(text) and text[pos].isspace():
        pos += 1
    if pos == len(text):
        break
    spawn, pos = dec.raw_decode(text, pos)
    if not spawn.get("remoteCacheHit"):
        names.append(spawn.get("mnemonic", "?"))
counts = {n: names.count(n) for n in sorted(set(names))}
print(",".join(n if k == 1 else f"{n}x{k}" for n, k in counts.items()) or "-")
PY
}

declare -A secs locals hits
for r in $(seq "$runs"); do
  rm -rf "$work/nginx/cache"; mkdir -p "$work/nginx/cache"
  for name in cold populate cached; do
    flags=()
    [ "$name" = cold ] || flags=(--remote_cache="http://127.0.0.1:$port")
    out=$(build "$name" "${flags[@]}") || exit 1
    read -r s l h m <<<"$out"
    secs[$name]+="$s "; locals[$name]="$l ($m)"; hits[$name]=$h
    echo "run $r, $name: $s s, $l local ($m), $h remote cache hits" >&2
  done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
cache_bytes=$(du -sb "$work/nginx/cache" | cut -f1)
cache_files=$(find "$work/nginx/cache" -type f | wc -l)

echo "| build of ${workspace#$src/} (\`bazel build //...\`, fresh output base) | wall s (median of $runs) | actions run locally (mnemonics) | remote cache hits |"
echo "|---|---|---|---|"
printf "| cold, no remote cache | %.1f | %s | %s |\n" "$(echo "${secs[cold]}" | median)" "${locals[cold]}" "${hits[cold]}"
printf "| cold, --remote_cache (builds, uploads) | %.1f | %s | %s |\n" "$(echo "${secs[populate]}" | median)" "${locals[populate]}" "${hits[populate]}"
printf "| second output base, --remote_cache | %.1f | %s | %s |\n" "$(echo "${secs[cached]}" | median)" "${locals[cached]}" "${hits[cached]}"
echo
echo "cache: $cache_files files, $cache_bytes bytes (nginx WebDAV on 127.0.0.1:$port, stopped on exit)"
