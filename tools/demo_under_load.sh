#!/usr/bin/env bash
# Plays `catsctl demo` N times in a row (default 20) while 4 busy loops and a disk writer
# (dd with fsync) run beside it, as the "a main job that never flakes" issue asks; stops at the
# first failure. Prints one line per run (exit code, seconds, load average at its start) and
# keeps each run's output in a temporary folder it names.
#
#   tools/demo_under_load.sh [N]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
runs=${1:-20}
out=$(mktemp -d /tmp/demo-under-load.XXXXXX)
pids=()
for _ in 1 2 3 4; do (while :; do :; done) & pids+=($!); done
(while :; do dd if=/dev/zero of="$out/disk" bs=1M count=256 conv=fsync status=none; done) &
pids+=($!)
trap 'kill "${pids[@]}" 2>/dev/null; rm -f "$out/disk"' EXIT
echo "demo under load: $runs runs, output in $out"
for n in $(seq 1 "$runs"); do
  start=$(date +%s)
  load=$(cut -d' ' -f1 /proc/loadavg)
  .venv/bin/catsctl demo >"$out/run-$n.log" 2>&1
  rc=$?
  echo "run $n rc=$rc $(($(date +%s) - start)) s load-at-start $load: $(grep -E '^[0-9]+/[0-9]+ steps' "$out/run-$n.log")"
  [ "$rc" -eq 0 ] || exit "$rc"
done
