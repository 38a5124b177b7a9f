#!/usr/bin/env bash
# tool_check_sparse.sh FASTSTAMP - `check` against a history sampled every 10 s (serve
# --interval-ms 10000): stamps then convert up to 10 s from a sample, beyond what the
# 50 ns and 1 us targets assume, so check says so and judges the accuracy rounds by their
# bounds only, which must still hold. Against the process's own history (every 100 ms)
# it judges them in full and says nothing of the kind.
set -uo pipefail
tool=$1
work=$(mktemp -d /tmp/fts-check-sparse.XXXXXX)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
chmod 700 "$work"
FASTSTAMP_SHARED=0 "$tool" info | grep -q '^backend: *generic$' &&
  { echo "SKIP: no counter in use: there is no history to sample"; exit 77; }

sparse='judged by their bounds only'
FASTSTAMP_SHARED=0 "$tool" check --count 2000 --late 0 > "$work/own" 2>&1
grep -q "$sparse" "$work/own" && fail "the process's own history called sparse: $(cat "$work/own")"
grep -q 'ok (bounds)' "$work/own" && fail "the process's own history judged by bounds: $(cat "$work/own")"

FASTSTAMP_SHARED=0 "$tool" serve --path "$work/clock" --interval-ms 10000 > "$work/serve.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q publishing "$work/serve.out" && break; sleep 0.1; done
grep -q publishing "$work/serve.out" || fail "serve did not publish: $(cat "$work/serve.out")"
FASTSTAMP_SHARED="$work/clock" "$tool" check --count 2000 --late 1 > "$work/out" 2>&1
grep -q "^history sampled every 10.000 s, more than 1 s apart: .*$sparse" "$work/out" ||
  fail "check does not say why it judges less: $(cat "$work/out")"
for round in 'at once' late cross-CPU; do
  line=$(grep "^  $round " "$work/out") || { [ "$round" = cross-CPU ] && continue; fail "no $round round"; }
  [[ $line == *" ok (bounds)" ]] || fail "$round: its bounds did not hold: $line"
done
kill -TERM "${pids[0]}"
wait "${pids[0]}" || fail "serve exited $? on SIGTERM"
pids=()
grep -E '^  (at once|late|cross-CPU) ' "$work/out"
