#!/usr/bin/env bash
# Remote execution of a pallasc Bazel workspace on loopback, against Bazel's own
# Remote Execution API worker (RemoteWorker, from Debian's bazel-bootstrap-source),
# built here with javac against Bazel's server jar (docs/bazel.md, "Remote
# execution").
#
#   bench/bazel/remote_exec.sh PREFIX [WORKSPACE] [JOBS...]
#
#   bench/bazel/gen_variants.py /tmp/variants 500
#   bench/bazel/remote_exec.sh /opt/pallasc /tmp/variants 1 2 4
#
# PREFIX is a pallasc installation (cmake --install build --prefix PREFIX);
# WORKSPACE defaults to examples/bazel; JOBS (default 1 2 4) are the worker's
# concurrent actions. Each `bazel build //...` runs in a fresh output base:
#   local       no remote execution (the baseline);
#   remote, J   --remote_executor with --config=pallasc_remote (bazel/
#               pallasc.bazelrc: --spawn_strategy=remote) against a fresh
#               worker (empty CAS and action cache) running J actions at once;
#   cached      another fresh output base against the last worker: every action
#               is an action-cache hit.
# Every build reads bazel/pallasc.bazelrc. Without --spawn_strategy=remote its
# strategy (processwrapper-sandbox) silently runs the actions locally; the
# script checks
# that every action of a remote build ran remotely and that its artifacts equal
# the local build's, byte for byte.
#
# The worker binds 127.0.0.1 only: the upstream source binds every interface
# (NettyServerBuilder.forPort), so the copy built here is patched to
# forAddress(127.0.0.1). The worker, every Bazel server and the scratch folder
# are removed on exit, whatever happens.
set -euo pipefail
prefix=$(cd "${1:?usage: remote_exec.sh PREFIX [WORKSPACE] [JOBS...]}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
workspace=$(cd "${2:-$src/examples/bazel}" && pwd)
shift $(($# < 2 ? $# : 2))
jobs_list=("$@")
[ ${#jobs_list[@]} -gt 0 ] || jobs_list=(1 2 4)

worker_src=/usr/src/bazel-bootstrap/src/tools/remote/src/main/java
server_jar=/usr/share/bazel/A-server.jar
command -v bazel >/dev/null ||
  { echo "remote_exec: bazel is not installed (apt-get install bazel-bootstrap)" >&2; exit 1; }
[ -d "$worker_src" ] ||
  { echo "remote_exec: $worker_src is missing (apt-get install bazel-bootstrap-source)" >&2; exit 1; }
[ -f "$server_jar" ] || { echo "remote_exec: $server_jar is missing (bazel-bootstrap)" >&2; exit 1; }
command -v javac >/dev/null || { echo "remote_exec: javac is missing (apt-get install default-jdk-headless)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/pallasc-bazel-rexec.XXXXXX")
roots=()
worker_pid=""
stop_worker() {
  if [ -n "$worker_pid" ]; then
    kill "$worker_pid" 2>/dev/null || true
    wait "$worker_pid" 2>/dev/null || true
    worker_pid=""
  fi
}
cleanup() {
  for root in "${roots[@]}"; do
    (cd "$workspace" &&
       bazel --nohome_rc --bazelrc="$src/bazel/pallasc.bazelrc" --output_user_root="$root" shutdown) >/dev/null 2>&1 || true
  done
  stop_worker
  chmod -R u+w "$work" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# The worker: a copy of Debian's source, bound to loopback, compiled against
# the server jar (which bundles gRPC, Netty, protobuf and the REAPI stubs).
mkdir -p "$work/worker-src" "$work/worker-classes"
cp -r "$worker_src/com" "$work/worker-src/"
main="$work/worker-src/com/google/devtools/build/remote/worker/RemoteWorker.java"
sed -i 's/NettyServerBuilder\.forPort(workerOptions\.listenPort)/NettyServerBuilder.forAddress(new java.net.InetSocketAddress("127.0.0.1", workerOptions.listenPort))/' "$main"
grep -q 'forAddress(new java.net.InetSocketAddress("127.0.0.1"' "$main" ||
  { echo "remote_exec: could not bind the worker to 127.0.0.1 (RemoteWorker.java changed?)" >&2; exit 1; }
(cd "$work/worker-src" &&
   javac -nowarn -cp "$server_jar" -d "$work/worker-classes" $(find com -name '*.java')) \
  >"$work/javac.log" 2>&1 || { cat "$work/javac.log" >&2; echo "remote_exec: the worker did not compile" >&2; exit 1; }

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# Starts a worker with empty storage running $1 actions at once; sets
# worker_pid and worker_port.
start_worker() {
  local jobs=$1 dir="$work/worker-$1"
  mkdir -p "$dir/cas" "$dir/work"
  worker_port=$(free_port)
  java -cp "$work/worker-classes:$server_jar" com.google.devtools.build.remote.worker.RemoteWorker \
    --work_path="$dir/work" --cas_path="$dir/cas" --listen_port="$worker_port" --jobs="$jobs" \
    >"$dir/worker.log" 2>&1 &
  worker_pid=$!
  for _ in $(seq 300); do
    python3 -c "import socket, sys; socket.create_connection(('127.0.0.1', $worker_port), 0.2)" 2>/dev/null && return 0
    kill -0 "$worker_pid" 2>/dev/null || break
    sleep 0.2
  done
  cat "$dir/worker.log" >&2
  echo "remote_exec: the worker did not start on 127.0.0.1:$worker_port" >&2
  return 1
}

# One `bazel build //...` in a fresh output base: prints "SECONDS REMOTE HITS
# LOCAL" and leaves a digest of the built artifacts in $work/NAME.sha.
build() { # NAME [bazel flags...]
  local name=$1; shift
  local root="$work/root-$name"
  roots+=("$root")
  local start end
  start=$(date +%s.%N)
  (cd "$workspace" &&
     bazel --nohome_rc --bazelrc="$src/bazel/pallasc.bazelrc" --output_user_root="$root" build \
       --repo_env=PALLASC_PREFIX="$prefix" --symlink_prefix=/ --noshow_progress \
       "$@" //...) >"$work/$name.log" 2>&1 ||
    { cat "$work/$name.log" >&2; echo "remote_exec: the $name build failed" >&2; return 1; }
  end=$(date +%s.%N)
  # Every output of the workspace's rules, by path under bazel-bin.
  (cd "$root" && find . -path '*/bazel-out/*/bin/*' -type f ! -name '*.params' \
     ! -name '*.runfiles_manifest' ! -path '*.runfiles/*' ! -name 'MANIFEST' -print0 |
     sort -z | xargs -0 -r sha256sum | sed -E 's#  \./[^/]+/[^/]+/execroot/[^/]+/bazel-out/[^/]+/bin/#  #') \
    >"$work/$name.sha"
  (cd "$workspace" &&
     bazel --nohome_rc --bazelrc="$src/bazel/pallasc.bazelrc" --output_user_root="$root" shutdown) >/dev/null 2>&1 || true
  chmod -R u+w "$root"; rm -rf "$root"
  local summary remote hits local_n
  summary=$(grep -E "^INFO: [0-9]+ process" "$work/$name.log" | tail -n 1)
  remote=$(echo "$summary" | grep -oE "[0-9]+ remote([.,]|$)" | grep -oE "^[0-9]+" || echo 0)
  hits=$(echo "$summary" | grep -oE "[0-9]+ remote cache hit" | grep -oE "^[0-9]+" || echo 0)
  local_n=$(echo "$summary" | grep -oE "[0-9]+ (processwrapper-sandbox|linux-sandbox|local)" |
              grep -oE "^[0-9]+" | paste -sd+ | bc 2>/dev/null || echo 0)
  echo "$(printf '%.1f' "$(echo "$end - $start" | bc)") ${remote:-0} ${hits:-0} ${local_n:-0}"
}

rows=()
out=$(build local) || exit 1
read -r s r h l <<<"$out"
echo "local: $s s, $l local actions" >&2
rows+=("| local (processwrapper-sandbox) | $s | $r | $h | $l | - |")
local_secs=$s

for jobs in "${jobs_list[@]}"; do
  start_worker "$jobs" || exit 1
  flags=(--config=pallasc_remote --remote_executor="grpc://127.0.0.1:$worker_port" --jobs=16)
  out=$(build "remote-$jobs" "${flags[@]}") || exit 1
  read -r s r h l <<<"$out"
  same=$(cmp -s "$work/local.sha" "$work/remote-$jobs.sha" && echo yes || echo NO)
  echo "remote, $jobs worker jobs: $s s, $r remote, $h hits, $l local; artifacts equal local: $same" >&2
  [ "$l" = 0 ] || { echo "remote_exec: $l actions ran locally under --spawn_strategy=remote" >&2; exit 1; }
  rows+=("| remote execution, worker --jobs=$jobs | $s | $r | $h | $l | $same |")
  if [ "$jobs" = "${jobs_list[-1]}" ]; then
    out=$(build "cached" "${flags[@]}") || exit 1
    read -r s r h l <<<"$out"
    same=$(cmp -s "$work/local.sha" "$work/cached.sha" && echo yes || echo NO)
    echo "cached: $s s, $r remote, $h hits, $l local; artifacts equal local: $same" >&2
    rows+=("| fresh output base, same worker (cached) | $s | $r | $h | $l | $same |")
  fi
  stop_worker
done

n_files=$(wc -l <"$work/local.sha")
echo "| build of ${workspace#$src/} (\`bazel build //...\`, fresh output base) | wall s | actions executed remotely | remote cache hits | actions run locally | $n_files artifacts equal the local build's |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
echo "worker: the RemoteWorker of Bazel $(dpkg-query -W -f='${Version}' bazel-bootstrap-source 2>/dev/null || echo '(version unknown)') on 127.0.0.1 (stopped on exit); $(nproc) cores here"
