#!/usr/bin/env bash
# Count the instructions of N calls of each way to tell the time with callgrind, to show
# that the store path does no hidden work: store_fast_timestamp should cost the ordered
# counter read (lfence; rdtsc) plus a handful of instructions (flag load, branch, mask,
# store), with no call. Counts are exact and do not depend on machine noise, unlike
# timings; perf's hardware counters are often missing in virtual machines.
#
# usage: scripts/callgrind-store.sh [FASTSTAMP_BINARY] [N]
#   defaults: build/faststamp under the source tree, N = 100000
# Each operation runs as `faststamp bench --run-op OP N`; only the operation's own
# loop function (op_*) is counted, callees included. Needs valgrind.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
tool=${1:-$top/build/faststamp}
n=${2:-100000}
command -v valgrind >/dev/null || { echo "SKIP: valgrind is not installed (apt-get install valgrind)"; exit 77; }
[ -x "$tool" ] || { echo "callgrind-store: no faststamp binary at $tool (build first)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# bench --run-op key : the loop function callgrind counts
ops="store:op_store store_relaxed:op_store_relaxed clock_gettime:op_cgt_realtime
     gettimeofday:op_gettimeofday convert:op_convert convert_batch:op_convert_batch"
case $(uname -m) in
  x86_64) ops="$ops rdtsc:op_rdtsc lfence_rdtsc:op_lfence_rdtsc";;
  aarch64) ops="$ops cntvct:op_cntvct isb_cntvct:op_isb_cntvct";;
  riscv64) ops="$ops rdtime:op_rdtime";;
esac

printf '%-16s %14s %12s\n' operation instructions per-call
for pair in $ops; do
  op=${pair%%:*} fn=${pair#*:}
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$op" --collect-atstart=no \
    --toggle-collect="$fn" "$tool" bench --run-op "$op" "$n" >/dev/null 2>"$tmp/log.$op" ||
    { echo "callgrind-store: valgrind failed on $op:" >&2; tail -n 5 "$tmp/log.$op" >&2; exit 1; }
  ir=$(awk '/^(summary|totals):/ { print $2; exit }' "$tmp/cg.$op")
  awk -v op="$op" -v ir="$ir" -v n="$n" 'BEGIN { printf "%-16s %14d %12.2f\n", op, ir, ir / n }'
done
echo "(N = $n; valgrind runs the guest's instructions one by one: a vDSO clock_gettime"
echo " is counted in full, a system call only up to the syscall instruction)"
