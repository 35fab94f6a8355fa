# Sourced by the benchmarks that compare `pallasc build` with separate
# processes (batch_build.sh, throughput.sh).
#   write_build_list PALLASC ROOT WORK "TARGETS" BATCH_DIR SEPARATE_DIR
# Probes every example x TARGETS pair (a pair that does not compile is left
# out, with a line saying so) and writes the pairs that compile as
# WORK/list.json (a build list whose out_dirs are BATCH_DIR/NAME) and as
# WORK/commands.txt (one pallasc command line a compile, -o SEPARATE_DIR/NAME).
# Sets build_list_count to the number of compiles.
write_build_list() {
  local pallasc=$1 root=$2 work=$3 targets=$4 batch=$5 separate=$6
  local list="$work/list.json" cmds="$work/commands.txt" dir ex t out
  echo "[" > "$list"
  : > "$cmds"
  build_list_count=0
  for dir in "$root"/examples/*/; do
    ex=$(basename "$dir")
    [ -f "$dir/kernel.mlir" ] && [ -f "$dir/spec.json" ] || continue
    for t in $targets; do
      out="$ex-${t//:/_}"
      if ! "$pallasc" "$dir/kernel.mlir" --spec "$dir/spec.json" --target "$t" -o "$work/probe/$out" > /dev/null 2>&1; then
        echo "(left out: $ex $t does not compile)"
        continue
      fi
      [ $build_list_count -gt 0 ] && echo "," >> "$list"
      printf '{"kernel": "%s", "spec": "%s", "targets": ["%s"], "out_dir": "%s"}' \
        "$dir/kernel.mlir" "$dir/spec.json" "$t" "$batch/$out" >> "$list"
      printf '%s\n' "$dir/kernel.mlir --spec $dir/spec.json --target $t -o $separate/$out" >> "$cmds"
      build_list_count=$((build_list_count + 1))
    done
  done
  echo "]" >> "$list"
}
