#!/usr/bin/env bash
# Runs the test suite (the README's test command, extra arguments passed to pytest) while 4
# busy loops and a disk writer (dd with fsync) run beside it, as the "a main job that never
# flakes" issue asks of the suite. Prints the load average at the start and the end.
#
#   tools/suite_under_load.sh [PYTEST ARGS...]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=$(mktemp -d /tmp/suite-under-load.XXXXXX)
pids=()
for _ in 1 2 3 4; do (while :; do :; done) & pids+=($!); done
(while :; do dd if=/dev/zero of="$out/disk" bs=1M count=256 conv=fsync status=none; done) &
pids+=($!)
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$out"' EXIT
echo "suite under load: 4 busy loops and a disk writer; load at start $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s)
tools/bootstrap.sh test "$@"
rc=$?
echo "suite under load: rc=$rc in $(($(date +%s) - start)) s; load at end $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$rc"
