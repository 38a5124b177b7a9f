#!/usr/bin/env bash
# Real kernel time faults in a QEMU guest (TCG; this machine's clock is never touched):
# one boot per scenario, each stamping every ~5 us for 1.5 s before the fault and 2-3 s
# after it, then checking every conversion's error bound against its clock_gettime
# bracket (scripts/guest/run-scenario; the program is tests/guest/guest_stamp.c).
# Fails if any scenario has a conversion outside its bound, a fault that did not take
# effect, or (in `none`) a step or suspend reported without one. Skips only when QEMU
# cannot run here (not installable, or no Debian mirror for the kernel).
# FTS_GUEST_SCENARIOS="a b" runs a subset. Consoles: $FTS_OUT/guest/NAME.log. About two
# minutes on 2 cores (12 boots of ~9 s), plus a one-time kernel download.
set -uo pipefail
read -r -a scenarios <<< "${FTS_GUEST_SCENARIOS:-$("$FTS_TOP/scripts/guest/run-scenario" --list)}"

"$FTS_TOP/scripts/guest/build"
rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || { echo "guest: build failed"; exit 1; }
export FTS_GUEST_PREBUILT=1

stage_start=$(date +%s)
rows=() failed=()
for s in "${scenarios[@]}"; do
  echo "=== scenario $s"
  t0=$(date +%s)
  out=$("$FTS_TOP/scripts/guest/run-scenario" "$s" 2>&1)
  rc=$?
  echo "$out"
  verdict=ok
  [ $rc -eq 0 ] || { verdict=FAIL; failed+=("$s"); }
  rows+=("$verdict $(( $(date +%s) - t0 )) scenario=$s $(echo "$out" | grep '^FTS-RESULT' | tail -n 1)")
done

# One row per scenario: the FTS-RESULT fields that tell a verdict ("-": not reported).
cols="scenario fault_ok stamps outside worst_miss_ns straddling immediate immediate_outside
      wide wide_from_us wide_to_us max_err_ns steps_seen suspends_seen tagged backend"
echo
printf '%s\n' "${rows[@]}" | awk -v cols="verdict secs $cols" '
  BEGIN { n = split(cols, c, /[ \n]+/); for (i = 1; i <= n; i++) { t[0, i] = c[i]; w[i] = length(c[i]) } }
  { delete f
    f["verdict"] = $1; f["secs"] = $2
    for (i = 3; i <= NF; i++) if ($i ~ /=/) { k = v = $i; sub(/=.*/, "", k); sub(/^[^=]*=/, "", v); f[k] = v }
    for (i = 1; i <= n; i++) { t[NR, i] = (c[i] in f) ? f[c[i]] : "-"; if (length(t[NR, i]) > w[i]) w[i] = length(t[NR, i]) } }
  END { for (r = 0; r <= NR; r++) { for (i = 1; i <= n; i++) printf "%-" w[i] "s ", t[r, i]; print "" } }'
echo "guest stage: ${#scenarios[@]} scenarios in $(( $(date +%s) - stage_start ))s"
if [ ${#failed[@]} -gt 0 ]; then
  echo "guest scenarios failed: ${failed[*]} (reproduce one: scripts/guest/run-scenario NAME)"
  exit 1
fi
echo "every guest scenario passed"
